//! Each job's script and environment in files of their own, `DIR/scripts/<id>.sh` and
//! `<id>.env`, so the image in memory holds a reference rather than megabytes per job (as
//! slurmctld keeps `job.<id>/script` and `environment` under StateSaveLocation).
//!
//! The journal record of a submission still carries both, so an acknowledged job is durable
//! by the journal's one sync per loop turn; the files are written unsynced at commit and the
//! whole file system is synced ([`sync`]) before a snapshot that relies on them is renamed
//! in. Replaying a journal record writes its files again.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The directory of job files inside the state directory.
pub const DIR: &str = "scripts";

/// Where one job's script and environment are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobFiles {
    /// The batch script's text.
    pub script: PathBuf,
    /// The submitted environment, as a JSON object.
    pub env: PathBuf,
}

impl JobFiles {
    /// The files of job `id` in state directory `state_dir`.
    pub fn of(state_dir: &Path, id: u64) -> Self {
        let dir = state_dir.join(DIR);
        Self {
            script: dir.join(format!("{id}.sh")),
            env: dir.join(format!("{id}.env")),
        }
    }

    /// Writes `script` and `env`, replacing what is there; not synced (see the module's note).
    pub fn save(&self, script: &str, env: &BTreeMap<String, String>) -> io::Result<()> {
        if let Some(dir) = self.script.parent() {
            match fs::DirBuilder::new().mode(0o700).create(dir) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
        }
        let env_text = serde_json::to_vec(env).expect("an environment always serializes");
        write_private(&self.script, script.as_bytes())?;
        write_private(&self.env, &env_text)
    }

    /// Reads the script and the environment back.
    pub fn load(&self) -> io::Result<(String, BTreeMap<String, String>)> {
        let script = String::from_utf8(read_private(&self.script)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let env = serde_json::from_slice(&read_private(&self.env)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        Ok((script, env))
    }

    /// Removes both files (a purged job's); files already gone are no error.
    pub fn remove(&self) {
        for p in [&self.script, &self.env] {
            if let Err(e) = fs::remove_file(p)
                && e.kind() != io::ErrorKind::NotFound
            {
                tracing::warn!("{}: {e}", p.display());
            }
        }
    }
}

/// The environment a batch script runs with: the submitter's variables, `PATH` when they
/// have none, then the `computed` ones (Slurm's) over them, but for `SLURM_SUBMIT_HOST`,
/// which the submitter's side says when it does; and the daemon's Slurm command names (beside
/// its state directory, `SLUICE_STATE_DIR`) first on `PATH`.
pub fn launch_env(
    mut submitted: BTreeMap<String, String>,
    computed: BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let host = submitted.get("SLURM_SUBMIT_HOST").cloned();
    submitted
        .entry("PATH".into())
        .or_insert_with(|| "/usr/local/bin:/usr/bin:/bin".into());
    submitted.extend(computed);
    if let Some(host) = host {
        submitted.insert("SLURM_SUBMIT_HOST".into(), host);
    }
    if let Some(state_dir) = submitted.get("SLUICE_STATE_DIR").map(PathBuf::from) {
        crate::slurm_commands::first_on_path(
            &mut submitted,
            &crate::slurm_commands::dir(&state_dir),
        );
    }
    submitted
}

/// Syncs the file system holding `state_dir`: every job file written so far is on disk once
/// this returns, whichever they are (one call rather than one per file and directory).
pub fn sync(state_dir: &Path) -> io::Result<()> {
    let dir = File::open(state_dir)?;
    // SAFETY: plain system call on an owned descriptor.
    if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Creates or truncates `path`, 0600, without following a symlink, and writes `bytes`.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?
        .write_all(bytes)
}

/// Reads `path` without following a symlink.
fn read_private(path: &Path) -> io::Result<Vec<u8>> {
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_job_reads_back_and_is_gone_once_removed() {
        let dir = tempfile::tempdir().unwrap();
        let files = JobFiles::of(dir.path(), 7);
        let env = BTreeMap::from([("A".to_string(), "1\n2".to_string())]);
        files.save("#!/bin/sh\necho hi\n", &env).unwrap();
        assert_eq!(files.load().unwrap(), ("#!/bin/sh\necho hi\n".into(), env));
        files.remove();
        assert!(files.load().is_err());
    }

    #[test]
    fn computed_variables_win_but_the_submit_host_and_path_are_the_submitters() {
        let submitted = BTreeMap::from([
            ("SLURM_JOB_ID".to_string(), "1".to_string()),
            ("SLURM_SUBMIT_HOST".to_string(), "login1".to_string()),
        ]);
        let computed = BTreeMap::from([
            ("SLURM_JOB_ID".to_string(), "9".to_string()),
            ("SLURM_SUBMIT_HOST".to_string(), "here".to_string()),
        ]);
        let env = launch_env(submitted, computed);
        assert_eq!(env["SLURM_JOB_ID"], "9");
        assert_eq!(env["SLURM_SUBMIT_HOST"], "login1");
        assert_eq!(env["PATH"], "/usr/local/bin:/usr/bin:/bin");
    }

    #[test]
    fn the_daemons_slurm_commands_come_first_on_the_submitters_path() {
        let submitted = BTreeMap::from([
            ("PATH".to_string(), "/opt/slurm/bin:/usr/bin".to_string()),
            ("SLUICE_STATE_DIR".to_string(), "/elsewhere".to_string()),
        ]);
        let computed = BTreeMap::from([("SLUICE_STATE_DIR".to_string(), "/var/lib/sluice".into())]);
        let env = launch_env(submitted, computed);
        assert_eq!(env["PATH"], "/var/lib/sluice/bin:/opt/slurm/bin:/usr/bin");
    }
}
