//! `sluice serve`: run the daemon (API on `DIR/sluice.sock`, journal and snapshots in DIR).

use std::path::PathBuf;

use anyhow::Context;
use sluice_daemon::{ServeOptions, client::default_state_dir};

/// Arguments of `sluice serve`.
#[derive(clap::Args)]
pub struct Args {
    /// State directory: socket, journal, snapshot, job spool (default: $XDG_RUNTIME_DIR/sluice, else /tmp/sluice-$UID).
    #[arg(long, env = "SLUICE_STATE_DIR")]
    state_dir: Option<PathBuf>,
    /// Cluster configuration (sluice TOML); default: the embedded demo cluster.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Daemon settings (admins, on_crash, kill_wait…); default: DIR/daemon.toml if present.
    #[arg(long)]
    daemon_config: Option<PathBuf>,
    /// Also listen on this TCP address (`127.0.0.1:6817`); needs --token.
    #[arg(long, requires = "token")]
    listen: Option<String>,
    /// Bearer token TCP clients must send.
    #[arg(long, env = "SLUICE_TOKEN")]
    token: Option<String>,
}

/// Runs the daemon until SIGTERM or SIGINT.
pub fn run(args: Args) -> anyhow::Result<()> {
    let state_dir = args.state_dir.unwrap_or_else(default_state_dir);
    let opts = ServeOptions {
        state_dir: state_dir.clone(),
        cluster_file: args.config,
        daemon_file: args.daemon_config,
        listen: args.listen.zip(args.token),
        loader: super::plugin::loader(),
    };
    sluice_daemon::serve(opts, |recovery| {
        eprintln!(
            "sluice serve: listening on {} (recovered: {recovery})",
            state_dir.join("sluice.sock").display()
        );
    })
    .with_context(|| format!("sluice serve --state-dir {}", state_dir.display()))
}
