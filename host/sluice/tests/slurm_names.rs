//! `sluice` under Slurm's command names, against the real daemon: links made by `sluice
//! install-links` act as sbatch, squeue and scontrol; a job script's `srun`, `scontrol` and
//! `squeue`, run by a second, unprivileged user with no path and no state-dir flag, are the
//! daemon's own even when other commands by those names come first on the submitter's PATH;
//! and install-links never overwrites a file of someone else's.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::unprivileged::TestUser;
use common::{BIN, Daemon, end_jobs, log_of, state_dir, wait_for};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `sluice install-links DIR`, which must succeed; the directory.
fn install_links(dir: &Path) -> PathBuf {
    let out = Command::new(BIN)
        .arg("install-links")
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    dir.to_path_buf()
}

/// The linked command `name ARGS…`, finding its daemon by `SLUICE_STATE_DIR` alone.
fn linked(links: &Path, state: &Path, name: &str, args: &[&str]) -> Output {
    Command::new(links.join(name))
        .args(args)
        .current_dir(state)
        .env("SLUICE_STATE_DIR", state)
        .env_remove("SLURM_JOB_ID")
        .env_remove("SLURM_JOB_NODELIST")
        .output()
        .unwrap()
}

/// A command's stdout, which must have succeeded.
fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn links_by_slurms_names_act_as_those_commands() {
    let scratch = state_dir("slurm-names");
    let state = scratch.path();
    let _d = Daemon::start(state);
    let links = install_links(&state.join("mine"));

    // sbatch: a held job, so squeue still lists it.
    let id = ok(linked(
        &links,
        state,
        "sbatch",
        &["--parsable", "-H", "-o", "out-%j.txt", "--wrap", "hostname"],
    ));
    let id: u64 = id.trim().parse().unwrap();
    let listed = ok(linked(&links, state, "squeue", &["-h", "-o", "%i"]));
    assert_eq!(listed.trim(), id.to_string());
    let shown = ok(linked(
        &links,
        state,
        "scontrol",
        &["show", "job", &id.to_string()],
    ));
    assert!(shown.starts_with(&format!("JobId={id} ")), "{shown}");
    // Keywords abbreviate as scontrol's do.
    let shown = ok(linked(
        &links,
        state,
        "scontrol",
        &["sho", "job", &id.to_string()],
    ));
    assert!(shown.contains("JobState=PENDING"), "{shown}");

    // Hostlists need no daemon.
    let names = ok(linked(
        &links,
        state,
        "scontrol",
        &["show", "hostnames", "node[01-03]"],
    ));
    assert_eq!(names, "node01\nnode02\nnode03\n");
    let list = ok(linked(
        &links,
        state,
        "scontrol",
        &["show", "hostlist", "node01,node02,node03"],
    ));
    assert_eq!(list, "node[01-03]\n");

    // An unknown keyword is refused in scontrol's words.
    let out = linked(&links, state, "scontrol", &["frobnicate", "job"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("invalid keyword: frobnicate"),
        "{}",
        text(&out.stderr)
    );

    // scontrol release starts it; its output is the command's.
    ok(linked(
        &links,
        state,
        "scontrol",
        &["release", &id.to_string()],
    ));
    let job = wait_for(state, id, &["COMPLETED", "FAILED"], 60);
    assert_eq!(job.state, "COMPLETED", "{}", log_of(state));
    let out = std::fs::read_to_string(state.join(format!("out-{id}.txt"))).unwrap();
    assert_eq!(out.trim(), hostname());
    end_jobs(state);
}

/// This machine's host name, as `hostname` prints it.
fn hostname() -> String {
    text(&Command::new("hostname").output().unwrap().stdout)
        .trim()
        .to_string()
}

/// A `name` that says it is not sluice's and fails, as Slurm's own client would in a sluice
/// job ("Unable to confirm allocation").
fn impostor(dir: &Path, name: &str) {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("#!/bin/sh\necho \"not sluice's {name}\"\nexit 1\n"),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_job_script_finds_sluices_commands_first_on_its_path() {
    let Some(user) = TestUser::create("sn") else {
        return;
    };
    let scratch = state_dir("slurm-names-job");
    let state = scratch.path();
    let _d = Daemon::start(state);

    // The submitter's PATH starts with other commands by Slurm's names.
    let fake = user.home.join("slurm-client");
    std::fs::create_dir(&fake).unwrap();
    for name in ["srun", "scontrol", "squeue"] {
        impostor(&fake, name);
    }
    let script = "#!/bin/sh\n#SBATCH -N 2 -o job.out\n\
                  srun hostname\n\
                  echo nodes=$SLURM_JOB_NODELIST\n\
                  scontrol show hostnames $SLURM_JOB_NODELIST\n\
                  squeue -j $SLURM_JOB_ID -h -o %i\n\
                  echo path=$PATH\n";
    std::fs::write(user.home.join("job.sh"), script).unwrap();
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", fake.display());
    let out = user
        .command(BIN)
        .args(["submit", "--parsable", "--state-dir"])
        .arg(state)
        .arg("job.sh")
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id: u64 = text(&out.stdout).trim().parse().unwrap();
    let job = wait_for(state, id, &["COMPLETED", "FAILED"], 60);
    let output = std::fs::read_to_string(user.home.join("job.out")).unwrap_or_default();
    assert_eq!(job.state, "COMPLETED", "{output}\n{}", log_of(state));
    assert!(!output.contains("not sluice's"), "{output}");
    eprintln!("job {id}'s output:\n{output}");

    let lines: Vec<&str> = output.lines().collect();
    let host = hostname();
    // srun ran one task on each of the job's two nodes (both this machine).
    assert_eq!(lines[..2], [host.as_str(), host.as_str()], "{output}");
    let nodes = lines[2].strip_prefix("nodes=").unwrap();
    let expanded: Vec<String> = sluice_hostlist::Hostlist::parse(nodes)
        .unwrap()
        .iter()
        .collect();
    assert_eq!(expanded.len(), 2, "{output}");
    assert_eq!(lines[3..5], expanded[..], "{output}");
    assert_eq!(lines[5], id.to_string(), "{output}");
    // The daemon's links come first, the submitter's PATH after them.
    let bin = state.canonicalize().unwrap().join("bin");
    assert_eq!(
        lines[6],
        format!("path={}:{path}", bin.display()),
        "{output}"
    );
    end_jobs(state);
}

#[test]
fn install_links_never_overwrites_a_file_of_someone_elses() {
    let scratch = state_dir("slurm-names-foreign");
    let dir = scratch.path();
    std::fs::write(dir.join("squeue"), "#!/bin/sh\necho site squeue\n").unwrap();
    let out = Command::new(BIN)
        .arg("install-links")
        .arg(dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}: not a link to sluice",
            dir.join("squeue").display()
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("squeue")).unwrap(),
        "#!/bin/sh\necho site squeue\n"
    );
    assert!(
        std::fs::symlink_metadata(dir.join("sbatch")).is_err(),
        "a refusal links nothing"
    );

    // Once the file is gone, the links are made; making them again keeps them.
    std::fs::remove_file(dir.join("squeue")).unwrap();
    install_links(dir);
    assert_eq!(
        std::fs::read_link(dir.join("squeue")).unwrap(),
        Path::new(BIN).canonicalize().unwrap()
    );
    let again = Command::new(BIN)
        .arg("install-links")
        .arg(dir)
        .output()
        .unwrap();
    assert!(text(&again.stdout).lines().all(|l| l.starts_with("kept ")));
}
