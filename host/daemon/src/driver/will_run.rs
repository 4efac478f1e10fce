//! `POST /v1/jobs/will-run` (sbatch `--test-only`): when and where a submission would start,
//! asked of the engine's backfill plan; nothing is queued or journaled.

use sluice_api::{JobWillRun, SubmitRequest};
use sluice_client::identity::Identity;

use super::Driver;
use crate::api::ApiError;

impl Driver {
    /// Checks `request` as a submission is checked and answers where and when it would start.
    /// An array is tested as one of its tasks.
    pub(super) fn will_run(
        &mut self,
        who: &Identity,
        request: SubmitRequest,
    ) -> Result<JobWillRun, ApiError> {
        const FAILED: &str = "allocation failure";
        self.admission(who).check(FAILED, &request, None)?;
        if !self.partitions_take_jobs(&request) {
            return Err(ApiError::bad(format!(
                "{FAILED}: Required partition not available (inactive or drain)"
            )));
        }
        let spec = self
            .job_spec(&who.user, &request, None)
            .map_err(|e| ApiError::bad(format!("{FAILED}: {e}")))?;
        let answer = self
            .engine
            .will_run(spec)
            .map_err(|e| ApiError::bad(format!("{FAILED}: {e}")))?;
        Ok(JobWillRun {
            job_id: self.store.image().next_id,
            start_time: answer.start,
            processors: answer.cpus,
            nodes: sluice_hostlist::compress(&answer.nodes),
            partition: answer.partition,
        })
    }
}
