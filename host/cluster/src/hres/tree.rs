//! MODE_3 layer trees (parent = smallest enclosing layer) and base usage propagation.

use std::collections::HashSet;

use crate::model::{HresCount, HresLayer, HresMode, NodeId};
use crate::{ConfigError, Location};

/// Most levels a MODE_3 tree may have (`MAX_HIERARCHY_DEPTH`).
pub const MAX_HIERARCHY_DEPTH: u16 = 16;

/// Links every MODE_3 layer to its smallest enclosing layer and checks the tree is rooted, nested,
/// of uniform depth and at most 16 levels deep.
pub fn link_tree(
    layers: &mut [HresLayer],
    at: impl Fn(usize) -> Location,
) -> Result<(), ConfigError> {
    let sets: Vec<HashSet<NodeId>> = layers
        .iter()
        .map(|l| l.nodes.iter().copied().collect())
        .collect();
    for i in 0..layers.len() {
        for j in i + 1..layers.len() {
            let overlap = !sets[i].is_disjoint(&sets[j]);
            if overlap && !sets[i].is_subset(&sets[j]) && !sets[j].is_subset(&sets[i]) {
                return Err(ConfigError::invalid(
                    at(j),
                    format!(
                        "layers {} and {} overlapping without one containing the other",
                        i + 1,
                        j + 1
                    ),
                    "MODE_3 layers that nest as a tree",
                ));
            }
        }
    }
    for i in 0..layers.len() {
        layers[i].parent = (0..layers.len())
            .filter(|&j| j != i && sets[i].is_subset(&sets[j]) && sets[j].len() > sets[i].len())
            .min_by_key(|&j| sets[j].len());
    }
    let roots: Vec<usize> = (0..layers.len())
        .filter(|&i| layers[i].parent.is_none())
        .collect();
    if roots.len() != 1 {
        return Err(ConfigError::invalid(
            at(roots[1]),
            format!(
                "{} root layers (layers {})",
                roots.len(),
                roots
                    .iter()
                    .map(|r| (r + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "a rooted tree: one layer containing all the others",
        ));
    }
    for i in 0..layers.len() {
        let mut depth = 0u16;
        let mut cursor = layers[i].parent;
        while let Some(parent) = cursor {
            depth += 1;
            cursor = layers[parent].parent;
        }
        if depth >= MAX_HIERARCHY_DEPTH {
            return Err(ConfigError::invalid(
                at(i),
                format!("a layer at level {}", depth + 1),
                format!("at most {MAX_HIERARCHY_DEPTH} levels"),
            ));
        }
        layers[i].depth = depth;
    }
    let leaves: Vec<usize> = (0..layers.len())
        .filter(|&i| !layers.iter().any(|l| l.parent == Some(i)))
        .collect();
    if let Some(&odd) = leaves
        .iter()
        .find(|&&leaf| layers[leaf].depth != layers[leaves[0]].depth)
    {
        return Err(ConfigError::invalid(
            at(odd),
            format!(
                "a leaf layer at depth {} while layer {} is a leaf at depth {}",
                layers[odd].depth,
                leaves[0] + 1,
                layers[leaves[0]].depth
            ),
            "a uniform-depth tree: every leaf at the same depth",
        ));
    }
    Ok(())
}

/// Sets each layer's base usage: its own base, plus (MODE_3) its children's, and checks it fits the count.
pub fn set_base_usage(
    layers: &mut [HresLayer],
    mode: HresMode,
    at: impl Fn(usize) -> Location,
) -> Result<(), ConfigError> {
    for layer in layers.iter_mut() {
        layer.base_usage = layer
            .base
            .iter()
            .fold(0u64, |sum, b| sum.saturating_add(b.value));
    }
    if mode == HresMode::Mode3 {
        // Deepest first, so each child's total is final before it is added to its parent.
        let mut order: Vec<usize> = (0..layers.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(layers[i].depth));
        for i in order {
            if let Some(parent) = layers[i].parent {
                layers[parent].base_usage = layers[parent]
                    .base_usage
                    .saturating_add(layers[i].base_usage);
            }
        }
    }
    for (i, layer) in layers.iter().enumerate() {
        if let HresCount::Count(count) = layer.count
            && layer.base_usage > u64::from(count)
        {
            return Err(ConfigError::invalid(
                at(i),
                format!("base usage {} above count {count}", layer.base_usage),
                "base no greater than the layer's count",
            ));
        }
    }
    Ok(())
}
