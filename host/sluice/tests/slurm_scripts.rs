//! Job scripts written the way site documentation writes them run unchanged against the real
//! daemon: `#SBATCH` options take effect (names, patterns, export, shape, limits), scontrol,
//! squeue and scancel answer as users type them, `--wait` returns the job's exit code.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use sluice_api::{Job, NodeRow};
use sluice_client::Client;

mod common;

use common::{BIN, Daemon, end_jobs, poll, state_dir, wait_for};

/// `sluice ARGS…` in `cwd`, with the state directory in the environment (sbatch's options end
/// at the script, so `--state-dir` cannot come after it).
fn run_in(dir: &Path, cwd: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("SLUICE_STATE_DIR", dir)
        .env("FOO", "from-the-submitting-shell")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const SCRIPT: &str = r#"#!/bin/bash
#SBATCH --job-name=hello
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --mem-per-cpu=10M
#SBATCH --time=00:05:00
#SBATCH --output=%x-%5j.out
#SBATCH --export=NONE
#SBATCH --signal=B:USR1@30
#SBATCH --mail-type=END,FAIL
#SBATCH --mail-user=me@example.org
#SBATCH --comment="two words"
echo "tasks=$SLURM_NTASKS foo=${FOO:-unset} name=$SLURM_JOB_NAME"
echo "ntpn=$SLURM_NTASKS_PER_NODE mpc=$SLURM_MEM_PER_CPU host=$SLURM_SUBMIT_HOST"
#SBATCH --job-name=ignored-after-the-first-command
"#;

#[test]
fn a_site_style_script_runs_with_its_options_in_effect() {
    let scratch = state_dir("scripts");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    std::fs::write(dir.join("hello.sh"), SCRIPT).unwrap();
    let id: u64 = ok(&run_in(
        dir,
        dir,
        &["submit", "--parsable", "hello.sh"],
        None,
    ))
    .trim()
    .parse()
    .unwrap();
    let job = wait_for(dir, id, &["COMPLETED", "FAILED"], 60);
    assert_eq!(job.state, "COMPLETED");
    // %x-%5j: the name and the id padded to five digits; --export=NONE kept FOO out.
    let out = dir.join(format!("hello-{id:05}.out"));
    let text = std::fs::read_to_string(&out).unwrap();
    let host = sluice_client::identity::host_name();
    assert_eq!(
        text.trim(),
        format!("tasks=2 foo=unset name=hello\nntpn=2 mpc=10 host={host}")
    );
    // scontrol's layout shows what was asked.
    let shown = ok(&run_in(dir, dir, &["show", "job", &id.to_string()], None));
    for want in [
        format!("JobId={id} JobName=hello"),
        "TimeLimit=00:05:00".to_string(),
        "Comment=two words".to_string(),
        "MailUser=me@example.org MailType=END,FAIL".to_string(),
        format!("StdOut={}", out.display()),
        format!("Command={}", dir.join("hello.sh").display()),
        "ExitCode=0:0".to_string(),
        "MinMemoryCPU=10M".to_string(),
    ] {
        assert!(shown.contains(&want), "missing {want} in\n{shown}");
    }
    end_jobs(dir);
}

#[test]
fn stdin_scripts_wait_noheader_update_and_cancel_by_name() {
    let scratch = state_dir("habits");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    // A script on standard input, with no `-`: the job is named sbatch, as Slurm names it.
    let id: u64 = ok(&run_in(
        dir,
        dir,
        &["submit", "--parsable", "-o", "/dev/null"],
        Some("#!/bin/sh\n#SBATCH -H\ntrue\n"),
    ))
    .trim()
    .parse()
    .unwrap();
    let j: Job = Client::new(dir).get(&format!("/v1/jobs/{id}")).unwrap();
    assert_eq!((j.name.as_str(), j.state.as_str()), ("sbatch", "PENDING"));
    // scontrol's own syntax changes the held job.
    ok(&run_in(
        dir,
        dir,
        &[
            "update",
            &format!("JobId={id}"),
            "TimeLimit=3",
            "Comment=later",
        ],
        None,
    ));
    let j: Job = Client::new(dir).get(&format!("/v1/jobs/{id}")).unwrap();
    assert_eq!(j.time_limit, Some(180));
    // squeue -h is --noheader.
    let listed = ok(&run_in(dir, dir, &["queue", "-h", "-o", "%i %j %q"], None));
    assert_eq!(listed.trim(), format!("{id} sbatch normal"));
    // scancel by name.
    ok(&run_in(dir, dir, &["cancel", "-n", "sbatch"], None));
    wait_for(dir, id, &["CANCELLED"], 30);
    // --wait exits with the job's exit code.
    let out = run_in(
        dir,
        dir,
        &["submit", "--wait", "-o", "/dev/null", "--wrap", "exit 3"],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    end_jobs(dir);
}

#[test]
fn excluding_every_node_is_refused_and_arrays_run() {
    let scratch = state_dir("placement");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    let nodes: Vec<NodeRow> = Client::new(dir).get("/v1/nodes").unwrap();
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    let all = sluice_hostlist::compress(&names);
    let out = run_in(dir, dir, &["submit", "-x", &all, "--wrap", "true"], None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("node configuration is not available"), "{err}");
    // --nodelist pins the job to the node named.
    let last = names.last().unwrap();
    let id: u64 = ok(&run_in(
        dir,
        dir,
        &[
            "submit",
            "--parsable",
            "-w",
            last,
            "-o",
            "/dev/null",
            "--wrap",
            "true",
        ],
        None,
    ))
    .trim()
    .parse()
    .unwrap();
    let j = wait_for(dir, id, &["COMPLETED"], 60);
    assert_eq!(j.nodelist, *last);
    // Arrays are taken now: four tasks under ids in a row, each completing.
    let a: u64 = ok(&run_in(
        dir,
        dir,
        &[
            "submit",
            "--parsable",
            "--array=1-4",
            "-o",
            "/dev/null",
            "--wrap",
            "true",
        ],
        None,
    ))
    .trim()
    .parse()
    .unwrap();
    for t in 0..4 {
        let j = wait_for(dir, a + t, &["COMPLETED", "FAILED"], 60);
        assert_eq!(j.state, "COMPLETED");
        assert_eq!(
            j.array.map(|m| (m.job_id, m.task_id)),
            Some((a, t as u32 + 1))
        );
    }
    end_jobs(dir);
}

#[test]
fn signal_reaches_the_batch_shell_or_its_steps_before_the_limit() {
    let scratch = state_dir("signal");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    // B: the batch shell itself gets USR1 58 s before its 1-minute limit, and traps it.
    let shell = "#!/bin/bash\n#SBATCH -t 1 --signal=B:USR1@58 -o shell.out\ntrap 'echo shell-got-usr1; exit 0' USR1\nsleep 50 &\nwait\n";
    // Without B: the steps get it and the shell does not (it reports its child's death).
    let steps = "#!/bin/bash\n#SBATCH -t 1 --signal=USR1@58 -o steps.out\ntrap 'echo shell-got-usr1' USR1\nsleep 50 &\nwait $!\necho step-ended-by=$(( $? - 128 ))\n";
    let mut ids = Vec::new();
    for (name, text) in [("shell.sh", shell), ("steps.sh", steps)] {
        std::fs::write(dir.join(name), text).unwrap();
        let id: u64 = ok(&run_in(dir, dir, &["submit", "--parsable", name], None))
            .trim()
            .parse()
            .unwrap();
        ids.push(id);
    }
    for id in &ids {
        wait_for(dir, *id, &["COMPLETED"], 40);
    }
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    assert_eq!(read("shell.out").trim(), "shell-got-usr1");
    assert_eq!(
        read("steps.out").trim(),
        format!("step-ended-by={}", libc::SIGUSR1)
    );
    end_jobs(dir);
}

#[test]
fn script_arguments_input_and_append_mode() {
    let scratch = state_dir("args");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    std::fs::write(dir.join("in.txt"), "from-input\n").unwrap();
    std::fs::write(dir.join("log.out"), "kept\n").unwrap();
    let script = "#!/bin/sh\n#SBATCH -o log.out --open-mode=append -i in.txt\nread line\necho \"$1 $2 $line\"\n";
    std::fs::write(dir.join("args.sh"), script).unwrap();
    // Options after the script are the script's, as in sbatch.
    let id: u64 = ok(&run_in(
        dir,
        dir,
        &["submit", "--parsable", "args.sh", "-x", "second word"],
        None,
    ))
    .trim()
    .parse()
    .unwrap();
    wait_for(dir, id, &["COMPLETED"], 60);
    assert_eq!(
        std::fs::read_to_string(dir.join("log.out")).unwrap(),
        "kept\n-x second word from-input\n"
    );
    end_jobs(dir);
}

#[test]
fn mail_types_run_the_configured_mail_program() {
    let scratch = state_dir("mail");
    let dir = scratch.path();
    // A mail program that writes down how it was called.
    let log = dir.join("mail.log");
    let prog = dir.join("fake-mail");
    common::install_mail_prog(
        dir,
        &prog,
        &format!(
            "#!/bin/sh\necho \"$1|$2|$3|$SLURM_JOB_MAIL_TYPE\" >> {}\n",
            log.display()
        ),
    );
    let _d = Daemon::start(dir);
    let id: u64 = ok(&run_in(
        dir,
        dir,
        &[
            "submit",
            "--parsable",
            "-J",
            "mailer",
            "--mail-type=BEGIN,FAIL",
            "--mail-user=me@example.org",
            "-o",
            "/dev/null",
            "--wrap",
            "exit 3",
        ],
        None,
    ))
    .trim()
    .parse()
    .unwrap();
    wait_for(dir, id, &["FAILED"], 60);
    let lines = common::poll(30, "two mails", || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        (text.lines().count() >= 2).then_some(text)
    });
    let lines: Vec<&str> = lines.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "-s|Slurm Job_id={id} Name=mailer Began, Queued time "
        )),
        "{lines:?}"
    );
    assert!(lines[0].ends_with("|me@example.org|Began"), "{lines:?}");
    assert!(
        lines[1].starts_with(&format!(
            "-s|Slurm Job_id={id} Name=mailer Failed, Run time "
        )),
        "{lines:?}"
    );
    assert!(
        lines[1].ends_with(", FAILED, ExitCode 3|me@example.org|Failed"),
        "{lines:?}"
    );
    // A recipient that would be an option to the mail program is refused at submission.
    let out = run_in(
        dir,
        dir,
        &["submit", "--mail-user=-oX", "--wrap", "true"],
        None,
    );
    assert!(!out.status.success());
    end_jobs(dir);
}

#[test]
fn a_pending_job_that_can_no_longer_meet_its_deadline_is_cancelled() {
    let scratch = state_dir("deadline");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    // Held, it cannot start; with 10 minutes to run it misses a deadline 10 minutes away as
    // soon as a second passes.
    let id: u64 = ok(&run_in(
        dir,
        dir,
        &[
            "submit",
            "--parsable",
            "-H",
            "-t",
            "10",
            "--deadline=now+600",
            "--wrap",
            "true",
        ],
        None,
    ))
    .trim()
    .parse()
    .unwrap();
    // One with room to spare stays.
    let fine: u64 = ok(&run_in(
        dir,
        dir,
        &[
            "submit",
            "--parsable",
            "-H",
            "-t",
            "10",
            "--time-min=1",
            "--deadline=now+600",
            "--wrap",
            "true",
        ],
        None,
    ))
    .trim()
    .parse()
    .unwrap();
    wait_for(dir, id, &["CANCELLED"], 30);
    let j: Job = Client::new(dir).get(&format!("/v1/jobs/{fine}")).unwrap();
    assert_eq!(j.state, "PENDING");
    end_jobs(dir);
}

#[test]
fn an_admin_extends_a_running_jobs_time_limit() {
    let scratch = state_dir("extend");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    let id: u64 = ok(&run_in(
        dir,
        dir,
        &[
            "submit",
            "--parsable",
            "-t",
            "1",
            "-o",
            "/dev/null",
            "--wrap",
            "sleep 300",
        ],
        None,
    ))
    .trim()
    .parse()
    .unwrap();
    wait_for(dir, id, &["RUNNING"], 30);
    // The daemon's own user is an admin, who may extend it.
    ok(&run_in(
        dir,
        dir,
        &["update", &format!("JobId={id}"), "TimeLimit=+2"],
        None,
    ));
    let j: Job = Client::new(dir).get(&format!("/v1/jobs/{id}")).unwrap();
    assert_eq!((j.state.as_str(), j.time_limit), ("RUNNING", Some(180)));
    // The supervisor's job file holds the new limit too.
    let file = std::fs::read_to_string(dir.join(format!("jobs/{id}/0/job.json"))).unwrap();
    assert!(file.contains("\"time_limit\":180"), "{file}");
    // Nothing else changes while it runs.
    let out = run_in(
        dir,
        dir,
        &["update", &format!("JobId={id}"), "Name=x"],
        None,
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("only TimeLimit can change while it runs"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    end_jobs(dir);
}

#[test]
fn partition_states_as_scontrol_sets_them() {
    let scratch = state_dir("partstate");
    let dir = scratch.path();
    let d = Daemon::start(dir);
    let parts: Vec<sluice_api::PartitionRow> = Client::new(dir).get("/v1/partitions").unwrap();
    let default = parts.iter().find(|p| p.default).unwrap().name.clone();
    let set = |state: &str| {
        ok(&run_in(
            dir,
            dir,
            &[
                "update",
                &format!("PartitionName={default}"),
                &format!("State={state}"),
            ],
            None,
        ))
    };
    // DOWN: jobs are taken but wait, with Slurm's reason.
    set("DOWN");
    let id: u64 = ok(&run_in(
        dir,
        dir,
        &["submit", "--parsable", "-o", "/dev/null", "--wrap", "true"],
        None,
    ))
    .trim()
    .parse()
    .unwrap();
    common::poll(30, "reason PartitionDown", || {
        let j: Job = Client::new(dir).get(&format!("/v1/jobs/{id}")).unwrap();
        (j.reason == "PartitionDown").then_some(())
    });
    let shown = ok(&run_in(dir, dir, &["show", "partition", &default], None));
    assert!(shown.contains("State=DOWN"), "{shown}");
    // --json keeps printing the one object named.
    let row: sluice_api::PartitionRow = serde_json::from_str(&ok(&run_in(
        dir,
        dir,
        &["show", "partition", &default, "--json"],
        None,
    )))
    .unwrap();
    assert_eq!(
        (row.name.as_str(), row.state.as_str()),
        (default.as_str(), "DOWN")
    );
    // DRAIN: no new jobs, but the waiting one runs.
    set("DRAIN");
    let out = run_in(dir, dir, &["submit", "--wrap", "true"], None);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Required partition not available"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_for(dir, id, &["COMPLETED"], 60);
    // The state is journaled: a restarted daemon keeps it.
    set("INACTIVE");
    d.terminate();
    let _d = Daemon::start(dir);
    let shown = ok(&run_in(dir, dir, &["show", "partition", &default], None));
    assert!(shown.contains("State=INACTIVE"), "{shown}");
    set("UP");
    end_jobs(dir);
}

#[test]
fn reserved_idle_nodes_show_as_resv() {
    let scratch = state_dir("resv");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    let nodes: Vec<NodeRow> = Client::new(dir).get("/v1/nodes").unwrap();
    let last = nodes.last().unwrap().name.clone();
    let user = sluice_client::identity::Identity::current().user;
    ok(&run_in(
        dir,
        dir,
        &[
            "create",
            "reservation",
            "ReservationName=maint",
            "StartTime=now",
            "Duration=60",
            &format!("Nodes={last}"),
            &format!("Users={user}"),
        ],
        None,
    ));
    let out = ok(&run_in(
        dir,
        dir,
        &["info", "-N", "-h", "-o", "%N %t"],
        None,
    ));
    assert!(out.lines().any(|l| l == format!("{last} resv")), "{out}");
    end_jobs(dir);
}

#[test]
fn test_only_says_when_and_where_a_job_would_start_and_queues_nothing() {
    let scratch = state_dir("testonly");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    let nodes: Vec<NodeRow> = Client::new(dir).get("/v1/nodes").unwrap();
    let all = nodes.len().to_string();
    let out = run_in(
        dir,
        dir,
        &["submit", "--test-only", "-n", "1", "--wrap", "true"],
        None,
    );
    ok(&out);
    let line = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        line.starts_with("sbatch: Job 1 to start at 20")
            && line.contains(" using 1 processors on nodes "),
        "{line}"
    );
    let jobs: Vec<Job> = Client::new(dir).get("/v1/jobs").unwrap();
    assert!(jobs.is_empty(), "--test-only queued {jobs:?}");
    // A job on every node for five minutes: a whole-cluster job would start when it ends.
    let busy: u64 = ok(&run_in(
        dir,
        dir,
        &[
            "submit",
            "--parsable",
            "--exclusive",
            "-N",
            &all,
            "-t",
            "5",
            "-o",
            "/dev/null",
            "--wrap",
            "sleep 300",
        ],
        None,
    ))
    .trim()
    .parse()
    .unwrap();
    assert_eq!(
        busy, 1,
        "the id --test-only reported is the next submission's"
    );
    let running = wait_for(dir, busy, &["RUNNING"], 30);
    let out = ok(&run_in(
        dir,
        dir,
        &[
            "submit",
            "--json",
            "--test-only",
            "--exclusive",
            "-N",
            &all,
            "-t",
            "1",
            "--wrap",
            "true",
        ],
        None,
    ));
    let answer: sluice_api::JobWillRun = serde_json::from_str(&out).unwrap();
    let ends = running.start_time.unwrap() + 300;
    assert!(
        answer.start_time >= ends && answer.start_time < ends + 120,
        "{answer:?} should start when job {busy} ends at {ends}"
    );
    assert_eq!(answer.job_id, 2);
    // A job no node could ever hold is refused as sbatch refuses it.
    let out = run_in(
        dir,
        dir,
        &["submit", "--test-only", "-N", "100000", "--wrap", "true"],
        None,
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("allocation failure"), "{err}");
    end_jobs(dir);
}

#[test]
fn priority_and_unlimited_time_as_scontrol_sets_them() {
    let scratch = state_dir("prio");
    let dir = scratch.path();
    let _d = Daemon::start(dir);
    let nodes: Vec<NodeRow> = Client::new(dir).get("/v1/nodes").unwrap();
    let all = nodes.len().to_string();
    // One job holds every node, so the next ones stay pending with their priorities.
    let submit = |args: &[&str]| -> u64 {
        let mut words = vec!["submit", "--parsable", "-o", "/dev/null"];
        words.extend_from_slice(args);
        ok(&run_in(dir, dir, &words, None)).trim().parse().unwrap()
    };
    let busy = submit(&["--exclusive", "-N", &all, "-t", "1", "--wrap", "sleep 300"]);
    wait_for(dir, busy, &["RUNNING"], 30);
    let fixed = submit(&["--priority=777", "-t", "1", "--wrap", "true"]);
    let job = |id: u64| -> Job { Client::new(dir).get(&format!("/v1/jobs/{id}")).unwrap() };
    let fixed_priority = poll(30, "a priority for the job", || {
        Some(job(fixed).priority).filter(|&p| p > 0)
    });
    assert_eq!(
        fixed_priority, 777,
        "--priority replaces the policy's answer"
    );
    ok(&run_in(
        dir,
        dir,
        &["update", &format!("JobId={fixed}"), "Priority=4242"],
        None,
    ));
    poll(30, "the new priority", || {
        (job(fixed).priority == 4242).then_some(())
    });
    // Priority=0 holds it.
    ok(&run_in(
        dir,
        dir,
        &["update", &format!("JobId={fixed}"), "Priority=0"],
        None,
    ));
    assert_eq!(job(fixed).reason, "JobHeldUser");
    // The running job's limit becomes UNLIMITED (the daemon's user is an admin).
    ok(&run_in(
        dir,
        dir,
        &["update", &format!("JobId={busy}"), "TimeLimit=UNLIMITED"],
        None,
    ));
    let j = job(busy);
    assert_eq!((j.state.as_str(), j.time_limit), ("RUNNING", None));
    end_jobs(dir);
}

#[test]
fn jobs_that_ask_share_cpus_in_an_oversubscribe_partition() {
    let scratch = state_dir("oversub");
    let dir = scratch.path();
    let conf = dir.join("cluster.toml");
    std::fs::write(
        &conf,
        "ClusterName = \"share\"\nAccountingStorageEnforce = []\n\
         [[nodes]]\nNodeName = \"n1\"\nCPUs = 2\nRealMemory = 1000\n\
         [[partitions]]\nPartitionName = \"shared\"\nNodes = \"ALL\"\nDefault = true\n\
         OverSubscribe = \"YES:2\"\n",
    )
    .unwrap();
    let _d = Daemon::start_with(dir, &["--config", conf.to_str().unwrap()]);
    let submit = |options: &str| -> u64 {
        let script = format!("#!/bin/sh\n#SBATCH {options}\nsleep 300\n");
        ok(&run_in(dir, dir, &["submit", "--parsable"], Some(&script)))
            .trim()
            .parse()
            .unwrap()
    };
    // Two CPUs, two rows: four one-CPU jobs that ask run at once, a fifth waits.
    let shared: Vec<u64> = (0..5).map(|_| submit("-n 1 -s -o /dev/null")).collect();
    for &id in &shared[..4] {
        wait_for(dir, id, &["RUNNING"], 30);
    }
    let alone = submit("-n 1 -o /dev/null");
    let squeue = ok(&run_in(
        dir,
        dir,
        &["queue", "-h", "-o", "%i %h %T %r"],
        None,
    ));
    assert!(
        squeue.contains(&format!("{} YES RUNNING", shared[0])),
        "{squeue}"
    );
    poll(
        30,
        "the fifth job and the one that does not share wait",
        || {
            let pending = |id: u64| {
                let j: Job = Client::new(dir).get(&format!("/v1/jobs/{id}")).unwrap();
                j.state == "PENDING" && ["Resources", "Priority"].contains(&j.reason.as_str())
            };
            (pending(shared[4]) && pending(alone)).then_some(())
        },
    );
    let shown = ok(&run_in(
        dir,
        dir,
        &["show", "job", &alone.to_string()],
        None,
    ));
    assert!(shown.contains("OverSubscribe=OK"), "{shown}");
    let shown = ok(&run_in(dir, dir, &["show", "partition", "shared"], None));
    assert!(shown.contains("OverSubscribe=YES:2"), "{shown}");
    end_jobs(dir);
}
