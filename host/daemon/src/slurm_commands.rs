//! Slurm's command names as links to the one `sluice` binary: the names, making the links in a
//! directory (`sluice install-links`, and the daemon's own `DIR/bin` at start-up), and putting
//! that directory first on a job's `PATH`, so a job script's `srun` and `scontrol` are sluice's.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The Slurm commands the `sluice` binary answers to when called by their name.
pub const NAMES: [&str; 11] = [
    "sbatch", "srun", "salloc", "squeue", "sinfo", "scancel", "scontrol", "sacct", "sprio",
    "sshare", "sdiag",
];

/// What linking one name did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The link is new.
    Created,
    /// A link to another sluice binary (this old target) now points at this one.
    Replaced(PathBuf),
    /// The link already pointed at this binary.
    Kept,
}

/// One name's link and what making it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linked {
    /// The Slurm command's name.
    pub name: &'static str,
    /// The link's path.
    pub path: PathBuf,
    /// What was done.
    pub change: Change,
}

/// Why the links could not be made.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// Files by those names that are not links to sluice; nothing was changed.
    #[error("{}: not a link to sluice, left as it is (no link was made)", shown(.0))]
    Foreign(Vec<PathBuf>),
    /// The directory holding the daemon's links is not a plain directory of its own.
    #[error("{}: not a directory owned by this user and writable by it alone", .0.display())]
    Untrusted(PathBuf),
    /// A file system call failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file it failed on.
        path: PathBuf,
        /// The failure.
        source: io::Error,
    },
}

fn shown(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> LinkError + '_ {
    move |source| LinkError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Whether a link's target is a sluice binary: this one, or another install of it (a link
/// left by an older version, which is ours to move).
fn is_sluice(target: &Path, program: &Path) -> bool {
    target == program || target.file_name().is_some_and(|n| n == "sluice")
}

/// What is at a link's path before linking.
enum Found {
    /// Nothing.
    Nothing,
    /// A link to a sluice binary, with its target.
    Sluice(PathBuf),
    /// Anything else: someone else's file.
    Foreign,
}

/// What is at `path` now.
fn existing(path: &Path, program: &Path) -> Result<Found, LinkError> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Found::Nothing),
        Err(e) => Err(io_at(path)(e)),
        Ok(m) if m.file_type().is_symlink() => {
            let target = fs::read_link(path).map_err(io_at(path))?;
            Ok(if is_sluice(&target, program) {
                Found::Sluice(target)
            } else {
                Found::Foreign
            })
        }
        Ok(_) => Ok(Found::Foreign),
    }
}

/// Makes `dir/NAME -> program` for every name in [`NAMES`], creating `dir` if needed. A file by
/// one of those names that is not a link to sluice is never overwritten: then nothing is
/// changed and the error names every such file.
pub fn install(dir: &Path, program: &Path) -> Result<Vec<Linked>, LinkError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
        .map_err(io_at(dir))?;
    // Every name is checked before any is touched, so a refusal leaves the directory as it was.
    let mut plan = Vec::with_capacity(NAMES.len());
    let mut foreign = Vec::new();
    for name in NAMES {
        let path = dir.join(name);
        match existing(&path, program)? {
            Found::Foreign => foreign.push(path),
            found => plan.push((name, path, found)),
        }
    }
    if !foreign.is_empty() {
        return Err(LinkError::Foreign(foreign));
    }
    plan.into_iter()
        .map(|(name, path, old)| {
            let change = match old {
                Found::Sluice(target) if target == program => Change::Kept,
                Found::Sluice(target) => {
                    replace_link(&path, program)?;
                    Change::Replaced(target)
                }
                Found::Foreign | Found::Nothing => {
                    std::os::unix::fs::symlink(program, &path).map_err(io_at(&path))?;
                    Change::Created
                }
            };
            Ok(Linked { name, path, change })
        })
        .collect()
}

/// Points the link at `path` to `program` in one rename, so a job starting meanwhile finds
/// either link, never none.
fn replace_link(path: &Path, program: &Path) -> Result<(), LinkError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let fresh = path.with_file_name(format!(".{name}.sluice-new"));
    match fs::remove_file(&fresh) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_at(&fresh)(e)),
        _ => {}
    }
    std::os::unix::fs::symlink(program, &fresh).map_err(io_at(&fresh))?;
    fs::rename(&fresh, path).map_err(io_at(path))
}

/// The directory of links the daemon with state directory `state_dir` keeps for its jobs.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("bin")
}

/// Makes the daemon's [`dir`] (mode 755, so every job's user can run what it holds) and its
/// links to `program`. The directory must be the daemon user's own and writable by it alone,
/// since every job runs what it holds.
pub fn prepare(state_dir: &Path, program: &Path) -> Result<Vec<Linked>, LinkError> {
    let bin = dir(state_dir);
    match fs::DirBuilder::new().mode(0o755).create(&bin) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(io_at(&bin)(e)),
        _ => {}
    }
    let m = fs::symlink_metadata(&bin).map_err(io_at(&bin))?;
    // SAFETY: plain system call.
    let euid = unsafe { libc::geteuid() };
    if !m.is_dir() || m.uid() != euid || m.mode() & 0o022 != 0 {
        return Err(LinkError::Untrusted(bin));
    }
    if m.mode() & 0o755 != 0o755 {
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).map_err(io_at(&bin))?;
    }
    // Every link here is the daemon's own, whatever the binary it pointed at was called.
    for name in NAMES {
        let path = bin.join(name);
        if let Ok(target) = fs::read_link(&path)
            && target != program
        {
            replace_link(&path, program)?;
        }
    }
    install(&bin, program)
}

/// Puts `dir` first on the `PATH` of `env` (once: a job submitted from inside a job already has
/// it), so the Slurm commands a job runs by name are the ones linked there.
pub fn first_on_path(env: &mut BTreeMap<String, String>, dir: &Path) {
    let dir = dir.to_string_lossy();
    let rest: Vec<&str> = env
        .get("PATH")
        .map(|p| p.split(':').filter(|d| *d != dir).collect())
        .unwrap_or_default();
    let path = std::iter::once(&*dir)
        .chain(rest)
        .collect::<Vec<_>>()
        .join(":");
    env.insert("PATH".into(), path);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_every_name_then_keeps_them() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bin");
        let program = Path::new("/opt/sluice/bin/sluice");
        let made = install(&dir, program).unwrap();
        assert_eq!(made.len(), NAMES.len());
        assert!(made.iter().all(|l| l.change == Change::Created));
        assert_eq!(fs::read_link(dir.join("srun")).unwrap(), program);
        let again = install(&dir, program).unwrap();
        assert!(again.iter().all(|l| l.change == Change::Kept));
        let moved = install(&dir, Path::new("/usr/bin/sluice")).unwrap();
        assert_eq!(moved[0].change, Change::Replaced(program.to_path_buf()));
    }

    #[test]
    fn a_foreign_file_is_never_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("squeue"), "#!/bin/sh\n").unwrap();
        std::os::unix::fs::symlink("/usr/bin/srun-real", tmp.path().join("srun")).unwrap();
        let err = install(tmp.path(), Path::new("/opt/sluice")).unwrap_err();
        assert!(
            matches!(&err, LinkError::Foreign(f) if f.len() == 2),
            "{err}"
        );
        assert_eq!(
            fs::read_to_string(tmp.path().join("squeue")).unwrap(),
            "#!/bin/sh\n"
        );
        assert!(!tmp.path().join("sbatch").exists(), "nothing is linked");
    }

    #[test]
    fn the_daemon_repoints_its_own_links_whatever_they_pointed_at() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = dir(tmp.path());
        fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink("/old/sluiced", bin.join("srun")).unwrap();
        let program = Path::new("/new/sluice");
        prepare(tmp.path(), program).unwrap();
        assert_eq!(fs::read_link(bin.join("srun")).unwrap(), program);
        assert_eq!(fs::metadata(&bin).unwrap().mode() & 0o777, 0o755);
    }

    #[test]
    fn the_links_go_first_on_path_once() {
        let mut env = BTreeMap::from([("PATH".to_string(), "/s/bin:/usr/bin:/s/bin".to_string())]);
        first_on_path(&mut env, Path::new("/s/bin"));
        assert_eq!(env["PATH"], "/s/bin:/usr/bin");
        let mut bare = BTreeMap::new();
        first_on_path(&mut bare, Path::new("/s/bin"));
        assert_eq!(bare["PATH"], "/s/bin");
    }
}
