//! sbatch's options in Slurm's order: the script's `#SBATCH` lines, then the `SBATCH_*`
//! variables over them, then the command line over both, into the one [`Options`] value.

use crate::cmd::options::{Command, Context, Found, Options, scan};

/// The options of a script's `#SBATCH` lines, then of the `SBATCH_*` variables in `env` over
/// them, then of the command line over both. `file` names the script in messages.
pub fn read(
    file: &str,
    script: Option<&str>,
    env: &[(&str, Found)],
    command_line: &[Found],
    cx: Context,
) -> Result<Options, String> {
    let mut o = Options::default();
    if let Some(text) = script {
        let words = super::script::directive_words(file, text)?;
        let texts: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
        let scanned = scan::scan(Command::Sbatch, &texts).map_err(|e| {
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
            if matches!(f.spec.long, "state-dir" | "json" | "wrap") {
                return Err(format!(
                    "{file}: --{} is not allowed in #SBATCH lines",
                    f.spec.long
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
    use crate::cmd::clock::Zone;
    use std::path::PathBuf;

    const CX: Context = Context {
        now: 1_795_678_215,
        zone: Zone::Utc,
    };

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn parse(script: &str, cli: &str) -> Result<Options, String> {
        let scanned = scan::scan(Command::Sbatch, &words(cli)).map_err(|e| e.message)?;
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
        let cli = scan::scan(Command::Sbatch, &words("-A cliacct")).unwrap();
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
