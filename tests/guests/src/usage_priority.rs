//! The tiny policy the priority probe answers with, in plain Rust so that tests can check it.
//!
//! Every answer depends on the data that crossed the boundary (clock, submit times, usage, the
//! association tree and its names), so a host that sends any of it wrong fails the tests.

/// A job's priority: one point per minute of age plus one per thousand CPU-seconds its
/// association is below 10⁹ CPU-seconds of usage.
pub fn priority(now: i64, submit_time: i64, usage: f64) -> u32 {
    let age_minutes = ((now - submit_time).max(0) / 60).min(1_000_000) as u32;
    let unused = (1e9 - usage.clamp(0.0, 1e9)) / 1000.0;
    1 + age_minutes + unused as u32
}

/// The share row of one association, echoing what the guest was told about it:
/// (norm-shares, effective-usage, fair-share, level-fs) = (RawShares, usage, ± name length with
/// the sign telling users (+) from accounts (−), parent index or −1 for root).
pub fn share_echo(
    raw_shares: u32,
    usage: f64,
    name: &str,
    is_user: bool,
    parent: Option<u32>,
) -> (f64, f64, f64, f64) {
    let name_len = name.len() as f64;
    (
        f64::from(raw_shares),
        usage,
        if is_user { name_len } else { -name_len },
        parent.map_or(-1.0, f64::from),
    )
}
