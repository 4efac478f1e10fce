//! srun's (and salloc's) options: the `SLURM_*` variables srun reads as options under its
//! command line (both read from the one table, `cmd/options`), and the step shape they make.

use std::collections::BTreeMap;

use sluice_api::layout::Distribution;

use crate::cmd::options::{Command, Context, Found, Options, Takes, table};
use crate::cmd::sbatch::values;

use super::launch::Writing;
use super::task_io::Stdio;

/// The variables srun reads as options, weakest first, with the option each stands for.
const VARIABLES: &[(&str, &str)] = &[
    ("SLURM_ACCOUNT", "account"),
    ("SLURM_CPU_BIND", "cpu-bind"),
    ("SLURM_CPUS_PER_TASK", "cpus-per-task"),
    ("SLURM_DISTRIBUTION", "distribution"),
    ("SLURM_JOB_NUM_NODES", "nodes"),
    ("SLURM_NNODES", "nodes"),
    ("SLURM_NPROCS", "ntasks"),
    ("SLURM_NTASKS", "ntasks"),
    ("SLURM_NTASKS_PER_NODE", "ntasks-per-node"),
    ("SLURM_PARTITION", "partition"),
    ("SLURM_LABELIO", "label"),
    ("SLURM_OPEN_MODE", "open-mode"),
    ("SRUN_ERROR", "error"),
    ("SRUN_INPUT", "input"),
    ("SRUN_OUTPUT", "output"),
    ("SLURM_JOB_ID", "jobid"),
];

/// Everything srun was told: its options, and which of the step's sizes came from where.
#[derive(Clone, Debug, Default)]
pub struct Srun {
    /// The options (shape, partition, time, `--label`…), the allocation's when srun creates
    /// one.
    pub options: Options,
    /// `-N` given on the command line (not from the allocation's variables).
    pub nodes_given: bool,
    /// `-n` given on the command line.
    pub ntasks_given: bool,
    /// `-N` from the allocation's variables.
    pub env_nodes: Option<u32>,
    /// `-n` from the allocation's variables.
    pub env_ntasks: Option<u32>,
}

/// The step's shape: how many tasks on how many nodes, each node's room for tasks, the
/// distribution, and the CPUs each task has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Tasks.
    pub tasks: u32,
    /// Nodes.
    pub nodes: u32,
    /// Tasks a node has room for (the step's CPUs on it over the CPUs per task).
    pub per_node: u32,
    /// CPUs per task (`-c`).
    pub cpus_per_task: u32,
    /// Whether `-c` was given (then `SLURM_CPUS_PER_TASK` is set for the tasks).
    pub cpus_per_task_set: bool,
    /// Block or cyclic.
    pub distribution: Distribution,
    /// `-D/--chdir`: where the tasks start.
    pub workdir: Option<std::path::PathBuf>,
}

/// srun's options from `env` (its variables) and then the command line's `found` over them.
pub fn read(env: &BTreeMap<String, String>, found: &[Found], cx: Context) -> Result<Srun, String> {
    let mut s = Srun::default();
    for (var, long) in VARIABLES {
        let Some(value) = env.get(*var) else { continue };
        let spec = table::find(Command::Srun, long).expect("variables name srun's options");
        let f = Found {
            spec,
            value: (spec.takes != Takes::Nothing).then(|| value.clone()),
        };
        match *long {
            "nodes" => s.env_nodes = values::nodes(value).ok().map(|(min, _)| min),
            "ntasks" => s.env_ntasks = values::count("ntasks", value).ok(),
            "label" if value == "0" => {}
            _ => s.options.apply(&f, cx).map_err(|e| format!("{var}: {e}"))?,
        }
    }
    for f in found {
        s.options.apply(f, cx)?;
        match f.spec.long {
            "nodes" => s.nodes_given = true,
            "ntasks" => s.ntasks_given = true,
            _ => {}
        }
    }
    Ok(s)
}

impl Srun {
    /// `-o`, `-e` and `-i` as given (`none` read as `/dev/null`, as sbatch reads it).
    pub fn stdio(&self) -> Stdio {
        Stdio {
            output: self.options.output.clone(),
            error: self.options.error.clone(),
            input: self.options.input.clone(),
        }
    }

    /// The options given that act on a step's tasks only (salloc, which runs no step,
    /// notes them as having no effect).
    pub fn step_only(&self) -> Vec<&'static str> {
        let stdio = self.stdio();
        [
            ("label", self.options.label),
            ("multi-prog", self.options.multi_prog),
            ("output", stdio.output.is_some()),
            ("error", stdio.error.is_some()),
            ("input", stdio.input.is_some()),
            ("open-mode", self.options.open_mode.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }

    /// `--label` and `--open-mode` (truncate unless `append`, as Slurm's `JobFileAppend=0`).
    pub fn writing(&self) -> Writing {
        Writing {
            label: self.options.label,
            append: self.options.open_mode.as_deref() == Some("append"),
        }
    }

    /// The step's shape as srun works it out, with srun's warnings: nodes from `-N`, else the
    /// allocation's (no more than the tasks); tasks from `-n`, else `--ntasks-per-node` on
    /// each node, else the allocation's count when `-N` was not given (at least one per
    /// node), else one per node. A `--ntasks-per-node` that does not multiply out to `-n` is
    /// dropped with srun's warning.
    pub fn shape(&self) -> (Shape, Vec<String>) {
        let mut warnings = Vec::new();
        let cli_tasks = self.ntasks_given.then_some(self.options.ntasks).flatten();
        let per_node_asked = self.options.ntasks_per_node;
        let nodes = match (self.nodes_given, self.options.nodes, self.env_nodes) {
            (true, Some((min, _)), _) => min,
            (_, _, Some(env)) => cli_tasks.map_or(env, |t| t.min(env)),
            _ => match (cli_tasks, per_node_asked) {
                (Some(t), Some(p)) => t.div_ceil(p),
                _ => 1,
            },
        }
        .max(1);
        let tasks = match (cli_tasks, per_node_asked) {
            (Some(t), _) => t,
            (None, Some(p)) => nodes * p,
            // An allocation's count below its nodes (sluice's one-task default for `-N` alone)
            // still gives every node a task, as srun's default does.
            (None, None) if !self.nodes_given => self.env_ntasks.unwrap_or(nodes).max(nodes),
            (None, None) => nodes,
        };
        let even = tasks.div_ceil(nodes);
        // As srun: with the task count given, a per-node count must multiply out to it exactly.
        let per_node = match per_node_asked {
            Some(p) if cli_tasks.is_none() || p.saturating_mul(nodes) == tasks => p,
            Some(p) => {
                warnings.push(format!(
                    "can't honor --ntasks-per-node set to {p} which doesn't match the requested tasks {tasks} with the number of requested nodes {nodes}. Ignoring --ntasks-per-node."
                ));
                even
            }
            None => even,
        };
        let distribution = self
            .options
            .distribution
            .as_deref()
            .map(Distribution::from_option)
            .unwrap_or_default();
        let shape = Shape {
            tasks,
            nodes,
            per_node,
            cpus_per_task: self.options.cpus_per_task.unwrap_or(1),
            cpus_per_task_set: self.options.cpus_per_task.is_some(),
            distribution,
            workdir: self.options.chdir.clone(),
        };
        (shape, warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::clock::Zone;
    use crate::cmd::options::scan;

    const CX: Context = Context {
        now: 1_795_678_215,
        zone: Zone::Utc,
    };

    fn srun(env: &[(&str, &str)], cli: &str) -> Result<Srun, String> {
        let env: BTreeMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let words: Vec<String> = cli.split_whitespace().map(String::from).collect();
        let scanned = scan::command_line(Command::Srun, &words)?;
        read(&env, &scanned.options, CX)
    }

    const BATCH: &[(&str, &str)] = &[
        ("SLURM_JOB_ID", "7"),
        ("SLURM_NNODES", "2"),
        ("SLURM_NTASKS", "8"),
        ("SLURM_NTASKS_PER_NODE", "4"),
        ("SLURM_CPUS_PER_TASK", "1"),
    ];

    #[test]
    fn inside_an_allocation_the_step_takes_the_allocations_shape() {
        let s = srun(BATCH, "hostname").unwrap();
        assert_eq!(s.options.jobid, Some(7));
        let (shape, warnings) = s.shape();
        assert_eq!((shape.tasks, shape.nodes, shape.per_node), (8, 2, 4));
        assert_eq!(shape.distribution, Distribution::Block);
        assert!(warnings.is_empty());
        let (shape, _) = srun(BATCH, "-N1 hostname").unwrap().shape();
        assert_eq!((shape.tasks, shape.nodes), (4, 1));
        let (shape, _) = srun(BATCH, "-n 1 hostname").unwrap().shape();
        assert_eq!((shape.tasks, shape.nodes), (1, 1));
        let (shape, _) = srun(&BATCH[..3], "-n 3").unwrap().shape();
        assert_eq!((shape.tasks, shape.nodes, shape.per_node), (3, 2, 2));
        let (shape, _) = srun(&BATCH[..3], "").unwrap().shape();
        assert_eq!((shape.tasks, shape.nodes, shape.per_node), (8, 2, 4));
        let (shape, _) = srun(&[("SLURM_NNODES", "2"), ("SLURM_NTASKS", "1")], "")
            .unwrap()
            .shape();
        assert_eq!((shape.tasks, shape.nodes, shape.per_node), (2, 2, 1));
    }

    #[test]
    fn options_srun_reads_itself() {
        let s = srun(BATCH, "-l -m cyclic --cpu-bind=cores --jobid=9 -c2 -J x").unwrap();
        assert!(s.options.label);
        assert_eq!(s.options.jobid, Some(9));
        assert_eq!(s.options.ignored, vec!["cpu-bind"]);
        let (shape, _) = s.shape();
        assert_eq!(shape.distribution, Distribution::Cyclic);
        assert_eq!(shape.cpus_per_task, 2);
        assert_eq!(s.options.job_name.as_deref(), Some("x"));
        let again = srun(&[], "-v -v --cpu-bind=none --cpu-bind=cores").unwrap();
        assert_eq!(again.options.ignored, vec!["verbose", "cpu-bind"]);
    }

    #[test]
    fn a_per_node_count_that_does_not_multiply_out_to_the_tasks_is_dropped_with_sruns_warning() {
        let (shape, warnings) = srun(&[], "-N 2 -n 10 --ntasks-per-node=4").unwrap().shape();
        assert_eq!((shape.tasks, shape.nodes, shape.per_node), (10, 2, 5));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("can't honor --ntasks-per-node set to 4"));
        // Room to spare is not a match either: srun spreads the tasks evenly instead.
        let (shape, warnings) = srun(&[], "-N 2 -n 6 --ntasks-per-node=4").unwrap().shape();
        assert_eq!((shape.tasks, shape.nodes, shape.per_node), (6, 2, 3));
        assert_eq!(warnings.len(), 1);
        let (_, warnings) = srun(&[], "-N 2 -n 8 --ntasks-per-node=4").unwrap().shape();
        assert!(warnings.is_empty());
    }

    #[test]
    fn outside_an_allocation_the_shape_comes_from_the_options() {
        let (shape, _) = srun(&[], "-n 6 --ntasks-per-node=3").unwrap().shape();
        assert_eq!((shape.tasks, shape.nodes, shape.per_node), (6, 2, 3));
        let (shape, _) = srun(&[], "").unwrap().shape();
        assert_eq!((shape.tasks, shape.nodes), (1, 1));
    }

    #[test]
    fn errors_are_sruns() {
        assert_eq!(
            srun(&[], "--frobnicate x").unwrap_err(),
            "unrecognized option '--frobnicate'\nTry \"sluice srun --help\" for more information"
        );
        assert_eq!(
            srun(&[], "-n zero").unwrap_err(),
            "Invalid numeric value \"zero\" for number of tasks."
        );
    }

    #[test]
    fn stdio_options_and_multi_prog_are_srun_s_own() {
        let s = srun(
            &[("SLURM_OPEN_MODE", "a"), ("SRUN_INPUT", "2")],
            "--multi-prog -o out-%t.txt -e none -l conf",
        )
        .unwrap();
        assert!(s.options.multi_prog && s.options.ignored.is_empty());
        assert_eq!(
            s.stdio(),
            Stdio {
                output: Some("out-%t.txt".into()),
                error: Some("/dev/null".into()),
                input: Some("2".into()),
            }
        );
        assert_eq!(
            s.writing(),
            Writing {
                label: true,
                append: true
            }
        );
        assert_eq!(
            s.step_only(),
            [
                "label",
                "multi-prog",
                "output",
                "error",
                "input",
                "open-mode"
            ]
        );
        let s = srun(&[("SLURM_OPEN_MODE", "a")], "--open-mode=truncate true").unwrap();
        assert!(!s.writing().append);
        assert!(srun(&[], "-n 2 true").unwrap().step_only().is_empty());
        assert_eq!(
            srun(&[], "--open-mode=x true").unwrap_err(),
            "Invalid --open-mode specification"
        );
    }
}
