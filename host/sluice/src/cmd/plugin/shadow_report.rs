//! `plugin shadow report|stop` for people: one paragraph per running shadow.

use std::fmt::Write;

use sluice_api::ShadowReports;

/// The daemon's shadow reports as text.
pub fn render(reports: &ShadowReports) -> String {
    let mut out = String::new();
    if let Some(p) = &reports.priority {
        let _ = writeln!(out, "priority shadow: {}", p.origin);
        let _ = writeln!(
            out,
            "  passes {} ({} differing), rows compared {}, ranked differently {}, faults {}",
            p.passes, p.passes_differing, p.rows_compared, p.rows_differing, p.faults
        );
        for (job, partition, active, candidate) in &p.largest_moves {
            let _ = writeln!(
                out,
                "  job {job} in {partition}: rank {active} active, {candidate} candidate"
            );
        }
        fault(&mut out, p.last_fault.as_deref());
    }
    if let Some(s) = &reports.selection {
        let _ = writeln!(out, "selection shadow: {}", s.origin);
        let _ = writeln!(
            out,
            "  passes {} ({} differing), placements compared {}: other nodes {}, not placed {}, \
             skipped {}, faults {}",
            s.passes,
            s.passes_differing,
            s.placements_compared,
            s.different_nodes,
            s.not_placed,
            s.skipped,
            s.faults
        );
        for (job, active, candidate) in &s.recent {
            let candidate = candidate.as_deref().unwrap_or("(no placement)");
            let _ = writeln!(out, "  job {job}: active {active}, candidate {candidate}");
        }
        fault(&mut out, s.last_fault.as_deref());
    }
    if out.is_empty() {
        out.push_str("no shadow is running\n");
    }
    out
}

fn fault(out: &mut String, last: Option<&str>) {
    if let Some(f) = last {
        let _ = writeln!(out, "  last fault: {f}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_api::{PriorityShadowReport, SelectionShadowReport};

    #[test]
    fn both_reports_read_as_sentences() {
        let text = render(&ShadowReports {
            priority: Some(PriorityShadowReport {
                kind: "priority".into(),
                origin: "/p.wasm".into(),
                passes: 4,
                passes_differing: 1,
                rows_compared: 40,
                rows_differing: 2,
                faults: 0,
                last_fault: None,
                largest_moves: vec![(7, "batch".into(), 1, 3)],
            }),
            selection: Some(SelectionShadowReport {
                kind: "selection".into(),
                origin: "/s.wasm".into(),
                passes: 3,
                passes_differing: 1,
                placements_compared: 5,
                different_nodes: 1,
                not_placed: 1,
                skipped: 0,
                faults: 1,
                last_fault: Some("trap".into()),
                recent: vec![(9, "node[01-02]".into(), None)],
            }),
        });
        assert!(text.contains("priority shadow: /p.wasm"), "{text}");
        assert!(
            text.contains("rows compared 40, ranked differently 2"),
            "{text}"
        );
        assert!(
            text.contains("job 7 in batch: rank 1 active, 3 candidate"),
            "{text}"
        );
        assert!(text.contains("other nodes 1, not placed 1"), "{text}");
        assert!(
            text.contains("job 9: active node[01-02], candidate (no placement)"),
            "{text}"
        );
        assert!(text.contains("last fault: trap"), "{text}");
        assert_eq!(render(&ShadowReports::default()), "no shadow is running\n");
    }
}
