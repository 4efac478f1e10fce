//! Bitmaps of nodes with free CPUs and of idle nodes, kept in step with the table so that a
//! search skips full (or, for whole-node jobs, busy) nodes 64 at a time. Shared with select/linear.

use sluice_sdk::NodeTable;

/// Which nodes are worth looking at, as bitmap words over node indices.
#[derive(Debug, Default)]
pub struct FreeMaps {
    /// Nodes with at least one free CPU.
    pub open: Vec<u64>,
    /// Nodes with all CPUs and all memory free (candidates for whole-node jobs).
    pub idle: Vec<u64>,
}

impl FreeMaps {
    /// Makes these the maps of a whole table, reusing their words.
    pub fn reset(&mut self, table: &NodeTable) {
        let words = table.len().div_ceil(64);
        for map in [&mut self.open, &mut self.idle] {
            map.clear();
            map.resize(words, 0);
        }
        for n in 0..table.len() as u32 {
            self.refresh(table, n);
        }
    }

    /// Recomputes node `n`'s bits after its free resources changed.
    pub fn refresh(&mut self, table: &NodeTable, n: u32) {
        let (word, bit) = (n as usize / 64, 1u64 << (n % 64));
        let i = n as usize;
        let open = table.free_cpus[i] > 0;
        let idle = open
            && table.free_cpus[i] == table.cpus[i]
            && table.free_memory_mb[i] == table.memory_mb[i];
        set(&mut self.open[word], bit, open);
        set(&mut self.idle[word], bit, idle);
    }
}

fn set(word: &mut u64, bit: u64, on: bool) {
    if on { *word |= bit } else { *word &= !bit }
}

/// Word `w` of `a & b`, where missing words are empty.
pub fn and_word(a: &[u64], b: &[u64], w: usize) -> u64 {
    a.get(w).copied().unwrap_or(0) & b.get(w).copied().unwrap_or(0)
}
