//! Fluxion's flexible traverser (`dfu_flexible_t`, `-T flexible`): sibling slots are
//! alternatives ("or-slots") chosen by dynamic programming, and `xor_slot` branches are expanded
//! into candidate request trees tried one after another.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::graph::VertexId;
use crate::match_request::Request;
use crate::matcher::Matcher;
use crate::scoring::Scoring;
use crate::traverse::{MatchKind, calc_count, effective_max};
use crate::visit::{Errno, JobMeta};

/// How many candidate trees `xor_slot` expansion may produce (`SYSTEM_MAX_XOR_EXPANSION`).
pub const MAX_XOR_EXPANSION: usize = 1000;

/// How many resource-count states the or-slot search may remember before it gives up; Fluxion
/// has no bound, but a user's request must not exhaust the daemon's memory. The states reached
/// are the mixes of alternatives that fit (about n^k for k alternatives of n slots each), so
/// this bound (tens of MB at most) is far above what real requests reach.
pub const MAX_OR_SLOT_STATES: usize = 1 << 18;

/// Which traverser matches jobs (`-T/--traverser-policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraverserPolicy {
    /// `simple`: one shape per jobspec level (Fluxion's `dfu_impl_t`).
    #[default]
    Simple,
    /// `flexible`: or-slots and `xor_slot` alternatives (Fluxion's `dfu_flexible_t`).
    Flexible,
}

impl TraverserPolicy {
    /// The policy `name` spells, as resource-query's `-T` takes it.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "simple" => Some(TraverserPolicy::Simple),
            "flexible" => Some(TraverserPolicy::Flexible),
            _ => None,
        }
    }
}

/// `r` with other children.
fn with_children(r: &Request, with: Vec<Request>) -> Request {
    Request {
        kind: r.kind,
        slot: r.slot,
        count: r.count,
        exclusive: r.exclusive,
        label: r.label.clone(),
        with,
        aggregates: r.aggregates.clone(),
    }
}

/// `split_xor_slots`: every request tree the `xor_slot`s of `resources` stand for, in
/// Fluxion's order (required siblings crossed with each other, then one xor option appended);
/// each `xor_slot` becomes a plain slot. `None` past [`MAX_XOR_EXPANSION`] trees.
pub(crate) fn split_xor_slots(
    resources: &[Request],
    xor_slot: u32,
    slot: u32,
) -> Option<Vec<Vec<Request>>> {
    let mut base: Vec<Vec<Request>> = vec![Vec::new()];
    let mut xor_options: Vec<Request> = Vec::new();
    for r in resources {
        let child_variants = split_xor_slots(&r.with, xor_slot, slot)?;
        if r.kind == xor_slot {
            for child in child_variants {
                let mut option = with_children(r, child);
                option.kind = slot;
                option.slot = true;
                xor_options.push(option);
                if xor_options.len() > MAX_XOR_EXPANSION {
                    return None;
                }
            }
            continue;
        }
        let mut next = Vec::new();
        for variant in &base {
            for child in &child_variants {
                let mut v = variant.clone();
                v.push(with_children(r, child.clone()));
                next.push(v);
                if next.len() > MAX_XOR_EXPANSION {
                    return None;
                }
            }
        }
        base = next;
    }
    if xor_options.is_empty() {
        return Some(base);
    }
    let mut results = Vec::new();
    for variant in &base {
        for option in &xor_options {
            let mut v = variant.clone();
            v.push(option.clone());
            results.push(v);
            if results.len() > MAX_XOR_EXPANSION {
                return None;
            }
        }
    }
    Some(results)
}

/// One entry of the or-slot table: the counts left after taking one slot, how many slots
/// the counts hold in the best choice, and which alternative to take first (-1: none).
#[derive(Debug, Clone)]
struct OrConfig {
    next: Vec<i32>,
    score: i32,
    index: i32,
}

/// Why the or-slot search was refused (Fluxion would recurse without end or bound).
#[derive(Debug, PartialEq, Eq)]
enum OrSlotSearchError {
    /// More count states than the bound allows.
    TooManyStates,
    /// Taking an alternative leaves the counts unchanged: it requests nothing.
    TakesNothing,
}

impl OrSlotSearchError {
    /// The text added to the traverser's error message.
    fn message(&self) -> String {
        match self {
            OrSlotSearchError::TooManyStates => {
                format!("dom_slot: or-slot search exceeds {MAX_OR_SLOT_STATES} states.\n")
            }
            OrSlotSearchError::TakesNothing => {
                "dom_slot: an or-slot alternative requests nothing.\n".to_string()
            }
        }
    }
}

/// Fluxion's `select_or_config` over the alternatives `slots`, whose element types are `kinds`
/// (counts are per kind, in the same order): the best number of slots the counts hold and the
/// chain of choices reaching it, memoised in `table` (at most `max_states` entries). Fluxion
/// recurses; this walks an explicit stack so a deep chain cannot overflow the thread's.
fn select_or_config(
    slots: &[Request],
    kinds: &[u32],
    counts: Vec<i32>,
    nslots: u64,
    table: &mut HashMap<Vec<i32>, OrConfig>,
    max_states: usize,
) -> Result<OrConfig, OrSlotSearchError> {
    let position = |kind: u32| kinds.iter().position(|&k| k == kind).unwrap_or(0);
    if let [only] = slots {
        // Fluxion holds nslots in an int: an unbounded count reads as -1.
        let mut max_matches = nslots as u32 as i32;
        for elem in &only.with {
            let have = counts[position(elem.kind)];
            let count = calc_count(elem, have as u32);
            if count == 0 || (have as u32) < count {
                max_matches = 0;
                break;
            }
            max_matches = max_matches.min(((have as u32) / count) as i32);
        }
        let config = OrConfig {
            next: counts.clone(),
            score: max_matches,
            index: 0,
        };
        table.insert(counts, config.clone());
        return Ok(config);
    }
    // Taking alternative `i` from `counts` leaves these counts, if every element fits.
    let take = |counts: &[i32], i: usize| -> Option<Vec<i32>> {
        let mut left = counts.to_vec();
        for elem in &slots[i].with {
            let p = position(elem.kind);
            let count = calc_count(elem, counts[p] as u32);
            if count == 0 {
                return None;
            }
            left[p] = (left[p] as u32).wrapping_sub(count) as i32;
        }
        Some(left)
    };
    struct Frame {
        counts: Vec<i32>,
        next_slot: usize,
        best: Option<OrConfig>,
        waiting: Option<(Vec<i32>, usize)>,
    }
    let mut open: HashSet<Vec<i32>> = HashSet::new();
    let mut stack: Vec<Frame> = Vec::new();
    if !table.contains_key(&counts) {
        open.insert(counts.clone());
        stack.push(Frame {
            counts: counts.clone(),
            next_slot: 0,
            best: None,
            waiting: None,
        });
    }
    // A strictly better alternative replaces the kept one, so the first best wins.
    fn consider(best: &mut Option<OrConfig>, left: Vec<i32>, i: usize, score: i32) {
        if best.as_ref().is_none_or(|b| b.score - 1 < score) {
            *best = Some(OrConfig {
                next: left,
                score: score + 1,
                index: i as i32,
            });
        }
    }
    while let Some(top) = stack.last_mut() {
        if let Some((left, i)) = top.waiting.take() {
            let score = table[&left].score;
            consider(&mut top.best, left, i, score);
        }
        let mut descend = None;
        while top.next_slot < slots.len() {
            let i = top.next_slot;
            top.next_slot += 1;
            let Some(left) = take(&top.counts, i) else {
                continue;
            };
            if let Some(known) = table.get(&left) {
                let score = known.score;
                consider(&mut top.best, left, i, score);
                continue;
            }
            if open.contains(&left) {
                return Err(OrSlotSearchError::TakesNothing);
            }
            top.waiting = Some((left.clone(), i));
            descend = Some(left);
            break;
        }
        match descend {
            Some(left) => {
                open.insert(left.clone());
                stack.push(Frame {
                    counts: left,
                    next_slot: 0,
                    best: None,
                    waiting: None,
                });
            }
            None => {
                let done = stack.pop().expect("a frame is on the stack");
                open.remove(&done.counts);
                let config = done.best.unwrap_or(OrConfig {
                    next: Vec::new(),
                    score: 0,
                    index: -1,
                });
                table.insert(done.counts, config);
                if table.len() > max_states {
                    return Err(OrSlotSearchError::TooManyStates);
                }
            }
        }
    }
    Ok(table[&counts].clone())
}

impl Matcher {
    /// Chooses the traverser; a new choice re-reads the next jobspec.
    pub fn set_traverser(&mut self, policy: TraverserPolicy) {
        self.flexible = policy == TraverserPolicy::Flexible;
        self.prepared = None;
        if self.flexible {
            // The or-slot shape is built per visit, so recorded visits could not be told apart.
            self.replay_visits = false;
        }
    }

    /// The traverser in use.
    pub fn traverser(&self) -> TraverserPolicy {
        if self.flexible {
            TraverserPolicy::Flexible
        } else {
            TraverserPolicy::Simple
        }
    }

    /// The flexible traverser's `select`: each candidate tree in turn until one matches;
    /// the error is the last tree's. The simple traverser has one tree.
    pub(crate) fn select_variants(
        &mut self,
        variants: &[Vec<Request>],
        meta: &JobMeta,
        excl: bool,
    ) -> Result<(), Errno> {
        let mut result = Err(Errno::Busy);
        for requests in variants {
            result = self.select(requests, meta, excl);
            if result.is_ok() {
                break;
            }
        }
        result
    }

    /// The flexible traverser's `test`: like the simple one, but sibling slots are
    /// alternatives, and a matched resource with slots below answers only as a slot match.
    pub(crate) fn test_flexible<'a>(
        &mut self,
        u: VertexId,
        resources: &'a [Request],
        pristine: &mut bool,
    ) -> (&'a [Request], u64, MatchKind) {
        let kind = self.graph.kind_id(u);
        let mut matched: Option<&'a Request> = None;
        let mut or_matched = false;
        let mut slots: Option<&'a [Request]> = None;
        let mut nslots = 0;
        for r in resources {
            if r.kind == kind {
                if matched.is_some() || or_matched {
                    return self.sibling_error(u, resources);
                }
                for c in r.with.iter().filter(|c| c.slot) {
                    slots = Some(&r.with);
                    nslots = effective_max(c);
                }
                matched = Some(r);
            } else if r.slot {
                if matched.is_some() {
                    return self.sibling_error(u, resources);
                }
                slots = Some(resources);
                // As in Fluxion, the last alternative's count decides.
                nslots = effective_max(r);
                or_matched = true;
            }
        }
        let none = if *pristine {
            MatchKind::PristineNone
        } else {
            MatchKind::None
        };
        if let Some(slots) = slots {
            // Fluxion tests every request of the slots' level, slot or not.
            if slots.iter().any(|s| self.slot_match(u, s)) {
                *pristine = false;
                return (slots, nslots, MatchKind::Slot);
            }
            return (resources, nslots, none);
        }
        if let Some(m) = matched {
            *pristine = false;
            return (&m.with, nslots, MatchKind::Resource);
        }
        (resources, nslots, none)
    }

    /// The flexible traverser's `dom_slot`: gathers the union of the alternatives' shapes
    /// under `u`, picks the mix of alternatives that yields the most slots, and bundles whole
    /// candidates into them.
    pub(crate) fn dom_slot_flexible(
        &mut self,
        meta: &JobMeta,
        u: VertexId,
        slots: &[Request],
        nslots: u64,
        pristine: bool,
        dfu: &mut Scoring,
    ) -> Result<(), Errno> {
        // Per type, the most demanding element (the first of equals), in type order.
        let mut union: BTreeMap<u32, &Request> = BTreeMap::new();
        for slot in slots {
            for r in &slot.with {
                let kept = union.entry(r.kind).or_insert(r);
                if kept.count.min < r.count.min {
                    *kept = r;
                }
            }
        }
        let kinds: Vec<u32> = union.keys().copied().collect();
        let shape: Vec<Request> = union.values().map(|&r| r.clone()).collect();
        let mut x_inout = true;
        let mut slot_dfu = Scoring::default();
        self.explore(
            meta,
            u,
            &shape,
            pristine,
            &mut x_inout,
            &mut slot_dfu,
            nslots,
        )?;
        slot_dfu.choose_all(self.slot_higher_first);
        let counts: Vec<i32> = kinds
            .iter()
            .map(|&k| slot_dfu.qualified(k) as i32)
            .collect();
        let mut table = HashMap::new();
        let mut config = match select_or_config(
            slots,
            &kinds,
            counts,
            nslots,
            &mut table,
            MAX_OR_SLOT_STATES,
        ) {
            Ok(config) => config,
            Err(e) => {
                self.err_message += &e.message();
                return Err(Errno::Busy);
            }
        };
        // Fluxion counts slots in an unsigned int: a negative score is a very large one,
        // which runs out of candidates below.
        let qualified_slots = config.score as u32;
        let mut groups = Vec::new();
        for _ in 0..qualified_slots {
            let Some(slot) = usize::try_from(config.index)
                .ok()
                .and_then(|i| slots.get(i))
            else {
                return Err(Errno::Busy);
            };
            let group = self.fill_slot(&slot.with, &mut slot_dfu)?;
            if group.edges.is_empty() {
                return Err(Errno::Busy);
            }
            groups.push(group);
            config = table.get(&config.next).cloned().unwrap_or(OrConfig {
                next: Vec::new(),
                score: 0,
                index: 0,
            });
        }
        let slot_kind = self.graph.types().get("slot").unwrap_or(u32::MAX);
        for g in groups {
            dfu.add(slot_kind, g);
        }
        if qualified_slots > 0 {
            Ok(())
        } else {
            Err(Errno::Busy)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobspec_count::Count;

    const CORE: u32 = 1;
    const GPU: u32 = 3;
    const SLOT: u32 = 6;
    const XOR: u32 = 7;

    fn leaf(kind: u32, n: u64) -> Request {
        Request {
            kind,
            slot: false,
            count: Count::fixed(n),
            exclusive: None,
            label: String::new(),
            with: Vec::new(),
            aggregates: Vec::new(),
        }
    }

    fn slot(kind: u32, with: Vec<Request>) -> Request {
        Request {
            slot: kind == SLOT,
            with,
            ..leaf(kind, 1)
        }
    }

    /// The alternatives taken, in order, from `counts` (cores, gpus).
    fn chain(slots: &[Request], counts: [i32; 2]) -> (i32, Vec<i32>) {
        let mut table = HashMap::new();
        let kinds = [CORE, GPU];
        let top = select_or_config(slots, &kinds, counts.to_vec(), 1, &mut table, 1000).unwrap();
        let mut taken = Vec::new();
        let mut config = top.clone();
        for _ in 0..top.score {
            taken.push(config.index);
            config = table[&config.next].clone();
        }
        (top.score, taken)
    }

    #[test]
    fn the_search_finds_the_mix_that_yields_most_slots_first_best_first() {
        // core[8]+gpu[1] or core[10]: 18 cores and a gpu give one of each, the first
        // alternative first (a later one only replaces it when strictly better).
        let slots = [
            slot(SLOT, vec![leaf(CORE, 8), leaf(GPU, 1)]),
            slot(SLOT, vec![leaf(CORE, 10)]),
        ];
        assert_eq!(chain(&slots, [18, 1]), (2, vec![0, 1]));
        // Without the gpu only the 10-core shape fits, once.
        assert_eq!(chain(&slots, [18, 0]), (1, vec![1]));
        // 36 cores, 2 gpus: two of each (8+8+10+10 = 36), small ones first.
        assert_eq!(chain(&slots, [36, 2]), (4, vec![0, 0, 1, 1]));
    }

    #[test]
    fn one_alternative_is_bounded_by_the_slot_count_read_as_an_int() {
        let one = [slot(SLOT, vec![leaf(CORE, 4)])];
        let mut table = HashMap::new();
        let got = select_or_config(&one, &[CORE], vec![18], 3, &mut table, 10).unwrap();
        assert_eq!(got.score, 3);
        let got = select_or_config(&one, &[CORE], vec![18], u64::from(u32::MAX), &mut table, 10);
        assert_eq!(got.unwrap().score, -1);
    }

    #[test]
    fn an_empty_alternative_and_too_many_states_are_refused() {
        let slots = [slot(SLOT, vec![leaf(CORE, 1)]), slot(SLOT, Vec::new())];
        let mut table = HashMap::new();
        let got = select_or_config(&slots, &[CORE], vec![4], 1, &mut table, 1000);
        assert_eq!(got.unwrap_err(), OrSlotSearchError::TakesNothing);
        let slots = [
            slot(SLOT, vec![leaf(CORE, 1)]),
            slot(SLOT, vec![leaf(GPU, 1)]),
        ];
        let mut table = HashMap::new();
        let got = select_or_config(&slots, &[CORE, GPU], vec![30, 30], 1, &mut table, 100);
        assert_eq!(got.unwrap_err(), OrSlotSearchError::TooManyStates);
        let mut table = HashMap::new();
        let got = select_or_config(&slots, &[CORE, GPU], vec![30, 30], 1, &mut table, 1000);
        assert_eq!(got.unwrap().score, 60);
    }

    #[test]
    fn xor_slots_expand_to_one_option_per_tree_after_the_required_siblings() {
        // [gpu, xor{core[1]} | xor{core[2]}] → [gpu, slot{core[1]}], [gpu, slot{core[2]}].
        let resources = [
            leaf(GPU, 1),
            slot(XOR, vec![leaf(CORE, 1)]),
            slot(XOR, vec![leaf(CORE, 2)]),
        ];
        let trees = split_xor_slots(&resources, XOR, SLOT).unwrap();
        let shape: Vec<Vec<(u32, bool, u64)>> = trees
            .iter()
            .map(|t| {
                t.iter()
                    .map(|r| (r.kind, r.slot, r.with.first().map_or(0, |c| c.count.min)))
                    .collect()
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                vec![(GPU, false, 0), (SLOT, true, 1)],
                vec![(GPU, false, 0), (SLOT, true, 2)]
            ]
        );
        // Nested: a required resource whose children hold three xor options crosses with them.
        let nested = [slot(
            SLOT,
            vec![
                slot(XOR, vec![leaf(CORE, 1)]),
                slot(XOR, vec![leaf(CORE, 2)]),
                slot(XOR, vec![leaf(CORE, 3)]),
            ],
        )];
        assert_eq!(split_xor_slots(&nested, XOR, SLOT).unwrap().len(), 3);
    }
}
