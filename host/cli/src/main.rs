//! The `sluice` binary: one command line for the daemon, the client commands, replay and plugin tools.

mod cmd;

use clap::{Parser, Subcommand};

/// sluice: a workload scheduler whose site policies are sandboxed WebAssembly components.
#[derive(Parser)]
#[command(name = "sluice", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the scheduler with the default plugin bundle on the embedded demo cluster.
    Demo(cmd::demo::Args),
    /// Expand, compress and sort Slurm hostlist expressions.
    Hostlist(cmd::hostlist::Args),
    /// Show, check and import cluster configuration.
    Config(cmd::config::Args),
    /// Replay a workload trace against a scheduler and plugin bundle.
    Sim(cmd::sim::Args),
    /// Scaffold, check, test and benchmark policy plugins.
    Plugin(cmd::plugin::Args),
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SLUICE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => cmd::demo::run(args),
        Command::Hostlist(args) => cmd::hostlist::run(args),
        Command::Config(args) => cmd::config::run(args),
        Command::Sim(args) => cmd::sim::run(args),
        Command::Plugin(args) => cmd::plugin::run(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("sluice: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
