//! A plugin called directly, with no fallback: faults are recorded and answered with empty
//! answers, so that the conformance cases fail on them. What `sluice plugin test` and the
//! bundle's own tests run the conformance suite against.

use std::cell::RefCell;
use std::rc::Rc;

use sluice_policy::conformance::declared::{self, Declared};
use sluice_policy::conformance::{self, CaseResult, protocol};
use sluice_policy::{
    Charge, Demand, GresNodeConfig, GresPolicy, HresLayer, HresPolicy, HresResource, JobRequest,
    JobTable, NodeDevices, NodeTable, PickRequest, PlaceMode, Placement, PluginKind, Priorities,
    PriorityContext, PriorityPolicy, SelectionPolicy, Settings, Share,
};

use crate::backend::{GresBackend, HresBackend, PriorityBackend, SelectionBackend};
use crate::error::{Fault, LoadError};
use crate::loader::{Loaded, Loader, PluginSpec};

/// Faults in call order, shared by every instance a run makes.
type Faults = Rc<RefCell<Vec<String>>>;

/// A backend with its faults recorded.
pub struct Probe<B: ?Sized> {
    faults: Faults,
    backend: Box<B>,
}

impl<B: ?Sized> Probe<B> {
    fn answer<R>(&mut self, outcome: Result<R, Fault>, empty: R) -> R {
        outcome.unwrap_or_else(|fault| {
            self.faults.borrow_mut().push(fault.to_string());
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

/// What a conformance run found: every case with its outcome, and every fault (or failed
/// load) met on the way, in order.
#[derive(Debug, Default)]
pub struct Report {
    /// The cases, contract cases first.
    pub cases: Vec<CaseResult>,
    /// Faults and failed loads, as text.
    pub faults: Vec<String>,
}

/// Runs the contract cases of the loaded plugin's kind on this one instance.
pub fn conformance(loaded: Loaded) -> Report {
    let faults = Faults::default();
    let cases = match loaded {
        Loaded::Priority(g) => conformance::priority(&mut probe(&faults, g.backend)),
        Loaded::Selection(g) => conformance::selection(&mut probe(&faults, g.backend)),
        Loaded::Gres(g) => conformance::gres(&mut probe(&faults, g.backend)),
        Loaded::Hres(g) => conformance::hres(&mut probe(&faults, g.backend)),
    };
    Report {
        cases,
        faults: faults.take(),
    }
}

/// Runs every case against the plugin `spec` names: the contract cases on one instance, the
/// protocol cases across fresh instances, and the policy's `declared` cases, each instance a
/// new load of `spec` with the case's settings on top of its own (as the host loads at a swap).
pub fn run(loader: &Loader, spec: &PluginSpec, declared: &[Declared]) -> Result<Report, LoadError> {
    let mut report = conformance(loader.load(spec)?);
    let faults = Faults::new(RefCell::new(std::mem::take(&mut report.faults)));
    // A case's settings go on top of the spec's own.
    let load = |settings: &Settings| {
        let layered = settings.0.iter().fold(spec.settings.clone(), |all, s| {
            all.with(&s.key, s.value.clone())
        });
        let spec = PluginSpec {
            settings: layered,
            ..spec.clone()
        };
        loader.load(&spec).map_err(|e| {
            faults
                .borrow_mut()
                .push(format!("loading with the case's settings failed: {e}"));
        })
    };
    match spec.kind {
        PluginKind::Priority => {
            let mut make = |settings: &Settings| -> Box<dyn PriorityPolicy> {
                match load(settings) {
                    Ok(Loaded::Priority(g)) => Box::new(probe(&faults, g.backend)),
                    _ => Box::new(Unloaded),
                }
            };
            report.cases.extend(protocol::priority(&mut make));
            report.cases.extend(declared::priority(&mut make, declared));
        }
        PluginKind::Selection => {
            let mut make = |settings: &Settings| -> Box<dyn SelectionPolicy> {
                match load(settings) {
                    Ok(Loaded::Selection(g)) => Box::new(probe(&faults, g.backend)),
                    _ => Box::new(Unloaded),
                }
            };
            report.cases.extend(protocol::selection(&mut make));
            report
                .cases
                .extend(declared::selection(&mut make, declared));
        }
        PluginKind::Gres | PluginKind::Hres if !declared.is_empty() => {
            report.cases.push(CaseResult {
                name: "declared cases".into(),
                outcome: Err(format!(
                    "declared cases are for priority and selection policies, not {}",
                    spec.kind.name()
                )),
            });
        }
        PluginKind::Gres | PluginKind::Hres => {}
    }
    report.faults = faults.take();
    Ok(report)
}

fn probe<B: ?Sized>(faults: &Faults, backend: Box<B>) -> Probe<B> {
    Probe {
        faults: faults.clone(),
        backend,
    }
}

/// What a case gets when the plugin would not load with its settings: empty answers, which
/// fail the case (the load error is among the faults).
struct Unloaded;

impl PriorityPolicy for Unloaded {
    fn compute(&mut self, _: &PriorityContext, _: &JobTable) -> Priorities {
        Priorities::default()
    }
}

impl SelectionPolicy for Unloaded {
    fn begin_pass(&mut self, _: &NodeTable) {}
    fn place(&mut self, _: &JobRequest, _: PlaceMode) -> Option<Placement> {
        None
    }
    fn release(&mut self, _: u32, _: &Placement) {}
}
