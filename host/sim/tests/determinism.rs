//! Same inputs, same bytes: CSV and report folders from two runs are identical.

mod common;

use std::path::PathBuf;

use sluice_sim::csv::CsvWriter;
use sluice_sim::{ReplayConfig, RuntimeMode, SchedulerKind, Workload, replay, report};

fn csv_bytes(kind: SchedulerKind) -> Vec<u8> {
    let mut workload = Workload::open(&common::kth_path()).unwrap();
    let mut scheduler = kind.build(100);
    let config = ReplayConfig {
        procs: 100,
        runtime: RuntimeMode::RunToCompletion,
        keep_records: false,
    };
    let mut csv = CsvWriter::new(Vec::new()).unwrap();
    replay(&mut workload, &mut scheduler, &config, &mut csv).unwrap();
    csv.finish().unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("sluice-sim-{name}-{}", std::process::id()))
}

#[test]
fn two_runs_write_identical_csv_bytes() {
    for kind in [SchedulerKind::Easy, SchedulerKind::Conservative] {
        let first = csv_bytes(kind);
        let second = csv_bytes(kind);
        assert_eq!(first, second, "{kind}");
        let text = String::from_utf8(first).unwrap();
        assert!(text.starts_with("id,submit,start,end,procs,wait,bsld\n"));
        assert_eq!(text.lines().count(), 28_475 + 1);
    }
}

#[test]
fn two_runs_write_identical_report_folders() {
    let dirs = [temp_dir("report-a"), temp_dir("report-b")];
    for dir in &dirs {
        let run = common::run_kth(SchedulerKind::Easy, RuntimeMode::KillAtLimit);
        report::write_report(dir, &run, "KTH").unwrap();
    }
    for file in [
        report::UTILIZATION_SVG,
        report::QUEUE_SVG,
        report::WAITS_SVG,
        report::SUMMARY_MD,
    ] {
        let a = std::fs::read(dirs[0].join(file)).unwrap();
        let b = std::fs::read(dirs[1].join(file)).unwrap();
        assert!(!a.is_empty(), "{file} is empty");
        assert_eq!(a, b, "{file} differs");
    }
    for dir in &dirs {
        std::fs::remove_dir_all(dir).unwrap();
    }
}
