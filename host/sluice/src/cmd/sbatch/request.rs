//! sbatch's options made into the daemon's submission: what the job runs with, its
//! environment as `--export` says, and the checks Slurm makes across options.

use std::collections::BTreeMap;
use std::path::Path;

use sluice_api::SubmitRequest;

use crate::cmd::options::Options;

/// What a submission needs besides the options.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The script's text.
    pub script: String,
    /// The job name when `-J` is not given (the script's file name, or `wrap`).
    pub default_name: String,
    /// The directory sbatch runs in.
    pub cwd: std::path::PathBuf,
    /// The submitting environment.
    pub env: BTreeMap<String, String>,
    /// The text of `--export-file`, if given.
    pub export_file: Option<String>,
    /// The script's absolute path, when it came from a file.
    pub command: Option<String>,
}

/// The submission, plus the warnings sbatch prints.
pub fn build(o: &Options, inputs: Inputs) -> Result<(SubmitRequest, Vec<String>), String> {
    let mut warnings = Vec::new();
    if let Some(a) = &o.array {
        // The syntax is checked here, as sbatch does; MaxArraySize by the daemon.
        sluice_engine::array_spec::parse_ranges(a).map_err(|e| format!("--array={a}: {e}"))?;
    }
    let mems = [
        o.mem.is_some(),
        o.mem_per_cpu.is_some(),
        o.mem_per_gpu.is_some(),
    ];
    if mems.iter().filter(|m| **m).count() > 1 {
        return Err("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.".into());
    }
    let (mut min_nodes, mut max_nodes) = match o.nodes {
        Some((min, max)) => (Some(min), max),
        None => (None, None),
    };
    if let (Some(n), Some(min)) = (o.ntasks, min_nodes)
        && n < min
    {
        // Slurm shrinks the node count to the tasks rather than refusing.
        warnings.push(format!(
            "can't run {n} processes on {min} nodes, setting nnodes to {n}"
        ));
        min_nodes = Some(n);
        max_nodes = max_nodes.map(|m| m.min(n));
    }
    let workdir = match &o.chdir {
        Some(d) if d.is_absolute() => d.clone(),
        Some(d) => inputs.cwd.join(d),
        None => inputs.cwd.clone(),
    };
    let env = environment(o, &inputs.env, inputs.export_file.as_deref())?;
    let req = SubmitRequest {
        name: Some(o.job_name.clone().unwrap_or(inputs.default_name)),
        partition: o.partition.clone(),
        account: o.account.clone(),
        qos: o.qos.clone(),
        min_nodes,
        max_nodes,
        ntasks: o.ntasks,
        cpus_per_task: o.cpus_per_task,
        mem_mb: o.mem.filter(|m| *m > 0),
        mem_whole_node: o.mem == Some(0),
        time_limit: o.time.flatten(),
        gres: o.gres.clone(),
        gpus: o.gpus.clone(),
        licenses: o.licenses.clone(),
        constraint: o.constraint.clone(),
        exclusive: o.exclusive,
        nice: o.nice.unwrap_or(0),
        // A priority of 0 is Slurm's held job.
        priority: o.priority.filter(|&p| p != 0),
        begin: o.begin,
        dependency: o.dependency.clone(),
        hold: o.hold || o.priority == Some(0),
        reservation: o.reservation.clone(),
        requeue: o.requeue,
        script: inputs.script,
        workdir: workdir.to_string_lossy().into_owned(),
        output: o.output.clone(),
        error: o.error.clone(),
        env,
        ntasks_per_node: o.ntasks_per_node,
        ntasks_per_socket: o.ntasks_per_socket,
        mem_per_cpu_mb: o.mem_per_cpu,
        gpus_per_node: o.gpus_per_node.clone(),
        gpus_per_task: o.gpus_per_task.clone(),
        cpus_per_gpu: o.cpus_per_gpu,
        mem_per_gpu_mb: o.mem_per_gpu,
        nodelist: o.nodelist.clone(),
        exclude: o.exclude.clone(),
        contiguous: o.contiguous,
        oversubscribe: o.oversubscribe,
        hint: o.hint.clone(),
        distribution: o.distribution.clone(),
        time_min: o.time_min.flatten(),
        deadline: o.deadline,
        signal: o.signal.clone(),
        input: o.input.clone(),
        open_mode: o.open_mode.clone(),
        mail_type: o.mail_type.clone(),
        mail_user: o.mail_user.clone(),
        comment: o.comment.clone(),
        wckey: o.wckey.clone(),
        command: inputs.command,
        script_args: Vec::new(),
        array: o.array.clone(),
        // PropagateResourceLimits=ALL: the job runs with this shell's `ulimit`s.
        rlimits: sluice_client::limits::submitting_limits(),
    };
    Ok((req, warnings))
}

/// The job's environment: `--export=ALL` (the default) sends the submitting one; `NONE` or a
/// list without `ALL` sends only its `SLURM_*` variables and the ones named; `--export-file`
/// adds its `NAME=value` lines (NUL- or newline-separated).
fn environment(
    o: &Options,
    submitting: &BTreeMap<String, String>,
    export_file: Option<&str>,
) -> Result<BTreeMap<String, String>, String> {
    let export = o.export.clone().unwrap_or(super::values::Export {
        all: true,
        vars: Vec::new(),
    });
    let mut env: BTreeMap<String, String> = if export.all {
        submitting.clone()
    } else {
        submitting
            .iter()
            .filter(|(k, _)| k.starts_with("SLURM_"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    for (name, value) in export.vars {
        match value.or_else(|| submitting.get(&name).cloned()) {
            Some(v) => {
                env.insert(name, v);
            }
            None => {
                env.remove(&name);
            }
        }
    }
    if let Some(text) = export_file {
        let sep = if text.contains('\0') { '\0' } else { '\n' };
        for item in text.split(sep).filter(|l| !l.trim().is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("--export-file: expected NAME=value, found {item:?}"))?;
            env.insert(k.to_string(), v.to_string());
        }
    }
    Ok(env)
}

/// A `--nodelist` that names a file (it holds a `/`, as Slurm decides) as the hostlist the
/// file's lines make; any other value as it is.
pub fn resolve_nodelist(value: &str, cwd: &Path) -> Result<String, String> {
    if !value.contains('/') {
        return Ok(value.to_string());
    }
    read_node_file(Path::new(value), cwd)
}

/// The hostlist a node file (`-F`, or a `--nodelist` with a `/`) makes, relative to `cwd`.
pub fn read_node_file(file: &Path, cwd: &Path) -> Result<String, String> {
    let path = cwd.join(file);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("\"{}\" is not a valid node file: {e}", path.display()))?;
    Ok(hosts_of_file(&text))
}

/// The host names of a node file, one or more a line (blank- or comma-separated), as one
/// comma-separated list.
pub fn hosts_of_file(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|h| !h.is_empty())
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads the `--export-file` named, relative to `cwd`.
pub fn read_export_file(path: &Path, cwd: &Path) -> Result<String, String> {
    let p = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    std::fs::read_to_string(&p).map_err(|e| format!("--export-file={}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::super::options::read;
    use super::*;
    use crate::cmd::clock::Zone;
    use crate::cmd::options::{Command, Context, scan};

    fn request(script: &str, cli: &str) -> Result<(SubmitRequest, Vec<String>), String> {
        let words: Vec<String> = cli.split_whitespace().map(String::from).collect();
        let scanned = scan::scan(Command::Sbatch, &words).map_err(|e| e.message)?;
        let cx = Context {
            now: 1_795_678_215,
            zone: Zone::Utc,
        };
        let o = read("job.sh", Some(script), &[], &scanned.options, cx)?;
        let env = BTreeMap::from([
            ("HOME".to_string(), "/home/u".to_string()),
            ("SLURM_CONF".to_string(), "/etc/slurm.conf".to_string()),
            ("FOO".to_string(), "foo".to_string()),
        ]);
        build(
            &o,
            Inputs {
                script: script.into(),
                default_name: "job.sh".into(),
                cwd: "/work/dir".into(),
                env,
                export_file: Some("A=1\nB=two words\n".into()),
                command: Some("/work/dir/job.sh".into()),
            },
        )
    }

    #[test]
    fn an_mpi_style_script_asks_for_its_shape() {
        let script = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n#SBATCH --cpus-per-task=2\n#SBATCH --mem-per-cpu=2G\n#SBATCH -t 1-00:00:00\n#SBATCH -J mpi -A proj -p batch -q high\nsrun ./a.out\n";
        let (r, _) = request(script, "").unwrap();
        assert_eq!((r.min_nodes, r.max_nodes), (Some(2), None));
        assert_eq!(r.ntasks_per_node, Some(4));
        assert_eq!(r.cpus_per_task, Some(2));
        assert_eq!(r.mem_per_cpu_mb, Some(2048));
        assert_eq!(r.command.as_deref(), Some("/work/dir/job.sh"));
        assert_eq!(r.mem_mb, None);
        assert_eq!(r.time_limit, Some(86_400));
        assert_eq!(r.name.as_deref(), Some("mpi"));
        assert_eq!(
            (
                r.account.as_deref(),
                r.partition.as_deref(),
                r.qos.as_deref()
            ),
            (Some("proj"), Some("batch"), Some("high"))
        );
    }

    #[test]
    fn a_gpu_training_script_asks_for_its_gpus() {
        let script = "#!/bin/bash\n#SBATCH --gpus-per-node=a100:2\n#SBATCH --cpus-per-gpu=8\n#SBATCH --mem-per-gpu=40G\n#SBATCH --gres=nic:1\n#SBATCH --gpus-per-task=1\npython train.py\n";
        let (r, _) = request(script, "").unwrap();
        assert_eq!(r.gpus_per_node.as_deref(), Some("a100:2"));
        assert_eq!(r.gpus_per_task.as_deref(), Some("1"));
        assert_eq!(r.cpus_per_gpu, Some(8));
        assert_eq!(r.mem_per_gpu_mb, Some(40 * 1024));
        assert_eq!(r.gres.as_deref(), Some("nic:1"));
    }

    #[test]
    fn memory_options_exclude_each_other_and_zero_is_the_whole_node() {
        let e = request("#!/bin/sh\n#SBATCH --mem=1G\n", "--mem-per-cpu=1G").unwrap_err();
        assert_eq!(
            e,
            "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."
        );
        let (r, _) = request("#!/bin/sh\n#SBATCH --mem=0\n", "").unwrap();
        assert!(r.mem_whole_node);
        assert_eq!(r.mem_mb, None);
    }

    #[test]
    fn fewer_tasks_than_nodes_shrinks_the_nodes_with_a_warning() {
        let (r, w) = request("#!/bin/sh\n", "-N 4 -n 2").unwrap();
        assert_eq!(r.min_nodes, Some(2));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn placement_time_signal_mail_and_bookkeeping_reach_the_request() {
        let cli = "-w n[1-2] -x n3 --contiguous --hint=nomultithread -m cyclic --time-min=30 --deadline=2030-01-01 --signal=B:USR1@120 --mail-type=END,FAIL --mail-user=a@b --comment=c --wckey=w --open-mode=append -i in.txt -D sub --no-requeue -d afterok:5 --begin=noon";
        let (r, _) = request("#!/bin/sh\n", cli).unwrap();
        assert_eq!(r.nodelist.as_deref(), Some("n[1-2]"));
        assert_eq!(r.exclude.as_deref(), Some("n3"));
        assert!(r.contiguous);
        assert_eq!(r.hint.as_deref(), Some("nomultithread"));
        assert_eq!(r.distribution.as_deref(), Some("cyclic"));
        assert_eq!(r.time_min, Some(1800));
        assert_eq!(Zone::Utc.iso(r.deadline.unwrap()), "2030-01-01T00:00:00");
        let s = r.signal.unwrap();
        assert_eq!(
            (s.signal, s.seconds_before, s.batch_only),
            (libc::SIGUSR1, 120, true)
        );
        assert_eq!(r.mail_type.as_deref(), Some("END,FAIL"));
        assert_eq!(r.mail_user.as_deref(), Some("a@b"));
        assert_eq!(
            (r.comment.as_deref(), r.wckey.as_deref()),
            (Some("c"), Some("w"))
        );
        assert_eq!(r.open_mode.as_deref(), Some("append"));
        assert_eq!(r.input.as_deref(), Some("in.txt"));
        assert_eq!(r.workdir, "/work/dir/sub");
        assert_eq!(r.requeue, Some(false));
        assert_eq!(r.dependency.as_deref(), Some("afterok:5"));
        assert_eq!(Zone::Utc.iso(r.begin.unwrap()), "2026-11-26T12:00:00");
    }

    #[test]
    fn export_decides_the_environment() {
        let (r, _) = request("#!/bin/sh\n", "").unwrap();
        assert_eq!(r.env.get("FOO").map(String::as_str), Some("foo"));
        assert_eq!(r.env.get("B").map(String::as_str), Some("two words"));
        let (r, _) = request("#!/bin/sh\n#SBATCH --export=NONE\n", "").unwrap();
        assert_eq!(r.env.get("FOO"), None);
        assert_eq!(r.env.get("HOME"), None);
        assert!(r.env.contains_key("SLURM_CONF"));
        let (r, _) = request("#!/bin/sh\n", "--export=FOO,BAR=1").unwrap();
        assert_eq!(r.env.get("FOO").map(String::as_str), Some("foo"));
        assert_eq!(r.env.get("BAR").map(String::as_str), Some("1"));
        assert_eq!(r.env.get("HOME"), None);
    }

    #[test]
    fn node_files_become_hostlists() {
        assert_eq!(
            hosts_of_file("n1\nn2 n3\n\nn[4-5],n6\n"),
            "n1,n2,n3,n[4-5],n6"
        );
        let dir = std::env::temp_dir().join(format!("sluice-nodefile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("hosts"), "a1\na2\n").unwrap();
        assert_eq!(resolve_nodelist("./hosts", &dir).unwrap(), "a1,a2");
        assert_eq!(resolve_nodelist("a[1-2]", &dir).unwrap(), "a[1-2]");
        assert!(
            resolve_nodelist("./missing", &dir)
                .unwrap_err()
                .contains("is not a valid node file")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sbatch_array_inx_gives_the_array() {
        let env = BTreeMap::from([("SBATCH_ARRAY_INX".to_string(), "2-3%1".to_string())]);
        let found = super::super::environment::options(&env);
        let cx = Context {
            now: 1_795_678_215,
            zone: Zone::Utc,
        };
        let o = read("job.sh", Some("#!/bin/sh\n"), &found, &[], cx).unwrap();
        assert_eq!(o.array.as_deref(), Some("2-3%1"));
    }

    #[test]
    fn arrays_come_from_the_script_the_command_line_or_the_environment() {
        let (r, _) = request("#!/bin/sh\n#SBATCH --array=1-10%2\n", "").unwrap();
        assert_eq!(r.array.as_deref(), Some("1-10%2"));
        let (r, _) = request("#!/bin/sh\n#SBATCH --array=1-10%2\n", "-a 0-15:4").unwrap();
        assert_eq!(r.array.as_deref(), Some("0-15:4"), "the command line wins");
        let e = request("#!/bin/sh\n#SBATCH --array=5-2\n", "").unwrap_err();
        assert!(
            e.starts_with("--array=5-2: invalid job array specification"),
            "{e}"
        );
        assert!(request("#!/bin/sh\n", "--array=1,,2").is_err());
    }

    #[test]
    fn unlimited_time_leaves_the_partition_limit() {
        let (r, _) = request("#!/bin/sh\n", "-t UNLIMITED").unwrap();
        assert_eq!(r.time_limit, None);
    }
}
