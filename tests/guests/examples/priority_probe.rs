//! A priority component built with wit-bindgen straight against `wit/` that shows the host's
//! side of the `set-cluster` protocol: how often its instance was sent `set-cluster` and
//! `add-associations`, and what.
//!
//! It answers with the policy of `sluice_test_guests::usage_priority` over the cluster it was
//! last sent and the call's usage column, adds the factors `SET-CLUSTER`, `ADD-ASSOCIATIONS` and
//! `ASSOCIATIONS` (see `sluice_test_guests::priority_probe`) whether or not told to explain, and
//! traps when the job table holds job id `TRAP_JOB`. Called before any set-cluster, or with a
//! usage column of the wrong length, it answers no priorities, which breaks the contract.
//! Natively it is empty.

#[cfg(target_arch = "wasm32")]
mod component {
    use std::cell::RefCell;

    wit_bindgen::generate!({
        path: "../../wit",
        world: "priority-policy",
    });

    use exports::sluice::policy::priority::{Cluster, Factor, Guest, JobTable, Priorities, Share};

    use sluice_test_guests::priority_probe::{
        ADD_ASSOCIATIONS, ASSOCIATIONS, SET_CLUSTER, TRAP_JOB,
    };
    use sluice_test_guests::usage_priority;

    /// What this instance was told.
    struct Held {
        cluster: Option<Cluster>,
        set_cluster_calls: u32,
        add_associations_calls: u32,
    }

    thread_local! {
        static HELD: RefCell<Held> = const {
            RefCell::new(Held {
                cluster: None,
                set_cluster_calls: 0,
                add_associations_calls: 0,
            })
        };
    }

    struct Probe;

    impl Guest for Probe {
        fn set_cluster(cluster: Cluster) {
            HELD.with_borrow_mut(|h| {
                h.cluster = Some(cluster);
                h.set_cluster_calls += 1;
            });
        }

        fn add_associations(associations: Vec<exports::sluice::policy::priority::Association>) {
            HELD.with_borrow_mut(|h| {
                if let Some(cluster) = &mut h.cluster {
                    cluster.associations.extend(associations);
                }
                h.add_associations_calls += 1;
            });
        }

        fn compute(now: i64, usage: Vec<f64>, jobs: JobTable, _explain: bool) -> Priorities {
            let rows = jobs.rows as usize;
            let job_ids = &jobs.u32_columns[..rows];
            let associations = &jobs.u32_columns[rows..2 * rows];
            let submit_times = &jobs.s64_columns[..rows];
            if job_ids.contains(&TRAP_JOB) {
                core::arch::wasm32::unreachable();
            }
            HELD.with_borrow(|h| {
                let Some(cluster) = h
                    .cluster
                    .as_ref()
                    .filter(|c| c.associations.len() == usage.len())
                else {
                    return Priorities {
                        priority: Vec::new(),
                        factors: Vec::new(),
                    };
                };
                let n = job_ids.len();
                let usage_of = |a: u32| usage.get(a as usize).copied().unwrap_or(0.0);
                Priorities {
                    priority: submit_times
                        .iter()
                        .zip(associations)
                        .map(|(&t, &a)| usage_priority::priority(now, t, usage_of(a)))
                        .collect(),
                    factors: vec![
                        Factor {
                            name: SET_CLUSTER.into(),
                            values: vec![f64::from(h.set_cluster_calls); n],
                        },
                        Factor {
                            name: ADD_ASSOCIATIONS.into(),
                            values: vec![f64::from(h.add_associations_calls); n],
                        },
                        Factor {
                            name: ASSOCIATIONS.into(),
                            values: vec![cluster.associations.len() as f64; n],
                        },
                    ],
                }
            })
        }

        fn shares(_now: i64, usage: Vec<f64>) -> Vec<Share> {
            HELD.with_borrow(|h| {
                let Some(cluster) = &h.cluster else {
                    return Vec::new();
                };
                (0u32..)
                    .zip(cluster.associations.iter().zip(&usage))
                    .map(|(i, (a, &u))| {
                        let (norm_shares, effective_usage, fair_share, level_fs) =
                            usage_priority::share_echo(
                                a.raw_shares,
                                u,
                                &a.name,
                                a.is_user,
                                a.parent,
                            );
                        Share {
                            association: i,
                            norm_shares,
                            effective_usage,
                            fair_share,
                            level_fs,
                        }
                    })
                    .collect()
            })
        }
    }

    export!(Probe);
}
