//! Start-up's view of the jobs the journal says were running: their supervisors outlive the
//! daemon, so each is taken back as running if its supervisor is alive, recorded as ended if its
//! supervisor recorded an end while the daemon was away, started where it was placed if the
//! daemon stopped before launching it, and only if nothing is left of a run that began (its
//! node rebooted) requeued or failed, as Slurm does.

use sluice_cluster::NodeId;
use sluice_engine::{JobId, Reason};

use super::Driver;
use super::runs::exit_code;
use crate::executor::{Attached, ExitReport};
use crate::image::{JobRecord, Record, State};

/// What start-up does with a job that was running.
pub(super) enum Found {
    /// Its supervisor runs: enqueue it, then [`Driver::resume`] it.
    Running,
    /// It never started: resume it, then launch it (its first run).
    NotStarted,
    /// Its end has been journaled now.
    Ended,
    /// Nothing is left of it.
    Gone,
}

impl Driver {
    /// Asks the executor what became of `job`'s current run, journaling an end found on disk.
    pub(super) fn find_run(&mut self, job: &JobRecord) -> Found {
        match self.exec.attach(job.id, job.restarts) {
            Attached::Running => Found::Running,
            Attached::NotStarted => Found::NotStarted,
            Attached::Ended(report) => {
                self.ended_while_away(job, &report);
                Found::Ended
            }
            Attached::Gone => Found::Gone,
        }
    }

    /// Takes engine job `eid` (just enqueued) back as running where it ran, from when it
    /// started; `Err` when the engine no longer has room for it there.
    pub(super) fn resume(&mut self, job: &JobRecord, eid: JobId) -> Result<(), String> {
        let partition = job.partition.as_deref().ok_or("no partition recorded")?;
        let mut nodes = Vec::with_capacity(job.nodes.len());
        for name in &job.nodes {
            let n = self
                .cluster
                .nodes
                .iter()
                .position(|x| &x.name == name)
                .ok_or_else(|| format!("node {name} is no longer configured"))?;
            nodes.push(NodeId(n as u32));
        }
        let start = job.start_time.unwrap_or_else(|| self.engine.now());
        self.clock.pin(start);
        let result = self.engine.resume_running(eid, partition, &nodes, start);
        self.clock.unpin();
        result.map_err(|e| e.to_string())?;
        if job.unlimited_while_running {
            let _ = self.engine.set_time_limit(eid, None);
        }
        self.resumed.insert(job.id);
        if job.cancel_requested {
            // The cancel was acknowledged before the restart: it still applies.
            let _ = self.engine.cancel(eid);
        }
        Ok(())
    }

    /// Journals the end a supervisor recorded while the daemon was away.
    fn ended_while_away(&mut self, job: &JobRecord, r: &ExitReport) {
        let code = exit_code(r);
        let (state, why) = if r.timed_out {
            (State::Timeout, Reason::TimeLimit)
        } else if job.cancel_requested {
            (State::Cancelled, Reason::None)
        } else if r.out_of_memory {
            (State::OutOfMemory, Reason::OutOfMemory)
        } else if code == 0 {
            (State::Completed, Reason::None)
        } else {
            (State::Failed, Reason::NonZeroExitCode)
        };
        self.commit(Record::Exited {
            id: job.id,
            code: r.code,
            signal: r.signal,
        });
        let reason = r
            .reason
            .clone()
            .or_else(|| (why != Reason::None).then(|| why.as_str().to_string()));
        self.commit(Record::Ended {
            id: job.id,
            time: r.end_time.unwrap_or_else(|| self.engine.now()),
            state,
            exit_code: Some(code),
            reason,
        });
    }
}
