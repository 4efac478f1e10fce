//! Job arrays as users name and see them: `123`, `123_4` and `123_[4-6]` in scancel and
//! scontrol, and squeue's rows, where the pending tasks of one array show as one row
//! (`123_[5-10%3]`) and every other task as `123_4`.

use anyhow::{Context as _, bail};
use sluice_api::Job;
use sluice_engine::array_spec::{ArrayRanges, parse_ranges};
use sluice_engine::show::ranges;

/// A job id as written: one job (or a whole array), or some tasks of an array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobRef {
    /// `123`: the job, or every task of array 123.
    Job(u64),
    /// `123_4`, `123_[4-6]`, `123_[1,3]`: those tasks of array 123 (not expanded, so no
    /// range a user types makes a long list).
    Tasks(u64, ArrayRanges),
}

impl JobRef {
    /// Reads `123`, `123_4` or `123_[4-6,9]`.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let bad = || format!("Invalid job id {text}");
        let Some((job, tasks)) = text.split_once('_') else {
            return Ok(Self::Job(text.parse().with_context(bad)?));
        };
        let job = job.parse().with_context(bad)?;
        let list = tasks
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .unwrap_or(tasks);
        // The indexes have --array's syntax.
        let ranges = parse_ranges(list).ok().with_context(bad)?;
        if ranges.throttle != 0 {
            bail!(bad());
        }
        Ok(Self::Tasks(job, ranges))
    }

    /// The public ids of the jobs this names among `jobs`: every task of an array named by
    /// its `ArrayJobId`, a job by its id.
    pub fn resolve(&self, jobs: &[Job]) -> Vec<u64> {
        match self {
            Self::Job(id) => {
                let tasks: Vec<u64> = jobs
                    .iter()
                    .filter(|j| j.array.is_some_and(|a| a.job_id == *id))
                    .map(|j| j.job_id)
                    .collect();
                if tasks.is_empty() { vec![*id] } else { tasks }
            }
            Self::Tasks(id, wanted) => jobs
                .iter()
                .filter(|j| {
                    j.array
                        .is_some_and(|a| a.job_id == *id && wanted.contains(a.task_id))
                })
                .map(|j| j.job_id)
                .collect(),
        }
    }
}

/// One squeue row: a job, or the pending remainder of an array (its lowest pending task,
/// and the indexes of all of them).
#[derive(Clone, Debug)]
pub struct Row<'a> {
    /// The job (the first pending task, for a remainder).
    pub job: &'a Job,
    /// The pending indexes a remainder row stands for; empty for one job.
    pub pending: Vec<u32>,
}

impl Row<'_> {
    /// squeue's `%i`: `123`, `123_4`, or `123_[5-10%3]` for a remainder.
    pub fn job_id(&self) -> String {
        match self.job.array {
            None => self.job.job_id.to_string(),
            Some(a) if self.pending.is_empty() => format!("{}_{}", a.job_id, a.task_id),
            Some(a) => format!("{}_[{}]", a.job_id, self.task_id()),
        }
    }

    /// squeue's `%F`: the array's job id, or the job's own.
    pub fn array_job_id(&self) -> String {
        self.job
            .array
            .map_or(self.job.job_id, |a| a.job_id)
            .to_string()
    }

    /// squeue's `%K`: the task's index, a remainder's indexes (with `%throttle`), or `N/A`.
    pub fn task_id(&self) -> String {
        match self.job.array {
            None => "N/A".into(),
            Some(a) if self.pending.is_empty() => a.task_id.to_string(),
            Some(a) if a.throttle > 0 => format!("{}%{}", ranges(&self.pending), a.throttle),
            Some(_) => ranges(&self.pending),
        }
    }
}

/// squeue's rows, in the order of `jobs`: each array's pending tasks folded into one row where
/// the first of them stands.
pub fn rows(jobs: &[Job]) -> Vec<Row<'_>> {
    let mut out: Vec<Row<'_>> = Vec::with_capacity(jobs.len());
    let mut remainder_of: std::collections::HashMap<u64, usize> = Default::default();
    for job in jobs {
        match job.array {
            Some(a) if job.st == "PD" => match remainder_of.get(&a.job_id) {
                Some(&i) => out[i].pending.push(a.task_id),
                None => {
                    remainder_of.insert(a.job_id, out.len());
                    out.push(Row {
                        job,
                        pending: vec![a.task_id],
                    });
                }
            },
            _ => out.push(Row {
                job,
                pending: Vec::new(),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::queue::tests::job;
    use sluice_api::ArrayMember;

    fn task(id: u64, task_id: u32, st: &str) -> Job {
        let mut j = job();
        j.job_id = id;
        j.st = st.into();
        j.array = Some(ArrayMember {
            job_id: 100,
            task_id,
            throttle: 3,
        });
        j
    }

    #[test]
    fn ids_name_a_job_an_array_or_some_tasks() {
        assert_eq!(JobRef::parse("123").unwrap(), JobRef::Job(123));
        let tasks = |t: &str| match JobRef::parse(t).unwrap() {
            JobRef::Tasks(123, r) => (0..10).filter(|i| r.contains(*i)).collect::<Vec<u32>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(tasks("123_4"), [4]);
        assert_eq!(tasks("123_[4-6]"), [4, 5, 6]);
        assert_eq!(tasks("123_[1,3]"), [1, 3]);
        assert!(JobRef::parse("123_[0-4000000000]").is_ok(), "not expanded");
        for bad in ["x", "123_", "123_[4-", "123_[1%2]", "_4"] {
            assert!(JobRef::parse(bad).is_err(), "{bad}");
        }
        let jobs = vec![
            task(100, 0, "R"),
            task(101, 1, "PD"),
            task(102, 2, "PD"),
            job(),
        ];
        assert_eq!(JobRef::Job(100).resolve(&jobs), [100, 101, 102]);
        assert_eq!(JobRef::Job(42).resolve(&jobs), [42]);
        assert_eq!(
            JobRef::parse("100_[1-2]").unwrap().resolve(&jobs),
            [101, 102]
        );
        assert!(JobRef::parse("42_0").unwrap().resolve(&jobs).is_empty());
    }

    #[test]
    fn pending_tasks_fold_into_one_row_and_running_ones_stand_alone() {
        let jobs = vec![
            task(100, 0, "R"),
            task(105, 5, "PD"),
            task(106, 6, "PD"),
            task(108, 8, "PD"),
            task(101, 1, "R"),
        ];
        let rows = rows(&jobs);
        let ids: Vec<String> = rows.iter().map(Row::job_id).collect();
        assert_eq!(ids, ["100_0", "100_[5-6,8%3]", "100_1"]);
        assert_eq!(rows[1].array_job_id(), "100");
        assert_eq!(rows[0].task_id(), "0");
        let plain = job();
        let one = super::rows(std::slice::from_ref(&plain));
        assert_eq!(
            (one[0].job_id(), one[0].array_job_id(), one[0].task_id()),
            ("42".into(), "42".into(), "N/A".into())
        );
    }
}
