//! RFC 14 jobspec rules (reference §3): YAML text → parsed request, or → the refusal text.

use std::path::Path;

use sluice_graph::{Count, CountOperator, Interner, Jobspec, JobspecError};

fn types() -> Interner {
    let mut t = Interner::with_builtin_types();
    t.intern("memory");
    t
}

fn parse(text: &str) -> Result<Jobspec, JobspecError> {
    Jobspec::parse(text, Path::new("job.yaml"), &types())
}

fn with_resources(version: u32, resources: &str) -> String {
    format!(
        "version: {version}\nresources:\n{resources}attributes:\n  system:\n    duration: 3600\ntasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n"
    )
}

const NODE_SLOT_CORE: &str = "  - type: node\n    count: 1\n    with:\n      - type: slot\n        count: 2\n        label: default\n        with:\n          - type: core\n            count: 4\n";

#[test]
fn nested_resources_slots_and_duration_are_read() {
    let js = parse(&with_resources(9999, NODE_SLOT_CORE)).unwrap();
    assert_eq!(js.version.0, 9999);
    assert_eq!(js.duration(), Some(3600.0));
    let node = &js.resources[0];
    assert_eq!((node.kind.as_str(), node.count), ("node", Count::fixed(1)));
    let slot = &node.with[0];
    assert_eq!(slot.kind, "slot");
    assert_eq!(slot.label.as_deref(), Some("default"));
    assert_eq!(slot.count.min, 2);
    assert_eq!(slot.with[0].kind, "core");
    assert_eq!(slot.with[0].count, Count::fixed(4));
    assert_eq!(js.tasks[0].slot, "default");
    assert_eq!(js.tasks[0].count.as_ref().unwrap()["per_slot"], 1);
}

#[test]
fn version_one_is_accepted_and_zero_or_ten_thousand_refused() {
    assert_eq!(
        parse(&with_resources(1, NODE_SLOT_CORE)).unwrap().version.0,
        1
    );
    for bad in [0, 10000] {
        let err = parse(&with_resources(bad, NODE_SLOT_CORE)).unwrap_err();
        assert!(
            err.to_string()
                .contains("version must be an integer from 1 to 9999"),
            "{err}"
        );
        assert!(
            matches!(err, JobspecError::Invalid { line: 1, .. }),
            "{err:?}"
        );
    }
}

#[test]
fn unknown_type_is_refused_with_fluxion_text_at_its_line() {
    let resources =
        "  - type: node\n    count: 1\n    with:\n      - type: quantum\n        count: 1\n";
    let err = parse(&with_resources(9999, resources)).unwrap_err();
    let JobspecError::Invalid { line, message, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*line, 6);
    assert!(
        message.contains("must be a resource type known to fluxion"),
        "{message}"
    );
    assert!(err.to_string().starts_with("job.yaml:6:"), "{err}");
}

#[test]
fn graph_types_are_known_besides_the_builtins() {
    let resources = "  - type: memory\n    count: 32\n    unit: GB\n    exclusive: true\n";
    let js = parse(&with_resources(9999, resources)).unwrap();
    assert_eq!(js.resources[0].unit.as_deref(), Some("GB"));
    assert_eq!(js.resources[0].exclusive, Some(true));
    let err = Jobspec::parse(
        &with_resources(9999, resources),
        Path::new("j"),
        &Interner::with_builtin_types(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("known to fluxion"), "{err}");
}

#[test]
fn unknown_resource_key_is_refused() {
    let resources = "  - type: node\n    count: 1\n    colour: red\n";
    let err = parse(&with_resources(9999, resources)).unwrap_err();
    assert!(err.to_string().contains("unknown field `colour`"), "{err}");
}

#[test]
fn slot_needs_a_label_and_only_slots_have_one() {
    let unlabelled =
        "  - type: slot\n    count: 1\n    with:\n      - type: core\n        count: 1\n";
    let err = parse(&with_resources(9999, unlabelled)).unwrap_err();
    assert!(
        err.to_string().contains("a slot must have a label"),
        "{err}"
    );
    let labelled_core = "  - type: core\n    count: 1\n    label: x\n";
    let err = parse(&with_resources(9999, labelled_core)).unwrap_err();
    assert!(
        err.to_string().contains("only a slot may have a label"),
        "{err}"
    );
}

#[test]
fn min_only_count_takes_as_many_as_available() {
    let resources = "  - type: node\n    count:\n      min: 2\n";
    let count = parse(&with_resources(9999, resources)).unwrap().resources[0].count;
    assert_eq!(
        (count.max, count.operator, count.operand),
        (u32::MAX as u64, CountOperator::Add, 1)
    );
    assert_eq!(count.select(1), 0);
    assert_eq!(count.select(7), 7);
}

fn range(min: u64, max: u64, op: &str, operand: u64) -> Result<Count, JobspecError> {
    let resources = format!(
        "  - type: node\n    count:\n      min: {min}\n      max: {max}\n      operator: \"{op}\"\n      operand: {operand}\n"
    );
    parse(&with_resources(9999, &resources)).map(|js| js.resources[0].count)
}

#[test]
fn additive_range_steps_by_operand_up_to_availability() {
    let c = range(2, 10, "+", 3).unwrap();
    assert_eq!(
        [
            c.select(1),
            c.select(2),
            c.select(4),
            c.select(5),
            c.select(100)
        ],
        [0, 2, 2, 5, 8]
    );
    assert_eq!(c.effective_max(), 8);
}

#[test]
fn multiplicative_range_steps_by_powers_of_operand() {
    let c = range(3, 50, "*", 2).unwrap();
    assert_eq!(
        [
            c.select(5),
            c.select(6),
            c.select(23),
            c.select(24),
            c.select(1000)
        ],
        [3, 6, 12, 24, 48]
    );
}

#[test]
fn exponential_range_raises_to_operand() {
    let c = range(2, 300, "^", 2).unwrap();
    assert_eq!(
        [
            c.select(3),
            c.select(4),
            c.select(16),
            c.select(255),
            c.select(256)
        ],
        [2, 4, 16, 16, 256]
    );
}

#[test]
fn impossible_counts_are_refused() {
    let cases = [
        (range(0, 4, "+", 1), "count min must be ≥ 1"),
        (range(5, 4, "+", 1), "count max (4) must be ≥ min (5)"),
        (range(1, 4, "+", 0), "count operand must be ≥ 1 for +"),
        (range(1, 4, "*", 1), "count operand must be ≥ 2 for *"),
        (range(2, 4, "^", 1), "count operand must be ≥ 2 for ^"),
        (range(1, 4, "^", 2), "count min must be ≥ 2 for ^"),
        (
            range(1, 4, "%", 2),
            "count operator must be +, * or ^, found `%`",
        ),
    ];
    for (result, text) in cases {
        let err = result.unwrap_err();
        assert!(err.to_string().contains(text), "{err} lacks {text}");
    }
    let zero = "  - type: node\n    count: 0\n";
    assert!(
        parse(&with_resources(9999, zero))
            .unwrap_err()
            .to_string()
            .contains("count min must be ≥ 1")
    );
}

#[test]
fn partial_range_is_refused() {
    let resources = "  - type: node\n    count:\n      min: 1\n      max: 4\n";
    let err = parse(&with_resources(9999, resources)).unwrap_err();
    assert!(
        err.to_string()
            .contains("all of min, max, operator and operand"),
        "{err}"
    );
}

#[test]
fn unknown_top_level_key_and_bad_yaml_are_refused_with_position() {
    let err = parse(&(with_resources(9999, NODE_SLOT_CORE) + "extra: 1\n")).unwrap_err();
    assert!(err.to_string().contains("unknown field `extra`"), "{err}");
    let err = parse("version: 9999\nresources: [\n").unwrap_err();
    assert!(matches!(err, JobspecError::Invalid { .. }), "{err:?}");
}

#[test]
fn unknown_system_attributes_are_kept_and_unknown_attribute_sections_refused() {
    let text = with_resources(9999, NODE_SLOT_CORE)
        .replace("    duration: 3600\n", "    duration: 1.5\n    bank: a\n");
    let js = parse(&text).unwrap();
    let system = js.attributes.unwrap().system.unwrap();
    assert_eq!(system.duration, Some(1.5));
    assert!(system.optional.contains_key("bank"));
    let text =
        with_resources(9999, NODE_SLOT_CORE).replace("  system:\n", "  other: 1\n  system:\n");
    assert!(
        parse(&text)
            .unwrap_err()
            .to_string()
            .contains("unknown field `other`")
    );
}

#[test]
fn exclusive_must_be_a_boolean() {
    let resources = "  - type: node\n    count: 1\n    exclusive: maybe\n";
    assert!(parse(&with_resources(9999, resources)).is_err());
}
