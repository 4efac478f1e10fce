//! srun's (and salloc's) options: their table for sbatch's getopt-style scanner, the
//! `SLURM_*` variables srun reads as options, and the step shape they make together.

use std::collections::BTreeMap;

use sluice_daemon::task_layout::Distribution;

use crate::cmd::sbatch::getopt::{self, Found, Spec, Takes, spec};
use crate::cmd::sbatch::options::{Context, Options};
use crate::cmd::sbatch::values;

use super::launch::Writing;
use super::task_io::Stdio;

use Takes::{Nothing as N, Optional as O, Value as V};

/// srun's options as its man page lists them (those sluice reads and those it accepts with no
/// effect here), plus sluice's own `--state-dir`. salloc reads the same table.
pub const TABLE: &[Spec] = &[
    spec("account", Some('A'), V),
    spec("acctg-freq", None, V),
    spec("begin", Some('b'), V),
    spec("chdir", Some('D'), V),
    spec("comment", None, V),
    spec("constraint", Some('C'), V),
    spec("container", None, V),
    spec("contiguous", None, N),
    spec("cpu-bind", None, V),
    spec("cpu-freq", None, V),
    spec("cpus-per-gpu", None, V),
    spec("cpus-per-task", Some('c'), V),
    spec("deadline", None, V),
    spec("dependency", Some('d'), V),
    spec("distribution", Some('m'), V),
    spec("error", Some('e'), V),
    spec("exact", None, N),
    spec("exclude", Some('x'), V),
    spec("exclusive", None, O),
    spec("export", None, V),
    spec("gpu-bind", None, V),
    spec("gpus", Some('G'), V),
    spec("gpus-per-node", None, V),
    spec("gpus-per-task", None, V),
    spec("gres", None, V),
    spec("help", Some('h'), N),
    spec("hint", None, V),
    spec("hold", Some('H'), N),
    spec("immediate", Some('I'), O),
    spec("input", Some('i'), V),
    spec("job-name", Some('J'), V),
    spec("jobid", None, V),
    spec("kill-on-bad-exit", Some('K'), O),
    spec("label", Some('l'), N),
    spec("licenses", Some('L'), V),
    spec("mem", None, V),
    spec("mem-bind", None, V),
    spec("mem-per-cpu", None, V),
    spec("mem-per-gpu", None, V),
    spec("mpi", None, V),
    spec("multi-prog", None, N),
    spec("network", None, V),
    spec("nice", None, O),
    spec("no-kill", Some('k'), O),
    spec("nodelist", Some('w'), V),
    spec("nodes", Some('N'), V),
    spec("ntasks", Some('n'), V),
    spec("ntasks-per-core", None, V),
    spec("ntasks-per-gpu", None, V),
    spec("ntasks-per-node", None, V),
    spec("ntasks-per-socket", None, V),
    spec("open-mode", None, V),
    spec("output", Some('o'), V),
    spec("overcommit", Some('O'), N),
    spec("overlap", None, N),
    spec("oversubscribe", Some('s'), N),
    spec("partition", Some('p'), V),
    spec("propagate", None, O),
    spec("pty", None, N),
    spec("qos", Some('q'), V),
    spec("quiet", Some('Q'), N),
    spec("reservation", None, V),
    spec("signal", None, V),
    spec("state-dir", None, V),
    spec("threads-per-core", None, V),
    spec("time", Some('t'), V),
    spec("time-min", None, V),
    spec("unbuffered", Some('u'), N),
    spec("usage", None, N),
    spec("verbose", Some('v'), N),
    spec("wait", Some('W'), V),
    spec("wckey", None, V),
];

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

/// Everything srun was told.
#[derive(Clone, Debug, Default)]
pub struct Srun {
    /// The options srun shares with sbatch (shape, partition, time…), the allocation's when
    /// srun creates one.
    pub alloc: Options,
    /// `-l/--label`.
    pub label: bool,
    /// `--multi-prog`: the command is a configuration file of each task's program.
    pub multi_prog: bool,
    /// `--jobid` (or `SLURM_JOB_ID`).
    pub jobid: Option<u64>,
    /// `-N` given on the command line (not from the allocation's variables).
    pub nodes_given: bool,
    /// `-n` given on the command line.
    pub ntasks_given: bool,
    /// `-N` from the allocation's variables.
    pub env_nodes: Option<u32>,
    /// `-n` from the allocation's variables.
    pub env_ntasks: Option<u32>,
    /// `-h/--help`, `--usage`.
    pub help: bool,
    /// Options accepted with no effect here, by long name, for a note.
    pub ignored: Vec<&'static str>,
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
        let spec = TABLE
            .iter()
            .find(|t| t.long == *long)
            .expect("variables name options of the table");
        let f = Found {
            long: spec.long,
            value: (spec.takes != Takes::Nothing).then(|| value.clone()),
        };
        match *long {
            "nodes" => s.env_nodes = values::nodes(value).ok().map(|(min, _)| min),
            "ntasks" => s.env_ntasks = values::count("ntasks", value).ok(),
            "label" if value == "0" => {}
            _ => s.apply(&f, cx).map_err(|e| format!("{var}: {e}"))?,
        }
    }
    for f in found {
        s.apply(f, cx)?;
        match f.long {
            "nodes" => s.nodes_given = true,
            "ntasks" => s.ntasks_given = true,
            _ => {}
        }
    }
    Ok(s)
}

impl Srun {
    /// Applies one option: srun's own here, the rest as sbatch reads them.
    fn apply(&mut self, f: &Found, cx: Context) -> Result<(), String> {
        let v = f.value.clone().unwrap_or_default();
        match f.long {
            "label" => self.label = true,
            "jobid" => {
                self.jobid = Some(
                    v.trim()
                        .parse()
                        .map_err(|_| format!("Invalid --jobid specification: {v}"))?,
                )
            }
            "help" | "usage" => self.help = true,
            "multi-prog" => self.multi_prog = true,
            // Values srun reads differently from sbatch have no effect here; they are
            // listed, not applied. (`-o/-e/-i/--open-mode` are read as sbatch reads them,
            // and acted on per task: `task_io.rs`.)
            "wait" | "cpu-bind" | "unbuffered" | "exact" | "overlap" | "kill-on-bad-exit"
            | "mpi" | "pty" | "immediate" => {
                if !self.ignored.contains(&f.long) {
                    self.ignored.push(f.long);
                }
            }
            _ => {
                self.alloc.apply(f, cx)?;
                for name in std::mem::take(&mut self.alloc.ignored) {
                    if !self.ignored.contains(&name) {
                        self.ignored.push(name);
                    }
                }
            }
        }
        Ok(())
    }

    /// `-o`, `-e` and `-i` as given (`none` read as `/dev/null`, as sbatch reads it).
    pub fn stdio(&self) -> Stdio {
        Stdio {
            output: self.alloc.output.clone(),
            error: self.alloc.error.clone(),
            input: self.alloc.input.clone(),
        }
    }

    /// The options given that act on a step's tasks only (salloc, which runs no step,
    /// notes them as having no effect).
    pub fn step_only(&self) -> Vec<&'static str> {
        let stdio = self.stdio();
        [
            ("label", self.label),
            ("multi-prog", self.multi_prog),
            ("output", stdio.output.is_some()),
            ("error", stdio.error.is_some()),
            ("input", stdio.input.is_some()),
            ("open-mode", self.alloc.open_mode.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }

    /// `--label` and `--open-mode` (truncate unless `append`, as Slurm's `JobFileAppend=0`).
    pub fn writing(&self) -> Writing {
        Writing {
            label: self.label,
            append: self.alloc.open_mode.as_deref() == Some("append"),
        }
    }

    /// The step's shape as srun works it out, with srun's warnings: nodes from `-N`, else the
    /// allocation's (no more than the tasks); tasks from `-n`, else `--ntasks-per-node` on
    /// each node, else the allocation's count when `-N` was not given (at least one per
    /// node), else one per node. A `--ntasks-per-node` that does not multiply out to `-n` is
    /// dropped with srun's warning.
    pub fn shape(&self) -> (Shape, Vec<String>) {
        let mut warnings = Vec::new();
        let cli_tasks = self.ntasks_given.then_some(self.alloc.ntasks).flatten();
        let per_node_asked = self.alloc.ntasks_per_node;
        let nodes = match (self.nodes_given, self.alloc.nodes, self.env_nodes) {
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
            .alloc
            .distribution
            .as_deref()
            .map(Distribution::from_option)
            .unwrap_or_default();
        let shape = Shape {
            tasks,
            nodes,
            per_node,
            cpus_per_task: self.alloc.cpus_per_task.unwrap_or(1),
            cpus_per_task_set: self.alloc.cpus_per_task.is_some(),
            distribution,
            workdir: self.alloc.chdir.clone(),
        };
        (shape, warnings)
    }
}

/// Scans srun's words with its table; the error is getopt's message and srun's hint.
pub fn scan(words: &[String], command: &str) -> Result<getopt::Scanned, String> {
    getopt::scan_with(TABLE, words).map_err(|e| {
        format!(
            "{}\nTry \"{command} --help\" for more information",
            e.message
        )
    })
}

/// srun's (or salloc's) usage, from the option table; `operands` is what follows the options.
pub fn usage(command: &str, operands: &str) -> String {
    let mut out = format!(
        "Usage: {command} [OPTIONS...] {operands}\n\nOptions (as srun's; see docs/srun.md for what each does here):\n"
    );
    out.push_str(&getopt::describe(TABLE));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::clock::Zone;

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
        let scanned = scan(&words, "srun")?;
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
        assert_eq!(s.jobid, Some(7));
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
        assert!(s.label);
        assert_eq!(s.jobid, Some(9));
        assert_eq!(s.ignored, vec!["cpu-bind"]);
        let (shape, _) = s.shape();
        assert_eq!(shape.distribution, Distribution::Cyclic);
        assert_eq!(shape.cpus_per_task, 2);
        assert_eq!(s.alloc.job_name.as_deref(), Some("x"));
        let again = srun(&[], "-v -v --cpu-bind=none --cpu-bind=cores").unwrap();
        assert_eq!(again.ignored, vec!["verbose", "cpu-bind"]);
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
            "unrecognized option '--frobnicate'\nTry \"srun --help\" for more information"
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
        assert!(s.multi_prog && s.ignored.is_empty());
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
