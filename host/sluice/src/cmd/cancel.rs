//! `sluice cancel` (scancel): cancel jobs, or signal them with `-s/--signal=NAME|NUMBER`;
//! jobs by id (`123` is every task of array 123, `123_4` and `123_[4-6]` some) and/or by `-u/--user`, `--me`, `-n/--name`, `-p/--partition`, `-t/--state`.

use anyhow::{Context as _, bail};
use sluice_api::{CancelRequest, Job, JobCancelled, JobQuery};
use sluice_client::identity::Identity;
use sluice_client::jobs_path;

use super::daemon_client::{Conn, print_json};
use super::job_arrays::JobRef;
use super::sbatch::values::signal_number;

/// Arguments of `sluice cancel`.
#[derive(clap::Args)]
pub struct Args {
    /// Job ids.
    jobs: Vec<String>,
    /// Send this signal (a name such as USR1 or SIGTERM, or a number) instead of cancelling.
    #[arg(short = 's', long)]
    signal: Option<String>,
    /// Only jobs of these users (comma-separated).
    #[arg(short = 'u', long)]
    user: Option<String>,
    /// Only your own jobs.
    #[arg(long)]
    me: bool,
    /// Only jobs with this name.
    #[arg(short = 'n', long = "name", alias = "jobname")]
    name: Option<String>,
    /// Only jobs in this partition.
    #[arg(short = 'p', long)]
    partition: Option<String>,
    /// Only jobs in this state (PENDING, RUNNING, or their codes PD, R).
    #[arg(short = 't', long = "state")]
    state: Option<String>,
    #[command(flatten)]
    conn: Conn,
}

/// The filters beyond job ids, as scancel applies them.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// `-n`.
    pub name: Option<String>,
    /// `-p`.
    pub partition: Option<String>,
}

impl Filter {
    /// Whether `job` passes.
    pub fn keeps(&self, job: &Job) -> bool {
        self.name.as_ref().is_none_or(|n| job.name == *n)
            && self
                .partition
                .as_ref()
                .is_none_or(|p| job.partition.split(',').any(|q| q == p))
    }
}

/// Runs `sluice cancel`; every job is tried, the first refusal is the error.
pub fn run(args: Args) -> anyhow::Result<()> {
    let signal = args
        .signal
        .as_deref()
        .map(|s| signal_number(s).with_context(|| format!("Invalid job signal: {s}")))
        .transpose()?;
    let refs = args
        .jobs
        .iter()
        .map(|j| JobRef::parse(j))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let user = if args.me {
        Some(Identity::current().user)
    } else {
        args.user.clone()
    };
    let filter = Filter {
        name: args.name.clone(),
        partition: args.partition.clone(),
    };
    let filtered = user.is_some()
        || args.state.is_some()
        || filter.name.is_some()
        || filter.partition.is_some();
    let mut c = args.conn.client();
    let mut ids = Vec::new();
    if !refs.is_empty() {
        // `123` is every task of array 123, `123_[4-6]` some of them: read which jobs they are.
        let live: Vec<Job> = c.get(&jobs_path(&JobQuery::default()))?;
        for (r, text) in refs.iter().zip(&args.jobs) {
            let found = r.resolve(&live);
            if found.is_empty() {
                bail!("Kill job error on job id {text}: Invalid job id specified");
            }
            ids.extend(found);
        }
    }
    if filtered {
        let query = JobQuery {
            user,
            states: args.state.clone(),
            jobs: (!ids.is_empty())
                .then(|| ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",")),
        };
        let jobs: Vec<Job> = c.get(&jobs_path(&query))?;
        ids = jobs
            .iter()
            .filter(|j| filter.keeps(j))
            .map(|j| j.job_id)
            .collect();
    } else if ids.is_empty() {
        bail!("No job identification provided");
    }
    let mut first_err = None;
    let mut out = Vec::new();
    for id in &ids {
        let req = CancelRequest { signal };
        match c.post::<_, JobCancelled>(&format!("/v1/jobs/{id}/cancel"), &req) {
            Ok(v) => out.push(v),
            Err(e) => {
                eprintln!("sluice cancel: error: {e}");
                first_err.get_or_insert(e);
            }
        }
    }
    if args.conn.json {
        print_json(&out);
    }
    match first_err {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_by_name_or_number() {
        assert_eq!(signal_number("USR1"), Some(libc::SIGUSR1));
        assert_eq!(signal_number("SIGTERM"), Some(libc::SIGTERM));
        assert_eq!(signal_number("kill"), Some(libc::SIGKILL));
        assert_eq!(signal_number("9"), Some(9));
        assert_eq!(signal_number("NOPE"), None);
    }

    #[test]
    fn name_and_partition_filters() {
        let j = crate::cmd::queue::tests::job();
        assert!(Filter::default().keeps(&j));
        let by_name = |n: &str| Filter {
            name: Some(n.into()),
            partition: None,
        };
        assert!(by_name("train").keeps(&j));
        assert!(!by_name("other").keeps(&j));
        let by_part = |p: &str| Filter {
            name: None,
            partition: Some(p.into()),
        };
        assert!(by_part("gpu").keeps(&j));
        assert!(!by_part("cpu").keeps(&j));
    }
}
