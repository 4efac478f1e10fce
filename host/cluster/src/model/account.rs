//! The association tree: accounts nest under `root`, users hang under accounts, each with shares.

use serde::{Deserialize, Serialize};

/// Index of an association in [`super::Cluster::associations`]; 0 is `root`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct AssocId(pub u32);

impl AssocId {
    /// The `root` account.
    pub const ROOT: AssocId = AssocId(0);

    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Whether an association is an account or a user under an account.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum AssocKind {
    /// An account (`root` included).
    Account(String),
    /// A user association; the account is its parent.
    User(String),
}

/// RawShares of an association (sacctmgr `Fairshare=`); in files a number or `"parent"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shares {
    /// A share count (default 1).
    Raw(u32),
    /// `Fairshare=parent`: compete as part of the parent.
    Parent,
}

/// One node of the association tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Association {
    /// Account or user.
    pub kind: AssocKind,
    /// Parent account; `None` only for `root`.
    pub parent: Option<AssocId>,
    /// Children in configuration order (sub-accounts and users).
    pub children: Vec<AssocId>,
    /// RawShares.
    pub shares: Shares,
    /// Starting raw usage (CPU-seconds, already decayed), for migrating a site or testing fairshare.
    pub raw_usage: f64,
    /// Association priority (`Priority`, default 0).
    pub priority: u32,
    /// Default QOS of jobs under this association, inherited from the parent when `None`.
    pub default_qos: Option<super::QosId>,
    /// Limits set on this association itself (inheritance is the enforcer's).
    pub limits: super::AssocLimits,
}

impl Association {
    /// The account or user name.
    pub fn name(&self) -> &str {
        match &self.kind {
            AssocKind::Account(name) | AssocKind::User(name) => name,
        }
    }

    /// True for a user association.
    pub fn is_user(&self) -> bool {
        matches!(self.kind, AssocKind::User(_))
    }
}

impl Default for Shares {
    fn default() -> Self {
        Self::Raw(1)
    }
}

impl Serialize for Shares {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Raw(n) => s.serialize_u32(*n),
            Self::Parent => s.serialize_str("parent"),
        }
    }
}

impl<'de> Deserialize<'de> for Shares {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(i64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => u32::try_from(n).map(Self::Raw).map_err(|_| {
                serde::de::Error::custom(format!(
                    "found {n}, expected shares from 0 to 4294967295 or \"parent\""
                ))
            }),
            Raw::Text(text) if text.eq_ignore_ascii_case("parent") => Ok(Self::Parent),
            Raw::Text(text) => Err(serde::de::Error::custom(format!(
                "found \"{text}\", expected a share count or \"parent\""
            ))),
        }
    }
}
