//! The scheduling engine: job lifecycle, queue order, main loop and backfill on a given clock.
//!
//! # Using the engine
//!
//! ```ignore
//! use std::sync::Arc;
//! use sluice_engine::{Engine, Policies, JobSpec, ManualClock, Event};
//!
//! let clock = ManualClock::new(1_700_000_000);          // or WallClock::new() in the daemon
//! let mut engine = Engine::new(cluster, Policies {         // cluster: sluice_cluster::Cluster
//!     priority: Box::new(priority_policy),                 // any PriorityPolicy + Send
//!     selection: Box::new(selection_policy),               // any SelectionPolicy + Send
//!     hres: None,                                          // Some(..) to accept HRES requests
//!     gres: vec![("gpu".into(), Box::new(gpu_policy))],    // GresPolicy per GRES name; empty = host only
//! }, Arc::new(clock.clone()));                             // try_with_config: Err if a GRES policy refuses the config
//!
//! let id = engine.submit(JobSpec { min_nodes: 2, time_limit: Some(600), ..JobSpec::new("alice") })?;
//! for event in engine.tick() {                             // event-triggered main loop runs here
//!     match event {
//!         Event::Started { job, nodes, .. } => { /* launch */ }
//!         Event::Ended { job, state, .. } => { /* kill if still there */ }
//!         Event::Power(power) => { /* run a power program, or launch a job its boot held */ }
//!     }
//! }
//! clock.advance(30);                                        // time passes (virtual or real)
//! engine.job_finished(id, 0)?;                              // the executor reports the end
//! let events = engine.tick();                               // timeouts, usage, periodic loops, backfill
//! ```
//!
//! * Every state change goes through an event method (`submit`, `cancel`, `hold`, `release`,
//!   `job_finished`, `node_down`, `node_drain`, `node_resume`, `update_node`, `register_node`,
//!   `create_reservation`); decisions come out of [`Engine::tick`] (or [`Engine::schedule`] /
//!   [`Engine::backfill`] to force a pass) as [`Event`]s. The engine never reads the system time;
//!   [`Engine::next_wakeup`] tells a discrete-event simulator when to tick next.
//! * Policies are consulted only through the `sluice-policy` traits; every answer is checked with
//!   the contract's own checks and a refused one leaves the job pending (see [`Engine::faults`]).
//! * Reports: [`Engine::queue_rows`] (squeue), [`Engine::priority_rows`] (sprio),
//!   [`Engine::share_rows`] (sshare -l), [`Engine::node_report`] (scontrol show node, with
//!   `Gres=`/`GresUsed=` and every device's holder), [`Engine::license_report`] (scontrol show
//!   license, licenses and HRES layers), all `Serialize` for `--json` and `Display` as scontrol.
//! * GRES ([`gres`]): per node the devices (bitmaps where gres.conf gives files, counts where not),
//!   per job the request as written and one record per name and type with arrays indexed by
//!   allocation position, per step a subset. Devices are chosen by each name's `GresPolicy::pick`
//!   near the CPUs the job got (the lowest free CPU ids of each node); [`Engine::job_env`] and
//!   [`Engine::step_env`] give the environment; [`Engine::requeue`] and [`Engine::shrink`] rebuild
//!   the arrays. `EngineConfig::debug_gres` logs every change on target `sluice::gres`.
//! * Association and QOS limits and partition access ([`limits`]) are enforced as the cluster's
//!   `AccountingStorageEnforce` says: a submission over a submit limit (or a per-job limit with
//!   `DenyOnLimit`) is refused, a job over a running limit pends with Slurm's reason
//!   ([`LimitReason`]), in the main loop and backfill alike.
//! * Job arrays ([`Engine::submit_array`]): each task is a job carrying its [`ArrayTask`];
//!   the array's throttle holds the rest with `JobArrayTaskLimit` in both loops, and
//!   dependencies may name a whole array, one task, or (`aftercorr`) the task of the same index.
//! * The scheduler besides the main loop is chosen with [`SchedulerKind`] (Slurm's backfill by
//!   default, EASY, conservative, or plain FCFS) via [`EngineConfig`] or [`Engine::set_scheduler`].
//! * [`bench::run`] times one main-loop and one backfill pass on a synthetic cluster.
//!
//! # Where state lives
//!
//! Each file's first line says which state it owns; the code that changes that state lives
//! with it, and no two modules import each other (`tests/structure.rs` checks both).
//!
//! * State: `engine.rs` (the struct holding the pieces below, and their construction),
//!   `job.rs` and `job_map.rs` (jobs), `array.rs` (job arrays: tasks, throttle, outcomes), `pending.rs` (pending jobs, and
//!   `ready.rs`, their eligible records kept in pass order between passes), `node_state.rs` (nodes, partitions' nodes),
//!   `licenses.rs`, `gres/` (devices, CPUs held), `reservation.rs`, `usage.rs`, `priority.rs`
//!   (priority calculation), `pacing.rs` (when passes ran), `stats.rs`, `config.rs`,
//!   `pass_buffers.rs` and `backfill/planner.rs` (storage passes reuse), `backfill/map.rs`.
//! * Passes, which borrow that state: `tick.rs` (when passes run), `queue_build.rs` (the queue a
//!   pass walks: built from every pending job, or the ready queue's head), `main_loop.rs`,
//!   `backfill/mod.rs` (the loop), `backfill/planner.rs` (one job's plan, through the `fit.rs`
//!   view and the HRES policy), `start.rs` (a job's start, shared by both loops),
//!   `priority.rs` (`PriorityPass`).
//! * Events and reports: `submit.rs`, `array_events.rs` (arrays, their throttle and
//!   dependencies on them), `events.rs`, `ending.rs`, `eligibility.rs`, `steps.rs`,
//!   `resize.rs`, `resume.rs` (a running job taken back after a host restart), `report.rs`,
//!   `show.rs`; `fit.rs` answers whether a job fits.
//! * Power saving: `power/` (its `mod.rs` says which file owns what), with one hook each in
//!   `start.rs` (allocation), `ending.rs` (release) and `tick.rs` (the power pass).

pub mod array;
mod array_events;
pub mod array_spec;
pub mod backfill;
pub mod bench;
pub mod clock;
mod config;
mod eligibility;
mod ending;
mod engine;
pub mod error;
mod event;
mod events;
mod fit;
pub mod gres;
pub mod job;
mod job_id;
mod job_map;
pub mod licenses;
pub mod limits;
pub mod main_loop;
pub mod node_state;
mod pacing;
mod partition_gate;
mod pass_buffers;
mod pending;
pub mod power;
pub mod priority;
pub mod queue;
mod queue_build;
mod ready;
pub mod report;
pub mod request;
pub mod reservation;
mod resize;
mod resume;
pub mod show;
mod start;
pub mod state_log;
mod stats;
pub mod steps;
mod submit;
mod tick;
pub mod usage;

pub use array::{ArrayRecord, ArrayTask, TaskSlot};
pub use backfill::WillRunAnswer;
pub use clock::{Clock, ManualClock, WallClock};
pub use config::{EngineConfig, Policies, SchedulerKind};
pub use engine::Engine;
pub use error::{JobError, SubmitError, WillRunError};
pub use event::{Event, Loop};
pub use gres::{GresConfigError, GresRecord, JobGres, StepGres};
pub use job::{Allocation, CpuIds, Hold, Job, JobId, JobSpec, JobState, Reason, Step};
pub use limits::reason::LimitReason;
pub use power::{
    NodeUpdate, NodeUpdateError, PowerCall, PowerEvent, PowerFlags, Program, SavedPower,
};
pub use report::{PriorityRow, QueueRow, ShareRow};
pub use request::{Constraint, Dependency, DependencyKind, GresRequest, LicenseRequest};
pub use reservation::{Reservation, ReservationError, ReservationSpec};
pub use resume::ResumeError;
pub use show::{DeviceRow, LicenseReport, NodeReport};
pub use sluice_cluster::PartitionState;
pub use stats::{Faults, PassStats, PassTotals};

#[cfg(test)]
mod tests {
    #[test]
    fn engine_can_move_between_threads() {
        fn assert_send<T: Send>() {}
        assert_send::<crate::Engine>();
    }
}
