//! `sluice sim --scheduler slurm` and `--compare A.toml B.toml`: the engine with the bundle as
//! components, on a small trace where fair share decides the order.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sluice(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .env(
            "SLUICE_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-component-cache"),
        )
        .output()
        .expect("sluice runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sim-engine-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// 4 processors: user 1 fills the machine until 1000 and queues two more jobs; user 2's job
/// arrives last. FIFO starts it at 1200, fair share at 1000.
const TRACE: &str = "; MaxProcs: 4
1 0 -1 1000 4 -1 -1 4 1000 -1 1 1 1 -1 -1 -1 -1 -1
2 10 -1 100 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1
3 20 -1 100 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1
4 30 -1 100 4 -1 -1 4 100 -1 1 2 1 -1 -1 -1 -1 -1
";

fn cluster_toml(priority: &str) -> String {
    format!(
        r#"ClusterName = "t"

[priority]
PriorityWeightFairshare = 100000

[plugins.priority]
plugin = "{priority}"

[[nodes]]
NodeName = "n[1-4]"
CPUs = 1
RealMemory = 1

[[partitions]]
PartitionName = "batch"
Nodes = "n[1-4]"
Default = true
MaxTime = "UNLIMITED"
"#
    )
}

/// Start time of each job id in a `sluice sim --csv` file.
fn starts(csv: &Path) -> Vec<(u64, i64)> {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut rows: Vec<(u64, i64)> = text
        .lines()
        .skip(1)
        .map(|line| {
            let cols: Vec<&str> = line.split(',').collect();
            (cols[0].parse().unwrap(), cols[2].parse().unwrap())
        })
        .collect();
    rows.sort_unstable();
    rows
}

#[test]
fn slurm_replays_a_trace_with_the_wasm_bundle() {
    let dir = scratch("single");
    let trace = dir.join("t.swf");
    std::fs::write(&trace, TRACE).unwrap();
    let csv = dir.join("jobs.csv");
    let out = sluice(&[
        "sim",
        "--trace",
        trace.to_str().unwrap(),
        "--scheduler",
        "slurm",
        "--json",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"], 4);
    assert_eq!(v["procs"], 4);
    assert_eq!(v["scheduler"], "slurm");
    // The flat machine's multifactor weighs fair share: user 2 goes before user 1's backlog.
    assert_eq!(starts(&csv), vec![(1, 0), (2, 1100), (3, 1200), (4, 1000)]);
    let again = dir.join("again.csv");
    let out = sluice(&[
        "sim",
        "--trace",
        trace.to_str().unwrap(),
        "--scheduler",
        "slurm",
        "--bundle",
        "native",
        "--csv",
        again.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read(&csv).unwrap(),
        std::fs::read(&again).unwrap(),
        "components and native code decide alike"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compare_shows_where_two_bundles_differ() {
    let dir = scratch("compare");
    let trace = dir.join("t.swf");
    std::fs::write(&trace, TRACE).unwrap();
    let a = dir.join("fairshare.toml");
    let b = dir.join("fifo.toml");
    std::fs::write(&a, cluster_toml("multifactor")).unwrap();
    std::fs::write(&b, cluster_toml("basic")).unwrap();
    let report = dir.join("report");
    let out = sluice(&[
        "sim",
        "--trace",
        trace.to_str().unwrap(),
        "--compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["a"]["scheduler"], "fairshare");
    assert_eq!(v["b"]["scheduler"], "fifo");
    assert!(v["jobs_moved"].as_u64().unwrap() >= 2, "{v}");
    let md = std::fs::read_to_string(report.join("comparison.md")).unwrap();
    assert!(md.contains("| 4 | 30 | 1000 | 1200 | +200 |"), "{md}");
    std::fs::remove_dir_all(&dir).unwrap();
}
