//! The one value sbatch's, srun's and salloc's options fill: a field per option that acts
//! here, each value checked as Slurm checks it, the later of two settings winning.

use std::path::PathBuf;

use sluice_api::WarnSignal;

use super::scan::Found;
use super::table::Effect;
use crate::cmd::clock::{Zone, parse_time};
use crate::cmd::sbatch::values::{self, Export};

/// Everything sbatch, srun or salloc was told, after the later of two settings of an option
/// won: one field per option that acts here, whichever commands accept it.
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
    /// `-l/--label` (srun): each task's lines begin with its rank.
    pub label: bool,
    /// `--multi-prog` (srun): the command is a configuration file of each task's program.
    pub multi_prog: bool,
    /// `--jobid` (srun; or `SLURM_JOB_ID`): the allocation a step runs in.
    pub jobid: Option<u64>,
    /// `-h/--help` or `--usage` (sbatch's `-u`).
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
        if f.spec.effect == Effect::Noted {
            self.note(f.spec.long);
            return Ok(());
        }
        let v = f.value.clone().unwrap_or_default();
        let s = || Some(v.clone());
        match f.spec.long {
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
            "jobid" => {
                self.jobid = Some(
                    v.trim()
                        .parse()
                        .map_err(|_| format!("Invalid --jobid specification: {v}"))?,
                )
            }
            "job-name" => self.job_name = s(),
            "json" => self.json = true,
            "label" => self.label = true,
            "licenses" => self.licenses = s(),
            "mail-type" => self.mail_type = Some(values::mail_type(&v)?),
            "mail-user" => self.mail_user = s(),
            "mem" => self.mem = Some(values::megabytes("mem", &v)?),
            "mem-per-cpu" => self.mem_per_cpu = Some(values::megabytes("mem-per-cpu", &v)?),
            "mem-per-gpu" => self.mem_per_gpu = Some(values::megabytes("mem-per-gpu", &v)?),
            "multi-prog" => self.multi_prog = true,
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
            // The table marks every option without an arm as noted; its test keeps it so.
            other => self.note(other),
        }
        Ok(())
    }

    /// Lists an option accepted with no effect here, once.
    fn note(&mut self, long: &'static str) {
        if !self.ignored.contains(&long) {
            self.ignored.push(long);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::options::table::{self, Command, TABLE, Takes};

    const CX: Context = Context {
        now: 1_795_678_215,
        zone: Zone::Utc,
    };

    #[test]
    fn the_options_the_table_says_act_here_have_an_effect_and_the_rest_a_note() {
        for spec in TABLE {
            let mut o = Options::default();
            let value = (spec.takes == Takes::Value).then(|| "1".to_string());
            // A value Slurm refuses still shows the option was read, not noted.
            let read = o.apply(&Found { spec, value }, CX);
            let noted = o.ignored == [spec.long];
            match spec.effect {
                Effect::Used => assert!(
                    !noted && (read.is_err() || o != Options::default()),
                    "--{}",
                    spec.long
                ),
                Effect::Noted => assert!(noted, "--{}", spec.long),
            }
        }
    }

    #[test]
    fn srun_s_own_options_fill_the_same_value() {
        let found = |long: &str, value: Option<&str>| Found {
            spec: table::find(Command::Srun, long).unwrap(),
            value: value.map(String::from),
        };
        let mut o = Options::default();
        for f in [
            found("label", None),
            found("multi-prog", None),
            found("jobid", Some(" 9")),
            found("wait", Some("5")),
            found("nodes", Some("2")),
        ] {
            o.apply(&f, CX).unwrap();
        }
        assert!(o.label && o.multi_prog && !o.wait);
        assert_eq!((o.jobid, o.nodes), (Some(9), Some((2, None))));
        assert_eq!(o.ignored, ["wait"]);
        assert_eq!(
            o.apply(&found("jobid", Some("x")), CX).unwrap_err(),
            "Invalid --jobid specification: x"
        );
    }
}
