//! sacct's fields for `sluice acct`: their names and widths (`-o`, `%N`), the `-b` and `-l`
//! lists, and each field's text on a job's or a step's line.

use anyhow::{Context, bail};
use sluice_api::{AcctJob, AcctStep};

use super::super::clock::Zone;

/// sacct's default columns.
pub const DEFAULT_FORMAT: &str = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
/// sacct `-b`'s columns.
pub const BRIEF_FORMAT: &str = "JobID,State,ExitCode";
/// sacct `-l`'s columns that the store has, in sacct's order (its memory, disk, energy and
/// frequency statistics are not measured, so they are left out rather than printed empty).
pub const LONG_FORMAT: &str =
    "JobID,JobIDRaw,JobName,Partition,AllocCPUS,Elapsed,State,ExitCode,ReqTRES,AllocTRES";

/// One output column: a field and its width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Column {
    /// The field.
    pub(super) field: Field,
    /// Its width in fixed columns.
    pub(super) width: usize,
}

/// sacct's fields that the store has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    JobId,
    JobIdRaw,
    JobName,
    User,
    Uid,
    Account,
    Partition,
    Qos,
    State,
    ExitCode,
    Elapsed,
    ElapsedRaw,
    CpuTime,
    CpuTimeRaw,
    ReqTres,
    AllocTres,
    NodeList,
    NNodes,
    NCpus,
    ReqCpus,
    Submit,
    Eligible,
    Start,
    End,
    Timelimit,
    TimelimitRaw,
    WorkDir,
    ArrayJobId,
    ArrayTaskId,
    Reason,
    Restarts,
}

/// Each field: sacct's name (what `-o` takes, case aside, and the header), default width, and
/// whether it is left-aligned.
pub(super) const FIELDS: [(Field, &str, usize, bool); 32] = [
    (Field::JobId, "JobID", 12, true),
    (Field::JobIdRaw, "JobIDRaw", 12, true),
    (Field::JobName, "JobName", 10, false),
    (Field::User, "User", 9, false),
    (Field::Uid, "UID", 6, false),
    (Field::Account, "Account", 10, false),
    (Field::Partition, "Partition", 10, false),
    (Field::Qos, "QOS", 10, false),
    (Field::State, "State", 10, false),
    (Field::ExitCode, "ExitCode", 8, false),
    (Field::Elapsed, "Elapsed", 10, false),
    (Field::ElapsedRaw, "ElapsedRaw", 10, false),
    (Field::CpuTime, "CPUTime", 10, false),
    (Field::CpuTimeRaw, "CPUTimeRAW", 10, false),
    (Field::ReqTres, "ReqTRES", 10, true),
    (Field::AllocTres, "AllocTRES", 10, true),
    (Field::NodeList, "NodeList", 15, false),
    (Field::NNodes, "NNodes", 8, false),
    (Field::NCpus, "NCPUS", 10, false),
    (Field::NCpus, "AllocCPUS", 10, false),
    (Field::ReqCpus, "ReqCPUS", 8, false),
    (Field::Submit, "Submit", 19, false),
    (Field::Eligible, "Eligible", 19, false),
    (Field::Start, "Start", 19, false),
    (Field::End, "End", 19, false),
    (Field::Timelimit, "Timelimit", 10, false),
    (Field::TimelimitRaw, "TimelimitRaw", 12, false),
    (Field::WorkDir, "WorkDir", 10, false),
    (Field::ArrayJobId, "ArrayJobID", 15, false),
    (Field::ArrayTaskId, "ArrayTaskID", 15, false),
    (Field::Reason, "Reason", 20, false),
    (Field::Restarts, "Restarts", 8, false),
];

pub(super) fn spec(field: Field, name_of: Option<&str>) -> (&'static str, usize, bool) {
    let (_, name, width, left) = FIELDS
        .iter()
        .find(|(f, n, _, _)| *f == field && name_of.is_none_or(|x| x.eq_ignore_ascii_case(n)))
        .copied()
        .expect("every field is in the table");
    (name, width, left)
}

/// Reads `-o`: comma-separated field names, each with an optional `%N` width.
pub(super) fn columns(format: &str) -> anyhow::Result<Vec<(Column, &'static str)>> {
    let mut out = Vec::new();
    for item in format.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, width) = match item.split_once('%') {
            Some((n, w)) => {
                let w: usize = w
                    .parse()
                    .ok()
                    .filter(|w| (1..=1024).contains(w))
                    .with_context(|| {
                        format!("--format {item}: '%{w}' is not a width (1 to 1024)")
                    })?;
                (n, Some(w))
            }
            None => (item, None),
        };
        let Some(&(field, header, default, _)) = FIELDS
            .iter()
            .find(|(_, n, _, _)| n.eq_ignore_ascii_case(name))
        else {
            let known: Vec<&str> = FIELDS.iter().map(|(_, n, _, _)| *n).collect();
            bail!(
                "--format {item}: no field '{name}'; sluice acct knows {}",
                known.join(", ")
            );
        };
        out.push((
            Column {
                field,
                width: width.unwrap_or(default),
            },
            header,
        ));
    }
    if out.is_empty() {
        bail!("--format is empty; name at least one field (sacct --helpformat lists them)");
    }
    Ok(out)
}

/// A line of output: a job, or one of its steps.
#[derive(Clone, Copy)]
pub(super) enum Line<'a> {
    Job(&'a AcctJob),
    Step(&'a AcctJob, &'a AcctStep),
}

/// `[D-]HH:MM:SS`, as sacct prints durations.
pub fn elapsed(secs: i64) -> String {
    let secs = secs.max(0);
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

/// The text of `field` on `line`.
pub(super) fn value(field: Field, line: Line, zone: Zone) -> String {
    let time = |t: Option<i64>| t.map_or("Unknown".to_string(), |t| zone.iso(t));
    let (job, step) = match line {
        Line::Job(j) => (j, None),
        Line::Step(j, s) => (j, Some(s)),
    };
    let run = |j: &AcctJob| match step {
        Some(s) => (s.end - s.start).max(0),
        None => j.elapsed,
    };
    match field {
        Field::JobId | Field::JobIdRaw => match step {
            Some(s) => format!("{}.{}", job.job_id, s.step_id),
            None => match (field, job.array_job_id, job.array_task_id) {
                (Field::JobId, Some(a), Some(t)) => format!("{a}_{t}"),
                _ => job.job_id.to_string(),
            },
        },
        Field::JobName => step.map_or(job.name.clone(), |s| s.name.clone()),
        Field::User => step.map_or(job.user.clone(), |_| String::new()),
        Field::Uid => step.map_or(job.uid.to_string(), |_| String::new()),
        Field::Account => job.account.clone(),
        Field::Partition => step.map_or(job.partition.clone(), |_| String::new()),
        Field::Qos => step.map_or(job.qos.clone(), |_| String::new()),
        Field::State => step.map_or(job.state.clone(), |s| s.state.clone()),
        Field::ExitCode => match step {
            Some(s) => format!("{}:0", s.exit_code),
            None => format!("{}:{}", job.exit_code, job.signal),
        },
        Field::Elapsed => elapsed(run(job)),
        Field::ElapsedRaw => run(job).to_string(),
        Field::CpuTime => elapsed(run(job) * job.ncpus as i64),
        Field::CpuTimeRaw => (run(job) * job.ncpus as i64).to_string(),
        Field::ReqTres => step.map_or(job.req_tres.clone(), |_| String::new()),
        Field::AllocTres => job.alloc_tres.clone(),
        Field::NodeList => {
            if job.nodes.is_empty() {
                "None assigned".into()
            } else {
                job.nodes.clone()
            }
        }
        Field::NNodes => job.nnodes.to_string(),
        Field::NCpus => job.ncpus.to_string(),
        Field::ReqCpus => cpu_of(&job.req_tres).to_string(),
        Field::Submit => step.map_or(time(Some(job.submit)), |s| time(Some(s.start))),
        Field::Eligible => step.map_or(time(Some(job.eligible)), |s| time(Some(s.start))),
        Field::Start => step.map_or(time(job.start), |s| time(Some(s.start))),
        Field::End => step.map_or(time(Some(job.end)), |s| time(Some(s.end))),
        Field::Timelimit if step.is_some() => String::new(),
        Field::Timelimit => job.time_limit.map_or("Partition_Limit".into(), |t| {
            elapsed(t.div_ceil(60) as i64 * 60)
        }),
        Field::TimelimitRaw if step.is_some() => String::new(),
        Field::TimelimitRaw => job
            .time_limit
            .map_or("Partition_Limit".into(), |t| t.div_ceil(60).to_string()),
        Field::WorkDir => step.map_or(job.work_dir.clone(), |_| String::new()),
        Field::ArrayJobId => job.array_job_id.map_or(String::new(), |a| a.to_string()),
        Field::ArrayTaskId => job.array_task_id.map_or(String::new(), |t| t.to_string()),
        Field::Reason => step.map_or(job.reason.clone().unwrap_or("None".into()), |_| {
            String::new()
        }),
        Field::Restarts => step.map_or(job.restarts.to_string(), |_| String::new()),
    }
}

/// The `cpu=` count of a TRES string.
fn cpu_of(tres: &str) -> u64 {
    tres.split(',')
        .find_map(|p| p.strip_prefix("cpu="))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_days_then_hours_minutes_seconds() {
        assert_eq!(elapsed(59), "00:00:59");
        assert_eq!(elapsed(90_061), "1-01:01:01");
    }

    #[test]
    fn bad_formats_name_the_field_and_the_choices() {
        let e = columns("JobID,Nope").unwrap_err().to_string();
        assert!(
            e.contains("no field 'Nope'") && e.contains("CPUTime"),
            "{e}"
        );
        assert!(columns("JobID%0").is_err());
        assert!(columns("").is_err());
    }

    #[test]
    fn the_long_list_is_sacct_s_fields_the_store_has() {
        let names: Vec<&str> = columns(LONG_FORMAT)
            .unwrap()
            .into_iter()
            .map(|(_, name)| name)
            .collect();
        assert_eq!(names.len(), 10);
        assert_eq!((names[0], names[9]), ("JobID", "AllocTRES"));
    }
}
