//! WIT 0.6.0's selection adapter: a pass's changed nodes ride along with its first `place`.
//!
//! As from 0.3.0 the host models the guest's copy of the node table and sends only the nodes
//! whose free resources differ from it. What 0.6.0 changes is when they cross: `begin_pass`
//! works them out and owes them, packed into one list, and the pass's first `place` carries
//! them, so a pass that starts a job makes one call instead of two. A separate `begin-pass`
//! pays what is owed only when something must come first (a `release`, or the next pass).

use super::selection::{HeldTable, conversions};

conversions!(v0_6);

/// A selection component of WIT 0.6.0 and what its instance holds or is owed.
pub struct SelectionV0_6 {
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

impl SelectionV0_6 {
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

impl SelectionBackend for SelectionV0_6 {
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
