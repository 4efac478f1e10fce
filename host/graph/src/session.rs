//! resource-query's command interpreter: one line in, the bytes resource-query prints out
//! (`match`, `multi-match`, `cancel`, `find`, `info`, `list`, `stat`, `cat`, `set-/get-property`,
//! `set-/get-status`, `help`, `quit`; `update` and `partial-cancel` are in `session_r`).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;

use crate::jobspec::Jobspec;
use crate::match_ops::{MatchFailure, MatchOp};
use crate::match_writers::{MatchWriter, PrettySimpleWriter, SimpleWriter};
use crate::match_writers_json::{JgfWriter, RliteWriter, Rv1Writer};
use crate::matcher::Matcher;
use crate::session_text::{COMMANDS, format_double, parse_leading_int};

/// The `-F/--match-format` writers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchFormat {
    /// `simple`.
    Simple,
    /// `pretty_simple`.
    PrettySimple,
    /// `jgf`.
    Jgf,
    /// `rlite`.
    Rlite,
    /// `rv1`.
    Rv1,
    /// `rv1_nosched`.
    Rv1Nosched,
}

impl MatchFormat {
    /// The format named `name`, if this build has its writer.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "simple" => Some(MatchFormat::Simple),
            "pretty_simple" => Some(MatchFormat::PrettySimple),
            "jgf" => Some(MatchFormat::Jgf),
            "rlite" => Some(MatchFormat::Rlite),
            "rv1" => Some(MatchFormat::Rv1),
            "rv1_nosched" => Some(MatchFormat::Rv1Nosched),
            _ => None,
        }
    }

    pub(crate) fn writer(self) -> Box<dyn MatchWriter> {
        match self {
            MatchFormat::Simple => Box::new(SimpleWriter::default()),
            MatchFormat::PrettySimple => Box::new(PrettySimpleWriter::default()),
            MatchFormat::Jgf => Box::new(JgfWriter::default()),
            MatchFormat::Rlite => Box::new(RliteWriter::default()),
            MatchFormat::Rv1 => Box::new(Rv1Writer::with_scheduling()),
            MatchFormat::Rv1Nosched => Box::new(Rv1Writer::without_scheduling()),
        }
    }
}

/// Where a command's output goes: `out` is the `-t` file (or stdout); `info`, `stat`, `help`
/// and `-e` timings go to `stdout`, errors to `stderr`, as in resource-query.
pub struct Outputs<'a> {
    /// Match and find output.
    pub out: &'a mut dyn Write,
    /// Informational output.
    pub stdout: &'a mut dyn Write,
    /// Error output.
    pub stderr: &'a mut dyn Write,
}

/// What the caller does after a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read the next command.
    Continue,
    /// `quit` was given.
    Quit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobState {
    Allocated,
    Reserved,
    Canceled,
}

#[derive(Debug, Clone)]
pub(crate) struct JobInfo {
    pub(crate) state: JobState,
    pub(crate) at: i64,
    pub(crate) jobspec: String,
    pub(crate) overhead: f64,
}

/// A resource-query session: the matcher, the job table and the job-id counter.
pub struct Session {
    pub(crate) matcher: Matcher,
    pub(crate) format: MatchFormat,
    /// The match writer, kept between matches (each match's output is taken from it).
    writer: Box<dyn MatchWriter>,
    elapse: bool,
    pub(crate) next_jobid: u64,
    pub(crate) jobs: BTreeMap<u64, JobInfo>,
    /// Min, max and sum of match times for `stat`. resource-query stopped updating them for
    /// `match` in v0.47.0, so they keep their initial values; this is kept for parity.
    pub(crate) matched_time: (f64, f64, f64),
    base_dir: Option<std::path::PathBuf>,
    /// The last jobspec text read and what it parsed to: command files repeat one jobspec
    /// many times, and reading it again is cheaper than parsing it again.
    last_jobspec: Option<(String, Jobspec)>,
    /// The bytes of the last file read.
    read_buf: Vec<u8>,
}

impl Session {
    /// A session over `matcher` printing matches in `format`; `elapse` is `-e`.
    pub fn new(matcher: Matcher, format: MatchFormat, elapse: bool) -> Self {
        Session {
            matcher,
            format,
            writer: format.writer(),
            elapse,
            next_jobid: 1,
            jobs: BTreeMap::new(),
            matched_time: (f64::MAX, 0.0, 0.0),
            base_dir: None,
            last_jobspec: None,
            read_buf: Vec::new(),
        }
    }

    /// Resolves relative jobspec paths against `dir` instead of the working directory.
    pub fn set_base_dir(&mut self, dir: &Path) {
        self.base_dir = Some(dir.to_owned());
    }

    pub(crate) fn resolve(&self, file: &str) -> std::path::PathBuf {
        match &self.base_dir {
            Some(dir) => dir.join(file),
            None => Path::new(file).to_owned(),
        }
    }

    /// The matcher, for inspection.
    pub fn matcher(&self) -> &Matcher {
        &self.matcher
    }

    /// The matcher, to change its settings.
    pub fn matcher_mut(&mut self) -> &mut Matcher {
        &mut self.matcher
    }

    /// Runs one command line. Unknown first words and blank lines are ignored.
    pub fn execute(&mut self, line: &str, io: &mut Outputs<'_>) -> io::Result<Flow> {
        let args: Vec<&str> = line.split_whitespace().collect();
        let Some(&first) = args.first() else {
            return Ok(Flow::Continue);
        };
        let Some(&(name, _, _)) = COMMANDS.iter().find(|(n, a, _)| *n == first || *a == first)
        else {
            return Ok(Flow::Continue);
        };
        // `attach` and `remove` share the abbreviation `j`; the first entry wins, as in
        // resource-query's table lookup.
        match name {
            "match" => self.cmd_match(&args, io)?,
            "multi-match" => self.cmd_multi_match(&args, io)?,
            "update" => self.cmd_update(&args, io)?,
            "cancel" => self.cmd_cancel(&args, io)?,
            "partial-cancel" => self.cmd_partial_cancel(&args, io)?,
            "find" => self.cmd_find(&args, io)?,
            "info" => self.cmd_info(&args, io)?,
            "list" => self.cmd_list(io)?,
            "stat" => self.cmd_stat(&args, io)?,
            "cat" => self.cmd_cat(&args, io)?,
            "set-property" => self.cmd_set_property(&args, io)?,
            "get-property" => self.cmd_get_property(&args, io)?,
            "set-status" => self.cmd_set_status(&args, io)?,
            "get-status" => self.cmd_get_status(&args, io)?,
            "help" => self.cmd_help(&args, io)?,
            "quit" => return Ok(Flow::Quit),
            other => writeln!(
                io.stderr,
                "ERROR: {other} is not supported by sluice resource-query"
            )?,
        }
        Ok(Flow::Continue)
    }

    pub(crate) fn malformed(io: &mut Outputs<'_>) -> io::Result<()> {
        writeln!(io.stderr, "ERROR: malformed command")
    }

    fn cmd_match(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        if args.len() != 3 {
            return Self::malformed(io);
        }
        let Some(op) = MatchOp::from_name(args[1]) else {
            return writeln!(io.stderr, "ERROR: unknown subcmd {}", args[1]);
        };
        self.run_match(op, args[2], io)
    }

    fn cmd_multi_match(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        if args.len() <= 3 {
            return Self::malformed(io);
        }
        let Some(op) = MatchOp::from_name(args[1]) else {
            return writeln!(io.stderr, "ERROR: unknown subcmd {}", args[1]);
        };
        for file in &args[2..] {
            self.run_match(op, file, io)?;
        }
        Ok(())
    }

    /// Reads `file` into a buffer kept between commands and answers its length; `None` when it
    /// cannot be opened or read. Plain reads: `fs::read_to_string` first asks for the file's
    /// size, and with one-core matches each system call is a few percent of a match.
    fn read_file(&mut self, file: &str) -> Option<usize> {
        use std::io::Read;
        let mut f = std::fs::File::open(self.resolve(file)).ok()?;
        let mut len = 0;
        loop {
            if len == self.read_buf.len() {
                self.read_buf.resize((2 * len).max(4096), 0);
            }
            match f.read(&mut self.read_buf[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        Some(len)
    }

    fn run_match(&mut self, op: MatchOp, file: &str, io: &mut Outputs<'_>) -> io::Result<()> {
        let read = self.read_file(file);
        let Some(Ok(text)) = read.map(|len| std::str::from_utf8(&self.read_buf[..len])) else {
            return writeln!(io.stderr, "ERROR: can't open {file}");
        };
        let jobid = self.next_jobid;
        let start = Instant::now();
        let (text, parsed) = match self.last_jobspec.take() {
            Some((t, jobspec)) if t == text => (t, Ok(jobspec)),
            _ => (
                text.to_owned(),
                Jobspec::parse(text, Path::new(file), self.matcher.graph().types()),
            ),
        };
        let result = match &parsed {
            Err(e) => {
                // resource-query's line, then where in the file (which it does not say).
                writeln!(
                    io.stderr,
                    "match_allocate: ERROR: Jobspec error for {jobid}: {}\n  at {}",
                    e.message(),
                    e.place()
                )?;
                Err(MatchFailure::Invalid)
            }
            Ok(jobspec) => {
                let result = self.matcher.run(jobspec, op, jobid, self.writer.as_mut());
                let message = self.matcher.take_error_message();
                if result.is_err() && !message.is_empty() {
                    writeln!(io.stderr, "match_allocate: ERROR: {message}")?;
                } else if result == Err(MatchFailure::Invalid) {
                    writeln!(
                        io.stderr,
                        "match_allocate: ERROR: traverser: Invalid argument"
                    )?;
                }
                let consumed = !matches!(result, Err(MatchFailure::Invalid));
                if op.allocates() && consumed {
                    self.next_jobid += 1;
                }
                result
            }
        };
        if let Ok(jobspec) = parsed {
            self.last_jobspec = Some((text, jobspec));
        }
        let elapse = start.elapsed().as_secs_f64();
        self.writer.write_into(io.out)?;
        if op == MatchOp::Satisfiability {
            return self.print_satisfiability(result.is_ok(), elapse, io);
        }
        match result {
            Ok(at) => self.print_scheduled(jobid, file, op.allocates(), at, elapse, io)?,
            Err(failure) => {
                self.print_unmatched(jobid, failure == MatchFailure::Unsatisfiable, elapse, io)?
            }
        }
        Ok(())
    }

    /// `print_schedule_info` for a job that matched: its block, and (when `allocated`) its
    /// entry in the job table, named by `file`.
    pub(crate) fn print_scheduled(
        &mut self,
        jobid: u64,
        file: &str,
        allocated: bool,
        at: i64,
        elapse: f64,
        io: &mut Outputs<'_>,
    ) -> io::Result<()> {
        let mode = if !allocated {
            "MATCHED"
        } else if at == 0 {
            "ALLOCATED"
        } else {
            "RESERVED"
        };
        let when = if at == 0 {
            "Now".to_owned()
        } else {
            at.to_string()
        };
        writeln!(io.out, "INFO: =============================")?;
        writeln!(io.out, "INFO: JOBID={jobid}")?;
        writeln!(io.out, "INFO: RESOURCES={mode}")?;
        writeln!(io.out, "INFO: SCHEDULED AT={when}")?;
        self.print_visits(elapse, io.stdout)?;
        writeln!(io.out, "INFO: =============================")?;
        if allocated {
            let state = if at == 0 {
                JobState::Allocated
            } else {
                JobState::Reserved
            };
            self.jobs.insert(
                jobid,
                JobInfo {
                    state,
                    at,
                    jobspec: file.to_owned(),
                    overhead: elapse,
                },
            );
        }
        Ok(())
    }

    /// `print_schedule_info` for a job that did not match.
    pub(crate) fn print_unmatched(
        &self,
        jobid: u64,
        unsatisfiable: bool,
        elapse: f64,
        io: &mut Outputs<'_>,
    ) -> io::Result<()> {
        writeln!(io.out, "INFO: =============================")?;
        writeln!(io.out, "INFO: No matching resources found")?;
        if unsatisfiable {
            writeln!(io.out, "INFO: Unsatisfiable request")?;
        }
        writeln!(io.out, "INFO: JOBID={jobid}")?;
        if self.elapse {
            // resource-query writes this one line of a failed match to the -t file.
            writeln!(io.out, "INFO: ELAPSE={elapse:.6}")?;
            let (pre, post) = self.matcher.visit_counts();
            writeln!(io.stdout, "INFO: PREORDER VISIT COUNT={pre}")?;
            writeln!(io.stdout, "INFO: POSTORDER VISIT COUNT={post}")?;
        }
        writeln!(io.out, "INFO: =============================")
    }

    fn print_visits(&self, elapse: f64, stdout: &mut dyn Write) -> io::Result<()> {
        if self.elapse {
            let (pre, post) = self.matcher.visit_counts();
            writeln!(stdout, "INFO: ELAPSE={elapse:.6}")?;
            writeln!(stdout, "INFO: PREORDER VISIT COUNT={pre}")?;
            writeln!(stdout, "INFO: POSTORDER VISIT COUNT={post}")?;
        }
        Ok(())
    }

    fn print_satisfiability(&self, sat: bool, elapse: f64, io: &mut Outputs<'_>) -> io::Result<()> {
        let word = if sat { "Satisfiable" } else { "Unsatisfiable" };
        writeln!(io.out, "INFO: =============================")?;
        writeln!(io.out, "INFO: {word} request")?;
        writeln!(io.out, "INFO: =============================")?;
        if self.elapse {
            let (pre, post) = self.matcher.visit_counts();
            writeln!(io.stdout, "INFO: ELAPSE={elapse:.6}")?;
            writeln!(io.stdout, "INFO: PREORDER VISIT COUNT={pre}")?;
            writeln!(io.stdout, "INFO: POSTORDER VISIT COUNT={post}")?;
        }
        Ok(())
    }

    fn cmd_find(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        if args.len() < 2 {
            return writeln!(io.stderr, "ERROR: malformed command: ");
        }
        let criteria = args[1..].join(" ");
        let mut writer = self.format.writer();
        // resource-query prints nothing at all for an expression it cannot parse.
        if self.matcher.find(&criteria, writer.as_mut()).is_err() {
            return Ok(());
        }
        io.out.write_all(writer.take().as_bytes())?;
        writeln!(io.out, "INFO: =============================")?;
        writeln!(io.out, "INFO: EXPRESSION=\"{criteria}\"")?;
        writeln!(io.out, "INFO: =============================")
    }

    fn cmd_cancel(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        if !(2..=3).contains(&args.len()) {
            return Self::malformed(io);
        }
        let jobid = parse_leading_int(args[1]);
        let active = self
            .jobs
            .get(&jobid)
            .is_some_and(|j| j.state != JobState::Canceled);
        if !active || !self.matcher.cancel(jobid) {
            return writeln!(io.stderr, "cancel: ERROR: nonexistent job {jobid}");
        }
        if let Some(job) = self.jobs.get_mut(&jobid) {
            job.state = JobState::Canceled;
        }
        if args.get(2) == Some(&"stats") {
            let (pre, post) = self.matcher.visit_counts();
            writeln!(io.out, "INFO: =============================")?;
            writeln!(io.out, "INFO: CANCEL PREORDER COUNT=\"{pre}\"")?;
            writeln!(io.out, "INFO: CANCEL POSTORDER COUNT=\"{post}\"")?;
            writeln!(io.out, "INFO: =============================")?;
        }
        Ok(())
    }

    fn print_job(jobid: u64, job: &JobInfo, out: &mut dyn Write) -> io::Result<()> {
        let state = match job.state {
            JobState::Allocated => "ALLOCATED",
            JobState::Reserved => "RESERVED",
            JobState::Canceled => "CANCELED",
        };
        writeln!(
            out,
            "INFO: {jobid}, {state}, {}, {}, {}",
            job.at,
            job.jobspec,
            format_double(job.overhead)
        )
    }

    fn cmd_info(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        if args.len() != 2 {
            return Self::malformed(io);
        }
        let jobid = parse_leading_int(args[1]);
        match self.jobs.get(&jobid) {
            Some(job) => Self::print_job(jobid, job, io.stdout),
            None => writeln!(io.stderr, "info: ERROR: nonexistent job {jobid}"),
        }
    }

    fn cmd_list(&mut self, io: &mut Outputs<'_>) -> io::Result<()> {
        for (jobid, job) in &self.jobs {
            Self::print_job(*jobid, job, io.stdout)?;
        }
        Ok(())
    }

    fn cmd_stat(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        if args.len() != 1 {
            return Self::malformed(io);
        }
        let (min, max, sum) = self.matched_time;
        let n = self.jobs.len();
        let (avg, min) = if n > 0 {
            (sum / n as f64, min)
        } else {
            (0.0, 0.0)
        };
        writeln!(io.stdout, "INFO: Num. of Jobs Matched: {n}")?;
        writeln!(io.stdout, "INFO: Min. Match Time: {}", format_double(min))?;
        writeln!(io.stdout, "INFO: Max. Match Time: {}", format_double(max))?;
        writeln!(io.stdout, "INFO: Avg. Match Time: {}", format_double(avg))
    }

    fn cmd_cat(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        let Some(file) = args.get(1) else {
            return Self::malformed(io);
        };
        if let Ok(text) = std::fs::read_to_string(self.resolve(file)) {
            for line in text.lines() {
                writeln!(io.stdout, "{line}")?;
            }
        }
        writeln!(io.stdout, "INFO: Jobspec in {file}")
    }

    fn cmd_set_property(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        if args.len() != 3 {
            return Self::malformed(io);
        }
        let pair = args[2];
        let Some(pos) = pair.find('=').filter(|&p| p != 0 && p != pair.len() - 1) else {
            writeln!(io.out, "Incorrect input format. ")?;
            return writeln!(
                io.out,
                "Please use `set-property <resource> PROPERTY=VALUE`."
            );
        };
        match self.matcher.vertex_by_path(args[1]) {
            None => writeln!(io.out, "Couldn't find path {} in resource graph.", args[1]),
            Some(v) => {
                self.matcher.set_property(v, &pair[..pos], &pair[pos + 1..]);
                Ok(())
            }
        }
    }

    fn cmd_get_property(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        if args.len() != 2 {
            return Self::malformed(io);
        }
        let Some(v) = self.matcher.vertex_by_path(args[1]) else {
            return writeln!(io.out, "Could not find path {} in resource graph.", args[1]);
        };
        match self.matcher.properties(v) {
            None => writeln!(
                io.out,
                "No properties were found for {} (vtx's uniq_id={v}).",
                args[1]
            ),
            Some(props) => {
                for (k, value) in props {
                    writeln!(io.out, "{k}={value}")?;
                }
                Ok(())
            }
        }
    }

    fn cmd_set_status(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        if args.len() != 3 {
            return Self::malformed(io);
        }
        let Some(v) = self.matcher.vertex_by_path(args[1]) else {
            return writeln!(io.out, "Could not find path {} in resource graph.", args[1]);
        };
        match args[2] {
            "up" => self.matcher.set_status(v, true),
            "down" => self.matcher.set_status(v, false),
            _ => return writeln!(io.stderr, "ERROR: unrecognized status"),
        }
        Ok(())
    }

    fn cmd_get_status(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        if args.len() != 2 {
            return Self::malformed(io);
        }
        let Some(v) = self.matcher.vertex_by_path(args[1]) else {
            return writeln!(io.out, "Could not find path {} in resource graph.", args[1]);
        };
        let status = if self.matcher.is_up(v) { "up" } else { "down" };
        writeln!(io.out, "{} is {status}", args[1])
    }

    fn cmd_help(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        let wanted = if args.len() == 2 { Some(args[1]) } else { None };
        let mut found = false;
        for (name, abbr, note) in COMMANDS {
            if wanted.is_none_or(|w| w == name || w == abbr) {
                writeln!(io.stdout, "INFO: {name} ({abbr}) -- {note}")?;
                found = true;
            }
        }
        if let (Some(w), false) = (wanted, found) {
            writeln!(io.stdout, "ERROR: unknown command: {w}")?;
        }
        Ok(())
    }
}
