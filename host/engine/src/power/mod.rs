//! Owns no state itself: power saving and cloud bursting as Slurm's power thread does them.
//!
//! The behaviour is power-save.md §1.
//!
//! * `state` owns every node's power flags, timestamps, effective timers (`timers`) and next
//!   due time, the resume job list, the rate buckets (`bucket`) and the exclusions (`exclude`).
//! * `pass` is the power pass, run by `Engine::tick` after the scheduling passes; `pacing` says
//!   when it runs and wakes `Engine::next_wakeup`; `decide` says whether a node is due to be
//!   suspended or which exclusion keeps it up.
//! * `update` is `scontrol update NodeName=… State=POWER_*|RESUME|DOWN…` and a node's
//!   registration; `jobs` is where jobs meet power (allocation, release, kill or requeue,
//!   CONFIGURING → RUNNING); `display` is scontrol's and sinfo's state strings; `restore` puts a saved
//!   node record back after a restart of the host.
//! * Decisions leave as [`crate::Event::Power`] (`event`): program calls with their hostlist,
//!   reasons and resume file, and jobs ready to launch. docs/power-save.md says which of
//!   Slurm's quirks are kept and why; `bench` times a pass.

pub mod bench;
mod bucket;
mod decide;
mod display;
pub(crate) mod event;
mod exclude;
mod flags;
mod jobs;
mod pacing;
mod pass;
mod restore;
pub(crate) mod state;
mod timers;
mod update;

pub use display::NodePowerReport;
pub use event::{PowerCall, PowerEvent, Program, ResumeFile, ResumeJob};
pub use flags::PowerFlags;
pub use jobs::REQUEUE_DELAY;
pub use restore::SavedPower;
pub use state::{NodePower, PowerState};
pub use timers::Timers;
pub use update::{NodeUpdate, NodeUpdateError};
