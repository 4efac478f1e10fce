//! Slurm hostlist expressions: expand, compress and sort node names with `src/common/hostlist.c` semantics.
//!
//! A [`Hostlist`] keeps insertion order and duplicates (like `scontrol show hostlist`); [`Hostlist::uniq`]
//! turns it into a hostset (natural sort, duplicates removed, like `scontrol show hostlistsorted`).

mod error;
mod hostname;
mod list;
mod natural;
mod parse;
mod range;

pub use error::HostlistError;
pub use list::Hostlist;
pub use natural::natural_cmp;

/// Most hosts one bracketed range may hold (`MAX_RANGE` in Slurm); `node[1-65536]` is the largest accepted.
pub const MAX_RANGE: u64 = 65_536;

/// Most hosts the prefix brackets of one token may produce at one bracket level (`MAX_PREFIX_CNT`).
pub const MAX_PREFIX_CNT: u64 = 65_536;

/// Most comma-separated ranges inside one pair of brackets (`MAX_RANGES`).
pub const MAX_RANGES: usize = 65_536;

/// Most hosts an expression from a request or a configuration file may name in all, and most
/// nodes a cluster may have (Slurm's `MAX_SLURM_NODES`). A single range is capped by
/// [`MAX_RANGE`], but many ranges or prefix brackets multiply.
pub const MAX_HOSTS: u64 = 65_536;

/// Expands a hostlist expression into host names, in order, keeping duplicates (`scontrol show hostnames`).
pub fn expand(expr: &str) -> Result<Vec<String>, HostlistError> {
    Ok(Hostlist::parse(expr)?.iter().collect())
}

/// [`expand`] for an expression that may name at most `max_hosts` hosts in all; a longer one
/// is refused before any name is made (use [`MAX_HOSTS`] for what a client or a file sends).
pub fn expand_at_most(expr: &str, max_hosts: u64) -> Result<Vec<String>, HostlistError> {
    Ok(Hostlist::parse_at_most(expr, max_hosts)?.iter().collect())
}

/// Compresses host names into the shortest hostlist expression that expands back to the same names in the
/// same order (`scontrol show hostlist`).
pub fn compress<S: AsRef<str>>(names: &[S]) -> String {
    Hostlist::from_names(names).to_string()
}

/// Sorts host names naturally, removes duplicates and compresses the result (`scontrol show hostlistsorted`).
pub fn sort<S: AsRef<str>>(names: &[S]) -> String {
    let mut list = Hostlist::from_names(names);
    list.uniq();
    list.to_string()
}
