//! Owns no state: turns `--gres`, `--gpus` and `--gpus-per-node` into a job's GRES records.
//!
//! Turns `--gres`, `--gpus` and `--gpus-per-node` into a job's GRES records, refusing what no node could hold.

use crate::engine::Engine;
use crate::error::SubmitError;
use crate::gres::job::{GresRecord, JobGres};
use crate::job::JobSpec;

impl Engine {
    /// Resolves a submission's GRES: one record per name and type, with the per-node counts the
    /// selection plugin sees. Unknown names or types, and counts beyond every node's
    /// configuration, are refused here rather than left pending forever.
    pub(crate) fn resolve_gres(&self, spec: &JobSpec) -> Result<JobGres, SubmitError> {
        let (text, wanted) = gres_wanted(spec)?;
        let records = self.gres_records(wanted)?;
        self.check_gres_counts(&records)?;
        Ok(JobGres {
            text: text.join(","),
            records,
        })
    }

    /// One record per name and type of what is wanted (counts of the same pair add up), each
    /// name one the nodes know.
    #[inline]
    fn gres_records(&self, wanted: Vec<Wanted>) -> Result<Vec<GresRecord>, SubmitError> {
        let mut records: Vec<GresRecord> = Vec::new();
        for (name, gres_type, count, per_job) in wanted {
            if count == 0 {
                continue;
            }
            let kind = self
                .nodes
                .gres_kind(&name)
                .ok_or_else(|| SubmitError::UnknownGres(name.clone()))?;
            match records
                .iter_mut()
                .find(|r| r.name == name && r.gres_type == gres_type)
            {
                Some(r) => r.per_node += count,
                None => records.push(GresRecord {
                    name,
                    kind,
                    gres_type,
                    per_node: count,
                    per_job,
                    ..GresRecord::default()
                }),
            }
        }
        Ok(records)
    }

    /// Refuses records no node's configuration could hold: a type no node has, or a count
    /// (of the type, or of the name over its types) beyond every node's.
    #[inline]
    fn check_gres_counts(&self, records: &[GresRecord]) -> Result<(), SubmitError> {
        for r in records {
            let k = r.kind as usize;
            let max = (0..self.nodes.len())
                .map(|n| self.gres.get(n, k).count_of(r.gres_type.as_deref()))
                .max()
                .unwrap_or(0);
            if max == 0 {
                return Err(SubmitError::UnknownGresType {
                    name: r.name.clone(),
                    gres_type: r.gres_type.clone().unwrap_or_default(),
                });
            }
            let same_kind: u64 = records
                .iter()
                .filter(|o| o.kind == r.kind)
                .map(|o| u64::from(o.per_node))
                .sum();
            let max_kind = (0..self.nodes.len())
                .map(|n| self.gres.get(n, k).count())
                .max()
                .unwrap_or(0);
            if u64::from(r.per_node) > max || same_kind > max_kind {
                return Err(SubmitError::GresCount {
                    request: r.spec(),
                    max: if u64::from(r.per_node) > max {
                        max
                    } else {
                        max_kind
                    },
                });
            }
        }
        Ok(())
    }
}

/// A GRES wanted per node: name, type, count, and the count over the job when asked that way.
type Wanted = (String, Option<String>, u32, Option<u32>);

/// The job's GRES request as written (`--gres`, then `--gpus-per-node` and `--gpus`), and what
/// it wants per node; GPU counts given more than one way are refused.
#[inline]
fn gres_wanted(spec: &JobSpec) -> Result<(Vec<String>, Vec<Wanted>), SubmitError> {
    let mut text: Vec<String> = spec
        .gres
        .iter()
        .map(|g| match &g.gres_type {
            Some(t) => format!("{}:{t}:{}", g.name, g.count),
            None => format!("{}:{}", g.name, g.count),
        })
        .collect();
    let mut wanted: Vec<Wanted> = spec
        .gres
        .iter()
        .map(|g| (g.name.clone(), g.gres_type.clone(), g.count, None))
        .collect();
    let typed = |n: u32| match &spec.gpu_type {
        Some(t) => format!("{t}:{n}"),
        None => n.to_string(),
    };
    if let Some(n) = spec.gpus_per_node.filter(|n| *n > 0) {
        if spec.gres.iter().any(|g| g.name == "gpu") {
            return Err(SubmitError::GresConflict(
                "--gres=gpu and --gpus-per-node".into(),
            ));
        }
        text.push(format!("gpus-per-node:{}", typed(n)));
        wanted.push(("gpu".into(), spec.gpu_type.clone(), n, None));
    }
    if let Some(n) = spec.gpus.filter(|n| *n > 0) {
        if spec.gpus_per_node.is_some_and(|g| g > 0) || spec.gres.iter().any(|g| g.name == "gpu") {
            return Err(SubmitError::GresConflict(
                "--gpus with another GPU count".into(),
            ));
        }
        text.push(format!("gpus:{}", typed(n)));
        // Spread evenly over the minimum node count; a remainder rounds up on every node.
        let per_node = n.div_ceil(spec.min_nodes.max(1));
        wanted.push(("gpu".into(), spec.gpu_type.clone(), per_node, Some(n)));
    }
    Ok((text, wanted))
}
