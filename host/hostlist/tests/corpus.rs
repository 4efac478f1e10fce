//! Checked-in corpora: every bad expression is rejected at the right column, and every expansion
//! observed from Slurm's own hostlist.c is reproduced.

fn rows(text: &str) -> impl Iterator<Item = Vec<&str>> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| line.split('\t').collect())
}

#[test]
fn bad_expressions_are_rejected_with_column_and_reason() {
    let mut checked = 0;
    for row in rows(include_str!("corpus/bad_expressions.txt")) {
        let (expr, column, words) = (row[0], row[1].parse::<usize>().unwrap(), row[2]);
        let err = sluice_hostlist::expand(expr).expect_err(expr);
        assert_eq!(err.column(), column, "column for {expr}: {err}");
        let message = err.to_string();
        assert!(
            message.contains(words),
            "message for {expr} lacks `{words}`: {message}"
        );
        assert!(
            message.contains("expected"),
            "message for {expr} names no expectation: {message}"
        );
        checked += 1;
    }
    assert!(checked >= 15);
}

#[test]
fn observed_slurm_expansions_are_reproduced() {
    let mut checked = 0;
    for row in rows(include_str!("corpus/slurm_observed.txt")) {
        let hosts = sluice_hostlist::expand(row[0]).unwrap();
        let expected: Vec<&str> = row[1].split(',').collect();
        assert_eq!(hosts, expected, "expanding {}", row[0]);
        checked += 1;
    }
    assert!(checked >= 14);
}

#[test]
fn limits_accept_the_largest_allowed_ranges() {
    assert_eq!(
        sluice_hostlist::Hostlist::parse("node[1-65536]")
            .unwrap()
            .len(),
        65_536
    );
    assert_eq!(
        sluice_hostlist::Hostlist::parse("a[0-999]b[0-999]")
            .unwrap()
            .len(),
        1_000_000
    );
}

#[test]
fn scontrol_show_hostlist_and_hostlistsorted_forms() {
    let names = sluice_hostlist::expand("n[3,1,2,1]").unwrap();
    assert_eq!(sluice_hostlist::compress(&names), "n[3,1-2,1]");
    assert_eq!(sluice_hostlist::sort(&names), "n[1-3]");
    let padded = sluice_hostlist::expand("node[01,1]").unwrap();
    assert_eq!(sluice_hostlist::sort(&padded), "node[1,01]");
    let mixed = ["node10", "login", "node9", "node2", "rack10", "rack2"];
    assert_eq!(
        sluice_hostlist::sort(&mixed),
        "login,node[2,9-10],rack[2,10]"
    );
}
