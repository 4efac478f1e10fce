//! Shadow evaluation: a priority or selection candidate, loaded off the driver thread, runs beside
//! the active policy on every pass and never acts; its reports say how often and where it would
//! have decided differently.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::thread::JoinHandle;

use sluice_api::{
    PluginOrigin, PriorityShadowReport, SelectionShadowReport, ShadowReports, ShadowStarted,
};
use sluice_engine::JobState;
use sluice_policy::{NodeTable, PlaceMode, PluginKind};
use sluice_runtime::backend::{PriorityBackend, SelectionBackend};
use sluice_runtime::{LoadError, Loaded};
use tokio::sync::oneshot;

use super::recording::{Recorder, SelectionCall};
use super::{Driver, Replies};
use crate::api::{ApiError, ApiResult, answer, plugin_kind};
use crate::image::{PluginChoice, Record};

/// Placements compared per pass at most: each costs the candidate a fresh table, so a pass that
/// starts thousands of jobs is sampled rather than doubling the driver's work.
const MAX_COMPARED_PER_PASS: usize = 256;

/// Differences kept in a report.
const KEPT: usize = 10;

/// The running shadows (at most one per kind) and the candidate being loaded.
pub(super) struct Shadows {
    priority: Option<PriorityShadow>,
    selection: Option<SelectionShadow>,
    loading: Option<Loading>,
    recorder: Arc<Recorder>,
}

struct Loading {
    kind: PluginKind,
    file: String,
    settings: BTreeMap<String, String>,
    handle: JoinHandle<Result<Loaded, LoadError>>,
    reply: oneshot::Sender<ApiResult>,
}

struct PriorityShadow {
    backend: Box<dyn PriorityBackend>,
    report: PriorityShadowReport,
}

struct SelectionShadow {
    backend: Box<dyn SelectionBackend>,
    report: SelectionShadowReport,
}

impl Shadows {
    /// No shadow; `recorder` is the one the engine's selection adapter writes to.
    pub(super) fn new(recorder: Arc<Recorder>) -> Self {
        Self {
            priority: None,
            selection: None,
            loading: None,
            recorder,
        }
    }

    /// Whether any shadow runs.
    pub(super) fn active(&self) -> bool {
        self.priority.is_some() || self.selection.is_some()
    }

    /// Whether a candidate is being loaded (the driver then polls more often).
    pub(super) fn loading(&self) -> bool {
        self.loading.is_some()
    }

    /// Kind and candidate of every running shadow.
    pub(super) fn list(&self) -> Vec<PluginOrigin> {
        let p = self.priority.as_ref().map(|s| PluginOrigin {
            kind: "priority".into(),
            origin: s.report.origin.clone(),
        });
        let s = self.selection.as_ref().map(|s| PluginOrigin {
            kind: "selection".into(),
            origin: s.report.origin.clone(),
        });
        p.into_iter().chain(s).collect()
    }

    fn report(&self) -> ShadowReports {
        ShadowReports {
            priority: self.priority.as_ref().map(|s| s.report.clone()),
            selection: self.selection.as_ref().map(|s| s.report.clone()),
        }
    }
}

impl Driver {
    /// `plugin shadow KIND FILE`: loads the candidate on its own thread and answers once it runs
    /// (or with its load error); scheduling goes on meanwhile.
    pub(super) fn shadow_start_deferred(
        &mut self,
        kind: &str,
        file: &str,
        settings: &BTreeMap<String, String>,
        reply: oneshot::Sender<ApiResult>,
    ) {
        let kind = match plugin_kind(kind) {
            Ok(PluginKind::Gres | PluginKind::Hres) => {
                let _ = reply.send(Err(ApiError::bad(format!(
                    "plugin shadow {kind}: only priority and selection candidates can be shadowed"
                ))));
                return;
            }
            Ok(k) => k,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        if let Some(l) = &self.plugins.shadows.loading {
            let _ = reply.send(Err(ApiError::conflict(format!(
                "plugin shadow {}: {} {} is still loading; try again when it answers",
                kind.name(),
                l.kind.name(),
                l.file
            ))));
            return;
        }
        let spec = self.spec_for(kind, file, settings);
        let loader = self.plugins.loader.clone();
        let handle = std::thread::spawn(move || loader.load(&spec));
        self.plugins.shadows.loading = Some(Loading {
            kind,
            file: file.to_string(),
            settings: settings.clone(),
            handle,
            reply,
        });
    }

    /// Between passes: starts a candidate whose load finished, and adds the answer to
    /// `replies`, sent once the batch's journal sync has made the start durable.
    pub(super) fn shadow_loaded(&mut self, replies: &mut Replies) {
        let shadows = &mut self.plugins.shadows;
        if !shadows
            .loading
            .as_ref()
            .is_some_and(|l| l.handle.is_finished())
        {
            return;
        }
        let l = shadows.loading.take().expect("checked above");
        let what = format!("plugin shadow {} {}", l.kind.name(), l.file);
        let answer = match l.handle.join() {
            Err(_) => Err(ApiError::internal(format!("{what}: the load panicked"))),
            Ok(Err(e)) => Err(ApiError::bad(format!("{what}: {e}"))),
            Ok(Ok(Loaded::Priority(g))) if l.kind == PluginKind::Priority => {
                shadows.priority = Some(PriorityShadow {
                    report: PriorityShadowReport {
                        kind: "priority".into(),
                        origin: g.origin,
                        ..PriorityShadowReport::default()
                    },
                    backend: g.backend,
                });
                answer(&ShadowStarted {
                    shadow: "priority".into(),
                    origin: l.file.clone(),
                })
            }
            Ok(Ok(Loaded::Selection(g))) if l.kind == PluginKind::Selection => {
                shadows.selection = Some(SelectionShadow {
                    report: SelectionShadowReport {
                        kind: "selection".into(),
                        origin: g.origin,
                        ..SelectionShadowReport::default()
                    },
                    backend: g.backend,
                });
                shadows.recorder.set(true);
                answer(&ShadowStarted {
                    shadow: "selection".into(),
                    origin: l.file.clone(),
                })
            }
            Ok(Ok(other)) => Err(ApiError::bad(format!(
                "{what}: it is a {} plugin",
                other.kind().name()
            ))),
        };
        match &answer {
            Err(e) => tracing::warn!("{}", e.message),
            // A restart starts it again (`restore_plugins`).
            Ok(_) => self.commit(Record::ShadowStarted {
                kind: l.kind.name().into(),
                choice: PluginChoice {
                    file: Some(l.file.clone()),
                    settings: l.settings.clone(),
                },
            }),
        }
        replies.push((l.reply, answer));
    }

    /// `plugin shadow report`: both kinds side by side, `null` for one not running.
    pub(super) fn shadow_report(&self) -> Result<ShadowReports, ApiError> {
        if !self.plugins.shadows.active() {
            return Err(ApiError::not_found(
                "plugin shadow report: no shadow is running; start one with `sluice plugin shadow priority|selection FILE`",
            ));
        }
        Ok(self.plugins.shadows.report())
    }

    /// `plugin shadow stop`: stops every shadow and the recording, answering the final reports.
    pub(super) fn shadow_stop(&mut self) -> Result<ShadowReports, ApiError> {
        let report = self.shadow_report()?;
        let shadows = &mut self.plugins.shadows;
        shadows.priority = None;
        shadows.selection = None;
        shadows.recorder.set(false);
        self.commit(Record::ShadowsStopped);
        Ok(report)
    }

    /// After a pass: asks every running candidate what the active policies were asked.
    pub(super) fn shadow_pass(&mut self) {
        if self.plugins.shadows.priority.is_some() {
            self.priority_shadow_pass();
        }
        if self.plugins.shadows.selection.is_some() {
            self.selection_shadow_pass();
        }
    }

    fn node_names(&self, nodes: &[u32]) -> String {
        let names: Vec<&str> = nodes
            .iter()
            .map(|&n| {
                self.cluster
                    .nodes
                    .get(n as usize)
                    .map_or("?", |x| x.name.as_str())
            })
            .collect();
        sluice_hostlist::compress(&names)
    }

    /// Replays the pass's placements to the candidate: for each, the candidate gets the node
    /// table as the active policy saw it at that moment and answers in test mode, so it never
    /// holds state of its own and every comparison starts from the same facts.
    fn selection_shadow_pass(&mut self) {
        let calls = self.plugins.shadows.recorder.take();
        // Allocate-mode placements the engine gave back never happened; leave them out.
        let mut released = vec![false; calls.len()];
        for (i, c) in calls.iter().enumerate() {
            if let SelectionCall::Released(job) = c
                && let Some(j) = (0..i).rev().find(|&j| {
                    matches!(&calls[j], SelectionCall::Placed(r, _) if r.job_id == *job)
                        && !released[j]
                })
            {
                released[j] = true;
            }
        }
        let mut diffs = Vec::new();
        let Some(shadow) = self.plugins.shadows.selection.as_mut() else {
            return;
        };
        let r = &mut shadow.report;
        let mut table: Option<NodeTable> = None;
        let mut compared = 0;
        let mut any = false;
        let mut differing = false;
        for (i, call) in calls.iter().enumerate() {
            match call {
                SelectionCall::Begin(t) => {
                    table = Some(t.clone());
                    compared = 0;
                }
                SelectionCall::Released(_) => {}
                SelectionCall::Placed(..) if released[i] => {}
                SelectionCall::Placed(req, active) => {
                    let Some(t) = table.as_mut() else { continue };
                    any = true;
                    if compared >= MAX_COMPARED_PER_PASS {
                        r.skipped += 1;
                        t.commit(active);
                        continue;
                    }
                    compared += 1;
                    let answer = shadow
                        .backend
                        .begin_pass(t)
                        .and_then(|()| shadow.backend.place(req, PlaceMode::Test));
                    match answer {
                        Err(f) => {
                            r.faults += 1;
                            r.last_fault = Some(f.to_string());
                        }
                        Ok(Some(p)) if t.check_placement(req, &p).is_err() => {
                            r.faults += 1;
                            r.last_fault = t.check_placement(req, &p).err().map(|e| {
                                format!("job {}: placement broke the contract: {e}", req.job_id)
                            });
                        }
                        Ok(candidate) => {
                            r.placements_compared += 1;
                            let same = candidate.as_ref().is_some_and(|p| p.nodes == active.nodes);
                            if !same {
                                differing = true;
                                match &candidate {
                                    Some(_) => r.different_nodes += 1,
                                    None => r.not_placed += 1,
                                }
                                diffs.push((req.job_id, active.nodes.clone(), candidate));
                            }
                        }
                    }
                    t.commit(active);
                }
            }
        }
        if any {
            r.passes += 1;
        }
        if differing {
            r.passes_differing += 1;
        }
        let named: Vec<_> = diffs
            .into_iter()
            .map(|(job, active, candidate)| {
                (
                    self.ids.public(job).unwrap_or(0),
                    self.node_names(&active),
                    candidate.map(|p| self.node_names(&p.nodes)),
                )
            })
            .collect();
        let Some(shadow) = self.plugins.shadows.selection.as_mut() else {
            return;
        };
        let recent = &mut shadow.report.recent;
        recent.extend(named);
        let extra = recent.len().saturating_sub(KEPT);
        recent.drain(..extra);
    }

    /// Asks the priority candidate about the pending jobs the active policy just ranked and
    /// compares the two orders; nothing the candidate says is acted on.
    fn priority_shadow_pass(&mut self) {
        let ctx = self.engine.priority_context();
        let ranked: Vec<_> = self
            .engine
            .pending_ids()
            .filter(|&id| {
                self.engine.job(id).is_some_and(|j| {
                    j.state == JobState::Pending && j.hold.is_none() && !j.priority.is_empty()
                })
            })
            .collect();
        let (t, positions) = self.engine.job_table(&ranked);
        let mut rows = Vec::with_capacity(positions.len());
        let mut active = Vec::with_capacity(positions.len());
        for &(id, pos) in &positions {
            let job = self.engine.job(id).expect("listed above");
            rows.push((id, job.partitions[pos as usize].index()));
            active.push(job.priority[pos as usize]);
        }
        if rows.is_empty() {
            return;
        }
        let Some(shadow) = self.plugins.shadows.priority.as_mut() else {
            return;
        };
        let r = &mut shadow.report;
        r.passes += 1;
        let candidate = match shadow.backend.compute(&ctx, &t) {
            Ok(p) if p.check(rows.len()).is_ok() => p.priority,
            Ok(p) => {
                r.faults += 1;
                if let Err(e) = p.check(rows.len()) {
                    r.last_fault = Some(format!("answer failed the contract check: {e}"));
                }
                return;
            }
            Err(f) => {
                r.faults += 1;
                r.last_fault = Some(f.to_string());
                return;
            }
        };
        let rank = |prio: &[u32]| {
            let mut order: Vec<usize> = (0..prio.len()).collect();
            order.sort_by_key(|&i| (std::cmp::Reverse(prio[i]), t.submit_time[i], t.job_id[i]));
            let mut rank = vec![0; prio.len()];
            for (r, i) in order.into_iter().enumerate() {
                rank[i] = r;
            }
            rank
        };
        let (ra, rc) = (rank(&active), rank(&candidate));
        let mut differ = 0;
        let mut moves = Vec::new();
        for i in 0..rows.len() {
            if ra[i] != rc[i] {
                differ += 1;
                let job = self.ids.public(rows[i].0).unwrap_or(0);
                let part = self.cluster.partitions[rows[i].1].name.clone();
                moves.push((job, part, ra[i], rc[i]));
            }
        }
        r.rows_compared += rows.len() as u64;
        r.rows_differing += differ;
        if differ > 0 {
            r.passes_differing += 1;
        }
        r.largest_moves.extend(moves);
        r.largest_moves
            .sort_by_key(|m| std::cmp::Reverse(m.2.abs_diff(m.3)));
        r.largest_moves.dedup_by_key(|m| (m.0, m.1.clone()));
        r.largest_moves.truncate(KEPT);
    }
}
