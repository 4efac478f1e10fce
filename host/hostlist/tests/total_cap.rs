//! The total cap: an expression naming more hosts than the caller accepts is refused from its
//! ranges, quickly and without making the names (issue 33, item 9).

use std::time::{Duration, Instant};

use sluice_hostlist::{Hostlist, HostlistError, MAX_HOSTS, expand_at_most};

/// 256 ranges of 65,536 hosts: 16.7 million names from a 4 KB expression.
fn many_ranges() -> String {
    vec!["n[0-65535]"; 256].join(",")
}

#[test]
fn sixteen_million_names_are_refused_quickly_naming_the_cap() {
    let started = Instant::now();
    let err = Hostlist::parse_at_most(&many_ranges(), MAX_HOSTS).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    // The second token is the one that crosses the cap: 131,072 names by column 12.
    assert_eq!(
        err,
        HostlistError::TooManyNames {
            column: 12,
            count: 131_072,
            max: MAX_HOSTS
        }
    );
    assert!(err.to_string().contains("at most 65536"), "{err}");
}

#[test]
fn prefix_brackets_that_multiply_are_refused_before_expanding() {
    // 256 prefixes × 65,536 hosts, and three prefix levels whose product saturates.
    for expr in ["a[0-255]b[0-65535]", "a[0-65535]b[0-65535]c[0-65535]"] {
        let started = Instant::now();
        let err = expand_at_most(expr, MAX_HOSTS).unwrap_err();
        assert!(started.elapsed() < Duration::from_millis(500), "{expr}");
        assert!(
            matches!(err, HostlistError::TooManyNames { column: 1, max, .. } if max == MAX_HOSTS),
            "{expr}: {err:?}"
        );
    }
}

#[test]
fn duplicates_count_and_the_cap_itself_is_accepted() {
    assert_eq!(
        Hostlist::parse_at_most("n[1-65536]", MAX_HOSTS)
            .unwrap()
            .len(),
        MAX_HOSTS
    );
    assert!(Hostlist::parse_at_most("n[1-65536],n1", MAX_HOSTS).is_err());
    assert_eq!(expand_at_most("a,b c", 3).unwrap(), ["a", "b", "c"]);
    assert_eq!(
        expand_at_most("a,b c", 2).unwrap_err(),
        HostlistError::TooManyNames {
            column: 5,
            count: 3,
            max: 2
        }
    );
}

#[test]
fn the_uncapped_parse_is_unchanged() {
    assert_eq!(
        Hostlist::parse("n[1-65536],m[1-65536]").unwrap().len(),
        131_072
    );
}
