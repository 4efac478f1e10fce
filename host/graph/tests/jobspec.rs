//! RFC 14 jobspec rules (reference §3): YAML text → parsed request, or → libjobspec's refusal.

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

/// The message of a refusal, without the file and position.
fn refusal(text: &str) -> String {
    match parse(text).unwrap_err() {
        JobspecError::Invalid { message, .. } | JobspecError::Unplaced { message, .. } => message,
        other => panic!("{other:?}"),
    }
}

const TASKS: &str =
    "tasks:\n  - command: [ \"app\" ]\n    slot: default\n    count:\n      per_slot: 1\n";
const ATTRIBUTES: &str = "attributes:\n  system:\n    duration: 3600\n";

fn with_resources(version: u32, resources: &str) -> String {
    format!("version: {version}\nresources:\n{resources}{ATTRIBUTES}{TASKS}")
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
    assert!(slot.with[0].with.is_empty());
    assert_eq!(js.tasks[0].slot, "default");
    assert_eq!(js.tasks[0].count.as_ref().unwrap().len(), 1);
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
                .contains("Only jobspec \"version\" 1-9999 is supported"),
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
    let JobspecError::Invalid {
        line,
        message,
        path,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(*line, 6);
    assert_eq!(path, "resources[0].with[0]");
    assert_eq!(
        message,
        "Value of \"type\" must be a resource type known to fluxion"
    );
    assert!(err.to_string().starts_with("job.yaml:6:"), "{err}");
}

#[test]
fn graph_types_are_known_besides_the_builtins() {
    let resources = "  - type: memory\n    count: 32\n    unit: GB\n    exclusive: true\n";
    let js = parse(&with_resources(9999, resources)).unwrap();
    assert_eq!(js.resources[0].unit.as_deref(), Some("GB"));
    assert_eq!(js.resources[0].exclusive, Some(true));
    let builtins_only = Interner::with_builtin_types();
    let err = Jobspec::parse(
        &with_resources(9999, resources),
        Path::new("j"),
        &builtins_only,
    );
    assert!(err.unwrap_err().to_string().contains("known to fluxion"));
}

#[test]
fn resource_keys_are_checked_as_libjobspec_does() {
    let cases = [
        (
            "  - type: node\n    count: 1\n    colour: red\n",
            "Unrecognized key in resource mapping",
        ),
        ("  - count: 1\n", "Key \"type\" missing from resource"),
        ("  - type: node\n", "Key \"count\" missing from resource"),
        (
            "  - type: slot\n    count: 1\n    with:\n      - type: core\n        count: 1\n",
            "All slots must be labeled",
        ),
        (
            "  - type: node\n    count: 1\n    exclusive: maybe\n",
            "Value of \"exclusive\" must be either \"true\" or \"false\"",
        ),
    ];
    for (resources, text) in cases {
        assert_eq!(
            refusal(&with_resources(9999, resources)),
            text,
            "{resources}"
        );
    }
}

#[test]
fn a_label_outside_a_slot_and_a_scalar_zero_count_are_accepted_as_libjobspec_does() {
    let resources = "  - type: core\n    count: 0\n    label: x\n    id: c7\n";
    let js = parse(&with_resources(9999, resources)).unwrap();
    assert_eq!(js.resources[0].label.as_deref(), Some("x"));
    assert_eq!(js.resources[0].id.as_deref(), Some("c7"));
    // Zero never matches: no available count reaches it.
    assert_eq!(js.resources[0].count.select(0), 0);
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

fn range(min: i64, max: i64, op: &str, operand: i64) -> Result<Count, String> {
    let resources = format!(
        "  - type: node\n    count:\n      min: {min}\n      max: {max}\n      operator: \"{op}\"\n      operand: {operand}\n"
    );
    let text = with_resources(9999, &resources);
    parse(&text)
        .map(|js| js.resources[0].count)
        .map_err(|_| refusal(&text))
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
fn impossible_ranges_are_refused_with_libjobspec_text() {
    let cases = [
        (range(0, 4, "+", 1), "\"min\" must be greater than zero"),
        (
            range(5, 4, "+", 1),
            "\"max\" must be greater than or equal to \"min\"",
        ),
        (
            range(1, 4, "+", 0),
            "\"operand\" must be greater than zero for addition '+'",
        ),
        (
            range(1, 4, "*", 1),
            "\"operand\" must be greater than one for multiplication '*'",
        ),
        (
            range(2, 4, "^", 1),
            "\"operand\" must be greater than one for exponentiation '^'",
        ),
        (
            range(1, 4, "^", 2),
            "\"min\" must be greater than one for exponentiation '^'",
        ),
        (range(1, 4, "%", 2), "Invalid count operator"),
        // libjobspec checks min before the operator.
        (range(0, 4, "%", 2), "\"min\" must be greater than zero"),
    ];
    for (result, text) in cases {
        assert_eq!(result.unwrap_err(), text);
    }
}

#[test]
fn partial_range_is_refused() {
    let resources = "  - type: node\n    count:\n      min: 1\n      max: 4\n";
    assert_eq!(
        refusal(&with_resources(9999, resources)),
        "All or none of \"max\", \"operator\", and \"operand\" must be specified"
    );
}

#[test]
fn top_level_needs_exactly_the_four_keys() {
    let full = with_resources(9999, NODE_SLOT_CORE);
    assert_eq!(
        refusal(&(full.clone() + "extra: 1\n")),
        "Top mapping in jobspec must have exactly four entries"
    );
    let without_attributes = full.replace(ATTRIBUTES, "");
    assert_eq!(
        refusal(&without_attributes),
        "Missing key \"attributes\" in top level mapping"
    );
    let without_tasks = full.replace(TASKS, "");
    assert_eq!(
        refusal(&without_tasks),
        "Missing key \"tasks\" in top level mapping"
    );
    let without_version = full.replace("version: 9999\n", "");
    assert_eq!(
        refusal(&without_version),
        "Missing key \"version\" in top level mapping"
    );
    let null_attributes = full.replace(ATTRIBUTES, "attributes:\n");
    let js = parse(&null_attributes).unwrap();
    assert_eq!(js.duration(), None);
    assert_eq!(js.attributes, None);
}

#[test]
fn bad_yaml_is_refused_with_its_position() {
    let err = parse("version: 9999\nresources: [\n").unwrap_err();
    assert!(
        matches!(err, JobspecError::Invalid { line: 3, .. }),
        "{err:?}"
    );
}

#[test]
fn task_entries_are_checked_as_libjobspec_does() {
    let full = with_resources(9999, NODE_SLOT_CORE);
    let two_counts = full.replace("      per_slot: 1\n", "      per_slot: 1\n      total: 4\n");
    assert_eq!(
        refusal(&two_counts),
        "\"count\" in task must have exactly one entry"
    );
    let only_two = full.replace("    count:\n      per_slot: 1\n", "");
    assert_eq!(
        refusal(&only_two),
        "impossible number of entries in task mapping"
    );
    let no_slot = full.replace("    slot: default\n", "");
    assert_eq!(refusal(&no_slot), "Key \"slot\" missing from task");
    // An unknown key passes while the task has at most five entries.
    let one_unknown = full.replace(
        "    slot: default\n",
        "    slot: default\n    colour: red\n",
    );
    assert!(parse(&one_unknown).is_ok());
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
    assert_eq!(refusal(&text), "Unknown key in \"attributes\"");
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let err = Jobspec::from_file(Path::new("/nonexistent/j.yaml"), &types()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/nonexistent/j.yaml: cannot read"),
        "{err}"
    );
}
