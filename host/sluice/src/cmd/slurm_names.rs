//! `sluice` as Slurm's commands: called by one of their names (a link made by `sluice
//! install-links`, or the daemon's for its jobs) or given one as its subcommand, it reads the
//! rest of the command line as that command.

use std::ffi::OsString;
use std::path::Path;

/// Each Slurm command and the subcommand of sluice that is it.
const SUBCOMMANDS: [(&str, &str); 11] = [
    ("sbatch", "submit"),
    ("srun", "run"),
    ("salloc", "salloc"),
    ("squeue", "queue"),
    ("sinfo", "info"),
    ("scancel", "cancel"),
    ("scontrol", "scontrol"),
    ("sacct", "acct"),
    ("sprio", "prio"),
    ("sshare", "share"),
    ("sdiag", "sdiag"),
];

/// The subcommand a Slurm command's name stands for.
pub fn subcommand(name: &str) -> Option<&'static str> {
    SUBCOMMANDS
        .iter()
        .find(|(slurm, _)| *slurm == name)
        .map(|&(_, sub)| sub)
}

/// The command line as sluice's own: `squeue ARGS…` (called through a link by that name, from
/// any directory) and `sluice squeue ARGS…` both read as `sluice queue ARGS…`.
pub fn argv(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    let called = args
        .first()
        .and_then(|a| Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .and_then(subcommand);
    if let Some(sub) = called {
        args.splice(0..1, ["sluice".into(), sub.into()]);
    } else if let Some(sub) = args.get(1).and_then(|a| a.to_str()).and_then(subcommand) {
        args[1] = sub.into();
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(words: &[&str]) -> Vec<String> {
        argv(words.iter().map(OsString::from))
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn every_linked_name_is_a_subcommand() {
        for name in sluice_daemon::SLURM_COMMAND_NAMES {
            assert!(subcommand(name).is_some(), "{name}");
        }
        assert_eq!(SUBCOMMANDS.len(), sluice_daemon::SLURM_COMMAND_NAMES.len());
    }

    #[test]
    fn a_link_name_or_a_first_word_picks_the_command() {
        assert_eq!(
            read(&["/x/bin/squeue", "-h", "-o", "%i"]),
            ["sluice", "queue", "-h", "-o", "%i"]
        );
        assert_eq!(read(&["sbatch", "--wrap", "hostname"])[1], "submit");
        assert_eq!(read(&["sluice", "sinfo", "-h"]), ["sluice", "info", "-h"]);
        assert_eq!(read(&["sluice", "queue"]), ["sluice", "queue"]);
        // Only the first word names a command: an argument that happens to be a name stays.
        assert_eq!(
            read(&["sluice", "submit", "--wrap", "squeue"]),
            ["sluice", "submit", "--wrap", "squeue"]
        );
    }
}
