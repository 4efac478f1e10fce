//! `sluice update` (scontrol update), in scontrol's syntax (`JobId=5 TimeLimit=3`,
//! `NodeName=n1 State=DRAIN Reason=…`, `PartitionName=p State=DOWN`) and sluice's older one (`job 5 Key=Value…`,
//! `node NAMES State=…`).

use anyhow::{Context as _, bail};
use sluice_api::{
    Job, JobUpdated, NodeActionDone, NodeActionRequest, NodeStateDone, NodeStateRequest,
    UpdateRequest,
};

use sluice_client::segment;

use super::clock::{Zone, parse_user_time};
use super::daemon_client::{Conn, print_json};
use super::sbatch::values;

/// Arguments of `sluice update`.
#[derive(clap::Args)]
pub struct Args {
    /// `JobId=ID Key=Value…`, `NodeName=NAMES State=… Reason=…`, `PartitionName=P State=…`;
    /// or `job ID Key=Value…`, `node NAMES Key=Value…`. Job keys: TimeLimit (also +N/-N,
    /// UNLIMITED), Priority (0 holds), Nice, Name/JobName, Partition, QOS, NumNodes, BeginTime/StartTime, Dependency, Comment,
    /// Account, ArrayTaskThrottle. Node State: DRAIN, DOWN, RESUME, IDLE, UNDRAIN, FAIL, FUTURE,
    /// NORESP, POWER_UP, POWER_UP_FORCE, POWER_DOWN, POWER_DOWN_ASAP, POWER_DOWN_FORCE (admins
    /// only).
    words: Vec<String>,
    #[command(flatten)]
    conn: Conn,
}

/// What is to be updated, and the remaining `Key=Value` pairs (keys lowercased).
#[derive(Debug, PartialEq, Eq)]
pub enum Target {
    /// A job.
    Job(String, Vec<(String, String)>),
    /// Nodes, as a hostlist.
    Node(String, Vec<(String, String)>),
    /// A partition.
    Partition(String, Vec<(String, String)>),
}

/// Reads the words in either syntax.
pub fn target(words: &[String]) -> anyhow::Result<Target> {
    let (old, rest) = match words.first().map(|w| w.to_ascii_lowercase()).as_deref() {
        Some(w @ ("job" | "node" | "partition")) => {
            let id = words
                .get(1)
                .with_context(|| format!("update {w}: which {w}?"))?;
            (Some((w.to_string(), id.clone())), &words[2..])
        }
        _ => (None, words),
    };
    let mut pairs = Vec::new();
    for p in rest {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("{p}: expected Key=Value"))?;
        pairs.push((k.to_ascii_lowercase(), v.to_string()));
    }
    let take = |pairs: &mut Vec<(String, String)>, key: &str| {
        let i = pairs.iter().position(|(k, _)| k == key)?;
        Some(pairs.remove(i).1)
    };
    let (kind, id) = match old {
        Some(t) => t,
        None => {
            if let Some(id) = take(&mut pairs, "jobid") {
                ("job".into(), id)
            } else if let Some(n) = take(&mut pairs, "nodename") {
                ("node".into(), n)
            } else if let Some(p) = take(&mut pairs, "partitionname") {
                ("partition".into(), p)
            } else {
                bail!("update: expected JobId=, NodeName= or PartitionName= (or job|node ID)");
            }
        }
    };
    Ok(match kind.as_str() {
        "job" => Target::Job(id, pairs),
        "node" => Target::Node(id, pairs),
        _ => Target::Partition(id, pairs),
    })
}

/// The job changes the pairs ask for; `current` is the job's time limit, for `+N`/`-N`.
pub fn job_changes(
    pairs: &[(String, String)],
    current_limit: impl FnOnce() -> anyhow::Result<Option<u64>>,
    now: i64,
    zone: Zone,
) -> anyhow::Result<UpdateRequest> {
    let mut u = UpdateRequest::default();
    let mut current_limit = Some(current_limit);
    for (k, v) in pairs {
        match k.as_str() {
            "timelimit" => {
                let (sign, text) = match v.as_bytes().first() {
                    Some(b'+') => (1, &v[1..]),
                    Some(b'-') if v != "-1" => (-1, &v[1..]),
                    _ => (0, v.as_str()),
                };
                let limit = values::time_limit("time", text).map_err(|_| {
                    anyhow::anyhow!("TimeLimit={v}: Invalid time limit specification")
                })?;
                let Some(secs) = limit else {
                    if sign != 0 {
                        bail!("TimeLimit={v}: Invalid time limit specification");
                    }
                    u.unlimited_time = true;
                    continue;
                };
                u.time_limit = Some(if sign == 0 {
                    secs
                } else {
                    let now_limit = current_limit
                        .take()
                        .map(|f| f())
                        .transpose()?
                        .flatten()
                        .context("TimeLimit: the job has no limit to add to or take from")?;
                    if sign > 0 {
                        now_limit.saturating_add(secs)
                    } else {
                        now_limit.saturating_sub(secs).max(60)
                    }
                });
            }
            "priority" => {
                u.priority = Some(v.parse().with_context(|| {
                    format!("Priority={v}: expected a number (0 holds the job)")
                })?)
            }
            "nice" => {
                u.nice = Some(
                    v.parse()
                        .with_context(|| format!("Nice={v}: expected an integer"))?,
                )
            }
            "name" | "jobname" => u.name = Some(v.clone()),
            "partition" => u.partition = Some(v.clone()),
            "qos" => u.qos = Some(v.clone()),
            "numnodes" | "minnodes" => {
                u.min_nodes = Some(
                    values::nodes(v)
                        .map_err(|e| anyhow::anyhow!("NumNodes={v}: {e}"))?
                        .0,
                )
            }
            "begintime" | "starttime" => {
                u.begin = Some(
                    parse_user_time(v, now, zone)
                        .with_context(|| format!("{k}={v}: Invalid time specification"))?,
                )
            }
            "dependency" => u.dependency = Some(v.clone()),
            "comment" => u.comment = Some(v.clone()),
            "account" => u.account = Some(v.clone()),
            "arraytaskthrottle" => {
                u.array_task_throttle = Some(v.parse().with_context(|| {
                    format!("ArrayTaskThrottle={v}: expected a number of tasks (0: no limit)")
                })?)
            }
            other => bail!(
                "update job: {other} cannot be changed here yet; expected TimeLimit, Priority, Nice, Name, Partition, QOS, NumNodes, BeginTime, Dependency, Comment, Account or ArrayTaskThrottle"
            ),
        }
    }
    Ok(u)
}

/// Where a node update goes: DRAIN and DOWN are the node actions of old; every other state
/// (RESUME, IDLE, UNDRAIN, the POWER_* ones…) goes to the engine's node update.
#[derive(Debug, PartialEq, Eq)]
pub enum NodeChange {
    /// `drain` or `down`, with its reason.
    Action(&'static str, String),
    /// `State=` as scontrol spells it, with the reason (possibly empty).
    State(String, String),
}

/// The node change a `State=` asks for.
pub fn node_change(pairs: &[(String, String)]) -> anyhow::Result<NodeChange> {
    let state = pairs
        .iter()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.to_ascii_uppercase())
        .context("update node: State=DRAIN|DOWN|RESUME|IDLE|UNDRAIN|POWER_UP|POWER_DOWN|POWER_DOWN_ASAP|POWER_DOWN_FORCE is required")?;
    let reason = pairs
        .iter()
        .find(|(k, _)| k == "reason")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let update: sluice_engine::NodeUpdate = state
        .parse()
        .map_err(|e| anyhow::anyhow!("update node: State={state}: {e}"))?;
    if update.needs_reason() && reason.is_empty() {
        bail!("You must specify a reason when DOWNING or DRAINING a node. Request denied");
    }
    Ok(match state.as_str() {
        "DRAIN" => NodeChange::Action("drain", reason),
        "DOWN" => NodeChange::Action("down", reason),
        _ => NodeChange::State(update.to_string(), reason),
    })
}

/// The `State=` a partition update asks for; other keys cannot change here yet.
pub fn partition_state(pairs: &[(String, String)]) -> anyhow::Result<String> {
    let mut state = None;
    for (k, v) in pairs {
        match k.as_str() {
            "state" => state = Some(v.clone()),
            other => bail!("update partition: {other} cannot be changed here yet; expected State"),
        }
    }
    let state = state.context("update partition: State=UP|DOWN|DRAIN|INACTIVE is required")?;
    match sluice_engine::PartitionState::parse(&state) {
        Some(s) => Ok(s.as_str().to_string()),
        None => bail!("update partition: State={state}: expected UP, DOWN, DRAIN or INACTIVE"),
    }
}

/// Runs `sluice update`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut c = args.conn.client();
    match target(&args.words)? {
        Target::Job(id, pairs) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)?
                .as_secs() as i64;
            let path = format!("/v1/jobs/{}", segment(&id));
            let mut reader = args.conn.client();
            let u = job_changes(
                &pairs,
                || Ok(reader.get::<Job>(&path)?.time_limit),
                now,
                Zone::Local,
            )?;
            let answer: JobUpdated = c.post(&format!("{path}/update"), &u)?;
            if args.conn.json {
                print_json(&answer);
            }
        }
        Target::Node(names, pairs) => match node_change(&pairs)? {
            NodeChange::Action(action, reason) => {
                let answer: NodeActionDone = c.post(
                    &format!("/v1/nodes/{}/{action}", segment(&names)),
                    &NodeActionRequest { reason },
                )?;
                if args.conn.json {
                    print_json(&answer);
                }
            }
            NodeChange::State(state, reason) => {
                let answer: NodeStateDone = c.post(
                    &format!("/v1/nodes/{}/state", segment(&names)),
                    &NodeStateRequest { state, reason },
                )?;
                if args.conn.json {
                    print_json(&answer);
                }
            }
        },
        Target::Partition(name, pairs) => {
            let state = partition_state(&pairs)?;
            let answer: sluice_api::PartitionUpdated = c.post(
                &format!("/v1/partitions/{}/state", segment(&name)),
                &sluice_api::PartitionStateRequest { state },
            )?;
            if args.conn.json {
                print_json(&answer);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn both_syntaxes_name_the_same_target() {
        let slurm = target(&w("JobId=5 TimeLimit=3")).unwrap();
        let old = target(&w("job 5 TimeLimit=3")).unwrap();
        assert_eq!(slurm, old);
        assert_eq!(
            target(&w("timelimit=3 jobid=5")).unwrap(),
            Target::Job("5".into(), vec![("timelimit".into(), "3".into())])
        );
        assert!(matches!(
            target(&w("NodeName=n[1-2] State=DRAIN Reason=x")).unwrap(),
            Target::Node(n, _) if n == "n[1-2]"
        ));
        assert!(matches!(
            target(&w("PartitionName=debug State=DOWN")).unwrap(),
            Target::Partition(p, _) if p == "debug"
        ));
        assert!(target(&w("TimeLimit=3")).is_err());
    }

    #[test]
    fn job_keys_become_changes() {
        let t = target(&w(
            "JobId=5 TimeLimit=3 Name=x Partition=p QOS=q NumNodes=2-4 Nice=10 Dependency=afterok:4 Comment=c Account=a StartTime=2030-01-01T00:00:00",
        ))
        .unwrap();
        let Target::Job(_, pairs) = t else { panic!() };
        let u = job_changes(&pairs, || Ok(None), 0, Zone::Utc).unwrap();
        assert_eq!(u.time_limit, Some(180));
        assert_eq!(u.name.as_deref(), Some("x"));
        assert_eq!(u.partition.as_deref(), Some("p"));
        assert_eq!(u.qos.as_deref(), Some("q"));
        assert_eq!(u.min_nodes, Some(2));
        assert_eq!(u.nice, Some(10));
        assert_eq!(u.dependency.as_deref(), Some("afterok:4"));
        assert_eq!(u.comment.as_deref(), Some("c"));
        assert_eq!(u.account.as_deref(), Some("a"));
        assert_eq!(u.begin, Some(1_893_456_000));
    }

    #[test]
    fn time_limits_add_and_subtract_from_the_current_one() {
        let pairs = vec![("timelimit".to_string(), "+30".to_string())];
        let u = job_changes(&pairs, || Ok(Some(3600)), 0, Zone::Utc).unwrap();
        assert_eq!(u.time_limit, Some(5400));
        let pairs = vec![("timelimit".to_string(), "-30".to_string())];
        let u = job_changes(&pairs, || Ok(Some(3600)), 0, Zone::Utc).unwrap();
        assert_eq!(u.time_limit, Some(1800));
        let pairs = vec![("timelimit".to_string(), "1-00:00:00".to_string())];
        let u = job_changes(&pairs, || Ok(None), 0, Zone::Utc).unwrap();
        assert_eq!(u.time_limit, Some(86_400));
        let pairs = vec![("timelimit".to_string(), "UNLIMITED".to_string())];
        let u = job_changes(&pairs, || Ok(None), 0, Zone::Utc).unwrap();
        assert_eq!((u.time_limit, u.unlimited_time), (None, true));
        let pairs = vec![("timelimit".to_string(), "+UNLIMITED".to_string())];
        assert!(job_changes(&pairs, || Ok(Some(60)), 0, Zone::Utc).is_err());
    }

    #[test]
    fn priority_is_a_number() {
        let pairs = vec![("priority".to_string(), "5".to_string())];
        let u = job_changes(&pairs, || Ok(None), 0, Zone::Utc).unwrap();
        assert_eq!(u.priority, Some(5));
        let pairs = vec![("priority".to_string(), "high".to_string())];
        assert!(job_changes(&pairs, || Ok(None), 0, Zone::Utc).is_err());
    }

    #[test]
    fn partition_states() {
        let p = |s: &str| {
            let Target::Partition(_, pairs) = target(&w(s)).unwrap() else {
                panic!()
            };
            partition_state(&pairs)
        };
        assert_eq!(p("PartitionName=a State=drain").unwrap(), "DRAIN");
        assert_eq!(p("partition a State=INACTIVE").unwrap(), "INACTIVE");
        assert!(p("PartitionName=a State=SIDEWAYS").is_err());
        assert!(p("PartitionName=a MaxTime=5").is_err());
        assert!(p("PartitionName=a").is_err());
    }

    #[test]
    fn node_states_map_to_actions_and_drain_needs_a_reason() {
        let p = |s: &str| {
            let Target::Node(_, pairs) = target(&w(s)).unwrap() else {
                panic!()
            };
            node_change(&pairs)
        };
        let state = |s: &str, r: &str| NodeChange::State(s.into(), r.into());
        assert_eq!(p("NodeName=n1 State=IDLE").unwrap(), state("RESUME", ""));
        assert_eq!(
            p("NodeName=n1 State=undrain").unwrap(),
            state("UNDRAIN", "")
        );
        assert_eq!(p("node n1 State=RESUME").unwrap(), state("RESUME", ""));
        assert_eq!(
            p("NodeName=n1 State=DRAIN Reason=disk").unwrap(),
            NodeChange::Action("drain", "disk".to_string())
        );
        assert!(
            p("NodeName=n1 State=DOWN")
                .unwrap_err()
                .to_string()
                .starts_with("You must specify a reason")
        );
        assert!(p("NodeName=n1 State=SIDEWAYS").is_err());
    }

    #[test]
    fn power_states_reach_the_engines_node_update() {
        let p = |s: &str| {
            let Target::Node(_, pairs) = target(&w(s)).unwrap() else {
                panic!()
            };
            node_change(&pairs).unwrap()
        };
        let state = |s: &str, r: &str| NodeChange::State(s.into(), r.into());
        assert_eq!(p("NodeName=c[1-4] State=power_up"), state("POWER_UP", ""));
        assert_eq!(
            p("node c1 State=POWER_DOWN_ASAP Reason=retire"),
            state("POWER_DOWN_ASAP", "retire")
        );
        assert_eq!(
            p("NodeName=c1 State=POWER_DOWN_FORCE"),
            state("POWER_DOWN_FORCE", "")
        );
        assert_eq!(p("NodeName=c1 State=POWER_DOWN"), state("POWER_DOWN", ""));
    }
}
