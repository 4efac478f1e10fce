//! Workload replay: trace readers, virtual-clock simulation, metrics and reports.
//!
//! Read a workload ([`Workload::open`] for SWF or JSON lines), pick a scheduler
//! ([`SchedulerKind::build`] or any [`ReplayScheduler`]), and [`replay`] it; the
//! [`ReplayOutput`] feeds the [`csv`], [`report`] and [`compare`] writers. See `README.md` for the
//! exact semantics and the cross-check against published EASY results.

pub mod bench;
pub mod compare;
pub mod csv;
mod error;
mod histogram;
mod input;
mod job;
mod jsonl;
mod metrics;
pub mod progress;
mod record;
mod replay;
pub mod report;
mod runtime;
pub mod scenario;
pub mod scheduler;
mod series;
pub mod swf;
mod timeline;
mod workload;

pub use error::ReadError;
pub use histogram::WaitHistogram;
pub use job::{Dependency, SlurmRequest, SwfFields, Time, WorkloadJob};
pub use jsonl::JsonLinesReader;
pub use metrics::{Metrics, MetricsAccumulator};
pub use record::{BSLD_THRESHOLD_S, JobRecord, bounded_slowdown};
pub use replay::{ReplayConfig, ReplayError, ReplayObserver, ReplayOutput, replay};
pub use runtime::{RuntimeMode, UnknownRuntimeMode};
pub use scheduler::{ReplayScheduler, SchedulerKind};
pub use series::StepSeries;
pub use timeline::Timeline;
pub use workload::{JobSource, MemoryWorkload, Workload};
