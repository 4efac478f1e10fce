//! Owns the storage the main loop's and backfill's passes and start attempts reuse between passes.
//!
//! A replay runs tens of thousands of passes, so their storage is kept, not grown anew; what it
//! holds is only valid within one pass.

use sluice_policy::{JobRequest, NodeBitmap};

use crate::backfill::map::NodeSpaceMap;
use crate::backfill::planner::PlanningBuffers;

/// Every pass's storage, which the engine keeps and lends to each pass.
#[derive(Default)]
pub(crate) struct PassBuffers {
    /// The main loop's.
    pub main: MainPassBuffers,
    /// The backfill loop's.
    pub backfill: BackfillPassBuffers,
    /// Backfill planning's.
    pub planning: PlanningBuffers,
}

/// What a pass has already promised on top of running jobs: nodes off limits for this start, and
/// license and HRES amounts held by backfill's planned jobs over the start's run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Plan {
    /// Nodes the job may not use.
    pub exclude: NodeBitmap,
    /// Extra held per cluster license (empty: none).
    pub lic_held: Vec<i64>,
    /// Extra held per HRES layer (empty: none).
    pub hres_held: Vec<i64>,
}

/// Storage a pass's start attempts reuse ([`crate::Engine::try_start`]): the job's candidate
/// nodes and its placement request.
#[derive(Default)]
pub(crate) struct StartBuffers {
    pub candidates: NodeBitmap,
    pub request: JobRequest,
}

/// Storage a main-loop pass reuses from the last one.
#[derive(Default)]
pub(crate) struct MainPassBuffers {
    /// The usable nodes at the pass's start.
    pub usable: NodeBitmap,
    /// What the pass holds back: the nodes of partitions that failed this pass.
    pub plan: Plan,
    /// Per partition: whether a job failed there this pass, and jobs tested.
    pub failed_part: Vec<bool>,
    pub part_tested: Vec<u32>,
    /// What the pass's start attempts build.
    pub start: StartBuffers,
}

/// Storage a backfill pass's loop over the queue reuses from the last one (planning has its
/// own, [`PlanningBuffers`]).
#[derive(Default)]
pub(crate) struct BackfillPassBuffers {
    /// Every node, and the usable ones at the pass's start.
    pub all_nodes: NodeBitmap,
    pub usable: NodeBitmap,
    /// What planned jobs hold during the run of the job being tried.
    pub plan: Plan,
    /// Jobs tested per partition (the bf_max_job_part count).
    pub per_part: Vec<u32>,
    /// The fewest CPUs a job from each queue position on needs.
    pub fewest_after: Vec<u64>,
    /// The last pass's node-space map, reset for the next so that its slices are reused.
    pub map: NodeSpaceMap,
    /// What the pass's start attempts build.
    pub start: StartBuffers,
}
