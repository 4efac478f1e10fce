//! srun's `-o/--output`, `-e/--error` and `-i/--input` read as its `fname_create` reads them
//! (`all`, `none`, a task id, a file name pattern) and resolved for each task of a step: its
//! standard output and error forwarded to srun's, discarded or written to a file, and its
//! standard input srun's copy, nothing, or a file.

use std::path::{Path, PathBuf};

use sluice_api::filename::{PatternFields, TaskFields, expand_for_task};

/// Where a task's standard output or error goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sink {
    /// To srun's own (with `--label`'s prefix).
    Forward,
    /// Nowhere.
    Discard,
    /// To this file, shared with every task that names the same one.
    File(PathBuf),
}

/// Where a task's standard input comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A copy of srun's standard input.
    Forward,
    /// Nothing (end of file at once).
    Null,
    /// This file, read from its start.
    File(PathBuf),
}

/// One of srun's stdio options as it reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Stream {
    /// `all` (and anything starting with it, or with `-`, as srun compares only that much),
    /// or no option: every task to srun.
    All,
    /// `none`: no task.
    None,
    /// A task id below the step's count: that task alone.
    Task(u32),
    /// A file name pattern: expanded for each task.
    Pattern(String),
}

impl Stream {
    fn read(value: Option<&str>, tasks: u32) -> Self {
        let Some(v) = value else { return Self::All };
        let starts_all = v.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("all"));
        if starts_all || v.starts_with('-') {
            return Self::All;
        }
        if v.eq_ignore_ascii_case("none") {
            return Self::None;
        }
        match v.parse::<u32>() {
            Ok(id) if id < tasks && v.bytes().all(|b| b.is_ascii_digit()) => Self::Task(id),
            _ => Self::Pattern(v.to_string()),
        }
    }
}

/// Whether an escape-free pattern names a per-task field (`%t`, `%n`, `%N`, `%u`, with or
/// without a width), which srun leaves for each node to open.
fn per_task(pattern: &str) -> bool {
    if pattern.contains('\\') {
        return false;
    }
    let mut rest = pattern;
    while let Some(at) = rest.find('%') {
        let after = &rest[at + 1..];
        if let Some(more) = after.strip_prefix('%') {
            rest = more;
            continue;
        }
        let field = after.trim_start_matches(|c: char| c.is_ascii_digit());
        if field.starts_with(['t', 'n', 'N', 'u']) {
            return true;
        }
        rest = after;
    }
    false
}

/// srun's `-o/--output`, `-e/--error` and `-i/--input` as given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stdio {
    /// `-o`.
    pub output: Option<String>,
    /// `-e`.
    pub error: Option<String>,
    /// `-i`.
    pub input: Option<String>,
}

/// The step's stdio options and what their patterns need besides each task's own fields.
#[derive(Clone, Debug)]
pub struct Plan {
    output: Stream,
    error: Stream,
    input: Stream,
    /// The job id (`%j`, `%J`, `%A` outside an array).
    pub job: u64,
    /// The step id (`%s`, `%J`).
    pub step: u32,
    /// `SLURM_ARRAY_JOB_ID`, if srun runs in an array task.
    pub array_job: Option<u64>,
    /// `SLURM_ARRAY_TASK_ID` (srun's `%a` is 0 outside an array).
    pub array_task: u32,
    /// `SLURM_JOB_NAME` (`%x`).
    pub job_name: String,
    /// The user srun runs as (`%u`).
    pub user: String,
    /// Where names that no task's own field is in are relative to: srun's directory.
    pub cwd: PathBuf,
}

/// A task's three streams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskStreams {
    /// Standard input.
    pub stdin: Source,
    /// Standard output.
    pub stdout: Sink,
    /// Standard error.
    pub stderr: Sink,
}

impl Default for TaskStreams {
    fn default() -> Self {
        Self {
            stdin: Source::Forward,
            stdout: Sink::Forward,
            stderr: Sink::Forward,
        }
    }
}

/// A task as its file names see it.
pub struct TaskPlace<'a> {
    /// Its rank.
    pub rank: u32,
    /// Its node's index in the step.
    pub node_index: u32,
    /// Its node's name.
    pub node: &'a str,
    /// Its working directory, which per-task names are relative to.
    pub workdir: &'a Path,
}

impl Plan {
    /// The options as srun reads them for a step of `tasks` tasks; `--error` not given
    /// follows `--output`, as in srun.
    pub fn new(stdio: &Stdio, tasks: u32) -> Self {
        let output = Stream::read(stdio.output.as_deref(), tasks);
        let error = match &stdio.error {
            Some(e) => Stream::read(Some(e), tasks),
            None => output.clone(),
        };
        Self {
            output,
            error,
            input: Stream::read(stdio.input.as_deref(), tasks),
            job: 0,
            step: 0,
            array_job: None,
            array_task: 0,
            job_name: String::new(),
            user: String::new(),
            cwd: PathBuf::new(),
        }
    }

    /// Where task `t`'s streams go.
    pub fn streams(&self, t: &TaskPlace<'_>) -> TaskStreams {
        let sink = |s: &Stream| match s {
            Stream::All => Sink::Forward,
            Stream::None => Sink::Discard,
            Stream::Task(id) if *id == t.rank => Sink::Forward,
            Stream::Task(_) => Sink::Discard,
            Stream::Pattern(p) => Sink::File(self.path(p, t)),
        };
        let stdin = match &self.input {
            Stream::All => Source::Forward,
            Stream::None => Source::Null,
            Stream::Task(id) if *id == t.rank => Source::Forward,
            Stream::Task(_) => Source::Null,
            Stream::Pattern(p) => Source::File(self.path(p, t)),
        };
        TaskStreams {
            stdin,
            stdout: sink(&self.output),
            stderr: sink(&self.error),
        }
    }

    /// `pattern` expanded for task `t`: relative to its working directory when it names a
    /// per-task field (each node opens those), else to srun's.
    fn path(&self, pattern: &str, t: &TaskPlace<'_>) -> PathBuf {
        let fields = PatternFields {
            job_id: self.job,
            array_task: Some(self.array_task),
            array_job: self.array_job,
            name: &self.job_name,
            user: &self.user,
            node: t.node,
        };
        let task = TaskFields {
            step: self.step,
            task: t.rank,
            node_index: t.node_index,
        };
        let dir = if per_task(pattern) {
            t.workdir
        } else {
            &self.cwd
        };
        expand_for_task(pattern, &fields, &task, dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(o: Option<&str>, e: Option<&str>, i: Option<&str>) -> Plan {
        Plan {
            job: 128,
            step: 0,
            job_name: "train".into(),
            user: "alice".into(),
            cwd: "/home/alice".into(),
            ..Plan::new(
                &Stdio {
                    output: o.map(String::from),
                    error: e.map(String::from),
                    input: i.map(String::from),
                },
                4,
            )
        }
    }

    fn at(rank: u32) -> TaskPlace<'static> {
        TaskPlace {
            rank,
            node_index: rank / 2,
            node: if rank < 2 { "n1" } else { "n2" },
            workdir: Path::new("/scratch"),
        }
    }

    fn file(p: &str) -> Sink {
        Sink::File(p.into())
    }

    #[test]
    fn by_default_every_task_talks_to_srun() {
        let s = plan(None, None, None).streams(&at(3));
        assert_eq!(s, TaskStreams::default());
        assert_eq!(plan(Some("ALL"), None, Some("all")).streams(&at(3)), s);
    }

    #[test]
    fn a_pattern_with_a_task_field_gives_each_task_its_file_and_error_follows_output() {
        let p = plan(Some("out-%t.txt"), None, None);
        assert_eq!(p.streams(&at(0)).stdout, file("/scratch/out-0.txt"));
        assert_eq!(p.streams(&at(3)).stderr, file("/scratch/out-3.txt"));
        let p = plan(Some("/o/%j-%2n-%N-%3t-%u.out"), Some("/o/err-%J-%x"), None);
        let s = p.streams(&at(2));
        assert_eq!(s.stdout, file("/o/128-01-n2-002-alice.out"));
        assert_eq!(s.stderr, file("/o/err-128.0-train"));
        // One name for all: every task writes to the same file, relative to srun's directory.
        let p = plan(Some("all-out.txt"), None, None);
        assert_eq!(p.streams(&at(0)).stdout, Sink::Forward);
        let p = plan(Some("log.txt"), Some("none"), None);
        assert_eq!(p.streams(&at(1)).stdout, file("/home/alice/log.txt"));
        assert_eq!(p.streams(&at(1)).stderr, Sink::Discard);
    }

    #[test]
    fn a_task_id_keeps_one_tasks_stream_and_an_id_past_the_count_is_a_name() {
        let p = plan(Some("2"), None, Some("1"));
        assert_eq!(p.streams(&at(2)).stdout, Sink::Forward);
        assert_eq!(p.streams(&at(0)).stderr, Sink::Discard);
        assert_eq!(p.streams(&at(1)).stdin, Source::Forward);
        assert_eq!(p.streams(&at(2)).stdin, Source::Null);
        let p = plan(Some("4"), None, Some("none"));
        assert_eq!(p.streams(&at(0)).stdout, file("/home/alice/4"));
        assert_eq!(p.streams(&at(0)).stdin, Source::Null);
        let p = plan(None, None, Some("in-%t"));
        assert_eq!(
            p.streams(&at(1)).stdin,
            Source::File("/scratch/in-1".into())
        );
    }

    #[test]
    fn per_task_fields_are_found_past_widths_and_double_percents() {
        assert!(per_task("a-%t"));
        assert!(per_task("a-%05n"));
        assert!(!per_task("a-%%t"));
        assert!(!per_task("a-%j-%x"));
        assert!(!per_task("a-\\%t"));
    }
}
