//! One trait per plugin kind for "something that answers or faults": a component instance, a
//! native library, or a built-in policy. Containment (`slot`) is written once against these.

use sluice_policy::native::{NativeGres, NativeHres, NativePriority, NativeSelection};
use sluice_policy::{
    Charge, Demand, GresNodeConfig, HresLayer, HresResource, JobRequest, JobTable, NodeDevices,
    NodeTable, PickRequest, PlaceMode, Placement, Priorities, PriorityContext, Share,
};

use crate::error::Fault;

/// A priority plugin that may fault.
pub trait PriorityBackend: Send {
    /// See `priority.compute`.
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Result<Priorities, Fault>;
    /// See `priority.shares`.
    fn shares(&mut self, ctx: &PriorityContext) -> Result<Vec<Share>, Fault>;
}

/// A selection plugin that may fault.
pub trait SelectionBackend: Send {
    /// See `selection.begin-pass`.
    fn begin_pass(&mut self, nodes: &NodeTable) -> Result<(), Fault>;
    /// See `selection.place`.
    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Result<Option<Placement>, Fault>;
    /// See `selection.release`.
    fn release(&mut self, job_id: u32, placement: &Placement) -> Result<(), Fault>;
}

/// A GRES plugin that may fault.
pub trait GresBackend: Send {
    /// See `gres.validate`.
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Result<Vec<Result<(), String>>, Fault>;
    /// See `gres.pick`.
    fn pick(&mut self, requests: &[PickRequest]) -> Result<Vec<Vec<u32>>, Fault>;
    /// See `gres.env`.
    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Result<Vec<(String, String)>, Fault>;
}

/// An HRES plugin that may fault.
pub trait HresBackend: Send {
    /// See `hres.begin-pass`.
    fn begin_pass(&mut self, resources: &[HresResource], layers: &[HresLayer])
    -> Result<(), Fault>;
    /// See `hres.eligible`.
    fn eligible(&mut self, demands: &[Demand], candidates: &[u64]) -> Result<Vec<u64>, Fault>;
    /// See `hres.charge`.
    fn charge(
        &mut self,
        demands: &[Demand],
        nodes: &[u32],
    ) -> Result<Result<Vec<Charge>, String>, Fault>;
}

// Native libraries and built-in policies both arrive as panic-guarded objects; a caught panic
// is their only fault.

impl PriorityBackend for Box<dyn NativePriority> {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Result<Priorities, Fault> {
        (**self).compute(ctx, jobs).map_err(Fault::Panic)
    }
    fn shares(&mut self, ctx: &PriorityContext) -> Result<Vec<Share>, Fault> {
        (**self).shares(ctx).map_err(Fault::Panic)
    }
}

impl SelectionBackend for Box<dyn NativeSelection> {
    fn begin_pass(&mut self, nodes: &NodeTable) -> Result<(), Fault> {
        (**self).begin_pass(nodes).map_err(Fault::Panic)
    }
    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Result<Option<Placement>, Fault> {
        (**self).place(req, mode).map_err(Fault::Panic)
    }
    fn release(&mut self, job_id: u32, placement: &Placement) -> Result<(), Fault> {
        (**self).release(job_id, placement).map_err(Fault::Panic)
    }
}

impl GresBackend for Box<dyn NativeGres> {
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Result<Vec<Result<(), String>>, Fault> {
        (**self).validate(nodes).map_err(Fault::Panic)
    }
    fn pick(&mut self, requests: &[PickRequest]) -> Result<Vec<Vec<u32>>, Fault> {
        (**self).pick(requests).map_err(Fault::Panic)
    }
    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Result<Vec<(String, String)>, Fault> {
        (**self).env(alloc, step).map_err(Fault::Panic)
    }
}

impl HresBackend for Box<dyn NativeHres> {
    fn begin_pass(
        &mut self,
        resources: &[HresResource],
        layers: &[HresLayer],
    ) -> Result<(), Fault> {
        (**self).begin_pass(resources, layers).map_err(Fault::Panic)
    }
    fn eligible(&mut self, demands: &[Demand], candidates: &[u64]) -> Result<Vec<u64>, Fault> {
        (**self).eligible(demands, candidates).map_err(Fault::Panic)
    }
    fn charge(
        &mut self,
        demands: &[Demand],
        nodes: &[u32],
    ) -> Result<Result<Vec<Charge>, String>, Fault> {
        (**self).charge(demands, nodes).map_err(Fault::Panic)
    }
}
