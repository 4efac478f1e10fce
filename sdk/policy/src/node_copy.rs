//! Keeping a second copy of a node table in step with the first: what differs, and applying it.
//!
//! A selection guest keeps a copy of the node table between passes; the host keeps
//! its own model of that copy to send only what changed; both sides apply the same placements
//! with the same rules here, so the two never drift apart.

use crate::selection::{NodeTable, Placement, Power};

impl NodeTable {
    /// Whether `other` has the same static columns: node count, CPUs, memory, weight, GRES kinds
    /// and GRES totals. Only then can a copy be brought up to date node by node.
    pub fn same_static_part(&self, other: &NodeTable) -> bool {
        self.cpus == other.cpus
            && self.memory_mb == other.memory_mb
            && self.weight == other.weight
            && self.gres_kinds == other.gres_kinds
            && self.gres_total == other.gres_total
            && self.share_rows == other.share_rows
    }

    /// Writes into `out` the nodes whose free CPUs, free memory, power or free GRES differ in
    /// `other`, a table of the same static part, by ascending index.
    pub fn free_differing(&self, other: &NodeTable, out: &mut Vec<u32>) {
        out.clear();
        // Most passes of a busy machine differ in a few nodes, many in none: whole columns
        // first, which compare as memory.
        if self.free_cpus == other.free_cpus
            && self.free_memory_mb == other.free_memory_mb
            && self.power == other.power
            && self.gres_free == other.gres_free
            && self.row_free_cpus == other.row_free_cpus
        {
            return;
        }
        let kinds = self.gres_kinds.len();
        let shares = self.share_rows > 0;
        let cpus = self.free_cpus.iter().zip(&other.free_cpus);
        let memory = self.free_memory_mb.iter().zip(&other.free_memory_mb);
        let power = self.power.iter().zip(&other.power);
        for (n, ((c, m), p)) in cpus.zip(memory).zip(power).enumerate() {
            let gres = || {
                self.gres_free[n * kinds..(n + 1) * kinds]
                    != other.gres_free[n * kinds..(n + 1) * kinds]
            };
            let rows = || self.rows_free(n) != other.rows_free(n);
            if c.0 != c.1 || m.0 != m.1 || p.0 != p.1 || (kinds > 0 && gres()) || (shares && rows())
            {
                out.push(n as u32);
            }
        }
    }

    /// Sets node `n`'s free resources; `gres_free` is its row, one count per GRES kind. Changes
    /// nothing and answers false when `n` is not a node of the table or the row has the wrong
    /// length.
    pub fn set_free(
        &mut self,
        n: usize,
        free_cpus: u32,
        free_memory_mb: u64,
        power: Power,
        gres_free: &[u32],
    ) -> bool {
        let kinds = self.gres_kinds.len();
        if n >= self.len() || gres_free.len() != kinds {
            return false;
        }
        self.free_cpus[n] = free_cpus;
        self.free_memory_mb[n] = free_memory_mb;
        self.power[n] = power;
        if kinds > 0 {
            // Not even called for no GRES: in a component `copy_from_slice` is a `memcpy` call,
            // a loop in wasi-libc.
            self.gres_free[n * kinds..(n + 1) * kinds].copy_from_slice(gres_free);
        }
        true
    }

    /// Sets node `n`'s free CPUs in each sharing row; changes nothing and answers false when
    /// `n` is not a node of the table or `rows` is not one count per row.
    pub fn set_rows_free(&mut self, n: usize, rows: &[u32]) -> bool {
        let r = self.share_rows as usize;
        if n >= self.len() || rows.len() != r {
            return false;
        }
        if r > 0 {
            self.row_free_cpus[n * r..(n + 1) * r].copy_from_slice(rows);
        }
        true
    }

    /// Sets node `n`'s free resources to `other`'s, a table of the same static part; answers
    /// as [`NodeTable::set_free`].
    #[inline]
    pub fn copy_free_from(&mut self, other: &NodeTable, n: usize) -> bool {
        let kinds = other.gres_kinds.len();
        let Some(row) = other.gres_free.get(n * kinds..(n + 1) * kinds) else {
            return false;
        };
        self.set_free(
            n,
            other.free_cpus[n],
            other.free_memory_mb[n],
            other.power[n],
            row,
        ) && (other.share_rows == 0 || self.set_rows_free(n, other.rows_free(n)))
    }

    /// Appends to `out` the free resources of nodes `changed` of this table, packed as the
    /// contract's `node-changes`: per node, its index, free CPUs, free memory, power (0 up,
    /// 1 powering up, 2 powered down), its free count of each GRES kind, then its free CPUs in
    /// each sharing row.
    pub fn pack_changes(&self, changed: &[u32], out: &mut Vec<u64>) {
        let kinds = self.gres_kinds.len();
        out.reserve(changed.len() * (4 + kinds + self.share_rows as usize));
        for &n in changed {
            let i = n as usize;
            out.extend_from_slice(&[
                u64::from(n),
                u64::from(self.free_cpus[i]),
                self.free_memory_mb[i],
                self.power[i] as u64,
            ]);
            out.extend(
                self.gres_free[i * kinds..(i + 1) * kinds]
                    .iter()
                    .map(|&g| u64::from(g)),
            );
            out.extend(self.rows_free(i).iter().map(|&f| u64::from(f)));
        }
    }

    /// Applies changes packed by [`NodeTable::pack_changes`] (from a table of the same static
    /// part) and writes the changed nodes into `changed`. Stops at the first change that does
    /// not describe a node of this table, and says which; the changes before it stay applied.
    pub fn apply_packed_changes(
        &mut self,
        packed: &[u64],
        changed: &mut Vec<u32>,
    ) -> Result<(), String> {
        changed.clear();
        let kinds = self.gres_kinds.len();
        let shares = self.share_rows as usize;
        let mut row = vec![0u32; kinds];
        let mut rows = vec![0u32; shares];
        for (c, change) in packed.chunks(4 + kinds + shares).enumerate() {
            let &[node, free_cpus, free_memory_mb, power, ref rest @ ..] = change else {
                return Err(format!("change {c} is cut short"));
            };
            if rest.len() != kinds + shares {
                return Err(format!("change {c} is cut short"));
            }
            let (gres, row_free) = rest.split_at(kinds);
            for (r, &f) in rows.iter_mut().zip(row_free) {
                *r = u32::try_from(f)
                    .map_err(|_| format!("change {c} has a row's CPU count past 32 bits"))?;
            }
            let power = match power {
                0 => Power::Up,
                1 => Power::PoweringUp,
                2 => Power::PoweredDown,
                other => return Err(format!("change {c} has power state {other}")),
            };
            let (Ok(n), Ok(free_cpus)) = (u32::try_from(node), u32::try_from(free_cpus)) else {
                return Err(format!("change {c} has a node or CPU count past 32 bits"));
            };
            for (r, &g) in row.iter_mut().zip(gres) {
                *r = u32::try_from(g)
                    .map_err(|_| format!("change {c} has a GRES count past 32 bits"))?;
            }
            if !self.set_free(n as usize, free_cpus, free_memory_mb, power, &row)
                || !self.set_rows_free(n as usize, &rows)
            {
                return Err(format!(
                    "change {c} names node {n}, which the table does not have"
                ));
            }
            changed.push(n);
        }
        Ok(())
    }

    /// Subtracts a placement from the free columns if it fits them ([`NodeTable::check_fits`]).
    /// Otherwise changes nothing and answers false, so a copy that applied a nonsense
    /// placement is known to be out of step instead of wrong.
    pub fn try_commit(&mut self, p: &Placement) -> bool {
        let fits = self.check_fits(p).is_ok();
        if fits {
            self.commit(p);
        }
        fits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> NodeTable {
        NodeTable {
            cpus: vec![4, 4, 8],
            free_cpus: vec![4, 2, 8],
            memory_mb: vec![100, 100, 200],
            free_memory_mb: vec![100, 50, 200],
            weight: vec![1, 1, 2],
            power: vec![Power::Up; 3],
            gres_kinds: vec!["gpu".into()],
            gres_total: vec![0, 2, 4],
            gres_free: vec![0, 1, 4],
            row_free_cpus: vec![],
            share_rows: 0,
        }
    }

    fn placement(nodes: &[u32], cpus: &[u32], gres: &[u32]) -> Placement {
        Placement {
            nodes: nodes.to_vec(),
            cpus: cpus.to_vec(),
            memory_mb: vec![10; nodes.len()],
            gres: gres.to_vec(),
            rows: vec![],
        }
    }

    #[test]
    fn a_placement_that_fits_is_subtracted_and_one_that_does_not_changes_nothing() {
        let mut t = table();
        assert!(t.try_commit(&placement(&[1, 2], &[2, 3], &[1, 2])));
        assert_eq!(
            (t.free_cpus.clone(), t.gres_free.clone()),
            (vec![4, 0, 5], vec![0, 0, 2])
        );
        let before = t.clone();
        for bad in [
            placement(&[1], &[1], &[0]),          // no CPU free on node 1 any more
            placement(&[3], &[1], &[0]),          // no node 3
            placement(&[2, 0], &[1, 1], &[0, 0]), // not ascending
            placement(&[2, 2], &[1, 1], &[0, 0]), // a node twice
            placement(&[2], &[1], &[3]),          // more GPUs than free
            placement(&[2], &[1], &[]),           // GRES row missing
        ] {
            assert!(!t.try_commit(&bad), "{bad:?}");
            assert_eq!(t, before, "{bad:?}");
        }
    }

    #[test]
    fn a_copy_brought_up_to_date_node_by_node_equals_the_table() {
        let host = table();
        let mut copy = table();
        assert!(copy.try_commit(&placement(&[0, 2], &[4, 1], &[0, 3])));
        copy.power[1] = Power::PoweredDown;
        let mut differing = vec![7];
        copy.free_differing(&host, &mut differing);
        assert_eq!(differing, [0, 1, 2]);
        assert!(copy.same_static_part(&host));
        for &n in &differing {
            assert!(copy.copy_free_from(&host, n as usize));
        }
        assert_eq!(copy, host);
        copy.free_differing(&host, &mut differing);
        assert!(differing.is_empty());
        copy.gres_free[1] = 0;
        copy.free_differing(&host, &mut differing);
        assert_eq!(differing, [1], "GRES alone");
        copy.gres_free[1] = host.gres_free[1];
        assert!(!copy.set_free(3, 0, 0, Power::Up, &[0]));
        assert!(!copy.set_free(0, 0, 0, Power::Up, &[]));
        assert_eq!(copy, host);
    }

    #[test]
    fn a_static_column_that_differs_is_seen() {
        let t = table();
        for change in [
            |t: &mut NodeTable| t.cpus[0] = 2,
            |t: &mut NodeTable| t.memory_mb[2] = 1,
            |t: &mut NodeTable| t.weight[1] = 9,
            |t: &mut NodeTable| t.gres_kinds[0] = "nic".into(),
            |t: &mut NodeTable| t.gres_total[2] = 8,
        ] {
            let mut other = t.clone();
            change(&mut other);
            assert!(!t.same_static_part(&other));
        }
        let mut free_only = t.clone();
        free_only.free_cpus[0] = 0;
        assert!(t.same_static_part(&free_only));
    }

    #[test]
    fn packed_changes_bring_a_copy_to_the_table_they_were_packed_from() {
        let host = table();
        let mut copy = table();
        copy.free_cpus = vec![0, 0, 0];
        copy.free_memory_mb = vec![7, 7, 7];
        copy.power = vec![Power::PoweredDown; 3];
        copy.gres_free = vec![0, 0, 0];
        let mut host = host;
        host.power[1] = Power::PoweringUp;
        let mut changed = Vec::new();
        copy.free_differing(&host, &mut changed);
        assert_eq!(changed, [0, 1, 2]);
        let mut packed = Vec::new();
        host.pack_changes(&changed[1..2], &mut packed);
        assert_eq!(
            packed,
            [1, 2, 50, 1, 1],
            "node, cpus, memory, power, one GRES count"
        );
        packed.clear();
        host.pack_changes(&changed, &mut packed);
        let mut applied = Vec::new();
        copy.apply_packed_changes(&packed, &mut applied).unwrap();
        assert_eq!(applied, changed);
        assert_eq!(copy, host);
    }

    #[test]
    fn packed_changes_that_do_not_fit_the_table_are_refused() {
        let mut copy = table();
        let mut changed = Vec::new();
        for (packed, why) in [
            (vec![1, 2, 50, 0], "cut short"),
            (vec![1, 2, 50], "cut short"),
            (vec![3, 2, 50, 0, 1], "does not have"),
            (vec![1, 2, 50, 3, 1], "power state 3"),
            (vec![1, 1 << 32, 50, 0, 1], "past 32 bits"),
            (vec![1, 2, 50, 0, 1 << 32], "past 32 bits"),
        ] {
            let err = copy
                .apply_packed_changes(&packed, &mut changed)
                .unwrap_err();
            assert!(err.contains(why), "{packed:?}: {err}");
        }
        assert_eq!(copy, table(), "no refused change was applied");
    }

    #[test]
    fn packed_changes_carry_each_rows_free_cpus() {
        let shared = |rows: Vec<u32>| NodeTable {
            share_rows: 2,
            row_free_cpus: rows,
            ..table()
        };
        let host = shared(vec![4, 4, 2, 1, 8, 0]);
        let mut copy = shared(vec![4, 4, 2, 2, 8, 0]);
        let mut changed = Vec::new();
        copy.free_differing(&host, &mut changed);
        assert_eq!(changed, [1], "a row alone differs");
        let mut packed = Vec::new();
        host.pack_changes(&changed, &mut packed);
        assert_eq!(packed, [1, 2, 50, 0, 1, 2, 1], "then the node's two rows");
        let mut applied = Vec::new();
        copy.apply_packed_changes(&packed, &mut applied).unwrap();
        assert_eq!(copy, host);
        let err = copy
            .apply_packed_changes(&packed[..6], &mut applied)
            .unwrap_err();
        assert!(err.contains("cut short"), "{err}");
        assert!(!copy.same_static_part(&table()), "the row count is static");
    }
}
