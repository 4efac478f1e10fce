//! The selection world over a component instance.
//!
//! The host models the guest's copy of the node table and sends the whole table only when a
//! static column changed (`set-nodes`), then per pass only the nodes whose free resources
//! differ from the copy. Those changes are owed, packed into one list, and ride along with the
//! pass's first `place`, so a pass that starts a job makes one call; a separate `begin-pass`
//! pays what is owed only when something must come first (a `release`, or the next pass).

use sluice_policy::{JobRequest, NodeTable, PlaceMode, Placement, Power};

use crate::backend::SelectionBackend;
use crate::error::Fault;
use crate::wasm::bindings::selection::{
    SelectionPolicy, SelectionPolicyPre, exports::sluice::policy::selection as w,
};
use crate::wasm::instance::{WasmInstance, impl_world};

impl_world!(SelectionPolicy, SelectionPolicyPre);

fn placement_param(p: &Placement) -> w::PlacementParam<'_> {
    w::PlacementParam {
        nodes: &p.nodes,
        cpus: &p.cpus,
        memory_mb: &p.memory_mb,
        gres: &p.gres,
        rows: &p.rows,
    }
}

fn power(p: Power) -> w::Power {
    match p {
        Power::Up => w::Power::Up,
        Power::PoweringUp => w::Power::PoweringUp,
        Power::PoweredDown => w::Power::PoweredDown,
    }
}

/// Lends the whole table to `f`.
fn with_table<R>(t: &NodeTable, f: impl FnOnce(w::NodeTable<'_>) -> R) -> R {
    let power: Vec<w::Power> = t.power.iter().map(|&p| power(p)).collect();
    let kinds: Vec<&str> = t.gres_kinds.iter().map(String::as_str).collect();
    f(w::NodeTable {
        cpus: &t.cpus,
        free_cpus: &t.free_cpus,
        memory_mb: &t.memory_mb,
        free_memory_mb: &t.free_memory_mb,
        weight: &t.weight,
        power: &power,
        gres_kinds: &kinds,
        gres_total: &t.gres_total,
        gres_free: &t.gres_free,
        share_rows: t.share_rows,
        row_free_cpus: &t.row_free_cpus,
    })
}

fn request(r: &JobRequest) -> w::JobRequest<'_> {
    w::JobRequest {
        job_id: r.job_id,
        min_nodes: r.min_nodes,
        max_nodes: r.max_nodes,
        tasks: r.tasks,
        cpus_per_task: r.cpus_per_task,
        tasks_per_node: r.tasks_per_node,
        memory_per_node_mb: r.memory_per_node_mb,
        gres_per_node: &r.gres_per_node,
        exclusive: r.exclusive,
        share_rows: r.share_rows,
        candidates: &r.candidates,
    }
}

fn mode(mode: PlaceMode) -> w::Mode {
    match mode {
        PlaceMode::Allocate => w::Mode::Allocate,
        PlaceMode::Test => w::Mode::Test,
    }
}

fn placement(p: w::PlacementResult) -> Placement {
    Placement {
        nodes: p.nodes,
        cpus: p.cpus,
        memory_mb: p.memory_mb,
        gres: p.gres,
        rows: p.rows,
    }
}

fn release(
    instance: &mut WasmInstance<SelectionPolicy>,
    job_id: u32,
    p: &Placement,
) -> Result<(), Fault> {
    instance.call(|b, s| {
        b.sluice_policy_selection()
            .call_release(s, job_id, placement_param(p))
    })
}

/// A selection component and what its instance holds or is owed.
pub struct SelectionComponent {
    instance: WasmInstance<SelectionPolicy>,
    /// `None` when the live instance holds no table for sure, or one out of step. Counts the
    /// owed changes as held: the instance that does not get them faults, and is replaced.
    held: Option<HeldTable>,
    /// The changed nodes of the pass being begun, kept so that a pass does not allocate them.
    changed: Vec<u32>,
    /// The changes as they cross (`node-changes`).
    packed: Vec<u64>,
    /// Whether `packed` holds changes the guest has not been given yet.
    owed: bool,
}

impl SelectionComponent {
    /// Wraps a freshly created instance, which holds no table yet.
    pub fn new(instance: WasmInstance<SelectionPolicy>) -> Self {
        Self {
            instance,
            held: None,
            changed: Vec::new(),
            packed: Vec::new(),
            owed: false,
        }
    }

    /// Sends the whole table, which the instance then holds (and owes nothing).
    fn set_nodes(&mut self, incarnation: u64, t: &NodeTable) -> Result<(), Fault> {
        self.owed = false;
        let instance = &mut self.instance;
        HeldTable::resend(&mut self.held, incarnation, t, || {
            with_table(t, |table| {
                instance.call(|b, s| b.sluice_policy_selection().call_set_nodes(s, table))
            })
        })
    }

    /// Gives the guest the changes it is owed, through `begin-pass`.
    fn pay_owed(&mut self) -> Result<(), Fault> {
        if !std::mem::take(&mut self.owed) {
            return Ok(());
        }
        let packed = &self.packed;
        self.instance
            .call(|b, s| b.sluice_policy_selection().call_begin_pass(s, packed))
    }
}

impl SelectionBackend for SelectionComponent {
    fn begin_pass(&mut self, t: &NodeTable) -> Result<(), Fault> {
        self.pay_owed()?;
        let incarnation = self.instance.live_incarnation()?;
        let Some(held) =
            HeldTable::take_for_changes(&mut self.held, incarnation, t, &mut self.changed)
        else {
            return self.set_nodes(incarnation, t);
        };
        if !self.changed.is_empty() {
            self.packed.clear();
            t.pack_changes(&self.changed, &mut self.packed);
            self.owed = true;
        }
        self.held = Some(held);
        Ok(())
    }

    fn place(&mut self, r: &JobRequest, m: PlaceMode) -> Result<Option<Placement>, Fault> {
        // Paid by this call whatever its outcome: a fault discards the instance that was owed.
        let changes = std::mem::take(&mut self.owed).then_some(&self.packed[..]);
        let (req, guest_mode) = (request(r), mode(m));
        let out = self.instance.call(|b, s| {
            b.sluice_policy_selection()
                .call_place(s, req, guest_mode, changes)
        })?;
        let out = out.map(placement);
        if let (Some(p), PlaceMode::Allocate) = (&out, m) {
            HeldTable::allocated(&mut self.held, p);
        }
        Ok(out)
    }

    fn release(&mut self, job_id: u32, p: &Placement) -> Result<(), Fault> {
        // The guest's copy must hold the changes before the placement is added back to it.
        self.pay_owed()?;
        release(&mut self.instance, job_id, p)?;
        HeldTable::released(&mut self.held, p);
        Ok(())
    }
}

/// The guest's copy of the node table as the host models it: the table last sent, less
/// what `place` allocated since, plus what `release` gave back.
struct HeldTable {
    /// Which instance holds it ([`super::instance::WasmInstance::live_incarnation`]).
    incarnation: u64,
    table: sluice_policy::NodeTable,
}

impl HeldTable {
    /// Takes the model of what instance `incarnation` holds out of `held`, with the nodes whose
    /// free resources differ from `t` written into `changed`, when the guest can be brought to
    /// `t` node by node. `None` when the whole table must cross instead: no model, another
    /// instance, a static column changed, or more than half the nodes differ (a change crosses
    /// field by field, the table as columns copied at once, so past half the table is cheaper;
    /// the model is then left in `held` for [`HeldTable::resend`] to reuse). The model taken
    /// is already brought to `t`, by the rule the guest applies the changes with; it is given
    /// back once the guest has them (or is owed them), so a fault leaves none behind.
    fn take_for_changes(
        held: &mut Option<HeldTable>,
        incarnation: u64,
        t: &sluice_policy::NodeTable,
        changed: &mut Vec<u32>,
    ) -> Option<HeldTable> {
        let mut model = held
            .take()
            .filter(|h| h.incarnation == incarnation && h.table.same_static_part(t))?;
        model.table.free_differing(t, changed);
        if changed.len() * 2 > t.len() {
            *held = Some(model);
            return None;
        }
        for &n in changed.iter() {
            model.table.copy_free_from(t, n as usize);
        }
        Some(model)
    }

    /// Records a placement the guest allocated in `held`'s model. The guest applied it by the
    /// same rule; one that does not fit leaves the two copies unknown to each other, so the
    /// model is dropped and the next pass sends the whole table.
    fn allocated(held: &mut Option<HeldTable>, p: &sluice_policy::Placement) {
        if !held.as_mut().is_some_and(|h| h.table.try_commit(p)) {
            *held = None;
        }
    }

    /// Records a placement the guest gave back in `held`'s model, if there is one.
    fn released(held: &mut Option<HeldTable>, p: &sluice_policy::Placement) {
        if let Some(h) = held {
            h.table.release(p);
        }
    }

    /// Makes `t` what instance `incarnation` holds once `send` has handed it the whole table.
    /// The model is forgotten first (if `send` faults, the instance is discarded with it); the
    /// old model's storage is reused for the new one.
    fn resend(
        held: &mut Option<HeldTable>,
        incarnation: u64,
        t: &sluice_policy::NodeTable,
        send: impl FnOnce() -> Result<(), crate::error::Fault>,
    ) -> Result<(), crate::error::Fault> {
        let mut table = held.take().map(|h| h.table).unwrap_or_default();
        send()?;
        table.clone_from(t);
        *held = Some(HeldTable { incarnation, table });
        Ok(())
    }
}
