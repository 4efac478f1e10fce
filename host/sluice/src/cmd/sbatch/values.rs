//! The values of sbatch's options, read as Slurm reads them; each error is Slurm's message.

use sluice_api::WarnSignal;

/// `-t/--time` and `--time-min` as Slurm's `time_str2mins`: minutes, `MM:SS`, `HH:MM:SS`,
/// `D-HH[:MM[:SS]]`, `UNLIMITED`/`INFINITE`/`-1`; seconds round up to a whole minute.
/// `Ok(None)` is no limit (`0` too).
pub fn time_limit(option: &str, text: &str) -> Result<Option<u64>, String> {
    let bad = || format!("Invalid --{option} specification");
    if sluice_cluster::time::is_infinite(text) {
        return Ok(None);
    }
    let secs = sluice_cluster::time::parse_duration(text).ok_or_else(bad)?;
    let minutes = secs.div_ceil(60);
    Ok((minutes > 0).then_some(minutes * 60))
}

/// A size in MB as Slurm's `str_to_mbytes`: digits, then an optional `K`, `M`, `G` or `T`
/// (only its first letter counts, so `4GB` is 4096).
pub fn megabytes(option: &str, text: &str) -> Result<u64, String> {
    let bad = || format!("Invalid --{option} specification");
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(bad());
    }
    let n: u64 = text[..digits].parse().map_err(|_| bad())?;
    let mb = match text[digits..].chars().next() {
        None | Some('m' | 'M') => Some(n),
        Some('k' | 'K') => Some(n.div_ceil(1024)),
        Some('g' | 'G') => n.checked_mul(1024),
        Some('t' | 'T') => n.checked_mul(1024 * 1024),
        Some(_) => None,
    };
    mb.ok_or_else(bad)
}

/// A positive count (`-n`, `-c`, `--ntasks-per-node`…), as Slurm's `parse_int`.
pub fn count(name: &str, text: &str) -> Result<u32, String> {
    let v: i64 = text
        .trim()
        .parse()
        .map_err(|_| format!("Invalid numeric value \"{text}\" for {name}."))?;
    if v <= 0 {
        return Err(format!("{name} must be greater than zero: {text}"));
    }
    u32::try_from(v).map_err(|_| format!("Invalid numeric value \"{text}\" for {name}."))
}

/// `-N/--nodes`: `N` or `MIN-MAX`.
pub fn nodes(text: &str) -> Result<(u32, Option<u32>), String> {
    let bad = || format!("\"{text}\" is not a valid node count");
    let num = |t: &str| t.trim().parse::<u32>().ok().filter(|n| *n > 0);
    match text.split_once('-') {
        None => Ok((num(text).ok_or_else(bad)?, None)),
        Some((a, b)) => {
            let (min, max) = (num(a).ok_or_else(bad)?, num(b).ok_or_else(bad)?);
            if max < min {
                return Err(format!(
                    "Maximum node count {max} is less than minimum node count {min}"
                ));
            }
            Ok((min, Some(max)))
        }
    }
}

/// `--gpus`, `--gpus-per-node`, `--gpus-per-task`: `[type:]count`.
pub fn gpus(option: &str, text: &str) -> Result<String, String> {
    let count = text.rsplit_once(':').map_or(text, |(_, n)| n);
    match count.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(text.to_string()),
        _ => Err(format!("Invalid --{option} specification")),
    }
}

/// Signal names as `kill -l` spells them, with their numbers on this machine.
const SIGNALS: &[(&str, i32)] = &[
    ("HUP", libc::SIGHUP),
    ("INT", libc::SIGINT),
    ("QUIT", libc::SIGQUIT),
    ("ILL", libc::SIGILL),
    ("TRAP", libc::SIGTRAP),
    ("ABRT", libc::SIGABRT),
    ("BUS", libc::SIGBUS),
    ("FPE", libc::SIGFPE),
    ("KILL", libc::SIGKILL),
    ("USR1", libc::SIGUSR1),
    ("SEGV", libc::SIGSEGV),
    ("USR2", libc::SIGUSR2),
    ("PIPE", libc::SIGPIPE),
    ("ALRM", libc::SIGALRM),
    ("TERM", libc::SIGTERM),
    ("CHLD", libc::SIGCHLD),
    ("CONT", libc::SIGCONT),
    ("STOP", libc::SIGSTOP),
    ("TSTP", libc::SIGTSTP),
    ("TTIN", libc::SIGTTIN),
    ("TTOU", libc::SIGTTOU),
    ("URG", libc::SIGURG),
    ("XCPU", libc::SIGXCPU),
    ("XFSZ", libc::SIGXFSZ),
    ("VTALRM", libc::SIGVTALRM),
    ("PROF", libc::SIGPROF),
    ("WINCH", libc::SIGWINCH),
    ("IO", libc::SIGIO),
    ("PWR", libc::SIGPWR),
    ("SYS", libc::SIGSYS),
];

/// A signal by number or name, with or without `SIG` (`USR1`, `SIGUSR1`, `10`), as Slurm's
/// `sig_name2num`.
pub fn signal_number(text: &str) -> Option<i32> {
    let t = text.trim();
    if let Ok(n) = t.parse::<i32>() {
        return (1..=64).contains(&n).then_some(n);
    }
    let upper = t.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    SIGNALS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// `--signal=[{R|B}:]SIG[@TIME]`; the time defaults to 60 seconds.
pub fn signal(text: &str) -> Result<WarnSignal, String> {
    let bad = || "Invalid --signal specification".to_string();
    let (flags, rest) = match text.split_once(':') {
        Some((f, r)) => (f.to_ascii_uppercase(), r),
        None => (String::new(), text),
    };
    if !flags.chars().all(|c| c == 'R' || c == 'B') || (text.contains(':') && flags.is_empty()) {
        return Err(bad());
    }
    let (sig, secs) = match rest.split_once('@') {
        Some((s, t)) => (s, t.trim().parse::<u32>().map_err(|_| bad())?),
        None => (rest, 60),
    };
    if secs > 0xffff {
        return Err(bad());
    }
    Ok(WarnSignal {
        signal: signal_number(sig).ok_or_else(bad)?,
        seconds_before: secs,
        batch_only: flags.contains('B'),
        reservation: flags.contains('R'),
    })
}

/// `-m/--distribution`: `*|block|cyclic|arbitrary|plane=N`, then up to two of
/// `:*|block|cyclic|fcyclic`, then `,Pack|NoPack`.
pub fn distribution(text: &str) -> Result<String, String> {
    let bad = || "Invalid --distribution specification".to_string();
    let (levels, pack) = match text.split_once(',') {
        Some((l, p)) => (l, Some(p)),
        None => (text, None),
    };
    if let Some(p) = pack
        && !p.eq_ignore_ascii_case("pack")
        && !p.eq_ignore_ascii_case("nopack")
    {
        return Err(bad());
    }
    let mut parts = levels.split(':');
    let first = parts.next().unwrap_or_default().to_ascii_lowercase();
    let first_ok = match first.strip_prefix("plane=") {
        Some(n) => n.parse::<u32>().is_ok_and(|n| n > 0),
        None => ["*", "block", "cyclic", "arbitrary"].contains(&first.as_str()),
    };
    let rest: Vec<String> = parts.map(str::to_ascii_lowercase).collect();
    if !first_ok
        || rest.len() > 2
        || rest
            .iter()
            .any(|p| !["*", "block", "cyclic", "fcyclic"].contains(&p.as_str()))
    {
        return Err(bad());
    }
    Ok(text.to_string())
}

/// `--hint`: comma-separated `compute_bound`, `memory_bound`, `multithread`, `nomultithread`.
pub fn hint(text: &str) -> Result<String, String> {
    const HINTS: [&str; 4] = [
        "compute_bound",
        "memory_bound",
        "multithread",
        "nomultithread",
    ];
    for h in text.split(',') {
        if !HINTS.contains(&h.trim().to_ascii_lowercase().as_str()) {
            return Err(format!(
                "unrecognized --hint argument \"{h}\", see --hint=help"
            ));
        }
    }
    Ok(text.to_string())
}

/// `--mail-type`: comma-separated event names, as sbatch knows them.
pub fn mail_type(text: &str) -> Result<String, String> {
    const TYPES: [&str; 13] = [
        "NONE",
        "BEGIN",
        "END",
        "FAIL",
        "REQUEUE",
        "ALL",
        "INVALID_DEPEND",
        "STAGE_OUT",
        "TIME_LIMIT",
        "TIME_LIMIT_90",
        "TIME_LIMIT_80",
        "TIME_LIMIT_50",
        "ARRAY_TASKS",
    ];
    for t in text.split(',') {
        if !TYPES.contains(&t.trim().to_ascii_uppercase().as_str()) {
            return Err(format!("--mail-type={text} invalid"));
        }
    }
    Ok(text.to_ascii_uppercase())
}

/// `--open-mode`: `append` or `truncate` (their first letter is enough, as in Slurm).
pub fn open_mode(text: &str) -> Result<String, String> {
    match text.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a') => Ok("append".into()),
        Some('t') => Ok("truncate".into()),
        _ => Err("Invalid --open-mode specification".into()),
    }
}

/// What `--export` passes to the job.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Export {
    /// Whether the whole submitting environment goes (`ALL`, the default).
    pub all: bool,
    /// Named variables: from the submitting environment (`None`) or set here (`Some`).
    pub vars: Vec<(String, Option<String>)>,
}

/// `--export=ALL|NONE|[ALL,]VAR[=value],…`.
pub fn export(text: &str) -> Result<Export, String> {
    let mut e = Export::default();
    let mut none = false;
    for item in text.split(',').filter(|i| !i.is_empty()) {
        match item {
            i if i.eq_ignore_ascii_case("ALL") => e.all = true,
            i if i.eq_ignore_ascii_case("NONE") => none = true,
            i => {
                let (name, value) = match i.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (i, None),
                };
                if name.is_empty() {
                    return Err(format!("Invalid --export specification: {item}"));
                }
                e.vars.push((name.to_string(), value));
            }
        }
    }
    if none && (e.all || !e.vars.is_empty()) {
        return Err("--export=NONE cannot be combined with other variables".into());
    }
    Ok(e)
}

/// `--priority`: a number below Slurm's `NO_VAL`, or `TOP` (`NO_VAL - 1`), as sbatch reads it.
pub fn priority(text: &str) -> Result<u32, String> {
    const NO_VAL: u64 = 0xffff_fffe;
    if text.eq_ignore_ascii_case("top") {
        return Ok((NO_VAL - 1) as u32);
    }
    match text.trim().parse::<i64>() {
        Ok(p) if p < 0 => Err("Priority must be >= 0".into()),
        Ok(p) if p as u64 >= NO_VAL => Err(format!("Priority must be < {NO_VAL}")),
        Ok(p) => Ok(p as u32),
        Err(_) => Err(format!("Invalid numeric value \"{text}\" for priority.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_round_up_to_minutes_and_zero_is_unlimited() {
        assert_eq!(time_limit("time", "30"), Ok(Some(1800)));
        assert_eq!(time_limit("time", "1:30"), Ok(Some(120)));
        assert_eq!(time_limit("time", "2:00:00"), Ok(Some(7200)));
        assert_eq!(time_limit("time", "1-0"), Ok(Some(86_400)));
        assert_eq!(time_limit("time", "1-2:30"), Ok(Some(95_400)));
        assert_eq!(time_limit("time", "1-2:30:01"), Ok(Some(95_460)));
        assert_eq!(time_limit("time", "0"), Ok(None));
        assert_eq!(time_limit("time", "UNLIMITED"), Ok(None));
        assert_eq!(
            time_limit("time", "1h"),
            Err("Invalid --time specification".into())
        );
        assert_eq!(
            time_limit("time-min", "x"),
            Err("Invalid --time-min specification".into())
        );
    }

    #[test]
    fn sizes_are_megabytes_with_suffixes() {
        assert_eq!(megabytes("mem", "4000"), Ok(4000));
        assert_eq!(megabytes("mem", "4G"), Ok(4096));
        assert_eq!(megabytes("mem", "4GB"), Ok(4096));
        assert_eq!(megabytes("mem", "1t"), Ok(1_048_576));
        assert_eq!(megabytes("mem", "1025K"), Ok(2));
        assert_eq!(megabytes("mem", "0"), Ok(0));
        assert_eq!(
            megabytes("mem-per-cpu", "lots"),
            Err("Invalid --mem-per-cpu specification".into())
        );
        assert_eq!(
            megabytes("mem", "2X"),
            Err("Invalid --mem specification".into())
        );
    }

    #[test]
    fn node_counts_and_ranges() {
        assert_eq!(nodes("4"), Ok((4, None)));
        assert_eq!(nodes("2-4"), Ok((2, Some(4))));
        assert!(
            nodes("4-2")
                .unwrap_err()
                .starts_with("Maximum node count 2")
        );
        assert_eq!(nodes("x"), Err("\"x\" is not a valid node count".into()));
    }

    #[test]
    fn counts_must_be_positive_numbers() {
        assert_eq!(count("number of tasks", "4"), Ok(4));
        assert!(count("number of tasks", "0").is_err());
        assert_eq!(
            count("number of tasks", "four"),
            Err("Invalid numeric value \"four\" for number of tasks.".into())
        );
    }

    #[test]
    fn signals_take_flags_names_and_times() {
        let s = signal("B:USR1@300").unwrap();
        assert_eq!(
            (s.signal, s.seconds_before, s.batch_only, s.reservation),
            (libc::SIGUSR1, 300, true, false)
        );
        let s = signal("SIGTERM").unwrap();
        assert_eq!(
            (s.signal, s.seconds_before, s.batch_only),
            (libc::SIGTERM, 60, false)
        );
        let s = signal("R:10@5").unwrap();
        assert_eq!((s.signal, s.seconds_before, s.reservation), (10, 5, true));
        assert!(signal("X:USR1").is_err());
        assert!(signal("NOPE").is_err());
        assert!(signal("USR1@soon").is_err());
    }

    #[test]
    fn distributions_hints_mail_types_open_modes() {
        assert!(distribution("cyclic:block,Pack").is_ok());
        assert!(distribution("plane=4").is_ok());
        assert!(distribution("block:fcyclic:cyclic").is_ok());
        assert!(distribution("spiral").is_err());
        assert!(hint("nomultithread").is_ok());
        assert!(hint("fast").unwrap_err().contains("--hint=help"));
        assert_eq!(mail_type("begin,end"), Ok("BEGIN,END".into()));
        assert_eq!(
            mail_type("SOMETIMES"),
            Err("--mail-type=SOMETIMES invalid".into())
        );
        assert_eq!(open_mode("a"), Ok("append".into()));
        assert_eq!(open_mode("truncate"), Ok("truncate".into()));
        assert!(open_mode("x").is_err());
    }

    #[test]
    fn exports() {
        assert_eq!(
            export("ALL"),
            Ok(Export {
                all: true,
                vars: vec![]
            })
        );
        assert_eq!(export("NONE"), Ok(Export::default()));
        assert_eq!(
            export("ALL,FOO=bar,PATH"),
            Ok(Export {
                all: true,
                vars: vec![("FOO".into(), Some("bar".into())), ("PATH".into(), None)]
            })
        );
        assert!(export("NONE,FOO").is_err());
        assert!(export("=x").is_err());
    }

    #[test]
    fn priorities_are_numbers_below_no_val_or_top() {
        assert_eq!(priority("10"), Ok(10));
        assert_eq!(priority("TOP"), Ok(0xffff_fffd));
        assert!(priority("-1").is_err());
        assert!(priority("4294967294").is_err());
        assert!(priority("x").is_err());
    }
}
