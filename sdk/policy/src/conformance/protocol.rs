//! Cases that call a kind's functions in the orders the host uses across instances: a cluster
//! that grows by appended associations (`add-associations` after `set-cluster`), and a fresh
//! instance (after a fault or at a swap) that is sent everything again. A policy that keeps
//! what it was sent where the next call does not find it — or answers from stale state —
//! gives different answers along the two paths, and fails.

use super::{CaseResult, case, ensure};
use crate::{PlaceMode, PriorityPolicy, SelectionPolicy, Settings, Share, fixtures};

/// Makes a fresh instance of the priority policy under test, as the host does at a load.
pub type MakePriority<'a> = dyn FnMut(&Settings) -> Box<dyn PriorityPolicy> + 'a;

/// Makes a fresh instance of the selection policy under test, as the host does at a load.
pub type MakeSelection<'a> = dyn FnMut(&Settings) -> Box<dyn SelectionPolicy> + 'a;

/// Runs the priority protocol cases with default settings.
pub fn priority(make: &mut MakePriority<'_>) -> Vec<CaseResult> {
    let now = 1_700_000_000;
    // Five accounts are four plus one appended: the host sends only the new associations.
    let small = fixtures::priority_context(now, 32, 4, 3);
    let big = fixtures::priority_context(now, 32, 5, 3);
    let small_jobs = fixtures::job_table(&small, 200, 3);
    let big_jobs = fixtures::job_table(&big, 300, 4);

    let mut long = make(&Settings::default());
    let _ = long.compute(&small, &small_jobs);
    let grown = long.compute(&big, &big_jobs);
    let mut fresh = make(&Settings::default());
    let whole = fresh.compute(&big, &big_jobs);
    let mut out = vec![case(
        "associations added later count as if sent whole",
        grown
            .check(big_jobs.len())
            .map_err(|e| e.to_string())
            .and_then(|()| {
                ensure(grown.priority == whole.priority, || {
                    format!(
                        "after new associations the instance answered differently from a fresh one \
                         sent the same cluster ({} of {} priorities differ)",
                        differing(&grown.priority, &whole.priority),
                        big_jobs.len()
                    )
                })
            }),
    )];
    let (a, b) = (long.shares(&big), fresh.shares(&big));
    let differ =
        a.len().abs_diff(b.len()) + a.iter().zip(&b).filter(|(x, y)| !same_share(x, y)).count();
    out.push(case(
        "shares after new associations match a fresh instance's",
        ensure(differ == 0, || {
            format!(
                "{differ} of {} share rows differ from a fresh instance's",
                b.len()
            )
        }),
    ));
    out
}

/// Runs the selection protocol cases with default settings.
pub fn selection(make: &mut MakeSelection<'_>) -> Vec<CaseResult> {
    let table = fixtures::node_table(64);
    let requests = fixtures::job_requests(64, 40, 9);
    let mut long = make(&Settings::default());
    long.begin_pass(&table);
    let mut host = table.clone();
    let mut fault = Ok(());
    for req in &requests[..30] {
        if let Some(p) = long.place(req, PlaceMode::Allocate) {
            if let Err(e) = host.check_placement(req, &p) {
                fault = Err(format!("job {}: {e}", req.job_id));
                break;
            }
            host.commit(&p);
        }
    }
    // A fresh instance is sent the table as the host now holds it; both must see the same nodes.
    let mut fresh = make(&Settings::default());
    fresh.begin_pass(&host);
    let mut agree = fault;
    for req in &requests[30..] {
        if agree.is_err() {
            break;
        }
        let (a, b) = (
            long.place(req, PlaceMode::Test),
            fresh.place(req, PlaceMode::Test),
        );
        agree = ensure(a == b, || {
            format!(
                "job {}: the instance that allocated placed it on {:?}, a fresh one sent the \
                 resulting table on {:?}",
                req.job_id,
                a.map(|p| p.nodes),
                b.map(|p| p.nodes)
            )
        });
    }
    vec![case(
        "a fresh instance sent the table as it now is places as the one that allocated",
        agree,
    )]
}

/// Share rows compared bit for bit, so that accounts' NaN fair-share factors compare equal.
fn same_share(a: &Share, b: &Share) -> bool {
    let bits =
        |s: &Share| [s.norm_shares, s.effective_usage, s.fair_share, s.level_fs].map(f64::to_bits);
    a.association == b.association && bits(a) == bits(b)
}

fn differing(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count() + a.len().abs_diff(b.len())
}
