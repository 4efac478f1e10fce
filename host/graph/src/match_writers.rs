//! Match writers: how a matched resource set is printed (`-F/--match-format`).

use crate::graph::{ResourceGraph, VertexId};

/// Receives the vertices of a match in emission order (post-order, children in creation order).
pub trait MatchWriter {
    /// One matched vertex at depth `level` (the root is level 1), taking `needs` units,
    /// exclusively or shared.
    fn emit_vertex(
        &mut self,
        graph: &ResourceGraph,
        level: usize,
        v: VertexId,
        needs: u32,
        exclusive: bool,
    );
    /// A matched edge `source → target` (after its target's subtree was emitted).
    fn emit_edge(&mut self, _graph: &ResourceGraph, _source: VertexId, _target: VertexId) {}
    /// The span of the match, `[start, end)`.
    fn emit_time(&mut self, _start: i64, _end: i64) {}
    /// The text of everything emitted since the last call, and a fresh start.
    fn take(&mut self) -> String;
}

/// Fluxion's indentation: six spaces and `---` per level.
fn prefix(level: usize) -> String {
    let mut p = String::from("      ");
    for _ in 0..level {
        p.push_str("---");
    }
    p
}

/// `simple`: `name[needs:x|s]` per vertex, in emission order.
#[derive(Debug, Default)]
pub struct SimpleWriter {
    out: String,
}

impl MatchWriter for SimpleWriter {
    fn emit_vertex(&mut self, g: &ResourceGraph, level: usize, v: VertexId, needs: u32, x: bool) {
        let mode = if x { "x" } else { "s" };
        self.out.push_str(&format!(
            "{}{}[{}:{}]\n",
            prefix(level),
            g.name(v),
            needs,
            mode
        ));
    }

    fn take(&mut self) -> String {
        std::mem::take(&mut self.out)
    }
}

/// `pretty_simple`: `name[needs:exclusive|shared]`, root first (emission order reversed).
#[derive(Debug, Default)]
pub struct PrettySimpleWriter {
    lines: Vec<String>,
}

impl MatchWriter for PrettySimpleWriter {
    fn emit_vertex(&mut self, g: &ResourceGraph, level: usize, v: VertexId, needs: u32, x: bool) {
        let mode = if x { "exclusive" } else { "shared" };
        self.lines.push(format!(
            "{}{}[{}:{}]\n",
            prefix(level),
            g.name(v),
            needs,
            mode
        ));
    }

    fn take(&mut self) -> String {
        let lines = std::mem::take(&mut self.lines);
        lines.into_iter().rev().collect()
    }
}
