//! Slurm's `PrivateData` (daemon.toml's `private_data`) applied to every view a user who is not
//! an admin reads: jobs (squeue, `show job`, sprio, sacct), usage (sshare), reservations, nodes
//! and partitions, each word matched in any case as slurm.conf's are.

use sluice_api::{Job, NodeRow, PartitionRow, PriorityRow, Reservation, ShareRow};
use sluice_client::identity::Identity;

use super::Driver;
use crate::api::ApiError;

impl Driver {
    /// Whether `private_data` holds `word` (any case, as Slurm reads `PrivateData=Jobs`).
    pub(super) fn private(&self, word: &str) -> bool {
        self.cfg
            .private_data
            .iter()
            .any(|w| w.eq_ignore_ascii_case(word))
    }

    /// Whether `who` is kept from other users' `word` data: it is private and they are no admin.
    fn hidden_from(&self, who: &Identity, word: &str) -> bool {
        self.private(word) && !self.is_admin(who)
    }

    /// Jobs `who` may see of `jobs`: their own only, under `PrivateData=jobs`.
    pub(super) fn visible_jobs(&self, who: &Identity, mut jobs: Vec<Job>) -> Vec<Job> {
        if self.hidden_from(who, "jobs") {
            jobs.retain(|j| j.uid == who.uid);
        }
        jobs
    }

    /// Job `job` as `who` may see it: another user's job under `PrivateData=jobs` is answered as
    /// an unknown one, as slurmctld does, so its existence is not disclosed either.
    pub(super) fn visible_job(&self, who: &Identity, job: Job) -> Result<Job, ApiError> {
        if self.hidden_from(who, "jobs") && job.uid != who.uid {
            return Err(ApiError::not_found(format!(
                "invalid job id specified: {}",
                job.job_id
            )));
        }
        Ok(job)
    }

    /// sprio's rows `who` may see: their own jobs' only, under `PrivateData=jobs`.
    pub(super) fn visible_priorities(
        &self,
        who: &Identity,
        mut rows: Vec<PriorityRow>,
    ) -> Vec<PriorityRow> {
        if self.hidden_from(who, "jobs") {
            rows.retain(|r| r.user == who.user);
        }
        rows
    }

    /// sshare's rows `who` may see under `PrivateData=usage`: the accounts (the tree's shape)
    /// and their own user associations, never another user's usage.
    pub(super) fn visible_shares(&self, who: &Identity, mut rows: Vec<ShareRow>) -> Vec<ShareRow> {
        if self.hidden_from(who, "usage") {
            rows.retain(|r| r.user.as_ref().is_none_or(|u| *u == who.user));
        }
        rows
    }

    /// Reservations `who` may see under `PrivateData=reservations`: those that name them.
    pub(super) fn visible_reservations(
        &self,
        who: &Identity,
        mut list: Vec<Reservation>,
    ) -> Vec<Reservation> {
        if self.hidden_from(who, "reservations") {
            list.retain(|r| r.users.contains(&who.user));
        }
        list
    }

    /// Nodes `who` may see: none under `PrivateData=nodes`, as sinfo shows a user nothing then.
    pub(super) fn visible_nodes(&self, who: &Identity, rows: Vec<NodeRow>) -> Vec<NodeRow> {
        if self.hidden_from(who, "nodes") {
            return Vec::new();
        }
        rows
    }

    /// Refuses `show node` to `who` under `PrivateData=nodes`.
    pub(super) fn check_node_view(&self, who: &Identity, name: &str) -> Result<(), ApiError> {
        if self.hidden_from(who, "nodes") {
            return Err(ApiError::forbidden(format!(
                "show node {name}: access denied: node information is private (PrivateData=nodes)"
            )));
        }
        Ok(())
    }

    /// Partitions `who` may see: none under `PrivateData=partitions`.
    pub(super) fn visible_partitions(
        &self,
        who: &Identity,
        rows: Vec<PartitionRow>,
    ) -> Vec<PartitionRow> {
        if self.hidden_from(who, "partitions") {
            return Vec::new();
        }
        rows
    }
}
