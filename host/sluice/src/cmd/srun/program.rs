//! What each task of a step runs: srun's command line, or with `--multi-prog` its line of the
//! configuration file the command names (read and checked before the step is asked for, so
//! a task count the file raises shapes the allocation and the step).

use super::multi_prog::MultiProg;
use super::options::Srun;

/// The tasks' command lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Program {
    /// Every task runs srun's command.
    Same(Vec<String>),
    /// Each task runs its line of the file, then srun's words after the file name.
    Multi {
        /// The checked file.
        conf: MultiProg,
        /// srun's words after the file name.
        extra: Vec<String>,
    },
}

/// The program of srun's command `argv`: with `--multi-prog`, the file it names, checked for
/// the step's task count, which ranks past an unset count raise in `s` (as `-n` would).
/// The error is srun's messages, one a line.
pub fn read(s: &mut Srun, argv: &[String]) -> Result<Program, String> {
    if !s.options.multi_prog {
        return Ok(Program::Same(argv.to_vec()));
    }
    let name = &argv[0];
    let text =
        std::fs::read(name).map_err(|_| format!("Unable to open configuration file {name}"))?;
    let text = String::from_utf8_lossy(&text);
    let (shape, _) = s.shape();
    let set = s.ntasks_given || s.env_ntasks.is_some();
    let (conf, tasks) = MultiProg::parse(name, &text, shape.tasks, set)?;
    if tasks != shape.tasks {
        s.options.ntasks = Some(tasks);
        s.ntasks_given = true;
    }
    Ok(Program::Multi {
        conf,
        extra: argv[1..].to_vec(),
    })
}

impl Program {
    /// Each task's command line, by rank, for `tasks` tasks.
    pub fn argvs(&self, tasks: u32) -> Result<Vec<Vec<String>>, String> {
        (0..tasks)
            .map(|rank| match self {
                Self::Same(argv) => Ok(argv.clone()),
                Self::Multi { conf, extra } => conf.argv(rank, extra),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::options::{Command, Context, scan};
    use std::collections::BTreeMap;

    fn srun(cli: &str) -> Srun {
        let words: Vec<String> = cli.split_whitespace().map(String::from).collect();
        let scanned = scan::command_line(Command::Srun, &words).unwrap();
        let cx = Context {
            now: 0,
            zone: crate::cmd::clock::Zone::Utc,
        };
        super::super::options::read(&BTreeMap::new(), &scanned.options, cx).unwrap()
    }

    #[test]
    fn a_multi_prog_file_gives_each_task_its_line_and_may_raise_the_task_count() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("mpmd.conf");
        std::fs::write(&conf, "0 echo lead\n1-3 echo worker %o\n").unwrap();
        let c = conf.to_string_lossy().into_owned();
        let mut s = srun("--multi-prog");
        let p = read(&mut s, &[c.clone(), "x".into()]).unwrap();
        // No `-n`: the file's highest rank sets the count.
        assert_eq!(s.shape().0.tasks, 4);
        let argvs = p.argvs(4).unwrap();
        assert_eq!(argvs[0], ["echo", "lead", "x"]);
        assert_eq!(argvs[3], ["echo", "worker", "2", "x"]);
        // With `-n`, a rank past it is srun's error.
        let mut s = srun("-n 2 --multi-prog");
        assert_eq!(
            read(&mut s, std::slice::from_ref(&c)).unwrap_err(),
            format!("Invalid task id, 3 >= ntasks\nLine 2 of configuration file {c} invalid")
        );
        let mut s = srun("--multi-prog");
        assert_eq!(
            read(&mut s, &["/no/such.conf".into()]).unwrap_err(),
            "Unable to open configuration file /no/such.conf"
        );
        // Without the option the command is every task's.
        let mut s = srun("-n 2");
        let p = read(&mut s, &["hostname".into()]).unwrap();
        assert_eq!(p.argvs(2).unwrap(), [["hostname"], ["hostname"]]);
    }
}
