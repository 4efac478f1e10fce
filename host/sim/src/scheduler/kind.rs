//! Choosing a built-in scheduler by name.

use std::fmt;
use std::str::FromStr;

use super::{Conservative, Easy, EasyAccasim, EasyNaive, Fcfs, ReplayScheduler};

/// The built-in flat-machine schedulers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchedulerKind {
    /// First come, first served, no backfilling.
    Fcfs,
    /// EASY backfilling (shadow time and extra processors).
    Easy,
    /// Conservative backfilling (a reservation for every queued job).
    Conservative,
    /// The naive EASY used as a speed baseline; same schedule as `Easy`.
    EasyNaive,
    /// AccaSim's published EASY (fixed reservation on specific nodes), for the KTH cross-check.
    EasyAccasim,
}

impl SchedulerKind {
    /// Every kind, in the order `--help` lists them.
    pub const ALL: [SchedulerKind; 5] = [
        SchedulerKind::Fcfs,
        SchedulerKind::Easy,
        SchedulerKind::Conservative,
        SchedulerKind::EasyNaive,
        SchedulerKind::EasyAccasim,
    ];

    /// The name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SchedulerKind::Fcfs => "fcfs",
            SchedulerKind::Easy => "easy",
            SchedulerKind::Conservative => "conservative",
            SchedulerKind::EasyNaive => "easy-naive",
            SchedulerKind::EasyAccasim => "easy-accasim",
        }
    }

    /// A fresh scheduler of this kind for an empty machine with `procs` processors.
    pub fn build(self, procs: u32) -> Box<dyn ReplayScheduler> {
        match self {
            SchedulerKind::Fcfs => Box::new(Fcfs::new(procs)),
            SchedulerKind::Easy => Box::new(Easy::new(procs)),
            SchedulerKind::Conservative => Box::new(Conservative::new(procs)),
            SchedulerKind::EasyNaive => Box::new(EasyNaive::new(procs)),
            SchedulerKind::EasyAccasim => Box::new(EasyAccasim::new(procs)),
        }
    }
}

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A scheduler name that is not one of the built-in ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scheduler `{0}` (expected fcfs, easy, conservative, easy-naive or easy-accasim)")]
pub struct UnknownScheduler(pub String);

impl FromStr for SchedulerKind {
    type Err = UnknownScheduler;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        SchedulerKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == text)
            .ok_or_else(|| UnknownScheduler(text.to_string()))
    }
}
