//! Which task of a step runs on which node, as Slurm's step layout computes it for the
//! `block` and `cyclic` distributions (`src/common/slurm_step_layout.c`).

/// How tasks are dealt to nodes (`-m/--distribution`'s first level).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Distribution {
    /// Consecutive task ids fill a node before the next (Slurm's default).
    #[default]
    Block,
    /// Task ids go round the nodes one at a time.
    Cyclic,
    /// Block with `,Pack`: each node first gets one task, then nodes are filled in order, and
    /// only then do the rest go round them.
    BlockPack,
}

impl Distribution {
    /// The distribution a `--distribution` value asks for: `cyclic` when its first level says
    /// so, else block, packed with `,Pack` (plane, arbitrary and `*` are laid out as block here).
    pub fn from_option(text: &str) -> Self {
        let (levels, pack) = text.split_once(',').unwrap_or((text, ""));
        let first = levels.split(':').next().unwrap_or_default();
        if first.eq_ignore_ascii_case("cyclic") {
            Self::Cyclic
        } else if pack.eq_ignore_ascii_case("pack") {
            Self::BlockPack
        } else {
            Self::Block
        }
    }

    /// Its name as `SLURM_DISTRIBUTION` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Block => "block",
            Self::Cyclic => "cyclic",
            Self::BlockPack => "block,Pack",
        }
    }
}

/// A step's tasks on its nodes: per node (in the step's node order) the task ids it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Task ids of each node, ascending.
    pub tasks: Vec<Vec<u32>>,
}

impl Layout {
    /// Deals `tasks` tasks to nodes that each have room for `room[i]` tasks (their CPUs over
    /// the CPUs per task, at least 1). As Slurm does, both distributions count tasks per node
    /// in rounds of one task per node with room left; once no node has room every node takes
    /// one more per round (oversubscription). Block then numbers the tasks node by node,
    /// cyclic in the order the rounds dealt them.
    pub fn new(tasks: u32, room: &[u32], distribution: Distribution) -> Self {
        let mut out = vec![Vec::new(); room.len()];
        if room.is_empty() {
            return Self { tasks: out };
        }
        if distribution == Distribution::BlockPack {
            return Self::packed(tasks, room);
        }
        let mut dealt = 0u32;
        let mut over = false;
        let mut round = 0u32;
        while dealt < tasks {
            let mut room_left = false;
            for (node, cap) in room.iter().map(|c| (*c).max(1)).enumerate() {
                if dealt == tasks {
                    break;
                }
                if round < cap || over {
                    out[node].push(dealt);
                    dealt += 1;
                    if round + 1 < cap {
                        room_left = true;
                    }
                }
            }
            if !room_left {
                over = true;
            }
            round += 1;
        }
        if distribution == Distribution::Block {
            let mut next = 0;
            for node in &mut out {
                for id in node.iter_mut() {
                    *id = next;
                    next += 1;
                }
            }
        }
        Self { tasks: out }
    }

    /// Block with `,Pack`: one task on each node with room, then each node filled in turn,
    /// then the rest one per node per round; numbered node by node.
    fn packed(tasks: u32, room: &[u32]) -> Self {
        let mut counts = vec![0u32; room.len()];
        let mut left = tasks;
        for (count, cap) in counts.iter_mut().zip(room) {
            if left > 0 && *count < *cap {
                *count += 1;
                left -= 1;
            }
        }
        for (count, cap) in counts.iter_mut().zip(room) {
            let more = cap.saturating_sub(*count).min(left);
            *count += more;
            left -= more;
        }
        while left > 0 {
            for count in counts.iter_mut() {
                if left == 0 {
                    break;
                }
                *count += 1;
                left -= 1;
            }
        }
        let mut next = 0;
        let tasks = counts
            .iter()
            .map(|c| {
                let ids = (next..next + c).collect();
                next += c;
                ids
            })
            .collect();
        Self { tasks }
    }

    /// Tasks on each node.
    pub fn counts(&self) -> Vec<u32> {
        self.tasks.iter().map(|t| t.len() as u32).collect()
    }

    /// Slurm's compressed tasks-per-node text (`SLURM_STEP_TASKS_PER_NODE`,
    /// `SLURM_TASKS_PER_NODE`): `4(x2)`, `3,2`.
    pub fn per_node_text(&self) -> String {
        crate::node_counts::run_lengths(&self.counts())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_fills_nodes_in_order_and_spreads_evenly_by_rounds() {
        let l = Layout::new(8, &[4, 4], Distribution::Block);
        assert_eq!(l.tasks, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert_eq!(l.per_node_text(), "4(x2)");
        // Five tasks on two roomy nodes: rounds give 3 and 2, numbered in blocks.
        let l = Layout::new(5, &[8, 8], Distribution::Block);
        assert_eq!(l.tasks, vec![vec![0, 1, 2], vec![3, 4]]);
        assert_eq!(l.per_node_text(), "3,2");
    }

    #[test]
    fn cyclic_deals_round_the_nodes() {
        let l = Layout::new(8, &[4, 4], Distribution::Cyclic);
        assert_eq!(l.tasks, vec![vec![0, 2, 4, 6], vec![1, 3, 5, 7]]);
        assert_eq!(l.per_node_text(), "4(x2)");
        let l = Layout::new(5, &[1, 4, 4], Distribution::Cyclic);
        assert_eq!(l.tasks, vec![vec![0], vec![1, 3], vec![2, 4]]);
    }

    #[test]
    fn uneven_room_fills_the_larger_node_and_then_oversubscribes() {
        let l = Layout::new(6, &[1, 8], Distribution::Block);
        assert_eq!(l.counts(), vec![1, 5]);
        assert_eq!(l.per_node_text(), "1,5");
        // Ten tasks where only four fit: once full, every node takes one more per round.
        let l = Layout::new(10, &[2, 2], Distribution::Block);
        assert_eq!(l.counts(), vec![5, 5]);
        assert_eq!(l.per_node_text(), "5(x2)");
        let l = Layout::new(3, &[1, 1, 1, 1], Distribution::Block);
        assert_eq!(l.per_node_text(), "1(x3),0");
    }

    #[test]
    fn pack_fills_a_node_before_the_next_after_one_each() {
        let l = Layout::new(6, &[4, 4, 4], Distribution::BlockPack);
        assert_eq!(l.counts(), vec![4, 1, 1]);
        assert_eq!(l.tasks[1], vec![4]);
        let l = Layout::new(7, &[2, 2], Distribution::BlockPack);
        assert_eq!(l.counts(), vec![4, 3]);
    }

    #[test]
    fn distribution_values_beyond_block_and_cyclic_are_block() {
        assert_eq!(Distribution::from_option("cyclic"), Distribution::Cyclic);
        assert_eq!(
            Distribution::from_option("Cyclic:block,pack"),
            Distribution::Cyclic
        );
        assert_eq!(Distribution::from_option("plane=4"), Distribution::Block);
        assert_eq!(
            Distribution::from_option("block:cyclic"),
            Distribution::Block
        );
    }
}
