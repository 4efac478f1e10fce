//! Issue 46 finding 9: the resident memory hot swaps of an 18 MB Python component cost, measured
//! the way the daemon swaps (`PolicySet::stage`, then `apply_staged` between passes), each
//! scenario in a process of its own so one's memory is not counted in another's.
//!
//! Ignored by default: it builds two Python components with componentize-py (from
//! `$SLUICE_LANG_TOOLS/venv`, else installed once into the target directory, as
//! `host/sluice/tests/other_languages.rs` does) and compiles each once. Run it with
//! `cargo test -p sluice-runtime --test swap_memory -- --ignored --nocapture`.

use std::path::{Path, PathBuf};
use std::process::Command;

use sluice_policy::PluginKind;
use sluice_runtime::compile::WasmEngine;
use sluice_runtime::policy_set::SwapOutcome;
use sluice_runtime::{Limits, Loader, PluginSpec, PolicySet};

/// The child process's instructions: `<same|alternate> <swaps> <cache dir> <a.wasm> <b.wasm>`.
const SCENARIO: &str = "SLUICE_SWAP_SCENARIO";

/// Resident memory of this process, in MiB: total, anonymous and file-backed.
fn rss() -> (u64, u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").expect("linux /proc");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024)
    };
    (field("VmRSS:"), field("RssAnon:"), field("RssFile:"))
}

/// Runs the scenario `SCENARIO` names, when it names one; prints one `rss` line per swap.
#[test]
#[ignore = "a child process of rss_after_ten_swaps_of_an_18_mb_component"]
fn swap_child() {
    let Ok(scenario) = std::env::var(SCENARIO) else {
        return;
    };
    let args: Vec<&str> = scenario.split(' ').collect();
    let [mode, swaps, cache, a, b] = args[..] else {
        panic!("bad scenario {scenario:?}")
    };
    let swaps: usize = swaps.parse().unwrap();
    let cache = (cache != "-").then(|| PathBuf::from(cache));
    let loader = Loader::new(WasmEngine::new(cache));
    let mut set = PolicySet::load(&loader, &[]).unwrap();
    let (total, anon, file) = rss();
    println!("rss 0 {total} {anon} {file}");
    for swap in 1..=swaps {
        let plugin = if mode == "alternate" && swap % 2 == 0 {
            b
        } else {
            a
        };
        let spec = PluginSpec {
            kind: PluginKind::Priority,
            plugin: plugin.to_string(),
            settings: Default::default(),
            limits: Limits::default(),
        };
        set.stage(&loader, spec).join().unwrap();
        for outcome in set.apply_staged() {
            assert!(
                matches!(outcome, SwapOutcome::Published { .. }),
                "{outcome}"
            );
        }
        let (total, anon, file) = rss();
        println!("rss {swap} {total} {anon} {file}");
    }
}

/// The resident MiB after each swap of one scenario, run in a fresh process with an empty
/// compiled-component cache on disk (none when not `disk`); index 0 is before the first swap.
fn measure(mode: &str, swaps: usize, disk: bool, a: &Path, b: &Path) -> Vec<u64> {
    let cache = tempdir(&format!("cache-{mode}-{disk}"));
    let cache_arg = if disk {
        cache.display().to_string()
    } else {
        "-".into()
    };
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "swap_child", "--ignored", "--nocapture"])
        .env(
            SCENARIO,
            format!("{mode} {swaps} {cache_arg} {} {}", a.display(), b.display()),
        )
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{mode}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut figures = Vec::new();
    let with = if disk { "a" } else { "no" };
    println!(
        "{mode} ×{swaps}, {with} cache on disk: MiB resident (anonymous, file-backed) after each swap"
    );
    for line in text.lines().filter_map(|l| l.strip_prefix("rss ")) {
        let f: Vec<u64> = line.split(' ').map(|n| n.parse().unwrap()).collect();
        println!("  swap {:>2}: {:>5} ({:>5}, {:>4})", f[0], f[1], f[2], f[3]);
        figures.push(f[1]);
    }
    let disk: u64 = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    println!("  compiled cache on disk: {} MiB", disk >> 20);
    assert_eq!(figures.len(), swaps + 1, "{text}");
    figures
}

fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("swap-memory")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `venv/bin/componentize-py`'s folder: `$SLUICE_LANG_TOOLS`, else one installed into the target
/// directory (shared with `other_languages.rs`'s).
fn componentize_py() -> PathBuf {
    let dir = std::env::var_os("SLUICE_LANG_TOOLS").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).join("lang-tools"),
        PathBuf::from,
    );
    let tool = dir.join("venv/bin/componentize-py");
    if !tool.exists() {
        let ok = |cmd: &mut Command| assert!(cmd.status().unwrap().success(), "{cmd:?}");
        ok(Command::new("python3")
            .args(["-m", "venv"])
            .arg(dir.join("venv")));
        ok(Command::new(dir.join("venv/bin/pip")).args([
            "install",
            "-q",
            "componentize-py==0.25.1",
        ]));
    }
    tool
}

/// The Python example built as a component, with `variant` appended to its source so that two
/// variants are distinct bytes of the same size.
fn python_component(tool: &Path, variant: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let src = tempdir(&format!("src-{variant}"));
    let app = std::fs::read_to_string(root.join("examples/deadline-priority-python/app.py"))
        .unwrap()
        + &format!("\nVARIANT = {variant:?}\n");
    std::fs::write(src.join("app.py"), app).unwrap();
    let out = src.join("policy.wasm");
    let status = Command::new(tool)
        .arg("-d")
        .arg(root.join("wit"))
        .args(["-w", "priority-policy", "componentize", "app", "-p"])
        .arg(&src)
        .arg("-p")
        .arg(root.join("sdk/python"))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "componentize-py failed");
    out
}

#[test]
#[ignore = "builds two 18 MB Python components and swaps them in child processes; run it with --ignored"]
fn rss_after_ten_swaps_of_an_18_mb_component() {
    let tool = componentize_py();
    let (a, b) = (python_component(&tool, "a"), python_component(&tool, "b"));
    let size = std::fs::metadata(&a).unwrap().len();
    println!("component: {} MiB", size >> 20);
    let same = measure("same", 10, true, &a, &b);
    let alternate = measure("alternate", 10, true, &a, &b);
    let same_compiled = measure("same", 10, false, &a, &b);
    let alternate_compiled = measure("alternate", 10, false, &a, &b);
    // Generous bounds, not a tight budget: what must hold is that swaps stop adding memory once
    // the slot's two generations are loaded.
    assert!(
        same[10] < same[1] + 100,
        "10 swaps of the same bytes: {same:?} MiB"
    );
    assert!(
        alternate[10] < alternate[2] + 150,
        "10 swaps alternating two components: {alternate:?} MiB"
    );
    assert!(
        same_compiled[10] < same_compiled[1] + 100,
        "10 swaps of the same bytes, no cache on disk: {same_compiled:?} MiB"
    );
    assert!(
        alternate_compiled[10] < alternate_compiled[2] + 150,
        "10 swaps alternating two components, no cache on disk: {alternate_compiled:?} MiB"
    );
}
