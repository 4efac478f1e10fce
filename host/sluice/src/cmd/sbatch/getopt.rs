//! sbatch's option table and a scanner that reads words as glibc's `getopt_long` does for it:
//! short clusters, `--opt=value` and `--opt value`, unique prefixes of long names, and the
//! first word that is not an option ends the options (sbatch's `+` mode).

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// A flag.
    Nothing,
    /// A value, as `--opt=v`, `--opt v`, `-Xv` or `-X v`.
    Value,
    /// A value only as `--opt=v` (getopt's optional argument).
    Optional,
}

/// One option of the table.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// Long name without dashes.
    pub long: &'static str,
    /// Short letter, if any.
    pub short: Option<char>,
    /// Whether it takes a value.
    pub takes: Takes,
}

/// A table entry (for option tables of other Slurm commands, such as srun's).
pub const fn spec(long: &'static str, short: Option<char>, takes: Takes) -> Spec {
    Spec { long, short, takes }
}

use Takes::{Nothing as N, Optional as O, Value as V};

/// sbatch's options as its man page lists them (the ones sluice reads, and those it accepts
/// with no effect on one machine), plus sluice's own `--state-dir` and `--json`.
pub const TABLE: &[Spec] = &[
    spec("account", Some('A'), V),
    spec("acctg-freq", None, V),
    spec("array", Some('a'), V),
    spec("batch", None, V),
    spec("begin", Some('b'), V),
    spec("chdir", Some('D'), V),
    spec("cluster-constraint", None, V),
    spec("clusters", Some('M'), V),
    spec("comment", None, V),
    spec("constraint", Some('C'), V),
    spec("container", None, V),
    spec("contiguous", None, N),
    spec("core-spec", Some('S'), V),
    spec("cores-per-socket", None, V),
    spec("cpu-freq", None, V),
    spec("cpus-per-gpu", None, V),
    spec("cpus-per-task", Some('c'), V),
    spec("deadline", None, V),
    spec("delay-boot", None, V),
    spec("dependency", Some('d'), V),
    spec("distribution", Some('m'), V),
    spec("error", Some('e'), V),
    spec("exclude", Some('x'), V),
    spec("exclusive", None, O),
    spec("export", None, V),
    spec("export-file", None, V),
    spec("export-none", None, N),
    spec("extra-node-info", Some('B'), V),
    spec("get-user-env", None, O),
    spec("gid", None, V),
    spec("gpu-bind", None, V),
    spec("gpu-freq", None, V),
    spec("gpus", Some('G'), V),
    spec("gpus-per-node", None, V),
    spec("gpus-per-socket", None, V),
    spec("gpus-per-task", None, V),
    spec("gres", None, V),
    spec("gres-flags", None, V),
    spec("help", Some('h'), N),
    spec("hint", None, V),
    spec("hold", Some('H'), N),
    spec("ignore-pbs", None, N),
    spec("input", Some('i'), V),
    spec("job-name", Some('J'), V),
    spec("json", None, N),
    spec("kill-on-invalid-dep", None, V),
    spec("licenses", Some('L'), V),
    spec("mail-type", None, V),
    spec("mail-user", None, V),
    spec("mcs-label", None, V),
    spec("mem", None, V),
    spec("mem-bind", None, V),
    spec("mem-per-cpu", None, V),
    spec("mem-per-gpu", None, V),
    spec("mincpus", None, V),
    spec("network", None, V),
    spec("nice", None, O),
    spec("no-kill", Some('k'), O),
    spec("no-requeue", None, N),
    spec("nodefile", Some('F'), V),
    spec("nodelist", Some('w'), V),
    spec("nodes", Some('N'), V),
    spec("ntasks", Some('n'), V),
    spec("ntasks-per-core", None, V),
    spec("ntasks-per-gpu", None, V),
    spec("ntasks-per-node", None, V),
    spec("ntasks-per-socket", None, V),
    spec("open-mode", None, V),
    spec("output", Some('o'), V),
    spec("overcommit", Some('O'), N),
    spec("oversubscribe", Some('s'), N),
    spec("parsable", None, N),
    spec("partition", Some('p'), V),
    spec("power", None, V),
    spec("prefer", None, V),
    spec("priority", None, V),
    spec("profile", None, V),
    spec("propagate", None, O),
    spec("qos", Some('q'), V),
    spec("quiet", Some('Q'), N),
    spec("reboot", None, N),
    spec("requeue", None, N),
    spec("reservation", None, V),
    spec("signal", None, V),
    spec("sockets-per-node", None, V),
    spec("spread-job", None, N),
    spec("state-dir", None, V),
    spec("switches", None, V),
    spec("test-only", None, N),
    spec("thread-spec", None, V),
    spec("threads-per-core", None, V),
    spec("time", Some('t'), V),
    spec("time-min", None, V),
    spec("tmp", None, V),
    spec("tres-per-task", None, V),
    spec("uid", None, V),
    spec("usage", Some('u'), N),
    spec("use-min-nodes", None, N),
    spec("verbose", Some('v'), N),
    spec("version", Some('V'), N),
    spec("wait", Some('W'), N),
    spec("wait-all-nodes", None, V),
    spec("wckey", None, V),
    spec("wrap", None, V),
];

/// One line per option of `table` (`  -N, --nodes=VALUE`), for a command's usage.
pub fn describe(table: &[Spec]) -> String {
    let mut out = String::new();
    for s in table {
        let short = s.short.map_or("    ".to_string(), |c| format!("-{c}, "));
        let value = match s.takes {
            Takes::Nothing => "",
            Takes::Value => "=VALUE",
            Takes::Optional => "[=VALUE]",
        };
        out.push_str(&format!("  {short}--{}{value}\n", s.long));
    }
    out
}

/// An option found, by its long name, with its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The long name (also for a short option).
    pub long: &'static str,
    /// The value, if one was given.
    pub value: Option<String>,
}

/// What the words held: options in order, then the first non-option and everything after it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scanned {
    /// Options, in the order given (a later one overrides an earlier one).
    pub options: Vec<Found>,
    /// The script and its arguments.
    pub rest: Vec<String>,
}

/// A word getopt_long refused: its index among the words and glibc's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanError {
    /// Index of the word.
    pub word: usize,
    /// glibc's message.
    pub message: String,
}

/// Reads `words` as getopt_long does for sbatch.
pub fn scan(words: &[String]) -> Result<Scanned, ScanError> {
    scan_with(TABLE, words)
}

/// Reads `words` as getopt_long does with another command's option `table` (srun, salloc).
pub fn scan_with(table: &'static [Spec], words: &[String]) -> Result<Scanned, ScanError> {
    let mut at = 0;
    scan_words(table, words, &mut at).map_err(|message| ScanError { word: at, message })
}

fn scan_words(table: &'static [Spec], words: &[String], at: &mut usize) -> Result<Scanned, String> {
    let mut out = Scanned::default();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        *at = i;
        i += 1;
        if w == "--" {
            out.rest.extend(words[i..].iter().cloned());
            return Ok(out);
        }
        if let Some(body) = w.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let spec = long_spec(table, name, body)?;
            let value = match (spec.takes, inline) {
                (Takes::Nothing, Some(_)) => {
                    return Err(format!(
                        "option '--{}' doesn't allow an argument",
                        spec.long
                    ));
                }
                (Takes::Nothing, None) | (Takes::Optional, None) => None,
                (_, Some(v)) => Some(v),
                (Takes::Value, None) => match words.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => return Err(format!("option '--{}' requires an argument", spec.long)),
                },
            };
            out.options.push(Found {
                long: spec.long,
                value,
            });
        } else if w.len() > 1 && w.starts_with('-') {
            let letters: Vec<char> = w[1..].chars().collect();
            let mut k = 0;
            while k < letters.len() {
                let c = letters[k];
                k += 1;
                let spec = table
                    .iter()
                    .find(|s| s.short == Some(c))
                    .ok_or_else(|| format!("invalid option -- '{c}'"))?;
                let attached: String = letters[k..].iter().collect();
                let value = match spec.takes {
                    Takes::Nothing => None,
                    Takes::Optional if attached.is_empty() => None,
                    Takes::Optional => {
                        k = letters.len();
                        Some(attached)
                    }
                    Takes::Value if !attached.is_empty() => {
                        k = letters.len();
                        Some(attached)
                    }
                    Takes::Value => match words.get(i) {
                        Some(v) => {
                            i += 1;
                            Some(v.clone())
                        }
                        None => return Err(format!("option requires an argument -- '{c}'")),
                    },
                };
                out.options.push(Found {
                    long: spec.long,
                    value,
                });
            }
        } else {
            out.rest.extend(words[i - 1..].iter().cloned());
            return Ok(out);
        }
    }
    Ok(out)
}

/// The option a long name means: itself, else the one option it is a prefix of.
/// `word` is the whole word without its dashes, as glibc quotes it.
fn long_spec(table: &'static [Spec], name: &str, word: &str) -> Result<&'static Spec, String> {
    if let Some(s) = table.iter().find(|s| s.long == name) {
        return Ok(s);
    }
    let matches: Vec<&Spec> = table
        .iter()
        .filter(|s| !name.is_empty() && s.long.starts_with(name))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(format!("unrecognized option '--{word}'")),
        many => Err(format!(
            "option '--{name}' is ambiguous; possibilities: {}",
            many.iter()
                .map(|s| format!("'--{}'", s.long))
                .collect::<Vec<_>>()
                .join(" ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn pairs(s: &Scanned) -> Vec<(&str, Option<&str>)> {
        s.options
            .iter()
            .map(|f| (f.long, f.value.as_deref()))
            .collect()
    }

    #[test]
    fn long_and_short_forms_with_attached_or_separate_values() {
        let s = scan(&words("-N2 -n 4 --time=1:00 --mem 4G -HJ name job.sh -x y")).unwrap();
        assert_eq!(
            pairs(&s),
            vec![
                ("nodes", Some("2")),
                ("ntasks", Some("4")),
                ("time", Some("1:00")),
                ("mem", Some("4G")),
                ("hold", None),
                ("job-name", Some("name")),
            ]
        );
        // Options end at the script: what follows is the script's.
        assert_eq!(s.rest, words("job.sh -x y"));
    }

    #[test]
    fn unique_prefixes_stand_for_the_option_and_exact_names_win() {
        let s = scan(&words("--part=debug --mem=1G --ntasks-per-n=2")).unwrap();
        assert_eq!(
            pairs(&s),
            vec![
                ("partition", Some("debug")),
                ("mem", Some("1G")),
                ("ntasks-per-node", Some("2"))
            ]
        );
        let err = scan(&words("--mem-per=1")).unwrap_err().message;
        assert!(err.starts_with("option '--mem-per' is ambiguous"), "{err}");
    }

    #[test]
    fn optional_values_only_follow_an_equals_sign() {
        let s = scan(&words("--exclusive job.sh")).unwrap();
        assert_eq!(pairs(&s), vec![("exclusive", None)]);
        assert_eq!(s.rest, words("job.sh"));
        let s = scan(&words("--exclusive=user")).unwrap();
        assert_eq!(pairs(&s), vec![("exclusive", Some("user"))]);
    }

    #[test]
    fn errors_are_getopts() {
        let scan = |w: &[String]| scan(w).map_err(|e| e.message);
        assert_eq!(scan(&words("-N 1 --bad")).map_err(|_| ()), Err(()));
        assert_eq!(super::scan(&words("-N 1 --bad")).unwrap_err().word, 2);
        assert_eq!(
            scan(&words("--frobnicate")).unwrap_err(),
            "unrecognized option '--frobnicate'"
        );
        assert_eq!(scan(&words("-y")).unwrap_err(), "invalid option -- 'y'");
        assert_eq!(
            scan(&words("--time")).unwrap_err(),
            "option '--time' requires an argument"
        );
        assert_eq!(
            scan(&words("-t")).unwrap_err(),
            "option requires an argument -- 't'"
        );
        assert_eq!(
            scan(&words("--hold=yes")).unwrap_err(),
            "option '--hold' doesn't allow an argument"
        );
    }

    #[test]
    fn double_dash_ends_options() {
        let s = scan(&words("-N 1 -- -script")).unwrap();
        assert_eq!(s.rest, words("-script"));
    }
}
