//! The query string of `GET /v1/jobs`.

use serde::{Deserialize, Serialize};

/// squeue's filters, each a comma-separated list; absent means no filter (states: pending and
/// running, squeue's default).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JobQuery {
    /// `--user`: user names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// `--states`: Slurm state names or codes (`PD,R`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub states: Option<String>,
    /// `--jobs`: job ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<String>,
}

impl JobQuery {
    /// Every state a job can be in, for `--states all`.
    pub const ALL_STATES: &'static str = "PD,CF,R,CG,CD,F,CA,TO,NF";
}

/// The items of a comma-separated filter, trimmed, empty ones dropped.
pub fn items(list: Option<&str>) -> impl Iterator<Item = &str> {
    list.into_iter()
        .flat_map(|s| s.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
}
