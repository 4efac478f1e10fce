//! Subtree-aggregate pruning filters (`-p/--prune-filters`, e.g. `ALL:core,ALL:node`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::interner::Interner;

/// resource-query's default filter set (since Fluxion v0.43.0).
pub const DEFAULT_PRUNE_FILTERS: &str = "ALL:core,ALL:node";

/// Why a filter spec was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PruneFilterError {
    /// A pair is not `HIGH:LOW` or one side is blank.
    #[error("malformed prune filter {0:?} (expected HL-type:LL-type, e.g. ALL:core)")]
    Malformed(String),
}

/// Which resource types each vertex type tracks in aggregate over its subtree.
///
/// Types are numbered as the graph interns them (so sets order as Fluxion's do); a type the
/// graph does not know gets a number after the graph's own.
#[derive(Debug, Clone)]
pub struct PruneFilters {
    /// Types tracked at every vertex (`ALL:`), by type number.
    all: Option<BTreeSet<u32>>,
    /// Types tracked at vertices of one anchor type.
    anchored: BTreeMap<u32, BTreeSet<u32>>,
    /// Every tracked type.
    total: BTreeSet<u32>,
    /// Names of types the graph does not know, by their number.
    extra: HashMap<String, u32>,
    next_extra: u32,
}

impl PruneFilters {
    /// Filters from a spec such as `ALL:core,rack:node`; types are numbered by `types`.
    pub fn parse(spec: &str, types: &Interner) -> Result<Self, PruneFilterError> {
        let mut filters = PruneFilters {
            all: None,
            anchored: BTreeMap::new(),
            total: BTreeSet::new(),
            extra: HashMap::new(),
            next_extra: types.len() as u32,
        };
        for pair in spec.split(',') {
            let Some((high, low)) = pair.split_once(':') else {
                return Err(PruneFilterError::Malformed(pair.into()));
            };
            let high: String = high.chars().filter(|c| !c.is_whitespace()).collect();
            let low: String = low.chars().filter(|c| !c.is_whitespace()).collect();
            if high.is_empty() || low.is_empty() {
                return Err(PruneFilterError::Malformed(pair.into()));
            }
            let low = filters.number(&low, types);
            if high == "ALL" {
                filters.set(None, low);
            } else {
                let high = filters.number(&high, types);
                filters.set(Some(high), low);
            }
        }
        Ok(filters)
    }

    fn number(&mut self, name: &str, types: &Interner) -> u32 {
        if let Some(t) = types.get(name) {
            return t;
        }
        let next = &mut self.next_extra;
        *self.extra.entry(name.to_owned()).or_insert_with(|| {
            *next += 1;
            *next - 1
        })
    }

    /// Fluxion's `set_pruning_type`: `ALL` takes a type away from every anchor; an anchored
    /// type already tracked everywhere is not added again.
    pub fn set(&mut self, anchor: Option<u32>, low: u32) {
        match anchor {
            None => {
                for set in self.anchored.values_mut() {
                    set.remove(&low);
                }
                self.all.get_or_insert_with(BTreeSet::new).insert(low);
            }
            Some(anchor) => {
                if !self.all.as_ref().is_some_and(|a| a.contains(&low)) {
                    self.anchored.entry(anchor).or_default().insert(low);
                }
            }
        }
        self.total.insert(low);
    }

    /// Whether `kind` is tracked anywhere.
    pub fn is_pruning_type(&self, kind: u32) -> bool {
        self.total.contains(&kind)
    }

    /// The types a vertex of type `anchor` tracks, in planner column order: its anchored types,
    /// then the `ALL` types other than its own.
    pub fn types_at(&self, anchor: u32) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .anchored
            .get(&anchor)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default();
        if let Some(all) = &self.all {
            out.extend(all.iter().copied().filter(|&t| t != anchor));
        }
        out
    }

    /// The name of type number `t` (`types` for the graph's own).
    pub fn type_name<'a>(&'a self, t: u32, types: &'a Interner) -> &'a str {
        if (t as usize) < types.len() {
            return types.name(t);
        }
        self.extra
            .iter()
            .find(|(_, n)| **n == t)
            .map_or("", |(name, _)| name.as_str())
    }
}

/// resource-query's joining of `-p` values: blank values are ignored, several are joined with
/// `,`, and none leaves the default.
pub fn join_prune_filter_options<'a>(values: impl IntoIterator<Item = &'a str>) -> String {
    let given: Vec<&str> = values
        .into_iter()
        .filter(|v| v.chars().any(|c| c != ' '))
        .collect();
    if given.is_empty() {
        DEFAULT_PRUNE_FILTERS.to_owned()
    } else {
        given.join(",")
    }
}
