//! sbatch's options as one value: read from the script's `#SBATCH` lines, then from the
//! command line over them, each value checked as Slurm checks it.

use std::path::PathBuf;

use sluice_api::WarnSignal;

use super::clock::{Zone, parse_time};
use super::getopt::{self, Found};
use super::values::{self, Export};

/// Everything sbatch was told, after the later of two settings of an option won.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// `-J`.
    pub job_name: Option<String>,
    /// `-p`.
    pub partition: Option<String>,
    /// `-A`.
    pub account: Option<String>,
    /// `-q`.
    pub qos: Option<String>,
    /// `-N`: minimum and maximum.
    pub nodes: Option<(u32, Option<u32>)>,
    /// `-n`.
    pub ntasks: Option<u32>,
    /// `-c`.
    pub cpus_per_task: Option<u32>,
    /// `--ntasks-per-node`.
    pub ntasks_per_node: Option<u32>,
    /// `--ntasks-per-socket`.
    pub ntasks_per_socket: Option<u32>,
    /// `--mem`, MB (0: all of each node).
    pub mem: Option<u64>,
    /// `--mem-per-cpu`, MB.
    pub mem_per_cpu: Option<u64>,
    /// `--mem-per-gpu`, MB.
    pub mem_per_gpu: Option<u64>,
    /// `-G/--gpus`.
    pub gpus: Option<String>,
    /// `--gpus-per-node`.
    pub gpus_per_node: Option<String>,
    /// `--gpus-per-task`.
    pub gpus_per_task: Option<String>,
    /// `--cpus-per-gpu`.
    pub cpus_per_gpu: Option<u32>,
    /// `--gres`.
    pub gres: Option<String>,
    /// `-L`.
    pub licenses: Option<String>,
    /// `-C`.
    pub constraint: Option<String>,
    /// `-w`.
    pub nodelist: Option<String>,
    /// `-F/--nodefile`: a file of node names, read when the request is built.
    pub nodefile: Option<PathBuf>,
    /// `-x`.
    pub exclude: Option<String>,
    /// `--contiguous`.
    pub contiguous: bool,
    /// `-s/--oversubscribe`.
    pub oversubscribe: bool,
    /// `--hint`.
    pub hint: Option<String>,
    /// `-m`.
    pub distribution: Option<String>,
    /// `-t`: `Some(None)` is UNLIMITED.
    pub time: Option<Option<u64>>,
    /// `--time-min`, seconds.
    pub time_min: Option<Option<u64>>,
    /// `-b/--begin`, Unix seconds.
    pub begin: Option<i64>,
    /// `--deadline`, Unix seconds.
    pub deadline: Option<i64>,
    /// `--export`.
    pub export: Option<Export>,
    /// `--export-file`.
    pub export_file: Option<PathBuf>,
    /// `--get-user-env`.
    pub get_user_env: bool,
    /// `--signal`.
    pub signal: Option<WarnSignal>,
    /// `-o`.
    pub output: Option<String>,
    /// `-e`.
    pub error: Option<String>,
    /// `-i`.
    pub input: Option<String>,
    /// `--open-mode`.
    pub open_mode: Option<String>,
    /// `--mail-type`.
    pub mail_type: Option<String>,
    /// `--mail-user`.
    pub mail_user: Option<String>,
    /// `--comment`.
    pub comment: Option<String>,
    /// `--wckey`.
    pub wckey: Option<String>,
    /// `-d`.
    pub dependency: Option<String>,
    /// `--reservation`.
    pub reservation: Option<String>,
    /// `--requeue` (true) / `--no-requeue` (false).
    pub requeue: Option<bool>,
    /// `--exclusive`.
    pub exclusive: bool,
    /// `-H`.
    pub hold: bool,
    /// `--nice` (a bare `--nice` is 100, as in Slurm).
    pub nice: Option<i32>,
    /// `--priority` (`TOP` is the highest a job may have, Slurm's `NO_VAL - 1`).
    pub priority: Option<u32>,
    /// `-W/--wait`.
    pub wait: bool,
    /// `--test-only`.
    pub test_only: bool,
    /// `--parsable`.
    pub parsable: bool,
    /// `-D`.
    pub chdir: Option<PathBuf>,
    /// `--wrap`.
    pub wrap: Option<String>,
    /// `-a/--array` as written (refused when the request is built).
    pub array: Option<String>,
    /// `-h/--help` or `-u/--usage`.
    pub help: bool,
    /// sluice's `--state-dir` (command line only).
    pub state_dir: Option<PathBuf>,
    /// sluice's `--json` (command line only).
    pub json: bool,
    /// Options accepted with no effect on one machine, by long name, for a warning.
    pub ignored: Vec<&'static str>,
}

/// What the reader needs from outside: the time now and the clock face dates are read in.
#[derive(Clone, Copy, Debug)]
pub struct Context {
    /// Unix seconds now.
    pub now: i64,
    /// Local time or UTC.
    pub zone: Zone,
}

impl Options {
    /// Applies options found by the scanner, in order.
    pub fn apply_all(&mut self, found: &[Found], cx: Context) -> Result<(), String> {
        for f in found {
            self.apply(f, cx)?;
        }
        Ok(())
    }

    /// Applies one option; the error is Slurm's message.
    pub fn apply(&mut self, f: &Found, cx: Context) -> Result<(), String> {
        let v = f.value.clone().unwrap_or_default();
        let s = || Some(v.clone());
        match f.long {
            "account" => self.account = s(),
            "array" => self.array = s(),
            "begin" => {
                self.begin = Some(
                    parse_time(&v, cx.now, cx.zone)
                        .ok_or("Invalid --begin specification".to_string())?,
                )
            }
            "chdir" => self.chdir = Some(PathBuf::from(&v)),
            "comment" => self.comment = s(),
            "constraint" => self.constraint = s(),
            "contiguous" => self.contiguous = true,
            "cpus-per-gpu" => self.cpus_per_gpu = Some(values::count("cpus-per-gpu", &v)?),
            "cpus-per-task" => self.cpus_per_task = Some(values::count("cpus-per-task", &v)?),
            "deadline" => {
                self.deadline = Some(
                    parse_time(&v, cx.now, cx.zone)
                        .ok_or(format!("Invalid deadline specification {v}"))?,
                )
            }
            "dependency" => self.dependency = s(),
            "distribution" => self.distribution = Some(values::distribution(&v)?),
            "error" => self.error = Some(none_is_null(&v)),
            "exclude" => self.exclude = s(),
            "exclusive" => match f.value.as_deref().map(str::to_ascii_lowercase).as_deref() {
                None | Some("user" | "mcs" | "topo") => self.exclusive = true,
                Some(other) => return Err(format!("invalid exclusive option {other}")),
            },
            "export" => self.export = Some(values::export(&v)?),
            // sluice's older spelling of --export=NONE.
            "export-none" => self.export = Some(Export::default()),
            "export-file" => self.export_file = Some(PathBuf::from(&v)),
            "get-user-env" => self.get_user_env = true,
            "gpus" => self.gpus = Some(values::gpus("gpus", &v)?),
            "gpus-per-node" => self.gpus_per_node = Some(values::gpus("gpus-per-node", &v)?),
            "gpus-per-task" => self.gpus_per_task = Some(values::gpus("gpus-per-task", &v)?),
            "gres" => self.gres = s(),
            "help" | "usage" => self.help = true,
            "hint" => self.hint = Some(values::hint(&v)?),
            "hold" => self.hold = true,
            "input" => self.input = Some(none_is_null(&v)),
            "job-name" => self.job_name = s(),
            "json" => self.json = true,
            "licenses" => self.licenses = s(),
            "mail-type" => self.mail_type = Some(values::mail_type(&v)?),
            "mail-user" => self.mail_user = s(),
            "mem" => self.mem = Some(values::megabytes("mem", &v)?),
            "mem-per-cpu" => self.mem_per_cpu = Some(values::megabytes("mem-per-cpu", &v)?),
            "mem-per-gpu" => self.mem_per_gpu = Some(values::megabytes("mem-per-gpu", &v)?),
            "nice" => {
                self.nice = Some(match &f.value {
                    None => 100,
                    Some(n) => n
                        .trim()
                        .parse()
                        .map_err(|_| format!("Invalid numeric value \"{n}\" for nice."))?,
                })
            }
            "priority" => self.priority = Some(values::priority(&v)?),
            "no-requeue" => self.requeue = Some(false),
            "nodelist" => self.nodelist = s(),
            "nodefile" => self.nodefile = Some(PathBuf::from(&v)),
            "nodes" => self.nodes = Some(values::nodes(&v)?),
            "ntasks" => self.ntasks = Some(values::count("number of tasks", &v)?),
            "ntasks-per-node" => self.ntasks_per_node = Some(values::count("ntasks-per-node", &v)?),
            "ntasks-per-socket" => {
                self.ntasks_per_socket = Some(values::count("ntasks-per-socket", &v)?)
            }
            "open-mode" => self.open_mode = Some(values::open_mode(&v)?),
            "output" => self.output = Some(none_is_null(&v)),
            "oversubscribe" => self.oversubscribe = true,
            "parsable" => self.parsable = true,
            "partition" => self.partition = s(),
            "qos" => self.qos = s(),
            "requeue" => self.requeue = Some(true),
            "reservation" => self.reservation = s(),
            "signal" => self.signal = Some(values::signal(&v)?),
            "state-dir" => self.state_dir = Some(PathBuf::from(&v)),
            "test-only" => self.test_only = true,
            "time" => self.time = Some(values::time_limit("time", &v)?),
            "time-min" => self.time_min = Some(values::time_limit("time-min", &v)?),
            "wait" => self.wait = true,
            "wckey" => self.wckey = s(),
            "wrap" => self.wrap = s(),
            other => {
                if !self.ignored.contains(&other) {
                    self.ignored.push(other);
                }
            }
        }
        Ok(())
    }
}

/// Slurm reads the file name `none` as /dev/null.
fn none_is_null(v: &str) -> String {
    if v.eq_ignore_ascii_case("none") {
        "/dev/null".into()
    } else {
        v.to_string()
    }
}

/// The options of a script's `#SBATCH` lines, then of the `SBATCH_*` variables in `env` over
/// them, then of the command line over both. `file` names the script in messages.
pub fn read(
    file: &str,
    script: Option<&str>,
    env: &[(&str, getopt::Found)],
    command_line: &[getopt::Found],
    cx: Context,
) -> Result<Options, String> {
    let mut o = Options::default();
    if let Some(text) = script {
        let words = super::script::directive_words(file, text)?;
        let texts: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
        let scanned = getopt::scan(&texts).map_err(|e| {
            let line = words.get(e.word).map_or(0, |w| w.line);
            format!("{file}: line {line}: {}", e.message)
        })?;
        if let Some(stray) = scanned.rest.first() {
            let line = words
                .iter()
                .find(|w| &w.text == stray)
                .map_or(0, |w| w.line);
            return Err(format!(
                "{file}: line {line}: Invalid directive found in batch script: {stray}"
            ));
        }
        for f in &scanned.options {
            if matches!(f.long, "state-dir" | "json" | "wrap") {
                return Err(format!(
                    "{file}: --{} is not allowed in #SBATCH lines",
                    f.long
                ));
            }
            o.apply(f, cx).map_err(|e| format!("{file}: {e}"))?;
        }
    }
    for (var, f) in env {
        o.apply(f, cx).map_err(|e| format!("{var}: {e}"))?;
    }
    o.apply_all(command_line, cx)?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CX: Context = Context {
        now: 1_795_678_215,
        zone: Zone::Utc,
    };

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn parse(script: &str, cli: &str) -> Result<Options, String> {
        let scanned = getopt::scan(&words(cli)).map_err(|e| e.message)?;
        read("job.sh", Some(script), &[], &scanned.options, CX)
    }

    #[test]
    fn command_line_wins_over_the_script() {
        let o = parse(
            "#!/bin/sh\n#SBATCH -N 2 --time=10 -J fromscript\n#SBATCH --partition=a\necho\n",
            "-p b --time=1:00:00",
        )
        .unwrap();
        assert_eq!(o.partition.as_deref(), Some("b"));
        assert_eq!(o.time, Some(Some(3600)));
        assert_eq!(o.nodes, Some((2, None)));
        assert_eq!(o.job_name.as_deref(), Some("fromscript"));
    }

    #[test]
    fn environment_variables_sit_between_script_and_command_line() {
        let env = std::collections::BTreeMap::from([
            ("SBATCH_PARTITION".to_string(), "env".to_string()),
            ("SBATCH_ACCOUNT".to_string(), "envacct".to_string()),
        ]);
        let vars = super::super::environment::options(&env);
        let cli = getopt::scan(&words("-A cliacct")).unwrap();
        let o = read(
            "job.sh",
            Some("#!/bin/sh\n#SBATCH -p script -q scriptqos\n"),
            &vars,
            &cli.options,
            CX,
        )
        .unwrap();
        assert_eq!(o.partition.as_deref(), Some("env"));
        assert_eq!(o.account.as_deref(), Some("cliacct"));
        assert_eq!(o.qos.as_deref(), Some("scriptqos"));
        let bad = std::collections::BTreeMap::from([(
            "SBATCH_TIMELIMIT".to_string(),
            "soon".to_string(),
        )]);
        let e = read(
            "job.sh",
            None,
            &super::super::environment::options(&bad),
            &[],
            CX,
        )
        .unwrap_err();
        assert_eq!(e, "SBATCH_TIMELIMIT: Invalid --time specification");
    }

    #[test]
    fn errors_name_the_script_line() {
        let e = parse("#!/bin/sh\n#SBATCH -N 1\n#SBATCH --frob=1\n", "").unwrap_err();
        assert_eq!(e, "job.sh: line 3: unrecognized option '--frob=1'");
        let e = parse("#!/bin/sh\n#SBATCH referencing\n", "").unwrap_err();
        assert_eq!(
            e,
            "job.sh: line 2: Invalid directive found in batch script: referencing"
        );
        let e = parse("#!/bin/sh\n#SBATCH --time=soon\n", "").unwrap_err();
        assert_eq!(e, "job.sh: Invalid --time specification");
    }

    #[test]
    fn begin_deadline_and_flags() {
        let o = parse(
            "#!/bin/sh\n#SBATCH --begin=now+1hour --deadline=2030-01-01T08:00:00\n#SBATCH --exclusive --contiguous --hold --nice -s\n",
            "--requeue --wait --test-only --parsable",
        )
        .unwrap();
        assert_eq!(o.begin, Some(CX.now + 3600));
        assert_eq!(Zone::Utc.iso(o.deadline.unwrap()), "2030-01-01T08:00:00");
        assert!(o.exclusive && o.contiguous && o.hold && o.wait && o.test_only && o.parsable);
        assert!(o.oversubscribe, "-s");
        assert_eq!(o.nice, Some(100));
        assert_eq!(o.requeue, Some(true));
        assert!(parse("#!/bin/sh\n", "--begin=someday").is_err());
    }

    #[test]
    fn files_named_none_are_dev_null() {
        let o = parse("#!/bin/sh\n", "-o none -e /tmp/e-%j -i NONE").unwrap();
        assert_eq!(o.output.as_deref(), Some("/dev/null"));
        assert_eq!(o.error.as_deref(), Some("/tmp/e-%j"));
        assert_eq!(o.input.as_deref(), Some("/dev/null"));
    }

    #[test]
    fn options_without_effect_here_are_accepted_and_listed() {
        let o = parse(
            "#!/bin/sh\n#SBATCH --cpu-freq=high --mem-bind=local\n",
            "-v",
        )
        .unwrap();
        assert_eq!(o.ignored, vec!["cpu-freq", "mem-bind", "verbose"]);
    }

    #[test]
    fn sluice_options_stay_on_the_command_line() {
        assert!(parse("#!/bin/sh\n#SBATCH --state-dir=/tmp\n", "").is_err());
        let o = parse("#!/bin/sh\n", "--state-dir=/tmp/s --json").unwrap();
        assert_eq!(o.state_dir, Some(PathBuf::from("/tmp/s")));
        assert!(o.json);
    }
}
