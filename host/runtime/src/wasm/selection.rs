//! The selection world over a component instance, for every supported WIT version.
//!
//! The versions' records are the same shape in different generated modules, so the conversions
//! are written once and stamped out per version. WIT 0.1.0 and 0.2.0 send the whole node table
//! with every pass; 0.3.0 and later send it once per change and then only the nodes whose free
//! resources moved, which [`SelectionV0_3`], [`SelectionV0_4`] and [`SelectionV0_5`] work out
//! from their model of the guest's copy. WIT 0.6.0 sends those nodes with the pass's first
//! `place` ([`super::selection_v0_6`]).

/// Conversions every version shares: the node table, the request and the placement.
macro_rules! conversions {
    ($version:ident) => {
        use sluice_policy::{JobRequest, NodeTable, PlaceMode, Placement, Power};

        use crate::backend::SelectionBackend;
        use crate::error::Fault;
        use crate::wasm::bindings::$version::selection::{
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
            })
        }

        fn request(r: &JobRequest) -> w::JobRequest<'_> {
            w::JobRequest {
                job_id: r.job_id,
                min_nodes: r.min_nodes,
                max_nodes: r.max_nodes,
                tasks: r.tasks,
                cpus_per_task: r.cpus_per_task,
                memory_per_node_mb: r.memory_per_node_mb,
                gres_per_node: &r.gres_per_node,
                exclusive: r.exclusive,
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
    };
}

/// `place` of the versions before 0.6.0, whose `place` carries no node changes.
macro_rules! place_alone {
    () => {
        fn place(
            instance: &mut WasmInstance<SelectionPolicy>,
            r: &JobRequest,
            m: PlaceMode,
        ) -> Result<Option<Placement>, Fault> {
            let (req, m) = (request(r), mode(m));
            let out = instance.call(|b, s| b.sluice_policy_selection().call_place(s, req, m))?;
            Ok(out.map(placement))
        }
    };
}

/// The selection adapter of a version that sends the whole table with every pass.
macro_rules! whole_table_per_pass {
    ($version:ident) => {
        mod $version {
            conversions!($version);
            place_alone!();

            impl SelectionBackend for WasmInstance<SelectionPolicy> {
                fn begin_pass(&mut self, t: &NodeTable) -> Result<(), Fault> {
                    with_table(t, |table| {
                        self.call(|b, s| b.sluice_policy_selection().call_begin_pass(s, table))
                    })
                }

                fn place(
                    &mut self,
                    r: &JobRequest,
                    mode: PlaceMode,
                ) -> Result<Option<Placement>, Fault> {
                    place(self, r, mode)
                }

                fn release(&mut self, job_id: u32, p: &Placement) -> Result<(), Fault> {
                    release(self, job_id, p)
                }
            }
        }
    };
}

whole_table_per_pass!(v0_1);
whole_table_per_pass!(v0_2);

/// A selection adapter that keeps a model of the guest's copy of the node table (WIT 0.3.0 and
/// later, whose selection interfaces are the same shape): `$name` over the bindings of
/// `$version`. The whole table crosses once per change (`set-nodes`), then per pass only the
/// nodes whose free resources differ from the guest's copy (`begin-pass`), or no call when none
/// does.
macro_rules! table_kept {
    ($version:ident, $name:ident) => {
        conversions!($version);
        place_alone!();

        use super::HeldTable;

        /// A selection component of this WIT version and what its instance holds.
        pub struct $name {
            instance: WasmInstance<SelectionPolicy>,
            /// `None` when the live instance holds no table for sure, or one out of step.
            held: Option<HeldTable>,
            /// The changed nodes of the pass being begun, and what crosses for them; kept so that a
            /// pass does not allocate them afresh.
            changed: Vec<u32>,
            changes: Vec<w::NodeFree>,
            gres_free: Vec<u32>,
        }

        impl $name {
            /// Wraps a freshly created instance, which holds no table yet.
            pub fn new(instance: WasmInstance<SelectionPolicy>) -> Self {
                Self {
                    instance,
                    held: None,
                    changed: Vec::new(),
                    changes: Vec::new(),
                    gres_free: Vec::new(),
                }
            }

            /// Sends the whole table, which the instance then holds.
            fn set_nodes(&mut self, incarnation: u64, t: &NodeTable) -> Result<(), Fault> {
                let instance = &mut self.instance;
                HeldTable::resend(&mut self.held, incarnation, t, || {
                    with_table(t, |table| {
                        instance.call(|b, s| b.sluice_policy_selection().call_set_nodes(s, table))
                    })
                })
            }
        }

        impl SelectionBackend for $name {
            fn begin_pass(&mut self, t: &NodeTable) -> Result<(), Fault> {
                let incarnation = self.instance.live_incarnation()?;
                // Forgotten first: if a call faults, the instance is discarded with it.
                let Some(held) =
                    HeldTable::take_for_changes(&mut self.held, incarnation, t, &mut self.changed)
                else {
                    return self.set_nodes(incarnation, t);
                };
                if !self.changed.is_empty() {
                    let kinds = t.gres_kinds.len();
                    self.changes.clear();
                    self.gres_free.clear();
                    for &n in &self.changed {
                        let i = n as usize;
                        let row = &t.gres_free[i * kinds..(i + 1) * kinds];
                        self.changes.push(w::NodeFree {
                            node: n,
                            free_cpus: t.free_cpus[i],
                            free_memory_mb: t.free_memory_mb[i],
                            power: power(t.power[i]),
                        });
                        self.gres_free.extend_from_slice(row);
                    }
                    let (changes, gres_free) = (&self.changes, &self.gres_free);
                    self.instance.call(|b, s| {
                        b.sluice_policy_selection()
                            .call_begin_pass(s, changes, gres_free)
                    })?;
                }
                self.held = Some(held);
                Ok(())
            }

            fn place(
                &mut self,
                r: &JobRequest,
                mode: PlaceMode,
            ) -> Result<Option<Placement>, Fault> {
                let out = place(&mut self.instance, r, mode)?;
                if let (Some(p), PlaceMode::Allocate) = (&out, mode) {
                    HeldTable::allocated(&mut self.held, p);
                }
                Ok(out)
            }

            fn release(&mut self, job_id: u32, p: &Placement) -> Result<(), Fault> {
                release(&mut self.instance, job_id, p)?;
                HeldTable::released(&mut self.held, p);
                Ok(())
            }
        }
    };
}

/// The guest's copy of the node table as the host models it: the table last sent, less
/// what `place` allocated since, plus what `release` gave back.
pub(super) struct HeldTable {
    /// Which instance holds it ([`super::instance::WasmInstance::live_incarnation`]).
    pub(super) incarnation: u64,
    pub(super) table: sluice_policy::NodeTable,
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
    pub(super) fn take_for_changes(
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
    pub(super) fn allocated(held: &mut Option<HeldTable>, p: &sluice_policy::Placement) {
        if !held.as_mut().is_some_and(|h| h.table.try_commit(p)) {
            *held = None;
        }
    }

    /// Records a placement the guest gave back in `held`'s model, if there is one.
    pub(super) fn released(held: &mut Option<HeldTable>, p: &sluice_policy::Placement) {
        if let Some(h) = held {
            h.table.release(p);
        }
    }

    /// Makes `t` what instance `incarnation` holds once `send` has handed it the whole table.
    /// The model is forgotten first (if `send` faults, the instance is discarded with it); the
    /// old model's storage is reused for the new one.
    pub(super) fn resend(
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

/// WIT 0.3.0: the table kept by the guest.
mod v0_3 {
    table_kept!(v0_3, SelectionV0_3);
}

/// WIT 0.4.0: as 0.3.0 (only the priority interface changed).
mod v0_4 {
    table_kept!(v0_4, SelectionV0_4);
}

/// WIT 0.5.0: as 0.3.0 (only the priority interface changed).
mod v0_5 {
    table_kept!(v0_5, SelectionV0_5);
}

pub(super) use conversions;

pub use v0_3::SelectionV0_3;
pub use v0_4::SelectionV0_4;
pub use v0_5::SelectionV0_5;
