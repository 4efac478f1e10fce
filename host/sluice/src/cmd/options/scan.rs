//! The scanner of sbatch's, srun's and salloc's words, as glibc's `getopt_long` reads them with
//! the command's options from the one table: short clusters, `--opt=value` and `--opt value`,
//! unique prefixes of long names, and the first word that is not an option ends the options
//! (Slurm's `+` mode).

use super::table::{self, Command, Spec, Takes};

/// An option found, by its line of the table, with its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The option (also when given by its short letter).
    pub spec: &'static Spec,
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

/// Reads `words` as getopt_long does for `command`, with the options it accepts.
pub fn scan(command: Command, words: &[String]) -> Result<Scanned, ScanError> {
    let mut at = 0;
    scan_words(command, words, &mut at).map_err(|message| ScanError { word: at, message })
}

/// Reads a command line as [`scan`] does; the error is getopt's message and the command's
/// hint, as Slurm's commands print them.
pub fn command_line(command: Command, words: &[String]) -> Result<Scanned, String> {
    scan(command, words).map_err(|e| {
        format!(
            "{}\nTry \"{} --help\" for more information",
            e.message,
            command.invocation()
        )
    })
}

fn scan_words(command: Command, words: &[String], at: &mut usize) -> Result<Scanned, String> {
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
            let spec = long_spec(command, name, body)?;
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
            out.options.push(Found { spec, value });
        } else if w.len() > 1 && w.starts_with('-') {
            let letters: Vec<char> = w[1..].chars().collect();
            let mut k = 0;
            while k < letters.len() {
                let c = letters[k];
                k += 1;
                let spec = table::of(command)
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
                out.options.push(Found { spec, value });
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
fn long_spec(command: Command, name: &str, word: &str) -> Result<&'static Spec, String> {
    if let Some(s) = table::find(command, name) {
        return Ok(s);
    }
    let matches: Vec<&Spec> = table::of(command)
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
            .map(|f| (f.spec.long, f.value.as_deref()))
            .collect()
    }

    fn scan(words: &[String]) -> Result<Scanned, ScanError> {
        super::scan(Command::Sbatch, words)
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
        assert_eq!(
            super::scan(Command::Sbatch, &words("-N 1 --bad"))
                .unwrap_err()
                .word,
            2
        );
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

    #[test]
    fn each_command_reads_its_own_meaning_of_a_letter() {
        let sbatch = scan(&words("-u -W")).unwrap();
        assert_eq!(pairs(&sbatch), vec![("usage", None), ("wait", None)]);
        let srun = super::scan(Command::Srun, &words("-u -W 5 -l true")).unwrap();
        assert_eq!(
            pairs(&srun),
            vec![("unbuffered", None), ("wait", Some("5")), ("label", None)]
        );
        assert_eq!(srun.rest, words("true"));
        // A prefix is unique among the command's own options: `--lab` is srun's `--label`,
        // and sbatch has no such option.
        assert!(super::scan(Command::Salloc, &words("--lab")).is_ok());
        assert_eq!(
            command_line(Command::Sbatch, &words("--lab")).unwrap_err(),
            "unrecognized option '--lab'\nTry \"sluice submit --help\" for more information"
        );
    }
}
