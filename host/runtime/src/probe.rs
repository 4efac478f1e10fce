//! A plugin called directly, with no fallback: faults are recorded and answered with empty
//! answers, so that the conformance cases fail on them. What `sluice plugin test` and the
//! bundle's own tests run the conformance suite against.

use sluice_policy::conformance::{self, CaseResult};
use sluice_policy::{
    Charge, Demand, GresNodeConfig, GresPolicy, HresLayer, HresPolicy, HresResource, JobRequest,
    JobTable, NodeDevices, NodeTable, PickRequest, PlaceMode, Placement, Priorities,
    PriorityContext, PriorityPolicy, SelectionPolicy, Share,
};

use crate::backend::{GresBackend, HresBackend, PriorityBackend, SelectionBackend};
use crate::error::Fault;
use crate::loader::Loaded;

/// A backend with its faults recorded.
pub struct Probe<B: ?Sized> {
    /// Faults in call order.
    pub faults: Vec<Fault>,
    backend: Box<B>,
}

impl<B: ?Sized> Probe<B> {
    fn answer<R>(&mut self, outcome: Result<R, Fault>, empty: R) -> R {
        outcome.unwrap_or_else(|fault| {
            self.faults.push(fault);
            empty
        })
    }
}

impl PriorityPolicy for Probe<dyn PriorityBackend> {
    fn compute(&mut self, ctx: &PriorityContext, jobs: &JobTable) -> Priorities {
        let outcome = self.backend.compute(ctx, jobs);
        self.answer(outcome, Priorities::default())
    }
    fn shares(&mut self, ctx: &PriorityContext) -> Vec<Share> {
        let outcome = self.backend.shares(ctx);
        self.answer(outcome, Vec::new())
    }
}

impl SelectionPolicy for Probe<dyn SelectionBackend> {
    fn begin_pass(&mut self, nodes: &NodeTable) {
        let outcome = self.backend.begin_pass(nodes);
        self.answer(outcome, ())
    }
    fn place(&mut self, req: &JobRequest, mode: PlaceMode) -> Option<Placement> {
        let outcome = self.backend.place(req, mode);
        self.answer(outcome, None)
    }
    fn release(&mut self, job_id: u32, placement: &Placement) {
        let outcome = self.backend.release(job_id, placement);
        self.answer(outcome, ())
    }
}

impl GresPolicy for Probe<dyn GresBackend> {
    fn validate(&mut self, nodes: &[GresNodeConfig]) -> Vec<Result<(), String>> {
        let outcome = self.backend.validate(nodes);
        self.answer(outcome, Vec::new())
    }
    fn pick(&mut self, requests: &[PickRequest]) -> Vec<Vec<u32>> {
        let outcome = self.backend.pick(requests);
        self.answer(outcome, Vec::new())
    }
    fn env(&mut self, alloc: &NodeDevices, step: bool) -> Vec<(String, String)> {
        let outcome = self.backend.env(alloc, step);
        self.answer(outcome, Vec::new())
    }
}

impl HresPolicy for Probe<dyn HresBackend> {
    fn begin_pass(&mut self, resources: &[HresResource], layers: &[HresLayer]) {
        let outcome = self.backend.begin_pass(resources, layers);
        self.answer(outcome, ())
    }
    fn eligible(&mut self, demands: &[Demand], candidates: &[u64]) -> Vec<u64> {
        let outcome = self.backend.eligible(demands, candidates);
        self.answer(outcome, Vec::new())
    }
    fn charge(&mut self, demands: &[Demand], nodes: &[u32]) -> Result<Vec<Charge>, String> {
        let outcome = self.backend.charge(demands, nodes);
        self.answer(outcome, Err("the plugin faulted".into()))
    }
}

/// Runs the conformance cases of the loaded plugin's kind; returns the cases and the faults.
pub fn conformance(loaded: Loaded) -> (Vec<CaseResult>, Vec<Fault>) {
    match loaded {
        Loaded::Priority(g) => {
            let mut p = Probe {
                faults: Vec::new(),
                backend: g.backend,
            };
            (conformance::priority(&mut p), p.faults)
        }
        Loaded::Selection(g) => {
            let mut p = Probe {
                faults: Vec::new(),
                backend: g.backend,
            };
            (conformance::selection(&mut p), p.faults)
        }
        Loaded::Gres(g) => {
            let mut p = Probe {
                faults: Vec::new(),
                backend: g.backend,
            };
            (conformance::gres(&mut p), p.faults)
        }
        Loaded::Hres(g) => {
            let mut p = Probe {
                faults: Vec::new(),
                backend: g.backend,
            };
            (conformance::hres(&mut p), p.faults)
        }
    }
}
