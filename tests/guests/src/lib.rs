//! What the test guests (this crate's examples) and the tests that load them share.

pub mod copy_selection;
pub mod usage_priority;

/// The priority probe's factors and its trap.
pub mod priority_probe {
    /// Factor whose every value is the number of set-cluster calls the instance has received.
    pub const SET_CLUSTER: &str = "SET-CLUSTER";
    /// Factor whose every value is the number of add-associations calls the instance received.
    pub const ADD_ASSOCIATIONS: &str = "ADD-ASSOCIATIONS";
    /// Factor whose every value is the number of associations in the cluster the instance holds.
    pub const ASSOCIATIONS: &str = "ASSOCIATIONS";
    /// A job id that makes `compute` trap.
    pub const TRAP_JOB: u32 = u32::MAX;
}

/// The job ids the selection probe answers specially.
pub mod selection_probe {
    /// A job id whose placement is the guest's copy.
    pub const COPY_JOB: u32 = u32::MAX - 2;
    /// A job id whose placement's nodes are the calls the guest got.
    pub const CALLS_JOB: u32 = u32::MAX - 1;
    /// A job id that makes `place` trap.
    pub const TRAP_JOB: u32 = u32::MAX;
    /// A job id whose placement asks more CPUs than its node has.
    pub const OVERSIZE_JOB: u32 = u32::MAX - 3;
}
