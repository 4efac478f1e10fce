//! Readers never panic: arbitrary and mutated input gives a value or a located error.

use proptest::prelude::*;
use sluice_cluster::gres::{parse_gres_conf, parse_gres_spec};
use sluice_cluster::slurm_conf::import_slurm_conf;
use sluice_cluster::{Cluster, Source};

/// `text` with `insert` spliced in at `cut` (snapped to a character boundary).
fn splice(text: &str, cut: usize, insert: &str) -> String {
    let mut at = cut.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}{insert}{}", &text[..at], &text[at..])
}

/// Every error carries a location with line and column from 1.
fn located(result: Result<(), sluice_cluster::ConfigError>) -> bool {
    match result {
        Ok(()) => true,
        Err(err) => err
            .location()
            .is_some_and(|at| at.line >= 1 && at.column >= 1),
    }
}

proptest! {
    #[test]
    fn gres_strings(text in "[a-z0-9:,_KMGT()-]{0,30}") {
        let _ = parse_gres_spec(&text);
    }

    #[test]
    fn gres_conf_lines(text in "\\PC{0,120}") {
        prop_assert!(located(parse_gres_conf(Source::new("gres.conf", &text)).map(|_| ())));
    }

    #[test]
    fn slurm_conf_mutations(cut in 0usize..900, insert in "[=,:\\[\\] a-zA-Z0-9\\n\\\\\"#-]{0,10}") {
        let text = splice(include_str!("fixtures/site_slurm.conf"), cut, &insert);
        prop_assert!(located(import_slurm_conf(Source::new("slurm.conf", &text), None, None, None).map(|_| ())));
    }

    #[test]
    fn cluster_file_mutations(cut in 0usize..3000, insert in "[=,:\\[\\]\\{\\} a-zA-Z0-9\\n\"'#.-]{0,10}") {
        let (toml, yaml) = Cluster::demo_sources();
        let text = splice(toml, cut, &insert);
        let result = Cluster::from_toml(Source::new("c.toml", &text), Some(Source::new("r.yaml", yaml)));
        prop_assert!(located(result.map(|_| ())));
    }
}
