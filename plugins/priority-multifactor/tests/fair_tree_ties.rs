//! Fair Tree's tie rules and zero cases, as `fair_tree.c` implements them.

use sluice_plugin_priority_multifactor::fair_tree::FairTree;
use sluice_sdk::Association;

/// A tree from (name, parent index, is user, RawShares, own usage); usage is summed upwards.
fn tree(rows: &[(&str, Option<u32>, bool, u32, f64)]) -> Vec<Association> {
    let mut a: Vec<Association> = rows
        .iter()
        .map(|&(name, parent, is_user, raw_shares, _)| Association {
            priority: 0,
            name: name.into(),
            parent,
            is_user,
            raw_shares,
            raw_usage: 0.0,
        })
        .collect();
    for (i, row) in rows.iter().enumerate() {
        let mut at = Some(i);
        while let Some(j) = at {
            a[j].raw_usage += row.4;
            at = a[j].parent.map(|p| p as usize);
        }
    }
    a
}

fn fs(t: &FairTree, assocs: &[Association], name: &str) -> f64 {
    t.standing[assocs.iter().position(|a| a.name == name).unwrap()].fair_share
}

#[test]
fn sibling_users_with_equal_level_fs_share_a_rank() {
    let a = tree(&[
        ("root", None, false, 1, 0.0),
        ("u1", Some(0), true, 1, 10.0),
        ("u2", Some(0), true, 1, 10.0),
        ("u3", Some(0), true, 1, 20.0),
    ]);
    let t = FairTree::compute(&a);
    assert_eq!(fs(&t, &a, "u1"), 1.0);
    assert_eq!(fs(&t, &a, "u2"), 1.0);
    // The tie used up two ranks: the next user gets rank 1, not 2.
    assert_eq!(fs(&t, &a, "u3"), 1.0 / 3.0);
}

#[test]
fn a_user_tied_with_an_account_shares_its_top_users_rank() {
    // Users sort before accounts at equal Level FS; the account's first child inherits the tie.
    let a = tree(&[
        ("root", None, false, 1, 0.0),
        ("acct", Some(0), false, 1, 0.0),
        ("u_acct1", Some(1), true, 1, 3.0),
        ("u_acct2", Some(1), true, 1, 7.0),
        ("u_top", Some(0), true, 1, 10.0),
    ]);
    let t = FairTree::compute(&a);
    assert_eq!(t.standing[1].level_fs, t.standing[4].level_fs);
    assert_eq!(fs(&t, &a, "u_top"), 1.0);
    assert_eq!(fs(&t, &a, "u_acct1"), 1.0);
    assert_eq!(fs(&t, &a, "u_acct2"), 1.0 / 3.0);
}

#[test]
fn tied_sibling_accounts_are_not_merged_as_in_slurms_code() {
    // The documentation says children of tied accounts are merged and sorted together, which
    // would give a1 1.0, b1 0.75, b2 0.5, a2 0.25. `_count_tied_accounts` never finds a tie, so
    // Slurm visits A's children, then B's, with B's first child tied to A's last.
    let a = tree(&[
        ("root", None, false, 1, 0.0),
        ("A", Some(0), false, 1, 0.0),
        ("B", Some(0), false, 1, 0.0),
        ("a1", Some(1), true, 1, 1.0),
        ("a2", Some(1), true, 1, 9.0),
        ("b1", Some(2), true, 1, 3.0),
        ("b2", Some(2), true, 1, 7.0),
    ]);
    let t = FairTree::compute(&a);
    assert_eq!(t.standing[1].level_fs, t.standing[2].level_fs);
    assert_eq!(fs(&t, &a, "a1"), 1.0);
    assert_eq!(fs(&t, &a, "a2"), 0.75);
    assert_eq!(fs(&t, &a, "b1"), 0.75);
    assert_eq!(fs(&t, &a, "b2"), 0.25);
}

#[test]
fn a_higher_account_outranks_every_user_of_a_lower_one() {
    let a = tree(&[
        ("root", None, false, 1, 0.0),
        ("light", Some(0), false, 1, 0.0),
        ("heavy", Some(0), false, 1, 0.0),
        ("l_busy", Some(1), true, 1, 40.0),
        ("h_idle", Some(2), true, 100, 1.0),
        ("h_busy", Some(2), true, 1, 59.0),
    ]);
    let t = FairTree::compute(&a);
    assert!(fs(&t, &a, "l_busy") > fs(&t, &a, "h_idle"));
    assert!(fs(&t, &a, "h_idle") > fs(&t, &a, "h_busy"));
}

#[test]
fn zero_usage_everywhere_ties_everyone_at_one() {
    let a = tree(&[
        ("root", None, false, 1, 0.0),
        ("x", Some(0), false, 5, 0.0),
        ("x1", Some(1), true, 1, 0.0),
        ("y", Some(0), false, 1, 0.0),
        ("y1", Some(3), true, 3, 0.0),
        ("z1", Some(0), true, 2, 0.0),
    ]);
    let t = FairTree::compute(&a);
    for name in ["x1", "y1", "z1"] {
        assert_eq!(fs(&t, &a, name), 1.0, "{name}");
        let i = a.iter().position(|x| x.name == name).unwrap();
        assert_eq!(t.standing[i].effective_usage, 0.0);
        assert_eq!(t.standing[i].level_fs, f64::INFINITY);
    }
}

#[test]
fn zero_shares_rank_last_even_with_no_usage() {
    let a = tree(&[
        ("root", None, false, 1, 0.0),
        ("none", Some(0), true, 0, 0.0),
        ("busy", Some(0), true, 1, 100.0),
    ]);
    let t = FairTree::compute(&a);
    assert_eq!(t.standing[1].level_fs, 0.0);
    assert_eq!(fs(&t, &a, "busy"), 1.0);
    assert_eq!(fs(&t, &a, "none"), 0.5);
}

#[test]
fn a_broken_parent_chain_does_not_hang_or_panic() {
    // Built by hand: p and q are each other's parent, u points past the table.
    let assoc =
        |name: &str, parent: Option<u32>, is_user: bool, raw_shares: u32, raw_usage: f64| {
            Association {
                name: name.into(),
                parent,
                is_user,
                raw_shares,
                priority: 0,
                raw_usage,
            }
        };
    let a = vec![
        assoc("root", None, false, 1, 1.0),
        assoc("p", Some(2), false, 0x7FFF_FFFF, 0.0),
        assoc("q", Some(1), false, 0x7FFF_FFFF, 0.0),
        assoc("u", Some(7), true, 1, 1.0),
        assoc("v", Some(0), true, 1, 0.0),
    ];
    let t = FairTree::compute(&a);
    assert_eq!(t.standing.len(), 5);
    assert_eq!(fs(&t, &a, "v"), 1.0);
    assert_eq!(t.factor(3), 0.0);
}
