//! sbatch's file name patterns (`-o`, `-e`, `-i`), expanded as Slurm's `fname.c` does: `%j`
//! job id, `%A` array job id (the job's own id outside an array), `%a` array task id
//! (4294967294, Slurm's NO_VAL, outside an array), `%x` name, `%u` user, `%N` first node,
//! `%n` node index, `%t` task index, `%s` step (`batch`), `%J` `job.step`, `%%`; a number
//! after `%` zero-pads a numeric field; a backslash anywhere turns expansion off.

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

/// The pattern expanded, relative to `dir`.
pub fn expand(pattern: &str, f: &PatternFields<'_>, dir: &Path) -> PathBuf {
    let text = if pattern.contains('\\') {
        pattern.replace('\\', "")
    } else {
        expand_text(pattern, f)
    };
    let p = PathBuf::from(text);
    if p.is_absolute() { p } else { dir.join(p) }
}

fn expand_text(pattern: &str, f: &PatternFields<'_>) -> String {
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
            Some('J') => out.push_str(&format!("{}.batch", num(f.job_id))),
            Some('s') => out.push_str("batch"),
            Some('n') | Some('t') => out.push_str(&num(0)),
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
    fn backslashes_turn_expansion_off_and_unknowns_stay() {
        assert_eq!(x("/o/\\%j"), "/o/%j");
        assert_eq!(x("/o/%q%"), "/o/%q%");
    }
}
