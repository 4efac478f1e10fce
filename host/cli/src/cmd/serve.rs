//! `sluice serve`: run the daemon (API on `DIR/sluice.sock`, journal and snapshots in DIR).

use std::path::PathBuf;

use anyhow::{Context, bail};
use sluice_daemon::caller::Token;
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
    /// Also listen on this TCP address (`127.0.0.1:6817`); clients must send the bearer token of
    /// --token-file, or of the SLUICE_TOKEN environment variable.
    #[arg(long)]
    listen: Option<String>,
    /// File holding the bearer token TCP clients must send (read once, surrounding space trimmed).
    #[arg(long, requires = "listen")]
    token_file: Option<PathBuf>,
}

/// The TCP bearer token: from `--token-file`, else `SLUICE_TOKEN`; never from the command line,
/// where any user could read it in the process list.
fn token(file: Option<&PathBuf>) -> anyhow::Result<Token> {
    let (text, source) = match file {
        Some(f) => (
            std::fs::read_to_string(f).with_context(|| format!("--token-file {}", f.display()))?,
            format!("--token-file {}", f.display()),
        ),
        None => (
            std::env::var("SLUICE_TOKEN").unwrap_or_default(),
            "SLUICE_TOKEN".to_string(),
        ),
    };
    match Token::new(&text) {
        Some(t) => Ok(t),
        None if file.is_none() => {
            bail!("--listen needs a bearer token: pass --token-file FILE or set SLUICE_TOKEN")
        }
        None => bail!("{source}: the token is empty"),
    }
}

/// Runs the daemon until SIGTERM or SIGINT.
pub fn run(args: Args) -> anyhow::Result<()> {
    let state_dir = args.state_dir.unwrap_or_else(default_state_dir);
    let listen = match args.listen {
        Some(addr) => Some((addr, token(args.token_file.as_ref())?)),
        None => None,
    };
    let opts = ServeOptions {
        state_dir: state_dir.clone(),
        cluster_file: args.config,
        daemon_file: args.daemon_config,
        listen,
        loader: super::plugin::loader(),
    };
    sluice_daemon::serve(opts, |r| {
        eprintln!(
            "sluice serve: listening on {} (recovered {} journal records{} in {:.1} ms{})",
            state_dir.join("sluice.sock").display(),
            r.replayed,
            if r.snapshot { " over a snapshot" } else { "" },
            r.millis,
            if r.truncated_bytes > 0 {
                format!(", cut a torn tail of {} bytes", r.truncated_bytes)
            } else {
                String::new()
            }
        );
    })
    .with_context(|| format!("sluice serve --state-dir {}", state_dir.display()))
}
