//! `--multi-prog`: srun's MPMD configuration file, one `TASKS PROGRAM ARGS…` line per set of
//! tasks, checked as srun's `verify_multi_name` checks it (with its messages) and turned into
//! each task's command line as slurmstepd's `multi_prog_get_argv` does (`%t`, `%o`, quotes,
//! backslashes, continued lines).

/// Longest line srun reads (its 16 KiB line buffer, less the newline and the NUL).
const LINE_MAX: usize = 16 * 1024 - 2;

/// Most arguments slurmstepd gives a task (its `MAX_ARGC`, less the terminating null).
const ARGS_MAX: usize = 127;

/// A checked configuration: its lines, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultiProg {
    lines: Vec<Line>,
}

/// One line that names tasks: which, and the text of its program and arguments (continued
/// lines joined, their backslash-newline kept for the argument scanner).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Line {
    ranks: Ranks,
    args: String,
}

/// `*`, or the comma-separated ranks and ranges of a line, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ranks {
    All,
    Ranges(Vec<(u32, u32)>),
}

/// The task count as srun knows it while it reads the file: with `set` (`-n`, or the
/// allocation's count) a rank past it is an error; unset, the highest rank named raises it.
struct Count {
    tasks: u32,
    set: bool,
    raised: bool,
}

impl MultiProg {
    /// Checks `text`, the file `name`, for a step of `tasks` tasks (`tasks_set` when the count
    /// was given); returns the configuration and the step's task count, which ranks past an
    /// unset count raise. The error is srun's messages, one a line.
    pub fn parse(
        name: &str,
        text: &str,
        tasks: u32,
        tasks_set: bool,
    ) -> Result<(Self, u32), String> {
        let mut count = Count {
            tasks,
            set: tasks_set,
            raised: false,
        };
        let mut covered: Vec<(u32, u32)> = Vec::new();
        let mut asterisk = false;
        let mut lines = Vec::new();
        let physical: Vec<&str> = text.split_inclusive('\n').collect();
        if let Some(long) = physical.iter().position(|l| l.len() > LINE_MAX) {
            let number = long + 1;
            return Err(format!(
                "Line {number} of configuration file {name} too long"
            ));
        }
        let mut i = 0;
        while i < physical.len() {
            let number = i + 1;
            // A line ending in a backslash goes on in the next, which srun does not read as
            // a line of its own.
            let mut joined = physical[i].to_string();
            while continues(physical[i]) && i + 1 < physical.len() {
                i += 1;
                joined.push_str(physical[i]);
            }
            i += 1;
            let body = joined.trim_start();
            if body.is_empty() || body.starts_with('#') {
                continue;
            }
            let invalid = || format!("Line {number} of configuration file {name} invalid");
            let mut words = body.split([' ', '\t', '\n']).filter(|w| !w.is_empty());
            let (Some(spec), Some(_program)) = (words.next(), words.next()) else {
                return Err(invalid());
            };
            let args = body[spec.len()..]
                .trim_start_matches([' ', '\t'])
                .to_string();
            let ranks = validate(spec, &mut count, &mut covered, &mut asterisk)
                .map_err(|e| format!("{e}\n{}", invalid()))?;
            lines.push(Line { ranks, args });
        }
        if let Some(missing) = first_gap(&covered, count.tasks) {
            return Err(format!(
                "Configuration file {name} invalid, no record for task id {missing}"
            ));
        }
        Ok((Self { lines }, count.tasks))
    }

    /// The command line of task `rank`: its line's program and arguments, `%t` its rank and
    /// `%o` its offset in the line's ranks, then `extra` (srun's own words after the file).
    pub fn argv(&self, rank: u32, extra: &[String]) -> Result<Vec<String>, String> {
        for line in &self.lines {
            let Some(offset) = line.ranks.offset(rank) else {
                continue;
            };
            let mut argv = arguments(&line.args, rank, offset)?;
            for e in extra {
                if argv.len() >= ARGS_MAX {
                    break;
                }
                argv.push(e.clone());
            }
            return Ok(argv);
        }
        Err(format!("Program for task rank {rank} not specified."))
    }
}

/// Whether a physical line ends in a backslash (before its newline).
fn continues(line: &str) -> bool {
    line.trim_end_matches('\n').ends_with('\\')
}

/// srun's `_validate_ranks`: the line's ranks, marked covered, or srun's message.
fn validate(
    spec: &str,
    count: &mut Count,
    covered: &mut Vec<(u32, u32)>,
    asterisk: &mut bool,
) -> Result<Ranks, String> {
    if spec == "*" {
        *asterisk = true;
        count.set = true;
        let high = count.tasks.saturating_sub(1);
        cover(covered, 0, high, true)?;
        return Ok(Ranks::All);
    }
    let mut ranges = Vec::new();
    for token in spec.split(',').filter(|t| !t.is_empty()) {
        if *asterisk {
            return Err("Task range specification with asterisk must be last".into());
        }
        let digits = token.bytes().take_while(u8::is_ascii_digit).count();
        let (low, high) = match token[digits..].strip_prefix('-') {
            None if digits == token.len() => (number(token), number(token)),
            Some(upper) if upper.bytes().all(|b| b.is_ascii_digit()) => {
                // As C's atoi, a range with no lower number reads its `-N` as negative.
                let low = if digits == 0 {
                    -number(upper)
                } else {
                    number(&token[..digits])
                };
                (low, number(upper))
            }
            Some(_) => return Err("Invalid task range specification".into()),
            None => return Err(format!("Invalid task range specification ({token})")),
        };
        if low > high {
            return Err(format!("Invalid task range, {low}-{high}"));
        }
        if low < 0 {
            return Err(format!("Invalid task id, {low} < 0"));
        }
        let (low, high) = (fit(low), fit(high));
        if high >= count.tasks {
            if count.set && !count.raised {
                return Err(format!("Invalid task id, {high} >= ntasks"));
            }
            count.tasks = high.saturating_add(1);
            count.set = true;
            count.raised = true;
        }
        cover(covered, low, high, false)?;
        ranges.push((low, high));
    }
    Ok(Ranks::Ranges(ranges))
}

/// A rank as C's `atoi` reads digits (none is 0; too long a number saturates, past any
/// task).
fn number(digits: &str) -> i64 {
    if digits.is_empty() {
        return 0;
    }
    digits.parse::<i64>().unwrap_or(i64::MAX)
}

/// A checked, non-negative rank as a task id.
fn fit(n: i64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX - 1)
}

/// Marks `low..=high` covered; a rank already covered is srun's duplicate error unless
/// `duplicates_allowed` (the `*` line takes only the ranks left).
fn cover(
    covered: &mut Vec<(u32, u32)>,
    low: u32,
    high: u32,
    duplicates_allowed: bool,
) -> Result<(), String> {
    if !duplicates_allowed
        && let Some(&(a, _)) = covered.iter().find(|(a, b)| *a <= high && low <= *b)
    {
        return Err(format!("Duplicate record for task {}", a.max(low)));
    }
    covered.push((low, high));
    Ok(())
}

/// The lowest rank below `tasks` that no line covers.
fn first_gap(covered: &[(u32, u32)], tasks: u32) -> Option<u32> {
    let mut sorted = covered.to_vec();
    sorted.sort();
    let mut next = 0u32;
    for (low, high) in sorted {
        if low > next {
            break;
        }
        next = next.max(high.saturating_add(1));
    }
    (next < tasks).then_some(next)
}

impl Ranks {
    /// Where `rank` falls in these ranks (slurmstepd's `%o`), if it does.
    fn offset(&self, rank: u32) -> Option<u32> {
        let Self::Ranges(ranges) = self else {
            return Some(rank);
        };
        let mut passed = 0u32;
        for &(low, high) in ranges {
            if (low..=high).contains(&rank) {
                return Some(passed + (rank - low));
            }
            passed = passed.saturating_add(high - low + 1);
        }
        None
    }
}

/// slurmstepd's argument scanner: words split at white space, `'…'` kept as it is, `\x` is
/// `x`, a backslash at a line's end joins the next line, `%t` is the rank, `%o` the offset,
/// and `%` with any other letter is dropped.
fn arguments(text: &str, rank: u32, offset: u32) -> Result<Vec<String>, String> {
    let mut argv: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '%' => {
                let w = word.get_or_insert_with(String::new);
                match chars.next() {
                    Some('t') => w.push_str(&rank.to_string()),
                    Some('o') => w.push_str(&offset.to_string()),
                    _ => {}
                }
            }
            '\\' => match chars.next() {
                // A continued line: the word, if one was started, goes on in the next.
                Some('\n') | None => {}
                Some(x) => word.get_or_insert_with(String::new).push(x),
            },
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                let mut closed = false;
                for q in chars.by_ref() {
                    if q == '\'' {
                        closed = true;
                        break;
                    }
                    // A quote runs on over a continued line without its backslash-newline.
                    if q == '\n' && w.ends_with('\\') {
                        w.pop();
                        continue;
                    }
                    w.push(q);
                }
                if !closed {
                    return Err(format!(
                        "Program arguments specification format invalid: {}.",
                        argv.last().map_or("", String::as_str)
                    ));
                }
            }
            c if c.is_whitespace() => {
                if let Some(w) = word.take() {
                    argv.push(w);
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
        if argv.len() >= ARGS_MAX {
            break;
        }
    }
    if let Some(w) = word {
        argv.push(w);
    }
    argv.truncate(ARGS_MAX);
    Ok(argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The man page's example file.
    const SILLY: &str = "###################################################################\n\
# srun multiple program configuration file\n\
#\n\
# srun -n8 -l --multi-prog silly.conf\n\
###################################################################\n\
4-6       hostname\n\
1,7       echo  task:%t\n\
0,2-3     echo  offset:%o\n";

    fn parse(text: &str, tasks: u32, set: bool) -> Result<(MultiProg, u32), String> {
        MultiProg::parse("silly.conf", text, tasks, set)
    }

    fn argv(m: &MultiProg, rank: u32) -> Vec<String> {
        m.argv(rank, &[]).unwrap()
    }

    #[test]
    fn each_task_runs_its_lines_program_with_its_rank_and_offset() {
        let (m, tasks) = parse(SILLY, 8, true).unwrap();
        assert_eq!(tasks, 8);
        let got: Vec<String> = (0..8).map(|r| argv(&m, r).join(" ")).collect();
        assert_eq!(
            got,
            [
                "echo offset:0",
                "echo task:1",
                "echo offset:1",
                "echo offset:2",
                "hostname",
                "hostname",
                "hostname",
                "echo task:7"
            ]
        );
        // srun's own words after the file name go after every task's arguments.
        assert_eq!(
            m.argv(7, &["x".into(), "y".into()]).unwrap(),
            ["echo", "task:7", "x", "y"]
        );
    }

    #[test]
    fn an_asterisk_takes_the_tasks_left() {
        let (m, tasks) = parse("0 echo first\n* echo rest %t %o\n", 3, true).unwrap();
        assert_eq!(tasks, 3);
        assert_eq!(argv(&m, 0), ["echo", "first"]);
        assert_eq!(argv(&m, 2), ["echo", "rest", "2", "2"]);
        assert_eq!(
            parse("* a\n0 b\n", 2, true).unwrap_err(),
            "Task range specification with asterisk must be last\nLine 2 of configuration file silly.conf invalid"
        );
    }

    #[test]
    fn an_unset_task_count_grows_to_the_highest_rank_named() {
        let (_, tasks) = parse("0-2 a\n5,3-4 b\n", 1, false).unwrap();
        assert_eq!(tasks, 6);
        assert_eq!(
            parse("0-2 a\n", 2, true).unwrap_err(),
            "Invalid task id, 2 >= ntasks\nLine 1 of configuration file silly.conf invalid"
        );
        // `*` fixes the count where it stands.
        assert_eq!(parse("* a\n", 1, false).unwrap().1, 1);
    }

    #[test]
    fn malformed_files_get_sruns_messages() {
        let err = |text: &str| parse(text, 4, true).unwrap_err();
        assert_eq!(
            err("0-3\n"),
            "Line 1 of configuration file silly.conf invalid"
        );
        assert_eq!(
            err("# c\n3-1 a\n"),
            "Invalid task range, 3-1\nLine 2 of configuration file silly.conf invalid"
        );
        assert_eq!(
            err("x a\n"),
            "Invalid task range specification (x)\nLine 1 of configuration file silly.conf invalid"
        );
        assert_eq!(
            err("1-2x a\n"),
            "Invalid task range specification\nLine 1 of configuration file silly.conf invalid"
        );
        assert_eq!(
            err("-2 a\n"),
            "Invalid task id, -2 < 0\nLine 1 of configuration file silly.conf invalid"
        );
        assert_eq!(
            err("0-2 a\n2-3 b\n"),
            "Duplicate record for task 2\nLine 2 of configuration file silly.conf invalid"
        );
        assert_eq!(
            err("0,1 a\n3 b\n"),
            "Configuration file silly.conf invalid, no record for task id 2"
        );
        let long = format!("0-3 echo {}\n", "x".repeat(LINE_MAX));
        assert_eq!(
            err(&long),
            "Line 1 of configuration file silly.conf too long"
        );
    }

    #[test]
    fn quotes_escapes_and_continued_lines() {
        let text = "  # indented comment\n\n0-1 printf '%t and %o' a\\ b \\\n   c%x 50%t\n";
        let (m, _) = parse(text, 2, true).unwrap();
        assert_eq!(argv(&m, 1), ["printf", "%t and %o", "a b", "c", "501"]);
        assert!(
            parse("0 echo 'open\n", 1, true)
                .unwrap()
                .0
                .argv(0, &[])
                .is_err()
        );
    }
}
