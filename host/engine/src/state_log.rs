//! Owns the state log: one JSON object per line, in time order, with times in seconds since a
//! start — node and job state changes, program calls, refused actions. A scenario replay
//! (`sluice sim --log`) and the live daemon (`power_log`) write the same lines.

use std::collections::HashMap;
use std::io::Write;

use crate::{Engine, PowerCall};
use serde_json::{Map, Value, json};

/// A node as last logged.
#[derive(Clone, Debug, PartialEq, Eq)]
struct NodeSeen {
    state: String,
    sinfo: String,
    reason: Option<String>,
    last_busy: Option<i64>,
}

/// A job as last logged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSeen {
    /// Slurm's state name.
    pub state: &'static str,
    /// Its pending reason (`None` when it has none).
    pub reason: &'static str,
    /// Times requeued.
    pub restarts: u32,
    /// When it became eligible (engine time).
    pub eligible_time: Option<i64>,
}

impl JobSeen {
    /// What the log says of engine job `job`.
    pub fn of(job: &crate::Job) -> Self {
        JobSeen {
            state: job.state.as_str(),
            reason: job.reason.as_str(),
            restarts: job.restarts,
            eligible_time: job.eligible_time,
        }
    }
}

/// Writes the log, remembering what it last wrote per node and job so only changes appear.
pub struct StateLog<W: Write> {
    out: W,
    /// The engine time the replay started at: log times are relative to it.
    start: i64,
    nodes: Vec<Option<NodeSeen>>,
    jobs: HashMap<u64, JobSeen>,
    /// Lines written.
    pub lines: u64,
}

impl<W: Write> StateLog<W> {
    /// A log into `out` for a replay whose clock starts at `start`.
    pub fn new(out: W, start: i64) -> Self {
        Self {
            out,
            start,
            nodes: Vec::new(),
            jobs: HashMap::new(),
            lines: 0,
        }
    }

    fn write(&mut self, record: Value) -> std::io::Result<()> {
        self.lines += 1;
        serde_json::to_writer(&mut self.out, &record)?;
        self.out.write_all(b"\n")
    }

    /// A time relative to the start.
    fn rel(&self, t: i64) -> i64 {
        t - self.start
    }

    /// Logs every node whose state, sinfo state, reason or LastBusyTime changed since its
    /// last record (all of them the first time), `last_busy` only when it changed.
    pub fn nodes(&mut self, engine: &Engine) -> std::io::Result<()> {
        let now = self.rel(engine.now());
        let count = engine.nodes().len();
        self.nodes.resize(count, None);
        for n in 0..count {
            let id = sluice_cluster::NodeId(n as u32);
            let report = engine.node_power_report(id);
            let seen = NodeSeen {
                state: report.state,
                sinfo: report.sinfo,
                reason: engine.nodes().node(id).reason.clone(),
                last_busy: report.last_busy,
            };
            let before = self.nodes[n].as_ref();
            if before == Some(&seen) {
                continue;
            }
            let mut record = Map::new();
            record.insert("t".into(), json!(now));
            record.insert("node".into(), json!(engine.nodes().node(id).name));
            record.insert("state".into(), json!(seen.state));
            record.insert("sinfo".into(), json!(seen.sinfo));
            record.insert("reason".into(), json!(seen.reason));
            if before.is_none_or(|b| b.last_busy != seen.last_busy) {
                let busy = seen.last_busy.map(|b| self.rel(b));
                record.insert("last_busy".into(), json!(busy));
            }
            self.nodes[n] = Some(seen);
            self.write(Value::Object(record))?;
        }
        Ok(())
    }

    /// Logs job `trace_id` if its state, reason, restarts or eligible time changed
    /// (`restarts` and `eligible_time` only when they did).
    pub fn job(&mut self, now: i64, trace_id: u64, seen: JobSeen) -> std::io::Result<()> {
        let before = self.jobs.get(&trace_id);
        if before == Some(&seen) {
            return Ok(());
        }
        let mut record = Map::new();
        record.insert("t".into(), json!(self.rel(now)));
        record.insert("job".into(), json!(trace_id));
        record.insert("state".into(), json!(seen.state));
        record.insert("reason".into(), json!(seen.reason));
        if before.map_or(seen.restarts != 0, |b| b.restarts != seen.restarts) {
            record.insert("restarts".into(), json!(seen.restarts));
        }
        if before.map_or(seen.eligible_time.is_some(), |b| {
            b.eligible_time != seen.eligible_time
        }) {
            let eligible = seen.eligible_time.map(|e| self.rel(e));
            record.insert("eligible_time".into(), json!(eligible));
        }
        self.jobs.insert(trace_id, seen);
        self.write(Value::Object(record))
    }

    /// Forgets a job that ended, once logged.
    pub fn forget_job(&mut self, trace_id: u64) {
        self.jobs.remove(&trace_id);
    }

    /// Forgets every job `keep` says is gone (a live log's jobs leave when the engine purges
    /// them, not when they end, so an ended job is not logged twice).
    pub fn retain_jobs(&mut self, keep: impl Fn(u64) -> bool) {
        self.jobs.retain(|id, _| keep(*id));
    }

    /// Logs a program call: its argv (after argv[0]), resume file and why each node is in it.
    pub fn program(&mut self, call: &PowerCall) -> std::io::Result<()> {
        let mut record = Map::new();
        record.insert("t".into(), json!(self.rel(call.time)));
        record.insert("program".into(), json!(call.program.as_str()));
        record.insert("argv".into(), json!(call.args));
        if let Some(file) = &call.resume_file {
            record.insert("resume_file".into(), serde_json::to_value(file)?);
        }
        record.insert("reasons".into(), json!(call.reasons));
        self.write(Value::Object(record))
    }

    /// Logs an action or job the scheduler refused, with its error.
    pub fn refused(&mut self, now: i64, what: Value, error: &str) -> std::io::Result<()> {
        let mut record = match what {
            Value::Object(map) => map,
            other => {
                let mut map = Map::new();
                map.insert("input".into(), other);
                map
            }
        };
        record.insert("t".into(), json!(self.rel(now)));
        record.insert("error".into(), json!(error));
        self.write(Value::Object(record))
    }

    /// Logs why the replay stopped with jobs left.
    pub fn stopped(&mut self, now: i64, why: &str, jobs_left: &[u64]) -> std::io::Result<()> {
        let record = json!({"t": self.rel(now), "stopped": why, "jobs_left": jobs_left});
        self.write(record)
    }

    /// Flushes and gives the writer back.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}
