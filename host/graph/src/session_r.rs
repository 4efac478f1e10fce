//! The session commands that read an R: `update` (replay an R as a job) and `partial-cancel`
//! (release part of an allocation), with resource-query's checks, messages and output streams
//! (`cmd_update`/`update_run`, `cmd_partial_cancel`/`do_partial_remove` in `command.cpp`).

use std::io;
use std::time::Instant;

use crate::jgf_r::JgfR;
use crate::rv1exec::Rv1Exec;
use crate::session::{JobState, Outputs, Session};
use crate::session_text::{parse_leading_i64, parse_leading_int};
use crate::update::{RDocument, ReplayError};

/// Reads an R with the named reader; `None` for a reader this build does not have. A
/// refusal keeps the reader's own text for the caller to print or drop, as Fluxion does.
fn read_r(reader: &str, text: &str) -> Option<Result<RDocument, String>> {
    Some(match reader {
        "jgf" => JgfR::parse(text)
            .map(RDocument::Jgf)
            .map_err(|e| format!("{e}\n")),
        "rv1exec" => Rv1Exec::parse(text)
            .map(RDocument::Rv1Exec)
            // The rv1exec reader only sets errno.
            .map_err(|_| String::new()),
        _ => return None,
    })
}

impl Session {
    /// `update allocate|reserve jgf|rv1exec <file> <jobid> <starttime> <duration>`.
    pub(crate) fn cmd_update(&mut self, args: &[&str], io: &mut Outputs<'_>) -> io::Result<()> {
        if args.len() != 7 {
            return Self::malformed(io);
        }
        if !matches!(args[1], "allocate" | "reserve") {
            return writeln!(io.stderr, "ERROR: unknown subcmd {}", args[1]);
        }
        match args[2] {
            "jgf" | "rv1exec" => {}
            "jgf_shorthand" => {
                return writeln!(
                    io.stderr,
                    "ERROR: the jgf_shorthand reader is not supported by sluice resource-query"
                );
            }
            other => return writeln!(io.stderr, "ERROR: unsupported reader {other}"),
        }
        let Ok(text) = std::fs::read_to_string(self.resolve(args[3])) else {
            return writeln!(io.stderr, "ERROR: can't open {}", args[3]);
        };
        let jobid = parse_leading_i64(args[4]);
        let Ok(jobid) = u64::try_from(jobid) else {
            return writeln!(io.stderr, "ERROR: invalid jobid {jobid}");
        };
        let active = self
            .jobs
            .get(&jobid)
            .is_some_and(|j| j.state != JobState::Canceled);
        if active {
            return writeln!(io.stderr, "ERROR: existing Jobid ");
        }
        let at = parse_leading_i64(args[5]);
        let duration = parse_leading_i64(args[6]);
        if at < 0 || duration == 0 {
            return writeln!(io.stderr, "ERROR: invalid time ({at}, {})", duration as u64);
        }
        let start = Instant::now();
        let mut writer = self.format.writer();
        let result = match read_r(args[2], &text) {
            Some(Ok(r)) => self
                .matcher
                .update_from_r(&r, jobid, at, duration, writer.as_mut()),
            Some(Err(message)) => Err(ReplayError(message)),
            None => Err(ReplayError(String::new())),
        };
        if let Err(ReplayError(message)) = &result {
            writeln!(io.stderr, "ERROR: traverser run () returned error ")?;
            if !message.is_empty() {
                write!(io.stderr, "ERROR: {message}")?;
            }
        }
        io.out.write_all(writer.take().as_bytes())?;
        let elapse = start.elapsed().as_secs_f64();
        let (min, max, sum) = self.matched_time;
        self.matched_time = (min.min(elapse), max.max(elapse), sum + elapse);
        match result {
            Ok(()) => self.print_scheduled(jobid, args[3], true, at, elapse, io)?,
            Err(_) => self.print_unmatched(jobid, false, elapse, io)?,
        }
        self.next_jobid = jobid + 1;
        Ok(())
    }

    /// `partial-cancel <jobid> jgf|rv1exec <R-file> [stats]`.
    pub(crate) fn cmd_partial_cancel(
        &mut self,
        args: &[&str],
        io: &mut Outputs<'_>,
    ) -> io::Result<()> {
        if !(4..=5).contains(&args.len()) {
            return Self::malformed(io);
        }
        let jobid = parse_leading_int(args[1]);
        if !matches!(args[2], "jgf" | "rv1exec") {
            return writeln!(io.stderr, "ERROR: unsupported reader {}", args[2]);
        }
        let Ok(text) = std::fs::read_to_string(self.resolve(args[3])) else {
            return writeln!(io.stderr, "ERROR: can't open {}", args[3]);
        };
        match self.jobs.get(&jobid).map(|j| j.state) {
            Some(JobState::Allocated) => {}
            Some(JobState::Reserved) => {
                return writeln!(
                    io.stderr,
                    "ERROR: reservations not currently supported by partial cancel"
                );
            }
            _ => return writeln!(io.stderr, "ERROR: nonexistent job {jobid}"),
        }
        let result = match read_r(args[2], &text) {
            Some(Ok(r)) => self.matcher.partial_cancel(jobid, &r),
            // Fluxion passes on only that the reader failed, not why; its walk counts were
            // reset before the reader ran.
            _ => {
                (self.matcher.preorder, self.matcher.postorder) = (0, 0);
                Err(ReplayError(
                    "remove: partial_cancel returned error.\n".into(),
                ))
            }
        };
        match result {
            Ok(full) => {
                if full && let Some(job) = self.jobs.get_mut(&jobid) {
                    job.state = JobState::Canceled;
                }
            }
            Err(ReplayError(message)) => {
                io.stdout.write_all(message.as_bytes())?;
                writeln!(
                    io.stderr,
                    "ERROR: error encountered while removing job {jobid}"
                )?;
            }
        }
        if args.get(4) == Some(&"stats") {
            let (pre, post) = self.matcher.visit_counts();
            writeln!(io.out, "INFO: =============================")?;
            writeln!(io.out, "INFO: PARTIAL CANCEL PREORDER COUNT=\"{pre}\"")?;
            writeln!(io.out, "INFO: PARTIAL CANCEL POSTORDER COUNT=\"{post}\"")?;
            writeln!(io.out, "INFO: =============================")?;
        }
        Ok(())
    }
}
