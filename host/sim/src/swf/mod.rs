//! The Standard Workload Format of the Parallel Workloads Archive: header comments and job lines.

mod header;
mod line;
mod reader;

pub use header::SwfHeader;
pub use reader::{DropCounts, SwfReader};
