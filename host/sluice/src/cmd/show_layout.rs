//! `scontrol show job|node|partition` in scontrol's layout: `Key=Value` lines grouped as
//! scontrol groups them, times as `2026-11-26T03:10:47`, durations as `1-00:00:00`, lists
//! comma-separated, `(null)` for what is unset.

use std::path::Path;

use sluice_api::filename::{PatternFields, expand_within};
use sluice_api::{Job, NodeReport, PartitionRow};
use sluice_cluster::time::format_duration;

use super::clock::Zone;

/// `(null)` for nothing, as scontrol prints unset strings.
fn or_null(v: Option<&str>) -> &str {
    v.filter(|s| !s.is_empty()).unwrap_or("(null)")
}

/// A time limit: `UNLIMITED` or `[D-]HH:MM:SS`.
pub fn limit(secs: Option<u64>) -> String {
    secs.map_or("UNLIMITED".into(), format_duration)
}

/// A date, or `Unknown` / `N/A` as scontrol prints a missing one.
fn date(t: Option<i64>, zone: Zone, missing: &str) -> String {
    t.filter(|t| *t > 0)
        .map_or(missing.to_string(), |t| zone.iso(t))
}

/// `ExitCode=code:signal`.
fn exit_code(job: &Job) -> String {
    match (job.signal, job.exit_code) {
        (Some(s), _) => format!("0:{s}"),
        (None, Some(c)) => format!("{c}:0"),
        (None, None) => "0:0".into(),
    }
}

/// One job, as `scontrol show job` prints it.
pub fn job(j: &Job, zone: Zone) -> String {
    let r = &j.request;
    let batch_host = j.nodelist.split(',').next().unwrap_or_default();
    let fields = PatternFields {
        job_id: j.job_id,
        array_task: j.array.map(|a| a.task_id),
        array_job: j.array.map(|a| a.job_id),
        name: &j.name,
        user: &j.user,
        node: batch_host,
    };
    let dir = Path::new(&j.workdir);
    // Bounded as the daemon bounds a launch: a pattern journaled before that bound existed is
    // shown as written rather than expanded into gigabytes here.
    let path = |p: &str| {
        expand_within(p, &fields, dir, libc::PATH_MAX as usize)
            .map_or_else(|_| p.to_string(), |x| x.to_string_lossy().into_owned())
    };
    let default_output = if j.array.is_some() {
        "slurm-%A_%a.out"
    } else {
        "slurm-%j.out"
    };
    let stdout = path(r.output.as_deref().unwrap_or(default_output));
    let stderr = r.error.as_deref().map_or(stdout.clone(), path);
    let stdin = r.input.as_deref().map_or("/dev/null".into(), path);
    let tasks = r
        .ntasks
        .or(r.ntasks_per_node.map(|n| n * j.nodes.max(1) as u32))
        .unwrap_or(1);
    let lines = [
        match j.array {
            Some(a) if a.throttle > 0 => format!(
                "JobId={} ArrayJobId={} ArrayTaskId={} ArrayTaskThrottle={} JobName={}",
                j.job_id, a.job_id, a.task_id, a.throttle, j.name
            ),
            Some(a) => format!(
                "JobId={} ArrayJobId={} ArrayTaskId={} JobName={}",
                j.job_id, a.job_id, a.task_id, j.name
            ),
            None => format!("JobId={} JobName={}", j.job_id, j.name),
        },
        format!("UserId={}({})", j.user, j.uid),
        format!(
            "Priority={} Nice={} Account={} QOS={}",
            j.priority,
            r.nice,
            or_null(j.account.as_deref()),
            r.qos.as_deref().unwrap_or("normal")
        ),
        format!(
            "JobState={} Reason={} Dependency={}",
            j.state,
            j.reason,
            or_null(r.dependency.as_deref())
        ),
        format!(
            "Requeue={} Restarts={} BatchFlag=1 Reboot=0 ExitCode={}",
            u8::from(j.requeue),
            j.restarts,
            exit_code(j)
        ),
        format!(
            "RunTime={} TimeLimit={} TimeMin={}",
            format_duration(j.time.max(0) as u64),
            limit(j.time_limit),
            r.time_min.map_or("N/A".into(), format_duration)
        ),
        format!(
            "SubmitTime={} EligibleTime={}",
            zone.iso(j.submit_time),
            date(Some(r.begin.unwrap_or(j.submit_time)), zone, "Unknown")
        ),
        format!(
            "StartTime={} EndTime={} Deadline={}",
            date(j.start_time, zone, "Unknown"),
            date(j.end_time, zone, "Unknown"),
            date(r.deadline, zone, "N/A")
        ),
        format!("Partition={}", j.partition),
        format!(
            "ReqNodeList={} ExcNodeList={}",
            or_null(r.nodelist.as_deref()),
            or_null(r.exclude.as_deref())
        ),
        format!("NodeList={}", or_null(Some(&j.nodelist))),
        format!("BatchHost={}", or_null(Some(batch_host))),
        format!(
            "NumNodes={} NumCPUs={} NumTasks={} CPUs/Task={}",
            j.nodes,
            j.cpus,
            tasks,
            r.cpus_per_task.unwrap_or(1)
        ),
        format!(
            "MinMemoryNode={} MinMemoryCPU={}",
            r.mem_mb.map_or("0".into(), |m| format!("{m}M")),
            r.mem_per_cpu_mb.map_or("0".into(), |m| format!("{m}M"))
        ),
        format!(
            "Features={} OverSubscribe={} Contiguous={} Licenses={}",
            or_null(r.constraint.as_deref()),
            r.oversubscribe_word(),
            u8::from(r.contiguous),
            or_null(r.licenses.as_deref())
        ),
        format!(
            "TresPerJob={} TresPerNode={}",
            or_null(
                r.gpus
                    .as_deref()
                    .map(|g| format!("gres/gpu:{g}"))
                    .as_deref()
            ),
            or_null(r.gres.as_deref().map(|g| format!("gres/{g}")).as_deref())
        ),
        format!("Command={}", or_null(r.command.as_deref())),
        format!("WorkDir={}", j.workdir),
        format!("Comment={}", or_null(r.comment.as_deref())),
        format!("StdErr={stderr}"),
        format!("StdIn={stdin}"),
        format!("StdOut={stdout}"),
        format!(
            "MailUser={} MailType={}",
            or_null(r.mail_user.as_deref()),
            r.mail_type.as_deref().unwrap_or("NONE")
        ),
    ];
    indent(&lines)
}

/// One node, as `scontrol show node` prints it.
pub fn node(n: &NodeReport, zone: Zone) -> String {
    let mut lines = vec![
        format!("NodeName={}", n.node_name),
        format!(
            "CPUAlloc={} CPUEfctv={} CPUTot={}",
            n.cpu_alloc, n.cpu_tot, n.cpu_tot
        ),
        format!("AvailableFeatures={}", or_null(Some(&n.features.join(",")))),
        format!("ActiveFeatures={}", or_null(Some(&n.features.join(",")))),
        format!("Gres={}", or_null(Some(&n.gres))),
        format!("GresUsed={}", or_null(Some(&n.gres_used))),
        format!(
            "NodeAddr={} NodeHostName={}",
            n.node_addr.as_deref().unwrap_or(&n.node_name),
            n.node_hostname.as_deref().unwrap_or(&n.node_name)
        ),
        format!("RealMemory={} AllocMem={}", n.real_memory, n.alloc_mem),
        format!("State={}", n.state),
        format!(
            "Jobs={}",
            or_null(Some(
                &n.jobs
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ))
        ),
        format!(
            "LastBusyTime={} SuspendTime={}",
            date(n.last_busy_time, zone, "Unknown"),
            n.suspend_time
                .map_or_else(|| "INFINITE".to_string(), |t| t.to_string())
        ),
        format!("Reason={}", or_null(n.reason.as_deref())),
    ];
    // sluice's own: why power saving last acted on the node.
    if let Some(why) = &n.power_reason {
        lines.push(format!("PowerReason={why}"));
    }
    indent(&lines)
}

/// One partition, as `scontrol show partition` prints it.
pub fn partition(p: &PartitionRow) -> String {
    let lines = [
        format!("PartitionName={}", p.name),
        format!("State={}", if p.state.is_empty() { "UP" } else { &p.state }),
        format!(
            "Default={} MaxNodes={}",
            if p.default { "YES" } else { "NO" },
            p.max_nodes.map_or("UNLIMITED".into(), |n| n.to_string())
        ),
        format!(
            "MaxTime={} DefaultTime={}",
            limit(p.max_time),
            p.default_time.map_or("NONE".into(), format_duration)
        ),
        format!(
            "PriorityJobFactor={} PriorityTier={} OverSubscribe={}",
            p.priority_job_factor,
            p.priority_tier,
            if p.oversubscribe.is_empty() {
                "NO"
            } else {
                &p.oversubscribe
            }
        ),
        format!("Nodes={}", or_null(Some(&p.nodes))),
        format!("TotalNodes={}", p.total_nodes),
    ];
    indent(&lines)
}

/// The first line flush, the rest indented by three spaces, as scontrol prints a record.
fn indent(lines: &[String]) -> String {
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push_str("   ");
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_api::{HoldBy, JobRequestSummary};

    fn summary() -> JobRequestSummary {
        JobRequestSummary {
            ntasks: Some(8),
            cpus_per_task: Some(2),
            mem_mb: None,
            gres: None,
            gpus: Some("a100:2".into()),
            licenses: None,
            constraint: None,
            dependency: Some("afterok:4".into()),
            nice: 5,
            begin: None,
            qos: None,
            output: Some("/logs/%x-%j.out".into()),
            error: None,
            input: None,
            command: Some("/home/alice/job.sh".into()),
            comment: Some("c".into()),
            time_min: None,
            deadline: None,
            nodelist: None,
            exclude: Some("n3".into()),
            ntasks_per_node: None,
            mem_per_cpu_mb: Some(2048),
            mail_type: Some("END,FAIL".into()),
            mail_user: None,
            exclusive: false,
            contiguous: false,
            oversubscribe: false,
        }
    }

    fn sample() -> Job {
        Job {
            job_id: 5,
            name: "train".into(),
            user: "alice".into(),
            uid: 1000,
            account: None,
            partition: "gpu".into(),
            state: "FAILED".into(),
            st: "F".into(),
            reason: "NonZeroExitCode".into(),
            hold: None::<HoldBy>,
            priority: 0,
            time: 86_400 + 3661,
            time_limit: Some(2 * 86_400),
            nodes: 2,
            nodelist: "n1,n2".into(),
            cpus: 16,
            submit_time: 1_795_678_215,
            start_time: Some(1_795_678_220),
            end_time: Some(1_795_768_281),
            exit_code: Some(0),
            signal: Some(10),
            restarts: 0,
            requeue: true,
            workdir: "/home/alice".into(),
            steps: vec![],
            request: summary(),
            array: None,
        }
    }

    #[test]
    fn a_job_prints_in_scontrols_layout() {
        let text = job(&sample(), Zone::Utc);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "JobId=5 JobName=train");
        assert!(lines[1..].iter().all(|l| l.starts_with("   ")));
        for want in [
            "ExitCode=0:10",
            "RunTime=1-01:01:01 TimeLimit=2-00:00:00 TimeMin=N/A",
            "SubmitTime=2026-11-26T07:30:15",
            "StartTime=2026-11-26T07:30:20 EndTime=2026-11-27T08:31:21 Deadline=N/A",
            "Dependency=afterok:4",
            "ExcNodeList=n3",
            "NodeList=n1,n2",
            "BatchHost=n1",
            "NumNodes=2 NumCPUs=16 NumTasks=8 CPUs/Task=2",
            "MinMemoryCPU=2048M",
            "Command=/home/alice/job.sh",
            "WorkDir=/home/alice",
            "StdOut=/logs/train-5.out",
            "StdErr=/logs/train-5.out",
            "StdIn=/dev/null",
            "Account=(null)",
            "MailType=END,FAIL",
            "TresPerJob=gres/gpu:a100:2",
        ] {
            assert!(text.contains(want), "missing {want} in\n{text}");
        }
    }

    #[test]
    fn partitions_and_limits() {
        let p = PartitionRow {
            name: "debug".into(),
            default: true,
            nodes: "n[1-4]".into(),
            total_nodes: 4,
            max_time: None,
            default_time: Some(3600),
            max_nodes: None,
            priority_tier: 1,
            priority_job_factor: 1,
            state: "DRAIN".into(),
            oversubscribe: "FORCE:4".into(),
        };
        let text = partition(&p);
        assert!(text.starts_with(
            "PartitionName=debug\n   State=DRAIN\n   Default=YES MaxNodes=UNLIMITED\n"
        ));
        assert!(text.contains("MaxTime=UNLIMITED DefaultTime=01:00:00"));
        assert!(text.contains("Nodes=n[1-4]"));
        assert!(
            text.contains("PriorityTier=1 OverSubscribe=FORCE:4"),
            "{text}"
        );
    }
}
