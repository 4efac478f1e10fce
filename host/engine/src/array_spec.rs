//! Owns no state: parses sbatch's `--array` (`0-15`, `0-15:4`, `1,3,5-7`, `%throttle`) into
//! task ids, bounded by `MaxArraySize` before anything is expanded.

use std::collections::BTreeSet;

/// A parsed `--array`: task ids ascending, and how many may run at once (0: no limit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArraySpec {
    /// Task ids, ascending, each once.
    pub tasks: Vec<u32>,
    /// `%N`: most tasks running at once; 0 is no limit.
    pub throttle: u32,
}

/// An `--array` Slurm would refuse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArraySpecError {
    /// Not the syntax.
    #[error(
        "invalid job array specification \"{0}\": expected indexes such as 0-15, 0-15:4 or 1,3,5-7, optionally followed by %N"
    )]
    Syntax(String),
    /// A task id at or above `MaxArraySize`.
    #[error(
        "invalid job array specification \"{text}\": task ids must be below MaxArraySize={max}"
    )]
    TooLarge {
        /// The specification.
        text: String,
        /// The cluster's `MaxArraySize`.
        max: u32,
    },
}

/// The largest `MaxArraySize` Slurm accepts: no task id is ever this large.
pub const MAX_ARRAY_SIZE_LIMIT: u32 = 4_000_001;

/// An `--array` as written, not expanded: `(first, last, step)` per item, and the throttle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayRanges {
    /// Each comma-separated item as `(first, last, step)`.
    pub ranges: Vec<(u32, u32, u32)>,
    /// `%N`; 0 is no limit.
    pub throttle: u32,
}

impl ArrayRanges {
    /// Whether task id `t` is among the ranges.
    pub fn contains(&self, t: u32) -> bool {
        self.ranges
            .iter()
            .any(|&(first, last, step)| (first..=last).contains(&t) && (t - first) % step == 0)
    }

    /// The highest task id named.
    pub fn highest(&self) -> u32 {
        self.ranges.iter().map(|r| r.1).max().unwrap_or(0)
    }
}

/// Reads `--array`'s syntax without expanding it (what sbatch checks before it sends).
pub fn parse_ranges(text: &str) -> Result<ArrayRanges, ArraySpecError> {
    let syntax = || ArraySpecError::Syntax(text.to_string());
    let (list, throttle) = match text.split_once('%') {
        Some((list, t)) => (list, number(t).ok_or_else(syntax)?),
        None => (text, 0),
    };
    let mut ranges = Vec::new();
    for item in list.split(',') {
        let (range, step) = match item.split_once(':') {
            Some((range, step)) => (range, number(step).ok_or_else(syntax)?),
            None => (item, 1),
        };
        let (first, last) = match range.split_once('-') {
            Some((a, b)) => (number(a).ok_or_else(syntax)?, number(b).ok_or_else(syntax)?),
            None => {
                let n = number(range).ok_or_else(syntax)?;
                (n, n)
            }
        };
        if step == 0 || last < first {
            return Err(syntax());
        }
        ranges.push((first, last, step));
    }
    Ok(ArrayRanges { ranges, throttle })
}

/// Parses `--array` with task ids below `max_array_size` (Slurm's `MaxArraySize`). The bound
/// is checked before anything is expanded, so no text makes it allocate more than
/// `max_array_size` ids.
pub fn parse_array(text: &str, max_array_size: u32) -> Result<ArraySpec, ArraySpecError> {
    let parsed = parse_ranges(text)?;
    if parsed.highest() >= max_array_size {
        return Err(ArraySpecError::TooLarge {
            text: text.to_string(),
            max: max_array_size,
        });
    }
    let mut tasks = BTreeSet::new();
    for &(first, last, step) in &parsed.ranges {
        tasks.extend((first..=last).step_by(step as usize));
    }
    Ok(ArraySpec {
        tasks: tasks.into_iter().collect(),
        throttle: parsed.throttle,
    })
}

/// A decimal number without sign or spaces.
fn number(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(text: &str) -> Vec<u32> {
        parse_array(text, 1001).unwrap().tasks
    }

    #[test]
    fn ranges_steps_lists_and_throttle() {
        assert_eq!(tasks("0-3"), [0, 1, 2, 3]);
        assert_eq!(tasks("0-15:4"), [0, 4, 8, 12]);
        assert_eq!(tasks("1,3,5-7"), [1, 3, 5, 6, 7]);
        assert_eq!(tasks("7,1-2,2"), [1, 2, 7]);
        let s = parse_array("1-6%2", 1001).unwrap();
        assert_eq!((s.tasks.len(), s.throttle), (6, 2));
    }

    #[test]
    fn malformed_specs_are_refused() {
        for bad in [
            "", "a", "1-", "-3", "5-2", "0-10:0", "1,,2", "1-3%", "1-3%x", "1 - 3", "+1",
        ] {
            assert!(
                matches!(parse_array(bad, 1001), Err(ArraySpecError::Syntax(_))),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn ranges_are_read_without_expanding_them() {
        let r = parse_ranges("0-4000000000:2,7%3").unwrap();
        assert_eq!(r.throttle, 3);
        assert!(r.contains(3_999_999_998) && r.contains(7) && !r.contains(3));
        assert_eq!(r.highest(), 4_000_000_000);
        assert!(parse_ranges("3-1").is_err());
    }

    #[test]
    fn ids_at_or_above_max_array_size_are_refused_before_expansion() {
        assert_eq!(tasks("1000"), [1000]);
        let e = parse_array("0-4000000000", 1001).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid job array specification \"0-4000000000\": task ids must be below MaxArraySize=1001"
        );
        assert!(parse_array("1001", 1001).is_err());
        assert!(parse_array("0", 0).is_err());
    }
}
