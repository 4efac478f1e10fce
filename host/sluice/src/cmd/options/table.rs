//! The one option table of sbatch, srun and salloc: each option once, with its long name, short
//! letter, whether it takes a value, which commands accept it and whether it acts here, as
//! Slurm's `slurm_opt.c` keeps one table for its commands.

/// A command that reads the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `sluice submit`.
    Sbatch,
    /// `sluice srun` (`sluice run`).
    Srun,
    /// `sluice salloc`.
    Salloc,
}

/// A set of commands: the ones that accept an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Commands(u8);

impl Commands {
    /// The set of `commands`.
    pub const fn of(commands: &[Command]) -> Commands {
        let mut bits = 0;
        let mut i = 0;
        while i < commands.len() {
            bits |= 1 << commands[i] as u8;
            i += 1;
        }
        Commands(bits)
    }

    /// Whether `command` is in the set.
    pub const fn has(self, command: Command) -> bool {
        self.0 & (1 << command as u8) != 0
    }
}

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// A flag.
    Nothing,
    /// A value, as `--opt=v`, `--opt v`, `-Xv` or `-X v`.
    Value,
    /// A value only as `--opt=v` or `-Xv` (getopt's optional argument).
    Optional,
}

/// What an option does in sluice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// It sets a field of [`super::Options`].
    Used,
    /// Accepted with no effect on one machine; the command names it in a note.
    Noted,
}

/// One option of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    /// Long name without dashes.
    pub long: &'static str,
    /// Short letter, if any.
    pub short: Option<char>,
    /// Whether it takes a value.
    pub takes: Takes,
    /// The commands that accept it.
    pub commands: Commands,
    /// Whether it acts here.
    pub effect: Effect,
}

const fn opt(
    long: &'static str,
    short: Option<char>,
    takes: Takes,
    commands: Commands,
    effect: Effect,
) -> Spec {
    Spec {
        long,
        short,
        takes,
        commands,
        effect,
    }
}

use Command::{Salloc, Sbatch, Srun};
use Effect::{Noted, Used};
use Takes::{Nothing as N, Optional as O, Value as V};

const ALL: Commands = Commands::of(&[Sbatch, Srun, Salloc]);
const SBATCH: Commands = Commands::of(&[Sbatch]);
const SRUN_SALLOC: Commands = Commands::of(&[Srun, Salloc]);

/// Every option of sbatch, srun and salloc as their man pages list them (those sluice reads
/// and those it accepts with no effect on one machine), plus sluice's own `--state-dir` and
/// `--json`, sorted by long name. A name that means different things to different commands
/// (`-u`, `-W`) has one line per meaning. salloc accepts srun's options (those that shape a
/// step's tasks with a note that they have no effect).
pub const TABLE: &[Spec] = &[
    opt("account", Some('A'), V, ALL, Used),
    opt("acctg-freq", None, V, ALL, Noted),
    opt("array", Some('a'), V, SBATCH, Used),
    opt("batch", None, V, SBATCH, Noted),
    opt("begin", Some('b'), V, ALL, Used),
    opt("chdir", Some('D'), V, ALL, Used),
    opt("cluster-constraint", None, V, SBATCH, Noted),
    opt("clusters", Some('M'), V, SBATCH, Noted),
    opt("comment", None, V, ALL, Used),
    opt("constraint", Some('C'), V, ALL, Used),
    opt("container", None, V, ALL, Noted),
    opt("contiguous", None, N, ALL, Used),
    opt("core-spec", Some('S'), V, SBATCH, Noted),
    opt("cores-per-socket", None, V, SBATCH, Noted),
    opt("cpu-bind", None, V, SRUN_SALLOC, Noted),
    opt("cpu-freq", None, V, ALL, Noted),
    opt("cpus-per-gpu", None, V, ALL, Used),
    opt("cpus-per-task", Some('c'), V, ALL, Used),
    opt("deadline", None, V, ALL, Used),
    opt("delay-boot", None, V, SBATCH, Noted),
    opt("dependency", Some('d'), V, ALL, Used),
    opt("distribution", Some('m'), V, ALL, Used),
    opt("error", Some('e'), V, ALL, Used),
    opt("exact", None, N, SRUN_SALLOC, Noted),
    opt("exclude", Some('x'), V, ALL, Used),
    opt("exclusive", None, O, ALL, Used),
    opt("export", None, V, ALL, Used),
    opt("export-file", None, V, SBATCH, Used),
    opt("export-none", None, N, SBATCH, Used),
    opt("extra-node-info", Some('B'), V, SBATCH, Noted),
    opt("get-user-env", None, O, SBATCH, Used),
    opt("gid", None, V, SBATCH, Noted),
    opt("gpu-bind", None, V, ALL, Noted),
    opt("gpu-freq", None, V, SBATCH, Noted),
    opt("gpus", Some('G'), V, ALL, Used),
    opt("gpus-per-node", None, V, ALL, Used),
    opt("gpus-per-socket", None, V, SBATCH, Noted),
    opt("gpus-per-task", None, V, ALL, Used),
    opt("gres", None, V, ALL, Used),
    opt("gres-flags", None, V, SBATCH, Noted),
    opt("help", Some('h'), N, ALL, Used),
    opt("hint", None, V, ALL, Used),
    opt("hold", Some('H'), N, ALL, Used),
    opt("ignore-pbs", None, N, SBATCH, Noted),
    opt("immediate", Some('I'), O, SRUN_SALLOC, Noted),
    opt("input", Some('i'), V, ALL, Used),
    opt("job-name", Some('J'), V, ALL, Used),
    opt("jobid", None, V, SRUN_SALLOC, Used),
    opt("json", None, N, SBATCH, Used),
    opt("kill-on-bad-exit", Some('K'), O, SRUN_SALLOC, Noted),
    opt("kill-on-invalid-dep", None, V, SBATCH, Noted),
    opt("label", Some('l'), N, SRUN_SALLOC, Used),
    opt("licenses", Some('L'), V, ALL, Used),
    opt("mail-type", None, V, SBATCH, Used),
    opt("mail-user", None, V, SBATCH, Used),
    opt("mcs-label", None, V, SBATCH, Noted),
    opt("mem", None, V, ALL, Used),
    opt("mem-bind", None, V, ALL, Noted),
    opt("mem-per-cpu", None, V, ALL, Used),
    opt("mem-per-gpu", None, V, ALL, Used),
    opt("mincpus", None, V, SBATCH, Noted),
    opt("mpi", None, V, SRUN_SALLOC, Noted),
    opt("multi-prog", None, N, SRUN_SALLOC, Used),
    opt("network", None, V, ALL, Noted),
    opt("nice", None, O, ALL, Used),
    opt("no-kill", Some('k'), O, ALL, Noted),
    opt("no-requeue", None, N, SBATCH, Used),
    opt("nodefile", Some('F'), V, SBATCH, Used),
    opt("nodelist", Some('w'), V, ALL, Used),
    opt("nodes", Some('N'), V, ALL, Used),
    opt("ntasks", Some('n'), V, ALL, Used),
    opt("ntasks-per-core", None, V, ALL, Noted),
    opt("ntasks-per-gpu", None, V, ALL, Noted),
    opt("ntasks-per-node", None, V, ALL, Used),
    opt("ntasks-per-socket", None, V, ALL, Used),
    opt("open-mode", None, V, ALL, Used),
    opt("output", Some('o'), V, ALL, Used),
    opt("overcommit", Some('O'), N, ALL, Noted),
    opt("overlap", None, N, SRUN_SALLOC, Noted),
    opt("oversubscribe", Some('s'), N, ALL, Used),
    opt("parsable", None, N, SBATCH, Used),
    opt("partition", Some('p'), V, ALL, Used),
    opt("power", None, V, SBATCH, Noted),
    opt("prefer", None, V, SBATCH, Noted),
    opt("priority", None, V, SBATCH, Used),
    opt("profile", None, V, SBATCH, Noted),
    opt("propagate", None, O, ALL, Noted),
    opt("pty", None, N, SRUN_SALLOC, Noted),
    opt("qos", Some('q'), V, ALL, Used),
    opt("quiet", Some('Q'), N, ALL, Noted),
    opt("reboot", None, N, SBATCH, Noted),
    opt("requeue", None, N, SBATCH, Used),
    opt("reservation", None, V, ALL, Used),
    opt("signal", None, V, ALL, Used),
    opt("sockets-per-node", None, V, SBATCH, Noted),
    opt("spread-job", None, N, SBATCH, Noted),
    opt("state-dir", None, V, ALL, Used),
    opt("switches", None, V, SBATCH, Noted),
    opt("test-only", None, N, SBATCH, Used),
    opt("thread-spec", None, V, SBATCH, Noted),
    opt("threads-per-core", None, V, ALL, Noted),
    opt("time", Some('t'), V, ALL, Used),
    opt("time-min", None, V, ALL, Used),
    opt("tmp", None, V, SBATCH, Noted),
    opt("tres-per-task", None, V, SBATCH, Noted),
    opt("uid", None, V, SBATCH, Noted),
    opt("unbuffered", Some('u'), N, SRUN_SALLOC, Noted),
    opt("usage", Some('u'), N, SBATCH, Used),
    opt("usage", None, N, SRUN_SALLOC, Used),
    opt("use-min-nodes", None, N, SBATCH, Noted),
    opt("verbose", Some('v'), N, ALL, Noted),
    opt("version", Some('V'), N, SBATCH, Noted),
    opt("wait", Some('W'), N, SBATCH, Used),
    opt("wait", Some('W'), V, SRUN_SALLOC, Noted),
    opt("wait-all-nodes", None, V, SBATCH, Noted),
    opt("wckey", None, V, ALL, Used),
    opt("wrap", None, V, SBATCH, Used),
];

/// The options `command` accepts, in the table's order.
pub fn of(command: Command) -> impl Iterator<Item = &'static Spec> {
    TABLE.iter().filter(move |s| s.commands.has(command))
}

/// The option `command` knows by the long name `long` (exactly, not a prefix).
pub fn find(command: Command, long: &str) -> Option<&'static Spec> {
    of(command).find(|s| s.long == long)
}

impl Command {
    /// How the user types the command, for messages.
    pub fn invocation(self) -> &'static str {
        match self {
            Sbatch => "sluice submit",
            Srun => "sluice srun",
            Salloc => "sluice salloc",
        }
    }

    /// The command's usage: its operands, then one line per option it accepts
    /// (`  -N, --nodes=VALUE`).
    pub fn usage(self) -> String {
        // salloc's options are srun's, documented on srun's page.
        let (operands, slurm) = match self {
            Sbatch => (
                "[OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]",
                "sbatch",
            ),
            Srun => ("[OPTIONS...] executable [args...]", "srun"),
            Salloc => ("[OPTIONS...] [command [args...]]", "srun"),
        };
        let mut out = format!(
            "Usage: {} {operands}\n\nOptions (as {slurm}'s; see docs/{slurm}.md for what each does here):\n",
            self.invocation()
        );
        out.push_str(&describe(self));
        out
    }
}

/// One line per option `command` accepts (`  -N, --nodes=VALUE`).
fn describe(command: Command) -> String {
    let mut out = String::new();
    for s in of(command) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What each command accepted before the table was one (sbatch's and srun's tables, salloc
    /// reading srun's), as its usage listed it: losing or changing an option fails here.
    const SBATCH_BEFORE: &str = r"
  -A, --account=VALUE
      --acctg-freq=VALUE
  -a, --array=VALUE
      --batch=VALUE
  -b, --begin=VALUE
  -D, --chdir=VALUE
      --cluster-constraint=VALUE
  -M, --clusters=VALUE
      --comment=VALUE
  -C, --constraint=VALUE
      --container=VALUE
      --contiguous
  -S, --core-spec=VALUE
      --cores-per-socket=VALUE
      --cpu-freq=VALUE
      --cpus-per-gpu=VALUE
  -c, --cpus-per-task=VALUE
      --deadline=VALUE
      --delay-boot=VALUE
  -d, --dependency=VALUE
  -m, --distribution=VALUE
  -e, --error=VALUE
  -x, --exclude=VALUE
      --exclusive[=VALUE]
      --export=VALUE
      --export-file=VALUE
      --export-none
  -B, --extra-node-info=VALUE
      --get-user-env[=VALUE]
      --gid=VALUE
      --gpu-bind=VALUE
      --gpu-freq=VALUE
  -G, --gpus=VALUE
      --gpus-per-node=VALUE
      --gpus-per-socket=VALUE
      --gpus-per-task=VALUE
      --gres=VALUE
      --gres-flags=VALUE
  -h, --help
      --hint=VALUE
  -H, --hold
      --ignore-pbs
  -i, --input=VALUE
  -J, --job-name=VALUE
      --json
      --kill-on-invalid-dep=VALUE
  -L, --licenses=VALUE
      --mail-type=VALUE
      --mail-user=VALUE
      --mcs-label=VALUE
      --mem=VALUE
      --mem-bind=VALUE
      --mem-per-cpu=VALUE
      --mem-per-gpu=VALUE
      --mincpus=VALUE
      --network=VALUE
      --nice[=VALUE]
  -k, --no-kill[=VALUE]
      --no-requeue
  -F, --nodefile=VALUE
  -w, --nodelist=VALUE
  -N, --nodes=VALUE
  -n, --ntasks=VALUE
      --ntasks-per-core=VALUE
      --ntasks-per-gpu=VALUE
      --ntasks-per-node=VALUE
      --ntasks-per-socket=VALUE
      --open-mode=VALUE
  -o, --output=VALUE
  -O, --overcommit
  -s, --oversubscribe
      --parsable
  -p, --partition=VALUE
      --power=VALUE
      --prefer=VALUE
      --priority=VALUE
      --profile=VALUE
      --propagate[=VALUE]
  -q, --qos=VALUE
  -Q, --quiet
      --reboot
      --requeue
      --reservation=VALUE
      --signal=VALUE
      --sockets-per-node=VALUE
      --spread-job
      --state-dir=VALUE
      --switches=VALUE
      --test-only
      --thread-spec=VALUE
      --threads-per-core=VALUE
  -t, --time=VALUE
      --time-min=VALUE
      --tmp=VALUE
      --tres-per-task=VALUE
      --uid=VALUE
  -u, --usage
      --use-min-nodes
  -v, --verbose
  -V, --version
  -W, --wait
      --wait-all-nodes=VALUE
      --wckey=VALUE
      --wrap=VALUE
";

    const SRUN_BEFORE: &str = r"
  -A, --account=VALUE
      --acctg-freq=VALUE
  -b, --begin=VALUE
  -D, --chdir=VALUE
      --comment=VALUE
  -C, --constraint=VALUE
      --container=VALUE
      --contiguous
      --cpu-bind=VALUE
      --cpu-freq=VALUE
      --cpus-per-gpu=VALUE
  -c, --cpus-per-task=VALUE
      --deadline=VALUE
  -d, --dependency=VALUE
  -m, --distribution=VALUE
  -e, --error=VALUE
      --exact
  -x, --exclude=VALUE
      --exclusive[=VALUE]
      --export=VALUE
      --gpu-bind=VALUE
  -G, --gpus=VALUE
      --gpus-per-node=VALUE
      --gpus-per-task=VALUE
      --gres=VALUE
  -h, --help
      --hint=VALUE
  -H, --hold
  -I, --immediate[=VALUE]
  -i, --input=VALUE
  -J, --job-name=VALUE
      --jobid=VALUE
  -K, --kill-on-bad-exit[=VALUE]
  -l, --label
  -L, --licenses=VALUE
      --mem=VALUE
      --mem-bind=VALUE
      --mem-per-cpu=VALUE
      --mem-per-gpu=VALUE
      --mpi=VALUE
      --multi-prog
      --network=VALUE
      --nice[=VALUE]
  -k, --no-kill[=VALUE]
  -w, --nodelist=VALUE
  -N, --nodes=VALUE
  -n, --ntasks=VALUE
      --ntasks-per-core=VALUE
      --ntasks-per-gpu=VALUE
      --ntasks-per-node=VALUE
      --ntasks-per-socket=VALUE
      --open-mode=VALUE
  -o, --output=VALUE
  -O, --overcommit
      --overlap
  -s, --oversubscribe
  -p, --partition=VALUE
      --propagate[=VALUE]
      --pty
  -q, --qos=VALUE
  -Q, --quiet
      --reservation=VALUE
      --signal=VALUE
      --state-dir=VALUE
      --threads-per-core=VALUE
  -t, --time=VALUE
      --time-min=VALUE
  -u, --unbuffered
      --usage
  -v, --verbose
  -W, --wait=VALUE
      --wckey=VALUE
";

    #[test]
    fn each_command_accepts_what_it_accepted_before() {
        // The lists start on the line after their opening quote.
        assert_eq!(describe(Sbatch), SBATCH_BEFORE[1..]);
        assert_eq!(describe(Srun), SRUN_BEFORE[1..]);
        assert_eq!(describe(Salloc), SRUN_BEFORE[1..]);
    }

    #[test]
    fn no_command_has_a_long_name_or_a_letter_twice() {
        for command in [Sbatch, Srun, Salloc] {
            let specs: Vec<&Spec> = of(command).collect();
            for (i, a) in specs.iter().enumerate() {
                for b in &specs[i + 1..] {
                    assert_ne!(a.long, b.long, "{command:?}");
                    if a.short.is_some() {
                        assert_ne!(a.short, b.short, "{command:?}: --{} --{}", a.long, b.long);
                    }
                }
            }
        }
    }

    #[test]
    fn the_table_is_sorted_and_every_line_serves_a_command() {
        for pair in TABLE.windows(2) {
            assert!(
                pair[0].long <= pair[1].long,
                "--{} before --{}",
                pair[0].long,
                pair[1].long
            );
        }
        for s in TABLE {
            assert_ne!(s.commands, Commands::of(&[]), "--{}", s.long);
        }
    }

    #[test]
    fn usage_names_the_command_and_its_page() {
        assert!(
            Sbatch
                .usage()
                .starts_with("Usage: sluice submit [OPTIONS(0)...]")
        );
        assert!(
            Salloc
                .usage()
                .contains("\n\nOptions (as srun's; see docs/srun.md")
        );
        assert!(Srun.usage().ends_with(&SRUN_BEFORE[1..]));
    }
}
