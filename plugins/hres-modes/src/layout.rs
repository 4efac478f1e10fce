//! The shape of each resource, computed once per pass: its layers, the MODE_1 charge order and,
//! for MODE_3, the leaf layer of every node.

use sluice_sdk::{HresLayer, HresMode, HresResource};

/// No leaf: the node is in no leaf layer of the resource.
pub const NO_LEAF: u32 = u32::MAX;

/// Which MODE_1 layer is charged first when several overlapping layers are sufficient.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode1Order {
    /// Fewest nodes first (the most local pool), then the larger count, then list order: shared
    /// upper layers are kept for the overflow they exist for.
    #[default]
    Narrowest,
    /// Larger configured count first (infinite first), then list order: Slurm 25.05's `_sort_hres`.
    Count,
}

/// Per-resource indexes over the layer list.
#[derive(Debug, Default)]
pub struct Layout {
    /// Layer indices of each resource, in list order.
    pub layers: Vec<Vec<u32>>,
    /// MODE_1 resources: their layers in charge order.
    pub mode1_order: Vec<Vec<u32>>,
    /// MODE_3 resources: their leaf layers, in list order.
    pub leaves: Vec<Vec<u32>>,
    /// MODE_3 resources: the leaf layer of every node (first leaf in list order), or [`NO_LEAF`].
    pub leaf_of: Vec<Vec<u32>>,
}

impl Layout {
    /// Indexes `layers` by resource.
    pub fn new(resources: &[HresResource], layers: &[HresLayer], order: Mode1Order) -> Self {
        let mut out = Layout {
            layers: vec![Vec::new(); resources.len()],
            mode1_order: vec![Vec::new(); resources.len()],
            leaves: vec![Vec::new(); resources.len()],
            leaf_of: vec![Vec::new(); resources.len()],
        };
        for (i, layer) in layers.iter().enumerate() {
            if let Some(list) = out.layers.get_mut(layer.resource as usize) {
                list.push(i as u32);
            }
        }
        let mut is_parent = vec![false; layers.len()];
        for parent in layers.iter().filter_map(|l| l.parent) {
            if let Some(p) = is_parent.get_mut(parent as usize) {
                *p = true;
            }
        }
        for (r, resource) in resources.iter().enumerate() {
            match resource.mode {
                HresMode::Mode1 => out.mode1_order[r] = mode1_order(&out.layers[r], layers, order),
                HresMode::Mode2 => {}
                HresMode::Mode3 => {
                    out.leaves[r] = out.layers[r]
                        .iter()
                        .copied()
                        .filter(|&l| !is_parent[l as usize])
                        .collect();
                    out.leaf_of[r] = leaf_map(&out.leaves[r], layers);
                }
            }
        }
        out
    }
}

fn mode1_order(own: &[u32], layers: &[HresLayer], order: Mode1Order) -> Vec<u32> {
    let size = |l: u32| nodes_in(&layers[l as usize].nodes);
    // Infinite sorts as the largest count.
    let count = |l: u32| std::cmp::Reverse(layers[l as usize].count as u64);
    let mut sorted = own.to_vec();
    match order {
        Mode1Order::Narrowest => sorted.sort_by_key(|&l| (size(l), count(l), l)),
        Mode1Order::Count => sorted.sort_by_key(|&l| (count(l), l)),
    }
    sorted
}

fn leaf_map(leaves: &[u32], layers: &[HresLayer]) -> Vec<u32> {
    let width = leaves
        .iter()
        .map(|&l| layers[l as usize].nodes.len() * 64)
        .max()
        .unwrap_or(0);
    let mut map = vec![NO_LEAF; width];
    for &leaf in leaves {
        for n in nodes_of(&layers[leaf as usize].nodes) {
            if map[n as usize] == NO_LEAF {
                map[n as usize] = leaf;
            }
        }
    }
    map
}

/// Number of nodes in a bitmap.
pub fn nodes_in(words: &[u64]) -> u32 {
    words.iter().map(|w| w.count_ones()).sum()
}

/// The nodes of a bitmap, ascending.
pub fn nodes_of(words: &[u64]) -> impl Iterator<Item = u32> + '_ {
    words.iter().enumerate().flat_map(|(i, &w)| {
        (0..64)
            .filter(move |b| w & (1 << b) != 0)
            .map(move |b| i as u32 * 64 + b)
    })
}

/// Whether node `n` is in a bitmap.
pub fn contains(words: &[u64], n: u32) -> bool {
    words
        .get(n as usize / 64)
        .is_some_and(|w| w & (1 << (n % 64)) != 0)
}
