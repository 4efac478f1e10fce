//! Each factor's normalisation, against numbers worked out from Slurm's formulas.

use sluice_plugin_priority_multifactor::factors::{self, JobSize};
use sluice_sdk::{Partition, Qos};

const EPS: f64 = 1e-12;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < EPS
}

#[test]
fn age_grows_linearly_to_max_age_then_stops() {
    let now = 10_000;
    assert!(close(factors::age(now, now - 250, 1000), 0.25));
    assert!(close(factors::age(now, now - 999, 1000), 0.999));
    assert_eq!(factors::age(now, now - 1000, 1000), 1.0);
    assert_eq!(factors::age(now, now - 5000, 1000), 1.0);
}

#[test]
fn age_is_zero_before_accrual_and_for_future_eligibility() {
    assert_eq!(factors::age(10_000, 0, 1000), 0.0);
    assert_eq!(factors::age(10_000, 20_000, 1000), 0.0);
    // Slurm's `diff < max_age` test makes a zero PriorityMaxAge saturate immediately.
    assert_eq!(factors::age(10_000, 10_000, 0), 1.0);
}

fn size(favor_small: bool, relative_to_time: bool) -> JobSize {
    JobSize {
        cluster_nodes: 10.0,
        cluster_cpus: 100.0,
        favor_small,
        relative_to_time,
    }
}

#[test]
fn job_size_favouring_large_averages_node_and_cpu_fractions() {
    assert!(close(
        size(false, false).factor(2, 20, 0),
        (0.2 + 0.2) / 2.0
    ));
    assert!(close(
        size(false, false).factor(5, 10, 0),
        (0.5 + 0.1) / 2.0
    ));
    // Without a CPU count only the node fraction counts.
    assert!(close(size(false, false).factor(3, 0, 0), 0.3));
    assert_eq!(size(false, false).factor(20, 1000, 0), 1.0);
}

#[test]
fn job_size_favouring_small_uses_the_free_fractions() {
    assert!(close(size(true, false).factor(2, 20, 0), (0.8 + 0.8) / 2.0));
    assert!(close(size(true, false).factor(3, 0, 0), 0.7));
    assert_eq!(size(true, false).factor(10, 0, 0), 0.0);
    assert_eq!(size(true, false).factor(12, 0, 0), 0.0);
    assert_eq!(size(true, false).factor(12, 200, 0), 0.0);
}

#[test]
fn small_relative_to_time_is_cpus_per_minute_over_cluster_cpus() {
    // max(2 nodes × 10 CPUs/node, 30 CPUs) = 30, over 10 minutes = 3, over 100 CPUs = 0.03.
    assert!(close(size(false, true).factor(2, 30, 600), 0.03));
    // The node-based estimate wins when larger: max(40, 5) / 20 min / 100.
    assert!(close(
        size(false, true).factor(4, 5, 1200),
        40.0 / 20.0 / 100.0
    ));
    // Seconds round up to Slurm's whole minutes; no limit divides by 1.
    assert!(close(
        size(false, true).factor(1, 10, 61),
        10.0 / 2.0 / 100.0
    ));
    assert!(close(size(false, true).factor(1, 10, 0), 0.1));
    assert!(close(size(true, true).factor(2, 30, 600), 0.97));
}

#[test]
fn job_size_on_an_empty_cluster_is_zero() {
    let empty = JobSize {
        cluster_nodes: 0.0,
        cluster_cpus: 0.0,
        favor_small: false,
        relative_to_time: false,
    };
    assert_eq!(empty.factor(1, 1, 60), 0.0);
}

fn part(f: u32) -> Partition {
    Partition {
        name: format!("p{f}"),
        priority_job_factor: f,
        priority_tier: 1,
    }
}

fn qos(p: u32) -> Qos {
    Qos {
        name: format!("q{p}"),
        priority: p,
        usage_factor: 1.0,
    }
}

#[test]
fn partition_factor_is_a_fraction_of_the_largest() {
    // test24.6: half the maximum gives 0.5.
    assert_eq!(
        factors::partition_factors(&[part(10), part(5), part(0)], false),
        vec![1.0, 0.5, 0.0]
    );
    assert_eq!(
        factors::partition_factors(&[part(10), part(5)], true),
        vec![10.0, 5.0]
    );
    // The denominator is at least 1.
    assert_eq!(factors::partition_factors(&[part(0)], false), vec![0.0]);
}

#[test]
fn qos_factor_is_a_fraction_of_the_largest() {
    assert_eq!(
        factors::qos_factors(&[qos(1000), qos(500), qos(0)], false),
        vec![1.0, 0.5, 0.0]
    );
    assert_eq!(
        factors::qos_factors(&[qos(1000), qos(100)], true),
        vec![1000.0, 100.0]
    );
    assert_eq!(
        factors::qos_factors(&[qos(0), qos(0)], false),
        vec![0.0, 0.0]
    );
}

#[test]
fn tres_factor_is_the_share_of_the_total() {
    assert!(close(factors::tres(16.0, 64.0, false), 0.25));
    assert_eq!(factors::tres(16.0, 64.0, true), 16.0);
    assert_eq!(factors::tres(16.0, 0.0, false), 0.0);
    assert_eq!(factors::tres(0.0, 64.0, true), 0.0);
}
