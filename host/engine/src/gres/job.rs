//! Owns a job's and its steps' GRES records (Slurm's `gres_job_state_t` / `gres_step_state_t`).
//!
//! GRES of a job and its steps (Slurm's `gres_job_state_t` / `gres_step_state_t`): arrays indexed by
//! the node's position in the job's allocation, so step and job bitmaps line up without translation.

use serde::Serialize;

/// One GRES name and type a job asked for, and what it got on each allocated node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GresRecord {
    /// GRES name (`gpu`).
    pub name: String,
    /// Kind index in the node table.
    pub kind: u32,
    /// Type asked for, if any.
    pub gres_type: Option<String>,
    /// Count per node (`--gres`, `--gpus-per-node`, or `--gpus` spread over the minimum node count).
    pub per_node: u32,
    /// Count over the job (`--gpus`), if asked that way.
    pub per_job: Option<u32>,
    /// Per allocated node: device indices held (`gres_bit_alloc[node]`); empty where counted only.
    pub bit_alloc: Vec<Vec<u32>>,
    /// Per allocated node: count held (`gres_cnt_node_alloc[node]`).
    pub cnt_node_alloc: Vec<u64>,
    /// Per allocated node: devices running steps use (`gres_bit_step_alloc[node]`).
    pub bit_step_alloc: Vec<Vec<u32>>,
}

impl GresRecord {
    /// `name[:type]:count` as Slurm prints a per-node request.
    pub fn spec(&self) -> String {
        match &self.gres_type {
            Some(t) => format!("{}:{t}:{}", self.name, self.per_node),
            None => format!("{}:{}", self.name, self.per_node),
        }
    }

    /// Forgets the allocation (job ended or requeued): the arrays are rebuilt at the next start.
    pub fn clear_alloc(&mut self) {
        self.bit_alloc.clear();
        self.cnt_node_alloc.clear();
        self.bit_step_alloc.clear();
    }

    /// Drops the allocation's node positions not in `keep` (ascending), shifting the rest down:
    /// the rebuild Slurm does when a job changes size.
    pub fn keep_positions(&mut self, keep: &[usize]) {
        let pick = |v: &Vec<Vec<u32>>| keep.iter().filter_map(|&p| v.get(p).cloned()).collect();
        self.bit_alloc = pick(&self.bit_alloc);
        self.bit_step_alloc = pick(&self.bit_step_alloc);
        self.cnt_node_alloc = keep
            .iter()
            .filter_map(|&p| self.cnt_node_alloc.get(p).copied())
            .collect();
    }
}

/// A job's GRES: the request as written and the parsed per-type records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct JobGres {
    /// The request as the user gave it (`gpu:a100:1,nic:1`, with `--gpus`/`--gpus-per-node` appended
    /// as `gpus:N` / `gpus-per-node:N`); empty when none.
    pub text: String,
    /// One record per GRES name and type.
    pub records: Vec<GresRecord>,
}

impl JobGres {
    /// Whether the job asked for no GRES.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Forgets every record's allocation.
    pub fn clear_alloc(&mut self) {
        self.records.iter_mut().for_each(GresRecord::clear_alloc);
    }

    /// The devices (name, type, index) the job holds on allocation node `position`.
    pub fn devices_at(&self, position: usize) -> Vec<(&str, u32)> {
        self.records
            .iter()
            .flat_map(|r| {
                r.bit_alloc
                    .get(position)
                    .into_iter()
                    .flatten()
                    .map(move |d| (r.name.as_str(), *d))
            })
            .collect()
    }
}

/// A step's devices of one job record, per job allocation position (empty where the step is not).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StepGres {
    /// Index into the job's records.
    pub record: usize,
    /// Per job allocation position: the devices the step uses (`gres_bit_alloc[node]`).
    pub bit_alloc: Vec<Vec<u32>>,
}
