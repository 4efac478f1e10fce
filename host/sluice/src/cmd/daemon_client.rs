//! What every client command shares: finding the daemon (`--state-dir`, `SLUICE_STATE_DIR`, or
//! the default: your own daemon's directory if its socket is there, else the site's /var/lib/sluice) and printing JSON.

use std::path::PathBuf;

use sluice_client::{Client, default_state_dir};

/// Options of every client command.
#[derive(clap::Args, Clone, Debug)]
pub struct Conn {
    /// The daemon's state directory (default: your own daemon's, $XDG_STATE_HOME/sluice or ~/.local/state/sluice, if it runs, else root's /var/lib/sluice).
    #[arg(long, env = "SLUICE_STATE_DIR", global = true)]
    pub state_dir: Option<PathBuf>,
    /// Print the daemon's answer as JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

impl Conn {
    /// The state directory in effect.
    pub fn dir(&self) -> PathBuf {
        self.state_dir.clone().unwrap_or_else(default_state_dir)
    }

    /// A client of that daemon.
    pub fn client(&self) -> Client {
        Client::new(&self.dir())
    }
}

/// Prints an answer as pretty JSON.
pub fn print_json<T: serde::Serialize>(v: &T) {
    match serde_json::to_string_pretty(v) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("sluice: the answer does not print as JSON: {e}"),
    }
}

/// `1-02:03:04` / `2:03:04` / `3:04`, as squeue prints TIME.
pub fn duration(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}
