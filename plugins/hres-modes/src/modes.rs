//! Eligibility and charges of MODE_1, MODE_2 and MODE_3, on the layers as of the pass plus what
//! this plugin has charged since.

use sluice_sdk::{Charge, Demand, HresLayer, HresMode, HresResource};

use crate::layout::{Layout, NO_LEAF, contains};

/// Whether a layer can give `count` more: infinite, or `count` within count - base - used.
pub fn sufficient(layer: &HresLayer, count: i64) -> bool {
    layer.is_infinite() || count <= layer.available()
}

/// The job's demands summed per resource, zero counts dropped (as Slurm drops them).
pub fn merge(demands: &[Demand], resources: &[HresResource]) -> Result<Vec<(u32, i64)>, String> {
    let mut merged: Vec<(u32, i64)> = Vec::with_capacity(demands.len());
    for d in demands {
        if d.resource as usize >= resources.len() {
            return Err(format!("unknown resource index {}", d.resource));
        }
        if d.count < 0 {
            return Err(format!(
                "negative count {} of {}",
                d.count, resources[d.resource as usize].name
            ));
        }
        match merged.iter_mut().find(|(r, _)| *r == d.resource) {
            Some((_, c)) => *c = c.checked_add(d.count).ok_or("request count overflows")?,
            None => merged.push((d.resource, d.count)),
        }
    }
    merged.retain(|&(_, c)| c > 0);
    Ok(merged)
}

/// The nodes a demand of `count` on resource `r` allows, as bitmap words.
pub fn allowed(
    r: u32,
    count: i64,
    mode: HresMode,
    layers: &[HresLayer],
    layout: &Layout,
) -> Vec<u64> {
    let own = &layout.layers[r as usize];
    let width = own
        .iter()
        .map(|&l| layers[l as usize].nodes.len())
        .max()
        .unwrap_or(0);
    let mut mask = vec![0u64; width];
    let or = |mask: &mut Vec<u64>, l: u32| {
        for (m, w) in mask.iter_mut().zip(&layers[l as usize].nodes) {
            *m |= w;
        }
    };
    match mode {
        // Any sufficient layer admits its nodes; zero layers never do, infinite ones always.
        HresMode::Mode1 => own
            .iter()
            .filter(|&&l| sufficient(&layers[l as usize], count))
            .for_each(|&l| or(&mut mask, l)),
        // Every layer over a node must be sufficient; a zero layer blocks its nodes.
        HresMode::Mode2 => {
            let mut blocked = vec![0u64; width];
            for &l in own {
                if sufficient(&layers[l as usize], count) {
                    or(&mut mask, l)
                } else {
                    or(&mut blocked, l)
                }
            }
            mask.iter_mut().zip(&blocked).for_each(|(m, b)| *m &= !b);
        }
        // A node needs a leaf, and `count` must fit every finite layer on the leaf's path.
        HresMode::Mode3 => {
            for &leaf in &layout.leaves[r as usize] {
                if path(leaf, layers).all(|l| sufficient(&layers[l as usize], count)) {
                    or(&mut mask, leaf);
                }
            }
        }
    }
    mask
}

/// The layers from `leaf` up to its root; stops on a parent loop or an unknown parent.
pub fn path(leaf: u32, layers: &[HresLayer]) -> impl Iterator<Item = u32> + '_ {
    let mut next = Some(leaf);
    let mut steps = 0;
    std::iter::from_fn(move || {
        let here = next.filter(|&l| (l as usize) < layers.len() && steps <= layers.len())?;
        steps += 1;
        next = layers[here as usize].parent;
        Some(here)
    })
}

/// What a demand of `count` on resource `r` costs on `nodes`, or why it does not fit.
pub fn charges(
    r: u32,
    count: i64,
    resource: &HresResource,
    nodes: &[u32],
    layers: &[HresLayer],
    layout: &Layout,
) -> Result<Vec<Charge>, String> {
    let own = &layout.layers[r as usize];
    let overlaps = |l: u32| {
        nodes
            .iter()
            .any(|&n| contains(&layers[l as usize].nodes, n))
    };
    let name = &resource.name;
    match resource.mode {
        HresMode::Mode1 => layout.mode1_order[r as usize]
            .iter()
            .find(|&&l| overlaps(l) && sufficient(&layers[l as usize], count))
            .map(|&layer| {
                vec![Charge {
                    layer,
                    amount: count,
                }]
            })
            .ok_or_else(|| {
                format!("no layer of {name} over the job's nodes has {count} available")
            }),
        HresMode::Mode2 => {
            let over: Vec<u32> = own.iter().copied().filter(|&l| overlaps(l)).collect();
            if over.is_empty() {
                return Err(format!("the job's nodes are in no layer of {name}"));
            }
            if let Some(&l) = over
                .iter()
                .find(|&&l| !sufficient(&layers[l as usize], count))
            {
                let left = layers[l as usize].available();
                return Err(format!(
                    "layer {l} of {name} has {left} available, {count} needed"
                ));
            }
            Ok(over
                .into_iter()
                .map(|layer| Charge {
                    layer,
                    amount: count,
                })
                .collect())
        }
        HresMode::Mode3 => mode3(r, count, name, nodes, layers, layout),
    }
}

/// MODE_3: each node's count goes up its leaf's path, so every layer gets count × its job nodes.
fn mode3(
    r: u32,
    count: i64,
    name: &str,
    nodes: &[u32],
    layers: &[HresLayer],
    layout: &Layout,
) -> Result<Vec<Charge>, String> {
    let leaf_of = &layout.leaf_of[r as usize];
    let mut charged: Vec<Charge> = Vec::new();
    for &n in nodes {
        let leaf = leaf_of.get(n as usize).copied().unwrap_or(NO_LEAF);
        if leaf == NO_LEAF {
            return Err(format!("node {n} is in no leaf layer of {name}"));
        }
        for layer in path(leaf, layers) {
            let slot = match charged.iter_mut().find(|c| c.layer == layer) {
                Some(c) => c,
                None => {
                    charged.push(Charge { layer, amount: 0 });
                    charged.last_mut().unwrap()
                }
            };
            slot.amount = slot.amount.checked_add(count).ok_or("charge overflows")?;
        }
    }
    charged.sort_unstable_by_key(|c| c.layer);
    if let Some(c) = charged
        .iter()
        .find(|c| !sufficient(&layers[c.layer as usize], c.amount))
    {
        let left = layers[c.layer as usize].available();
        return Err(format!(
            "layer {} of {name} would need {}, has {left} available after base",
            c.layer, c.amount
        ));
    }
    Ok(charged)
}
