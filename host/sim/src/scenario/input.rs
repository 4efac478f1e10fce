//! Scenario workloads: JSON lines of jobs (the JSON-lines job format) and timed actions.
//!
//! An action line has `at` (seconds since the replay's start) and `action`:
//! `{"at": 30, "action": "register", "nodes": "node[1-2]"}`,
//! `{"at": 40, "action": "update", "nodes": "node1", "state": "POWER_DOWN", "reason": "…"}`
//! (any `State=` that `scontrol update NodeName=` takes here), `{"at": 50, "action": "cancel",
//! "job": 3}` (the job's `id`). Every other line is a job.

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;

use crate::error::ReadError;
use crate::input;
use crate::job::{Time, WorkloadJob};
use crate::jsonl::JsonLinesReader;
use crate::workload::Workload;

/// What a timed action does.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "action", rename_all = "lowercase", deny_unknown_fields)]
pub enum ActionKind {
    /// The nodes' agents register (slurmd at boot).
    Register {
        /// A hostlist.
        nodes: String,
    },
    /// `scontrol update NodeName=NODES State=STATE [Reason=…]`.
    Update {
        /// A hostlist.
        nodes: String,
        /// `POWER_UP`, `POWER_DOWN`, `POWER_DOWN_ASAP`, `POWER_DOWN_FORCE`, `RESUME`, `DOWN`…
        state: String,
        /// `Reason=`.
        #[serde(default)]
        reason: Option<String>,
    },
    /// `scancel` of the job with this trace `id`.
    Cancel {
        /// The job's `id` in the workload.
        job: u64,
    },
}

/// One timed action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    /// Seconds since the replay's start.
    pub at: Time,
    /// What it does.
    pub kind: ActionKind,
    /// Its line in the workload file, for messages.
    pub line: u64,
}

/// A scenario: jobs in submit order and actions in time order (file order among equal times).
#[derive(Debug, Clone, Default)]
pub struct Scenario {
    /// Jobs.
    pub jobs: Vec<WorkloadJob>,
    /// Actions.
    pub actions: Vec<Action>,
}

impl Scenario {
    /// Reads a plain or gzipped JSON-lines scenario; any other trace [`Workload::open`] reads
    /// (SWF) gives its jobs and no actions.
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        match Workload::open(path)? {
            Workload::JsonLines(_) => Self::read(input::open(path)?, &path.display().to_string()),
            swf => Ok(Scenario {
                jobs: swf.collect::<Result<_, _>>()?,
                actions: Vec::new(),
            }),
        }
    }

    /// Reads a scenario from `input`; `file` names it in messages.
    pub fn read(mut input: impl BufRead, file: &str) -> Result<Self, ReadError> {
        let mut jobs = JsonLinesReader::new(std::io::empty(), file);
        let mut out = Scenario::default();
        let mut line = String::new();
        let mut line_no = 0u64;
        loop {
            line.clear();
            let read = input.read_line(&mut line).map_err(|source| ReadError::Io {
                file: file.to_string(),
                source,
            })?;
            if read == 0 {
                break;
            }
            line_no += 1;
            let text = line.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            if is_action(text) {
                out.actions.push(parse_action(text, file, line_no)?);
            } else {
                out.jobs.push(jobs.parse_job(text, line_no)?);
            }
        }
        out.actions.sort_by_key(|a| a.at);
        Ok(out)
    }
}

/// Whether a line is an action (an object with an `action` key).
fn is_action(text: &str) -> bool {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text)
        .is_ok_and(|map| map.contains_key("action"))
}

fn parse_action(text: &str, file: &str, line: u64) -> Result<Action, ReadError> {
    let json = |message: String| ReadError::Json {
        file: file.to_string(),
        line,
        message,
    };
    let mut map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text).map_err(|e| json(e.to_string()))?;
    let at = map
        .remove("at")
        .ok_or_else(|| json("an action needs `at` (seconds since the start)".into()))?;
    let at = at
        .as_i64()
        .filter(|t| *t >= 0)
        .ok_or_else(|| ReadError::Field {
            file: file.to_string(),
            line,
            field: "at".into(),
            expected: "a non-negative number of seconds",
            found: at.to_string(),
        })?;
    let kind: ActionKind = serde_json::from_value(serde_json::Value::Object(map)).map_err(|e| {
        json(format!(
            "{e} (expected an action register, update or cancel with its keys)"
        ))
    })?;
    Ok(Action { at, kind, line })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_and_actions_are_told_apart_and_actions_sorted() {
        let text = r#"{"id": 1, "submit": 5, "run_time": 5, "batch": false, "requeue": false}
{"at": 40, "action": "update", "nodes": "node1", "state": "POWER_DOWN"}
{"at": 30, "action": "register", "nodes": "node[1-2]"}
{"at": 50, "action": "cancel", "job": 1}
"#;
        let s = Scenario::read(text.as_bytes(), "w.jsonl").unwrap();
        assert_eq!(s.jobs.len(), 1);
        let slurm = s.jobs[0].slurm.as_ref().unwrap();
        assert!(slurm.interactive);
        assert_eq!(slurm.requeue, Some(false));
        let ats: Vec<Time> = s.actions.iter().map(|a| a.at).collect();
        assert_eq!(ats, [30, 40, 50]);
        assert_eq!(
            s.actions[0].kind,
            ActionKind::Register {
                nodes: "node[1-2]".into()
            }
        );
    }

    #[test]
    fn bad_actions_name_file_and_line() {
        let err = Scenario::read(
            r#"{"at": 1, "action": "reboot", "nodes": "n1"}"#.as_bytes(),
            "w.jsonl",
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("w.jsonl:1:"), "{err}");
        let err = Scenario::read(
            "\n{\"action\": \"cancel\", \"job\": 1}".as_bytes(),
            "w.jsonl",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("w.jsonl:2:") && err.contains("`at`"),
            "{err}"
        );
        let err = Scenario::read(
            r#"{"at": 1, "action": "cancel", "job": 1, "extra": 2}"#.as_bytes(),
            "w.jsonl",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("extra"), "{err}");
    }
}
