//! One level's candidates in the auxiliary subsystems, counted per (subsystem, type).

use crate::graph::SubsystemId;

/// One level's auxiliary candidates: per (subsystem, type), qualified and total counts.
#[derive(Debug, Clone, Default)]
pub(crate) struct AuxScores {
    entries: Vec<(SubsystemId, u32, u32, u32)>,
}

impl AuxScores {
    /// The entry of `(s, kind)`, created empty when absent.
    pub(crate) fn entry(&mut self, s: SubsystemId, kind: u32) -> &mut (SubsystemId, u32, u32, u32) {
        let i = match self.entries.iter().position(|e| e.0 == s && e.1 == kind) {
            Some(i) => i,
            None => {
                self.entries.push((s, kind, 0, 0));
                self.entries.len() - 1
            }
        };
        &mut self.entries[i]
    }

    /// Adds a candidate of `count` units, qualified when `score` is above the cutline (0).
    pub(crate) fn add(&mut self, s: SubsystemId, kind: u32, score: i64, count: u32) {
        let e = self.entry(s, kind);
        if score > 0 {
            e.2 = e.2.wrapping_add(count);
        }
        e.3 = e.3.wrapping_add(count);
    }

    /// Adds another level's candidates to these.
    pub(crate) fn merge(&mut self, other: AuxScores) {
        for (s, kind, qualified, total) in other.entries {
            let e = self.entry(s, kind);
            e.2 = e.2.wrapping_add(qualified);
            e.3 = e.3.wrapping_add(total);
        }
    }

    /// Whether every registered type has qualified units (`has_remaining`).
    pub(crate) fn all_qualified(&self) -> bool {
        self.entries.iter().all(|e| e.2 > 0)
    }
}
