//! A run of hosts sharing a prefix (`node[01-08]`), and Slurm's rule for when two zero-paddings agree.

/// Hosts with one prefix: either a single literal name or numbers `lo..=hi` printed at `width` digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostRange {
    /// The text before the number, or the whole name of a literal host.
    pub prefix: String,
    /// The numbered part; `None` for a name without a trailing number.
    pub numbers: Option<Numbers>,
}

/// A numeric range and its zero-padding width (the digit count of the low bound as written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Numbers {
    /// Lowest number.
    pub lo: u64,
    /// Highest number.
    pub hi: u64,
    /// Minimum printed width, padded with zeros.
    pub width: usize,
}

impl HostRange {
    /// How many hosts the range holds.
    pub fn count(&self) -> u64 {
        self.numbers.map_or(1, |n| n.hi - n.lo + 1)
    }

    /// Its host names in order.
    pub fn names(&self) -> impl Iterator<Item = String> + '_ {
        let single = self.numbers.is_none().then(|| self.prefix.clone());
        let numbered = self.numbers.into_iter().flat_map(move |n| {
            (n.lo..=n.hi)
                .map(move |value| format!("{}{value:0width$}", self.prefix, width = n.width))
        });
        single.into_iter().chain(numbered)
    }

    /// True when both are numbered with the same prefix, so they print inside one pair of brackets
    /// (`hostrange_within_range`).
    pub fn shares_brackets_with(&self, other: &HostRange) -> bool {
        self.numbers.is_some() && other.numbers.is_some() && self.prefix == other.prefix
    }

    /// The numeric part as printed inside brackets: `07` or `07-12`.
    pub fn number_text(&self) -> String {
        match self.numbers {
            None => String::new(),
            Some(Numbers { lo, hi, width }) if lo == hi => format!("{lo:0width$}"),
            Some(Numbers { lo, hi, width }) => format!("{lo:0width$}-{hi:0width$}"),
        }
    }
}

/// Zeros needed to print `number` at `width` (`_zero_padded`).
fn zero_padding(number: u64, width: usize) -> usize {
    let digits = number.checked_ilog10().map_or(1, |log| log as usize + 1);
    width.saturating_sub(digits)
}

/// Slurm's `_width_equiv`: the widths agree if printing either number at the other's width changes
/// neither padding; returns the width the joined range must use.
pub(crate) fn combined_width(n: u64, n_width: usize, m: u64, m_width: usize) -> Option<usize> {
    if n_width == m_width {
        return Some(n_width);
    }
    let n_same = zero_padding(n, n_width) == zero_padding(n, m_width);
    let m_same = zero_padding(m, m_width) == zero_padding(m, n_width);
    match (n_same, m_same) {
        (false, false) => None,
        (false, true) => Some(n_width),
        (true, _) => Some(m_width),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_combine_only_when_padding_is_unchanged() {
        assert_eq!(combined_width(9, 1, 10, 2), Some(1));
        assert_eq!(combined_width(9, 2, 10, 2), Some(2));
        assert_eq!(combined_width(1, 2, 1, 1), None);
        assert_eq!(combined_width(9, 1, 10, 3), None);
        assert_eq!(combined_width(99, 2, 100, 3), Some(2));
    }

    #[test]
    fn number_text_pads_both_bounds() {
        let range = HostRange {
            prefix: "n".into(),
            numbers: Some(Numbers {
                lo: 7,
                hi: 12,
                width: 2,
            }),
        };
        assert_eq!(range.number_text(), "07-12");
        assert_eq!(range.count(), 6);
    }
}
