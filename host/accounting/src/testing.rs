//! A throwaway PostgreSQL server for tests (feature `testing`): a cluster made with `initdb` in
//! a temporary directory, as `nobody` when the caller is root (initdb refuses root), listening
//! only on a Unix socket there, stopped and removed when dropped.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory holding `initdb` and `pg_ctl`: on `PATH`, else Debian's versioned directory.
pub fn pg_bin() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("initdb"))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok());
    let debian = || {
        let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| Some(e.ok()?.path().join("bin/initdb")))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        found.pop()
    };
    let initdb = on_path.or_else(debian)?;
    let dir = initdb.parent()?.to_path_buf();
    dir.join("pg_ctl").is_file().then_some(dir)
}

/// A running throwaway server.
pub struct PgServer {
    bin: PathBuf,
    data: PathBuf,
    user: Option<&'static str>,
    /// Connection words for it (`host=… port=… user=… dbname=postgres`).
    pub conninfo: String,
    _dir: tempfile::TempDir,
}

/// The port in the socket's name; only the socket in the server's own directory listens.
const PORT: &str = "54329";

impl PgServer {
    fn command(bin: &Path, user: Option<&str>, program: &str) -> Command {
        match user {
            Some(u) => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--"]).arg(bin.join(program));
                c
            }
            None => Command::new(bin.join(program)),
        }
    }

    /// Makes and starts a server; `Err` says why it could not (no PostgreSQL programs, …).
    pub fn start() -> Result<Self, String> {
        let bin = pg_bin().ok_or("no initdb/pg_ctl on PATH or under /usr/lib/postgresql")?;
        // SAFETY: plain system call.
        let root = unsafe { libc::geteuid() } == 0;
        let user = root.then_some("nobody");
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let data = dir.path().join("data");
        if root {
            // nobody must reach and own the cluster's directory.
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
                .map_err(|e| e.to_string())?;
            let st = Command::new("chown")
                .arg("nobody")
                .arg(dir.path())
                .status()
                .map_err(|e| format!("chown: {e}"))?;
            if !st.success() {
                return Err("chown nobody failed".into());
            }
        }
        let out = Self::command(&bin, user, "initdb")
            .args(["-A", "trust", "-U", "acct", "-E", "UTF8", "--no-sync", "-D"])
            .arg(&data)
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let socket = dir.path().to_string_lossy().into_owned();
        let opts = format!("-k {socket} -c listen_addresses='' -p {PORT} -c fsync=off");
        let out = Self::command(&bin, user, "pg_ctl")
            .args(["-w", "-t", "60", "-D"])
            .arg(&data)
            .arg("-l")
            .arg(dir.path().join("log"))
            .args(["-o", &opts, "start"])
            .output()
            .map_err(|e| format!("pg_ctl: {e}"))?;
        if !out.status.success() {
            let log = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
            return Err(format!("pg_ctl start failed: {log}"));
        }
        Ok(Self {
            conninfo: format!("host={socket} port={PORT} user=acct dbname=postgres"),
            bin,
            data,
            user,
            _dir: dir,
        })
    }
}

impl PgServer {
    /// Sends `signal` to the server and every process it forked (its backends), so a test can
    /// freeze it (`SIGSTOP`) as a hung database and thaw it (`SIGCONT`).
    pub fn signal_all(&self, signal: i32) -> Result<(), String> {
        let pidfile = std::fs::read_to_string(self.data.join("postmaster.pid"))
            .map_err(|e| format!("postmaster.pid: {e}"))?;
        let main: i32 = pidfile
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .ok_or("postmaster.pid: no pid on its first line")?;
        let mut pids = vec![main];
        for entry in std::fs::read_dir("/proc")
            .map_err(|e| e.to_string())?
            .flatten()
        {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            // `pid (comm) state ppid …`: the parent is the second field after the command.
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<i32>().ok());
            if ppid == Some(main) {
                pids.push(pid);
            }
        }
        for pid in pids {
            // SAFETY: signalling processes of the server this test started.
            unsafe { libc::kill(pid, signal) };
        }
        Ok(())
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // A frozen server would not stop.
        let _ = self.signal_all(libc::SIGCONT);
        let _ = Self::command(&self.bin, self.user, "pg_ctl")
            .args(["-w", "-m", "immediate", "-D"])
            .arg(&self.data)
            .arg("stop")
            .output();
    }
}
