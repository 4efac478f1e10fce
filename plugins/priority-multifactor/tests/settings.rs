//! Settings: Slurm's defaults when absent, and a warning for everything ignored.

use sluice_plugin_priority_multifactor::settings::{Config, DEFAULT_MAX_AGE, Flags, parse_flags};
use sluice_sdk::{SettingValue, Settings};

fn parse(pairs: &[(&str, SettingValue)]) -> (Config, Vec<String>) {
    Config::parse(
        &pairs
            .iter()
            .fold(Settings::default(), |s, (k, v)| s.with(k, v.clone())),
    )
}

#[test]
fn absent_keys_take_slurms_defaults() {
    let (c, warnings) = parse(&[]);
    assert_eq!(c, Config::default());
    assert!(warnings.is_empty());
    assert_eq!(c.max_age, 604_800);
    assert_eq!(DEFAULT_MAX_AGE, 7 * 24 * 3600);
    assert!(!c.favor_small);
    assert_eq!(
        c.weights.age
            + c.weights.fairshare
            + c.weights.jobsize
            + c.weights.partition
            + c.weights.qos,
        0.0
    );
    assert!(!c.weights.tres.any());
}

#[test]
fn keys_are_read_with_integers_widening() {
    let (c, warnings) = parse(&[
        ("weight.age", SettingValue::Integer(10_000)),
        ("weight.fairshare", SettingValue::Float(100_000.0)),
        ("weight.tres.mem", SettingValue::Float(-0.5)),
        ("cluster_tres.mem", SettingValue::Integer(1_024_000)),
        ("max_age", SettingValue::Integer(432_000)),
        ("favor_small", SettingValue::Boolean(true)),
    ]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        (c.weights.age, c.weights.fairshare, c.weights.tres.mem),
        (10_000.0, 100_000.0, -0.5)
    );
    assert_eq!(c.max_age, 432_000);
    assert!(c.favor_small);
}

#[test]
fn unknown_keys_wrong_types_and_negative_weights_warn() {
    let (c, warnings) = parse(&[
        ("weight.agee", SettingValue::Integer(1)),
        ("weight.qos", SettingValue::Text("10".into())),
        ("weight.jobsize", SettingValue::Integer(-5)),
        ("favor_small", SettingValue::Integer(1)),
    ]);
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    assert!(warnings[0].contains("weight.agee"));
    assert_eq!(c.weights.qos, 0.0);
    assert_eq!(c.weights.jobsize, 0.0);
    assert!(!c.favor_small);
}

#[test]
fn flags_that_change_the_math_are_parsed() {
    let mut w = Vec::new();
    let f = parse_flags(
        "SMALL_RELATIVE_TO_TIME,accrue_always , NO_NORMAL_ALL",
        &mut w,
    );
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(
        f,
        Flags {
            small_relative_to_time: true,
            accrue_always: true,
            no_normal_assoc: true,
            no_normal_part: true,
            no_normal_qos: true,
            no_normal_tres: true,
        }
    );
}

#[test]
fn unknown_and_unsupported_flags_warn_and_change_nothing() {
    let mut w = Vec::new();
    let f = parse_flags(
        "INCR_ONLY,NO_FAIR_TREE,BOGUS,MAX_TRES,CALCULATE_RUNNING,FAIR_TREE",
        &mut w,
    );
    assert_eq!(f, Flags::default());
    assert_eq!(w.len(), 5, "{w:?}");
    assert!(w.iter().any(|m| m.contains("BOGUS")));
}

#[test]
fn tres_weights_without_totals_warn() {
    let (_, warnings) = parse(&[("weight.tres.gres/gpu", SettingValue::Integer(100))]);
    assert_eq!(warnings.len(), 1);
    let (_, warnings) = parse(&[
        ("weight.tres.gres/gpu", SettingValue::Integer(100)),
        ("cluster_tres.gres/gpu", SettingValue::Integer(64)),
    ]);
    assert!(warnings.is_empty());
}
