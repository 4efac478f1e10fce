//! What one visit of a vertex is, for the traverser and its replay cache alike: the job it is
//! for ([`JobMeta`], [`AllocType`]), how it fails ([`Errno`]), what it hands its parent
//! ([`Visited`]) and the record a replay keeps ([`CachedVisit`]). Plain data, below both.

use crate::scoring::Scoring;

/// Why a traversal step failed (the errno Fluxion sets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Errno {
    /// Not now (EBUSY).
    Busy,
    /// Never (ENODEV).
    NoDev,
    /// Invalid request (EINVAL).
    Inval,
}

/// What kind of match a traversal is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AllocType {
    Alloc,
    OrElseReserve,
    Satisfiability,
    NoAlloc,
}

/// The job being matched: when, for how long, under which id.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JobMeta {
    pub at: i64,
    pub now: i64,
    pub duration: i64,
    pub jobid: u64,
    pub alloc: AllocType,
}

/// What a successful visit hands its parent.
#[derive(Debug, Clone)]
pub(crate) struct Visited {
    /// Candidates of a level that chose nothing, for the parent to choose among.
    pub merged: Option<Scoring>,
    /// Units of the vertex free during the job.
    pub avail: u32,
    /// The vertex's score.
    pub overall: i64,
}

impl Visited {
    /// Hands a recorded visit's result to the parent again.
    pub(crate) fn apply_ref(&self, to_parent: &mut Scoring) {
        if let Some(m) = &self.merged {
            to_parent.merge(m.clone());
        }
        to_parent.avail = self.avail;
        to_parent.overall = self.overall;
    }

    pub(crate) fn apply(self, to_parent: &mut Scoring) {
        if let Some(m) = self.merged {
            to_parent.merge(m);
        }
        to_parent.avail = self.avail;
        to_parent.overall = self.overall;
    }
}

/// Everything a visit's outcome depends on besides the subtree itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VisitKey {
    pub(crate) requests: usize,
    pub(crate) len: usize,
    pub(crate) generation: u64,
    pub(crate) pristine: bool,
    pub(crate) excl: bool,
    pub(crate) at: i64,
    pub(crate) duration: i64,
    pub(crate) alloc: AllocType,
    pub(crate) ml_scores: i64,
}

/// One recorded visit.
#[derive(Debug, Clone)]
pub(crate) struct CachedVisit {
    pub(crate) key: VisitKey,
    pub(crate) stamp: u64,
    pub(crate) result: Result<Visited, Errno>,
    pub(crate) marks: Vec<(u32, u32, bool)>,
    pub(crate) message: String,
    pub(crate) preorder: u32,
    pub(crate) postorder: u32,
    pub(crate) ml_delta: i64,
}

/// Where the effects of a visit being recorded start.
pub(crate) struct RecordingStart {
    pub(crate) marks: usize,
    pub(crate) message: usize,
    pub(crate) preorder: u32,
    pub(crate) postorder: u32,
    pub(crate) ml_scores: i64,
}
