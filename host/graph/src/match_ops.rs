//! The match operations (`allocate`, `allocate_orelse_reserve`, …) over a [`Matcher`]:
//! feasibility, the reservation search over the root's aggregate planner, satisfiability.

use crate::jobspec::Jobspec;
use crate::match_request::{Request, UNKNOWN_TYPE, aggregate_of, prime_requests};
use crate::match_writers::MatchWriter;
use crate::matcher::{GRAPH_END, Matcher, Prepared};
use crate::planner::PlannerError;
use crate::traverse_flexible::split_xor_slots;
use crate::visit::{AllocType, Errno, JobMeta};

/// A match operation (`match <op> …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchOp {
    /// Allocate now or fail.
    Allocate,
    /// Allocate now, else reserve at the earliest time the resources are free.
    AllocateOrElseReserve,
    /// Allocate now; on failure also say whether the request could ever be met.
    AllocateWithSatisfiability,
    /// Only say whether the request could ever be met.
    Satisfiability,
    /// Match now without allocating.
    WithoutAllocating,
    /// Match now or later without allocating.
    WithoutAllocatingFuture,
}

impl MatchOp {
    /// The operation named `name`, as resource-query spells it.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "allocate" => MatchOp::Allocate,
            "allocate_orelse_reserve" => MatchOp::AllocateOrElseReserve,
            "allocate_with_satisfiability" => MatchOp::AllocateWithSatisfiability,
            "satisfiability" => MatchOp::Satisfiability,
            "without_allocating" => MatchOp::WithoutAllocating,
            "without_allocating_future" => MatchOp::WithoutAllocatingFuture,
            _ => return None,
        })
    }

    /// Whether the operation plans the job (and so consumes a job id).
    pub fn allocates(self) -> bool {
        matches!(
            self,
            MatchOp::Allocate
                | MatchOp::AllocateOrElseReserve
                | MatchOp::AllocateWithSatisfiability
        )
    }
}

/// Why a match found nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MatchFailure {
    /// Not now (or not at any reservation time tried).
    #[error("no matching resources found")]
    Busy,
    /// Never, on this graph.
    #[error("unsatisfiable request")]
    Unsatisfiable,
    /// The request itself is invalid (duration, time past the graph's end, …).
    #[error("invalid request")]
    Invalid,
}

impl From<Errno> for MatchFailure {
    fn from(e: Errno) -> Self {
        match e {
            Errno::Busy => MatchFailure::Busy,
            Errno::NoDev => MatchFailure::Unsatisfiable,
            Errno::Inval => MatchFailure::Invalid,
        }
    }
}

/// The duration a jobspec asks for, as `jobmeta_t::build` reads it: absent or 0 means the
/// whole graph window, a fraction rounds up, negative or longer than the window is invalid.
fn job_duration(jobspec: &Jobspec) -> Result<i64, MatchFailure> {
    let d = jobspec.duration().unwrap_or(0.0);
    if d.is_nan() || d < 0.0 || d > GRAPH_END as f64 {
        return Err(MatchFailure::Invalid);
    }
    Ok(if d == 0.0 { GRAPH_END } else { d.ceil() as i64 })
}

impl Matcher {
    /// Runs `op` for `jobspec` as job `jobid`; on success the matched set went to `writer`
    /// and the answer is the time it was scheduled at (0 = now). Satisfiability answers 0 when
    /// the request could be met.
    pub fn run(
        &mut self,
        jobspec: &Jobspec,
        op: MatchOp,
        jobid: u64,
        writer: &mut dyn MatchWriter,
    ) -> Result<i64, MatchFailure> {
        if jobspec.resources.is_empty() {
            return Err(MatchFailure::Invalid);
        }
        let constrained = jobspec
            .attributes
            .as_ref()
            .and_then(|a| a.system.as_ref())
            .is_some_and(|s| s.constraints.is_some());
        if constrained {
            // Matching without them would hand out resources the job excluded.
            self.err_message += "RFC 31 constraints are not supported by this matcher\n";
            return Err(MatchFailure::Invalid);
        }
        let root_kind = self.graph.kind_id(self.root);
        let x = jobspec.resources.iter().any(|r| {
            self.graph.types().get(&r.kind) == Some(root_kind) && r.exclusive == Some(true)
        });
        let prepared = match self.prepared.take() {
            Some(p) if p.resources == jobspec.resources => p,
            _ => {
                // A new request tree: recorded visits of the old one must never match it.
                self.request_generation += 1;
                let mut dfv = Vec::new();
                let mut exclusive = self.policy_exclusive.clone();
                let requests = prime_requests(
                    &jobspec.resources,
                    &self.graph,
                    &self.filters,
                    self.flexible,
                    &mut exclusive,
                    &mut dfv,
                );
                let variants = if self.flexible {
                    let types = self.graph.types();
                    let xor_slot = types.get("xor_slot").unwrap_or(UNKNOWN_TYPE);
                    let slot = types.get("slot").unwrap_or(UNKNOWN_TYPE);
                    split_xor_slots(&requests, xor_slot, slot)
                } else {
                    Some(vec![requests])
                };
                Prepared {
                    resources: jobspec.resources.clone(),
                    variants,
                    dfv,
                    exclusive,
                }
            }
        };
        self.exclusive = prepared.exclusive.clone();
        let result = match &prepared.variants {
            Some(variants) => {
                self.run_primed(jobspec, variants, &prepared.dfv, op, jobid, x, writer)
            }
            None => {
                self.err_message +=
                    "select: split_xor_slots failed.\nValue too large for defined data type\n";
                Err(MatchFailure::Busy)
            }
        };
        self.exclusive = self.policy_exclusive.clone();
        self.prepared = Some(prepared);
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn run_primed(
        &mut self,
        jobspec: &Jobspec,
        variants: &[Vec<Request>],
        dfv: &[(u32, i64)],
        op: MatchOp,
        jobid: u64,
        x: bool,
        writer: &mut dyn MatchWriter,
    ) -> Result<i64, MatchFailure> {
        let mut meta = JobMeta {
            at: 0,
            now: 0,
            duration: job_duration(jobspec)?,
            jobid,
            alloc: AllocType::Alloc,
        };
        if matches!(
            op,
            MatchOp::WithoutAllocating | MatchOp::WithoutAllocatingFuture
        ) {
            meta.alloc = AllocType::NoAlloc;
        }
        if op == MatchOp::Satisfiability {
            self.probe_satisfiability(variants, &mut meta, x)?;
            return Ok(0);
        }
        self.schedule(variants, dfv, &mut meta, x, op)?;
        let at = meta.at;
        if at == GRAPH_END {
            return Err(MatchFailure::Busy);
        }
        if !(0..=GRAPH_END).contains(&at) {
            return Err(MatchFailure::Invalid);
        }
        meta.duration = meta.duration.min(GRAPH_END - at);
        if self.update(&meta, writer) {
            Ok(at)
        } else {
            Err(MatchFailure::Busy)
        }
    }

    /// The instant satisfiability is checked at: the far end of the planners' window.
    fn far_end(&self, duration: i64) -> i64 {
        i64::MAX - duration - 1
    }

    fn probe_satisfiability(
        &mut self,
        variants: &[Vec<Request>],
        meta: &mut JobMeta,
        x: bool,
    ) -> Result<(), MatchFailure> {
        meta.alloc = AllocType::Satisfiability;
        meta.at = self.far_end(meta.duration);
        self.select_variants(variants, meta, x)
            .map_err(|_| MatchFailure::Unsatisfiable)
    }

    /// `request_feasible`: more nodes asked for than are up fails before any walk.
    fn request_feasible(&self, dfv: &[(u32, i64)], op: MatchOp) -> Result<(), MatchFailure> {
        let Some(node) = self.graph.types().get("node") else {
            return Ok(());
        };
        let target = aggregate_of(dfv, node);
        if target <= self.nodes_up as i64 {
            return Ok(());
        }
        if op == MatchOp::AllocateWithSatisfiability {
            Err(MatchFailure::Unsatisfiable)
        } else {
            Err(MatchFailure::Busy)
        }
    }

    fn schedule(
        &mut self,
        variants: &[Vec<Request>],
        dfv: &[(u32, i64)],
        meta: &mut JobMeta,
        x: bool,
        op: MatchOp,
    ) -> Result<(), MatchFailure> {
        self.request_feasible(dfv, op)?;
        if self.select_variants(variants, meta, x).is_ok() {
            return Ok(());
        }
        match op {
            MatchOp::AllocateWithSatisfiability => {
                self.probe_satisfiability(variants, meta, x)?;
                Err(MatchFailure::Busy)
            }
            MatchOp::AllocateOrElseReserve | MatchOp::WithoutAllocatingFuture => {
                if op == MatchOp::AllocateOrElseReserve {
                    meta.alloc = AllocType::OrElseReserve;
                }
                if self.reserve_search(variants, dfv, meta, x) {
                    return Ok(());
                }
                self.probe_satisfiability(variants, meta, x)?;
                Err(MatchFailure::Busy)
            }
            _ => Err(MatchFailure::Busy),
        }
    }

    /// Tries a full walk at each time the root's aggregates could fit the request, earliest
    /// first; true at the first that matches (`meta.at` is then that time).
    fn reserve_search(
        &mut self,
        variants: &[Vec<Request>],
        dfv: &[(u32, i64)],
        meta: &mut JobMeta,
        x: bool,
    ) -> bool {
        let Some(plan) = self.subplans[self.root as usize].as_deref() else {
            return false;
        };
        // The walk's cursor lives in the planner; selection walks read the same planner, so
        // the search runs on a copy (no span changes until a match is found).
        let mut plan = plan.clone();
        let counts: Vec<u64> = self
            .subplan_types(self.root)
            .iter()
            .map(|&t| aggregate_of(dfv, t).max(0) as u64)
            .collect();
        let mut next: Result<Option<i64>, PlannerError> =
            plan.avail_time_first(meta.at + 1, meta.duration, &counts);
        while let Ok(Some(t)) = next {
            meta.at = t;
            if self.select_variants(variants, meta, x).is_ok() {
                return true;
            }
            next = plan.avail_time_next();
        }
        false
    }

    /// Cancels a job's allocation or reservation; false when it holds nothing.
    pub fn cancel(&mut self, jobid: u64) -> bool {
        self.cancel_spans(jobid)
    }

    /// The error text the last traversal left (Fluxion's `err_message`), cleared.
    pub fn take_error_message(&mut self) -> String {
        std::mem::take(&mut self.err_message)
    }
}
