//! The component side: WIT bindings, conversions to the plain Rust types, and export glue.
//!
//! Only compiled for `wasm32`. Each exported call moves the guest's owned lists into the
//! `sluice-policy` types without copying (the priority job table, which crosses as two
//! concatenated lists, is split into a table the guest keeps), then runs the policy instance
//! kept for this component.

use std::any::Any;
use std::cell::RefCell;

use sluice_policy as p;

/// Bindings of the `priority-policy` world (and of the shared `host` interface).
pub mod priority {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "priority-policy",
        pub_export_macro: true,
        export_macro_name: "export_priority_world",
        default_bindings_module: "sluice_sdk::wasm::priority",
        runtime_path: "sluice_sdk::__private::wit_bindgen::rt",
    });
}

/// Bindings of the `selection-policy` world.
pub mod selection {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "selection-policy",
        pub_export_macro: true,
        export_macro_name: "export_selection_world",
        default_bindings_module: "sluice_sdk::wasm::selection",
        runtime_path: "sluice_sdk::__private::wit_bindgen::rt",
        with: { "sluice:policy/host@0.9.0": crate::wasm::priority::sluice::policy::host },
    });
}

/// Bindings of the `gres-policy` world.
pub mod gres {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "gres-policy",
        pub_export_macro: true,
        export_macro_name: "export_gres_world",
        default_bindings_module: "sluice_sdk::wasm::gres",
        runtime_path: "sluice_sdk::__private::wit_bindgen::rt",
        with: { "sluice:policy/host@0.9.0": crate::wasm::priority::sluice::policy::host },
    });
}

/// Bindings of the `hres-policy` world.
pub mod hres {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "hres-policy",
        pub_export_macro: true,
        export_macro_name: "export_hres_world",
        default_bindings_module: "sluice_sdk::wasm::hres",
        runtime_path: "sluice_sdk::__private::wit_bindgen::rt",
        with: { "sluice:policy/host@0.9.0": crate::wasm::priority::sluice::policy::host },
    });
}

/// Bindings of the `match-policy` world.
pub mod matching {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "match-policy",
        pub_export_macro: true,
        export_macro_name: "export_match_world",
        default_bindings_module: "sluice_sdk::wasm::matching",
        runtime_path: "sluice_sdk::__private::wit_bindgen::rt",
        with: { "sluice:policy/host@0.9.0": crate::wasm::priority::sluice::policy::host },
    });
}

use priority::sluice::policy::host as h;

/// Reads the plugin's settings from the host.
pub fn settings() -> p::Settings {
    p::Settings(
        h::settings()
            .into_iter()
            .map(|s| p::Setting {
                key: s.key,
                value: match s.value {
                    h::SettingValue::Boolean(v) => p::SettingValue::Boolean(v),
                    h::SettingValue::Integer(v) => p::SettingValue::Integer(v),
                    h::SettingValue::Float(v) => p::SettingValue::Float(v),
                    h::SettingValue::Text(v) => p::SettingValue::Text(v),
                },
            })
            .collect(),
    )
}

thread_local! {
    // One policy instance per component instance; built from settings on the first call.
    static INSTANCE: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Runs `f` on this component's policy instance of type `T`, building it on first use.
pub fn with_instance<T: p::FromSettings + 'static, R>(f: impl FnOnce(&mut T) -> R) -> R {
    INSTANCE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let any = slot.get_or_insert_with(|| Box::new(T::from_settings(&settings())));
        f(any
            .downcast_mut::<T>()
            .expect("one policy type per component"))
    })
}

/// Conversions and glue for the priority world.
///
/// The guest keeps the context built at `set-cluster`; each `compute` and `shares` writes the
/// clock and the usage column into it in place, so a call allocates nothing for the context and
/// the policy still sees a whole [`p::PriorityContext`].
pub mod priority_glue {
    use super::*;
    use priority::exports::sluice::policy::priority as w;

    thread_local! {
        // The cluster of the last `set-cluster`, with the last call's clock and usage.
        static CONTEXT: RefCell<Option<p::PriorityContext>> = const { RefCell::new(None) };
        // How many times this instance's cluster changed (`set-cluster`, `add-associations`):
        // the kept context's cluster version.
        static CLUSTER_CHANGES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
        // The last `compute`'s job table, its columns' room reused by the next.
        static JOBS: RefCell<p::JobTable> = RefCell::new(p::JobTable::default());
    }

    /// `priority.set-cluster`: keeps the static part, with usage zero until a call brings it.
    /// The context is numbered with a cluster version of its own (the count of changes to the
    /// cluster), so a policy can tell a call about the same cluster without comparing it.
    pub fn set_cluster(c: w::Cluster) {
        let version = next_cluster_version();
        let ctx = p::PriorityContext {
            now: 0,
            cluster_version: version,
            cluster_nodes: c.cluster_nodes,
            cluster_cpus: c.cluster_cpus,
            partitions: c
                .partitions
                .into_iter()
                .map(|x| p::Partition {
                    name: x.name,
                    priority_job_factor: x.priority_job_factor,
                    priority_tier: x.priority_tier,
                })
                .collect(),
            qos: c
                .qos
                .into_iter()
                .map(|x| p::Qos {
                    name: x.name,
                    priority: x.priority,
                    usage_factor: x.usage_factor,
                })
                .collect(),
            associations: c.associations.into_iter().map(association).collect(),
            skip_factors: false,
        };
        CONTEXT.with(|cell| *cell.borrow_mut() = Some(ctx));
    }

    /// `priority.add-associations`: appends them to the kept cluster, under a new version.
    ///
    /// A call before any `set-cluster` means the host broke the contract; the guest traps.
    pub fn add_associations(new: Vec<w::Association>) {
        let version = next_cluster_version();
        CONTEXT.with_borrow_mut(|kept| {
            let ctx = kept
                .as_mut()
                .expect("the host calls set-cluster before add-associations");
            ctx.associations.extend(new.into_iter().map(association));
            ctx.cluster_version = version;
        });
    }

    fn next_cluster_version() -> u64 {
        let version = CLUSTER_CHANGES.get() + 1;
        CLUSTER_CHANGES.set(version);
        version
    }

    fn association(x: w::Association) -> p::Association {
        p::Association {
            name: x.name,
            parent: x.parent,
            is_user: x.is_user,
            raw_shares: x.raw_shares,
            priority: x.priority,
            raw_usage: 0.0,
        }
    }

    /// Runs `f` on the kept context with `now`, `usage` and whether the factors are wanted
    /// written into it.
    ///
    /// A call before any `set-cluster`, or with a usage column of another length, means the host
    /// broke the contract; the guest traps (through the panic) rather than answer about a
    /// cluster it does not have.
    fn with_context<R>(
        now: i64,
        usage: &[f64],
        explain: bool,
        f: impl FnOnce(&p::PriorityContext) -> R,
    ) -> R {
        CONTEXT.with(|cell| {
            let mut kept = cell.borrow_mut();
            let ctx = kept
                .as_mut()
                .expect("the host calls set-cluster before compute and shares");
            assert_eq!(
                usage.len(),
                ctx.associations.len(),
                "usage has one value per association of the last set-cluster"
            );
            ctx.now = now;
            ctx.skip_factors = !explain;
            for (a, &u) in ctx.associations.iter_mut().zip(usage) {
                a.raw_usage = u;
            }
            f(ctx)
        })
    }

    /// `priority.compute` for policy `T`.
    ///
    /// The job table is split into the one table this instance keeps, so a call allocates no
    /// columns once the queue has been this long. Lists of another length than `rows` columns
    /// need mean the host broke the contract; the guest traps, as for the usage column. Without
    /// `explain` the policy is told to skip its factors, and any it gives anyway stay here.
    pub fn compute<T: p::PriorityPolicy + p::FromSettings + 'static>(
        now: i64,
        usage: Vec<f64>,
        j: w::JobTable,
        explain: bool,
    ) -> w::Priorities {
        let out = JOBS.with(|cell| {
            let mut jobs = cell.borrow_mut();
            jobs.split_columns(j.rows, &j.u32_columns, &j.s64_columns)
                .expect("the host sends every job column `rows` long");
            with_context(now, &usage, explain, |c| {
                with_instance::<T, _>(|t| t.compute(c, &jobs))
            })
        });
        let factors = if explain { out.factors } else { Vec::new() };
        w::Priorities {
            priority: out.priority,
            factors: factors
                .into_iter()
                .map(|f| w::Factor {
                    name: f.name,
                    values: f.values,
                })
                .collect(),
        }
    }

    /// `priority.shares` for policy `T`.
    pub fn shares<T: p::PriorityPolicy + p::FromSettings + 'static>(
        now: i64,
        usage: Vec<f64>,
    ) -> Vec<w::Share> {
        with_context(now, &usage, true, |c| {
            with_instance::<T, _>(|t| t.shares(c))
        })
        .into_iter()
        .map(|s| w::Share {
            association: s.association,
            norm_shares: s.norm_shares,
            effective_usage: s.effective_usage,
            fair_share: s.fair_share,
            level_fs: s.level_fs,
        })
        .collect()
    }
}

/// Conversions and glue for the selection world.
pub mod selection_glue {
    use super::*;
    use selection::exports::sluice::policy::selection as w;

    fn placement_in(x: w::Placement) -> p::Placement {
        p::Placement {
            nodes: x.nodes,
            cpus: x.cpus,
            memory_mb: x.memory_mb,
            gres: x.gres,
            rows: x.rows,
        }
    }

    thread_local! {
        // The guest's copy of the node table: the last `set-nodes`, brought up to date by each
        // `begin-pass`, less what `place` allocated, plus what `release` gave back. The host
        // models the same copy to send only what differs from it.
        static TABLE: RefCell<p::NodeTable> = RefCell::new(p::NodeTable::default());
        // The nodes the last changes named, its room reused by the next (a pass's first place).
        static CHANGED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    }

    fn power(x: w::Power) -> p::Power {
        match x {
            w::Power::Up => p::Power::Up,
            w::Power::PoweringUp => p::Power::PoweringUp,
            w::Power::PoweredDown => p::Power::PoweredDown,
        }
    }

    /// `selection.set-nodes` for policy `T`: the whole table, which the policy sees as a pass.
    pub fn set_nodes<T: p::SelectionPolicy + p::FromSettings + 'static>(t: w::NodeTable) {
        let table = p::NodeTable {
            cpus: t.cpus,
            free_cpus: t.free_cpus,
            memory_mb: t.memory_mb,
            free_memory_mb: t.free_memory_mb,
            weight: t.weight,
            power: t.power.into_iter().map(power).collect(),
            gres_kinds: t.gres_kinds,
            gres_total: t.gres_total,
            gres_free: t.gres_free,
            share_rows: t.share_rows,
            row_free_cpus: t.row_free_cpus,
        };
        TABLE.with_borrow_mut(|kept| {
            *kept = table;
            with_instance::<T, _>(|s| s.begin_pass(kept));
        });
    }

    /// `selection.begin-pass` for policy `T`: the changed nodes written into the kept copy,
    /// which the policy then sees as a new pass told which nodes changed
    /// ([`p::SelectionPolicy::begin_pass_changed`]).
    ///
    /// A change naming a node the copy does not have, or cut short, means the host broke the
    /// contract; the guest traps (through the panic) rather than place jobs on a table it does
    /// not hold.
    pub fn begin_pass<T: p::SelectionPolicy + p::FromSettings + 'static>(changes: Vec<u64>) {
        TABLE.with_borrow_mut(|kept| {
            CHANGED.with_borrow_mut(|changed| {
                if let Err(why) = kept.apply_packed_changes(&changes, changed) {
                    panic!("the host sent node changes that do not fit the table: {why}");
                }
                with_instance::<T, _>(|s| s.begin_pass_changed(kept, changed));
            })
        });
    }

    /// `selection.place` for policy `T`, after the pass's changes if it carries them.
    pub fn place<T: p::SelectionPolicy + p::FromSettings + 'static>(
        r: w::JobRequest,
        m: w::Mode,
        changes: Option<Vec<u64>>,
    ) -> Option<w::Placement> {
        if let Some(changes) = changes {
            begin_pass::<T>(changes);
        }
        let req = p::JobRequest {
            job_id: r.job_id,
            min_nodes: r.min_nodes,
            max_nodes: r.max_nodes,
            tasks: r.tasks,
            cpus_per_task: r.cpus_per_task,
            tasks_per_node: r.tasks_per_node,
            memory_per_node_mb: r.memory_per_node_mb,
            gres_per_node: r.gres_per_node,
            exclusive: r.exclusive,
            share_rows: r.share_rows,
            candidates: r.candidates,
        };
        let mode = match m {
            w::Mode::Allocate => p::PlaceMode::Allocate,
            w::Mode::Test => p::PlaceMode::Test,
        };
        let placed = with_instance::<T, _>(|s| s.place(&req, mode));
        if let (Some(x), p::PlaceMode::Allocate) = (&placed, mode) {
            // By the rule the host applies to its model of this copy: a placement that does
            // not fit changes neither, and the host then sends the whole table again.
            TABLE.with_borrow_mut(|kept| kept.try_commit(x));
        }
        placed.map(|x| w::Placement {
            nodes: x.nodes,
            cpus: x.cpus,
            memory_mb: x.memory_mb,
            gres: x.gres,
            rows: x.rows,
        })
    }

    /// `selection.release` for policy `T`.
    pub fn release<T: p::SelectionPolicy + p::FromSettings + 'static>(job: u32, x: w::Placement) {
        let placement = placement_in(x);
        with_instance::<T, _>(|s| s.release(job, &placement));
        TABLE.with_borrow_mut(|kept| kept.release(&placement));
    }
}

/// Conversions and glue for the gres world.
pub mod gres_glue {
    use super::*;
    use gres::exports::sluice::policy::gres as w;

    fn device(d: w::Device) -> p::Device {
        p::Device {
            index: d.index,
            type_name: d.type_name,
            file: d.file,
            cores: d.cores,
            links: d.links,
        }
    }

    /// `gres.validate` for policy `T`.
    pub fn validate<T: p::GresPolicy + p::FromSettings + 'static>(
        nodes: Vec<w::NodeConfig>,
    ) -> Vec<Result<(), String>> {
        let nodes: Vec<p::GresNodeConfig> = nodes
            .into_iter()
            .map(|n| p::GresNodeConfig {
                node: n.node,
                count: n.count,
                cores: n.cores,
                devices: n.devices.into_iter().map(device).collect(),
            })
            .collect();
        with_instance::<T, _>(|g| g.validate(&nodes))
    }

    /// `gres.pick` for policy `T`.
    pub fn pick<T: p::GresPolicy + p::FromSettings + 'static>(
        reqs: Vec<w::PickRequest>,
    ) -> Vec<Vec<u32>> {
        let reqs: Vec<p::PickRequest> = reqs
            .into_iter()
            .map(|r| p::PickRequest {
                node_position: r.node_position,
                count: r.count,
                type_name: r.type_name,
                free: r.free,
                cores: r.cores,
                devices: r.devices.into_iter().map(device).collect(),
            })
            .collect();
        with_instance::<T, _>(|g| g.pick(&reqs))
    }

    /// `gres.env` for policy `T`.
    pub fn env<T: p::GresPolicy + p::FromSettings + 'static>(
        a: w::NodeDevices,
        step: bool,
    ) -> Vec<(String, String)> {
        let alloc = p::NodeDevices {
            node_position: a.node_position,
            devices: a.devices,
            configured: a.configured.into_iter().map(device).collect(),
        };
        with_instance::<T, _>(|g| g.env(&alloc, step))
    }
}

/// Conversions and glue for the hres world.
pub mod hres_glue {
    use super::*;
    use hres::exports::sluice::policy::hres as w;

    fn demands(d: Vec<w::Demand>) -> Vec<p::Demand> {
        d.into_iter()
            .map(|d| p::Demand {
                resource: d.resource,
                count: d.count,
            })
            .collect()
    }

    /// `hres.begin-pass` for policy `T`.
    pub fn begin_pass<T: p::HresPolicy + p::FromSettings + 'static>(
        rs: Vec<w::Resource>,
        ls: Vec<w::Layer>,
    ) {
        let resources: Vec<p::HresResource> = rs
            .into_iter()
            .map(|r| p::HresResource {
                name: r.name,
                mode: match r.mode {
                    w::Mode::Mode1 => p::HresMode::Mode1,
                    w::Mode::Mode2 => p::HresMode::Mode2,
                    w::Mode::Mode3 => p::HresMode::Mode3,
                },
                variables: r.variables,
            })
            .collect();
        let layers: Vec<p::HresLayer> = ls
            .into_iter()
            .map(|l| p::HresLayer {
                resource: l.resource,
                count: l.count,
                base: l.base,
                used: l.used,
                nodes: l.nodes,
                parent: l.parent,
            })
            .collect();
        with_instance::<T, _>(|h| h.begin_pass(&resources, &layers));
    }

    /// `hres.eligible` for policy `T`.
    pub fn eligible<T: p::HresPolicy + p::FromSettings + 'static>(
        d: Vec<w::Demand>,
        candidates: Vec<u64>,
    ) -> Vec<u64> {
        let d = demands(d);
        with_instance::<T, _>(|h| h.eligible(&d, &candidates))
    }

    /// `hres.charge` for policy `T`.
    pub fn charge<T: p::HresPolicy + p::FromSettings + 'static>(
        d: Vec<w::Demand>,
        nodes: Vec<u32>,
    ) -> Result<Vec<w::LayerCharge>, String> {
        let d = demands(d);
        with_instance::<T, _>(|h| h.charge(&d, &nodes)).map(|cs| {
            cs.into_iter()
                .map(|c| w::LayerCharge {
                    layer: c.layer,
                    amount: c.amount,
                })
                .collect()
        })
    }
}

/// Conversions and glue for the match world.
pub mod matching_glue {
    use super::*;
    use matching::exports::sluice::policy::vertex_scoring as w;

    /// `vertex-scoring.describe` for policy `T`.
    pub fn describe<T: p::VertexScoring + p::FromSettings + 'static>() -> Result<w::Traits, String>
    {
        let t = with_instance::<T, _>(|m| m.describe())?;
        Ok(w::Traits {
            prefers_higher: t.prefers_higher,
            slot_prefers_higher: t.slot_prefers_higher,
            ranks_root_by_runs: t.ranks_root_by_runs,
            stop_on_first_match: t.stop_on_first_match,
            exclusive_types: t.exclusive_types,
            reads_properties: t.reads_properties,
        })
    }

    /// `vertex-scoring.score` for policy `T`: the columns move into a [`p::VertexTable`]
    /// without copying.
    pub fn score<T: p::VertexScoring + p::FromSettings + 'static>(
        v: w::VertexTable,
    ) -> Result<w::Scores, String> {
        let table = p::VertexTable {
            types: v.types,
            kinds: v.kinds,
            ids: v.ids,
            properties: v
                .properties
                .into_iter()
                .map(|x| p::VertexProperty {
                    vertex: x.vertex,
                    key: x.key,
                    value: x.value,
                })
                .collect(),
        };
        let s = with_instance::<T, _>(|m| m.score(&table))?;
        Ok(w::Scores {
            own: s.own,
            factor: s.factor,
        })
    }
}
