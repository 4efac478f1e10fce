//! `-p/--prune-filters`: how values are joined, which types each vertex type tracks and in
//! which column order (reference §0.1 items 3-5).

use sluice_graph::{
    DEFAULT_PRUNE_FILTERS, Interner, PruneFilterError, PruneFilters, join_prune_filter_options,
};

#[test]
fn blank_values_are_ignored_and_several_are_joined() {
    assert_eq!(join_prune_filter_options([]), DEFAULT_PRUNE_FILTERS);
    assert_eq!(join_prune_filter_options(["", "   "]), "ALL:core,ALL:node");
    assert_eq!(
        join_prune_filter_options(["ALL:core", "", "ALL:gpu"]),
        "ALL:core,ALL:gpu"
    );
}

#[test]
fn columns_are_anchored_types_then_all_types_other_than_the_vertex_own_in_interning_order() {
    let mut types = Interner::with_builtin_types();
    let memory = types.intern("memory");
    let id = |n: &str| types.get(n).unwrap();
    let f = PruneFilters::parse("ALL:node,ALL:core,rack:memory", &types).unwrap();
    // Interning order, not spelling order: core (1) before node (4).
    assert_eq!(f.types_at(id("socket")), [id("core"), id("node")]);
    assert_eq!(f.types_at(id("node")), [id("core")]);
    assert_eq!(f.types_at(id("rack")), [memory, id("core"), id("node")]);
    assert!(f.is_pruning_type(memory) && !f.is_pruning_type(id("gpu")));
}

#[test]
fn all_takes_a_type_from_every_anchor_and_an_anchor_adds_nothing_all_has() {
    let types = Interner::with_builtin_types();
    let id = |n: &str| types.get(n).unwrap();
    let f = PruneFilters::parse("rack:core,ALL:core,cluster:core,cluster:gpu", &types).unwrap();
    assert_eq!(f.types_at(id("rack")), [id("core")]);
    assert_eq!(f.types_at(id("cluster")), [id("gpu"), id("core")]);
}

#[test]
fn pairs_need_both_sides() {
    let types = Interner::with_builtin_types();
    for bad in ["core", "ALL:", ":core", "ALL:core,"] {
        assert!(
            matches!(
                PruneFilters::parse(bad, &types),
                Err(PruneFilterError::Malformed(_))
            ),
            "{bad}"
        );
    }
}
