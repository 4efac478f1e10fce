//! The engine's view of a plugin kind: the policy traits of `sluice-policy`, answered by a
//! [`Slot`] whose every answer is checked against the contract before the engine sees it.

use sluice_policy::gres::check_picks;
use sluice_policy::hres::check_charges;
use sluice_policy::{
    Charge, ContractError, Demand, GresNodeConfig, GresPolicy, HresLayer, HresPolicy, HresResource,
    JobRequest, JobTable, NodeBitmap, NodeDevices, NodeTable, PickRequest, PlaceMode, Placement,
    Priorities, PriorityContext, PriorityPolicy, SelectionPolicy, Share,
};

use crate::backend::{GresBackend, HresBackend, PriorityBackend, SelectionBackend};
use crate::error::Fault;
use crate::slot::Slot;

/// A contained priority plugin.
pub type PrioritySlot = Slot<dyn PriorityBackend>;
/// A contained selection plugin, with the host's copy of the pass's node table.
pub struct SelectionSlot {
    /// The generations.
    pub slot: Slot<dyn SelectionBackend>,
    table: NodeTable,
}
/// A contained GRES plugin.
pub type GresSlot = Slot<dyn GresBackend>;
/// A contained HRES plugin, with the pass's layers for checking charges.
pub struct HresSlot {
    /// The generations.
    pub slot: Slot<dyn HresBackend>,
    resources: Vec<HresResource>,
    layers: Vec<HresLayer>,
}

impl PriorityPolicy for PrioritySlot {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        self.next_pass();
        self.call(|b| {
            let p = b.compute(ctx, jobs)?;
            p.check(jobs.len())?;
            Ok(p)
        })
        // Every generation failed, the built-in too: equal priorities leave the host's own
        // order (submit time, job id), which is FIFO.
        .unwrap_or_else(|_| Priorities {
            priority: vec![0; jobs.len()],
            factors: Vec::new(),
        })
    }

    fn shares(&mut self, ctx: &PriorityContext) -> Vec<Share> {
        self.call(|b| {
            let shares = b.shares(ctx)?;
            if let Some(bad) = shares
                .iter()
                .find(|s| s.association as usize >= ctx.associations.len())
            {
                return Err(ContractError::Invalid(format!(
                    "share row for unknown association {}",
                    bad.association
                ))
                .into());
            }
            Ok(shares)
        })
        .unwrap_or_default()
    }
}

impl SelectionSlot {
    /// Wraps a slot.
    pub fn new(slot: Slot<dyn SelectionBackend>) -> Self {
        Self {
            slot,
            table: NodeTable::default(),
        }
    }

    /// Hands the pass so far to the next generation after a fault.
    fn fail_over(&mut self) {
        let table = &self.table;
        self.slot.fail_over(|b| b.begin_pass(table));
    }
}

impl SelectionPolicy for SelectionSlot {
    fn begin_pass(&mut self, nodes: &NodeTable) {
        self.slot.next_pass();
        // Refills the last pass's columns rather than allocating them again.
        self.table.clone_from(nodes);
        let table = &self.table;
        self.slot.begin(|b| b.begin_pass(table));
    }

    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Option<Placement> {
        while let Some(role) = self.slot.answering() {
            let outcome = self
                .slot
                .get_mut(role)
                .backend
                .place(req, mode)
                .and_then(|p| {
                    if let Some(p) = &p {
                        self.table.check_placement(req, p)?;
                    }
                    Ok::<_, Fault>(p)
                });
            self.slot.record(role, &outcome);
            match outcome {
                Ok(answer) => {
                    if let (Some(p), PlaceMode::Allocate) = (&answer, mode) {
                        self.table.commit(p);
                    }
                    return answer;
                }
                // The job is retried with the next generation, which first sees the pass so far.
                Err(_) => self.fail_over(),
            }
        }
        None
    }

    fn release(&mut self, job_id: u32, placement: &Placement) {
        self.table.release(placement);
        if let Some(role) = self.slot.answering() {
            let outcome = self.slot.get_mut(role).backend.release(job_id, placement);
            self.slot.record(role, &outcome);
            if outcome.is_err() {
                self.fail_over();
            }
        }
    }
}

impl GresPolicy for GresSlot {
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Vec<Result<(), String>> {
        self.call(|b| {
            let out = b.validate(nodes)?;
            if out.len() != nodes.len() {
                return Err(ContractError::Length {
                    what: "validate answers",
                    expected: nodes.len(),
                    found: out.len(),
                }
                .into());
            }
            Ok(out)
        })
        .unwrap_or_else(|f| {
            nodes
                .iter()
                .map(|_| Err(format!("gres plugin failed: {f}")))
                .collect()
        })
    }

    fn pick(&mut self, requests: &[PickRequest]) -> Vec<Vec<u32>> {
        self.next_pass();
        self.call(|b| {
            let picks = b.pick(requests)?;
            check_picks(requests, &picks)?;
            Ok(picks)
        })
        // Lowest free indices: always valid, never clever.
        .unwrap_or_else(|_| {
            requests
                .iter()
                .map(|r| r.free.iter().take(r.count as usize).copied().collect())
                .collect()
        })
    }

    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Vec<(String, String)> {
        self.call(|b| b.env(alloc, step)).unwrap_or_default()
    }
}

impl HresSlot {
    /// Wraps a slot.
    pub fn new(slot: Slot<dyn HresBackend>) -> Self {
        Self {
            slot,
            resources: Vec::new(),
            layers: Vec::new(),
        }
    }

    fn ask<R>(
        &mut self,
        mut f: impl FnMut(&mut dyn HresBackend, &[HresLayer]) -> Result<R, Fault>,
    ) -> Option<R> {
        while let Some(role) = self.slot.answering() {
            let layers = std::mem::take(&mut self.layers);
            let outcome = f(&mut *self.slot.get_mut(role).backend, &layers);
            self.layers = layers;
            self.slot.record(role, &outcome);
            match outcome {
                Ok(r) => return Some(r),
                Err(_) => {
                    let (resources, layers) = (&self.resources, &self.layers);
                    self.slot.fail_over(|b| b.begin_pass(resources, layers));
                }
            }
        }
        None
    }
}

impl HresPolicy for HresSlot {
    fn begin_pass(&mut self, resources: &[HresResource], layers: &[HresLayer]) {
        self.slot.next_pass();
        self.resources = resources.to_vec();
        self.layers = layers.to_vec();
        let (resources, layers) = (&self.resources, &self.layers);
        self.slot.begin(|b| b.begin_pass(resources, layers));
    }

    fn eligible(&mut self, demands: &[Demand], candidates: &[u64]) -> Vec<u64> {
        let allowed = NodeBitmap::from_words(candidates.to_vec());
        // No answer at all: no node is eligible, so the job waits rather than over-commits.
        self.ask(|b, _| {
            let out = b.eligible(demands, candidates)?;
            if !NodeBitmap::from_words(out.clone()).is_subset_of(&allowed) {
                return Err(ContractError::Invalid(
                    "eligible nodes that were not candidates".into(),
                )
                .into());
            }
            Ok(out)
        })
        .unwrap_or_default()
    }

    fn charge(&mut self, demands: &[Demand], nodes: &[u32]) -> Result<Vec<Charge>, String> {
        self.ask(|b, layers| {
            let out = b.charge(demands, nodes)?;
            if let Ok(charges) = &out {
                check_charges(layers, charges)?;
            }
            Ok(out)
        })
        .unwrap_or_else(|| Err("no hres plugin could answer".into()))
    }
}
