//! Where a step's tasks run: the [`Launcher`] boundary and the local launcher, which runs
//! every task on this machine and forwards their output line by line. A node agent would
//! implement [`Launcher`] to run each node's tasks there and stream their lines back.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// One task of a step: where it runs, what it runs, and its own environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Its rank in the step (`SLURM_PROCID`).
    pub rank: u32,
    /// The node it runs on (`SLURMD_NODENAME`).
    pub node: String,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Its whole environment.
    pub env: BTreeMap<String, String>,
    /// The directory it starts in (`-D/--chdir`; srun's own when `None`).
    pub workdir: Option<std::path::PathBuf>,
}

/// How a task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signaled(i32),
    /// It could not be started (the program is missing or not executable).
    NotStarted,
}

impl Outcome {
    /// The exit code srun reports for it: the code, 128 + the signal, or 127 (as a shell
    /// does for a command it cannot run).
    pub fn code(self) -> i32 {
        match self {
            Self::Exited(c) => c,
            Self::Signaled(s) => 128 + s,
            Self::NotStarted => 127,
        }
    }
}

/// Runs a step's tasks to their end, forwarding their output, and says how each ended (in
/// the order given).
pub trait Launcher {
    /// Runs `tasks`; with `label`, each output line is prefixed with `RANK: ` as srun's
    /// `--label` does.
    fn run(&self, tasks: &[Task], label: bool) -> Vec<Outcome>;
}

/// Runs every task here, as child processes of srun.
pub struct Local;

impl Launcher for Local {
    fn run(&self, tasks: &[Task], label: bool) -> Vec<Outcome> {
        let out = Arc::new(Mutex::new(std::io::stdout()));
        let err = Arc::new(Mutex::new(std::io::stderr()));
        let mut children = Vec::with_capacity(tasks.len());
        let mut forwarders = Vec::new();
        for task in tasks {
            let mut cmd = Command::new(&task.argv[0]);
            cmd.args(&task.argv[1..])
                .env_clear()
                .envs(&task.env)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if let Some(dir) = &task.workdir {
                cmd.current_dir(dir);
            }
            // As srun's default `--input`, only one task reads srun's standard input here.
            if task.rank != 0 {
                cmd.stdin(Stdio::null());
            }
            match cmd.spawn() {
                Ok(mut child) => {
                    let prefix = label.then(|| format!("{}: ", task.rank));
                    if let Some(o) = child.stdout.take() {
                        forwarders.push(forward(o, prefix.clone(), out.clone()));
                    }
                    if let Some(e) = child.stderr.take() {
                        forwarders.push(forward(e, prefix, err.clone()));
                    }
                    children.push(Some(child));
                }
                Err(e) => {
                    eprintln!(
                        "srun: error: {}: task {}: cannot run {}: {e}",
                        task.node, task.rank, task.argv[0]
                    );
                    children.push(None);
                }
            }
        }
        let outcomes = children
            .into_iter()
            .map(|child| match child.map(|mut c| c.wait()) {
                Some(Ok(status)) => match (status.code(), status.signal()) {
                    (Some(c), _) => Outcome::Exited(c),
                    (None, Some(s)) => Outcome::Signaled(s),
                    (None, None) => Outcome::NotStarted,
                },
                _ => Outcome::NotStarted,
            })
            .collect();
        for f in forwarders {
            let _ = f.join();
        }
        outcomes
    }
}

/// Copies `from` to `to` a whole line at a time (so tasks' lines never interleave), with the
/// label in front when there is one; a last line without a newline is passed on as it is.
fn forward<R, W>(from: R, prefix: Option<String>, to: Arc<Mutex<W>>) -> std::thread::JoinHandle<()>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    std::thread::spawn(move || {
        let mut reader = BufReader::new(from);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    let Ok(mut w) = to.lock() else { return };
                    if let Some(p) = &prefix {
                        let _ = w.write_all(p.as_bytes());
                    }
                    let _ = w.write_all(&line);
                    let _ = w.flush();
                }
            }
        }
    })
}

/// The step's exit code: the highest of its tasks'.
pub fn step_code(outcomes: &[Outcome]) -> i32 {
    outcomes.iter().map(|o| o.code()).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(rank: u32, script: &str) -> Task {
        Task {
            rank,
            node: "n1".into(),
            argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
            env: BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]),
            workdir: None,
        }
    }

    #[test]
    fn outcomes_say_how_each_task_ended() {
        let tasks = [
            task(0, "exit 0"),
            task(1, "exit 3"),
            task(2, "kill -9 $$"),
            Task {
                argv: vec!["/no/such/program".into()],
                ..task(3, "")
            },
        ];
        let outcomes = Local.run(&tasks, false);
        assert_eq!(
            outcomes,
            vec![
                Outcome::Exited(0),
                Outcome::Exited(3),
                Outcome::Signaled(9),
                Outcome::NotStarted
            ]
        );
        assert_eq!(step_code(&outcomes[..3]), 137);
        assert_eq!(step_code(&outcomes[..2]), 3);
    }

    #[test]
    fn forwarded_lines_carry_the_label() {
        let sink = Arc::new(Mutex::new(Vec::<u8>::new()));
        forward(&b"one\ntwo\nlast"[..], Some("3: ".into()), sink.clone())
            .join()
            .unwrap();
        assert_eq!(
            String::from_utf8(sink.lock().unwrap().clone()).unwrap(),
            "3: one\n3: two\n3: last"
        );
    }
}
