//! Owns no state: submission, which validates a job spec against the cluster and queues the job.
//!
//! It checks association, QOS, partitions and their limits, GRES, licenses, reservation and
//! dependencies; it adds the job to the engine's jobs and pending set, and a missing user
//! association to the cluster when the engine creates them.

use sluice_cluster::{AssocId, AssocKind, Association, PartitionId, QosId, Shares};

use crate::engine::Engine;
use crate::error::SubmitError;
use crate::gres::JobGres;
use crate::job::{CpuIds, Hold, Job, JobId, JobSpec, JobState, Reason};
use crate::licenses::{LicenseDemand, LicenseError};

impl Engine {
    /// Submits a job (sbatch). It is validated and queued; the next [`Engine::tick`] runs the
    /// event-triggered main loop over it unless `defer` is set.
    pub fn submit(&mut self, spec: JobSpec) -> Result<JobId, SubmitError> {
        let now = self.clock.now();
        let assoc = self.resolve_assoc(&spec)?;
        let mut job = self.admit(spec, assoc, now)?;
        job.priority = vec![0; job.partitions.len()];
        let id = job.id;
        let counted_qos = self.qos_order(job.qos, job.partitions[0]);
        self.limits
            .enter(id, &job.spec.user, counted_qos, self.assoc_path(assoc));
        self.next_id += 1;
        self.pending.insert(id, job.cpus(), job.spec.begin_time);
        let array = job.spec.array;
        self.jobs.insert(id, job);
        if let Some(task) = array {
            self.join_array(task, id);
        }
        self.refresh_job(id, now);
        self.pacing.requested = true;
        Ok(id)
    }

    /// Validates a spec against the cluster as submission does and makes the job it would
    /// queue (with the next id, not yet taken), changing nothing.
    pub(crate) fn admit(
        &self,
        mut spec: JobSpec,
        assoc: AssocId,
        now: i64,
    ) -> Result<Job, SubmitError> {
        let account = self.account_of(assoc);
        let qos = self.resolve_qos(&spec, assoc)?;
        let mut parts = self.resolve_partitions(&spec)?;
        self.keep_admitting_partitions(&spec, &account, qos, &mut parts)?;
        self.apply_partition_terms(&mut spec, &parts);

        let gres = self.resolve_gres(&spec)?;
        let (gres_per_node, gres_types) = gres_per_node_and_types(&gres);
        let demand = self.resolve_demand(&spec)?;
        let reservation = self.resolve_reservation(&spec, &account)?;
        for dep in &spec.dependencies {
            if !self.dependency_known(dep) {
                return Err(SubmitError::Dependency(dep.job));
            }
        }
        let time_limit = self.time_limit_in(&spec, parts[0]);
        self.keep_partitions_within_limits(&spec, time_limit, &mut parts)?;
        let time_limit = match spec.time_limit {
            Some(_) => time_limit,
            None => self.time_limit_within_wall((assoc, qos, parts[0]), time_limit),
        };
        let mut job = Job {
            id: self.next_id,
            assoc,
            partitions: parts,
            qos,
            time_limit,
            submit_time: now,
            eligible_time: None,
            state: JobState::Pending,
            reason: Reason::None,
            hold: spec.hold.then_some(Hold::User),
            priority: Vec::new(),
            priority_time: None,
            start_time: None,
            end_time: None,
            exit_code: None,
            alloc: None,
            steps: Vec::new(),
            reservation,
            demand,
            gres_per_node,
            gres_types,
            gres,
            cpu_ids: CpuIds::default(),
            final_state: None,
            restarts: 0,
            spec,
        };
        let fitting: Vec<PartitionId> = job
            .partitions
            .iter()
            .copied()
            .filter(|p| self.fit().fits_somewhere(&job, *p))
            .collect();
        job.partitions = fitting;
        if job.partitions.is_empty() {
            return Err(SubmitError::NodeConfig);
        }
        if let Some(task) = job.spec.array
            && self.array(task.array).is_none()
        {
            return Err(SubmitError::UnknownArray(task.array));
        }
        self.check_submit_limits(&job)?;
        Ok(job)
    }

    /// The licenses and HRES the job asks for, by index; HRES only where a policy decides them.
    #[inline]
    fn resolve_demand(&self, spec: &JobSpec) -> Result<LicenseDemand, SubmitError> {
        let demand = self.lic.resolve(&spec.licenses)?;
        if !demand.hres.is_empty() && self.policies.hres.is_none() {
            let name = &self.lic.hres_resources()[demand.hres[0].resource as usize].name;
            return Err(LicenseError::Unknown(name.clone()).into());
        }
        Ok(demand)
    }

    /// The advance reservation the job names, if it exists and admits the user or `account`.
    #[inline]
    fn resolve_reservation(
        &self,
        spec: &JobSpec,
        account: &str,
    ) -> Result<Option<usize>, SubmitError> {
        let Some(name) = &spec.reservation else {
            return Ok(None);
        };
        let r = self
            .resv
            .find(name)
            .ok_or_else(|| SubmitError::Reservation(name.clone()))?;
        if !self.resv.get(r).admits(&spec.user, account) {
            return Err(SubmitError::Reservation(name.clone()));
        }
        Ok(Some(r))
    }

    /// The job's time limit: as asked, else the first partition's default (or its maximum).
    #[inline]
    fn time_limit_in(&self, spec: &JobSpec, first: PartitionId) -> Option<u64> {
        let first = &self.cluster.partitions[first.index()];
        spec.time_limit
            .or(first.default_time.unwrap_or(first.max_time).seconds())
    }

    /// Keeps the partitions where the request fits their time and node count limits, in the
    /// order asked (EnforcePartLimits=ANY): the job is refused only if it fits none.
    #[inline]
    fn keep_partitions_within_limits(
        &self,
        spec: &JobSpec,
        time_limit: Option<u64>,
        parts: &mut Vec<PartitionId>,
    ) -> Result<(), SubmitError> {
        parts.retain(|p| {
            let part = &self.cluster.partitions[p.index()];
            match (part.max_time.seconds(), time_limit) {
                (None, _) => true,
                (Some(max), Some(limit)) => limit <= max,
                (Some(_), None) => false,
            }
        });
        if parts.is_empty() {
            return Err(SubmitError::TimeLimit);
        }
        parts.retain(|p| {
            let part = &self.cluster.partitions[p.index()];
            spec.min_nodes <= part.max_nodes.unwrap_or(u32::MAX)
                && spec.min_nodes as usize <= part.nodes.len()
        });
        if parts.is_empty() {
            return Err(SubmitError::NodeCount);
        }
        Ok(())
    }

    fn resolve_assoc(&mut self, spec: &JobSpec) -> Result<AssocId, SubmitError> {
        let parent = match self.find_assoc(spec)? {
            AssocFound::Existing(id) => return Ok(id),
            AssocFound::ToCreateUnder(parent) => parent,
        };
        let id = AssocId(self.cluster.associations.len() as u32);
        self.cluster.associations.push(Association {
            kind: AssocKind::User(spec.user.clone()),
            parent: Some(parent),
            children: Vec::new(),
            shares: Shares::Raw(1),
            raw_usage: 0.0,
            priority: 0,
            default_qos: None,
            limits: Default::default(),
        });
        self.cluster.associations[parent.index()].children.push(id);
        self.user_assocs.entry(spec.user.clone()).or_insert(id);
        self.usage.grow(parent);
        Ok(id)
    }

    /// The job's association if it exists, else the account one would be created under when
    /// the engine creates missing associations; refused otherwise.
    pub(crate) fn find_assoc(&self, spec: &JobSpec) -> Result<AssocFound, SubmitError> {
        let found = match &spec.account {
            Some(account) => self.cluster.user_assoc(&spec.user, account),
            None => self.user_assocs.get(&spec.user).copied(),
        };
        if let Some(id) = found {
            return Ok(AssocFound::Existing(id));
        }
        let account_known = spec
            .account
            .as_deref()
            .is_none_or(|a| self.cluster.account_id(a).is_some());
        let create = self.config.create_missing_associations
            || (self.config.create_missing_users && account_known);
        if !create || self.cluster.associations.is_empty() {
            return Err(SubmitError::UnknownAssociation {
                user: spec.user.clone(),
                account: spec.account.clone(),
            });
        }
        Ok(AssocFound::ToCreateUnder(
            spec.account
                .as_deref()
                .and_then(|a| self.cluster.account_id(a))
                .unwrap_or(AssocId::ROOT),
        ))
    }

    /// The account a user association sits under (the association's own name for an account).
    pub(crate) fn account_of(&self, assoc: AssocId) -> String {
        let a = &self.cluster.associations[assoc.index()];
        match (a.is_user(), a.parent) {
            (true, Some(p)) => self.cluster.associations[p.index()].name().to_string(),
            _ => a.name().to_string(),
        }
    }

    /// The job's QOS: the one it names, else its association's DefaultQOS (inherited), else
    /// `normal`; refused when it is outside the association's QOS list and QOS are enforced,
    /// as sbatch refuses it.
    fn resolve_qos(&self, spec: &JobSpec, assoc: AssocId) -> Result<QosId, SubmitError> {
        let qos = self.named_or_default_qos(spec, assoc)?;
        if !self.cluster.enforce.qos {
            return Ok(qos);
        }
        let allowed = self.assoc_path(assoc).into_iter().find_map(|a| {
            self.cluster
                .associations
                .get(a.index())?
                .limits
                .qos
                .as_ref()
        });
        match allowed {
            Some(list) if !list.contains(&qos) => Err(SubmitError::QosNotInAssociation {
                qos: self
                    .cluster
                    .qos
                    .get(qos.index())
                    .map_or_else(|| "normal".to_owned(), |q| q.name.clone()),
                account: self.account_of(assoc),
            }),
            _ => Ok(qos),
        }
    }

    fn named_or_default_qos(&self, spec: &JobSpec, assoc: AssocId) -> Result<QosId, SubmitError> {
        if let Some(name) = &spec.qos {
            if self.cluster.qos.is_empty() && name == "normal" {
                return Ok(QosId(0));
            }
            return self
                .cluster
                .qos_id(name)
                .ok_or_else(|| SubmitError::UnknownQos(name.clone()));
        }
        let mut cur = Some(assoc);
        while let Some(a) = cur {
            let assoc = &self.cluster.associations[a.index()];
            if let Some(q) = assoc.default_qos {
                return Ok(q);
            }
            cur = assoc.parent;
        }
        Ok(self.cluster.qos_id("normal").unwrap_or(QosId(0)))
    }

    fn resolve_partitions(&self, spec: &JobSpec) -> Result<Vec<PartitionId>, SubmitError> {
        if spec.partitions.is_empty() {
            return self
                .cluster
                .default_partition()
                .map(|p| vec![p])
                .ok_or_else(|| SubmitError::UnknownPartition("(default)".into()));
        }
        let mut out = Vec::new();
        for name in &spec.partitions {
            let id = self
                .cluster
                .partition_id(name)
                .ok_or_else(|| SubmitError::UnknownPartition(name.clone()))?;
            if !out.contains(&id) {
                out.push(id);
            }
        }
        Ok(out)
    }
}

/// Where a job's association is, as [`Engine::find_assoc`] finds it.
pub(crate) enum AssocFound {
    /// The association exists.
    Existing(AssocId),
    /// It does not, and submission would create it under this account.
    ToCreateUnder(AssocId),
}

/// (GRES kind, count) per node.
type GresPerNode = Vec<(u32, u32)>;

/// Per GRES kind, the count the job asks per node (records of one name differ in type, so
/// their counts add up), and the (name, type) pairs it names a type for.
#[inline]
fn gres_per_node_and_types(gres: &JobGres) -> (GresPerNode, Vec<(String, String)>) {
    let mut gres_per_node: GresPerNode = Vec::new();
    let mut gres_types = Vec::new();
    for r in &gres.records {
        if let Some(t) = &r.gres_type {
            gres_types.push((r.name.clone(), t.clone()));
        }
        add_gres(&mut gres_per_node, r.kind, r.per_node);
    }
    (gres_per_node, gres_types)
}

fn add_gres(list: &mut Vec<(u32, u32)>, kind: u32, count: u32) {
    // Records of one name differ in type, so their counts add up on the node.
    match list.iter_mut().find(|(k, _)| *k == kind) {
        Some(slot) => slot.1 += count,
        None => list.push((kind, count)),
    }
}
