//! sbatch's file name patterns (`-o`, `-e`, `-i`), expanded as Slurm's `fname.c` does: `%j`
//! job id, `%A` array job id (the job's own id outside an array), `%a` array task id
//! (4294967294, Slurm's NO_VAL, outside an array), `%x` name, `%u` user, `%N` first node,
//! `%n` node index, `%t` task index, `%s` step (`batch`), `%J` `job.step`, `%%`; a number
//! after `%` zero-pads a numeric field; a backslash anywhere turns expansion off. srun's
//! per-task names ([`expand_for_task`]) are the same patterns with a step's task in them.
//! [`longest`] bounds what a pattern can expand to before a job is accepted, and
//! [`expand_within`] stops at a bound, so no pattern makes the daemon build a path past it.

use std::path::{Path, PathBuf};

/// Slurm's array task id outside an array (`NO_VAL`).
pub const NO_ARRAY_TASK: u32 = 4_294_967_294;

/// Slurm's cap on a field's zero-padding width.
const MAX_WIDTH: usize = 10;

/// Digits of the largest job id (a `u64`).
const JOB_ID_DIGITS: usize = 20;

/// Digits of the largest task, step, node index or array task id (a `u32`).
const U32_DIGITS: usize = 10;

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

/// The longest value each text field of a pattern can take, bytes, for [`longest`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FieldBounds {
    /// `%x`: the job's name.
    pub name: usize,
    /// `%u`: the owner's user name.
    pub user: usize,
    /// `%N`: a node's name.
    pub node: usize,
}

/// A pattern whose expansion would pass the bound it was expanded within.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the file name pattern expands past {max} bytes (daemon.toml's max_path_size)")]
pub struct PatternTooLong {
    /// The bound, bytes.
    pub max: usize,
}

/// The pattern expanded, relative to `dir`.
pub fn expand(pattern: &str, f: &PatternFields<'_>, dir: &Path) -> PathBuf {
    unbounded(expand_with(pattern, f, None, dir, usize::MAX))
}

/// The pattern expanded for one task of a step (srun's per-task names), relative to `dir`.
pub fn expand_for_task(
    pattern: &str,
    f: &PatternFields<'_>,
    task: &TaskFields,
    dir: &Path,
) -> PathBuf {
    unbounded(expand_with(pattern, f, Some(task), dir, usize::MAX))
}

/// [`expand`], refused once the path (with `dir`, when relative) would pass `max` bytes: the
/// expansion stops there, whatever the pattern and fields are.
pub fn expand_within(
    pattern: &str,
    f: &PatternFields<'_>,
    dir: &Path,
    max: usize,
) -> Result<PathBuf, PatternTooLong> {
    expand_with(pattern, f, None, dir, max)
}

/// The longest path `pattern` can expand to, bytes, for any job whose text fields are within
/// `bounds`, any ids and any task, relative to a directory of `dir_len` bytes.
pub fn longest(pattern: &str, bounds: &FieldBounds, dir_len: usize) -> usize {
    let text = if pattern.contains('\\') {
        pattern.len() - pattern.matches('\\').count()
    } else {
        pieces(pattern)
            .map(|p| match p {
                Piece::Text(t) => t.len(),
                Piece::Field { field, width } => field.longest(width, bounds),
            })
            .fold(0, usize::saturating_add)
    };
    // Only a pattern that starts at the root is sure to be absolute (`%x` might be, too).
    let relative = if pattern.starts_with('/') {
        0
    } else {
        dir_len + 1
    };
    text.saturating_add(relative)
}

fn unbounded(p: Result<PathBuf, PatternTooLong>) -> PathBuf {
    p.unwrap_or_else(|e| unreachable!("no pattern passes usize::MAX bytes: {e}"))
}

fn expand_with(
    pattern: &str,
    f: &PatternFields<'_>,
    task: Option<&TaskFields>,
    dir: &Path,
    max: usize,
) -> Result<PathBuf, PatternTooLong> {
    let too_long = PatternTooLong { max };
    let text = if pattern.contains('\\') {
        let text = pattern.replace('\\', "");
        if text.len() > max {
            return Err(too_long);
        }
        text
    } else {
        expand_text(pattern, f, task, max).ok_or(too_long)?
    };
    let p = PathBuf::from(text);
    let p = if p.is_absolute() { p } else { dir.join(p) };
    if p.as_os_str().len() > max {
        return Err(too_long);
    }
    Ok(p)
}

/// A pattern's parts: text kept as written, and fields with their zero-padding width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece<'p> {
    Text(&'p str),
    Field { field: Field, width: usize },
}

/// What a `%` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    JobId,
    ArrayJob,
    ArrayTask,
    JobStep,
    Step,
    NodeIndex,
    Task,
    Name,
    User,
    Node,
    Percent,
}

impl Field {
    fn of(c: u8) -> Option<Self> {
        Some(match c {
            b'j' => Self::JobId,
            b'A' => Self::ArrayJob,
            b'a' => Self::ArrayTask,
            b'J' => Self::JobStep,
            b's' => Self::Step,
            b'n' => Self::NodeIndex,
            b't' => Self::Task,
            b'x' => Self::Name,
            b'u' => Self::User,
            b'N' => Self::Node,
            b'%' => Self::Percent,
            _ => return None,
        })
    }

    /// Appends the field's value; without a task, the batch script's (`%s` is `batch`, `%n`
    /// and `%t` 0).
    fn write(
        self,
        width: usize,
        f: &PatternFields<'_>,
        task: Option<&TaskFields>,
        out: &mut String,
    ) {
        let num = |v: u64| format!("{v:0width$}");
        match self {
            Self::JobId => out.push_str(&num(f.job_id)),
            Self::ArrayJob => out.push_str(&num(f.array_job.unwrap_or(f.job_id))),
            Self::ArrayTask => out.push_str(&num(u64::from(f.array_task.unwrap_or(NO_ARRAY_TASK)))),
            Self::JobStep => match task {
                Some(t) => out.push_str(&format!("{}.{}", num(f.job_id), t.step)),
                None => out.push_str(&format!("{}.batch", num(f.job_id))),
            },
            Self::Step => match task {
                Some(t) => out.push_str(&num(u64::from(t.step))),
                None => out.push_str("batch"),
            },
            Self::NodeIndex => out.push_str(&num(task.map_or(0, |t| u64::from(t.node_index)))),
            Self::Task => out.push_str(&num(task.map_or(0, |t| u64::from(t.task)))),
            Self::Name => out.push_str(f.name),
            Self::User => out.push_str(f.user),
            Self::Node => out.push_str(f.node),
            Self::Percent => out.push('%'),
        }
    }

    /// The longest value [`Field::write`] can append for fields within `bounds`.
    fn longest(self, width: usize, bounds: &FieldBounds) -> usize {
        match self {
            Self::JobId | Self::ArrayJob => width.max(JOB_ID_DIGITS),
            Self::ArrayTask | Self::NodeIndex | Self::Task => width.max(U32_DIGITS),
            // `job.step` or `job.batch`.
            Self::JobStep => width.max(JOB_ID_DIGITS) + 1 + U32_DIGITS.max("batch".len()),
            Self::Step => width.max(U32_DIGITS).max("batch".len()),
            Self::Name => bounds.name,
            Self::User => bounds.user,
            Self::Node => bounds.node,
            Self::Percent => 1,
        }
    }
}

/// The pieces of a pattern without backslashes. An unknown `%c` (and a `%` or `%12` at the
/// end) is text, as Slurm leaves it.
fn pieces(pattern: &str) -> impl Iterator<Item = Piece<'_>> {
    let b = pattern.as_bytes();
    let (mut i, mut text_from) = (0, 0);
    let mut field = None;
    std::iter::from_fn(move || {
        if let Some(p) = field.take() {
            return Some(p);
        }
        while i < b.len() {
            if b[i] != b'%' {
                i += 1;
                continue;
            }
            let start = i;
            let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            let at = i + 1 + digits;
            let Some(f) = b.get(at).and_then(|&c| Field::of(c)) else {
                // Text: step over the '%' and its digits (a character after them is scanned
                // as text next, so a multi-byte one is never split).
                i = at;
                continue;
            };
            // An overlong number is no width at all, as `atoi` would wrap; Slurm caps at 10.
            let width = pattern[start + 1..at]
                .parse::<usize>()
                .unwrap_or(0)
                .min(MAX_WIDTH);
            let text = &pattern[text_from..start];
            i = at + 1;
            text_from = i;
            let piece = Piece::Field { field: f, width };
            if text.is_empty() {
                return Some(piece);
            }
            field = Some(piece);
            return Some(Piece::Text(text));
        }
        let text = &pattern[text_from..];
        text_from = b.len();
        (!text.is_empty()).then_some(Piece::Text(text))
    })
}

/// Expands the fields; `None` once the text would pass `max` bytes.
fn expand_text(
    pattern: &str,
    f: &PatternFields<'_>,
    task: Option<&TaskFields>,
    max: usize,
) -> Option<String> {
    let mut out = String::new();
    let mut value = String::new();
    for piece in pieces(pattern) {
        let part = match piece {
            Piece::Text(t) => t,
            Piece::Field { field, width } => {
                value.clear();
                field.write(width, f, task, &mut value);
                &value
            }
        };
        if out.len().saturating_add(part.len()) > max {
            return None;
        }
        out.push_str(part);
    }
    Some(out)
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
        assert_eq!(x("/o/%12"), "/o/%12");
        assert_eq!(x("/o/é%5é%"), "/o/é%5é%");
    }

    /// The largest value every field can take, for the bound to be checked against.
    fn largest() -> (PatternFields<'static>, TaskFields) {
        let f = PatternFields {
            job_id: u64::MAX,
            array_task: Some(u32::MAX),
            array_job: Some(u64::MAX),
            name: "a-rather-long-job-name",
            user: "someone",
            node: "node-with-long-name-0001",
        };
        let t = TaskFields {
            step: u32::MAX,
            task: u32::MAX,
            node_index: u32::MAX,
        };
        (f, t)
    }

    #[test]
    fn the_longest_expansion_bounds_every_expansion() {
        let (f, t) = largest();
        let bounds = FieldBounds {
            name: f.name.len(),
            user: f.user.len(),
            node: f.node.len(),
        };
        let dir = Path::new("/home/someone/work");
        for p in [
            "slurm-%j.out",
            "/o/%x-%u-%N-%A_%a-%J-%s-%n-%t-%%",
            "%10j%10J%10s%10a%99999999999999999999999j",
            "/o/\\%j",
            "%",
            "%12",
            "plain",
        ] {
            let bound = longest(p, &bounds, dir.as_os_str().len());
            let batch = expand(p, &f, dir).as_os_str().len();
            let task = expand_for_task(p, &f, &t, dir).as_os_str().len();
            assert!(
                batch <= bound && task <= bound,
                "{p}: {batch}, {task} > {bound}"
            );
        }
        assert_eq!(longest("/o/%x", &bounds, 1000), 3 + bounds.name);
        assert_eq!(longest("o/%x", &bounds, 1000), 1001 + 2 + bounds.name);
    }

    #[test]
    fn a_pattern_past_the_bound_stops_expanding_there() {
        // Issue 46: `-J` of 1 MB and `-o` of 100,000 `%x` asked for a 100 GB path.
        let name = "n".repeat(1 << 20);
        let pattern = "%x".repeat(100_000);
        let huge = PatternFields { name: &name, ..f() };
        let bounds = FieldBounds {
            name: name.len(),
            ..FieldBounds::default()
        };
        assert!(longest(&pattern, &bounds, 0) >= 100_000 << 20);
        assert_eq!(
            expand_within(&pattern, &huge, Path::new("/w"), 4096),
            Err(PatternTooLong { max: 4096 })
        );
        // The directory counts: a name that fits alone does not fit beneath a long one.
        let deep = PathBuf::from(format!("/{}", "d".repeat(4000)));
        assert!(expand_within("%x", &f(), &deep, 4096).is_ok());
        assert!(expand_within(&"y".repeat(100), &f(), &deep, 4096).is_err());
        assert!(expand_within(&"\\y".repeat(5000), &f(), Path::new("/"), 4096).is_err());
        assert_eq!(
            expand_within("/o/%j", &f(), Path::new("/w"), 4096),
            Ok(PathBuf::from("/o/128"))
        );
    }
}
