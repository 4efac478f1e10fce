//! Owns no state: picks a starting job's devices (`GresPolicy::pick`), commits and releases them.
//!
//! Device choice at job start through `GresPolicy::pick`, commit into node and job state, and release.

use sluice_policy::gres::check_picks;
use sluice_policy::{GresPolicy, PickRequest, Placement};

use crate::engine::Engine;
use crate::gres::job::GresRecord;
use crate::gres::node::GresOnNode;
use crate::job::{CpuIds, JobId, Reason};

/// What a start will take, decided before anything is committed.
#[derive(Clone, Debug, Default)]
pub(crate) struct GresPicks {
    /// Per allocation position: the CPU ids the job gets.
    pub cpu_ids: CpuIds,
    /// Per record (the job's, then any added for `--exclusive`): per position (devices, count).
    pub records: Vec<Vec<(Vec<u32>, u64)>>,
    /// Records added because an exclusive job holds every free device of a name it did not ask for.
    pub extra: Vec<GresRecord>,
}

/// One GRES state change on target `sluice::gres` when `debug` (`EngineConfig::debug_gres`,
/// Slurm's `DebugFlags=GRES`) is on.
fn log_gres(
    debug: bool,
    id: JobId,
    node: &str,
    name: &str,
    devices: &[u32],
    count: u64,
    what: &str,
) {
    if debug {
        tracing::debug!(
            target: "sluice::gres",
            job = id,
            node = %node,
            gres = %name,
            devices = ?devices,
            count,
            "{what}"
        );
    }
}

/// The built-in choice when no policy is configured for a name: devices close to the job's
/// cores first, then the lowest index (as gres/gpu does).
pub(crate) fn builtin_pick(req: &PickRequest) -> Vec<u32> {
    let mut choices: Vec<(bool, u32)> = req
        .free
        .iter()
        .filter_map(|&i| {
            let d = req.devices.iter().find(|d| d.index == i)?;
            let type_ok = req.type_name.is_empty() || d.type_name == req.type_name;
            let close = d.cores.is_empty()
                || req.cores.is_empty()
                || d.cores.iter().any(|c| req.cores.contains(c));
            type_ok.then_some((!close, i))
        })
        .collect();
    choices.sort_unstable();
    choices
        .into_iter()
        .take(req.count as usize)
        .map(|(_, i)| i)
        .collect()
}

impl Engine {
    /// The GRES policy configured for `name`, if any.
    fn gres_policy(&mut self, name: &str) -> Option<&mut (dyn GresPolicy + Send)> {
        self.policies
            .gres
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, p)| &mut **p as &mut (dyn GresPolicy + Send))
    }

    /// Picks the job's devices on every node of `placement`: one batched `pick` per record, each
    /// answer checked (distinct free devices, the right count and type). `Err` leaves the job
    /// pending; a refused answer counts as a GRES fault.
    pub(crate) fn pick_gres(&mut self, id: JobId, p: &Placement) -> Result<GresPicks, Reason> {
        let kinds = self.nodes.table().gres_kinds.len();
        let mut picks = GresPicks {
            cpu_ids: self.lowest_cpu_ids(p),
            ..GresPicks::default()
        };
        let records = self.records_to_hold(id, p, &mut picks.extra);
        if records.is_empty() {
            // No GRES asked or held: the CPU ids are all there is to pick.
            return Ok(picks);
        }
        // Per position and kind: devices picked so far, and the count the placement leaves.
        let mut taken: Vec<Vec<Vec<u32>>> = vec![vec![Vec::new(); kinds]; p.nodes.len()];
        let mut left: Vec<Vec<u64>> = (0..p.nodes.len())
            .map(|i| {
                (0..kinds)
                    .map(|k| u64::from(p.gres.get(i * kinds + k).copied().unwrap_or(0)))
                    .collect()
            })
            .collect();
        for r in &records {
            let got = self.pick_record(r, p, &picks.cpu_ids, &mut taken, &mut left)?;
            picks.records.push(got);
        }
        Ok(picks)
    }

    /// The lowest free CPU ids of each node of the placement, as many as it gives there.
    #[inline]
    fn lowest_cpu_ids(&self, p: &Placement) -> CpuIds {
        let mut cpu_ids =
            CpuIds::with_capacity(p.nodes.len(), p.cpus.iter().map(|&c| c as usize).sum());
        for (&n, &c) in p.nodes.iter().zip(&p.cpus) {
            if p.rows.is_empty() {
                cpu_ids.push_node(self.cpus.lowest_free(n as usize, c));
            } else {
                // CPUs shared with other jobs (OverSubscribe) are nobody's: the job is given
                // the node's lowest ids, which the map does not count as taken.
                cpu_ids.push_node(0..c);
            }
        }
        cpu_ids
    }

    /// The job's GRES records, and one more (also put in `extra`) for each kind the placement
    /// gives more of than the records ask: an exclusive job holds that too.
    #[inline]
    fn records_to_hold(
        &self,
        id: JobId,
        p: &Placement,
        extra: &mut Vec<GresRecord>,
    ) -> Vec<GresRecord> {
        let kinds = self.nodes.table().gres_kinds.len();
        let mut records = self.jobs[&id].gres.records.clone();
        for k in 0..kinds {
            let asked: u32 = records
                .iter()
                .filter(|r| r.kind as usize == k)
                .map(|r| r.per_node)
                .sum();
            let most = (0..p.nodes.len())
                .map(|i| p.gres.get(i * kinds + k).copied().unwrap_or(0))
                .max()
                .unwrap_or(0);
            if most > asked {
                let record = GresRecord {
                    name: self.nodes.table().gres_kinds[k].clone(),
                    kind: k as u32,
                    ..GresRecord::default()
                };
                extra.push(record.clone());
                records.push(record);
            }
        }
        records
    }

    /// Per position of the placement, the devices and count record `r` gets: counted where
    /// the node has no devices, picked by the name's policy (or the built-in choice) among
    /// the free devices not `taken` by an earlier record where it has. `left` is what the
    /// placement still gives per position and kind.
    fn pick_record(
        &mut self,
        r: &GresRecord,
        p: &Placement,
        cpu_ids: &CpuIds,
        taken: &mut [Vec<Vec<u32>>],
        left: &mut [Vec<u64>],
    ) -> Result<Vec<(Vec<u32>, u64)>, Reason> {
        let k = r.kind as usize;
        let mut got: Vec<(Vec<u32>, u64)> = Vec::with_capacity(p.nodes.len());
        let mut requests = Vec::new();
        for (i, &n) in p.nodes.iter().enumerate() {
            let want = if r.per_node == 0 {
                left[i][k]
            } else {
                u64::from(r.per_node)
            };
            let g: &GresOnNode = self.gres.get(n as usize, k);
            if want > left[i][k] {
                return Err(Reason::Resources);
            }
            left[i][k] -= want;
            if g.no_consume {
                got.push((Vec::new(), 0));
            } else if g.has_devices() {
                let free: Vec<u32> = g
                    .free_devices()
                    .into_iter()
                    .filter(|d| !taken[i][k].contains(d))
                    .collect();
                requests.push(PickRequest {
                    node_position: i as u32,
                    count: want as u32,
                    type_name: r.gres_type.clone().unwrap_or_default(),
                    free,
                    cores: self
                        .cpus
                        .cores_of(n as usize, cpu_ids.node(i).unwrap_or(&[])),
                    devices: g.contract_devices(),
                });
                got.push((Vec::new(), want));
            } else {
                if g.free_of(r.gres_type.as_deref()) < want {
                    return Err(Reason::Resources);
                }
                got.push((Vec::new(), want));
            }
        }
        if !requests.is_empty() {
            let answer = self.ask_pick(&r.name, &requests)?;
            for (req, pick) in requests.iter().zip(answer) {
                let i = req.node_position as usize;
                taken[i][k].extend(&pick);
                got[i].0 = pick;
            }
        }
        Ok(got)
    }

    /// The devices name `name`'s policy (or the built-in choice) picks for `requests`, if the
    /// answer passes the contract's checks and gives the types asked for.
    fn ask_pick(&mut self, name: &str, requests: &[PickRequest]) -> Result<Vec<Vec<u32>>, Reason> {
        let answer = match self.gres_policy(name) {
            Some(policy) => policy.pick(requests),
            None => requests.iter().map(builtin_pick).collect(),
        };
        let typed_ok = answer.iter().zip(requests).all(|(pick, req)| {
            req.type_name.is_empty()
                || pick.iter().all(|d| {
                    req.devices
                        .iter()
                        .any(|c| c.index == *d && c.type_name == req.type_name)
                })
        });
        if check_picks(requests, &answer).is_err() || !typed_ok {
            if self.policies.gres.iter().any(|(n, _)| n == name) {
                self.faults.gres += 1;
            }
            return Err(Reason::Resources);
        }
        Ok(answer)
    }

    /// Commits checked picks: CPUs, devices and counts are taken and the job's arrays filled.
    pub(crate) fn commit_gres(&mut self, id: JobId, p: &Placement, picks: GresPicks) {
        let job = self.jobs.get_mut(&id).expect("starting a known job");
        job.gres.records.extend(picks.extra);
        for (i, &n) in p.nodes.iter().enumerate().filter(|_| p.rows.is_empty()) {
            self.cpus
                .take(n as usize, picks.cpu_ids.node(i).unwrap_or(&[]));
        }
        for (r, got) in job.gres.records.iter_mut().zip(picks.records) {
            r.bit_alloc = got.iter().map(|(d, _)| d.clone()).collect();
            r.cnt_node_alloc = got.iter().map(|(_, c)| *c).collect();
            r.bit_step_alloc = vec![Vec::new(); got.len()];
            for (i, (devices, count)) in got.iter().enumerate() {
                let node = p.nodes[i] as usize;
                let g = self.gres.get_mut(node, r.kind as usize);
                if g.no_consume {
                    continue;
                }
                if devices.is_empty() {
                    g.take_count(r.gres_type.as_deref(), *count);
                } else {
                    g.take_devices(id, devices);
                }
                log_gres(
                    self.config.debug_gres,
                    id,
                    &self.nodes.nodes()[node].name,
                    &r.name,
                    devices,
                    *count,
                    "allocated",
                );
            }
        }
        job.cpu_ids = picks.cpu_ids;
    }

    /// Gives back a job's CPUs, devices and counts on the allocation positions in `positions`.
    pub(crate) fn release_gres(&mut self, id: JobId, positions: impl IntoIterator<Item = usize>) {
        let job = self.jobs.get(&id).expect("releasing a known job");
        let Some(alloc) = &job.alloc else { return };
        for i in positions {
            let node = alloc.placement.nodes[i] as usize;
            if let Some(cpu_ids) = job
                .cpu_ids
                .node(i)
                .filter(|_| alloc.placement.rows.is_empty())
            {
                self.cpus.give_back(node, cpu_ids);
            }
            for r in &job.gres.records {
                let devices = r.bit_alloc.get(i).cloned().unwrap_or_default();
                let count = r.cnt_node_alloc.get(i).copied().unwrap_or(0);
                let g = self.gres.get_mut(node, r.kind as usize);
                if g.no_consume || count == 0 {
                    continue;
                }
                if devices.is_empty() {
                    g.give_back(id, &[], &[(r.gres_type.clone(), count)]);
                } else {
                    g.give_back(id, &devices, &[]);
                }
                log_gres(
                    self.config.debug_gres,
                    id,
                    &self.nodes.nodes()[node].name,
                    &r.name,
                    &devices,
                    count,
                    "released",
                );
            }
        }
    }

    /// Forgets a job's GRES allocation after release (end or requeue): the records keep the request.
    pub(crate) fn forget_gres(&mut self, id: JobId) {
        let job = self.jobs.get_mut(&id).expect("a known job");
        job.gres.records.retain(|r| r.per_node > 0);
        job.gres.clear_alloc();
        job.cpu_ids.clear();
    }
}
