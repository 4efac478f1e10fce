//! The local launcher: every task of a step runs on this machine as a child of srun, its
//! streams routed as srun's options say, and srun's order to end them carried out as
//! slurmstepd does (SIGCONT and SIGTERM, then SIGKILL to what is left after KillWait).

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::launch::{Launcher, Order, Outcome, Task, Writing};
use super::streams::{self, OutputFiles, Shared};
use super::task_io::{Sink, Source};

/// How often running tasks are looked at while srun waits for them.
const TICK: Duration = Duration::from_millis(20);

/// How long, once the tasks were ended by an order, srun waits for their output to drain:
/// a process they left behind may hold their pipes open.
const DRAIN: Duration = Duration::from_secs(2);

/// Runs every task here, as child processes of srun.
pub struct Local;

impl Launcher for Local {
    fn run(&self, tasks: &[Task], writing: Writing, orders: Receiver<Order>) -> Vec<Outcome> {
        let out: Shared = Arc::new(Mutex::new(std::io::stdout()));
        let err: Shared = Arc::new(Mutex::new(std::io::stderr()));
        let mut files = OutputFiles::new(writing.append);
        let mut children = Vec::with_capacity(tasks.len());
        let mut forwarders = Vec::new();
        let mut inputs = Vec::new();
        for task in tasks {
            let sinks = Sinks {
                label: writing.label.then(|| format!("{}: ", task.rank)),
                out: &out,
                err: &err,
            };
            match spawn(task, &sinks, &mut files, &mut forwarders) {
                Ok(mut child) => {
                    inputs.extend(child.stdin.take());
                    children.push(Some(child));
                }
                Err(e) => {
                    eprintln!("srun: error: {}: task {}: {e}", task.node, task.rank);
                    children.push(None);
                }
            }
        }
        streams::broadcast(std::io::stdin(), inputs);
        let (outcomes, ordered) = wait(&mut children, &orders);
        drain(forwarders, ordered);
        outcomes
    }
}

/// srun's own outputs and the label of the task being started.
struct Sinks<'a> {
    label: Option<String>,
    out: &'a Shared,
    err: &'a Shared,
}

/// Starts `task` with its streams as planned; its output is forwarded by threads added to
/// `forwarders`. The error says what could not be opened or run.
fn spawn(
    task: &Task,
    sinks: &Sinks<'_>,
    files: &mut OutputFiles,
    forwarders: &mut Vec<JoinHandle<()>>,
) -> Result<Child, String> {
    let Some(program) = task.argv.first() else {
        return Err("no command to run".into());
    };
    let mut cmd = Command::new(program);
    cmd.args(&task.argv[1..]).env_clear().envs(&task.env);
    if let Some(dir) = &task.workdir {
        cmd.current_dir(dir);
    }
    cmd.stdin(match &task.streams.stdin {
        Source::Forward => Stdio::piped(),
        Source::Null => Stdio::null(),
        Source::File(p) => std::fs::File::open(p)
            .map_err(|e| format!("Could not open stdin file {}: {e}", p.display()))?
            .into(),
    });
    let mut target = |sink: &Sink, own: &Shared, what: &str| -> Result<Option<Shared>, String> {
        match sink {
            Sink::Forward => Ok(Some(own.clone())),
            Sink::Discard => Ok(None),
            Sink::File(p) => files
                .get(p)
                .map(Some)
                .map_err(|e| format!("Could not open {what} file {}: {e}", p.display())),
        }
    };
    let out = target(&task.streams.stdout, sinks.out, "stdout")?;
    let err = target(&task.streams.stderr, sinks.err, "stderr")?;
    let piped = |t: &Option<Shared>| {
        if t.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        }
    };
    cmd.stdout(piped(&out)).stderr(piped(&err));
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if let (Some(from), Some(to)) = (child.stdout.take(), out) {
        forwarders.push(streams::forward(from, sinks.label.clone(), to));
    }
    if let (Some(from), Some(to)) = (child.stderr.take(), err) {
        forwarders.push(streams::forward(from, sinks.label.clone(), to));
    }
    Ok(child)
}

/// Waits for every task's end, carrying out srun's orders meanwhile; says how each ended and
/// whether they were ordered to end.
fn wait(children: &mut [Option<Child>], orders: &Receiver<Order>) -> (Vec<Outcome>, bool) {
    let mut outcomes: Vec<Option<Outcome>> = children
        .iter()
        .map(|c| c.is_none().then_some(Outcome::NotStarted))
        .collect();
    let mut kill_at: Option<Instant> = None;
    let mut listening = true;
    loop {
        for (child, outcome) in children.iter_mut().zip(outcomes.iter_mut()) {
            let Some(c) = child.as_mut().filter(|_| outcome.is_none()) else {
                continue;
            };
            match c.try_wait() {
                Ok(Some(status)) => *outcome = Some(ended(status)),
                Ok(None) => {}
                Err(_) => *outcome = Some(Outcome::NotStarted),
            }
        }
        if outcomes.iter().all(Option::is_some) {
            break;
        }
        if kill_at.is_some_and(|t| Instant::now() >= t) {
            signal(children, &outcomes, libc::SIGKILL);
            kill_at = Some(Instant::now() + Duration::from_secs(1));
        }
        let order = if listening {
            orders.recv_timeout(TICK)
        } else {
            std::thread::sleep(TICK);
            Err(RecvTimeoutError::Timeout)
        };
        match order {
            Ok(Order::Terminate { kill_wait }) if kill_at.is_none() => {
                signal(children, &outcomes, libc::SIGCONT);
                signal(children, &outcomes, libc::SIGTERM);
                kill_at = Some(Instant::now() + kill_wait);
            }
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => listening = false,
        }
    }
    let outcomes = outcomes
        .into_iter()
        .map(|o| o.unwrap_or(Outcome::NotStarted))
        .collect();
    (outcomes, kill_at.is_some())
}

/// Sends `sig` to every task not yet reaped (so its pid is still its own).
fn signal(children: &[Option<Child>], outcomes: &[Option<Outcome>], sig: libc::c_int) {
    for (child, outcome) in children.iter().zip(outcomes) {
        if let (Some(c), None) = (child, outcome) {
            // SAFETY: plain system call on our own unreaped child.
            unsafe { libc::kill(c.id() as libc::pid_t, sig) };
        }
    }
}

/// How a reaped task ended.
fn ended(status: ExitStatus) -> Outcome {
    match (status.code(), status.signal()) {
        (Some(c), _) => Outcome::Exited(c),
        (None, Some(s)) => Outcome::Signaled(s),
        (None, None) => Outcome::NotStarted,
    }
}

/// Waits for the forwarders to pass on the tasks' last lines: all of them normally, for
/// [`DRAIN`] at most once the tasks were ended by an order.
fn drain(forwarders: Vec<JoinHandle<()>>, ordered: bool) {
    let until = Instant::now() + DRAIN;
    for f in forwarders {
        if ordered {
            while !f.is_finished() && Instant::now() < until {
                std::thread::sleep(TICK);
            }
            if !f.is_finished() {
                continue;
            }
        }
        let _ = f.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::srun::task_io::TaskStreams;
    use std::collections::BTreeMap;
    use std::sync::mpsc::channel;

    fn task(rank: u32, script: &str) -> Task {
        Task {
            rank,
            node: "n1".into(),
            argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
            env: BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]),
            workdir: None,
            streams: TaskStreams::default(),
        }
    }

    fn run(tasks: &[Task], writing: Writing) -> Vec<Outcome> {
        let (_keep, orders) = channel();
        Local.run(tasks, writing, orders)
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
        assert_eq!(
            run(&tasks, Writing::default()),
            vec![
                Outcome::Exited(0),
                Outcome::Exited(3),
                Outcome::Signaled(9),
                Outcome::NotStarted
            ]
        );
    }

    #[test]
    fn tasks_write_their_files_and_read_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("in.txt"), "from a file\n").unwrap();
        let with = |rank: u32, streams: TaskStreams| Task {
            streams,
            ..task(rank, "read x; echo \"$x\"; echo oops >&2")
        };
        let tasks = [
            with(
                0,
                TaskStreams {
                    stdin: Source::File(d.join("in.txt")),
                    stdout: Sink::File(d.join("all.txt")),
                    stderr: Sink::File(d.join("err-0.txt")),
                },
            ),
            with(
                1,
                TaskStreams {
                    stdin: Source::Null,
                    stdout: Sink::File(d.join("all.txt")),
                    stderr: Sink::Discard,
                },
            ),
        ];
        let writing = Writing {
            label: true,
            append: false,
        };
        assert_eq!(run(&tasks, writing), [Outcome::Exited(0); 2]);
        let mut lines: Vec<String> = std::fs::read_to_string(d.join("all.txt"))
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        lines.sort();
        assert_eq!(lines, ["0: from a file", "1: "]);
        assert_eq!(
            std::fs::read_to_string(d.join("err-0.txt")).unwrap(),
            "0: oops\n"
        );
        // A file that cannot be read keeps its task from starting, with srun's words.
        let missing = Task {
            streams: TaskStreams {
                stdin: Source::File(d.join("nothing")),
                ..TaskStreams::default()
            },
            ..task(0, "true")
        };
        assert_eq!(run(&[missing], writing), [Outcome::NotStarted]);
    }

    #[test]
    fn an_order_to_end_terminates_then_kills_what_ignores_it() {
        let tasks = [
            task(0, "exec sleep 30"),
            task(1, "trap '' TERM; exec sleep 30"),
        ];
        let (send, orders) = channel();
        let started = Instant::now();
        let runner = std::thread::spawn(move || Local.run(&tasks, Writing::default(), orders));
        std::thread::sleep(Duration::from_millis(300));
        send.send(Order::Terminate {
            kill_wait: Duration::from_millis(500),
        })
        .unwrap();
        let outcomes = runner.join().unwrap();
        assert_eq!(
            outcomes,
            [
                Outcome::Signaled(libc::SIGTERM),
                Outcome::Signaled(libc::SIGKILL)
            ]
        );
        // Well before the tasks' own end.
        assert!(started.elapsed() < Duration::from_secs(20));
    }
}
