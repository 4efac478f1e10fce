//! The ordered hostlist: pushing hosts and ranges, iterating names, printing, and the hostset view.

use std::cmp::Ordering;
use std::fmt;

use crate::HostlistError;
use crate::hostname::HostName;
use crate::natural::natural_cmp;
use crate::range::{HostRange, Numbers, combined_width};

/// An ordered list of hosts that keeps duplicates, stored as ranges like Slurm's `hostlist_t`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hostlist {
    ranges: Vec<HostRange>,
    count: u64,
}

impl Hostlist {
    /// Parses a hostlist expression (`node[01-32]`, `rack[0-3]_blade[0-41]`, `a,b c`).
    pub fn parse(expr: &str) -> Result<Self, HostlistError> {
        Self::parse_at_most(expr, u64::MAX)
    }

    /// Parses a hostlist expression that may name at most `max_hosts` hosts in all (duplicates
    /// count); a longer one is refused from its ranges alone, before any name is made.
    pub fn parse_at_most(expr: &str, max_hosts: u64) -> Result<Self, HostlistError> {
        let mut list = Self::default();
        crate::parse::parse_into(expr, &mut list, max_hosts)?;
        Ok(list)
    }

    /// Builds a hostlist from literal host names, in order.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Self {
        let mut list = Self::default();
        for name in names {
            list.push_host(name.as_ref());
        }
        list
    }

    /// Number of hosts, counting duplicates.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True when the list holds no host.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The length of its longest host name, bytes, from its ranges alone (no name is made), so
    /// a list from a request can be bounded before it is expanded.
    pub fn longest_name(&self) -> usize {
        self.ranges
            .iter()
            .map(|r| {
                let digits = r.numbers.map_or(0, |n| {
                    let hi = n.hi.checked_ilog10().map_or(1, |log| log as usize + 1);
                    hi.max(n.width)
                });
                r.prefix.len() + digits
            })
            .max()
            .unwrap_or(0)
    }

    /// The host names in order.
    pub fn iter(&self) -> impl Iterator<Item = String> + '_ {
        self.ranges.iter().flat_map(HostRange::names)
    }

    /// Appends one host name, splitting off its trailing number (`hostlist_push_host`).
    pub fn push_host(&mut self, name: &str) {
        let host = HostName::split(name);
        match host.number {
            Some((value, width)) => self.push_numbers(host.prefix, value, value, width),
            None => self.push_single(name),
        }
    }

    /// Appends one host name as it is, never ranged with its neighbours
    /// (`hostrange_create_single`): what a bracket with text after it makes, so `node[1-2]0`
    /// prints `node10,node20` where the same names given one by one print `node[10,20]`.
    pub(crate) fn push_single(&mut self, name: &str) {
        self.ranges.push(HostRange {
            prefix: name.to_owned(),
            numbers: None,
        });
        self.count += 1;
    }

    /// Appends `prefix` + `lo..=hi` at `width`, joining the last range when it continues it
    /// (`hostlist_push_range`).
    pub(crate) fn push_numbers(&mut self, prefix: &str, lo: u64, hi: u64, width: usize) {
        self.count += hi - lo + 1;
        if let Some(tail) = self.ranges.last_mut()
            && tail.prefix == prefix
            && let Some(tail_numbers) = tail.numbers.as_mut()
            && tail_numbers.hi.checked_add(1) == Some(lo)
            && let Some(joined) = combined_width(tail_numbers.lo, tail_numbers.width, lo, width)
        {
            tail_numbers.hi = hi;
            tail_numbers.width = joined;
            return;
        }
        self.ranges.push(HostRange {
            prefix: prefix.to_owned(),
            numbers: Some(Numbers { lo, hi, width }),
        });
    }

    /// Sorts naturally and removes duplicates, turning the list into a hostset (`hostlist_uniq`).
    pub fn uniq(&mut self) {
        // Each host with whether it stands alone (a single-host range keeps standing alone).
        let mut hosts: Vec<(String, bool)> = self
            .ranges
            .iter()
            .flat_map(|range| {
                range
                    .names()
                    .map(move |name| (name, range.numbers.is_none()))
            })
            .collect();
        hosts.sort_by(|a, b| host_order(a, b));
        hosts.dedup_by(|a, b| a.0 == b.0);
        let mut list = Self::default();
        for (name, single) in &hosts {
            if *single {
                list.push_single(name);
            } else {
                list.push_host(name);
            }
        }
        *self = list;
    }
}

/// Slurm's `hostrange_cmp` made total: prefixes naturally, names without a number first, then by width
/// and number (for widths that can share a range this is numeric order, otherwise narrower first).
/// A single host (`true`) is all prefix, as `hostrange_create_single` makes it.
fn host_order((a, a_single): &(String, bool), (b, b_single): &(String, bool)) -> Ordering {
    let (ha, hb) = (
        HostName::split_unless(a, *a_single),
        HostName::split_unless(b, *b_single),
    );
    natural_cmp(ha.prefix, hb.prefix)
        .then_with(|| ha.number.is_some().cmp(&hb.number.is_some()))
        .then_with(|| match (ha.number, hb.number) {
            (Some((na, wa)), Some((nb, wb))) => wa.cmp(&wb).then(na.cmp(&nb)),
            _ => Ordering::Equal,
        })
        .then_with(|| a.cmp(b))
}

impl fmt::Display for Hostlist {
    /// Prints the ranged form (`hostlist_ranged_string`): consecutive numbered ranges with one prefix
    /// share brackets, and a lone single-number range prints bare.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ranges = &self.ranges;
        let mut i = 0;
        while i < ranges.len() {
            if i > 0 {
                f.write_str(",")?;
            }
            let first = &ranges[i];
            let brackets = first.count() > 1
                || ranges
                    .get(i + 1)
                    .is_some_and(|next| first.shares_brackets_with(next));
            f.write_str(&first.prefix)?;
            if brackets {
                f.write_str("[")?;
            }
            f.write_str(&first.number_text())?;
            i += 1;
            while i < ranges.len() && ranges[i].shares_brackets_with(&ranges[i - 1]) {
                write!(f, ",{}", ranges[i].number_text())?;
                i += 1;
            }
            if brackets {
                f.write_str("]")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_duplicates_when_printing() {
        let list = Hostlist::from_names(&["n3", "n1", "n2", "n1"]);
        assert_eq!(list.to_string(), "n[3,1-2,1]");
        assert_eq!(list.len(), 4);
    }

    #[test]
    fn uniq_sorts_naturally_and_dedups() {
        let mut list = Hostlist::from_names(&["n3", "n1", "n2", "n1", "n10"]);
        list.uniq();
        assert_eq!(list.to_string(), "n[1-3,10]");
        let mut widths = Hostlist::from_names(&["node01", "node1"]);
        widths.uniq();
        assert_eq!(widths.to_string(), "node[1,01]");
    }

    #[test]
    fn widths_merge_only_when_padding_agrees() {
        assert_eq!(
            Hostlist::from_names(&["node9", "node10"]).to_string(),
            "node[9-10]"
        );
        assert_eq!(
            Hostlist::from_names(&["node09", "node10"]).to_string(),
            "node[09-10]"
        );
        assert_eq!(
            Hostlist::from_names(&["node1", "node02"]).to_string(),
            "node[1,02]"
        );
    }

    #[test]
    fn the_longest_name_is_read_from_the_ranges() {
        for expr in [
            "n[1-2],login,gw",
            "node[08-10]",
            "a[7-123]x",
            "p[1-65536]",
            "",
            "z[0]",
        ] {
            let list = Hostlist::parse(expr).unwrap();
            let made = list.iter().map(|n| n.len()).max().unwrap_or(0);
            assert_eq!(list.longest_name(), made, "{expr}");
        }
    }

    #[test]
    fn literal_names_never_share_brackets() {
        let list = Hostlist::from_names(&["login", "n1", "n2", "gw", "n5"]);
        assert_eq!(list.to_string(), "login,n[1-2],gw,n5");
    }
}
