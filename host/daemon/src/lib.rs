//! The live sluice host: a daemon with a JSON-over-HTTP API on a Unix socket, a durable journal
//! and snapshots, local job execution behind an executor trait, and hot plugin swaps.
//!
//! [`serve`] runs it; `sluice_client::Client` talks to it. `API.md` documents the endpoints; the
//! request and answer types are `sluice-api`'s. The names re-exported below are the entry
//! points the `sluice` binary hosts (`serve`, `supervise`, `install-links`, `config check`);
//! the CLI uses this crate through them only.

pub mod accounting;
pub mod acct_row;
pub mod admission;
pub mod api;
pub mod caller;
pub mod cgroup;
pub mod check;
pub mod clock;
pub mod config;
pub mod driver;
pub mod error;
pub mod escaped;
pub mod executor;
pub mod extract;
pub mod frames;
pub mod image;
pub mod job_env;
pub mod job_files;
pub mod journal;
pub mod metrics;
pub mod power_image;
pub mod request;
pub mod routes;
pub mod server;
pub mod slurm_commands;
pub mod snapshot;
pub mod state_dir;
pub mod store;
pub mod supervisor;

pub use caller::Token;
pub use check::check_cluster;
pub use slurm_commands::{
    Change as LinkChange, NAMES as SLURM_COMMAND_NAMES, install as install_slurm_commands,
};
pub use state_dir::prepare_code_dir;
pub use supervisor::run as run_supervisor;
pub use supervisor::spawner::serve as serve_spawner;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;

use driver::{Driver, DriverOptions, Msg};
use error::DaemonError;
use executor::local::LocalExecutor;
use journal::OnDamage;
use sluice_runtime::Loader;

/// What `sluice serve` starts with.
pub struct ServeOptions {
    /// The state directory (socket, journal, snapshot, job spool); it must be the daemon's own
    /// ([`state_dir::prepare`]).
    pub state_dir: PathBuf,
    /// The cluster file; `None` is the embedded demo cluster.
    pub cluster_file: Option<PathBuf>,
    /// The daemon settings file; `None` is `DIR/daemon.toml`.
    pub daemon_file: Option<PathBuf>,
    /// A TCP address to listen on as well, with the bearer token its clients must send.
    pub listen: Option<(String, caller::Token)>,
    /// The plugin loader.
    pub loader: Loader,
    /// Start even on a damaged journal: copy it aside and keep every intact record.
    pub recover_damaged_journal: bool,
}

/// A refused state path as a start-up error.
fn store_error(e: sluice_client::Untrusted) -> DaemonError {
    DaemonError::Store(e.into())
}

/// Takes the state directory's lock so two daemons never share a journal.
fn lock_dir(dir: &std::path::Path) -> Result<std::fs::File, DaemonError> {
    use std::os::fd::AsRawFd;
    let path = dir.join("lock");
    let f = journal::open_private(&path, true)
        .map_err(|e| DaemonError::Listen(format!("{}: {e}", path.display())))?;
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(DaemonError::Listen(format!(
            "{}: another sluice daemon is running with this state directory",
            dir.display()
        )));
    }
    Ok(f)
}

/// Runs the daemon until SIGTERM or SIGINT. `ready` is called once the socket accepts requests.
pub fn serve(
    opts: ServeOptions,
    ready: impl FnOnce(&sluice_api::RecoveryReport),
) -> Result<(), DaemonError> {
    // Whatever the daemon's parent left open (`serve 8</root/secret`) reaches no program it runs.
    supervisor::inherited::close_on_exec_above_stderr();
    let dir = state_dir::prepare(&opts.state_dir).map_err(store_error)?;
    if let Some(f) = &opts.daemon_file {
        state_dir::check_settings(f).map_err(store_error)?;
    }
    let _lock = lock_dir(&dir)?;
    // Jobs find Slurm's command names first on their PATH (`job_files::launch_env`); without
    // the links they still run, with whatever their PATH finds.
    match std::env::current_exe() {
        Ok(me) => {
            if let Err(e) = slurm_commands::prepare(&dir, &me) {
                tracing::warn!("jobs get no Slurm command names: {e}");
            }
        }
        Err(e) => tracing::warn!("jobs get no Slurm command names: this program's path: {e}"),
    }
    let (tx, rx) = mpsc::channel::<Msg>();
    let site_metrics = metrics::SiteMetrics::new();
    let quotas = server::Quotas::default();
    let dopts = DriverOptions {
        metrics: site_metrics.clone(),
        quotas: quotas.clone(),
        daemon_file: opts
            .daemon_file
            .clone()
            .unwrap_or_else(|| dir.join("daemon.toml")),
        state_dir: dir.clone(),
        cluster_file: opts.cluster_file.clone(),
        loader: opts.loader.clone(),
        on_damage: if opts.recover_damaged_journal {
            OnDamage::Recover
        } else {
            OnDamage::Refuse
        },
    };
    let spool = dir.join("jobs");
    let program = executor::local::supervisor_program()
        .map_err(|e| DaemonError::Other(format!("locating the supervisor program: {e}")))?;
    let (ready_tx, ready_rx) = mpsc::channel();
    let driver_tx = tx.clone();
    // The driver lives on its own thread for the daemon's lifetime.
    let driver = std::thread::Builder::new()
        .name("driver".into())
        .spawn(move || {
            let started = Driver::start(
                dopts,
                |tx, cfg| {
                    let on_exit: executor::local::OnExit =
                        Arc::new(move |r| drop(tx.send(Msg::Exited(r))));
                    Box::new(LocalExecutor::new(spool, program, on_exit, &cfg.cgroup))
                },
                driver_tx,
            );
            match started {
                Ok(d) => {
                    let _ = ready_tx.send(Ok(d.recovery()));
                    d.run(rx);
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            }
        })
        .map_err(|e| DaemonError::Other(format!("starting the driver thread: {e}")))?;
    let recovery = ready_rx
        .recv()
        .map_err(|_| DaemonError::Other("the driver thread died during start-up".into()))??;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| DaemonError::Other(format!("tokio runtime: {e}")))?;
    let socket = sluice_client::socket_path(&dir);
    let result = rt.block_on(async {
        let _ = std::fs::remove_file(&socket);
        let unix = tokio::net::UnixListener::bind(&socket)
            .map_err(|e| DaemonError::Listen(format!("{}: {e}", socket.display())))?;
        // Anyone may connect; what they may do is decided from their uid.
        let _ = std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666));
        let server = server::Server::new(routes::router(tx.clone(), site_metrics), quotas);
        tokio::spawn(server.clone().serve_unix(unix));
        if let Some((addr, token)) = opts.listen {
            let tcp = tokio::net::TcpListener::bind(&addr)
                .await
                .map_err(|e| DaemonError::Listen(format!("{addr}: {e}")))?;
            tokio::spawn(server.serve_tcp(tcp, token));
        }
        ready(&recovery);
        signals(tx.clone()).await;
        Ok(())
    });
    let _ = tx.send(Msg::Shutdown);
    let _ = driver.join();
    let _ = std::fs::remove_file(&socket);
    rt.shutdown_background();
    result
}

/// Waits for SIGTERM or SIGINT; SIGHUP asks for a reconfigure and keeps waiting.
async fn signals(tx: mpsc::Sender<Msg>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut hup), Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::hangup()),
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot install signal handlers");
        return;
    };
    loop {
        tokio::select! {
            _ = hup.recv() => { let _ = tx.send(Msg::Reconfigure); }
            _ = term.recv() => return,
            _ = int.recv() => return,
        }
    }
}
