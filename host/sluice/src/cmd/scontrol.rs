//! `scontrol` (and `sluice scontrol`): scontrol's command words, keywords abbreviated as
//! scontrol allows, read onto sluice's own commands (`show`, `update`, `hold`, `release`,
//! `reconfigure`, `create`, `delete`, and `hostlist` for `show hostnames|hostlist|hostlistsorted`).

use anyhow::bail;
use clap::FromArgMatches;

use super::{hold, hostlist, reconfigure, reservation, show, update};

/// Arguments of `sluice scontrol`.
#[derive(clap::Args)]
pub struct Args {
    /// A command and its words, as scontrol reads them: `show job 5`, `show node n1`, `show
    /// hostnames node[1-3]` (no list: $SLURM_JOB_NODELIST), `show hostlist|hostlistsorted
    /// NAMES`, `update JobId=5 TimeLimit=10`, `hold 5,6`, `release 5`, `reconfigure`, `create
    /// reservation Key=Value…`, `delete ReservationName=R`, `version`. Options anywhere: -d,
    /// -Q, -v (accepted, no effect), --json, --state-dir DIR.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    words: Vec<String>,
}

/// The command words with scontrol's options taken out; the daemon options go to the command
/// that talks to the daemon.
#[derive(Debug, Default, PartialEq, Eq)]
struct Words {
    /// The keyword and what follows it.
    command: Vec<String>,
    /// `--json` and `--state-dir DIR`, as sluice's commands read them.
    conn: Vec<String>,
}

/// Takes scontrol's options out of `words`, wherever they are (scontrol's getopt permutes).
fn options(words: &[String]) -> anyhow::Result<Words> {
    let mut out = Words::default();
    let mut it = words.iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "--" => {
                out.command.extend(it.by_ref().cloned());
            }
            // Details are always shown; quiet and verbose change nothing sluice prints.
            "-d" | "--details" | "-Q" | "--quiet" | "-v" | "--verbose" | "-a" | "--all" => {}
            "-o" | "--oneliner" => {
                bail!("{w}: one-line records are not printed yet (issue #49); omit it")
            }
            "--json" => out.conn.push(w.clone()),
            "--state-dir" => {
                let Some(dir) = it.next() else {
                    bail!("option '--state-dir' requires an argument")
                };
                out.conn.extend([w.clone(), dir.clone()]);
            }
            _ if w.starts_with("--state-dir=") => out.conn.push(w.clone()),
            _ if w.starts_with('-') && w.len() > 1 && !w.contains('=') => {
                bail!("unrecognized option '{w}'\nTry \"scontrol --help\" for more information")
            }
            _ => out.command.push(w.clone()),
        }
    }
    Ok(out)
}

/// Whether `word` names `keyword` as scontrol matches it: a case-insensitive prefix at least
/// `min` characters long.
fn is(word: &str, keyword: &str, min: usize) -> bool {
    word.len() >= min.min(keyword.len())
        && word.len() <= keyword.len()
        && keyword[..word.len()].eq_ignore_ascii_case(word)
}

/// The scontrol commands sluice has no meaning for yet: named as such, not as invalid.
const NOT_YET: [&str; 14] = [
    "requeue",
    "requeuehold",
    "suspend",
    "resume",
    "listpids",
    "notify",
    "ping",
    "shutdown",
    "takeover",
    "top",
    "wait_job",
    "setdebug",
    "setdebugflags",
    "reboot_nodes",
];

/// A sluice command's `Args` read from `words` (the first is the name in its messages); a
/// misused one exits with clap's message, as the command itself would.
fn parsed<A: clap::Args + FromArgMatches>(
    name: &'static str,
    words: impl IntoIterator<Item = String>,
) -> A {
    let command = A::augment_args(clap::Command::new(name));
    let matches = command
        .try_get_matches_from(std::iter::once(name.to_string()).chain(words))
        .unwrap_or_else(|e| e.exit());
    A::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// The hostlist operation `show ENTITY` names, if it names one.
fn hostlist_operation(entity: &str) -> Option<&'static str> {
    if entity.eq_ignore_ascii_case("hostlist") {
        Some("compress")
    } else if is(entity, "hostlistsorted", 9) {
        Some("sort")
    } else if is(entity, "hostnames", 5) {
        Some("expand")
    } else {
        None
    }
}

/// What `show` shows, by the name `sluice show` knows it, abbreviated as scontrol allows
/// (`show res`, `show part`, `show j`); anything else is passed on for `show` to refuse.
fn shown_entity(entity: &str) -> String {
    const ENTITIES: [(&str, usize, &str); 6] = [
        ("jobs", 1, "job"),
        ("nodes", 1, "node"),
        ("partitions", 2, "partition"),
        ("reservations", 3, "reservation"),
        ("licenses", 2, "license"),
        ("config", 1, "config"),
    ];
    ENTITIES
        .iter()
        .find(|(name, min, _)| is(entity, name, *min))
        .map_or_else(|| entity.to_string(), |(_, _, known)| known.to_string())
}

/// `show hostnames|hostlist|hostlistsorted [LIST]`: the list given, else the job's nodes.
fn show_hostlist(operation: &str, list: &[String]) -> anyhow::Result<()> {
    let list = match list {
        [] => match std::env::var("SLURM_JOB_NODELIST") {
            Ok(nodes) if !nodes.is_empty() => vec![nodes],
            _ => bail!("no hostlist given and SLURM_JOB_NODELIST is not set"),
        },
        given => given.to_vec(),
    };
    let words = std::iter::once(operation.to_string()).chain(list);
    hostlist::run(parsed("scontrol show", words))
}

/// Job ids as `hold` reads them: scontrol takes `5,6 7`.
fn job_ids(words: &[String]) -> Vec<String> {
    words
        .iter()
        .flat_map(|w| w.split(','))
        .filter(|id| !id.is_empty())
        .map(str::to_string)
        .collect()
}

/// The name `delete` is given: `ReservationName=R`, `Reservation=R` or `reservation R`.
fn reservation_name(words: &[String]) -> anyhow::Result<String> {
    let is_reservation = |key: &str| is(key, "reservationname", 3);
    match words {
        [pair] => match pair.split_once('=') {
            Some((key, name)) if is_reservation(key) => Ok(name.to_string()),
            _ => bail!("Proper format is 'delete ReservationName=R'"),
        },
        [what, name] if !what.contains('=') && is_reservation(what) => Ok(name.clone()),
        _ => bail!("Proper format is 'delete ReservationName=R'"),
    }
}

/// Runs `sluice scontrol`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let Words { command, conn } = options(&args.words)?;
    let Some((keyword, rest)) = command.split_first() else {
        bail!("give a command (show, update, hold, release, …): sluice has no interactive scontrol")
    };
    let with_conn = |words: Vec<String>| words.into_iter().chain(conn.iter().cloned());
    let k = keyword.as_str();
    if is(k, "show", 3) {
        let Some((entity, list)) = rest.split_first() else {
            bail!("too few arguments for keyword:{keyword}")
        };
        if let Some(operation) = hostlist_operation(entity) {
            return show_hostlist(operation, list);
        }
        let words = std::iter::once(shown_entity(entity)).chain(list.iter().cloned());
        show::run(parsed("scontrol show", with_conn(words.collect())))
    } else if is(k, "update", 1) {
        if rest.is_empty() {
            bail!("too few arguments for {keyword} keyword");
        }
        update::run(parsed("scontrol update", with_conn(rest.to_vec())))
    } else if ["hold", "holdu", "uhold"]
        .iter()
        .any(|h| k.eq_ignore_ascii_case(h))
    {
        let ids = with_conn(job_ids(rest));
        hold::run(parsed("scontrol hold", ids), hold::Action::Hold)
    } else if is(k, "release", 3) {
        let ids = with_conn(job_ids(rest));
        hold::run(parsed("scontrol release", ids), hold::Action::Release)
    } else if is(k, "reconfigure", 3) {
        reconfigure::run(parsed("scontrol reconfigure", with_conn(Vec::new())))
    } else if is(k, "create", 2) {
        // `create reservation K=V…`, `create res K=V…` or `create ReservationName=R K=V…`.
        let pairs = match rest.split_first() {
            Some((what, pairs)) if !what.contains('=') => {
                if !is(what, "reservation", 3) {
                    bail!("Invalid creation entity: {what}");
                }
                pairs
            }
            _ => rest,
        };
        let words = std::iter::once("reservation".to_string()).chain(pairs.iter().cloned());
        reservation::create(parsed("scontrol create", with_conn(words.collect())))
    } else if is(k, "delete", 1) {
        let words = vec!["reservation".to_string(), reservation_name(rest)?];
        reservation::delete(parsed("scontrol delete", with_conn(words)))
    } else if is(k, "version", 4) {
        println!("sluice {}", env!("CARGO_PKG_VERSION"));
        Ok(())
    } else if NOT_YET.iter().any(|n| k.eq_ignore_ascii_case(n)) {
        bail!("{keyword}: not supported by sluice yet")
    } else {
        bail!("invalid keyword: {keyword}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keywords_abbreviate_as_scontrol_allows() {
        assert!(is("sho", "show", 3) && is("SHOW", "show", 3));
        assert!(!is("sh", "show", 3) && !is("shows", "show", 3));
        assert!(is("u", "update", 1) && is("rec", "reconfigure", 3));
        assert!(!is("re", "reconfigure", 3));
        assert_eq!(hostlist_operation("hostnames"), Some("expand"));
        assert_eq!(hostlist_operation("hostn"), Some("expand"));
        assert_eq!(hostlist_operation("hostlist"), Some("compress"));
        assert_eq!(hostlist_operation("hostlistsorted"), Some("sort"));
        assert_eq!(hostlist_operation("host"), None);
        assert_eq!(shown_entity("res"), "reservation");
        assert_eq!(shown_entity("PART"), "partition");
        assert_eq!(shown_entity("jobs"), "job");
        assert_eq!(shown_entity("jobid"), "jobid");
        assert_eq!(shown_entity("steps"), "steps");
    }

    #[test]
    fn options_come_out_from_anywhere() {
        let w = options(&words(&[
            "-d",
            "show",
            "job",
            "5",
            "--state-dir",
            "/s",
            "--json",
        ]))
        .unwrap();
        assert_eq!(w.command, words(&["show", "job", "5"]));
        assert_eq!(w.conn, words(&["--state-dir", "/s", "--json"]));
        assert!(options(&words(&["--bogus", "show"])).is_err());
        // A value that starts with a dash inside a pair is the command's.
        let w = options(&words(&["update", "JobId=5", "TimeLimit=-5"])).unwrap();
        assert_eq!(w.command.len(), 3);
    }

    #[test]
    fn hold_takes_comma_lists_and_delete_takes_scontrols_forms() {
        assert_eq!(job_ids(&words(&["5,6", "7"])), words(&["5", "6", "7"]));
        assert_eq!(
            reservation_name(&words(&["ReservationName=r"])).unwrap(),
            "r"
        );
        assert_eq!(reservation_name(&words(&["reservation=r"])).unwrap(), "r");
        assert_eq!(
            reservation_name(&words(&["reservation", "r"])).unwrap(),
            "r"
        );
        assert!(reservation_name(&words(&["PartitionName=p"])).is_err());
    }
}
