//! The association tree: accounts nest under `root`, users hang under accounts, each with shares.

use serde::Serialize;

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

/// RawShares of an association (sacctmgr `Fairshare=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
