//! What one run of sibling visits recorded, for `visit_run` to replay.

use smallvec::SmallVec;

use crate::visit::VisitKey;

/// How many consecutive siblings one record covers: long enough that a replay costs little
/// per child, short enough that the run holding the one child a match changed is cheap to
/// walk child by child.
pub(crate) const RUN_LEN: usize = 8;

/// The candidate one child of a run handed its parent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunChild {
    pub(crate) kind: u32,
    pub(crate) edge: u32,
    pub(crate) avail: u32,
    pub(crate) score: i64,
    pub(crate) exclusive: bool,
}

/// The recorded effects of exploring one run of siblings.
#[derive(Debug, Clone)]
pub(crate) struct RunRecord {
    /// The key of the run's first child; the others' follow from it and the subtrees.
    pub(crate) key: VisitKey,
    pub(crate) stamp: u64,
    // Inline, so that replaying the runs of one parent reads one array from start to end.
    pub(crate) children: SmallVec<[RunChild; RUN_LEN]>,
    pub(crate) marks: SmallVec<[(u32, u32, bool); RUN_LEN]>,
    pub(crate) message: String,
    pub(crate) preorder: u32,
    pub(crate) postorder: u32,
    pub(crate) ml_delta: i64,
}

impl RunRecord {
    /// Heap bytes the record holds besides itself.
    pub(crate) fn heap_bytes(&self) -> usize {
        let spilled = |bytes: usize, spilled: bool| if spilled { bytes } else { 0 };
        spilled(
            self.children.capacity() * std::mem::size_of::<RunChild>(),
            self.children.spilled(),
        ) + spilled(
            self.marks.capacity() * std::mem::size_of::<(u32, u32, bool)>(),
            self.marks.spilled(),
        ) + self.message.capacity()
    }
}
