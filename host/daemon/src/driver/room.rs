//! Room on disk for a client's change, asked before the change is made: on a full file system
//! the change is refused with 507 and nothing in memory moves ahead of the journal, while reads
//! go on being answered.

use std::io::Write;

use super::Driver;
use crate::api::{ApiError, ApiRequest};
use crate::error::StoreError;

/// Journal bytes allowed for a change besides the request's own size (record envelope, records
/// of the daemon's decisions that follow at once).
const ENVELOPE: u64 = 4 << 10;

/// Journal bytes of one node's power record besides its reasons (name, flags, timers).
const POWER_RECORD: u64 = 512;

/// Counts bytes written to it.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Bytes `value` takes as JSON, counted without keeping them.
fn json_len<T: serde::Serialize>(value: &T) -> u64 {
    let mut n = Count(0);
    let _ = serde_json::to_writer(&mut n, value);
    n.0
}

/// Journal bytes a request's records may take, or `None` when it writes no record.
fn journal_bound(req: &ApiRequest) -> Option<u64> {
    match req {
        ApiRequest::Submit(r) => Some(json_len(r) + ENVELOPE),
        ApiRequest::Update(_, u) => Some(json_len(u) + ENVELOPE),
        ApiRequest::CreateReservation(r) => Some(json_len(r) + ENVELOPE),
        ApiRequest::StepStart(_, s) => Some(json_len(s) + ENVELOPE),
        ApiRequest::NodeAction { nodes, reason, .. } => {
            Some((nodes.len() + reason.len()) as u64 + ENVELOPE)
        }
        ApiRequest::NodeState {
            nodes,
            state,
            reason,
        } => {
            // One power record per node at most, each about a node's name, state and reasons.
            let count = sluice_hostlist::expand_at_most(nodes, sluice_hostlist::MAX_HOSTS)
                .map_or(1, |n| n.len().max(1)) as u64;
            Some(count * (POWER_RECORD + 2 * reason.len() as u64) + state.len() as u64 + ENVELOPE)
        }
        ApiRequest::Register { node, req } => {
            Some(node.len() as u64 + json_len(req) + POWER_RECORD + ENVELOPE)
        }
        ApiRequest::DeleteReservation(name) => Some(name.len() as u64 + ENVELOPE),
        ApiRequest::PartitionState { name, state } => {
            Some((name.len() + state.len()) as u64 + ENVELOPE)
        }
        ApiRequest::Cancel { .. }
        | ApiRequest::Hold(_)
        | ApiRequest::Release(_)
        | ApiRequest::StepEnd { .. }
        | ApiRequest::Reconfigure => Some(ENVELOPE),
        ApiRequest::Health
        | ApiRequest::Metrics
        | ApiRequest::Diag
        | ApiRequest::ListJobs(_)
        | ApiRequest::ShowJob(_)
        | ApiRequest::Nodes
        | ApiRequest::ShowNode(_)
        | ApiRequest::Partitions
        | ApiRequest::Licenses
        | ApiRequest::Reservations
        | ApiRequest::Share
        | ApiRequest::Prio
        | ApiRequest::Plugins
        | ApiRequest::Swap { .. }
        | ApiRequest::Rollback(_)
        | ApiRequest::ShadowStart { .. }
        | ApiRequest::ShadowReport
        | ApiRequest::ShadowStop
        | ApiRequest::Config
        | ApiRequest::Accounting(_)
        | ApiRequest::WillRun(_) => None,
    }
}

/// Bytes of a submission's job files: its script and its environment as stored.
pub(super) fn job_file_bytes(r: &crate::request::SubmitRequest) -> u64 {
    r.script.len() as u64 + json_len(&r.env)
}

impl Driver {
    /// Reserves journal room for `req`'s records (and file room for a submission's script and
    /// environment); a full disk is a 507 naming the file system, too many jobs a 503.
    pub(super) fn admit(&mut self, req: &ApiRequest) -> Result<(), ApiError> {
        let Some(bytes) = journal_bound(req) else {
            return Ok(());
        };
        match req {
            // An array's other tasks are admitted once its size is known (`submit_array`).
            ApiRequest::Submit(r) => self.admit_jobs(bytes, 1, job_file_bytes(r)),
            _ => self.admit_jobs(bytes, 0, 0),
        }
    }

    /// Admits a change of `bytes` of journal that adds `jobs` jobs with `files` bytes of job
    /// files: refused while MaxJobCount records exist (503, as slurmctld's EAGAIN) or when the
    /// disk has no room for all of it (507).
    pub(super) fn admit_jobs(&mut self, bytes: u64, jobs: u64, files: u64) -> Result<(), ApiError> {
        let held = self.store.image().jobs.len() as u64;
        let max = self.cfg.max_job_count as u64;
        if jobs > 0 && held + jobs > max {
            self.metrics.refused += 1;
            self.opts.metrics.job_refused();
            return Err(ApiError::unavailable(format!(
                "batch job submission failed: Resource temporarily unavailable: MaxJobCount ({max}) reached ({held} job records, {jobs} more asked for); ended jobs leave min_job_age seconds after they end, retry then"
            )));
        }
        let what = if jobs > 0 {
            "batch job submission failed: "
        } else {
            ""
        };
        self.store
            .admit_jobs(bytes, jobs, files)
            .map_err(|e| match e {
                StoreError::Full { .. } => {
                    self.metrics.refused += 1;
                    self.opts.metrics.job_refused();
                    ApiError::insufficient_storage(format!("{what}{e}"))
                }
                other => ApiError::internal(other.to_string()),
            })
    }
}
