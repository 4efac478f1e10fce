//! Issue 38: the deadline policy written in Python (componentize-py) and in JavaScript
//! (componentize-js on SpiderMonkey), each built with its tool's default flags and once with
//! WASI stubbed, passes `plugin check` and `plugin test --cases`, hot-swaps into a running
//! daemon, and replays KTH with exactly the schedule of its Rust twin.
//!
//! The tools come from PyPI and npm: `$SLUICE_LANG_TOOLS` (a folder with `venv/` and
//! `node_modules/`) when set, else installed once into the target directory.

mod common;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Daemon, state_dir};
use sluice_api::{PluginFile, Plugins, Role, Swapped};
use sluice_client::Client;

/// The checkout's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed:\n{text}");
    text
}

/// The folder holding `venv/bin/componentize-py` and `node_modules/.bin/componentize-js`,
/// installing them there first when they are missing.
fn tools() -> PathBuf {
    let dir = std::env::var_os("SLUICE_LANG_TOOLS").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).join("lang-tools"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    // One installer at a time, across test processes too.
    let lock = std::fs::File::create(dir.join(".lock")).unwrap();
    lock.lock().unwrap();
    if !dir.join("venv/bin/componentize-py").exists() {
        run(
            Command::new("python3")
                .args(["-m", "venv"])
                .arg(dir.join("venv")),
            "python3 -m venv",
        );
        run(
            Command::new(dir.join("venv/bin/pip")).args([
                "install",
                "-q",
                "componentize-py==0.25.1",
            ]),
            "pip install componentize-py",
        );
    }
    if !dir.join("node_modules/.bin/componentize-js").exists() {
        // npm installs next to the nearest package.json: make it this folder's.
        if !dir.join("package.json").exists() {
            std::fs::write(dir.join("package.json"), "{\"private\": true}\n").unwrap();
        }
        run(
            Command::new("npm").current_dir(&dir).args([
                "install",
                "--no-save",
                "--silent",
                "@bytecodealliance/componentize-js@0.23.0",
                // 0.26.1 no longer preopens `/` by default, which componentize-js needs.
                "@bytecodealliance/preview2-shim@0.26.0",
            ]),
            "npm install componentize-js",
        );
    }
    dir
}

/// Builds the Python example, with `--stub-wasi` when `stubbed`.
fn build_python(tools: &Path, out: &Path, stubbed: bool) {
    let example = root().join("examples/deadline-priority-python");
    let mut cmd = Command::new(tools.join("venv/bin/componentize-py"));
    cmd.arg("-d")
        .arg(root().join("wit"))
        .args(["-w", "priority-policy", "componentize"]);
    if stubbed {
        cmd.arg("--stub-wasi");
    }
    cmd.args(["app", "-p"])
        .arg(&example)
        .arg("-p")
        .arg(root().join("sdk/python"))
        .arg("-o")
        .arg(out);
    run(&mut cmd, "componentize-py");
}

/// Builds the JavaScript example, with every WASI feature disabled when `stubbed`.
fn build_js(tools: &Path, out: &Path, stubbed: bool) {
    let mut cmd = Command::new(tools.join("node_modules/.bin/componentize-js"));
    cmd.current_dir(root())
        .arg("examples/deadline-priority-js/app.js")
        .args(["--wit", "wit", "--world-name", "priority-policy"]);
    if stubbed {
        cmd.args([
            "--disable",
            "stdio",
            "random",
            "clocks",
            "http",
            "fetch-event",
        ]);
    }
    cmd.arg("-o").arg(out);
    run(&mut cmd, "componentize-js");
}

/// Where every `sluice` this test runs caches compiled components: compiling an 18 MB Python
/// component once is enough.
fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-component-cache")
}

fn sluice(args: &[&str]) -> String {
    run(
        Command::new(common::BIN)
            .args(args)
            .env("SLUICE_CACHE_DIR", cache_dir()),
        &format!("sluice {}", args.join(" ")),
    )
}

/// KTH-SP2 with a 100-processor header, as `sluice sim` reads it.
fn kth(dir: &Path) -> PathBuf {
    let path = dir.join("kth.swf");
    let gz = std::fs::File::open(root().join("host/sim/tests/data/KTH-SP2-1996-2.1-cln.swf.gz"))
        .unwrap();
    let mut out = std::fs::File::create(&path).unwrap();
    writeln!(out, "; MaxProcs: 100").unwrap();
    let lines = std::io::BufReader::new(flate2::read::GzDecoder::new(gz)).lines();
    for line in lines.map(Result::unwrap).filter(|l| !l.starts_with(';')) {
        writeln!(out, "{line}").unwrap();
    }
    path
}

/// The per-job CSV of a KTH replay with `plugin` as the priority policy, with settings under
/// which the deadline boost, age and size all count.
fn replay(dir: &Path, trace: &Path, name: &str, plugin: &str) -> Vec<u8> {
    let config = dir.join(format!("{name}.toml"));
    std::fs::write(
        &config,
        format!(
            r#"ClusterName = "kth"

[plugins.priority]
plugin = "{plugin}"
# SpiderMonkey's heap outgrows the default 64 MB on KTH's longest queues.
memory_limit_mb = 256

[plugins.priority.settings]
project = "root"
deadline = 900000
window = 400000
"weight.age" = 5000
"weight.size" = 20000

[[nodes]]
NodeName = "n[1-100]"
CPUs = 1
RealMemory = 1

[[partitions]]
PartitionName = "batch"
Nodes = "n[1-100]"
Default = true
"#
        ),
    )
    .unwrap();
    let csv = dir.join(format!("{name}.csv"));
    let config_arg = config.to_string_lossy().into_owned();
    let trace_arg = trace.to_string_lossy().into_owned();
    let csv_arg = csv.to_string_lossy().into_owned();
    let args = [
        "sim",
        "--scheduler",
        "slurm",
        "--config",
        config_arg.as_str(),
        "--trace",
        trace_arg.as_str(),
        "--csv",
        csv_arg.as_str(),
    ];
    let log = sluice(&args);
    assert!(!log.contains("fault"), "{name}: a pass faulted:\n{log}");
    std::fs::read(&csv).unwrap()
}

/// The daemon takes `plugin` as its priority policy while running.
fn hot_swaps(plugin: &Path) {
    let scratch = state_dir("lang-swap");
    let dir = scratch.path();
    // The CLI's compile cache, so the daemon loads what `plugin check` already compiled.
    let child = Command::new(common::BIN)
        .args(["serve", "--state-dir"])
        .arg(dir)
        .env("SLUICE_CACHE_DIR", cache_dir())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(dir.join("daemon.err")).unwrap())
        .spawn()
        .unwrap();
    let _daemon = Daemon::adopt(child, dir);
    let mut client = Client::new(dir);
    let swap = PluginFile {
        file: plugin.to_string_lossy().into_owned(),
        ..PluginFile::default()
    };
    let swapped: Swapped = client
        .post("/v1/plugins/priority/swap", &swap)
        .unwrap_or_else(|e| panic!("{}: swap refused: {e}", plugin.display()));
    let plugins: Plugins = client.get("/v1/plugins").unwrap();
    let active = plugins
        .generations
        .iter()
        .find(|g| g.kind == "priority" && g.role == Role::Active)
        .unwrap();
    assert_eq!(active.generation, swapped.generation);
    assert!(
        active.origin.contains(&*plugin.to_string_lossy()),
        "{active:?}"
    );
}

#[test]
fn python_and_javascript_policies_run_as_their_rust_twin_does() {
    let tools = tools();
    let scratch = tempfile::Builder::new()
        .prefix("sluice-langs-")
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    let trace = kth(dir);
    let rust = sluice_plugin_artifacts::component("sluice-example-deadline-priority");
    let twin = replay(dir, &trace, "rust", rust);
    let fifo = replay(dir, &trace, "basic", "basic");
    assert_ne!(
        twin, fifo,
        "the policy decides the schedule, so equal schedules mean something"
    );
    let cases = root().join("examples/deadline-priority/cases.toml");
    for (language, stubbed) in [
        ("python", false),
        ("python", true),
        ("js", false),
        ("js", true),
    ] {
        let name = format!("{language}{}", if stubbed { "-stubbed" } else { "" });
        let component = dir.join(format!("{name}.wasm"));
        let t0 = std::time::Instant::now();
        match language {
            "python" => build_python(&tools, &component, stubbed),
            _ => build_js(&tools, &component, stubbed),
        }
        let size = std::fs::metadata(&component).unwrap().len();
        eprintln!(
            "{name}: built in {:.1} s, {size} bytes",
            t0.elapsed().as_secs_f64()
        );
        let path = component.to_string_lossy().into_owned();
        let check = sluice(&["plugin", "check", &path]);
        assert!(check.contains("smoke call:  ok"), "{name}: {check}");
        let test = sluice(&["plugin", "test", &path, "--cases", &cases.to_string_lossy()]);
        assert!(test.contains(", 0 failed"), "{name}: {test}");
        hot_swaps(&component);
        assert!(
            replay(dir, &trace, &name, &path) == twin,
            "{name}: the KTH schedule differs from the Rust policy's"
        );
    }
}

/// `sluice plugin new KIND --lang python|js` writes, for every kind, a project that builds with
/// its README's commands and passes `plugin test`: the kind's contract and protocol cases (for
/// selection, a guest copy of the node table kept by the helper library exactly as the host
/// models it) and, for priority, its own declared cases.
#[test]
fn scaffolded_python_and_javascript_projects_build_and_pass_their_cases() {
    let tools = tools();
    let scratch = tempfile::Builder::new()
        .prefix("sluice-lang-new-")
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    let checkout = root().canonicalize().unwrap();
    for kind in ["priority", "selection", "gres", "hres"] {
        for lang in ["python", "js"] {
            let name = format!("site-{kind}-{lang}");
            sluice(&[
                "plugin",
                "new",
                kind,
                &name,
                "--lang",
                lang,
                "--dir",
                &dir.to_string_lossy(),
                "--sdk",
                &checkout.to_string_lossy(),
            ]);
            let project = dir.join(&name);
            let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
            let wasm = project.join(name.replace('-', "_") + ".wasm");
            let t0 = std::time::Instant::now();
            run(
                Command::new("sh")
                    .arg("-c")
                    .arg(build_command(&readme, &tools))
                    .current_dir(&project),
                &format!("{name}: the README's build"),
            );
            eprintln!("{name}: built in {:.1} s", t0.elapsed().as_secs_f64());
            // The README's test command, as a site admin would paste it.
            let test_line = readme
                .lines()
                .find(|l| l.starts_with("sluice plugin test "))
                .unwrap_or_else(|| panic!("{name}: no test command in the README"));
            let mut args: Vec<String> = test_line
                .split_whitespace()
                .skip(1)
                .map(str::to_string)
                .collect();
            for a in &mut args {
                if a.ends_with(".wasm") || a.ends_with(".toml") {
                    *a = project.join(&*a).to_string_lossy().into_owned();
                }
            }
            assert_eq!(
                args.iter().any(|a| a.ends_with("cases.toml")),
                kind == "priority",
                "{name}: {test_line}"
            );
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let test = sluice(&args);
            assert!(
                test.contains(&format!("{kind} cases")) && test.contains(", 0 failed"),
                "{name}: {test}"
            );
            assert!(wasm.exists(), "{name}: {}", wasm.display());
        }
    }
}

/// The build command of a scaffold's README, as a site admin would paste it, with the tools
/// this test installed.
fn build_command(readme: &str, tools: &Path) -> String {
    let build = readme
        .lines()
        .skip_while(|l| *l != "```sh")
        .skip(1)
        .take_while(|l| !l.starts_with("sluice "))
        .map(|l| l.trim_end_matches('\\').trim())
        .filter(|l| !l.contains("pip install") && !l.starts_with("npm "))
        .collect::<Vec<_>>()
        .join(" ");
    build
        .replace(
            ".venv/bin/componentize-py",
            &tools.join("venv/bin/componentize-py").to_string_lossy(),
        )
        .replace(
            "npx componentize-js",
            &tools
                .join("node_modules/.bin/componentize-js")
                .to_string_lossy(),
        )
}
