//! Slurm's Fair Tree golden test (`testsuite/expect/test24.4`): its tree, its 35 `sshare -l` lines.

use sluice_plugin_priority_multifactor::Multifactor;
use sluice_plugin_priority_multifactor::fair_tree::FS_USE_PARENT;
use sluice_plugin_priority_multifactor::settings::Config;
use sluice_sdk::{Association, PriorityContext, PriorityPolicy, Share};

const P: u32 = FS_USE_PARENT;

/// test24.4.prog.c's associations: (account, user, parent account, RawShares, RawUsage of users).
/// Account usage is left to [`context`], which sums it up the tree as the host does.
const TREE: &[(&str, &str, &str, u32, f64)] = &[
    ("aA", "", "root", 40, 0.0),
    ("aAA", "", "aA", 30, 0.0),
    ("aAA", "uAA1", "aAA", 1, 20.0),
    ("aAB", "", "aA", 10, 0.0),
    ("aAB", "uAB1", "aAB", 1, 25.0),
    ("aAB", "uAB2", "aAB", 1, 0.0),
    ("aB", "", "root", 60, 0.0),
    ("aBA", "", "aB", 25, 0.0),
    ("aBA", "uBA1", "aBA", 1, 25.0),
    ("aBB", "", "aB", 35, 0.0),
    ("aBB", "uBB1", "aBB", 1, 0.0),
    ("aC", "", "root", 0, 0.0),
    ("aC", "uC1", "aC", 0, 30.0),
    ("aD", "", "root", 50, 0.0),
    ("aDA", "", "aD", P, 0.0),
    ("aDA", "uDA1", "aDA", P, 10.0),
    ("aDA", "uDA2", "aDA", 30, 10.0),
    ("aDA", "uDA3", "aDA", 50, 25.0),
    ("aD", "uD1", "aD", P, 20.0),
    ("aD", "uD2", "aD", 40, 20.0),
    ("aD", "uD3", "aD", 50, 25.0),
    ("aE", "", "root", 10, 0.0),
    ("aE", "aE1", "aE", 10, 0.0),
    ("aE", "aE2", "aE", 10, 0.0),
    ("root", "u1", "root", 10, 0.0),
    ("aF", "", "root", 20, 0.0),
    ("aF", "uF1", "aF", 10, 0.0),
    ("aF", "uF2", "aF", 20, 0.0),
    ("aG", "", "root", 8, 0.0),
    ("aG", "uG1", "aG", 10, 10.0),
    ("aGA", "", "aG", 10, 0.0),
    ("aGA", "uGA1", "aGA", 20, 4.0),
    ("aGA", "uGA2", "aGA", 20, 6.0),
    ("root", "u2", "root", 10, 10.0),
];

/// test24.4's expected lines, verbatim up to LevelFS:
/// `Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|`.
const GOLDEN: &str = "\
root|||0.000000|240||1.000000|||
root|u1|10|0.048077|0|0.000000|0.000000|1.000000|inf|
root|u2|10|0.048077|10|0.041667|0.041667|0.666667|1.153846|
aA||40|0.192308|45|0.187500|0.187500||1.025641|
aAA||30|0.750000|20|0.083333|0.444444||1.687500|
aAA|uAA1|1|1.000000|20|0.083333|1.000000|0.619048|1.000000|
aAB||10|0.250000|25|0.104167|0.555556||0.450000|
aAB|uAB1|1|0.500000|25|0.104167|1.000000|0.523810|0.500000|
aAB|uAB2|1|0.500000|0|0.000000|0.000000|0.571429|inf|
aB||60|0.288462|25|0.104167|0.104167||2.769231|
aBA||25|0.416667|25|0.104167|1.000000||0.416667|
aBA|uBA1|1|1.000000|25|0.104167|1.000000|0.714286|1.000000|
aBB||35|0.583333|0|0.000000|0.000000||inf|
aBB|uBB1|1|1.000000|0|0.000000|0.000000|0.761905|inf|
aC||0|0.000000|30|0.125000|0.125000||0.000000|
aC|uC1|0|0.000000|30|0.125000|1.000000|0.047619|0.000000|
aD||50|0.240385|110|0.458333|0.458333||0.524476|
aD|uD1|parent|0.240385|20|0.083333|0.181818|0.476190||
aD|uD2|40|0.235294|20|0.083333|0.181818|0.238095|1.294118|
aD|uD3|50|0.294118|25|0.104167|0.227273|0.333333|1.294118|
aDA||parent|0.240385|45|0.187500|0.409091|||
aDA|uDA1|parent|0.240385|10|0.041667|0.090909|0.476190||
aDA|uDA2|30|0.176471|10|0.041667|0.090909|0.380952|1.941176|
aDA|uDA3|50|0.294118|25|0.104167|0.227273|0.333333|1.294118|
aE||10|0.048077|0|0.000000|0.000000||inf|
aE|aE1|10|0.500000|0|0.000000|0.000000|1.000000|inf|
aE|aE2|10|0.500000|0|0.000000|0.000000|1.000000|inf|
aF||20|0.096154|0|0.000000|0.000000||inf|
aF|uF1|10|0.333333|0|0.000000|0.000000|1.000000|inf|
aF|uF2|20|0.666667|0|0.000000|0.000000|1.000000|inf|
aG||8|0.038462|20|0.083333|0.083333||0.461538|
aG|uG1|10|0.500000|10|0.041667|0.500000|0.190476|1.000000|
aGA||10|0.500000|10|0.041667|0.500000||1.000000|
aGA|uGA1|20|0.500000|4|0.016667|0.400000|0.190476|1.250000|
aGA|uGA2|20|0.500000|6|0.025000|0.600000|0.095238|0.833333|
";

/// The test24.4 tree as the host hands it over: root first, usage summed into every ancestor.
pub fn context() -> PriorityContext {
    let mut assocs = vec![Association {
        name: "root".into(),
        parent: None,
        is_user: false,
        raw_shares: 1,
        priority: 0,
        raw_usage: 0.0,
    }];
    for &(acct, user, parent, shares, usage) in TREE {
        let parent = if user.is_empty() { parent } else { acct };
        let parent = assocs
            .iter()
            .position(|a| !a.is_user && a.name == parent)
            .expect("parent listed first");
        let name = if user.is_empty() { acct } else { user };
        assocs.push(Association {
            name: name.into(),
            parent: Some(parent as u32),
            is_user: !user.is_empty(),
            raw_shares: shares,
            priority: 0,
            raw_usage: 0.0,
        });
        let mut at = Some(assocs.len() - 1);
        while let Some(i) = at {
            assocs[i].raw_usage += usage;
            at = assocs[i].parent.map(|p| p as usize);
        }
    }
    PriorityContext {
        now: 1_700_000_000,
        cluster_version: 0,
        cluster_nodes: 1,
        cluster_cpus: 50,
        associations: assocs,
        ..Default::default()
    }
}

/// Formats a value as sshare does: six decimals, `inf`, and blank for "not applicable".
fn fmt(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else if v.is_infinite() {
        "inf".into()
    } else {
        format!("{v:.6}")
    }
}

/// The `sshare -l` line of one association, from its share row.
fn line(ctx: &PriorityContext, s: &Share) -> String {
    let a = &ctx.associations[s.association as usize];
    let parent_name = |i: Option<u32>| {
        i.map(|p| ctx.associations[p as usize].name.clone())
            .unwrap_or_default()
    };
    let (account, user) = if a.is_user {
        (parent_name(a.parent), a.name.clone())
    } else {
        (a.name.clone(), String::new())
    };
    let root = a.parent.is_none();
    let raw_shares = match (root, a.raw_shares) {
        (true, _) => String::new(),
        (_, P) => "parent".into(),
        (_, s) => s.to_string(),
    };
    let root_usage = ctx.associations[0].raw_usage;
    let norm_usage = if root {
        String::new()
    } else {
        fmt(a.raw_usage / root_usage)
    };
    // sshare leaves LevelFS blank on every FairShare=parent row, though a parent user ranks as ∞.
    let level_fs = if a.raw_shares == P {
        String::new()
    } else {
        fmt(s.level_fs)
    };
    format!(
        "{account}|{user}|{raw_shares}|{}|{}|{norm_usage}|{}|{}|{level_fs}|",
        fmt(s.norm_shares),
        a.raw_usage,
        fmt(s.effective_usage),
        fmt(s.fair_share),
    )
}

#[test]
fn every_sshare_line_of_test24_4_matches() {
    let ctx = context();
    let mut policy = Multifactor::new(Config::default());
    let shares = policy.shares(&ctx);
    assert_eq!(
        shares.len(),
        ctx.associations.len(),
        "one row per association"
    );
    let got: Vec<String> = shares.iter().map(|s| line(&ctx, s)).collect();
    let want: Vec<&str> = GOLDEN.lines().collect();
    assert_eq!(want.len(), 35);
    // sshare lists users before sub-accounts; the order of share rows is the host's to choose.
    let missing: Vec<&&str> = want
        .iter()
        .filter(|w| !got.iter().any(|g| g == **w))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of 35 lines not produced: {missing:#?}\ngot: {got:#?}",
        missing.len()
    );
}

#[test]
fn user_fairshare_values_are_ranks_over_21() {
    let ctx = context();
    let shares = Multifactor::new(Config::default()).shares(&ctx);
    let users: Vec<&Share> = shares
        .iter()
        .filter(|s| ctx.associations[s.association as usize].is_user)
        .collect();
    assert_eq!(users.len(), 21);
    for s in users {
        let rank = s.fair_share * 21.0;
        assert!(
            (rank - rank.round()).abs() < 1e-9,
            "{} has FairShare {} not k/21",
            ctx.associations[s.association as usize].name,
            s.fair_share
        );
    }
}

#[test]
fn ud2_and_ud3_differ_in_the_last_bits_and_rank_apart() {
    // test24.4's note: uD2 and uD3 do NOT have the same level_fs although both print 1.294118.
    let ctx = context();
    let shares = Multifactor::new(Config::default()).shares(&ctx);
    let by = |name: &str| {
        shares[ctx
            .associations
            .iter()
            .position(|a| a.name == name)
            .unwrap()]
        .clone()
    };
    assert!(by("uD2").level_fs < by("uD3").level_fs);
    assert!(by("uD2").fair_share < by("uD3").fair_share);
    assert_eq!(by("uD3").fair_share, by("uDA3").fair_share);
}
