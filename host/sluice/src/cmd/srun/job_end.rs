//! A step's job ending under its tasks (its time limit, scancel, a node failure): srun sees it
//! in the daemon's record of the job while the tasks run, prints Slurm's messages (srun's and
//! the one slurmstepd writes) and orders the tasks ended, so none outlives its job.

use std::io::Write;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use super::launch::{Order, Outcome};

/// What srun waits beyond KillWait for an aborted step to end (Slurm's `STEP_ABORT_TIME`).
const STEP_ABORT_TIME: u64 = 2;

/// The job as srun sees it while its step runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobNow {
    /// Still holding the step (or not known: the daemon did not answer).
    Running,
    /// Ended (or requeued) in `state`, at `at` (local ISO time), with the cluster's KillWait.
    Ended {
        /// The job's state, Slurm's long name (`TIMEOUT`).
        state: String,
        /// When, as slurmstepd prints it (`2026-11-26T14:00:00`).
        at: String,
        /// The cluster's KillWait.
        kill_wait: Duration,
    },
}

/// The step as slurmstepd names it: `STEP 12.0 ON node1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepName {
    /// The job.
    pub job: u64,
    /// The step.
    pub step: u32,
    /// The step's first node, where Slurm's message comes from.
    pub node: String,
}

/// Whether a job in `state` still holds its steps; `COMPLETING` counts until its end state
/// says why it ended.
pub fn holds_steps(state: &str) -> bool {
    matches!(state, "RUNNING" | "CONFIGURING" | "COMPLETING")
}

/// Runs `launch` (the launcher, given the channel of srun's orders) on its own thread and asks
/// `look` every `every` how the job is; once it has ended, writes Slurm's messages to `say`
/// and orders the tasks ended. Returns the tasks' outcomes and whether the job ended under
/// them.
pub fn watch<L, K>(
    launch: L,
    mut look: K,
    every: Duration,
    step: &StepName,
    say: &mut dyn Write,
) -> (Vec<Outcome>, bool)
where
    L: FnOnce(Receiver<Order>) -> Vec<Outcome> + Send,
    K: FnMut() -> JobNow,
{
    let (orders, received) = channel();
    let (done, finished) = channel();
    std::thread::scope(|s| {
        s.spawn(move || {
            let _ = done.send(launch(received));
        });
        let mut aborted = false;
        loop {
            match finished.recv_timeout(every) {
                Ok(outcomes) => return (outcomes, aborted),
                Err(RecvTimeoutError::Disconnected) => return (Vec::new(), aborted),
                Err(RecvTimeoutError::Timeout) if aborted => {}
                Err(RecvTimeoutError::Timeout) => {
                    if let JobNow::Ended {
                        state,
                        at,
                        kill_wait,
                    } = look()
                    {
                        let _ = write!(say, "{}", messages(step, &state, &at, kill_wait));
                        let _ = orders.send(Order::Terminate { kill_wait });
                        aborted = true;
                    }
                }
            }
        }
    })
}

/// srun's line and slurmstepd's for a step whose job ended in `state` at `at`.
pub fn messages(step: &StepName, state: &str, at: &str, kill_wait: Duration) -> String {
    let why = match state {
        "TIMEOUT" => format!("CANCELLED AT {at} DUE TO TIME LIMIT"),
        "CANCELLED" => format!("CANCELLED AT {at} DUE to SIGNAL Terminated"),
        "NODE_FAIL" => {
            format!("CANCELLED AT {at} DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS")
        }
        "PREEMPTED" => format!("CANCELLED AT {at} DUE TO PREEMPTION"),
        "PENDING" | "REQUEUED" => format!("CANCELLED AT {at} DUE TO JOB REQUEUE"),
        _ => "FAILED (non-zero exit code or other failure mode)".to_string(),
    };
    format!(
        "srun: Job step aborted: Waiting up to {} seconds for job step to finish.\n\
         slurmstepd: error: *** STEP {}.{} ON {} {why} ***\n",
        kill_wait.as_secs() + STEP_ABORT_TIME,
        step.job,
        step.step,
        step.node
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn step() -> StepName {
        StepName {
            job: 12,
            step: 0,
            node: "node1".into(),
        }
    }

    #[test]
    fn slurms_messages_name_the_step_the_moment_and_the_cause() {
        let m = messages(
            &step(),
            "TIMEOUT",
            "2026-11-26T14:00:00",
            Duration::from_secs(30),
        );
        assert_eq!(
            m,
            "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n\
             slurmstepd: error: *** STEP 12.0 ON node1 CANCELLED AT 2026-11-26T14:00:00 DUE TO TIME LIMIT ***\n"
        );
        let line = |state| messages(&step(), state, "T", Duration::ZERO);
        assert!(line("CANCELLED").ends_with("CANCELLED AT T DUE to SIGNAL Terminated ***\n"));
        assert!(line("NODE_FAIL").contains("DUE TO NODE FAILURE, SEE SLURMCTLD LOG"));
        assert!(line("PENDING").contains("DUE TO JOB REQUEUE"));
        assert!(
            line("FAILED")
                .ends_with("ON node1 FAILED (non-zero exit code or other failure mode) ***\n")
        );
    }

    #[test]
    fn the_tasks_are_ordered_ended_once_the_job_has_ended() {
        let mut looks = 0;
        let mut said = Vec::new();
        let started = Instant::now();
        let (outcomes, aborted) = watch(
            |orders: Receiver<Order>| match orders.recv() {
                Ok(Order::Terminate { kill_wait }) => {
                    assert_eq!(kill_wait, Duration::from_secs(5));
                    // A second order is not sent.
                    assert!(orders.recv_timeout(Duration::from_millis(100)).is_err());
                    vec![Outcome::Signaled(libc::SIGTERM)]
                }
                Err(_) => vec![],
            },
            || {
                looks += 1;
                if looks < 3 {
                    JobNow::Running
                } else {
                    JobNow::Ended {
                        state: "TIMEOUT".into(),
                        at: "2026-11-26T14:00:00".into(),
                        kill_wait: Duration::from_secs(5),
                    }
                }
            },
            Duration::from_millis(10),
            &step(),
            &mut said,
        );
        assert!(aborted);
        assert_eq!(outcomes, [Outcome::Signaled(libc::SIGTERM)]);
        assert_eq!(looks, 3);
        let said = String::from_utf8(said).unwrap();
        assert!(
            said.starts_with("srun: Job step aborted: Waiting up to 7 seconds"),
            "{said}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn tasks_that_end_first_are_not_disturbed() {
        let (outcomes, aborted) = watch(
            |_orders| vec![Outcome::Exited(0)],
            || panic!("the job is not looked at once the tasks have ended"),
            Duration::from_secs(60),
            &step(),
            &mut Vec::new(),
        );
        assert_eq!((outcomes, aborted), (vec![Outcome::Exited(0)], false));
    }
}
