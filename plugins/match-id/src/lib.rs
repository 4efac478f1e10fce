//! Fluxion's multilevel-ID match policies, one source for the bundle's component and the graph
//! crate's native policies: `high`, `low`, `hinode`, `lonode`, `hinodex`, `lonodex`, `first`,
//! `firstnodex` and custom `policy=high|low node_centric=… node_exclusive=… stop_on_1_matches=…`
//! strings (`dfu_match_policy_factory.cpp`).
//!
//! A vertex scores `1 + factors + id + 1`: its own part is `id + 1`, and node-centric policies
//! give every `node` vertex the factor `((id + 1) + 1) × 10000 + |uniq_id mod 10000 − 1|`
//! (`score_factor_t::calc_factor`), added to the scores of the vertices below it. Both parts
//! depend only on the vertices' types and ids, which is all the policy reads.
//!
//! As a component the policy is chosen by the setting `policy` (default `first`), which
//! `sluice resource-query --match-policy-file` sets to its `-P` value.

use sluice_sdk::*;

/// Why a policy name or option string names no ID policy, or a graph cannot be scored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// The name is neither a known policy nor a valid custom policy string.
    #[error("unknown match policy: {0}")]
    Unknown(String),
    /// A custom policy string names an option resource-query does not have.
    #[error("invalid policy option: {0}")]
    InvalidOption(String),
    /// A custom policy option's value is not `true`/`false`.
    #[error("policy option {key} requires true or false, got {value}")]
    InvalidValue {
        /// The option.
        key: String,
        /// The refused value.
        value: String,
    },
    /// A node factor overflowed 64-bit scores (a vertex id too large).
    #[error("score factor of vertex {0} overflows")]
    Overflow(u32),
}

/// One policy of the ID family, parsed from its name or option string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdFamily {
    name: String,
    high: bool,
    node_centric: bool,
    node_exclusive: bool,
    stop_on_first: bool,
}

/// The named policies and the option strings they stand for (`dfu_match_policy_factory.cpp`).
const NAMED: [(&str, &str); 8] = [
    (
        "first",
        "policy=high node_centric=true stop_on_1_matches=true",
    ),
    (
        "firstnodex",
        "policy=high node_centric=true node_exclusive=true stop_on_1_matches=true",
    ),
    ("high", "policy=high"),
    ("low", "policy=low"),
    ("lonode", "policy=low node_centric=true"),
    ("hinode", "policy=high node_centric=true"),
    (
        "lonodex",
        "policy=low node_centric=true node_exclusive=true",
    ),
    (
        "hinodex",
        "policy=high node_centric=true node_exclusive=true",
    ),
];

impl IdFamily {
    /// The policy `name` stands for: a named policy or a custom option string.
    pub fn from_name(name: &str) -> Result<Self, IdError> {
        let options = NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(name, |(_, o)| *o);
        let mut policy = IdFamily {
            name: name.to_owned(),
            high: false,
            node_centric: false,
            node_exclusive: false,
            stop_on_first: false,
        };
        let mut has_order = false;
        for option in options.split(' ') {
            let (key, value) = option.split_once('=').unwrap_or((option, ""));
            let flag = match value {
                "true" => true,
                "false" => false,
                _ if key == "policy" => false,
                _ if ["node_centric", "stop_on_1_matches", "node_exclusive"].contains(&key) => {
                    return Err(IdError::InvalidValue {
                        key: key.into(),
                        value: value.into(),
                    });
                }
                _ => return Err(IdError::InvalidOption(key.into())),
            };
            match key {
                "policy" if value == "high" || value == "low" => {
                    policy.high = value == "high";
                    has_order = true;
                }
                "policy" => return Err(IdError::Unknown(name.into())),
                "node_centric" => policy.node_centric = flag,
                "node_exclusive" => policy.node_exclusive = flag,
                "stop_on_1_matches" => policy.stop_on_first = flag,
                _ => return Err(IdError::InvalidOption(key.into())),
            }
        }
        if !has_order {
            return Err(IdError::Unknown(name.into()));
        }
        Ok(policy)
    }

    /// The name the policy was chosen by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How the traverser uses this policy's scores.
    pub fn traits(&self) -> MatchTraits {
        MatchTraits {
            prefers_higher: self.high,
            slot_prefers_higher: self.high,
            ranks_root_by_runs: false,
            stop_on_first_match: self.stop_on_first,
            exclusive_types: if self.node_exclusive {
                vec!["node".into()]
            } else {
                Vec::new()
            },
            reads_properties: false,
        }
    }

    /// Scores every vertex: `own` is `id + 1`; node-centric policies add each `node`'s factor.
    pub fn score(&self, vertices: &VertexTable) -> Result<VertexScores, IdError> {
        let n = vertices.len();
        let node = vertices.type_index("node");
        let own = vertices.ids.iter().map(|id| id.wrapping_add(1)).collect();
        let mut factor = vec![0; if self.node_centric { n } else { 0 }];
        if self.node_centric {
            for (v, (&kind, &id)) in vertices.kinds.iter().zip(&vertices.ids).enumerate() {
                if Some(kind) == node {
                    let v = v as u32;
                    factor[v as usize] = node_factor(id, v).ok_or(IdError::Overflow(v))?;
                }
            }
        }
        Ok(VertexScores { own, factor })
    }
}

/// Fluxion's `score_factor_t::calc_factor(id + 1, uniq_id)` with `add_by` 1, `multiply_by` 10000.
fn node_factor(id: i64, uniq_id: u32) -> Option<i64> {
    let base = id.checked_add(1)?;
    if base < 0 {
        return None;
    }
    let mul = base.checked_add(1)?.checked_mul(10_000)?;
    let tie = (i64::from(uniq_id) % 10_000 - 1).abs();
    mul.checked_add(tie)
}

/// The bundle's match policy component: the ID policy its `policy` setting names.
#[derive(Debug, Clone)]
pub struct MatchId(Result<IdFamily, IdError>);

impl FromSettings for MatchId {
    /// `policy = "<name or option string>"`, default `first` (resource-query's default `-P`).
    fn from_settings(settings: &Settings) -> Self {
        MatchId(IdFamily::from_name(
            settings.text("policy").unwrap_or("first"),
        ))
    }
}

impl VertexScoring for MatchId {
    fn describe(&self) -> Result<MatchTraits, String> {
        self.0
            .as_ref()
            .map(IdFamily::traits)
            .map_err(ToString::to_string)
    }

    fn score(&self, vertices: &VertexTable) -> Result<VertexScores, String> {
        let family = self.0.as_ref().map_err(ToString::to_string)?;
        family.score(vertices).map_err(|e| e.to_string())
    }
}

#[cfg(feature = "export")]
export_vertex_scoring!(MatchId);

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> VertexTable {
        // cluster0 → node3, node7 → core0 each.
        VertexTable {
            types: vec!["cluster".into(), "node".into(), "core".into()],
            kinds: vec![0, 1, 2, 1, 2],
            ids: vec![0, 3, 0, 7, 0],
            properties: Vec::new(),
        }
    }

    #[test]
    fn named_policies_stand_for_their_option_strings() {
        let first = IdFamily::from_name("first").unwrap().traits();
        assert!(first.prefers_higher && first.stop_on_first_match);
        assert!(first.exclusive_types.is_empty());
        let lonodex = IdFamily::from_name("lonodex").unwrap().traits();
        assert!(!lonodex.prefers_higher && !lonodex.stop_on_first_match);
        assert_eq!(lonodex.exclusive_types, vec!["node".to_string()]);
        let custom = IdFamily::from_name("policy=low node_exclusive=true").unwrap();
        assert_eq!(custom.traits(), lonodex);
    }

    #[test]
    fn bad_names_and_options_are_refused_with_resource_query_words() {
        // A word that is no named policy is read as a custom string's option.
        assert_eq!(
            IdFamily::from_name("medium").unwrap_err(),
            IdError::InvalidOption("medium".into())
        );
        assert_eq!(
            IdFamily::from_name("policy=medium").unwrap_err(),
            IdError::Unknown("policy=medium".into())
        );
        assert_eq!(
            IdFamily::from_name("node_centric=true").unwrap_err(),
            IdError::Unknown("node_centric=true".into())
        );
        assert_eq!(
            IdFamily::from_name("policy=high colour=true").unwrap_err(),
            IdError::InvalidOption("colour".into())
        );
        assert_eq!(
            IdFamily::from_name("policy=high node_centric=yes")
                .unwrap_err()
                .to_string(),
            "policy option node_centric requires true or false, got yes"
        );
    }

    #[test]
    fn node_centric_policies_add_a_factor_on_nodes_only() {
        let high = IdFamily::from_name("high")
            .unwrap()
            .score(&table())
            .unwrap();
        assert_eq!(high.own, vec![1, 4, 1, 8, 1]);
        assert!(high.factor.is_empty());
        let hinode = IdFamily::from_name("hinode")
            .unwrap()
            .score(&table())
            .unwrap();
        // node3 (uniq id 1): (3 + 2) × 10000 + |1 − 1|; node7 (uniq id 3): 9 × 10000 + 2.
        assert_eq!(hinode.factor, vec![0, 50_000, 0, 90_002, 0]);
    }

    #[test]
    fn a_component_with_an_unknown_policy_setting_says_so_when_described() {
        let settings =
            Settings::default().with("policy", SettingValue::Text("policy=bogus".into()));
        let policy = MatchId::from_settings(&settings);
        assert_eq!(
            policy.describe().unwrap_err(),
            "unknown match policy: policy=bogus"
        );
        assert!(
            MatchId::from_settings(&Settings::default())
                .describe()
                .is_ok()
        );
    }

    #[test]
    fn an_id_too_large_for_a_factor_is_refused() {
        let mut t = table();
        t.ids[1] = i64::MAX - 1;
        let err = IdFamily::from_name("lonode")
            .unwrap()
            .score(&t)
            .unwrap_err();
        assert_eq!(err, IdError::Overflow(1));
    }
}
