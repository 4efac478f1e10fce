//! Bitmaps of nodes with free CPUs and of idle nodes, kept in step with the table so that a
//! search skips full (or, for whole-node jobs, busy) nodes 64 at a time. Shared with select/linear.

use sluice_sdk::NodeTable;

/// Which nodes are worth looking at, as bitmap words over node indices.
#[derive(Debug, Default)]
pub struct FreeMaps {
    /// Nodes with at least one free CPU, one no job holds or one free in a sharing row.
    pub open: Vec<u64>,
    /// Nodes with all CPUs and all memory free (candidates for whole-node jobs).
    pub idle: Vec<u64>,
}

impl FreeMaps {
    /// Makes these the maps of a whole table, reusing their words.
    ///
    /// Word by word over zipped columns rather than [`FreeMaps::refresh`] per node: this runs
    /// at every pass, and in a component each indexed read is a bounds check.
    pub fn reset(&mut self, table: &NodeTable) {
        let n = table.len();
        let (cpus, free_cpus) = (&table.cpus[..n], &table.free_cpus[..n]);
        let (mem, free_mem) = (&table.memory_mb[..n], &table.free_memory_mb[..n]);
        self.open.clear();
        self.idle.clear();
        for (((c, fc), m), fm) in cpus
            .chunks(64)
            .zip(free_cpus.chunks(64))
            .zip(mem.chunks(64))
            .zip(free_mem.chunks(64))
        {
            let (mut open, mut idle) = (0u64, 0u64);
            for (bit, (((&c, &fc), &m), &fm)) in c.iter().zip(fc).zip(m).zip(fm).enumerate() {
                let (is_open, is_idle) = open_and_idle(c, fc, m, fm);
                open |= u64::from(is_open) << bit;
                idle |= u64::from(is_idle) << bit;
            }
            self.open.push(open);
            self.idle.push(idle);
        }
        if table.share_rows > 0 {
            // A node whose every CPU has a job may still have room in a sharing row.
            for i in 0..n {
                if table.has_free_cpu(i) {
                    self.open[i / 64] |= 1 << (i % 64);
                }
            }
        }
    }

    /// Recomputes node `n`'s bits after its free resources changed.
    #[inline(always)]
    pub fn refresh(&mut self, table: &NodeTable, n: u32) {
        let (word, bit) = (n as usize / 64, 1u64 << (n % 64));
        let i = n as usize;
        let (open, idle) = open_and_idle(
            table.cpus[i],
            table.free_cpus[i],
            table.memory_mb[i],
            table.free_memory_mb[i],
        );
        set(&mut self.open[word], bit, open || table.has_free_cpu(i));
        set(&mut self.idle[word], bit, idle);
    }
}

/// Whether a node with these CPUs and memory, and this much of them free, is open (a CPU free)
/// and idle (everything free).
fn open_and_idle(cpus: u32, free_cpus: u32, memory_mb: u64, free_memory_mb: u64) -> (bool, bool) {
    let open = free_cpus > 0;
    (
        open,
        open && free_cpus == cpus && free_memory_mb == memory_mb,
    )
}

fn set(word: &mut u64, bit: u64, on: bool) {
    if on { *word |= bit } else { *word &= !bit }
}

/// Word `w` of `a & b`, where missing words are empty.
pub fn and_word(a: &[u64], b: &[u64], w: usize) -> u64 {
    a.get(w).copied().unwrap_or(0) & b.get(w).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_sdk::testing::fixtures::{Rng, node_table};

    #[test]
    fn a_whole_reset_sets_the_bits_node_by_node_refreshing_would() {
        let mut rng = Rng::new(0x5EED_F4EE);
        // Sizes around word boundaries, and tables whose nodes are free, partly used or full.
        for n in [1, 63, 64, 65, 130, 200] {
            let mut table = node_table(n);
            for i in 0..n {
                table.free_cpus[i] = [0, 1, 63, 64][rng.below(4) as usize];
                table.free_memory_mb[i] = [0, 1_000, 256_000][rng.below(3) as usize];
            }
            let mut reset = FreeMaps {
                open: vec![u64::MAX; 9],
                idle: vec![u64::MAX; 9],
            };
            reset.reset(&table);
            let words = n.div_ceil(64);
            let mut by_node = FreeMaps {
                open: vec![0; words],
                idle: vec![0; words],
            };
            for i in 0..n as u32 {
                by_node.refresh(&table, i);
            }
            assert_eq!(
                (reset.open, reset.idle),
                (by_node.open, by_node.idle),
                "{n} nodes"
            );
        }
    }
}
