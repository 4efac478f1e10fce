//! `sluice config`: show the effective configuration, check a cluster file, import slurm.conf.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use sluice_cluster::slurm_conf::{Import, import_slurm_conf_with_includes};
use sluice_cluster::{Cluster, HresCount, Source};

/// Arguments of `sluice config`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Print the effective configuration with every default filled in (default: the embedded demo).
    Show {
        /// A sluice cluster file; the embedded demo cluster when omitted.
        file: Option<PathBuf>,
        /// Print the loaded model as JSON instead of TOML.
        #[arg(long)]
        json: bool,
    },
    /// Load a cluster file and its plugins as `sluice serve` would (every GRES plugin checks the
    /// node configuration), and report what it defines, or exactly where it is wrong.
    Check {
        /// A sluice cluster file.
        file: PathBuf,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Convert slurm.conf (with gres.conf and resources.yaml) into a sluice cluster file.
    Import {
        /// slurm.conf, then optionally gres.conf and resources.yaml (recognised by .yaml/.yml).
        #[arg(required = true, num_args = 1..=3)]
        files: Vec<PathBuf>,
        /// Write the cluster file here instead of standard output.
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
        /// Print the file and the list of skipped lines as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replace a cluster file's accounts and users with the tree of a `sacctmgr dump` file
    /// (shares, limits, default QOS; QOS it names are added).
    ImportAccounts {
        /// The sluice cluster file to start from.
        cluster: PathBuf,
        /// The output of `sacctmgr dump <cluster> File=…`.
        dump: PathBuf,
        /// Write the cluster file here instead of standard output.
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
    },
}

/// Runs `sluice config`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let out = match args.command {
        Command::Show { file, json } => show(file.as_deref(), json)?,
        Command::Check { file, json } => check(&file, json)?,
        Command::Import {
            files,
            output,
            json,
        } => import(&files, output.as_deref(), json)?,
        Command::ImportAccounts {
            cluster,
            dump,
            output,
        } => import_accounts(&cluster, &dump, output.as_deref())?,
    };
    // Written in one go so a closed pipe (`| head`) is an error to report, not a panic.
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

fn load(file: Option<&Path>) -> anyhow::Result<Cluster> {
    Ok(match file {
        Some(path) => Cluster::load(path)?,
        None => Cluster::try_demo()?,
    })
}

fn show(file: Option<&Path>, json: bool) -> anyhow::Result<String> {
    let cluster = load(file)?;
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&cluster)?));
    }
    let mut out = cluster.to_toml();
    if !cluster.hres.is_empty() {
        out.push_str("\n# HRES resources (read from resources.yaml, not part of this file):\n");
        for line in hres_summary(&cluster) {
            out.push_str(&format!("#   {line}\n"));
        }
    }
    Ok(out)
}

/// One line per HRES layer: resource, mode, nodes, count, base usage, what jobs may use, parent.
fn hres_summary(cluster: &Cluster) -> Vec<String> {
    let names = |ids: &[sluice_cluster::NodeId]| {
        let names: Vec<&str> = ids
            .iter()
            .map(|id| cluster.node(*id).name.as_str())
            .collect();
        sluice_hostlist::compress(&names)
    };
    let mut lines = Vec::new();
    for resource in &cluster.hres {
        for layer in &resource.layers {
            let count = match layer.count {
                HresCount::Infinite => "INFINITE".to_owned(),
                HresCount::Count(c) => c.to_string(),
            };
            let mut line = format!(
                "{} {} nodes={} count={count}",
                resource.name,
                resource.mode.as_str(),
                names(&layer.nodes)
            );
            if layer.base_usage > 0 {
                let available = layer
                    .available()
                    .map_or("INFINITE".into(), |a| a.to_string());
                line.push_str(&format!(" base={} available={available}", layer.base_usage));
            }
            if let Some(parent) = layer.parent {
                line.push_str(&format!(
                    " parent={}",
                    names(&resource.layers[parent].nodes)
                ));
            }
            lines.push(line);
        }
    }
    lines
}

fn check(file: &Path, json: bool) -> anyhow::Result<String> {
    // The loader `serve` uses, so that a component is checked as the daemon will run it.
    let cache = sluice_daemon::prepare_code_dir(&super::plugin::cache_dir()).ok();
    let loader = sluice_runtime::Loader::new(sluice_runtime::compile::WasmEngine::new(cache));
    let cluster = sluice_daemon::check_cluster(Some(file), &loader).map_err(anyhow::Error::msg)?;
    let users = cluster.associations.iter().filter(|a| a.is_user()).count();
    let accounts = cluster.associations.len() - users;
    let layers: usize = cluster.hres.iter().map(|r| r.layers.len()).sum();
    if json {
        let value = serde_json::json!({
            "ok": true,
            "file": file.display().to_string(),
            "nodes": cluster.nodes.len(),
            "cpus": cluster.total_cpus(),
            "partitions": cluster.partitions.len(),
            "qos": cluster.qos.len(),
            "accounts": accounts,
            "users": users,
            "licenses": cluster.licenses.len(),
            "hres_resources": cluster.hres.len(),
            "hres_layers": layers,
        });
        Ok(format!("{value}\n"))
    } else {
        Ok(format!(
            "{}: ok: {} nodes ({} CPUs), {} partitions, {} QOS, {accounts} accounts, {users} users, {} licenses, {} HRES resources ({layers} layers)",
            file.display(),
            cluster.nodes.len(),
            cluster.total_cpus(),
            cluster.partitions.len(),
            cluster.qos.len(),
            cluster.licenses.len(),
            cluster.hres.len(),
        ) + "\n")
    }
}

fn import_accounts(cluster: &Path, dump: &Path, output: Option<&Path>) -> anyhow::Result<String> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
    };
    let (cluster_name, dump_name) = (cluster.display().to_string(), dump.display().to_string());
    let cluster_text = read(cluster)?;
    let mut file = sluice_cluster::parse_config_file(Source::new(&cluster_name, &cluster_text))?;
    let dump_text = read(dump)?;
    let skipped = sluice_cluster::slurm_conf::import_accounts(
        Source::new(&dump_name, &dump_text),
        &mut file,
    )?;
    let mut text = format!(
        "# Accounts and users imported from {dump_name} by `sluice config import-accounts`.\n"
    );
    for s in &skipped {
        text.push_str(&format!(
            "#   not carried over: {}: {}: {}\n",
            s.at, s.key, s.reason
        ));
    }
    text.push_str(&file.to_toml_string());
    // Proof that the result loads (its resources.yaml, if any, is checked when it is loaded).
    Cluster::from_toml(Source::new(&cluster_name, &text), None)?;
    let mut stderr = std::io::stderr().lock();
    for s in &skipped {
        let _ = writeln!(stderr, "{}: {} not carried over: {}", s.at, s.key, s.reason);
    }
    match output {
        Some(path) => {
            std::fs::write(path, &text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(String::new())
        }
        None => Ok(text),
    }
}

fn import(files: &[PathBuf], output: Option<&Path>, json: bool) -> anyhow::Result<String> {
    let is_yaml =
        |p: &&PathBuf| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"));
    let resources_path = files.iter().find(is_yaml);
    let mut confs = files.iter().filter(|p| !is_yaml(p));
    let slurm_path = confs
        .next()
        .context("no slurm.conf given (only .yaml files)")?;
    let gres_path = confs.next();
    if confs.next().is_some() || files.iter().filter(is_yaml).count() > 1 {
        anyhow::bail!("expected slurm.conf, optionally gres.conf and one resources.yaml");
    }
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
    };
    let (slurm_name, slurm_text) = (slurm_path.display().to_string(), read(slurm_path)?);
    let gres = gres_path
        .map(|p| Ok::<_, anyhow::Error>((p.display().to_string(), read(p)?)))
        .transpose()?;
    let resources = resources_path
        .map(|p| Ok::<_, anyhow::Error>((p.display().to_string(), read(p)?)))
        .transpose()?;
    // A later load resolves HresFile relative to the written file, so record an absolute path.
    let hres_file = resources_path
        .map(|p| std::path::absolute(p).map(|a| a.display().to_string()))
        .transpose()?;
    // `Include` names a file relative to the directory of the slurm.conf that includes it.
    let base = slurm_path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut include = |name: &str| {
        let path = base.join(name);
        std::fs::read_to_string(&path)
            .map(|text| (path.display().to_string(), text))
            .map_err(|e| e.to_string())
    };
    let import: Import = import_slurm_conf_with_includes(
        Source::new(&slurm_name, &slurm_text),
        gres.as_ref().map(|(n, t)| Source::new(n, t)),
        resources.as_ref().map(|(n, t)| Source::new(n, t)),
        hres_file.as_deref(),
        &mut include,
    )?;
    let toml = format!(
        "# Imported from {slurm_name} by `sluice config import`.\n{}",
        import.to_toml()
    );
    if json {
        let skipped: Vec<_> = import
            .skipped
            .iter()
            .map(|s| serde_json::json!({"location": s.at.to_string(), "key": s.key, "reason": s.reason}))
            .collect();
        let json = serde_json::json!({"toml": toml, "skipped": skipped});
        if let Some(path) = output {
            std::fs::write(path, &toml)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        return Ok(format!("{}\n", serde_json::to_string_pretty(&json)?));
    }
    let mut stderr = std::io::stderr().lock();
    for skipped in &import.skipped {
        // The list is advisory; a closed stderr must not stop the file from being written.
        let _ = writeln!(
            stderr,
            "{}: {} not carried over: {}",
            skipped.at, skipped.key, skipped.reason
        );
    }
    match output {
        Some(path) => {
            std::fs::write(path, &toml)
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(String::new())
        }
        None => Ok(toml),
    }
}
