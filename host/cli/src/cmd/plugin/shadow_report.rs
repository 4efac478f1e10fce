//! `plugin shadow report|stop` for people: one paragraph per running shadow, from the API's JSON.

use std::fmt::Write;

use serde_json::Value;

/// The daemon's shadow reports (`{"priority": …, "selection": …}`) as text.
pub fn render(reports: &Value) -> String {
    let mut out = String::new();
    if let Some(p) = reports.get("priority").filter(|v| !v.is_null()) {
        let _ = writeln!(out, "priority shadow: {}", text(p, "origin"));
        let _ = writeln!(
            out,
            "  passes {} ({} differing), rows compared {}, ranked differently {}, faults {}",
            p["passes"],
            p["passes_differing"],
            p["rows_compared"],
            p["rows_differing"],
            p["faults"]
        );
        for m in list(p, "largest_moves") {
            let _ = writeln!(
                out,
                "  job {} in {}: rank {} active, {} candidate",
                m[0],
                text(m, 1),
                m[2],
                m[3]
            );
        }
        fault(&mut out, p);
    }
    if let Some(s) = reports.get("selection").filter(|v| !v.is_null()) {
        let _ = writeln!(out, "selection shadow: {}", text(s, "origin"));
        let _ = writeln!(
            out,
            "  passes {} ({} differing), placements compared {}: other nodes {}, not placed {}, \
             skipped {}, faults {}",
            s["passes"],
            s["passes_differing"],
            s["placements_compared"],
            s["different_nodes"],
            s["not_placed"],
            s["skipped"],
            s["faults"]
        );
        for d in list(s, "recent") {
            let candidate = d[2].as_str().unwrap_or("(no placement)");
            let _ = writeln!(
                out,
                "  job {}: active {}, candidate {candidate}",
                d[0],
                text(d, 1)
            );
        }
        fault(&mut out, s);
    }
    if out.is_empty() {
        out.push_str("no shadow is running\n");
    }
    out
}

fn text<I: serde_json::value::Index>(v: &Value, at: I) -> &str {
    v.get(at).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn fault(out: &mut String, v: &Value) {
    if let Some(f) = v.get("last_fault").and_then(Value::as_str) {
        let _ = writeln!(out, "  last fault: {f}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_reports_read_as_sentences() {
        let text = render(&json!({
            "priority": {"origin": "/p.wasm", "passes": 4, "passes_differing": 1,
                         "rows_compared": 40, "rows_differing": 2, "faults": 0,
                         "largest_moves": [[7, "batch", 1, 3]], "last_fault": null},
            "selection": {"origin": "/s.wasm", "passes": 3, "passes_differing": 1,
                          "placements_compared": 5, "different_nodes": 1, "not_placed": 1,
                          "skipped": 0, "faults": 1, "last_fault": "trap",
                          "recent": [[9, "node[01-02]", null]]}
        }));
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
        assert_eq!(
            render(&json!({"priority": null, "selection": null})),
            "no shadow is running\n"
        );
    }
}
