//! Helpers shared by the integration tests: tiny workloads and replays that keep every record.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sluice_sim::{
    MemoryWorkload, ReplayConfig, ReplayOutput, ReplayScheduler, RuntimeMode, SchedulerKind,
    SwfFields, Time, Workload, WorkloadJob, replay,
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

/// 10 processors. J1 holds 6 until t=100, so head J2 (8 procs) gets shadow time 100 with 2 extra
/// processors. J3 (2 procs, long) may use the extra ones; J4 (2 procs, long) fits but would delay
/// J2 once the extra processors are gone; J5 ends exactly at the shadow time.
pub fn head_protection_workload() -> Vec<WorkloadJob> {
    vec![
        job(1, 0, 100, 100, 6),
        job(2, 1, 50, 50, 8),
        job(3, 2, 500, 500, 2),
        job(4, 3, 500, 500, 2),
        job(5, 4, 96, 96, 2),
    ]
}

/// Start times by job id, from (id, start) pairs.
pub fn expect(pairs: &[(u64, Time)]) -> BTreeMap<u64, Time> {
    pairs.iter().copied().collect()
}

/// Replays in-memory jobs and keeps every record.
pub fn run(
    jobs: &[WorkloadJob],
    procs: u32,
    kind: SchedulerKind,
    runtime: RuntimeMode,
) -> ReplayOutput {
    run_on(kind.build(procs).as_mut(), jobs, procs, runtime)
}

/// [`run`] with a scheduler the test built.
pub fn run_on(
    scheduler: &mut dyn ReplayScheduler,
    jobs: &[WorkloadJob],
    procs: u32,
    runtime: RuntimeMode,
) -> ReplayOutput {
    let mut source = MemoryWorkload::new(jobs, 0, None);
    let config = ReplayConfig {
        procs,
        runtime,
        keep_records: true,
    };
    replay(&mut source, scheduler, &config, ()).expect("replay succeeds")
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
