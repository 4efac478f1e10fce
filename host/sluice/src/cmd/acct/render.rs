//! `sluice acct`'s output: fixed columns cut as sacct cuts them, or delimited fields (`-p`,
//! `-P`, `--delimiter`); and `-T`'s truncation of times to the window asked for.

use sluice_api::AcctJob;

use super::super::clock::Zone;
use super::fields::{Column, Line, spec, value};

/// How rows are laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Style {
    /// Fixed-width columns with a dashed line under the header, as sacct's default.
    Fixed,
    /// Fields separated by the delimiter (`-P`), or ended by it (`-p`).
    Parsable {
        /// `-p`: a delimiter after the last field too.
        trailing: bool,
        /// `--delimiter`, `|` by default.
        delimiter: String,
    },
}

/// `text` fitted to `width` as sacct fits it: padded, or cut with a `+` in the last place.
fn fit(text: &str, width: usize, left: bool) -> String {
    let n = text.chars().count();
    if n > width {
        let cut: String = text.chars().take(width.saturating_sub(1)).collect();
        return format!("{cut}+");
    }
    if left {
        format!("{text:<width$}")
    } else {
        format!("{text:>width$}")
    }
}

/// The whole output: a header unless `header` is false, each job, and its steps if `steps`.
pub(super) fn render(
    jobs: &[AcctJob],
    columns: &[(Column, &'static str)],
    style: &Style,
    header: bool,
    steps: bool,
    zone: Zone,
) -> String {
    let mut out = String::new();
    let row = |cells: Vec<String>, out: &mut String| {
        match style {
            Style::Fixed => {
                for c in cells {
                    out.push_str(&c);
                    out.push(' ');
                }
            }
            Style::Parsable {
                trailing,
                delimiter,
            } => {
                out.push_str(&cells.join(delimiter));
                if *trailing {
                    out.push_str(delimiter);
                }
            }
        }
        out.push('\n');
    };
    let cells = |f: &dyn Fn(&Column, &'static str, bool) -> String| {
        columns
            .iter()
            .map(|(c, name)| {
                let (_, _, left) = spec(c.field, Some(name));
                f(c, name, left)
            })
            .collect::<Vec<_>>()
    };
    if header {
        match style {
            Style::Fixed => {
                row(cells(&|c, name, left| fit(name, c.width, left)), &mut out);
                row(cells(&|c, _, _| "-".repeat(c.width)), &mut out);
            }
            Style::Parsable { .. } => row(cells(&|_, name, _| name.to_string()), &mut out),
        }
    }
    for job in jobs {
        let mut lines = vec![Line::Job(job)];
        if steps {
            lines.extend(job.steps.iter().map(|s| Line::Step(job, s)));
        }
        for line in lines {
            let text = cells(&|c, _, left| {
                let v = value(c.field, line, zone);
                match style {
                    Style::Fixed => fit(&v, c.width, left),
                    Style::Parsable { .. } => v,
                }
            });
            row(text, &mut out);
        }
    }
    out
}

/// `-T`: starts before `start` become `start`, ends after `end` become `end`, and elapsed and
/// CPU time are counted within the window, as sacct truncates (a run wholly outside it counts 0).
pub(super) fn truncate(jobs: &mut [AcctJob], start: Option<i64>, end: i64) {
    let from = |t: i64| start.map_or(t, |s| t.max(s));
    for job in jobs {
        job.start = job.start.map(from);
        job.end = job.end.min(end);
        job.elapsed = job.start.map_or(0, |s| (job.end - s).max(0));
        job.cpu_time = job.elapsed * job.ncpus as i64;
        for step in &mut job.steps {
            step.start = from(step.start);
            step.end = step.end.min(end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fields::{DEFAULT_FORMAT, columns};
    use super::*;
    use sluice_api::AcctStep;

    fn job() -> AcctJob {
        AcctJob {
            job_id: 12,
            name: "a-rather-long-name".into(),
            user: "ann".into(),
            account: "phys".into(),
            partition: "batch".into(),
            state: "CANCELLED".into(),
            exit_code: 0,
            signal: 15,
            submit: 1_795_678_000,
            eligible: 1_795_678_000,
            start: Some(1_795_678_100),
            end: 1_795_768_161,
            elapsed: 90_061,
            ncpus: 4,
            nnodes: 1,
            nodes: "n1".into(),
            req_tres: "cpu=4,node=1".into(),
            time_limit: Some(3570),
            steps: vec![AcctStep {
                step_id: 0,
                name: "srun".into(),
                state: "FAILED".into(),
                exit_code: 2,
                start: 1_795_678_110,
                end: 1_795_678_170,
            }],
            ..AcctJob::default()
        }
    }

    fn parsable(trailing: bool, delimiter: &str) -> Style {
        Style::Parsable {
            trailing,
            delimiter: delimiter.into(),
        }
    }

    #[test]
    fn the_default_columns_are_sacct_s_with_steps_below_their_job() {
        let cols = columns(DEFAULT_FORMAT).unwrap();
        let text = render(&[job()], &cols, &Style::Fixed, true, true, Zone::Utc);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode "
        );
        assert_eq!(
            lines[1],
            "------------ ---------- ---------- ---------- ---------- ---------- -------- "
        );
        assert_eq!(
            lines[2],
            "12           a-rather-+      batch       phys          4  CANCELLED     0:15 "
        );
        assert_eq!(
            lines[3],
            "12.0               srun                  phys          4     FAILED      2:0 "
        );
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn parsable_output_has_no_widths_and_x_drops_steps() {
        let cols = columns("jobid,elapsed,cputime,start,timelimit,state%3").unwrap();
        let text = render(
            &[job()],
            &cols,
            &parsable(false, "|"),
            true,
            false,
            Zone::Utc,
        );
        assert_eq!(
            text,
            "JobID|Elapsed|CPUTime|Start|Timelimit|State\n\
             12|1-01:01:01|4-04:04:04|2026-11-26T07:28:20|01:00:00|CANCELLED\n"
        );
        let text = render(
            &[job()],
            &cols,
            &parsable(true, "|"),
            false,
            false,
            Zone::Utc,
        );
        assert!(text.ends_with("|CANCELLED|\n"), "{text}");
        let text = render(&[job()], &cols, &Style::Fixed, false, false, Zone::Utc);
        assert!(text.ends_with(" CA+ \n"), "{text}");
    }

    #[test]
    fn a_delimiter_replaces_the_bar_in_both_parsable_forms() {
        let cols = columns("JobID,State").unwrap();
        let text = render(
            &[job()],
            &cols,
            &parsable(false, ";;"),
            true,
            true,
            Zone::Utc,
        );
        assert_eq!(text, "JobID;;State\n12;;CANCELLED\n12.0;;FAILED\n");
        let text = render(
            &[job()],
            &cols,
            &parsable(true, ","),
            false,
            false,
            Zone::Utc,
        );
        assert_eq!(text, "12,CANCELLED,\n");
    }

    #[test]
    fn truncation_keeps_times_and_usage_inside_the_window() {
        let mut jobs = vec![job()];
        let (s, e) = (1_795_678_150, 1_795_678_250);
        truncate(&mut jobs, Some(s), e);
        let j = &jobs[0];
        assert_eq!(
            (j.start, j.end, j.elapsed, j.cpu_time),
            (Some(s), e, 100, 400)
        );
        assert_eq!((j.steps[0].start, j.steps[0].end), (s, 1_795_678_170));
        // No -S: starts stay; a run that never started counts nothing.
        let mut jobs = vec![AcctJob {
            start: None,
            ..job()
        }];
        truncate(&mut jobs, None, e);
        assert_eq!((jobs[0].elapsed, jobs[0].cpu_time), (0, 0));
    }
}
