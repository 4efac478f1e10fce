//! Owns which CPUs of each node each job holds (the lowest free), for GRES picks near them.
//!
//! Which CPUs of each node each job holds: the lowest free ones, so GRES picks know the job's cores.

/// Per node, a bitmap of CPUs in use. A job gets the lowest free CPU ids on each node (a block
/// distribution from CPU 0), which makes its cores deterministic for device affinity.
#[derive(Clone, Debug, Default)]
pub struct CpuMap {
    used: Vec<Vec<u64>>,
    cpus: Vec<u32>,
    threads: Vec<u32>,
}

impl CpuMap {
    /// Every CPU of the cluster's nodes free, with their threads per core.
    pub fn of_cluster(cluster: &sluice_cluster::Cluster) -> Self {
        Self::new(
            cluster.nodes.iter().map(|n| n.cpus).collect(),
            cluster
                .nodes
                .iter()
                .map(|n| u32::from(n.threads_per_core.max(1)))
                .collect(),
        )
    }

    /// An empty map over nodes with these CPU counts and threads per core.
    pub fn new(cpus: Vec<u32>, threads: Vec<u32>) -> Self {
        let used = cpus
            .iter()
            .map(|c| vec![0; c.div_ceil(64) as usize])
            .collect();
        Self {
            used,
            cpus,
            threads,
        }
    }

    /// The `count` lowest free CPU ids of `node` (fewer if that many are not free).
    pub fn lowest_free(&self, node: usize, count: u32) -> impl Iterator<Item = u32> + '_ {
        let cpus = self.cpus[node] as usize;
        // Word by word: a job mostly takes whole runs of free CPUs.
        let free = self.used[node].iter().enumerate().map(move |(w, &used)| {
            let past = cpus.saturating_sub(w * 64);
            let exists = if past >= 64 { !0 } else { (1u64 << past) - 1 };
            !used & exists
        });
        sluice_policy::bitmap::nodes_of_words(0, free).take(count as usize)
    }

    /// The cores (gres.conf `Cores=` numbering) the CPU ids sit on.
    pub fn cores_of(&self, node: usize, cpu_ids: &[u32]) -> Vec<u32> {
        let t = self.threads[node].max(1);
        let mut cores: Vec<u32> = cpu_ids.iter().map(|c| c / t).collect();
        cores.dedup();
        cores
    }

    /// Marks CPUs used.
    pub fn take(&mut self, node: usize, cpu_ids: &[u32]) {
        for &c in cpu_ids {
            self.used[node][c as usize / 64] |= 1 << (c % 64);
        }
    }

    /// Marks CPUs free.
    pub fn give_back(&mut self, node: usize, cpu_ids: &[u32]) {
        for &c in cpu_ids {
            if let Some(w) = self.used[node].get_mut(c as usize / 64) {
                *w &= !(1 << (c % 64));
            }
        }
    }

    /// CPUs in use on `node`.
    pub fn used(&self, node: usize) -> u32 {
        self.used[node].iter().map(|w| w.count_ones()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_get_the_lowest_free_cpus_and_give_them_back() {
        let mut m = CpuMap::new(vec![8], vec![2]);
        let a: Vec<u32> = m.lowest_free(0, 3).collect();
        assert_eq!(a, vec![0, 1, 2]);
        m.take(0, &a);
        let b: Vec<u32> = m.lowest_free(0, 2).collect();
        assert_eq!(b, vec![3, 4]);
        assert_eq!(m.cores_of(0, &b), vec![1, 2], "two threads per core");
        m.take(0, &b);
        m.give_back(0, &a);
        assert_eq!(m.used(0), 2);
        assert_eq!(m.lowest_free(0, 4).collect::<Vec<_>>(), vec![0, 1, 2, 5]);
    }

    #[test]
    fn only_cpus_the_node_has_are_given_past_the_first_word() {
        let mut m = CpuMap::new(vec![70, 64], vec![1, 1]);
        let most: Vec<u32> = (0..66).collect();
        m.take(0, &most);
        assert_eq!(
            m.lowest_free(0, 10).collect::<Vec<_>>(),
            vec![66, 67, 68, 69]
        );
        m.give_back(0, &[3, 65]);
        assert_eq!(m.lowest_free(0, 2).collect::<Vec<_>>(), vec![3, 65]);
        let all: Vec<u32> = m.lowest_free(1, 100).collect();
        assert_eq!(
            all,
            (0..64).collect::<Vec<_>>(),
            "a full word, and no CPU 64"
        );
    }
}
