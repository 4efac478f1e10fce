//! Helpers shared by the integration tests: tiny workloads and replays that keep every record.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sluice_sim::{
    MemoryWorkload, ReplayConfig, ReplayOutput, RuntimeMode, SchedulerKind, SwfFields, Time,
    Workload, WorkloadJob, replay,
};

/// The KTH-SP2 cleaned trace shipped with the tests.
pub fn kth_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/KTH-SP2-1996-2.1-cln.swf.gz")
}

/// A job from (id, submit, run time, requested time, processors).
pub fn job(id: u64, submit: Time, run: Time, requested: Time, procs: u32) -> WorkloadJob {
    WorkloadJob {
        id,
        submit,
        run_time: run,
        requested_time: requested,
        procs,
        swf: SwfFields::UNKNOWN,
        slurm: None,
    }
}

/// Replays in-memory jobs and keeps every record.
pub fn run(
    jobs: &[WorkloadJob],
    procs: u32,
    kind: SchedulerKind,
    runtime: RuntimeMode,
) -> ReplayOutput {
    let mut source = MemoryWorkload::new(jobs, 0, None);
    let mut scheduler = kind.build(procs);
    let config = ReplayConfig {
        procs,
        runtime,
        keep_records: true,
    };
    replay(&mut source, &mut scheduler, &config, ()).expect("replay succeeds")
}

/// Start time by job id.
pub fn starts(output: &ReplayOutput) -> BTreeMap<u64, Time> {
    output.records.iter().map(|r| (r.id, r.start)).collect()
}

/// Replays the shipped KTH trace on 100 processors, keeping every record.
pub fn run_kth(kind: SchedulerKind, runtime: RuntimeMode) -> ReplayOutput {
    let mut workload = Workload::open(&kth_path()).expect("the KTH trace opens");
    let mut scheduler = kind.build(100);
    let config = ReplayConfig {
        procs: 100,
        runtime,
        keep_records: true,
    };
    replay(&mut workload, &mut scheduler, &config, ()).expect("KTH replays")
}
