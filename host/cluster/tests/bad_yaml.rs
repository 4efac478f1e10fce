//! A corpus of bad resources.yaml files: each is rejected (never a panic) at the line its first
//! comment names, with a message containing the words it names; and random text never panics.

use proptest::prelude::*;
use sluice_cluster::{Cluster, Source, parse_resources};

/// Each fixture starts with `# expect line N: words`.
fn expectation(text: &str) -> (usize, String) {
    let first = text.lines().next().unwrap();
    let rest = first
        .strip_prefix("# expect line ")
        .expect("fixture header");
    let (line, words) = rest.split_once(": ").unwrap();
    (line.parse().unwrap(), words.to_owned())
}

#[test]
fn every_bad_yaml_is_rejected_where_it_says() {
    let cluster = Cluster::demo();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bad_yaml");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let (line, words) = expectation(&text);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let err = parse_resources(Source::new(&name, &text), &cluster.nodes, &cluster.licenses)
            .expect_err(&name);
        let message = err.to_string();
        assert_eq!(err.location().unwrap().line, line, "{message}");
        assert!(
            message.contains(&words),
            "{name}: `{message}` lacks `{words}`"
        );
        assert!(message.starts_with(&format!("{name}:{line}:")), "{message}");
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} fixtures");
}

proptest! {
    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        let cluster = Cluster::demo();
        let _ = parse_resources(Source::new("r.yaml", &text), &cluster.nodes, &cluster.licenses);
    }

    #[test]
    fn mutated_seed_never_panics(cut in 0usize..2000, insert in "[\\-:\\[\\] a-z0-9\\n]{0,8}") {
        let seed = include_str!("fixtures/hres_seed_resources.yaml");
        let mut at = cut.min(seed.len());
        while !seed.is_char_boundary(at) { at -= 1; }
        let text = format!("{}{}{}", &seed[..at], insert, &seed[at..]);
        let cluster = Cluster::demo();
        let _ = parse_resources(Source::new("r.yaml", &text), &cluster.nodes, &cluster.licenses);
    }
}
