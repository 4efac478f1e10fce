//! `find`: the vertices whose state satisfies an expression such as
//! `status=down and sched-now=allocated`, emitted with their ancestors (Fluxion's
//! `dom_find_dfv` and `expr_eval_api`).

use std::collections::HashSet;

use crate::graph::VertexId;
use crate::match_writers::{Emitted, MatchWriter};
use crate::matcher::Matcher;

/// Why an expression was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid find expression: {0}")]
pub struct FindError(pub String);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    And,
    Or,
}

#[derive(Debug, Clone)]
enum Term {
    Leaf(String, String),
    Paren(Expr),
}

/// Terms combined left to right, without precedence, as Fluxion evaluates them.
#[derive(Debug, Clone)]
struct Expr {
    first: Box<Term>,
    rest: Vec<(Op, Term)>,
}

const BLANK: [char; 2] = [' ', '\t'];

fn skip_blank(e: &str, at: usize) -> Option<usize> {
    e[at..].find(|c| !BLANK.contains(&c)).map(|i| at + i)
}

/// One leaf or parenthesised term starting at or after `at`; the term and where it ends.
fn parse_term(e: &str, at: usize) -> Result<(Term, usize), FindError> {
    let tok = skip_blank(e, at).ok_or_else(|| FindError(e.into()))?;
    if e[tok..].starts_with('(') {
        let mut balance = 1;
        let mut end = None;
        for (i, c) in e[tok + 1..].char_indices() {
            match c {
                '(' => balance += 1,
                ')' => balance -= 1,
                _ => {}
            }
            if balance == 0 {
                end = Some(tok + 1 + i);
                break;
            }
        }
        let end = end.ok_or_else(|| FindError(e.into()))?;
        return Ok((Term::Paren(parse(&e[tok + 1..end])?), end + 1));
    }
    let end = e[tok..].find(BLANK).map_or(e.len(), |i| tok + i);
    let leaf = &e[tok..end];
    let (key, value) = leaf.split_once('=').ok_or_else(|| FindError(leaf.into()))?;
    validate(key, value).map_err(|_| FindError(leaf.into()))?;
    Ok((Term::Leaf(key.into(), value.into()), end))
}

fn parse(e: &str) -> Result<Expr, FindError> {
    let (first, mut at) = parse_term(e, 0)?;
    let last = e
        .rfind(|c| !BLANK.contains(&c))
        .ok_or_else(|| FindError(e.into()))?;
    let mut rest = Vec::new();
    while at <= last {
        if !e[at..].starts_with(BLANK) {
            return Err(FindError(e.into()));
        }
        let word_start = skip_blank(e, at).ok_or_else(|| FindError(e.into()))?;
        let word_end = e[word_start..]
            .find(BLANK)
            .map_or(e.len(), |i| word_start + i);
        let (op, next) = match &e[word_start..word_end] {
            "and" => (Op::And, word_end),
            "or" => (Op::Or, word_end),
            _ => (Op::And, at),
        };
        let (term, end) = parse_term(e, next)?;
        rest.push((op, term));
        at = end;
    }
    Ok(Expr {
        first: Box::new(first),
        rest,
    })
}

fn validate(key: &str, value: &str) -> Result<(), ()> {
    let v = value.to_lowercase();
    let ok = match key {
        "status" => v == "down" || v == "up",
        "sched-now" => v == "allocated" || v == "free",
        "sched-future" => v == "reserved" || v == "free",
        "jobid-alloc" | "jobid-span" | "jobid-tag" | "jobid-reserved" => {
            value.parse::<u64>().is_ok()
        }
        "agfilter" => ["true", "t", "false", "f"].contains(&v.as_str()),
        "names" => sluice_hostlist::expand(&v).is_ok(),
        "property" => !v.is_empty(),
        _ => false,
    };
    if ok { Ok(()) } else { Err(()) }
}

/// States inherited from ancestors: a vertex under a down, allocated or reserved one counts
/// as such.
#[derive(Debug, Clone, Copy, Default)]
struct Inherited {
    down: bool,
    allocated: bool,
    reserved: bool,
}

/// Per-job facts `find` asks about, gathered once per call.
struct JobFacts {
    reserved: HashSet<VertexId>,
}

impl Matcher {
    /// Emits every vertex satisfying `criteria`, with its ancestors, to `writer` (each with its
    /// whole size, exclusive, as Fluxion prints them).
    pub fn find(&mut self, criteria: &str, writer: &mut dyn MatchWriter) -> Result<(), FindError> {
        let expr = parse(criteria)?;
        let facts = JobFacts {
            reserved: (0..self.graph.vertex_count() as VertexId)
                .filter(|&v| {
                    self.spans[v as usize]
                        .spans()
                        .any(|s| !s.allocated && s.planned > 0)
                })
                .collect(),
        };
        self.reset_colors();
        self.find_dfv(&expr, &facts, self.root, 0, Inherited::default(), writer);
        writer.emit_time(0, 0);
        Ok(())
    }

    fn find_dfv(
        &mut self,
        expr: &Expr,
        facts: &JobFacts,
        u: VertexId,
        level: usize,
        inherited: Inherited,
        writer: &mut dyn MatchWriter,
    ) -> usize {
        let level = level + 1;
        self.color(u);
        let here = Inherited {
            down: inherited.down || !self.is_up(u),
            allocated: inherited.allocated || self.spans[u as usize].allocated(),
            reserved: inherited.reserved || facts.reserved.contains(&u),
        };
        let mut children = 0;
        for e in self.graph.out_edge_range(self.dom, u) {
            let t = self.graph.edge_target(self.dom, e);
            if self.colored(t) {
                continue;
            }
            let n = self.find_dfv(expr, facts, t, level, here, writer);
            if n > 0 {
                writer.emit_edge(&self.graph, self.dom, u, t);
                children += n;
            }
        }
        if !self.eval(expr, facts, u, here) && children == 0 {
            return 0;
        }
        let size = self.graph.size(u).clamp(0, i64::from(u32::MAX)) as u32;
        writer.emit_vertex(&Emitted {
            graph: &self.graph,
            vertex: u,
            level,
            needs: size,
            exclusive: true,
            properties: self.properties.get(&u),
        });
        children + 1
    }

    fn eval(&self, expr: &Expr, facts: &JobFacts, u: VertexId, s: Inherited) -> bool {
        let mut result = self.eval_term(&expr.first, facts, u, s);
        for (op, term) in &expr.rest {
            let r = self.eval_term(term, facts, u, s);
            result = match op {
                Op::And => result && r,
                Op::Or => result || r,
            };
        }
        result
    }

    fn eval_term(&self, term: &Term, facts: &JobFacts, u: VertexId, s: Inherited) -> bool {
        let (key, value) = match term {
            Term::Paren(e) => return self.eval(e, facts, u, s),
            Term::Leaf(k, v) => (k.as_str(), v.as_str()),
        };
        let v = value.to_lowercase();
        let jobid = value.parse::<u64>().ok();
        let span = |pick: &dyn Fn(&crate::vertex_spans::JobSpan) -> bool| {
            self.spans[u as usize]
                .spans()
                .any(|s| Some(s.jobid) == jobid && pick(s))
        };
        match (key, v.as_str()) {
            ("status", "down") => s.down,
            ("status", "up") => !s.down,
            ("sched-now", "allocated") => s.allocated,
            ("sched-now", "free") => !s.allocated,
            ("sched-future", "reserved") => s.reserved,
            ("sched-future", "free") => !s.reserved,
            ("jobid-alloc", _) => span(&|s| s.allocated && s.planned > 0),
            ("jobid-reserved", _) => span(&|s| !s.allocated && s.planned > 0),
            ("jobid-span", _) => jobid.and_then(|j| self.jobs.get(&j)).is_some_and(|job| {
                job.held
                    .iter()
                    .any(|h| h.vertex == u && h.subplan.is_some())
            }),
            ("jobid-tag", _) => span(&|_| true),
            ("agfilter", t) => t == "true" || t == "t",
            ("names", _) => {
                sluice_hostlist::expand(&v).is_ok_and(|names| names.contains(&self.graph.name(u)))
            }
            ("property", _) => self.properties.get(&u).is_some_and(|p| p.contains_key(&v)),
            _ => false,
        }
    }
}
