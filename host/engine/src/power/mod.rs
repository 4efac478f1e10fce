//! Owns no state itself: power saving and cloud bursting as Slurm's power thread does them.
//!
//! The behaviour is power-save.md §1. `state` owns every node's power flags, timestamps and effective timers, the resume job
//! list and the rate buckets; `pass` is the power pass on the engine's clock, run by
//! `Engine::tick` after the scheduling passes and woken by `Engine::next_wakeup`; `update` is
//! `scontrol update NodeName=… State=POWER_*|RESUME|DOWN…` and a node's registration; `jobs`
//! is where jobs meet power (allocation, release, kill or requeue, CONFIGURING → RUNNING);
//! `display` is scontrol's and sinfo's state strings. Decisions leave as
//! [`crate::Event::Power`]: program calls with their hostlist, reasons and resume file, and
//! jobs ready to launch. docs/power-save.md says which of Slurm's quirks are kept and why.

pub mod bench;
mod bucket;
mod display;
pub(crate) mod event;
mod exclude;
mod flags;
mod jobs;
mod pass;
pub(crate) mod state;
mod timers;
mod update;

pub use display::NodePowerReport;
pub use event::{PowerCall, PowerEvent, Program, ResumeFile, ResumeJob};
pub use flags::PowerFlags;
pub use jobs::REQUEUE_DELAY;
pub use state::{NodePower, PowerState};
pub use timers::Timers;
pub use update::{NodeUpdate, NodeUpdateError};
