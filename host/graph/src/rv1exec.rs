//! RFC 20 R version 1 as Fluxion's `rv1exec` reader takes it for `update` and `partial-cancel`:
//! `execution.R_lite` (rank idsets with `children` idsets per type) and `execution.nodelist`.

use serde_json::Value;

/// Most ids one R may name in all: an idset such as `0-4294967295` would otherwise expand
/// into billions of entries.
pub const MAX_IDS: usize = 1 << 20;

/// Why an R document was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rv1ExecError {
    /// Not JSON.
    #[error("R is not JSON: {0}")]
    Json(String),
    /// A required member is missing or has the wrong type.
    #[error("R has no {0}")]
    Missing(&'static str),
    /// `version` is not 1.
    #[error("R version {0} is not supported (expected 1)")]
    Version(i64),
    /// An idset could not be decoded.
    #[error("invalid idset {0:?}")]
    Idset(String),
    /// More ids than [`MAX_IDS`].
    #[error("R names more than {MAX_IDS} ids")]
    TooManyIds,
    /// The nodelist is not a hostlist.
    #[error("invalid nodelist entry {0:?}: {1}")]
    Nodelist(String, String),
}

/// One `R_lite` entry: ranks sharing the same children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RliteEntry {
    /// The ranks, ascending.
    pub ranks: Vec<u32>,
    /// Per child type (in document order), its ids ascending; absent when the entry has no
    /// `children` member.
    pub children: Option<Vec<(String, Vec<u32>)>>,
}

/// An R version 1 document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rv1Exec {
    /// `execution.R_lite`, in document order.
    pub entries: Vec<RliteEntry>,
    /// `execution.nodelist` expanded to host names, if present.
    pub nodelist: Option<Vec<String>>,
}

impl Rv1Exec {
    /// Reads an R document; `nodelist` and `children` may be absent (a partial cancel needs
    /// only ranks).
    pub fn parse(text: &str) -> Result<Self, Rv1ExecError> {
        let doc: Value =
            serde_json::from_str(text).map_err(|e| Rv1ExecError::Json(e.to_string()))?;
        let version = doc
            .get("version")
            .and_then(Value::as_i64)
            .ok_or(Rv1ExecError::Missing("integer version"))?;
        if version != 1 {
            return Err(Rv1ExecError::Version(version));
        }
        let execution = doc
            .get("execution")
            .and_then(Value::as_object)
            .ok_or(Rv1ExecError::Missing("execution object"))?;
        let rlite = execution
            .get("R_lite")
            .and_then(Value::as_array)
            .ok_or(Rv1ExecError::Missing("execution.R_lite array"))?;
        let mut budget = MAX_IDS;
        let mut entries = Vec::with_capacity(rlite.len());
        for entry in rlite {
            let ranks = entry
                .get("rank")
                .and_then(Value::as_str)
                .ok_or(Rv1ExecError::Missing("R_lite[].rank string"))?;
            let ranks = decode_idset(ranks, &mut budget)?;
            let children = match entry.get("children") {
                None => None,
                Some(c) => {
                    let c = c
                        .as_object()
                        .ok_or(Rv1ExecError::Missing("R_lite[].children object"))?;
                    let mut list = Vec::with_capacity(c.len());
                    for (kind, ids) in c {
                        let ids = ids
                            .as_str()
                            .ok_or(Rv1ExecError::Missing("R_lite[].children idset string"))?;
                        list.push((kind.clone(), decode_idset(ids, &mut budget)?));
                    }
                    Some(list)
                }
            };
            entries.push(RliteEntry { ranks, children });
        }
        let nodelist = match execution.get("nodelist") {
            None => None,
            Some(list) => {
                let list = list
                    .as_array()
                    .ok_or(Rv1ExecError::Missing("execution.nodelist array"))?;
                let mut hosts = Vec::new();
                for item in list {
                    let expr = item
                        .as_str()
                        .ok_or(Rv1ExecError::Missing("execution.nodelist strings"))?;
                    let names = sluice_hostlist::expand_at_most(expr, budget as u64)
                        .map_err(|e| Rv1ExecError::Nodelist(expr.to_owned(), e.to_string()))?;
                    budget = budget.saturating_sub(names.len());
                    hosts.extend(names);
                }
                Some(hosts)
            }
        };
        Ok(Rv1Exec { entries, nodelist })
    }

    /// Every rank the document names, ascending and without repeats.
    pub fn ranks(&self) -> Vec<u32> {
        let mut all: Vec<u32> = self
            .entries
            .iter()
            .flat_map(|e| e.ranks.iter().copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// Decodes a flux idset (`0-3,7`, optionally in brackets) into ascending ids without
/// repeats, spending at most `budget` ids.
pub fn decode_idset(text: &str, budget: &mut usize) -> Result<Vec<u32>, Rv1ExecError> {
    let bad = || Rv1ExecError::Idset(text.to_owned());
    let inner = match text.strip_prefix('[') {
        Some(rest) => rest.strip_suffix(']').ok_or_else(bad)?,
        None => text,
    };
    let mut ids = Vec::new();
    if inner.is_empty() {
        return Ok(ids);
    }
    for part in inner.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (number(a).ok_or_else(bad)?, number(b).ok_or_else(bad)?),
            None => {
                let n = number(part).ok_or_else(bad)?;
                (n, n)
            }
        };
        if hi < lo {
            return Err(bad());
        }
        let count = (hi - lo) as usize + 1;
        if count > *budget {
            return Err(Rv1ExecError::TooManyIds);
        }
        *budget -= count;
        ids.extend(lo..=hi);
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

fn number(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Splits a host name into its basename and numeric suffix (`node12` → `node`, 12), as
/// Fluxion's `get_hostname_suffix`/`get_host_basename` do; `None` without a suffix.
pub fn split_hostname(host: &str) -> Option<(&str, i64)> {
    let digits = host.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let (base, id) = host.split_at(host.len() - digits);
    Some((base, id.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::{MAX_IDS, Rv1Exec, Rv1ExecError, decode_idset, split_hostname};

    #[test]
    fn idsets_decode_ranges_lists_and_brackets() {
        let mut budget = MAX_IDS;
        assert_eq!(
            decode_idset("0-2,5", &mut budget).unwrap(),
            vec![0, 1, 2, 5]
        );
        assert_eq!(decode_idset("[3,1]", &mut budget).unwrap(), vec![1, 3]);
        assert_eq!(decode_idset("", &mut budget).unwrap(), Vec::<u32>::new());
        assert!(decode_idset("2-1", &mut budget).is_err());
        assert!(decode_idset("a", &mut budget).is_err());
        assert!(decode_idset("-1", &mut budget).is_err());
        let mut small = 3;
        assert_eq!(
            decode_idset("0-3", &mut small),
            Err(Rv1ExecError::TooManyIds)
        );
    }

    #[test]
    fn r_lite_and_nodelist_are_read_in_document_order() {
        let r = Rv1Exec::parse(
            r#"{"version":1,"execution":{"R_lite":[{"rank":"1","children":{"core":"0-1","gpu":"0"}},{"rank":"0","children":{"core":"3"}}],"nodelist":["node[1,0]"]}}"#,
        )
        .unwrap();
        assert_eq!(r.ranks(), vec![0, 1]);
        assert_eq!(r.entries[0].ranks, vec![1]);
        assert_eq!(
            r.entries[0].children.as_ref().unwrap()[1],
            ("gpu".to_owned(), vec![0])
        );
        assert_eq!(r.nodelist.unwrap(), vec!["node1", "node0"]);
        assert_eq!(
            Rv1Exec::parse(r#"{"version":2,"execution":{"R_lite":[]}}"#),
            Err(Rv1ExecError::Version(2))
        );
        assert!(matches!(Rv1Exec::parse("{"), Err(Rv1ExecError::Json(_))));
    }

    #[test]
    fn host_names_split_at_their_numeric_suffix() {
        assert_eq!(split_hostname("node12"), Some(("node", 12)));
        assert_eq!(split_hostname("fluke"), None);
    }
}
