//! `sluice serve`: run the daemon (API on `DIR/sluice.sock`, journal and snapshots in DIR).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use sluice_daemon::Token;
use sluice_daemon::{ServeOptions, prepare_code_dir};
use sluice_runtime::Loader;
use sluice_runtime::compile::WasmEngine;

/// Arguments of `sluice serve`.
#[derive(clap::Args)]
pub struct Args {
    /// State directory: socket, journal, snapshot, job spool. It must be the daemon's user's and
    /// writable by no one else; it is created 0700 (0711 for root, so users reach the socket).
    /// Default: /var/lib/sluice for root, else $XDG_STATE_HOME/sluice or ~/.local/state/sluice.
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
    /// Start even though the journal is damaged (a bad record with intact records after it):
    /// copy the journal aside as journal.log.damaged-TIME and keep every intact record.
    #[arg(long)]
    recover_damaged_journal: bool,
    /// Write the log to this file (slurmctld's SlurmctldLogFile), appended; default: stderr.
    #[arg(long)]
    log_file: Option<PathBuf>,
    /// Log level, with slurmctld's names (SlurmctldDebug): quiet, fatal, error, info, verbose,
    /// debug, debug2..debug5. `SLUICE_LOG` (a tracing filter) overrides it.
    #[arg(long, default_value = "info")]
    log_level: String,
}

/// The TCP bearer token: from `--token-file`, else `SLUICE_TOKEN`; never from the command line,
/// where any user could read it in the process list.
fn token(file: Option<&PathBuf>) -> anyhow::Result<Token> {
    let (text, source) = match file {
        Some(f) => (
            read_private(f).with_context(|| format!("--token-file {}", f.display()))?,
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

/// The text of a secret file, refused (as ssh refuses a key) when anyone but its owner may read
/// or write it, or when its owner is neither root nor the daemon's user, who could change it.
/// The mode is checked on the descriptor that is read, so a file swapped meanwhile is not read.
fn read_private(path: &Path) -> anyhow::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let mut file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    let mode = meta.mode() & 0o7777;
    if mode & 0o066 != 0 {
        bail!(
            "mode {mode:04o} lets group or others read or write the token; make it 0600 (chmod 600 {})",
            path.display()
        );
    }
    // SAFETY: plain system call.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != 0 && meta.uid() != me {
        bail!(
            "owned by uid {}, neither root nor the daemon's user (uid {me}), who could change the token",
            meta.uid()
        );
    }
    if !meta.is_file() {
        bail!("not a regular file");
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

/// The daemon's plugin loader. It runs code it finds compiled in its cache, so the cache must be
/// root's or the daemon's user's alone; when the usual one is not (say `/tmp/sluice/components`,
/// made first by another user, for a daemon without HOME), the cache moves into the state
/// directory.
fn loader(state_dir: &Path) -> Loader {
    let cache = match prepare_code_dir(&super::plugin::cache_dir()) {
        Ok(dir) => dir,
        Err(e) => {
            let own = state_dir.join("components");
            tracing::warn!(
                "compiled-component cache refused: {e}; using {}",
                own.display()
            );
            own
        }
    };
    Loader::new(WasmEngine::new(Some(cache)))
}

/// Runs the daemon until SIGTERM or SIGINT.
pub fn run(args: Args) -> anyhow::Result<()> {
    crate::logging::init_daemon(args.log_file.as_deref(), &args.log_level)?;
    let state_dir = args.state_dir.unwrap_or_else(sluice_client::default_dir);
    let listen = match args.listen {
        Some(addr) => Some((addr, token(args.token_file.as_ref())?)),
        None => None,
    };
    let opts = ServeOptions {
        state_dir: state_dir.clone(),
        cluster_file: args.config,
        daemon_file: args.daemon_config,
        listen,
        loader: loader(&state_dir),
        recover_damaged_journal: args.recover_damaged_journal,
    };
    // Written, not `eprintln!`ed: a full disk under a redirected stderr must not panic start-up.
    use std::io::Write;
    let mut stderr = std::io::stderr();
    sluice_daemon::serve(opts, |r| {
        let _ = writeln!(
            stderr,
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
        if let Some(d) = &r.damaged {
            let _ = writeln!(
                stderr,
                "sluice serve: the journal was damaged ({} bytes in {} ranges); the original is kept as {}; kept {} intact records{}",
                d.bad_bytes,
                d.ranges.len(),
                d.copy,
                d.kept_records,
                if d.lost_jobs.is_empty() {
                    String::new()
                } else {
                    format!("; submissions lost for jobs {:?} (their ids are not reused)", d.lost_jobs)
                }
            );
        }
    })
    .with_context(|| format!("sluice serve --state-dir {}", state_dir.display()))
}
