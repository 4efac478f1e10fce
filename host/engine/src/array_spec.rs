//! Owns no state: parses sbatch's `--array` (`0-15`, `0-15:4`, `1,3,5-7`, `%throttle`) into
//! task ids, bounded by `MaxArraySize` before anything is expanded: at most
//! [`MAX_ARRAY_ITEMS`] items are read, and however they overlap the ids are made once each.

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
    /// More comma-separated items than [`MAX_ARRAY_ITEMS`], refused before any is read.
    #[error(
        "invalid job array specification: {items} comma-separated items, expected at most {max}"
    )]
    TooManyItems {
        /// Items in the specification.
        items: usize,
        /// [`MAX_ARRAY_ITEMS`].
        max: usize,
    },
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

/// Most comma-separated items one `--array` may have (one per id of a 1,000-task array and
/// room to spare); the daemon also holds the whole text to its `max_text_size`.
pub const MAX_ARRAY_ITEMS: usize = 10_000;

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
    let items = list.bytes().filter(|&b| b == b',').count() + 1;
    if items > MAX_ARRAY_ITEMS {
        return Err(ArraySpecError::TooManyItems {
            items,
            max: MAX_ARRAY_ITEMS,
        });
    }
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
/// `max_array_size` ids; items that repeat or overlap are merged first, so each id is set
/// about once however often the text names it.
pub fn parse_array(text: &str, max_array_size: u32) -> Result<ArraySpec, ArraySpecError> {
    let parsed = parse_ranges(text)?;
    if parsed.highest() >= max_array_size {
        return Err(ArraySpecError::TooLarge {
            text: text.to_string(),
            max: max_array_size,
        });
    }
    let mut named = vec![false; parsed.highest() as usize + 1];
    for (first, last, step) in merged(parsed.ranges) {
        for t in (first..=last).step_by(step as usize) {
            named[t as usize] = true;
        }
    }
    let tasks = (0..named.len() as u32)
        .filter(|&t| named[t as usize])
        .collect();
    Ok(ArraySpec {
        tasks,
        throttle: parsed.throttle,
    })
}

/// The items with each run of ones that overlap or touch on the same lattice (same step, same
/// id modulo it) made one: `0-1000,0-1000` is `0-1000`, `0-10:2,4-20:2` is `0-20:2`.
fn merged(mut ranges: Vec<(u32, u32, u32)>) -> Vec<(u32, u32, u32)> {
    // A single id is a range of step 1, so `1,2,3` merges as `1-3`.
    for r in &mut ranges {
        if r.0 == r.1 {
            r.2 = 1;
        }
    }
    ranges.sort_unstable_by_key(|&(first, last, step)| (step, first % step, first, last));
    let mut out: Vec<(u32, u32, u32)> = Vec::with_capacity(ranges.len());
    for (first, last, step) in ranges {
        // The last id the range really names.
        let last = last - (last - first) % step;
        match out.last_mut() {
            Some(prev)
                if prev.2 == step
                    && prev.0 % step == first % step
                    && u64::from(first) <= u64::from(prev.1) + u64::from(step) =>
            {
                prev.1 = prev.1.max(last);
            }
            _ => out.push((first, last, step)),
        }
    }
    out
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
    fn overlapping_and_repeated_items_are_merged_before_expansion() {
        assert_eq!(
            merged(vec![
                (0, 10, 2),
                (4, 20, 2),
                (1, 9, 2),
                (3, 3, 7),
                (4, 5, 1)
            ]),
            [(3, 5, 1), (0, 20, 2), (1, 9, 2)]
        );
        assert_eq!(merged(vec![(0, 1000, 1); 3]), [(0, 1000, 1)]);
        assert_eq!(merged(vec![(1, 1, 1), (2, 2, 1), (3, 3, 1)]), [(1, 3, 1)]);
        assert_eq!(merged(vec![(0, 9, 4)]), [(0, 8, 4)]);
        // The same ids as a set of every id named, for a mix of steps.
        let text = "0-100:3,2-50:3,1-7,40-60:5,99,0-30:7%4";
        let mut want: Vec<u32> = parse_ranges(text)
            .unwrap()
            .ranges
            .iter()
            .flat_map(|&(a, b, s)| (a..=b).step_by(s as usize))
            .collect();
        want.sort_unstable();
        want.dedup();
        assert_eq!(tasks(text), want);
    }

    #[test]
    fn a_four_megabyte_list_of_repeated_ranges_is_bounded() {
        // Issue 46: `--array="0-1000,"×N` in a 4 MB body was expanded item by item.
        let huge = "0-1000,".repeat(4 << 20 >> 3) + "0";
        assert!(matches!(
            parse_ranges(&huge),
            Err(ArraySpecError::TooManyItems {
                max: MAX_ARRAY_ITEMS,
                ..
            })
        ));
        // At the item limit, repeats cost one pass over the ids.
        let most = vec!["0-1000"; MAX_ARRAY_ITEMS].join(",");
        assert_eq!(tasks(&most).len(), 1001);
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
