//! `sluice plugin bench`: one priority pass and one selection pass, the bundle's components
//! against the same policies linked in natively, timed in the same process and reported as
//! ratios (absolute times depend on the machine; ratios much less).

use std::time::{Duration, Instant};

use anyhow::Context as _;

use sluice_policy::{PlaceMode, PluginKind, fixtures};
use sluice_runtime::{Limits, Loaded, Loader, PluginSpec};

/// Arguments of `sluice plugin bench`.
#[derive(clap::Args)]
pub struct Args {
    /// Pending jobs in the priority pass and job requests in the selection pass.
    #[arg(long, default_value_t = 100_000)]
    jobs: usize,
    /// Nodes in the selection pass.
    #[arg(long, default_value_t = 10_000)]
    nodes: usize,
    /// Timed rounds per measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Priority policy of the bundle to time.
    #[arg(long, default_value = "multifactor")]
    priority: String,
    /// Selection policy of the bundle to time.
    #[arg(long, default_value = "cons_tres")]
    selection: String,
    /// Also time one engine main-loop pass and one backfill pass (slow: two engines of `--jobs`).
    #[arg(long)]
    engine: bool,
    /// Also time these priority components (any language) on the same pass; their ratio is
    /// against the native build of `--priority`, run in the same process. Repeatable.
    #[arg(long = "also", value_name = "FILE.wasm")]
    also: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

struct Row {
    what: String,
    wasm: Duration,
    native: Duration,
}

/// Runs the benchmark.
pub fn run(args: Args) -> anyhow::Result<()> {
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build of sluice; run `cargo run --release -- plugin bench` for meaningful figures"
        );
    }
    let loader = super::loader();
    let limits = Limits {
        memory_bytes: 2 << 30,
        fuel_per_call: u64::MAX / 4,
    };
    let load = |kind, name: &str| -> anyhow::Result<(Loaded, Loaded)> {
        let spec = PluginSpec {
            kind,
            plugin: name.to_string(),
            settings: settings(kind),
            limits,
        };
        Ok((loader.load(&spec)?, native(&loader, kind, name, limits)?))
    };
    let mut rows = Vec::new();

    let ctx = fixtures::priority_context(1_700_000_000, args.nodes as u32, 20, 10);
    let jobs = fixtures::job_table(&ctx, args.jobs, 42);
    if let (Loaded::Priority(mut wasm), Loaded::Priority(mut native)) =
        load(PluginKind::Priority, &args.priority)?
    {
        let w = median(args.rounds, || {
            wasm.backend
                .compute(&ctx, &jobs)
                .context("wasm priority pass")
                .map(drop)
        })?;
        let n = median(args.rounds, || {
            native
                .backend
                .compute(&ctx, &jobs)
                .context("native priority pass")
                .map(drop)
        })?;
        rows.push(Row {
            what: format!("priority/{} pass, {} jobs", args.priority, args.jobs),
            wasm: w,
            native: n,
        });
        for file in &args.also {
            let spec = PluginSpec {
                kind: PluginKind::Priority,
                plugin: file.clone(),
                settings: Default::default(),
                limits,
            };
            let Loaded::Priority(mut other) = loader.load(&spec)? else {
                anyhow::bail!("{file}: not a priority policy");
            };
            let w = median(args.rounds, || {
                other
                    .backend
                    .compute(&ctx, &jobs)
                    .context("priority pass")
                    .map(drop)
            })?;
            rows.push(Row {
                what: format!("priority {file} pass (native: {})", args.priority),
                wasm: w,
                native: n,
            });
        }
    }

    let table = fixtures::node_table(args.nodes);
    let requests = fixtures::job_requests(args.nodes, args.jobs, 43);
    if let (Loaded::Selection(mut wasm), Loaded::Selection(mut native)) =
        load(PluginKind::Selection, &args.selection)?
    {
        let mut placed = [0usize; 2];
        let mut pass = |b: &mut dyn sluice_runtime::backend::SelectionBackend,
                        slot: usize|
         -> anyhow::Result<()> {
            b.begin_pass(&table).context("begin pass")?;
            placed[slot] = 0;
            for r in &requests {
                if b.place(r, PlaceMode::Allocate).context("place")?.is_some() {
                    placed[slot] += 1;
                }
            }
            Ok(())
        };
        let w = median(args.rounds, || pass(&mut *wasm.backend, 0))?;
        let n = median(args.rounds, || pass(&mut *native.backend, 1))?;
        anyhow::ensure!(
            placed[0] == placed[1],
            "wasm placed {} jobs, native {}: the builds disagree",
            placed[0],
            placed[1]
        );
        rows.push(Row {
            what: format!(
                "selection/{} pass, {} nodes, {} requests ({} placed)",
                args.selection, args.nodes, args.jobs, placed[0]
            ),
            wasm: w,
            native: n,
        });
        // A component keeps its copy of the table and is sent only the nodes that
        // differ from it, so the two cases are measured apart: every node's free CPUs changed
        // since the last pass (alternating between two tables), and none did.
        let mut drained = table.clone();
        drained
            .free_cpus
            .iter_mut()
            .for_each(|c| *c = c.saturating_sub(1));
        for (case, tables) in [
            ("every node changed", [&table, &drained]),
            ("no node changed", [&table, &table]),
        ] {
            let alternate = |b: &mut dyn sluice_runtime::backend::SelectionBackend| {
                let mut round = 0;
                median(args.rounds, || {
                    round += 1;
                    b.begin_pass(tables[round % 2]).context("begin pass")
                })
            };
            let w = alternate(&mut *wasm.backend)?;
            let n = alternate(&mut *native.backend)?;
            rows.push(Row {
                what: format!(
                    "selection/{} begin-pass only, {} nodes, {case}",
                    args.selection, args.nodes
                ),
                wasm: w,
                native: n,
            });
        }
    }

    if args.engine {
        rows.extend(engine_passes(&loader, &args, limits)?);
    }

    if args.json {
        let out: Vec<_> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "what": r.what,
                    "wasm_ms": ms(r.wasm),
                    "native_ms": ms(r.native),
                    "ratio": ratio(r),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        let mut table =
            crate::cmd::table(["measurement (median)", "wasm ms", "native ms", "ratio"]);
        for r in &rows {
            table.add_row([
                r.what.clone(),
                format!("{:.3}", ms(r.wasm)),
                format!("{:.3}", ms(r.native)),
                format!("{:.2}x", ratio(r)),
            ]);
        }
        crate::cmd::align_right(&mut table, 1..4);
        println!("{table}");
    }
    Ok(())
}

/// One main-loop and one backfill pass of the engine, with the bundle as components and then
/// linked in natively.
fn engine_passes(loader: &Loader, args: &Args, limits: Limits) -> anyhow::Result<Vec<Row>> {
    use sluice_engine::Policies;
    use sluice_engine::bench::{BenchConfig, run};
    use sluice_runtime::shared::{HresHandle, PriorityHandle, SelectionHandle};
    let config = BenchConfig {
        nodes: args.nodes,
        jobs: args.jobs,
        ..BenchConfig::default()
    };
    let mut reports = Vec::new();
    for prefix in ["", "builtin:"] {
        let specs: Vec<PluginSpec> = [
            (PluginKind::Priority, &args.priority),
            (PluginKind::Selection, &args.selection),
        ]
        .into_iter()
        .map(|(kind, name)| PluginSpec {
            kind,
            plugin: format!("{prefix}{name}"),
            settings: settings(kind),
            limits,
        })
        .collect();
        let set = std::sync::Arc::new(std::sync::Mutex::new(sluice_runtime::PolicySet::load(
            loader, &specs,
        )?));
        let policies = Policies {
            priority: Box::new(PriorityHandle(set.clone())),
            selection: Box::new(SelectionHandle(set.clone())),
            hres: Some(Box::new(HresHandle(set))),
            gres: Vec::new(),
        };
        reports.push(run(policies, config.clone()));
    }
    let (wasm, native) = (&reports[0], &reports[1]);
    anyhow::ensure!(
        wasm.main_stats.started == native.main_stats.started,
        "wasm started {} jobs in the main pass, native {}: the builds disagree",
        wasm.main_stats.started,
        native.main_stats.started
    );
    let d = |ms: f64| Duration::from_secs_f64(ms / 1e3);
    Ok(vec![
        Row {
            what: format!(
                "engine main-loop pass, {} jobs, {} nodes ({} started)",
                args.jobs, args.nodes, wasm.main_stats.started
            ),
            wasm: d(wasm.main_pass_ms),
            native: d(native.main_pass_ms),
        },
        Row {
            what: format!(
                "engine backfill pass ({} started)",
                wasm.backfill_stats.started
            ),
            wasm: d(wasm.backfill_pass_ms),
            native: d(native.backfill_pass_ms),
        },
    ])
}

/// The settings every build is timed with: the demo cluster's, so that multifactor weighs all
/// its factors (with no settings every weight is Slurm's default 0 and the pass does little).
fn settings(kind: PluginKind) -> sluice_policy::Settings {
    sluice_runtime::specs::from_cluster(&sluice_cluster::Cluster::demo())
        .into_iter()
        .find(|s| s.kind == kind)
        .map(|s| s.settings)
        .unwrap_or_default()
}

/// The native build of a bundled policy: its shared library through `libloading` when this
/// binary was built in the repository (the path the native plugin path really takes), else the
/// same code linked in.
fn native(loader: &Loader, kind: PluginKind, name: &str, limits: Limits) -> anyhow::Result<Loaded> {
    let library = sluice_bundle::find(kind, name)
        .and_then(|b| {
            sluice_plugin_artifacts::NATIVE_LIBRARIES
                .iter()
                .find(|(p, _)| *p == b.package)
        })
        .map(|(_, path)| *path)
        .filter(|path| std::path::Path::new(path).exists());
    Ok(match library {
        Some(path) => loader.load(&PluginSpec {
            kind,
            plugin: path.to_string(),
            settings: settings(kind),
            limits,
        })?,
        None => Loader::builtin(kind, name, &settings(kind))?,
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn ratio(r: &Row) -> f64 {
    r.wasm.as_secs_f64() / r.native.as_secs_f64().max(1e-12)
}

/// The median time of `rounds` calls of `f`, after one untimed call; the first failure ends it.
fn median(rounds: usize, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Duration> {
    f()?; // warm-up: first-call instantiation and caches are not what a pass costs
    let mut times = Vec::with_capacity(rounds.max(1));
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}
