//! sbatch's file name patterns (`-o`, `-e`, `-i`), expanded as Slurm's `fname.c` does: `%j`
//! job id, `%A` array job id (the job's own id outside an array), `%a` array task id
//! (4294967294, Slurm's NO_VAL, outside an array), `%x` name, `%u` user, `%N` first node,
//! `%n` node index, `%t` task index, `%s` step (`batch`), `%J` `job.step`, `%%`; a number
//! after `%` zero-pads a numeric field; a backslash anywhere turns expansion off. srun's
//! per-task names ([`expand_for_task`]) are the same patterns with a step's task in them.

use std::path::{Path, PathBuf};

/// Slurm's array task id outside an array (`NO_VAL`).
pub const NO_ARRAY_TASK: u32 = 4_294_967_294;

/// What a pattern may name.
#[derive(Clone, Debug, Default)]
pub struct PatternFields<'a> {
    /// Job id.
    pub job_id: u64,
    /// Array task id, if the job is an array task.
    pub array_task: Option<u32>,
    /// The array's job id (`%A`), if the job is an array task.
    pub array_job: Option<u64>,
    /// Job name.
    pub name: &'a str,
    /// Owner.
    pub user: &'a str,
    /// The node the batch script runs on (empty before it starts).
    pub node: &'a str,
}

/// One task of a step, for srun's `-o/-e/-i` names: `%s` is its step, `%J` `job.step`, `%t`
/// its rank and `%n` its node's index in the step (`%N`, the node, is [`PatternFields::node`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskFields {
    /// The step's id.
    pub step: u32,
    /// The task's rank in the step.
    pub task: u32,
    /// Its node's index among the step's nodes.
    pub node_index: u32,
}

/// The pattern expanded, relative to `dir`.
pub fn expand(pattern: &str, f: &PatternFields<'_>, dir: &Path) -> PathBuf {
    expand_with(pattern, f, None, dir)
}

/// The pattern expanded for one task of a step (srun's per-task names), relative to `dir`.
pub fn expand_for_task(
    pattern: &str,
    f: &PatternFields<'_>,
    task: &TaskFields,
    dir: &Path,
) -> PathBuf {
    expand_with(pattern, f, Some(task), dir)
}

fn expand_with(
    pattern: &str,
    f: &PatternFields<'_>,
    task: Option<&TaskFields>,
    dir: &Path,
) -> PathBuf {
    let text = if pattern.contains('\\') {
        pattern.replace('\\', "")
    } else {
        expand_text(pattern, f, task)
    };
    let p = PathBuf::from(text);
    if p.is_absolute() { p } else { dir.join(p) }
}

/// Expands the fields; without a task, the batch script's (`%s` is `batch`, `%n` and `%t` 0).
fn expand_text(pattern: &str, f: &PatternFields<'_>, task: Option<&TaskFields>) -> String {
    let mut out = String::new();
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '%' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let digits: String = chars[i..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        i += digits.len();
        // Slurm caps the width at 10.
        let width = digits.parse::<usize>().unwrap_or(0).min(10);
        let num = |v: u64| format!("{v:0width$}");
        match chars.get(i) {
            Some('j') => out.push_str(&num(f.job_id)),
            Some('A') => out.push_str(&num(f.array_job.unwrap_or(f.job_id))),
            Some('a') => out.push_str(&num(u64::from(f.array_task.unwrap_or(NO_ARRAY_TASK)))),
            Some('J') => match task {
                Some(t) => out.push_str(&format!("{}.{}", num(f.job_id), t.step)),
                None => out.push_str(&format!("{}.batch", num(f.job_id))),
            },
            Some('s') => match task {
                Some(t) => out.push_str(&num(u64::from(t.step))),
                None => out.push_str("batch"),
            },
            Some('n') => out.push_str(&num(task.map_or(0, |t| u64::from(t.node_index)))),
            Some('t') => out.push_str(&num(task.map_or(0, |t| u64::from(t.task)))),
            Some('x') => out.push_str(f.name),
            Some('u') => out.push_str(f.user),
            Some('N') => out.push_str(f.node),
            Some('%') => out.push('%'),
            Some(_) => {
                out.extend(&chars[start..=i]);
            }
            None => {
                out.extend(&chars[start..]);
                break;
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f() -> PatternFields<'static> {
        PatternFields {
            job_id: 128,
            array_task: None,
            array_job: None,
            name: "train",
            user: "alice",
            node: "gpu01",
        }
    }

    fn x(p: &str) -> String {
        expand(p, &f(), Path::new("/home/alice"))
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn every_field_expands() {
        assert_eq!(x("slurm-%j.out"), "/home/alice/slurm-128.out");
        assert_eq!(x("/tmp/%x-%u-%N.log"), "/tmp/train-alice-gpu01.log");
        assert_eq!(x("/tmp/%A_%a"), "/tmp/128_4294967294");
        assert_eq!(x("/tmp/%J-%s-%n-%t-%%"), "/tmp/128.batch-batch-0-0-%");
    }

    #[test]
    fn array_tasks_name_their_array_and_index() {
        let task = PatternFields {
            job_id: 131,
            array_task: Some(3),
            array_job: Some(128),
            ..f()
        };
        let p = expand("out_%A_%a_%j_%3a.txt", &task, Path::new("/w"));
        assert_eq!(p, Path::new("/w/out_128_3_131_003.txt"));
    }

    #[test]
    fn widths_zero_pad_numbers_only() {
        assert_eq!(x("/o/job%5j"), "/o/job00128");
        assert_eq!(x("/o/job%2j"), "/o/job128");
        assert_eq!(x("/o/%5x"), "/o/train");
    }

    #[test]
    fn a_steps_task_names_its_step_rank_and_node() {
        let t = TaskFields {
            step: 2,
            task: 5,
            node_index: 1,
        };
        let p = |pat: &str| expand_for_task(pat, &f(), &t, Path::new("/w"));
        assert_eq!(p("out-%t.txt"), Path::new("/w/out-5.txt"));
        assert_eq!(
            p("/o/%J-%s-%n-%N-%3t-%%"),
            Path::new("/o/128.2-2-1-gpu01-005-%")
        );
        assert_eq!(p("/o/\\%t"), Path::new("/o/%t"));
    }

    #[test]
    fn backslashes_turn_expansion_off_and_unknowns_stay() {
        assert_eq!(x("/o/\\%j"), "/o/%j");
        assert_eq!(x("/o/%q%"), "/o/%q%");
    }
}
