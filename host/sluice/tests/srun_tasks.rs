//! srun as users type it, against the real daemon: inside a 2-node × 4-task batch job its
//! tasks spread over both nodes with Slurm's variables (block and cyclic), `--label` prefixes
//! lines, the step's exit code is the highest of its tasks' and the job keeps each step's;
//! outside a job srun makes an allocation and ends it with the tasks' code; salloc runs a
//! command in an allocation; tasks' streams go to per-task or shared files and read files or
//! srun's input; `--multi-prog` runs each task's line of its file.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use sluice_api::Job;
use sluice_client::Client;

mod common;

use common::{BIN, Daemon, all_jobs, end_jobs, state_dir, wait_for};

/// `sluice ARGS…` in `dir`, with the daemon's state directory in the environment and no
/// allocation around it.
fn sluice_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("SLUICE_STATE_DIR", dir)
        .env_remove("SLURM_JOB_ID")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Each task prints what it was told.
const REPORT: &str = r#"sh -c 'echo "$SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $SLURMD_NODENAME $SLURM_STEP_ID $SLURM_STEP_NUM_TASKS $SLURM_STEP_TASKS_PER_NODE $SLURM_STEP_NUM_NODES"'"#;

/// The lines of `file`, each split into words, sorted by the first word read as a number.
fn rows(file: &Path) -> Vec<Vec<String>> {
    let body = std::fs::read_to_string(file).unwrap();
    let mut rows: Vec<Vec<String>> = body
        .lines()
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    rows.sort_by_key(|r| r[0].parse::<u32>().unwrap());
    rows
}

#[test]
fn srun_in_a_batch_job_spreads_tasks_over_the_allocation() {
    let scratch = state_dir("srun");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    let d = dir.display();
    let script = format!(
        "#!/bin/sh\n#SBATCH -N 2 --ntasks-per-node=4\n#SBATCH -o {d}/batch.out\n\
         echo \"tpn=$SLURM_TASKS_PER_NODE cpn=$SLURM_JOB_CPUS_PER_NODE\"\n\
         {BIN} srun {REPORT} > {d}/block.txt\n\
         {BIN} srun --distribution=cyclic {REPORT} > {d}/cyclic.txt\n\
         {BIN} srun -l -n 3 sh -c 'echo out; echo err >&2' > {d}/label.txt 2> {d}/label.err\n\
         {BIN} srun -n 3 sh -c 'exit $SLURM_PROCID'; echo \"highest=$?\"\n\
         {BIN} srun -n 2 sh -c 'kill -9 $$'; echo \"signal=$?\"\n\
         {BIN} srun --bogus true; echo \"bogus=$?\"\n"
    );
    std::fs::write(dir.join("mpi.sh"), script).unwrap();
    let out = sluice_in(dir, &["submit", "--parsable", "mpi.sh"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id: u64 = text(&out.stdout).trim().parse().unwrap();
    let job = wait_for(dir, id, &["COMPLETED", "FAILED"], 60);
    let batch = std::fs::read_to_string(dir.join("batch.out")).unwrap();
    assert_eq!(job.state, "COMPLETED", "{batch}\n{}", common::log_of(dir));

    // The batch environment carries the task and CPU layout.
    let first = batch.lines().next().unwrap();
    assert!(first.starts_with("tpn=4(x2) cpn="), "{first}");

    // Block: eight tasks, ranks 0-7, four per node with local ids 0-3, two node names.
    let block = rows(&dir.join("block.txt"));
    assert_eq!(block.len(), 8, "{block:?}");
    let ranks: Vec<String> = block.iter().map(|r| r[0].clone()).collect();
    assert_eq!(ranks, (0..8).map(|i| i.to_string()).collect::<Vec<_>>());
    let names: BTreeSet<&str> = block.iter().map(|r| r[3].as_str()).collect();
    assert_eq!(names.len(), 2, "{block:?}");
    let node_of = |rows: &[Vec<String>]| -> Vec<(String, String)> {
        rows.iter().map(|r| (r[1].clone(), r[2].clone())).collect()
    };
    let want_block: Vec<(String, String)> = (0..8)
        .map(|i: u32| ((i % 4).to_string(), (i / 4).to_string()))
        .collect();
    assert_eq!(node_of(&block), want_block);
    for r in &block {
        // Step 0 of 8 tasks, four on each of two nodes.
        assert_eq!(r[4..], ["0", "8", "4(x2)", "2"], "{r:?}");
    }
    // Node ids name the same node everywhere.
    let mut by_id: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in &block {
        by_id.entry(&r[2]).or_default().insert(&r[3]);
    }
    assert!(by_id.values().all(|names| names.len() == 1), "{by_id:?}");

    // Cyclic: ranks alternate between the nodes.
    let cyclic = rows(&dir.join("cyclic.txt"));
    assert_eq!(cyclic.len(), 8);
    let want_cyclic: Vec<(String, String)> = (0..8)
        .map(|i: u32| ((i / 2).to_string(), (i % 2).to_string()))
        .collect();
    assert_eq!(node_of(&cyclic), want_cyclic);
    assert_eq!(cyclic[0][4], "1");

    // --label: every line of stdout and stderr starts with its task's rank.
    let labelled = std::fs::read_to_string(dir.join("label.txt")).unwrap();
    let mut lines: Vec<&str> = labelled.lines().collect();
    lines.sort();
    assert_eq!(lines, ["0: out", "1: out", "2: out"]);
    let mut errs: Vec<String> = std::fs::read_to_string(dir.join("label.err"))
        .unwrap()
        .lines()
        .filter(|l| l.ends_with(": err"))
        .map(String::from)
        .collect();
    errs.sort();
    assert_eq!(errs, ["0: err", "1: err", "2: err"]);

    // The exit code is the highest of the tasks'; a signal counts as 128 + its number.
    assert!(batch.contains("highest=2\n"), "{batch}");
    assert!(batch.contains("signal=137\n"), "{batch}");
    // An unknown option is refused, in getopt's words.
    assert!(batch.contains("bogus=1\n"), "{batch}");

    // The job keeps each step with its exit code.
    let job: Job = Client::new(dir).get(&format!("/v1/jobs/{id}")).unwrap();
    let codes: Vec<Option<i32>> = job.steps.iter().map(|s| s.exit_code).collect();
    assert_eq!(
        codes,
        vec![Some(0), Some(0), Some(0), Some(2), Some(137)],
        "{:?}",
        job.steps
    );
    assert!(job.steps.iter().all(|s| s.end.is_some()));
    end_jobs(dir);
}

#[test]
fn srun_outside_a_job_makes_an_allocation_and_salloc_runs_a_command_in_one() {
    let scratch = state_dir("srun-alloc");
    let dir = scratch.path();
    let _d = Daemon::start(dir);

    let out = sluice_in(
        dir,
        &[
            "srun",
            "-N",
            "2",
            "-n",
            "4",
            "-l",
            "sh",
            "-c",
            "echo $SLURM_NODEID $SLURM_JOB_NUM_NODES",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    lines.sort();
    assert_eq!(lines, ["0: 0 2", "1: 0 2", "2: 1 2", "3: 1 2"]);
    assert!(text(&out.stderr).contains("srun: Granted job allocation"));

    // Standard input reaches every task, as srun's default; `-i 0` only task 0.
    let reads = |input: &[&str]| {
        let out = common::output_with_stdin(
            Command::new(BIN)
                .args(["srun", "-n", "2"])
                .args(input)
                .args(["sh", "-c", "read x; echo \"$SLURM_PROCID got $x\""])
                .current_dir(dir)
                .env("SLUICE_STATE_DIR", dir)
                .env_remove("SLURM_JOB_ID"),
            b"hello\n",
        );
        let mut lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
        lines.sort();
        lines
    };
    assert_eq!(reads(&[]), ["0 got hello", "1 got hello"]);
    assert_eq!(reads(&["-i", "0"]), ["0 got hello", "1 got "]);

    // -D: where the tasks start.
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let out = sluice_in(dir, &["srun", "-D", sub.to_str().unwrap(), "pwd"]);
    assert_eq!(text(&out.stdout).trim(), sub.to_str().unwrap());

    // The tasks' exit code is srun's and the job's.
    let out = sluice_in(dir, &["srun", "-n", "2", "sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let jobs = all_jobs(dir);
    assert_eq!(jobs.len(), 5);
    let failed = jobs.iter().max_by_key(|j| j.job_id).unwrap();
    let failed = wait_for(dir, failed.job_id, &["FAILED", "COMPLETED"], 30);
    assert_eq!(
        (failed.state.as_str(), failed.exit_code),
        ("FAILED", Some(3))
    );
    assert_eq!(failed.name, "sh");
    assert_eq!(failed.steps.len(), 1);

    // salloc: the command sees the allocation; an srun inside it runs there.
    let inner = format!(
        "echo \"job=$SLURM_JOB_ID nodes=$SLURM_JOB_NUM_NODES\"; {BIN} srun sh -c 'echo task $SLURM_PROCID of $SLURM_JOB_ID'; \
         env -i SLUICE_STATE_DIR=\"$SLUICE_STATE_DIR\" PATH=\"$PATH\" {BIN} srun --jobid=$SLURM_JOB_ID sh -c 'echo attached $SLURM_PROCID $SLURM_STEP_NUM_NODES'; exit 5"
    );
    let out = sluice_in(dir, &["salloc", "-N", "2", "sh", "-c", &inner]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let job_line = stdout.lines().next().unwrap();
    let id: u64 = job_line
        .strip_prefix("job=")
        .and_then(|r| r.split_whitespace().next())
        .and_then(|j| j.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(job_line, format!("job={id} nodes=2"));
    let mut tasks: Vec<&str> = stdout.lines().skip(1).collect();
    tasks.sort();
    // --jobid from a bare environment takes the allocation's shape from the daemon.
    assert_eq!(
        tasks,
        [
            "attached 0 2".to_string(),
            "attached 1 2".to_string(),
            format!("task 0 of {id}"),
            format!("task 1 of {id}")
        ]
    );
    let held = wait_for(dir, id, &["FAILED", "COMPLETED"], 30);
    assert_eq!(held.exit_code, Some(5));
    end_jobs(dir);
}

#[test]
fn ctrl_c_ends_the_tasks_and_srun_still_releases_its_allocation() {
    let scratch = state_dir("srun-int");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    // Its own process group, as a terminal's foreground job is: Ctrl-C goes to all of it.
    let mut srun = Command::new(BIN)
        .args(["srun", "-n", "2", "sh", "-c", "echo up; exec sleep 60"])
        .current_dir(dir)
        .env("SLUICE_STATE_DIR", dir)
        .env_remove("SLURM_JOB_ID")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    // Both tasks are up (so neither starts after the interrupt).
    let mut reader = std::io::BufReader::new(srun.stdout.take().unwrap());
    for _ in 0..2 {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        assert_eq!(line, "up\n");
    }
    // SAFETY: signalling the process group of our own child, not yet reaped.
    unsafe { libc::kill(-(srun.id() as i32), libc::SIGINT) };
    let status = srun.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGINT));
    let job = all_jobs(dir).into_iter().next().unwrap();
    let job = wait_for(dir, job.job_id, &["FAILED", "COMPLETED"], 30);
    assert_eq!(job.exit_code, Some(128 + libc::SIGINT));

    // While the allocation is still pending (held here), Ctrl-C withdraws it.
    let mut held = Command::new(BIN)
        .args(["srun", "--hold", "true"])
        .current_dir(dir)
        .env("SLUICE_STATE_DIR", dir)
        .env_remove("SLURM_JOB_ID")
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let pending = common::poll(30, "a pending allocation", || {
        all_jobs(dir)
            .into_iter()
            .find(|j| j.job_id != job.job_id && j.state == "PENDING")
    });
    // SAFETY: signalling the process group of our own child, not yet reaped.
    unsafe { libc::kill(-(held.id() as i32), libc::SIGINT) };
    let mut err = String::new();
    std::io::Read::read_to_string(held.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(held.wait().unwrap().code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "Job allocation {} has been revoked",
            pending.job_id
        )),
        "{err}"
    );
    let revoked = wait_for(dir, pending.job_id, &["CANCELLED"], 30);
    assert_eq!(revoked.state, "CANCELLED");
    end_jobs(dir);
}

#[test]
fn tasks_write_and_read_files_by_pattern_and_multi_prog_runs_each_tasks_line() {
    let scratch = state_dir("srun-io");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let sorted = |body: String| {
        let mut lines: Vec<String> = body.lines().map(String::from).collect();
        lines.sort();
        lines
    };

    // One output file per task; errors one file per node (four tasks on two nodes).
    let out = sluice_in(
        dir,
        &[
            "srun",
            "-N",
            "2",
            "-n",
            "4",
            "-o",
            "out-%t.txt",
            "-e",
            "err-%N-%2n.txt",
            "sh",
            "-c",
            "echo o$SLURM_PROCID; echo e$SLURM_PROCID >&2",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "",
        "the tasks' output went to their files"
    );
    for rank in 0..4 {
        assert_eq!(read(&format!("out-{rank}.txt")), format!("o{rank}\n"));
    }
    let job = all_jobs(dir).into_iter().next().unwrap();
    let nodes = sluice_hostlist::expand(&job.nodelist).unwrap();
    assert_eq!(
        sorted(read(&format!("err-{}-00.txt", nodes[0]))),
        ["e0", "e1"]
    );
    assert_eq!(
        sorted(read(&format!("err-{}-01.txt", nodes[1]))),
        ["e2", "e3"]
    );

    // A name without a per-task field collects every task, labelled; appended to when asked.
    std::fs::write(dir.join("in.txt"), "from the file\n").unwrap();
    let all = ["-n", "3", "-l", "-i", "in.txt", "-o", "each-%j.log"];
    let cmd = ["sh", "-c", "read x; echo \"$x\""];
    let first = sluice_in(dir, &[&["srun"][..], &all, &cmd].concat());
    assert!(first.status.success(), "{}", text(&first.stderr));
    let id = all_jobs(dir).iter().map(|j| j.job_id).max().unwrap();
    let log = format!("each-{id}.log");
    assert_eq!(
        text(&first.stdout),
        "",
        "the tasks' output went to the file"
    );
    assert_eq!(
        sorted(read(&log)),
        ["0: from the file", "1: from the file", "2: from the file"]
    );
    std::fs::rename(dir.join(&log), dir.join("kept.log")).unwrap();
    let append = [
        "-n",
        "2",
        "-o",
        "kept.log",
        "--open-mode=append",
        "echo",
        "more",
    ];
    assert!(
        sluice_in(dir, &[&["srun"][..], &append].concat())
            .status
            .success()
    );
    assert_eq!(sorted(read("kept.log")).len(), 5);
    let truncate = ["-n", "1", "-o", "kept.log", "echo", "only"];
    assert!(
        sluice_in(dir, &[&["srun"][..], &truncate].concat())
            .status
            .success()
    );
    assert_eq!(read("kept.log"), "only\n");

    // --multi-prog: the man page's example, with `hostname` as its node's name.
    std::fs::write(
        dir.join("silly.conf"),
        "# srun -n8 -l --multi-prog silly.conf\n\
         4-6       sh -c 'echo $SLURMD_NODENAME'\n\
         1,7       echo  task:%t\n\
         0,2-3     echo  offset:%o\n",
    )
    .unwrap();
    let out = sluice_in(dir, &["srun", "-n8", "-l", "--multi-prog", "silly.conf"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = sorted(text(&out.stdout));
    assert_eq!(
        lines[..4],
        ["0: offset:0", "1: task:1", "2: offset:1", "3: offset:2"]
    );
    assert_eq!(lines[7], "7: task:7");
    let node = &all_jobs(dir)
        .into_iter()
        .max_by_key(|j| j.job_id)
        .unwrap()
        .nodelist;
    assert_eq!(lines[4], format!("4: {node}"));
    // A malformed file is refused with srun's messages before any job is made.
    let jobs = all_jobs(dir).len();
    std::fs::write(dir.join("bad.conf"), "0-1 true\n3-2 true\n").unwrap();
    let out = sluice_in(dir, &["srun", "--multi-prog", "bad.conf"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "srun: error: Invalid task range, 3-2\n\
         srun: error: Line 2 of configuration file bad.conf invalid\n"
    );
    assert_eq!(all_jobs(dir).len(), jobs);
    end_jobs(dir);
}
