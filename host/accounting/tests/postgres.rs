//! The PostgreSQL store against a real server: a throwaway cluster made with `initdb` in a
//! temporary directory (as `nobody` when the test runs as root, since initdb refuses root),
//! listening only on a Unix socket there. Without PostgreSQL's programs the test says why it
//! did not run and passes; CI installs them (`.ci/run`).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use sluice_accounting::postgres::PostgresStore;
use sluice_accounting::{Filter, Target, open, schema};

/// The directory holding `initdb` and `pg_ctl`: on `PATH`, else Debian's versioned directory.
fn pg_bin() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("initdb"))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok());
    let debian = || {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| Some(e.ok()?.path().join("bin/initdb")))
            .filter(|p| p.is_file())
            .collect();
        dirs.sort();
        dirs.pop()
    };
    let initdb = on_path.or_else(debian)?;
    let dir = initdb.parent()?.to_path_buf();
    dir.join("pg_ctl").is_file().then_some(dir)
}

/// A running throwaway server, stopped when dropped.
struct Server {
    bin: PathBuf,
    data: PathBuf,
    user: Option<&'static str>,
    url: String,
    _dir: tempfile::TempDir,
}

impl Server {
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

    fn start() -> Result<Self, String> {
        let bin = pg_bin().ok_or("no initdb/pg_ctl on PATH or under /usr/lib/postgresql")?;
        let root = unsafe { libc::geteuid() } == 0;
        let user = root.then_some("nobody");
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let data = dir.path().join("data");
        if root {
            // nobody must reach and own the cluster's directory.
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
                .map_err(|e| e.to_string())?;
            let st = Command::new("chown")
                .args(["nobody", &dir.path().to_string_lossy()])
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
        let opts = format!("-k {socket} -c listen_addresses='' -p 54329 -c fsync=off");
        let out = Self::command(&bin, user, "pg_ctl")
            .args(["-w", "-t", "60", "-D"])
            .arg(&data)
            .args(["-l"])
            .arg(dir.path().join("log"))
            .args(["-o", &opts, "start"])
            .output()
            .map_err(|e| format!("pg_ctl: {e}"))?;
        if !out.status.success() {
            let log = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
            return Err(format!("pg_ctl start failed: {log}"));
        }
        Ok(Self {
            url: format!("host={socket} port=54329 user=acct dbname=postgres"),
            bin,
            data,
            user,
            _dir: dir,
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Self::command(&self.bin, self.user, "pg_ctl")
            .args(["-w", "-m", "immediate", "-D"])
            .arg(&self.data)
            .arg("stop")
            .output();
    }
}

#[test]
fn a_real_server_is_migrated_and_keeps_the_same_contract() {
    let server = match Server::start() {
        Ok(s) => s,
        Err(why) => {
            eprintln!("skipped: no PostgreSQL server to test against: {why}");
            return;
        }
    };
    let mut store = PostgresStore::connect(&server.url).unwrap();
    common::store_contract(&mut store);
    common::values_never_become_sql(&mut store);
    drop(store);

    // Reconnecting through the daemon's setting finds the schema migrated and the jobs kept.
    let target = Target::parse(Some(&format!("postgres: {}", server.url)), Path::new("/")).unwrap();
    let mut again = open(&target).unwrap();
    assert_eq!(again.schema_version().unwrap(), schema::VERSION);
    assert_eq!(again.query(&Filter::default(), 100).unwrap().len(), 5);
}

#[test]
fn an_unreachable_server_is_an_error_naming_it_without_its_password() {
    let e = PostgresStore::connect("host=/nonexistent-dir port=1 user=acct password=hunter2")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("/nonexistent-dir") && !e.contains("hunter2"),
        "{e}"
    );
}
