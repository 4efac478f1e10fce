//! JSON-lines workloads: one Slurm-like job object per line, for what SWF cannot express.
//!
//! Keys (unknown keys are errors): `id`, `submit` and `run_time` (seconds, required); `user`,
//! `account`, `partition`, `qos` (strings); `nodes`, `tasks`, `cpus_per_task` (counts, tasks and
//! CPUs per task default to 1); `gres` and `licenses` (Slurm syntax, e.g. `"gpu:2"` and
//! `"matlab:1,ansys"`); `time_limit` (seconds, or a Slurm time string such as `"1-02:00:00"` or
//! `"90"` minutes); `priority` or `nice` (not both); `dependencies` (Slurm syntax, `,`-separated,
//! e.g. `"afterok:12:13,singleton"`); `batch` (false: an interactive allocation) and `requeue`
//! (booleans, for the engine's node-failure rules). On a flat machine a job occupies tasks × cpus_per_task
//! processors; its requested time is `time_limit`, else its run time.

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;

use crate::error::ReadError;
use crate::input;
use crate::job::{Dependency, SlurmRequest, SwfFields, Time, WorkloadJob};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    id: u64,
    submit: Time,
    run_time: Time,
    user: Option<String>,
    account: Option<String>,
    partition: Option<String>,
    qos: Option<String>,
    nodes: Option<u32>,
    tasks: Option<u32>,
    cpus_per_task: Option<u32>,
    gres: Option<String>,
    licenses: Option<String>,
    time_limit: Option<TimeLimit>,
    priority: Option<u32>,
    nice: Option<i32>,
    dependencies: Option<String>,
    batch: Option<bool>,
    requeue: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum TimeLimit {
    Seconds(i64),
    Slurm(String),
}

/// An iterator over the jobs of a JSON-lines workload, one line in memory at a time.
pub struct JsonLinesReader<R> {
    input: R,
    file: String,
    line_no: u64,
    buffer: String,
    last_submit: Time,
    failed: bool,
}

impl JsonLinesReader<input::InputReader> {
    /// Opens a plain or gzipped JSON-lines file.
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        Ok(JsonLinesReader::new(
            input::open(path)?,
            path.display().to_string(),
        ))
    }
}

impl<R: BufRead> JsonLinesReader<R> {
    /// Reads from `input`; `file` names the source in error messages.
    pub fn new(input: R, file: impl Into<String>) -> Self {
        JsonLinesReader {
            input,
            file: file.into(),
            line_no: 0,
            buffer: String::new(),
            last_submit: Time::MIN,
            failed: false,
        }
    }

    fn next_job(&mut self) -> Result<Option<WorkloadJob>, ReadError> {
        loop {
            self.buffer.clear();
            let read = self
                .input
                .read_line(&mut self.buffer)
                .map_err(|source| ReadError::Io {
                    file: self.file.clone(),
                    source,
                })?;
            if read == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            let text = self.buffer.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let text = std::mem::take(&mut self.buffer);
            let job = self.parse_job(text.trim(), self.line_no);
            self.buffer = text;
            return job.map(Some);
        }
    }

    /// One job line, `line_no` of the file, for readers that interleave jobs with other records.
    pub(crate) fn parse_job(&mut self, text: &str, line_no: u64) -> Result<WorkloadJob, ReadError> {
        self.line_no = line_no;
        let record: Record = serde_json::from_str(text).map_err(|err| ReadError::Json {
            file: self.file.clone(),
            line: self.line_no,
            message: err.to_string(),
        })?;
        self.job_from(record)
    }

    fn job_from(&mut self, r: Record) -> Result<WorkloadJob, ReadError> {
        if r.submit < 0 {
            return Err(self.field("submit", "a non-negative number of seconds", r.submit));
        }
        if r.submit < self.last_submit {
            return Err(ReadError::Unsorted {
                file: self.file.clone(),
                line: self.line_no,
                field: "submit",
                previous: self.last_submit,
                found: r.submit,
            });
        }
        self.last_submit = r.submit;
        if r.run_time < 0 {
            return Err(self.field("run_time", "a non-negative number of seconds", r.run_time));
        }
        let tasks = r.tasks.unwrap_or(1);
        let cpus_per_task = r.cpus_per_task.unwrap_or(1);
        if tasks == 0 {
            return Err(self.field("tasks", "at least 1", 0));
        }
        if cpus_per_task == 0 {
            return Err(self.field("cpus_per_task", "at least 1", 0));
        }
        let procs = tasks.checked_mul(cpus_per_task).ok_or_else(|| {
            self.field(
                "cpus_per_task",
                "tasks × cpus_per_task below 2^32",
                cpus_per_task,
            )
        })?;
        if r.priority.is_some() && r.nice.is_some() {
            return Err(self.field(
                "nice",
                "either priority or nice, not both",
                r.nice.unwrap_or(0),
            ));
        }
        let time_limit = match r.time_limit {
            None => None,
            Some(TimeLimit::Seconds(s)) if s > 0 => Some(s),
            Some(TimeLimit::Seconds(s)) => {
                return Err(self.field("time_limit", "a positive number of seconds", s));
            }
            Some(TimeLimit::Slurm(text)) => Some(parse_slurm_time(&text).ok_or_else(|| {
                self.field(
                    "time_limit",
                    "seconds or a Slurm time ([days-]hours:minutes:seconds, minutes[:seconds])",
                    text,
                )
            })?),
        };
        let dependencies = match r.dependencies {
            None => Vec::new(),
            Some(text) => parse_dependencies(&text).ok_or_else(|| {
                self.field(
                    "dependencies",
                    "`,`-separated after/afterany/afterok/afternotok:ID[:ID…] or singleton",
                    text,
                )
            })?,
        };
        let licenses = match r.licenses {
            None => Vec::new(),
            Some(text) => parse_licenses(&text).ok_or_else(|| {
                self.field("licenses", "`name[:count]` items separated by `,`", text)
            })?,
        };
        let gres = r
            .gres
            .map(|g| g.split(',').map(|s| s.trim().to_string()).collect())
            .unwrap_or_default();
        Ok(WorkloadJob {
            id: r.id,
            submit: r.submit,
            run_time: r.run_time,
            requested_time: time_limit.unwrap_or(r.run_time),
            procs,
            swf: SwfFields::UNKNOWN,
            slurm: Some(Box::new(SlurmRequest {
                user: r.user,
                account: r.account,
                partition: r.partition,
                qos: r.qos,
                nodes: r.nodes,
                tasks,
                cpus_per_task,
                gres,
                licenses,
                priority: r.priority,
                nice: r.nice.unwrap_or(0),
                dependencies,
                interactive: r.batch == Some(false),
                requeue: r.requeue,
            })),
        })
    }

    fn field(&self, field: &str, expected: &'static str, found: impl ToString) -> ReadError {
        ReadError::Field {
            file: self.file.clone(),
            line: self.line_no,
            field: field.to_string(),
            expected,
            found: found.to_string(),
        }
    }
}

impl<R: BufRead> Iterator for JsonLinesReader<R> {
    type Item = Result<WorkloadJob, ReadError>;

    /// Yields the next job; after the first error it yields nothing more.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let result = self.next_job().transpose();
        if matches!(result, Some(Err(_))) {
            self.failed = true;
        }
        result
    }
}

/// Parses Slurm's `--time` forms: `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S`.
fn parse_slurm_time(text: &str) -> Option<Time> {
    let number = |s: &str| -> Option<Time> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
    };
    let (days, clock) = match text.split_once('-') {
        Some((d, rest)) => (number(d)?, Some(rest)),
        None => (0, None),
    };
    let seconds = match clock {
        Some(rest) => {
            let parts: Vec<Time> = rest.split(':').map(number).collect::<Option<_>>()?;
            match parts[..] {
                [h] => h * 3600,
                [h, m] => h * 3600 + m * 60,
                [h, m, s] => h * 3600 + m * 60 + s,
                _ => return None,
            }
        }
        None => {
            let parts: Vec<Time> = text.split(':').map(number).collect::<Option<_>>()?;
            match parts[..] {
                [m] => m * 60,
                [m, s] => m * 60 + s,
                [h, m, s] => h * 3600 + m * 60 + s,
                _ => return None,
            }
        }
    };
    let total = days * 86_400 + seconds;
    (total > 0).then_some(total)
}

fn parse_dependencies(text: &str) -> Option<Vec<Dependency>> {
    let mut out = Vec::new();
    for clause in text.split(',').map(str::trim) {
        if clause == "singleton" {
            out.push(Dependency::Singleton);
            continue;
        }
        let mut parts = clause.split(':');
        let kind: fn(u64) -> Dependency = match parts.next()? {
            "after" => Dependency::After,
            "afterany" => Dependency::AfterAny,
            "afterok" => Dependency::AfterOk,
            "afternotok" => Dependency::AfterNotOk,
            _ => return None,
        };
        let before = out.len();
        for id in parts {
            out.push(kind(id.parse().ok()?));
        }
        if out.len() == before {
            return None;
        }
    }
    Some(out)
}

fn parse_licenses(text: &str) -> Option<Vec<(String, u32)>> {
    text.split(',')
        .map(str::trim)
        .map(|item| match item.split_once(':') {
            Some((name, count)) if !name.is_empty() => {
                Some((name.to_string(), count.parse().ok()?))
            }
            None if !item.is_empty() => Some((item.to_string(), 1)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Result<WorkloadJob, ReadError>> {
        JsonLinesReader::new(text.as_bytes(), "w.jsonl").collect()
    }

    #[test]
    fn a_full_record_maps_to_a_job() {
        let jobs = read(
            r#"{"id": 7, "submit": 10, "run_time": 100, "user": "ann", "account": "phys", "partition": "gpu", "qos": "high", "nodes": 2, "tasks": 4, "cpus_per_task": 8, "gres": "gpu:a100:2", "licenses": "matlab:2,ansys", "time_limit": "1-00:30:00", "nice": 10, "dependencies": "afterok:3:4,singleton"}"#,
        );
        let job = jobs[0].as_ref().unwrap();
        assert_eq!(job.procs, 32);
        assert_eq!(job.requested_time, 86_400 + 1_800);
        let slurm = job.slurm.as_deref().unwrap();
        assert_eq!(
            slurm.licenses,
            [("matlab".to_string(), 2), ("ansys".to_string(), 1)]
        );
        assert_eq!(slurm.gres, ["gpu:a100:2"]);
        assert_eq!(
            slurm.dependencies,
            [
                Dependency::AfterOk(3),
                Dependency::AfterOk(4),
                Dependency::Singleton
            ]
        );
        assert_eq!(slurm.nice, 10);
    }

    #[test]
    fn defaults_fill_in_and_the_run_time_is_the_fallback_limit() {
        let jobs = read("{\"id\": 1, \"submit\": 0, \"run_time\": 30}\n\n# comment\n");
        assert_eq!(jobs.len(), 1);
        let job = jobs[0].as_ref().unwrap();
        assert_eq!((job.procs, job.requested_time), (1, 30));
    }

    #[test]
    fn slurm_time_forms() {
        assert_eq!(parse_slurm_time("90"), Some(5_400));
        assert_eq!(parse_slurm_time("5:30"), Some(330));
        assert_eq!(parse_slurm_time("1:00:00"), Some(3_600));
        assert_eq!(parse_slurm_time("2-3"), Some(2 * 86_400 + 3 * 3_600));
        assert_eq!(parse_slurm_time("1-0:1"), Some(86_460));
        assert_eq!(parse_slurm_time("1:2:3:4"), None);
        assert_eq!(parse_slurm_time("UNLIMITED"), None);
    }

    #[test]
    fn bad_records_name_line_and_field() {
        let unknown = read(
            "{\"id\": 1, \"submit\": 0, \"run_time\": 30}\n{\"id\": 2, \"submit\": 0, \"run_time\": 30, \"gpus\": 1}\n",
        );
        let message = unknown[1].as_ref().unwrap_err().to_string();
        assert!(
            message.starts_with("w.jsonl:2: unknown field `gpus`"),
            "{message}"
        );

        let zero = read("{\"id\": 1, \"submit\": 0, \"run_time\": 30, \"tasks\": 0}");
        let message = zero[0].as_ref().unwrap_err().to_string();
        assert_eq!(
            message,
            "w.jsonl:1: field tasks: expected at least 1, found `0`"
        );

        let both =
            read("{\"id\": 1, \"submit\": 0, \"run_time\": 30, \"priority\": 5, \"nice\": 1}");
        assert!(matches!(both[0], Err(ReadError::Field { ref field, .. }) if field == "nice"));

        let deps = read(
            "{\"id\": 1, \"submit\": 0, \"run_time\": 30, \"dependencies\": \"afterok:1?afterany:2\"}",
        );
        assert!(
            matches!(deps[0], Err(ReadError::Field { ref field, .. }) if field == "dependencies")
        );
    }

    #[test]
    fn reading_stops_after_the_first_error() {
        let jobs = read("not json\n{\"id\": 1, \"submit\": 0, \"run_time\": 30}\n");
        assert_eq!(jobs.len(), 1);
        assert!(matches!(jobs[0], Err(ReadError::Json { line: 1, .. })));
    }

    #[test]
    fn decreasing_submit_times_are_rejected() {
        let jobs = read(
            "{\"id\": 1, \"submit\": 50, \"run_time\": 30}\n{\"id\": 2, \"submit\": 40, \"run_time\": 30}\n",
        );
        assert!(matches!(
            jobs[1],
            Err(ReadError::Unsorted {
                line: 2,
                previous: 50,
                found: 40,
                ..
            })
        ));
    }
}
