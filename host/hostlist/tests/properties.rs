//! Property tests: the parser never panics, compress round-trips through expand, and the hostset view
//! is sorted, unique and idempotent.

use proptest::prelude::*;
use sluice_hostlist::{Hostlist, compress, expand, sort};

/// Host names as hostlists produce them: letters, digits, dots and dashes, often with zero padding.
fn host_name() -> impl Strategy<Value = String> {
    prop_oneof![
        ("[a-c]{1,3}", 0u64..120, 0usize..4).prop_map(|(p, n, w)| format!("{p}{n:0w$}")),
        "[a-c][a-c0-9.-]{0,6}",
        (0u64..30).prop_map(|n| n.to_string()),
    ]
}

proptest! {
    #[test]
    fn parsing_never_panics(text in "\\PC{0,40}") {
        let _ = Hostlist::parse(&text);
    }

    #[test]
    fn parsing_bracket_soup_never_panics(text in "[a-b0-9\\[\\],: x-]{0,30}") {
        if let Ok(list) = Hostlist::parse(&text) {
            prop_assert!(list.len() <= 65_536 * 8 || text.matches('[').count() > 1);
        }
    }

    #[test]
    fn expand_of_compress_keeps_order_and_duplicates(names in prop::collection::vec(host_name(), 0..40)) {
        let compressed = compress(&names);
        prop_assert_eq!(expand(&compressed).unwrap(), names);
    }

    #[test]
    fn compress_is_canonical(names in prop::collection::vec(host_name(), 0..40)) {
        let once = compress(&names);
        let twice = compress(&expand(&once).unwrap());
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn hostset_is_sorted_unique_and_idempotent(names in prop::collection::vec(host_name(), 0..40)) {
        let sorted = sort(&names);
        let hosts = expand(&sorted).unwrap();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        let mut got = hosts.clone();
        got.sort();
        prop_assert_eq!(&got, &unique, "same set of hosts");
        prop_assert_eq!(got.len(), hosts.len(), "no duplicates");
        prop_assert_eq!(sort(&hosts), sorted, "idempotent");
    }

    #[test]
    fn expression_count_matches_expansion(lo in 0u64..500, span in 0u64..200, width in 1usize..5) {
        let expr = format!("n[{lo:0width$}-{}]", lo + span);
        let list = Hostlist::parse(&expr).unwrap();
        prop_assert_eq!(list.len(), span + 1);
        prop_assert_eq!(list.iter().count() as u64, span + 1);
    }
}
