//! Match writers: how a matched resource set is printed (`-F/--match-format`): `simple` and
//! `pretty_simple` here, the JSON ones in `match_writers_json`.

use std::collections::BTreeMap;

use crate::graph::{ResourceGraph, SubsystemId, VertexId};

/// One vertex of a match as the update walk emits it.
#[derive(Debug, Clone, Copy)]
pub struct Emitted<'a> {
    /// The graph.
    pub graph: &'a ResourceGraph,
    /// The matched vertex.
    pub vertex: VertexId,
    /// Its depth (the root is level 1).
    pub level: usize,
    /// Units the match takes from it.
    pub needs: u32,
    /// Whether it is taken exclusively.
    pub exclusive: bool,
    /// Its properties (`set-property`), if any.
    pub properties: Option<&'a BTreeMap<String, String>>,
}

/// Receives the vertices of a match in emission order (post-order, children in creation order).
pub trait MatchWriter {
    /// One matched vertex.
    fn emit_vertex(&mut self, vertex: &Emitted<'_>);
    /// A matched edge `source → target` of `subsystem`, after its target's subtree.
    fn emit_edge(
        &mut self,
        _graph: &ResourceGraph,
        _subsystem: SubsystemId,
        _source: VertexId,
        _target: VertexId,
    ) {
    }
    /// The span of the match, `[start, end)`.
    fn emit_time(&mut self, _start: i64, _end: i64) {}
    /// The text of everything emitted since the last call, and a fresh start.
    fn take(&mut self) -> String;
    /// Writes what [`MatchWriter::take`] would answer to `out`, and starts afresh; a writer
    /// that keeps its text in one buffer writes it from there and keeps the buffer.
    fn write_into(&mut self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(self.take().as_bytes())
    }
}

/// One line of `simple`/`pretty_simple`: Fluxion's indentation (six spaces and `---` per
/// level), then `name[needs:mode]`, appended to `out` without building pieces apart.
fn push_line(out: &mut String, e: &Emitted<'_>, mode: &str) {
    out.push_str("      ");
    for _ in 0..e.level {
        out.push_str("---");
    }
    e.graph.push_name(e.vertex, out);
    out.push('[');
    out.push_str(itoa::Buffer::new().format(e.needs));
    out.push(':');
    out.push_str(mode);
    out.push_str("]\n");
}

/// `simple`: `name[needs:x|s]` per vertex, in emission order.
#[derive(Debug, Default)]
pub struct SimpleWriter {
    out: String,
}

impl MatchWriter for SimpleWriter {
    fn emit_vertex(&mut self, e: &Emitted<'_>) {
        push_line(&mut self.out, e, if e.exclusive { "x" } else { "s" });
    }

    fn take(&mut self) -> String {
        std::mem::take(&mut self.out)
    }

    fn write_into(&mut self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let written = out.write_all(self.out.as_bytes());
        self.out.clear();
        written
    }
}

/// `pretty_simple`: `name[needs:exclusive|shared]`, root first (emission order reversed).
#[derive(Debug, Default)]
pub struct PrettySimpleWriter {
    lines: Vec<String>,
}

impl MatchWriter for PrettySimpleWriter {
    fn emit_vertex(&mut self, e: &Emitted<'_>) {
        let mut line = String::new();
        push_line(
            &mut line,
            e,
            if e.exclusive { "exclusive" } else { "shared" },
        );
        self.lines.push(line);
    }

    fn take(&mut self) -> String {
        let lines = std::mem::take(&mut self.lines);
        lines.into_iter().rev().collect()
    }
}
