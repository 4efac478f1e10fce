//! Node sets as bitmaps over node indices, the shape candidate sets cross the boundary in.

/// A set of node indices stored as 64-bit words (bit `n % 64` of word `n / 64`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct NodeBitmap {
    /// The words; trailing words may be absent, which means their bits are clear.
    pub words: Vec<u64>,
}

// By hand for `clone_from`: planning copies a candidate set into a scratch set for every
// candidate time, and the derived one would allocate each time.
impl Clone for NodeBitmap {
    fn clone(&self) -> Self {
        Self {
            words: self.words.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.words.clone_from(&source.words);
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
        self.words
            .get(n as usize / 64)
            .is_some_and(|w| w & (1 << (n % 64)) != 0)
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
        for (i, w) in self.words.iter_mut().enumerate() {
            *w &= other.words.get(i).copied().unwrap_or(0);
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
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros();
                w &= w - 1;
                Some(i as u32 * 64 + bit)
            })
        })
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
        fn intersection_is_subset_of_both(a in proptest::collection::vec(0u32..300, 0..50), b in proptest::collection::vec(0u32..300, 0..50)) {
            let a: NodeBitmap = a.into_iter().collect();
            let b: NodeBitmap = b.into_iter().collect();
            let mut c = a.clone();
            c.intersect_with(&b);
            prop_assert!(c.is_subset_of(&a) && c.is_subset_of(&b));
            prop_assert_eq!(c.is_empty(), !a.intersects(&b));
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
    fn remove_and_contains() {
        let mut map = NodeBitmap::full(70);
        assert!(map.contains(69));
        map.remove(69);
        assert!(!map.contains(69));
        assert_eq!(map.len(), 69);
        assert!(!map.contains(500));
    }
}
