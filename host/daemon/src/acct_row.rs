//! An ended job as the accounting store records it: the journal's [`JobRecord`] turned into
//! sacct's fields (TRES strings, hostlist, exit code and signal, elapsed and CPU time), one row
//! per run (a requeued run is a row of its own, as sacct -D shows it).

use sluice_api::{AcctJob, AcctStep, SubmitRequest};

use crate::image::{EarlierRun, JobRecord, State};

/// What the accounting store lacks of `job`: each run that ended in a requeue, then the job
/// itself if it has ended and is not marked accounted.
pub fn acct_runs(job: &JobRecord) -> Vec<AcctJob> {
    let mut rows: Vec<AcctJob> = job.runs.iter().map(|r| earlier_run(job, r)).collect();
    if job.state.is_final() && !job.accounted {
        rows.push(acct_job(job));
    }
    rows
}

/// A run that ended in a requeue: the job as it was then, in Slurm's REQUEUED state, its steps
/// still open cut short (CANCELLED).
fn earlier_run(job: &JobRecord, run: &EarlierRun) -> AcctJob {
    let then = JobRecord {
        state: State::Cancelled,
        partition: run.partition.clone(),
        nodes: run.nodes.clone(),
        cpus: run.cpus,
        account: run.account.clone(),
        start_time: Some(run.start),
        end_time: Some(run.end),
        exit_code: None,
        signal: None,
        reason: Some(run.reason.clone()),
        restarts: run.restarts,
        steps: run.steps.clone(),
        runs: Vec::new(),
        ..job.clone()
    };
    AcctJob {
        state: "REQUEUED".into(),
        ..acct_job(&then)
    }
}

/// The accounting record of `job`, which has ended.
pub fn acct_job(job: &JobRecord) -> AcctJob {
    let req = &job.request;
    let ran = job.start_time.is_some() && !job.nodes.is_empty();
    let end = job.end_time.unwrap_or(job.submit_time);
    let elapsed = job.start_time.map_or(0, |s| (end - s).max(0));
    let nnodes = job.nodes.len() as u32;
    let req_nodes = req.min_nodes.unwrap_or(1).max(1);
    let req_cpus = requested_cpus(req);
    let ncpus = if ran { job.cpus } else { req_cpus };
    // A signal that ended the batch script is ExitCode 0:SIG, as sacct shows it.
    let (exit_code, signal) = match job.signal {
        Some(sig) => (0, sig),
        None => (job.exit_code.unwrap_or(0), 0),
    };
    AcctJob {
        job_id: job.id,
        array_job_id: job.array.map(|a| a.job_id),
        array_task_id: job.array.map(|a| a.task_id),
        name: req.job_name(),
        user: job.user.clone(),
        uid: job.uid,
        account: job.account.clone().unwrap_or_default(),
        partition: job.partition.clone().unwrap_or_else(|| {
            req.partition
                .as_deref()
                .unwrap_or_default()
                .split(',')
                .next()
                .unwrap_or_default()
                .to_string()
        }),
        qos: req.qos.clone().unwrap_or_else(|| "normal".into()),
        state: job.state.as_str().to_string(),
        exit_code,
        signal,
        submit: job.submit_time,
        eligible: job.submit_time.max(req.begin.unwrap_or(job.submit_time)),
        start: job.start_time,
        end,
        elapsed,
        time_limit: req.time_limit,
        req_tres: tres(req, req_cpus, req_nodes),
        alloc_tres: if ran {
            tres(req, job.cpus, nnodes)
        } else {
            String::new()
        },
        nodes: sluice_hostlist::compress(&job.nodes),
        nnodes,
        ncpus,
        cpu_time: elapsed * ncpus as i64,
        work_dir: req.workdir.clone(),
        restarts: job.restarts,
        reason: job.reason.clone(),
        steps: job.steps.iter().map(|s| step(job, s)).collect(),
    }
}

/// A step's record; a step still open when its job ended ends with the job's state.
fn step(job: &JobRecord, s: &sluice_api::StepRecord) -> AcctStep {
    let state = match s.exit_code {
        Some(0) => State::Completed,
        Some(_) => State::Failed,
        None if job.state == State::Completed || job.state == State::Failed => State::Cancelled,
        None => job.state,
    };
    AcctStep {
        step_id: s.id,
        name: s.name.clone(),
        state: state.as_str().to_string(),
        exit_code: s.exit_code.unwrap_or(0),
        start: s.start,
        end: s.end.or(job.end_time).unwrap_or(s.start),
    }
}

/// CPUs the request asks for: tasks × CPUs per task (sbatch's defaults, 1 and 1).
fn requested_cpus(req: &SubmitRequest) -> u64 {
    let tasks = req
        .ntasks
        .or(req.ntasks_per_node.map(|t| t * req.min_nodes.unwrap_or(1)))
        .unwrap_or(1);
    u64::from(tasks.max(1)) * u64::from(req.cpus_per_task.unwrap_or(1).max(1))
}

/// Slurm's TRES string for `cpus` CPUs on `nodes` nodes of this request:
/// `cpu=4,mem=4000M,node=1,gres/gpu=2` (memory and GPUs only when the request names them).
fn tres(req: &SubmitRequest, cpus: u64, nodes: u32) -> String {
    let mut parts = vec![format!("cpu={cpus}")];
    let mem = req
        .mem_mb
        .map(|m| m * u64::from(nodes))
        .or(req.mem_per_cpu_mb.map(|m| m * cpus));
    if let Some(mem) = mem.filter(|m| *m > 0) {
        parts.push(format!("mem={mem}M"));
    }
    parts.push(format!("node={nodes}"));
    let gpus = gpu_count(req, nodes);
    if gpus > 0 {
        parts.push(format!("gres/gpu={gpus}"));
    }
    parts.join(",")
}

/// GPUs asked for by `--gpus`, `--gpus-per-node` or `--gres=gpu…`, in that order.
fn gpu_count(req: &SubmitRequest, nodes: u32) -> u64 {
    // `2`, `a100:2`: the count is the last field.
    let count = |text: &str| {
        text.rsplit(':')
            .next()
            .and_then(|c| c.trim().parse::<u64>().ok())
    };
    if let Some(n) = req.gpus.as_deref().and_then(count) {
        return n;
    }
    if let Some(n) = req.gpus_per_node.as_deref().and_then(count) {
        return n * u64::from(nodes);
    }
    req.gres
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .filter(|g| g.trim() == "gpu" || g.trim().starts_with("gpu:"))
        .map(|g| {
            if g.trim() == "gpu" {
                1
            } else {
                count(g).unwrap_or(1)
            }
        })
        .sum::<u64>()
        * u64::from(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(state: State) -> JobRecord {
        let request = SubmitRequest {
            name: Some("sim".into()),
            ntasks: Some(2),
            cpus_per_task: Some(2),
            mem_mb: Some(1000),
            gres: Some("gpu:a100:2".into()),
            time_limit: Some(600),
            workdir: "/home/ann".into(),
            qos: Some("high".into()),
            begin: Some(130),
            ..SubmitRequest::default()
        };
        JobRecord {
            id: 7,
            uid: 1001,
            user: "ann".into(),
            request,
            submit_time: 100,
            state,
            hold: None,
            partition: Some("batch".into()),
            nodes: vec!["n1".into(), "n2".into()],
            cpus: 8,
            account: Some("phys".into()),
            start_time: Some(200),
            end_time: Some(290),
            exit_code: Some(3),
            signal: None,
            reason: None,
            cancel_requested: false,
            restarts: 1,
            steps: vec![sluice_api::StepRecord {
                id: 0,
                name: "srun".into(),
                start: 210,
                end: None,
                exit_code: None,
            }],
            accounted: false,
            array: None,
            unlimited_while_running: false,
            runs: Vec::new(),
            stored: false,
        }
    }

    #[test]
    fn each_requeued_run_is_a_row_before_the_job_s_own() {
        let mut j = ended(State::Completed);
        j.restarts = 1;
        j.runs = vec![EarlierRun {
            restarts: 0,
            start: 150,
            end: 180,
            partition: Some("debug".into()),
            nodes: vec!["n9".into()],
            cpus: 2,
            account: Some("phys".into()),
            reason: "requeued".into(),
            steps: j.steps.clone(),
        }];
        let rows = acct_runs(&j);
        let brief: Vec<_> = rows
            .iter()
            .map(|r| (r.restarts, r.state.as_str(), r.nodes.as_str(), r.elapsed))
            .collect();
        assert_eq!(
            brief,
            vec![(0, "REQUEUED", "n9", 30), (1, "COMPLETED", "n[1-2]", 90)]
        );
        assert_eq!(
            (rows[0].partition.as_str(), rows[0].cpu_time),
            ("debug", 60)
        );
        assert_eq!(rows[0].steps[0].state, "CANCELLED");
        // Stored already: only runs not yet stored are offered.
        j.accounted = true;
        j.runs.clear();
        assert!(acct_runs(&j).is_empty());
        j.state = State::Pending;
        assert!(acct_runs(&j).is_empty());
    }

    #[test]
    fn an_array_task_keeps_its_array_and_index() {
        let mut j = ended(State::Completed);
        j.array = Some(sluice_api::ArrayMember {
            job_id: 5,
            task_id: 3,
            throttle: 2,
        });
        let a = acct_job(&j);
        assert_eq!((a.array_job_id, a.array_task_id), (Some(5), Some(3)));
        assert_eq!(acct_job(&ended(State::Completed)).array_job_id, None);
    }

    #[test]
    fn a_run_becomes_sacct_s_fields() {
        let a = acct_job(&ended(State::Failed));
        assert_eq!(
            (a.job_id, a.name.as_str(), a.state.as_str()),
            (7, "sim", "FAILED")
        );
        assert_eq!((a.exit_code, a.signal), (3, 0));
        assert_eq!((a.elapsed, a.cpu_time, a.ncpus), (90, 720, 8));
        assert_eq!((a.eligible, a.start, a.end), (130, Some(200), 290));
        assert_eq!(a.req_tres, "cpu=4,mem=1000M,node=1,gres/gpu=2");
        assert_eq!(a.alloc_tres, "cpu=8,mem=2000M,node=2,gres/gpu=4");
        assert_eq!((a.nodes.as_str(), a.nnodes), ("n[1-2]", 2));
        assert_eq!((a.qos.as_str(), a.account.as_str()), ("high", "phys"));
        // The open step ended with its job, which failed on its own: the step was cut short.
        assert_eq!(a.steps[0].state, "CANCELLED");
        assert_eq!(a.steps[0].end, 290);
    }

    #[test]
    fn a_signalled_end_is_exit_code_zero_and_the_signal() {
        let mut j = ended(State::Cancelled);
        j.exit_code = None;
        j.signal = Some(15);
        let a = acct_job(&j);
        assert_eq!((a.exit_code, a.signal), (0, 15));
        assert_eq!(a.steps[0].state, "CANCELLED");
    }

    #[test]
    fn a_job_that_never_ran_has_no_allocation() {
        let mut j = ended(State::Cancelled);
        j.start_time = None;
        j.nodes.clear();
        j.cpus = 0;
        let a = acct_job(&j);
        assert_eq!((a.elapsed, a.cpu_time, a.ncpus, a.nnodes), (0, 0, 4, 0));
        assert_eq!(a.alloc_tres, "");
        assert_eq!(a.nodes, "");
    }
}
