//! Node sets as bitmaps over node indices, the shape candidate sets cross the boundary in.

/// A set of node indices stored as 64-bit words (bit `n % 64` of word `n / 64`).
#[derive(Debug, Default, Eq)]
pub struct NodeBitmap {
    /// The words; trailing words may be absent, which means their bits are clear.
    pub words: Vec<u64>,
}

/// Equal when the words are (a set with trailing empty words differs from one without), as
/// derived; by hand so that sets of up to 128 nodes compare without a `memcmp` call, which
/// backfill planning makes for every pair of neighbouring time slices it may merge.
impl PartialEq for NodeBitmap {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        match (self.words.as_slice(), other.words.as_slice()) {
            ([a], [b]) => a == b,
            ([a0, a1], [b0, b1]) => a0 == b0 && a1 == b1,
            (a, b) => a == b,
        }
    }
}

// By hand for `clone_from`: planning copies a candidate set into a scratch set for every
// candidate time, and the derived one would allocate each time.
impl Clone for NodeBitmap {
    fn clone(&self) -> Self {
        Self {
            words: self.words.clone(),
        }
    }

    /// Inline, and without a `memcpy` call for sets of up to 128 nodes: the engine's backfill
    /// planning copies such sets over each other a million times in a KTH-SP2 replay.
    #[inline]
    fn clone_from(&mut self, source: &Self) {
        match (self.words.as_mut_slice(), source.words.as_slice()) {
            ([to], [from]) => *to = *from,
            ([to0, to1], [from0, from1]) => (*to0, *to1) = (*from0, *from1),
            _ => self.words.clone_from(&source.words),
        }
    }
}

// The small methods are `#[inline]`: the engine calls them in its innermost planning loops, and
// without it they stay out-of-line calls across the crate boundary.
impl NodeBitmap {
    /// An empty set able to hold `nodes` nodes without growing.
    pub fn with_capacity(nodes: usize) -> Self {
        Self {
            words: vec![0; nodes.div_ceil(64)],
        }
    }

    /// Empties the set and makes it [`NodeBitmap::with_capacity`]`(nodes)`, keeping its storage.
    #[inline]
    pub fn clear_to(&mut self, nodes: usize) {
        self.words.clear();
        self.words.resize(nodes.div_ceil(64), 0);
    }

    /// The set of nodes `0..nodes`.
    pub fn full(nodes: usize) -> Self {
        let mut map = Self::with_capacity(nodes);
        for (i, w) in map.words.iter_mut().enumerate() {
            let bits = (nodes - i * 64).min(64);
            *w = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
        }
        map
    }

    /// Wraps existing words.
    pub fn from_words(words: Vec<u64>) -> Self {
        Self { words }
    }

    /// Adds node `n`.
    #[inline]
    pub fn insert(&mut self, n: u32) {
        let word = n as usize / 64;
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        self.words[word] |= 1 << (n % 64);
    }

    /// Removes node `n`.
    #[inline]
    pub fn remove(&mut self, n: u32) {
        if let Some(w) = self.words.get_mut(n as usize / 64) {
            *w &= !(1 << (n % 64));
        }
    }

    /// Whether node `n` is in the set.
    #[inline]
    pub fn contains(&self, n: u32) -> bool {
        words_contain(&self.words, n)
    }

    /// Number of nodes in the set.
    #[inline]
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }

    /// Whether every node of `self` is also in `other`.
    #[inline]
    pub fn is_subset_of(&self, other: &NodeBitmap) -> bool {
        self.words
            .iter()
            .enumerate()
            .all(|(i, w)| w & !other.words.get(i).copied().unwrap_or(0) == 0)
    }

    /// Keeps only the nodes also in `other`.
    #[inline]
    pub fn intersect_with(&mut self, other: &NodeBitmap) {
        self.intersect_counting(other);
    }

    /// [`NodeBitmap::intersect_with`], giving the number of nodes left (counted as each word
    /// is written, which is cheaper than [`NodeBitmap::len`] after it).
    #[inline]
    pub fn intersect_counting(&mut self, other: &NodeBitmap) -> usize {
        // Sets of up to 128 nodes without a loop, as for `eq`: backfill narrows such sets
        // millions of times in a KTH-SP2 replay.
        match (self.words.as_mut_slice(), other.words.as_slice()) {
            ([a], [b]) => {
                *a &= b;
                return a.count_ones() as usize;
            }
            ([a0, a1], [b0, b1]) => {
                (*a0, *a1) = (*a0 & b0, *a1 & b1);
                return (a0.count_ones() + a1.count_ones()) as usize;
            }
            _ => {}
        }
        let mut left = 0;
        for (i, w) in self.words.iter_mut().enumerate() {
            *w &= other.words.get(i).copied().unwrap_or(0);
            left += w.count_ones() as usize;
        }
        left
    }

    /// How many nodes `self` and `other` share (the [`NodeBitmap::intersect_counting`] count,
    /// leaving both as they are).
    #[inline]
    pub fn common_len(&self, other: &NodeBitmap) -> usize {
        match (self.words.as_slice(), other.words.as_slice()) {
            ([a], [b]) => (a & b).count_ones() as usize,
            ([a0, a1], [b0, b1]) => ((a0 & b0).count_ones() + (a1 & b1).count_ones()) as usize,
            (a, b) => a
                .iter()
                .zip(b)
                .map(|(x, y)| (x & y).count_ones() as usize)
                .sum(),
        }
    }

    /// Removes every node of `other`.
    #[inline]
    pub fn subtract(&mut self, other: &NodeBitmap) {
        // One and two words without a loop, as above: backfill takes a job's nodes out of
        // every slice it reserves them in.
        match (self.words.as_mut_slice(), other.words.as_slice()) {
            ([a], [b, ..]) => *a &= !b,
            ([a0, a1], [b0, b1, ..]) => (*a0, *a1) = (*a0 & !b0, *a1 & !b1),
            _ => {
                for (i, w) in self.words.iter_mut().enumerate() {
                    *w &= !other.words.get(i).copied().unwrap_or(0);
                }
            }
        }
    }

    /// Keeps only the nodes `keep` says yes to, asked in ascending order.
    #[inline]
    pub fn retain(&mut self, mut keep: impl FnMut(u32) -> bool) {
        for (i, word) in self.words.iter_mut().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                if !keep(i as u32 * 64 + bit) {
                    *word &= !(1 << bit);
                }
            }
        }
    }

    /// Adds every node of `other`.
    #[inline]
    pub fn union_with(&mut self, other: &NodeBitmap) {
        if other.words.len() > self.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (i, w) in other.words.iter().enumerate() {
            self.words[i] |= w;
        }
    }

    /// Whether the two sets share a node.
    #[inline]
    pub fn intersects(&self, other: &NodeBitmap) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    /// The nodes in ascending order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        nodes_of_words(0, self.words.iter().copied())
    }
}

/// Whether node `n`'s bit is set in bitmap words `words` (a set kept as its words, such as
/// a request's candidates).
#[inline]
pub fn words_contain(words: &[u64], n: u32) -> bool {
    words
        .get(n as usize / 64)
        .is_some_and(|w| w & (1 << (n % 64)) != 0)
}

/// The nodes whose bits are set in `words`, ascending, word `i` holding the bits of nodes
/// `64 × (first + i)` on: a bitmap's nodes, or those of some words combined from several.
#[inline]
pub fn nodes_of_words<I: IntoIterator<Item = u64>>(
    first: usize,
    words: I,
) -> NodesOfWords<I::IntoIter> {
    NodesOfWords {
        words: words.into_iter(),
        next_base: (first * 64) as u32,
        base: 0,
        bits: 0,
    }
}

/// The iterator [`nodes_of_words`] returns.
pub struct NodesOfWords<I> {
    words: I,
    /// The first node of the next word.
    next_base: u32,
    /// The first node of the word `bits` is left of.
    base: u32,
    /// The current word's bits not yet given.
    bits: u64,
}

impl<I: Iterator<Item = u64>> Iterator for NodesOfWords<I> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        while self.bits == 0 {
            self.bits = self.words.next()?;
            self.base = self.next_base;
            self.next_base = self.next_base.wrapping_add(64);
        }
        let bit = self.bits.trailing_zeros();
        self.bits &= self.bits - 1;
        Some(self.base + bit)
    }
}

impl FromIterator<u32> for NodeBitmap {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut map = NodeBitmap::default();
        for n in iter {
            map.insert(n);
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn nodes_of_words_count_from_the_first_word_given() {
        let words = [0b101, 0, 1 << 63, 1];
        let nodes: Vec<u32> = nodes_of_words(2, words).collect();
        assert_eq!(nodes, [128, 130, 319, 320]);
        assert_eq!(nodes_of_words(0, []).next(), None);
        let map: NodeBitmap = [3, 64, 200].into_iter().collect();
        assert_eq!(map.iter().collect::<Vec<_>>(), [3, 64, 200]);
    }

    proptest! {
        #[test]
        fn iter_returns_exactly_what_was_inserted(mut nodes in proptest::collection::vec(0u32..5000, 0..200)) {
            let map: NodeBitmap = nodes.iter().copied().collect();
            nodes.sort_unstable();
            nodes.dedup();
            prop_assert_eq!(map.iter().collect::<Vec<_>>(), nodes.clone());
            prop_assert_eq!(map.len(), nodes.len());
        }

        #[test]
        fn retain_keeps_what_it_is_told_and_asks_in_ascending_order(nodes in proptest::collection::vec(0u32..300, 0..80), modulus in 1u32..7) {
            let mut map: NodeBitmap = nodes.iter().copied().collect();
            let before: Vec<u32> = map.iter().collect();
            let mut asked = Vec::new();
            map.retain(|n| {
                asked.push(n);
                n % modulus == 0
            });
            prop_assert_eq!(&asked, &before);
            let kept: Vec<u32> = before.into_iter().filter(|n| n % modulus == 0).collect();
            prop_assert_eq!(map.iter().collect::<Vec<_>>(), kept);
        }

        #[test]
        fn intersection_is_subset_of_both_and_counted(a in proptest::collection::vec(0u32..300, 0..50), b in proptest::collection::vec(0u32..300, 0..50), span in 1u32..=300) {
            // Within `span` nodes, so that sets of one and two words (counted without a loop)
            // are drawn as often as larger ones.
            let a: NodeBitmap = a.into_iter().map(|n| n % span).collect();
            let b: NodeBitmap = b.into_iter().map(|n| n % span).collect();
            let mut c = a.clone();
            c.intersect_with(&b);
            prop_assert!(c.is_subset_of(&a) && c.is_subset_of(&b));
            prop_assert_eq!(c.is_empty(), !a.intersects(&b));
            let mut counted = a.clone();
            let in_both = a.iter().filter(|&n| b.contains(n)).count();
            prop_assert_eq!(a.common_len(&b), in_both);
            prop_assert_eq!(counted.intersect_counting(&b), in_both);
            prop_assert_eq!(counted, c);
            let mut left = a.clone();
            left.subtract(&b);
            prop_assert_eq!(left.iter().collect::<Vec<_>>(), a.iter().filter(|&n| !b.contains(n)).collect::<Vec<_>>());
        }
    }

    #[test]
    fn clone_from_copies_sets_of_any_size_over_any_other() {
        let sizes = [0, 1, 63, 64, 65, 128, 129, 300];
        for &to in &sizes {
            for &from in &sizes {
                let source: NodeBitmap = (0..from as u32).filter(|n| n % 3 != 1).collect();
                let mut target = NodeBitmap::full(to);
                target.clone_from(&source);
                assert_eq!(target.words, source.words, "{from} nodes over {to}");
            }
        }
    }

    #[test]
    fn sets_are_equal_exactly_when_their_words_are() {
        let sets: Vec<NodeBitmap> = [&[][..], &[0], &[1], &[0, 0], &[5, 0], &[5, 1], &[5, 1, 0]]
            .iter()
            .map(|w| NodeBitmap::from_words(w.to_vec()))
            .collect();
        for a in &sets {
            for b in &sets {
                assert_eq!(a == b, a.words == b.words, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn full_holds_exactly_the_first_nodes() {
        for nodes in [0, 1, 63, 64, 65, 128, 130] {
            let one_by_one: NodeBitmap = (0..nodes as u32).collect();
            let mut expected = NodeBitmap::with_capacity(nodes);
            expected.union_with(&one_by_one);
            assert_eq!(NodeBitmap::full(nodes), expected, "{nodes} nodes");
        }
    }

    #[test]
    fn a_cleared_set_is_a_fresh_one_of_the_new_size() {
        for (before, after) in [(130, 70), (70, 130), (64, 64), (0, 65)] {
            let mut map = NodeBitmap::full(before);
            map.clear_to(after);
            assert_eq!(map, NodeBitmap::with_capacity(after), "{before} → {after}");
        }
    }

    #[test]
    fn remove_and_contains() {
        let mut map = NodeBitmap::full(70);
        assert!(map.contains(69));
        map.remove(69);
        assert!(!map.contains(69));
        assert_eq!(map.len(), 69);
        assert!(!map.contains(500));
    }
}
