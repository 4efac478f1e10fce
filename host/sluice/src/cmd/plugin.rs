//! `sluice plugin`: scaffold, check, conformance-test and benchmark policy plugins.

mod bench;
mod live;
mod scaffold;
mod scaffold_lang;
mod sdk;
mod shadow_report;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use sluice_policy::PluginKind;
use sluice_runtime::{Limits, Loader, PluginFile, PluginFormat, PluginSpec, probe};

/// Arguments of `sluice plugin`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Scaffold a plugin crate with a README, built against the SDK of a sluice checkout
    /// (kinds: priority, selection).
    New {
        /// Plugin kind.
        kind: String,
        /// Crate name.
        name: String,
        /// Parent folder for the crate (default: the current folder).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// The sluice checkout (or its sdk/rust folder) whose SDK the crate depends on (default:
        /// the checkout the crate's folder or the current folder is in).
        #[arg(long, env = "SLUICE_SDK", value_name = "PATH")]
        sdk: Option<PathBuf>,
        /// The policy's language: a Rust crate, or a Python or JavaScript project (priority).
        #[arg(long, default_value = "rust", value_parser = ["rust", "python", "js"])]
        lang: String,
    },
    /// Report a component's kind, WIT version and exports, and smoke-call it.
    Check {
        /// The component (.wasm) or native library.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run the conformance cases against a plugin: the contract's, the host's call orders
    /// across fresh instances, and the policy's own declared cases.
    Test {
        /// The component (.wasm) or native library.
        file: PathBuf,
        /// The policy's declared cases (TOML `[[case]]` tables: settings, baseline, expect).
        #[arg(long, value_name = "FILE")]
        cases: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Time priority and selection passes, WebAssembly against the native build of the same policy.
    Bench(bench::Args),
    /// Every generation of every kind in the running daemon, with its record.
    List {
        #[command(flatten)]
        conn: crate::cmd::daemon_client::Conn,
    },
    /// Swap a plugin in the running daemon: loaded off the scheduling path, published between passes.
    Swap {
        /// priority, selection, gres or hres.
        kind: String,
        /// The component (.wasm), native library or bundled name.
        file: String,
        /// A setting on top of the configured ones (key=value), repeatable.
        #[arg(long = "set")]
        set: Vec<String>,
        #[command(flatten)]
        conn: crate::cmd::daemon_client::Conn,
    },
    /// Make the previous generation of a kind active again.
    Rollback {
        /// priority, selection, gres or hres.
        kind: String,
        #[command(flatten)]
        conn: crate::cmd::daemon_client::Conn,
    },
    /// `shadow KIND FILE` runs a candidate beside the active policy; `shadow report` / `shadow stop`.
    Shadow {
        /// KIND (`priority` or `selection`), or `report` / `stop`.
        kind: Option<String>,
        /// The candidate.
        file: Option<String>,
        /// A setting (key=value), repeatable.
        #[arg(long = "set")]
        set: Vec<String>,
        #[command(flatten)]
        conn: crate::cmd::daemon_client::Conn,
    },
}

/// Runs `sluice plugin`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Command::New {
            kind,
            name,
            dir,
            sdk,
            lang,
        } => match lang.as_str() {
            "rust" => scaffold::new(&kind, &name, &dir, sdk.as_deref()),
            _ => scaffold_lang::new(&lang, &kind, &name, &dir, sdk.as_deref()),
        },
        Command::Check { file, json } => check(&file, json),
        Command::Test { file, cases, json } => test(&file, cases.as_deref(), json),
        Command::Bench(args) => bench::run(args),
        Command::List { conn } => live::list(&conn),
        Command::Swap {
            kind,
            file,
            set,
            conn,
        } => live::swap(&conn, &kind, &file, &set),
        Command::Rollback { kind, conn } => live::rollback(&conn, &kind),
        Command::Shadow {
            kind,
            file,
            set,
            conn,
        } => live::shadow(&conn, kind.as_deref(), file.as_deref(), &set),
    }
}

/// The loader every command uses: components compiled once and cached per user.
pub fn loader() -> Loader {
    Loader::new(sluice_runtime::compile::WasmEngine::new(Some(cache_dir())))
}

/// Where compiled components are cached: `SLUICE_CACHE_DIR`, else `$XDG_CACHE_HOME/sluice`,
/// else `~/.cache/sluice`, else a folder under the system's temporary directory.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SLUICE_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("sluice").join("components")
}

/// Finds the kind of a plugin file by trying each; the error of the closest match is returned.
fn load_any(file: &Path) -> anyhow::Result<sluice_runtime::Loaded> {
    let plugin = file
        .to_str()
        .context("plugin path is not UTF-8")?
        .to_string();
    if !file.exists() {
        bail!(
            "{}: no such file; pass the path of a .wasm component or a native plugin library",
            file.display()
        );
    }
    let loader = loader();
    let mut first_error = None;
    for kind in PluginKind::ALL {
        let spec = PluginSpec {
            kind,
            plugin: plugin.clone(),
            settings: Default::default(),
            limits: Limits::default(),
        };
        match loader.load(&spec) {
            Ok(loaded) => return Ok(loaded),
            // A world mismatch means "try the next kind"; anything else is the real answer.
            Err(sluice_runtime::LoadError::World { .. })
            | Err(sluice_runtime::LoadError::Native { .. })
                if first_error.is_some() => {}
            Err(e @ sluice_runtime::LoadError::World { .. }) => first_error = Some(e),
            Err(e @ sluice_runtime::LoadError::Native { .. })
                if e.to_string().contains("expected") =>
            {
                first_error = Some(e)
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(first_error
        .map(anyhow::Error::from)
        .unwrap_or_else(|| anyhow::anyhow!("not a sluice plugin")))
}

fn check(file: &Path, json: bool) -> anyhow::Result<()> {
    let loaded = load_any(file)?;
    let kind = loaded.kind();
    let version = wit_version(file)?;
    let exports = format!("sluice:policy/{}@{version}", kind.name());
    if json {
        let out = serde_json::json!({
            "file": file.display().to_string(),
            "kind": kind.name(),
            "world": kind.world(),
            "wit_version": version,
            "exports": [exports],
            "smoke_call": "ok",
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("file:        {}", file.display());
        println!("kind:        {kind}");
        println!("world:       {}", kind.world());
        println!("wit version: {version}");
        println!("exports:     {exports}");
        println!("smoke call:  ok");
    }
    Ok(())
}

/// The WIT version a component was built against (the host loads every supported one); a
/// native library speaks this build's `sluice-policy`, whose version it is then.
fn wit_version(file: &Path) -> anyhow::Result<&'static str> {
    // Read as the loader reads it: the first bytes decide, and a component's size is capped.
    let opened = PluginFile::open(file)?;
    if opened.format() != PluginFormat::Component {
        return Ok(sluice_policy::WIT_VERSION);
    }
    let bytes = opened.read_component()?;
    let engine = loader().engine().clone();
    let origin = file.display().to_string();
    let component = engine.compile(&origin, &bytes)?;
    Ok(engine.inspect(&origin, &component)?.1)
}

fn test(file: &Path, cases: Option<&Path>, json: bool) -> anyhow::Result<()> {
    let declared = match cases {
        Some(path) => sluice_runtime::cases::read(path)?,
        None => Vec::new(),
    };
    let kind = load_any(file)?.kind();
    let spec = PluginSpec {
        kind,
        plugin: file
            .to_str()
            .context("plugin path is not UTF-8")?
            .to_string(),
        settings: Default::default(),
        limits: Limits::default(),
    };
    let report = probe::run(&loader(), &spec, &declared)?;
    let cases = &report.cases;
    let failed = cases.iter().filter(|c| c.outcome.is_err()).count();
    if json {
        let cases: Vec<_> = cases
            .iter()
            .map(|c| serde_json::json!({"case": c.name, "ok": c.outcome.is_ok(), "error": c.outcome.as_ref().err()}))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"kind": kind.name(), "cases": cases, "faults": report.faults})
            )?
        );
    } else {
        for c in cases {
            match &c.outcome {
                Ok(()) => println!("ok      {}", c.name),
                Err(e) => println!("FAILED  {}: {e}", c.name),
            }
        }
        for f in &report.faults {
            println!("fault   {f}");
        }
        println!(
            "{} {kind} cases, {} passed, {failed} failed",
            cases.len(),
            cases.len() - failed
        );
    }
    if failed > 0 {
        bail!("{failed} conformance case(s) failed");
    }
    Ok(())
}
