//! Runs of jobs: the engine's decisions to start and end them, journaled before they are acted
//! on, what the executor launches, and the exits it reports back.

use std::path::PathBuf;
use std::time::Duration;

use sluice_api::job_env::{BatchJob, SlurmEnv};
use sluice_engine::{JobId, JobState};

use super::Driver;
use super::engine::assoc_key;
use super::mail::MailEvent;
use crate::executor::{ExitReport, Launch};
use crate::image::{Record, State};

impl Driver {
    /// Journals a start and returns what to launch; a CONFIGURING job (its nodes booting) is
    /// launched only at its [`Driver::record_ready`].
    pub(super) fn record_start(&mut self, eid: JobId) -> Option<Launch> {
        let id = self.ids.public(eid)?;
        let job = self.engine.job(eid)?.clone();
        let configuring = job.state == JobState::Configuring;
        let alloc = job.alloc.as_ref()?;
        let cluster = self.engine.cluster();
        let nodes: Vec<String> = alloc
            .placement
            .nodes
            .iter()
            .map(|n| cluster.nodes[*n as usize].name.clone())
            .collect();
        let partition = cluster.partitions[alloc.partition.index()].name.clone();
        let account = assoc_key(cluster, job.assoc)
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        let cpus = alloc.cpus();
        let time = job.start_time.unwrap_or_else(|| self.engine.now());
        self.commit(Record::Started {
            id,
            time,
            partition: partition.clone(),
            nodes: nodes.clone(),
            cpus,
            account: account.clone(),
            configuring,
        });
        self.metrics.started += 1;
        self.opts.metrics.job_started();
        tracing::info!(
            "sched: Allocate JobId={id} NodeList={} #CPUs={cpus} Partition={partition}",
            sluice_hostlist::compress(&nodes)
        );
        if let Some(t) = self.accepted_at.remove(&id) {
            let ms = t.elapsed().as_secs_f64() * 1e3;
            self.metrics.start_latency_ms_total += ms;
            self.metrics.start_latency_ms_max = self.metrics.start_latency_ms_max.max(ms);
        }
        if configuring {
            return None;
        }
        self.launch_of(id, eid, time, nodes, partition, account)
    }

    /// Journals that a CONFIGURING job's nodes all booted and returns what to launch.
    pub(super) fn record_ready(&mut self, eid: JobId, time: i64) -> Option<Launch> {
        let id = self.ids.public(eid)?;
        let rec = self.store.image().jobs.get(&id)?;
        if rec.state != State::Configuring {
            return None;
        }
        let (nodes, partition) = (rec.nodes.clone(), rec.partition.clone()?);
        let account = rec.account.clone().unwrap_or_default();
        self.commit(Record::Ready { id, time });
        self.launch_of(id, eid, time, nodes, partition, account)
    }

    /// What to launch for job `id` (engine `eid`), started at `time` on `nodes`.
    fn launch_of(
        &mut self,
        id: u64,
        eid: JobId,
        time: i64,
        nodes: Vec<String>,
        partition: String,
        account: String,
    ) -> Option<Launch> {
        let job = self.engine.job(eid)?.clone();
        let alloc = job.alloc.as_ref()?;
        let cpus_first = alloc.placement.cpus.first().copied().unwrap_or(0);
        let rec = self.store.image().jobs.get(&id)?.clone();
        self.mail(
            id,
            MailEvent::Began {
                queued: (time - rec.submit_time).max(0) as u64,
            },
        );
        let req = &rec.request;
        // Slurm's variables; the submitter's are put under them where the script is read
        // (`job_files::launch_env`), on the launch thread when they are in files.
        let indexes = crate::job_env::array_indexes(req.array.as_deref());
        let state_dir = self.opts.state_dir.to_string_lossy();
        let mut env = SlurmEnv::batch(&BatchJob {
            id,
            request: req,
            array: rec.array.map(|member| (member, indexes.as_slice())),
            user: &rec.user,
            uid: rec.uid,
            nodes: &nodes,
            partition: &partition,
            account: &account,
            cluster: &self.cluster.name,
            tasks: job.spec.tasks,
            cpus_per_task: job.spec.cpus_per_task,
            cpus_on_node: cpus_first,
            cpus_per_node: &sluice_api::node_counts::run_lengths(&alloc.placement.cpus),
            tasks_per_node: &crate::job_env::tasks_per_node(
                job.spec.tasks,
                &alloc.placement.cpus,
                job.spec.cpus_per_task,
                // The count the job was placed by: none when Slurm would have ignored it.
                Some(job.spec.tasks_per_node).filter(|&n| n > 0),
            ),
            start_time: time,
            end_time: job.time_limit.map(|limit| time + limit as i64),
            restarts: rec.restarts,
            submit_host: &sluice_client::identity::host_name(),
            state_dir: &state_dir,
        });
        if let Ok(gres) = self.engine.job_env(eid, 0) {
            env.gres(gres);
        }
        let mut env = env.into_vars();
        let workdir = PathBuf::from(&req.workdir);
        let name = req.job_name();
        let fields = sluice_api::filename::PatternFields {
            job_id: id,
            array_task: rec.array.map(|a| a.task_id),
            array_job: rec.array.map(|a| a.job_id),
            name: &name,
            user: &rec.user,
            node: nodes.first().map_or("", String::as_str),
        };
        // Bounded, so a pattern journaled before submissions were bounded fails its job
        // rather than the daemon.
        let max = self.cfg.max_path_size;
        let pattern = |p: &str| sluice_api::filename::expand_within(p, &fields, &workdir, max);
        // Slurm's default names an array task by its array and index.
        let default_output = if rec.array.is_some() {
            "slurm-%A_%a.out"
        } else {
            "slurm-%j.out"
        };
        let files = (|| {
            let output = pattern(req.output.as_deref().unwrap_or(default_output))?;
            let error = req.error.as_deref().map(pattern).transpose()?;
            let input = req.input.as_deref().map(pattern).transpose()?;
            Ok::<_, sluice_api::filename::PatternTooLong>((output, error, input))
        })();
        let (output, error, input) = match files {
            Ok(files) => files,
            Err(e) => {
                let reason = format!("launch failed: {e}");
                tracing::error!("job {id}: {reason}");
                self.exit_reasons.insert(id, reason);
                let _ = self.engine.job_finished(eid, 1);
                return None;
            }
        };
        let saved = self.store.job_files(id);
        if saved.is_none() {
            env = crate::job_files::launch_env(req.env.clone(), env);
        }
        // What the job holds on its first node, where its cgroup holds it to that.
        let first = alloc.placement.nodes.first().map(|&n| n as usize);
        let other_devices = first
            .and_then(|n| self.engine.cluster().nodes.get(n))
            .map(|node| other_devices(node, &job.gres.devices_at(0)))
            .unwrap_or_default();
        Some(Launch {
            job: id,
            run: rec.restarts,
            uid: rec.uid,
            script: req.script.clone(),
            files: saved,
            output,
            error,
            workdir,
            env,
            nodes,
            time_limit: job.time_limit.map(Duration::from_secs),
            kill_wait: Duration::from_secs(self.cfg.kill_wait),
            warn_signal: req.signal.clone(),
            append: req.open_mode.as_deref() == Some("append"),
            input,
            args: req.script_args.clone(),
            rlimits: req.rlimits.clone(),
            cpu_ids: job.cpu_ids.node(0).map(<[u32]>::to_vec).unwrap_or_default(),
            memory_mb: alloc.placement.memory_mb.first().copied().unwrap_or(0),
            other_devices,
        })
    }

    /// Hands journaled starts to the executor; a job it cannot take fails at once.
    pub(super) fn launch_all(&mut self, launches: Vec<Launch>) {
        for l in launches {
            let job = l.job;
            if let Err(e) = self.exec.launch(l) {
                tracing::error!("job {job}: launch failed: {e}");
                if let Some(eid) = self.ids.engine(job) {
                    let _ = self.engine.job_finished(eid, 127);
                }
            }
        }
    }

    /// Journals an end (or a requeue); returns the job whose processes must be stopped.
    pub(super) fn record_end(
        &mut self,
        eid: JobId,
        state: JobState,
        exit_code: Option<i32>,
        time: i64,
    ) -> Option<u64> {
        let id = self.ids.public(eid)?;
        let (was_running, ended) = self
            .store
            .image()
            .jobs
            .get(&id)
            .map_or((false, false), |j| {
                (j.state.is_active(), j.state.is_final())
            });
        if state == JobState::Pending && !ended {
            // A requeue after a node failure waits (Slurm's 121 s): a restart must not forget it.
            let begin = self
                .engine
                .job(eid)
                .and_then(|j| j.spec.begin_time)
                .filter(|b| *b > time);
            self.commit(Record::Requeued {
                id,
                time,
                reason: "requeued".into(),
                begin,
            });
            self.opts.metrics.job_requeued();
            self.metrics.requeued += 1;
            tracing::info!("Requeuing JobId={id}");
            return was_running.then_some(id);
        }
        // Why its run could not start, if that is how it ended, says more than the exit code.
        let reason = self.exit_reasons.remove(&id).or_else(|| {
            self.engine
                .job(eid)
                .map(|j| j.reason.as_str().to_string())
                .filter(|r| r != "None")
        });
        // An end journaled already (a cancelled pending job, a job start-up could not take back)
        // is not journaled twice; the engine's copy just catches up.
        if !ended {
            let started = self
                .store
                .image()
                .jobs
                .get(&id)
                .and_then(|j| j.start_time)
                .filter(|_| was_running);
            self.commit(Record::Ended {
                id,
                time,
                state: state.into(),
                exit_code,
                reason,
            });
            self.mail(
                id,
                MailEvent::Ended {
                    run: started.map_or(0, |s| (time - s).max(0) as u64),
                    state: state.as_str(),
                    exit_code: exit_code.unwrap_or(0),
                },
            );
        }
        self.metrics.ended += 1;
        self.opts.metrics.job_ended(state.as_str());
        match state {
            JobState::Completed => self.metrics.completed += 1,
            JobState::Cancelled => self.metrics.cancelled += 1,
            _ => self.metrics.failed += 1,
        }
        tracing::info!(
            "_job_complete: JobId={id} {} ExitCode={}",
            state.as_str(),
            exit_code.unwrap_or(0)
        );
        self.accepted_at.remove(&id);
        self.ids.purge_after(time, eid);
        let own_end = matches!(
            state,
            JobState::Completed | JobState::Failed | JobState::OutOfMemory
        );
        (was_running && !own_end).then_some(id)
    }

    /// The executor saw a job's processes end. Reports of an earlier run (a requeued job's
    /// last processes) and of ends already recorded are dropped.
    pub(super) fn exited(&mut self, r: ExitReport) {
        let Some(rec) = self.store.image().jobs.get(&r.job) else {
            return;
        };
        if rec.restarts != r.run
            || rec.state == State::Pending
            || (rec.state.is_final() && rec.exit_code.is_some())
        {
            return;
        }
        if let Some(reason) = &r.reason {
            // A reason may quote a path the user chose.
            tracing::warn!("job {}: {}", r.job, crate::escaped::escaped(reason));
        }
        self.commit(Record::Exited {
            id: r.job,
            code: r.code,
            signal: r.signal,
        });
        if let Some(eid) = self.ids.engine(r.job)
            && self
                .engine
                .job(eid)
                .is_some_and(|j| matches!(j.state, JobState::Running | JobState::Configuring))
        {
            if let Some(reason) = r.reason.clone() {
                self.exit_reasons.insert(r.job, reason);
            }
            // As Slurm: an OOM kill in the job's cgroup ends it OUT_OF_MEMORY, whatever its
            // script then exited with.
            if r.out_of_memory {
                let _ = self.engine.job_out_of_memory(eid, exit_code(&r));
            } else {
                let _ = self.engine.job_finished(eid, exit_code(&r));
            }
        }
    }
}

/// The device files of `node`'s GRES that `held` ((name, index) pairs) does not include.
fn other_devices(node: &sluice_cluster::Node, held: &[(&str, u32)]) -> Vec<PathBuf> {
    node.gres
        .iter()
        .filter(|g| !g.count_only())
        .flat_map(|g| {
            g.devices
                .iter()
                .filter(move |d| !held.contains(&(g.name.as_str(), d.index)))
                .map(|d| PathBuf::from(&d.file))
        })
        .collect()
}

/// The exit code a job's end is recorded with: its own, else 128 + the signal that killed it,
/// else 1 (it never ran).
pub(super) fn exit_code(r: &ExitReport) -> i32 {
    r.code.or(r.signal.map(|s| 128 + s)).unwrap_or(1)
}
