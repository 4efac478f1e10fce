//! The expression grammar (slurm-semantics §9): tokens split by `,` space tab newline outside brackets,
//! each token literal text and bracket groups; the last group is the host range, earlier ones prefixes.

use crate::range::Numbers;
use crate::{Hostlist, HostlistError, MAX_PREFIX_CNT, MAX_RANGE, MAX_RANGES};

/// Prefixes one token may generate in total; Slurm only caps each bracket level, which lets
/// `a[0-65535]b[0-65535]c[1-2]` exhaust memory.
const MAX_TOTAL_PREFIXES: u64 = 1 << 20;

/// A piece of one token: literal text, or the ranges inside one pair of brackets.
enum Segment {
    Text(String),
    Brackets { column: usize, ranges: Vec<Numbers> },
}

/// Parses `expr` and pushes every host onto `list` in Slurm's order, refusing the expression
/// before anything is expanded once the names would number more than `max_hosts` in all.
pub(crate) fn parse_into(
    expr: &str,
    list: &mut Hostlist,
    max_hosts: u64,
) -> Result<(), HostlistError> {
    for (column, token) in tokenize(expr)? {
        let count = list.len().saturating_add(token_hosts(&token));
        if count > max_hosts {
            return Err(HostlistError::TooManyNames {
                column,
                count,
                max: max_hosts,
            });
        }
        push_token(token, list)?;
    }
    Ok(())
}

/// How many names one token expands to (saturating), counted from its ranges alone.
fn token_hosts(segments: &[Segment]) -> u64 {
    segments
        .iter()
        .filter_map(|segment| match segment {
            Segment::Brackets { ranges, .. } => {
                Some(ranges.iter().map(|r| r.hi - r.lo + 1).sum::<u64>())
            }
            Segment::Text(_) => None,
        })
        .fold(1, u64::saturating_mul)
}

/// Splits the expression into tokens of segments, each with the column it starts at, checking
/// bracket balance.
fn tokenize(expr: &str) -> Result<Vec<(usize, Vec<Segment>)>, HostlistError> {
    let mut tokens = Vec::new();
    let mut segments = Vec::new();
    let mut text = String::new();
    let mut open: Option<(usize, String)> = None;
    let mut token_start = 1;
    for (index, ch) in expr.chars().enumerate() {
        let column = index + 1;
        if text.is_empty() && segments.is_empty() && open.is_none() {
            token_start = column;
        }
        match (&mut open, ch) {
            (Some(_), '[') => return Err(HostlistError::NestedBracket { column }),
            (Some((start, inner)), ']') => {
                let ranges = parse_range_list(inner, *start + 1)?;
                segments.push(Segment::Text(std::mem::take(&mut text)));
                segments.push(Segment::Brackets {
                    column: *start,
                    ranges,
                });
                open = None;
            }
            (Some((_, inner)), _) => inner.push(ch),
            (None, '[') => open = Some((column, String::new())),
            (None, ']') => return Err(HostlistError::UnopenedBracket { column }),
            (None, ',' | ' ' | '\t' | '\n') => {
                if !text.is_empty() || !segments.is_empty() {
                    segments.push(Segment::Text(std::mem::take(&mut text)));
                    tokens.push((token_start, std::mem::take(&mut segments)));
                }
            }
            (None, _) => text.push(ch),
        }
    }
    if let Some((column, _)) = open {
        return Err(HostlistError::UnclosedBracket { column });
    }
    if !text.is_empty() || !segments.is_empty() {
        segments.push(Segment::Text(text));
        tokens.push((token_start, segments));
    }
    Ok(tokens)
}

/// Parses `lo`, `lo-hi`, comma separated; `column` is where the list starts.
fn parse_range_list(inner: &str, column: usize) -> Result<Vec<Numbers>, HostlistError> {
    let mut ranges = Vec::new();
    let mut item_column = column;
    for item in inner.split(',') {
        if ranges.len() == MAX_RANGES {
            return Err(HostlistError::TooMany {
                column,
                count: inner.split(',').count() as u64,
                what: "ranges in one pair of brackets",
                max: MAX_RANGES as u64,
            });
        }
        ranges.push(parse_range(item, item_column)?);
        item_column += item.chars().count() + 1;
    }
    Ok(ranges)
}

/// Parses one `lo` or `lo-hi`; the width is the digit count of `lo` as written.
fn parse_range(item: &str, column: usize) -> Result<Numbers, HostlistError> {
    if item.is_empty() {
        return Err(HostlistError::EmptyRange { column });
    }
    let (lo_text, hi_text) = match item.split_once('-') {
        Some((lo, hi)) => (lo, Some(hi)),
        None => (item, None),
    };
    if lo_text.is_empty() && hi_text.is_some() {
        return Err(HostlistError::Unexpected {
            column,
            found: "-".into(),
            expected: "a digit (negative numbers are not allowed)",
        });
    }
    let lo = parse_bound(lo_text, column)?;
    let hi = match hi_text {
        Some(hi_text) => parse_bound(hi_text, column + lo_text.chars().count() + 1)?,
        None => lo,
    };
    if lo > hi {
        return Err(HostlistError::Descending {
            column,
            lo: lo_text.to_owned(),
            hi: hi_text.unwrap_or_default().to_owned(),
        });
    }
    let count = hi - lo + 1;
    if count > MAX_RANGE {
        return Err(HostlistError::TooManyHosts {
            column,
            count,
            max: MAX_RANGE,
        });
    }
    Ok(Numbers {
        lo,
        hi,
        width: lo_text.len(),
    })
}

/// Parses the digits of one bound, naming the first character that is not a digit.
fn parse_bound(text: &str, column: usize) -> Result<u64, HostlistError> {
    if let Some((offset, ch)) = text.chars().enumerate().find(|(_, c)| !c.is_ascii_digit()) {
        let expected = match ch {
            ':' => "`,` or `]` (Slurm has no step syntax)",
            '-' => "a digit (negative numbers are not allowed)",
            'x' => "a digit (box ranges exist only on multi-dimensional clusters)",
            _ => "a digit",
        };
        return Err(HostlistError::Unexpected {
            column: column + offset,
            found: ch.to_string(),
            expected,
        });
    }
    if text.is_empty() {
        return Err(HostlistError::Unexpected {
            column,
            found: "end of range".into(),
            expected: "a digit",
        });
    }
    if text.len() > 18 {
        return Err(HostlistError::NumberTooLarge {
            column,
            found: text.to_owned(),
        });
    }
    // At most 18 ASCII digits always fits in u64.
    Ok(text.parse().unwrap_or(0))
}

/// Pushes the hosts of one token: prefix brackets expand with the rightmost outermost
/// (`_push_range_list`), then the host range; text after the last `]` is appended to every name.
fn push_token(mut segments: Vec<Segment>, list: &mut Hostlist) -> Result<(), HostlistError> {
    let suffix = match segments.pop() {
        Some(Segment::Text(text)) => text,
        _ => String::new(),
    };
    let Some(last_bracket) = segments
        .iter()
        .rposition(|segment| matches!(segment, Segment::Brackets { .. }))
    else {
        list.push_host(&suffix);
        return Ok(());
    };
    let host_ranges = match segments.remove(last_bracket) {
        Segment::Brackets { ranges, .. } => ranges,
        Segment::Text(_) => unreachable!("rposition found brackets"),
    };
    for prefix in expand_prefixes(&segments)? {
        for range in &host_ranges {
            if suffix.is_empty() {
                list.push_numbers(&prefix, range.lo, range.hi, range.width);
            } else {
                for value in range.lo..=range.hi {
                    list.push_single(&format!("{prefix}{value:0w$}{suffix}", w = range.width));
                }
            }
        }
    }
    Ok(())
}

/// Every prefix string, rightmost bracket varying slowest, as Slurm's recursion produces them.
fn expand_prefixes(segments: &[Segment]) -> Result<Vec<String>, HostlistError> {
    let mut prefixes = vec![String::new()];
    for segment in segments {
        match segment {
            Segment::Text(text) => prefixes.iter_mut().for_each(|p| p.push_str(text)),
            Segment::Brackets { column, ranges } => {
                let level: u64 = ranges.iter().map(|r| r.hi - r.lo + 1).sum();
                if level > MAX_PREFIX_CNT {
                    return Err(HostlistError::TooMany {
                        column: *column,
                        count: level,
                        what: "hosts in a prefix bracket",
                        max: MAX_PREFIX_CNT,
                    });
                }
                let total = level.saturating_mul(prefixes.len() as u64);
                if total > MAX_TOTAL_PREFIXES {
                    return Err(HostlistError::TooMany {
                        column: *column,
                        count: total,
                        what: "prefix combinations",
                        max: MAX_TOTAL_PREFIXES,
                    });
                }
                let mut next = Vec::with_capacity(total as usize);
                for range in ranges {
                    for value in range.lo..=range.hi {
                        for prefix in &prefixes {
                            next.push(format!("{prefix}{value:0w$}", w = range.width));
                        }
                    }
                }
                prefixes = next;
            }
        }
    }
    Ok(prefixes)
}

#[cfg(test)]
mod tests {
    use crate::expand;

    #[test]
    fn padding_comes_from_the_low_bound() {
        assert_eq!(
            expand("node[001-3]").unwrap(),
            ["node001", "node002", "node003"]
        );
        assert_eq!(expand("node[1-010]").unwrap().len(), 10);
        assert_eq!(expand("node[1-010]").unwrap()[9], "node10");
        assert_eq!(expand("n[01-2]").unwrap(), ["n01", "n02"]);
    }

    #[test]
    fn prefix_brackets_expand_rightmost_outermost() {
        let hosts = expand("a[0-1]b[2-3]c[4-5]").unwrap();
        assert_eq!(
            hosts,
            [
                "a0b2c4", "a0b2c5", "a1b2c4", "a1b2c5", "a0b3c4", "a0b3c5", "a1b3c4", "a1b3c5"
            ]
        );
    }

    #[test]
    fn suffix_empty_prefix_and_separators() {
        assert_eq!(expand("node[1-2].ib").unwrap(), ["node1.ib", "node2.ib"]);
        assert_eq!(expand("node[1-2]0").unwrap(), ["node10", "node20"]);
        // Hosts a suffix made stay single when printed, sorted or not (hostrange_create_single);
        // the same names given one by one are ranged.
        let suffixed = crate::Hostlist::parse("node[1-2]0").unwrap();
        assert_eq!(suffixed.to_string(), "node10,node20");
        let mut sorted = crate::Hostlist::parse("node[2,1]0,node[1-2].ib").unwrap();
        sorted.uniq();
        assert_eq!(sorted.to_string(), "node1.ib,node2.ib,node10,node20");
        assert_eq!(crate::compress(&["node10", "node20"]), "node[10,20]");
        assert_eq!(expand("[1,3-5]").unwrap(), ["1", "3", "4", "5"]);
        assert_eq!(expand(" ,a,,b\tc\n").unwrap(), ["a", "b", "c"]);
        assert_eq!(expand("tux1-3").unwrap(), ["tux1-3"]);
        assert!(expand("").unwrap().is_empty());
    }
}
