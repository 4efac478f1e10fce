//! Resource limits as sacctmgr writes them: TRES amounts, association limits, and enforcement.

use serde::{Deserialize, Serialize};

use super::TimeLimit;

/// TRES amounts named in one limit (sacctmgr `cpu=4,mem=10G,node=2,gres/gpu=2,license/matlab=1`);
/// a TRES left out is not limited.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TresLimits {
    /// `cpu=`.
    pub cpu: Option<u64>,
    /// `mem=`, in MB.
    pub mem_mb: Option<u64>,
    /// `node=`.
    pub node: Option<u64>,
    /// `gres/<name>=` (the untyped count of a GRES name), in the order written.
    pub gres: Vec<(String, u64)>,
    /// `license/<name>=` (a cluster license of `Licenses=`), in the order written.
    pub licenses: Vec<(String, u64)>,
}

/// Why a TRES string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TresError {
    /// An item without `=`.
    #[error("found `{0}`, expected name=count")]
    NotPair(String),
    /// A TRES sluice does not track.
    #[error("found TRES `{0}`, expected cpu, mem, node, gres/<name> or license/<name>")]
    UnknownTres(String),
    /// A count that is not a number (with K/M/G/T suffix for mem).
    #[error("found count `{0}`, expected a whole number")]
    BadCount(String),
}

impl TresLimits {
    /// True when no TRES is limited.
    pub fn is_empty(&self) -> bool {
        self.cpu.is_none()
            && self.mem_mb.is_none()
            && self.node.is_none()
            && self.gres.is_empty()
            && self.licenses.is_empty()
    }

    /// Reads sacctmgr's form: comma-separated `name=count`; `mem` takes M (default), G or T
    /// suffixes; `-1` (sacctmgr's "clear") leaves the TRES unlimited.
    pub fn parse(text: &str) -> Result<Self, TresError> {
        let mut out = Self::default();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, count) = item
                .split_once('=')
                .ok_or_else(|| TresError::NotPair(item.to_owned()))?;
            let written = name.trim();
            let name = written.to_ascii_lowercase();
            let count = count.trim();
            if count == "-1" {
                continue;
            }
            let value = if name == "mem" {
                parse_mb(count)?
            } else {
                count
                    .parse::<u64>()
                    .map_err(|_| TresError::BadCount(count.to_owned()))?
            };
            match name.as_str() {
                "cpu" => out.cpu = Some(value),
                "mem" => out.mem_mb = Some(value),
                "node" => out.node = Some(value),
                _ => match (name.strip_prefix("gres/"), name.strip_prefix("license/")) {
                    (Some(gres), _) if !gres.is_empty() => out.gres.push((gres.to_owned(), value)),
                    // License names keep their case: `Licenses=` names are case-sensitive.
                    (_, Some(lic)) if !lic.is_empty() => {
                        let own = &written[written.len() - lic.len()..];
                        out.licenses.push((own.to_owned(), value))
                    }
                    _ => return Err(TresError::UnknownTres(name)),
                },
            }
        }
        Ok(out)
    }
}

impl std::fmt::Display for TresLimits {
    /// sacctmgr's form, the inverse of [`TresLimits::parse`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut items = Vec::new();
        if let Some(c) = self.cpu {
            items.push(format!("cpu={c}"));
        }
        if let Some(m) = self.mem_mb {
            items.push(format!("mem={m}M"));
        }
        if let Some(n) = self.node {
            items.push(format!("node={n}"));
        }
        for (name, count) in &self.gres {
            items.push(format!("gres/{name}={count}"));
        }
        for (name, count) in &self.licenses {
            items.push(format!("license/{name}={count}"));
        }
        f.write_str(&items.join(","))
    }
}

/// A memory amount in MB: a number with an optional K, M, G or T suffix (×1024 steps, M default).
fn parse_mb(text: &str) -> Result<u64, TresError> {
    let bad = || TresError::BadCount(text.to_owned());
    let (digits, unit) = match text.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&text[..i], text[i..].to_ascii_uppercase()),
        None => (text, String::new()),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let value = match unit.as_str() {
        "" | "M" | "MB" => Some(n),
        "K" | "KB" => Some(n.div_ceil(1024)),
        "G" | "GB" => n.checked_mul(1024),
        "T" | "TB" => n.checked_mul(1024 * 1024),
        _ => None,
    };
    value.ok_or_else(bad)
}

/// Limits of one association (sacctmgr's names). `Max*` limits an account sets are inherited by
/// the associations under it that set none; `Grp*` limits count every job in the subtree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AssocLimits {
    /// `MaxJobs`: running jobs of the association.
    pub max_jobs: Option<u32>,
    /// `MaxSubmitJobs`: pending plus running jobs of the association.
    pub max_submit_jobs: Option<u32>,
    /// `MaxWall`: longest time limit per job.
    pub max_wall: Option<TimeLimit>,
    /// `MaxTRES` (per job).
    pub max_tres_per_job: TresLimits,
    /// `MaxTRESMins` (per job): TRES × time limit in minutes.
    pub max_tres_mins_per_job: TresLimits,
    /// `GrpTRES`: TRES in use by the subtree's running jobs.
    pub grp_tres: TresLimits,
    /// `GrpJobs`: running jobs of the subtree.
    pub grp_jobs: Option<u32>,
    /// `GrpSubmitJobs`: pending plus running jobs of the subtree.
    pub grp_submit_jobs: Option<u32>,
    /// `MaxTRESPerNode`: TRES a job may ask on any one node.
    pub max_tres_per_node: TresLimits,
    /// `GrpTRESMins`: TRES-minutes the subtree's jobs used (decayed with
    /// PriorityDecayHalfLife, running jobs' accrued time included).
    pub grp_tres_mins: TresLimits,
    /// `GrpTRESRunMins`: TRES × remaining time limit of the subtree's running jobs.
    pub grp_tres_run_mins: TresLimits,
    /// `GrpWall`: wall-clock time the subtree's jobs ran (decayed like usage).
    pub grp_wall: Option<TimeLimit>,
    /// `QOS` (sacctmgr's `QosLevel`): the QOS a job under the association may ask;
    /// inherited from the nearest association above that sets a list, any QOS when none does.
    pub qos: Option<Vec<super::QosId>>,
}

/// `AccountingStorageEnforce`: what the controller enforces of the association and QOS records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountingEnforce {
    /// `associations`: a job needs an association (unknown users and accounts are refused).
    pub associations: bool,
    /// `limits`: association and QOS limits hold jobs (implies `associations`).
    pub limits: bool,
    /// `qos`: a job's QOS must exist (unknown QOS are refused).
    pub qos: bool,
    /// `safe`: a job whose `MaxTRESMins` could be exceeded does not start (accepted; sluice
    /// checks per-job TRES minutes against the time limit in every case).
    pub safe: bool,
    /// sluice's own `CreateMissingAssociations`: with associations enforced, a user the tree
    /// lacks is added under the account it names (or root); an account the tree lacks is
    /// still refused.
    #[serde(default)]
    pub create_missing_users: bool,
}

impl AccountingEnforce {
    /// Nothing enforced (slurm.conf's default).
    pub const NONE: Self = Self {
        associations: false,
        limits: false,
        qos: false,
        safe: false,
        create_missing_users: false,
    };

    /// Associations, limits and QOS enforced (the sluice cluster file's default).
    pub const ALL: Self = Self {
        associations: true,
        limits: true,
        qos: true,
        safe: false,
        create_missing_users: false,
    };

    /// Reads the comma-separated flag list (`associations,limits,qos,safe`, `all`, `none`);
    /// `Err` names the first flag not understood. Flags sluice has nothing to enforce for
    /// (`nojobs`, `nosteps`, `wckeys`) are accepted and ignored.
    pub fn parse<'a>(flags: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut out = Self::NONE;
        for flag in flags {
            match flag.trim().to_ascii_lowercase().as_str() {
                "" | "none" | "nojobs" | "nosteps" | "wckeys" => {}
                "associations" => out.associations = true,
                "limits" => {
                    out.limits = true;
                    out.associations = true;
                }
                "qos" => {
                    out.qos = true;
                    out.associations = true;
                }
                "safe" => {
                    out.safe = true;
                    out.limits = true;
                    out.associations = true;
                }
                "all" => {
                    out = Self {
                        safe: true,
                        ..Self::ALL
                    }
                }
                other => return Err(other.to_owned()),
            }
        }
        Ok(out)
    }

    /// The flags as a list, the inverse of [`AccountingEnforce::parse`].
    pub fn flags(self) -> Vec<String> {
        [
            (self.associations, "associations"),
            (self.limits, "limits"),
            (self.qos, "qos"),
            (self.safe, "safe"),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| name.to_owned())
        .collect()
    }
}

impl Default for AccountingEnforce {
    fn default() -> Self {
        Self::ALL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tres_strings_read_as_sacctmgr_writes_them() {
        let t = TresLimits::parse("cpu=64,mem=10G,node=2,gres/gpu=4").unwrap();
        assert_eq!(t.cpu, Some(64));
        assert_eq!(t.mem_mb, Some(10 * 1024));
        assert_eq!(t.node, Some(2));
        assert_eq!(t.gres, vec![("gpu".to_owned(), 4)]);
        assert_eq!(TresLimits::parse(&t.to_string()).unwrap(), t);
        let l = TresLimits::parse("license/MatLab=2,cpu=1").unwrap();
        assert_eq!(l.licenses, vec![("MatLab".to_owned(), 2)]);
        assert_eq!(TresLimits::parse(&l.to_string()).unwrap(), l);
        assert!(matches!(
            TresLimits::parse("license/=2"),
            Err(TresError::UnknownTres(_))
        ));
        assert_eq!(TresLimits::parse("cpu=-1").unwrap(), TresLimits::default());
        assert!(matches!(
            TresLimits::parse("energy=5"),
            Err(TresError::UnknownTres(_))
        ));
        assert!(matches!(
            TresLimits::parse("cpu"),
            Err(TresError::NotPair(_))
        ));
    }

    #[test]
    fn enforcement_flags_imply_associations() {
        let e = AccountingEnforce::parse(["limits"]).unwrap();
        assert!(e.associations && e.limits && !e.qos);
        assert_eq!(AccountingEnforce::parse(["bogus"]), Err("bogus".into()));
        assert_eq!(
            AccountingEnforce::parse([]).unwrap(),
            AccountingEnforce::NONE
        );
    }
}
