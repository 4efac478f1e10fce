//! Owns no state: parses what users type (`-L`, `--gres`, `--dependency`, `--constraint`).
//!
//! The request syntaxes users type: `-L flat:2,natural:1`, `--gres=gpu:a100:2`, `--dependency`, `--constraint`.

use serde::Serialize;

use crate::job_id::JobId;

/// A request option that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A malformed item, with what was expected.
    #[error("invalid {what} \"{text}\": expected {expected}")]
    Invalid {
        /// Which option.
        what: &'static str,
        /// The offending text.
        text: String,
        /// What would have been accepted.
        expected: &'static str,
    },
}

fn invalid(what: &'static str, text: &str, expected: &'static str) -> ParseError {
    ParseError::Invalid {
        what,
        text: text.into(),
        expected,
    }
}

/// One `-L` item: a cluster license or an HRES resource with a count (or an HRES variable name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LicenseRequest {
    /// License or resource name.
    pub name: String,
    /// Count (1 when omitted).
    pub count: u64,
    /// A variable name used as the count (HRES `variables`), resolved at submit.
    pub variable: Option<String>,
}

/// Parses `-L/--licenses`: `name[:count]` items joined by `,`. Zero counts are dropped, as Slurm does.
pub fn parse_licenses(text: &str) -> Result<Vec<LicenseRequest>, ParseError> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if item.contains('|') || item.contains('(') {
            return Err(invalid("license", item, "name[:count] items joined by ','"));
        }
        let (name, count) = match item.split_once(':') {
            Some((name, count)) => (name, Some(count)),
            None => (item, None),
        };
        if name.is_empty() {
            return Err(invalid("license", item, "a license name"));
        }
        let req = match count {
            None => LicenseRequest {
                name: name.into(),
                count: 1,
                variable: None,
            },
            Some(c) if c.bytes().all(|b| b.is_ascii_digit()) && !c.is_empty() => {
                let count = c
                    .parse()
                    .map_err(|_| invalid("license", item, "a count that fits 64 bits"))?;
                LicenseRequest {
                    name: name.into(),
                    count,
                    variable: None,
                }
            }
            Some(var) => LicenseRequest {
                name: name.into(),
                count: 0,
                variable: Some(var.into()),
            },
        };
        if req.count > 0 || req.variable.is_some() {
            out.push(req);
        }
    }
    Ok(out)
}

/// Parses `-L` and `--resources` together: Slurm appends `--resources` to the licenses string,
/// so both name cluster licenses or HRES resources alike.
pub fn parse_licenses_and_resources(
    licenses: &str,
    resources: &str,
) -> Result<Vec<LicenseRequest>, ParseError> {
    parse_licenses(&format!("{licenses},{resources}"))
}

/// One `--gres` item, per node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GresRequest {
    /// GRES name (`gpu`).
    pub name: String,
    /// Type (`a100`), if given.
    pub gres_type: Option<String>,
    /// Count per node (1 when omitted).
    pub count: u32,
}

/// Parses `--gres`: `name[:type][:count]` items joined by `,`.
pub fn parse_gres(text: &str) -> Result<Vec<GresRequest>, ParseError> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let parts: Vec<&str> = item.split(':').collect();
        let is_count = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let count = |s: &str| {
            s.parse::<u32>()
                .map_err(|_| invalid("gres", item, "a count"))
        };
        let req = match parts.as_slice() {
            [name] => GresRequest {
                name: (*name).into(),
                gres_type: None,
                count: 1,
            },
            [name, c] if is_count(c) => GresRequest {
                name: (*name).into(),
                gres_type: None,
                count: count(c)?,
            },
            [name, t] => GresRequest {
                name: (*name).into(),
                gres_type: Some((*t).into()),
                count: 1,
            },
            [name, t, c] if is_count(c) => GresRequest {
                name: (*name).into(),
                gres_type: Some((*t).into()),
                count: count(c)?,
            },
            _ => return Err(invalid("gres", item, "name[:type][:count]")),
        };
        if req.name.is_empty() {
            return Err(invalid("gres", item, "a gres name"));
        }
        out.push(req);
    }
    Ok(out)
}

/// A dependency kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum DependencyKind {
    /// Start after the job ended with exit code 0 (`afterok`).
    AfterOk,
    /// Start after the job ended in any way (`afterany`).
    AfterAny,
    /// Start after the job ended in failure (`afternotok`); for a whole array, once every
    /// task ended and one failed.
    AfterNotOk,
    /// Each task of an array starts after the task of the same index of another array ended
    /// with exit code 0 (`aftercorr`).
    AfterCorr,
}

impl DependencyKind {
    /// The name users write.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AfterOk => "afterok",
            Self::AfterAny => "afterany",
            Self::AfterNotOk => "afternotok",
            Self::AfterCorr => "aftercorr",
        }
    }
}

/// One `--dependency` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Dependency {
    /// Kind.
    pub kind: DependencyKind,
    /// The job depended on, or the array (every task of it, or the one `task` names).
    pub job: JobId,
    /// One task of the array `job` (`afterok:123_4`); `None` for a job or a whole array.
    pub task: Option<u32>,
}

impl Dependency {
    /// A dependency on job (or whole array) `job`.
    pub fn on(kind: DependencyKind, job: JobId) -> Self {
        Self {
            kind,
            job,
            task: None,
        }
    }
}

/// Parses `--dependency=afterok:12:13,afterany:14,aftercorr:15,afterok:16_2` (all must hold;
/// `?` alternatives are refused); `16_2` is task 2 of array 16.
pub fn parse_dependencies(text: &str) -> Result<Vec<Dependency>, ParseError> {
    let mut out = Vec::new();
    if text.contains('?') {
        return Err(invalid(
            "dependency",
            text,
            "','-joined entries (the '?' form is not supported)",
        ));
    }
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let mut parts = item.split(':');
        let kind = match parts.next().unwrap_or_default() {
            "afterok" => DependencyKind::AfterOk,
            "afterany" => DependencyKind::AfterAny,
            "afternotok" => DependencyKind::AfterNotOk,
            "aftercorr" => DependencyKind::AfterCorr,
            _ => {
                return Err(invalid(
                    "dependency",
                    item,
                    "afterok, afterany, afternotok or aftercorr",
                ));
            }
        };
        let mut any = false;
        for id in parts {
            let bad = || invalid("dependency", item, "kind:jobid[_task][:jobid…]");
            let (job, task) = match id.split_once('_') {
                Some((job, task)) => (job, Some(task.parse().map_err(|_| bad())?)),
                None => (id, None),
            };
            let job = job.parse().map_err(|_| bad())?;
            out.push(Dependency { kind, job, task });
            any = true;
        }
        if !any {
            return Err(invalid("dependency", item, "kind:jobid[:jobid…]"));
        }
    }
    Ok(out)
}

/// A `--constraint` expression: features joined by `&` (all) or `|` (any), without brackets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Constraint {
    /// Every feature must be on the node.
    All(Vec<String>),
    /// At least one feature must be on the node.
    Any(Vec<String>),
}

impl Constraint {
    /// Parses `a&b`, `a,b` (also AND) or `a|b`; mixing `&` and `|` is refused.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let text = text.trim();
        let has_or = text.contains('|');
        let has_and = text.contains('&') || text.contains(',');
        if text.is_empty() || (has_or && has_and) || text.contains(['[', '(', '*']) {
            return Err(invalid(
                "constraint",
                text,
                "features joined by '&' or by '|'",
            ));
        }
        let split: Vec<String> = text
            .split(['&', ',', '|'])
            .map(|s| s.trim().to_string())
            .collect();
        if split.iter().any(String::is_empty) {
            return Err(invalid("constraint", text, "non-empty feature names"));
        }
        Ok(if has_or {
            Self::Any(split)
        } else {
            Self::All(split)
        })
    }

    /// Whether a node with `features` satisfies the expression.
    pub fn matches(&self, features: &[String]) -> bool {
        match self {
            Self::All(want) => want.iter().all(|f| features.contains(f)),
            Self::Any(want) => want.iter().any(|f| features.contains(f)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn licenses_default_to_one_and_drop_zero() {
        let l = parse_licenses("flat:2,natural,lic1:0,power:full_node").unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!((l[0].name.as_str(), l[0].count), ("flat", 2));
        assert_eq!((l[1].name.as_str(), l[1].count), ("natural", 1));
        assert_eq!(l[2].variable.as_deref(), Some("full_node"));
        assert!(parse_licenses("a:1|b:1").is_err());
    }

    #[test]
    fn gres_forms() {
        let g = parse_gres("gpu:a100:2,nic,gpu:3,gpu:v100").unwrap();
        assert_eq!(
            g[0],
            GresRequest {
                name: "gpu".into(),
                gres_type: Some("a100".into()),
                count: 2
            }
        );
        assert_eq!(g[1].count, 1);
        assert_eq!((g[2].gres_type.clone(), g[2].count), (None, 3));
        assert_eq!((g[3].gres_type.as_deref(), g[3].count), (Some("v100"), 1));
        assert!(parse_gres("gpu:a:b:c").is_err());
    }

    #[test]
    fn dependencies_and_constraints() {
        let d = parse_dependencies("afterok:3:4,afterany:5").unwrap();
        assert_eq!(d.len(), 3);
        assert_eq!(d[2], Dependency::on(DependencyKind::AfterAny, 5));
        let d = parse_dependencies("aftercorr:7,afterok:8_3").unwrap();
        assert_eq!(d[0], Dependency::on(DependencyKind::AfterCorr, 7));
        assert_eq!((d[1].job, d[1].task), (8, Some(3)));
        assert!(parse_dependencies("afterok:8_x").is_err());
        assert!(parse_dependencies("after:3").is_err());
        assert!(parse_dependencies("afterok").is_err());
        let c = Constraint::parse("ib&fat").unwrap();
        assert!(c.matches(&["fat".into(), "ib".into()]));
        assert!(!c.matches(&["ib".into()]));
        assert!(Constraint::parse("a|b").unwrap().matches(&["b".into()]));
        assert!(Constraint::parse("a|b&c").is_err());
    }
}
