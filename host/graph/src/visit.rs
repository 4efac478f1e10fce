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
    #[inline]
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

/// Everything a visit's outcome depends on besides the subtree itself: the request level
/// (its address and length, and the request tree's generation), whether the level is
/// pristine, the exclusivity handed down, the job's window and kind of match, and the
/// ancestors' score factors. Packed into words, since every replay compares a whole key.
#[derive(Debug, Clone, Copy, Eq)]
pub(crate) struct VisitKey([u64; 6]);

impl PartialEq for VisitKey {
    /// Word by word without branches (the derived comparison calls `memcmp`).
    fn eq(&self, other: &Self) -> bool {
        self.0
            .iter()
            .zip(&other.0)
            .fold(0, |differ, (a, b)| differ | (a ^ b))
            == 0
    }
}

impl VisitKey {
    pub(crate) fn new(
        requests: &[crate::match_request::Request],
        generation: u64,
        pristine: bool,
        excl: bool,
        meta: &JobMeta,
        ml_scores: i64,
    ) -> Self {
        let alloc = match meta.alloc {
            AllocType::Alloc => 0u64,
            AllocType::OrElseReserve => 1,
            AllocType::Satisfiability => 2,
            AllocType::NoAlloc => 3,
        };
        let flags = u64::from(pristine) | u64::from(excl) << 1 | alloc << 2;
        VisitKey([
            requests.as_ptr() as usize as u64,
            (requests.len() as u64) << 8 | flags,
            generation,
            meta.at as u64,
            meta.duration as u64,
            ml_scores as u64,
        ])
    }
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
