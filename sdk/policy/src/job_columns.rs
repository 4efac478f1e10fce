//! The job table as `compute` carries it: its columns concatenated by element type.
//!
//! The host lowers one list per call instead of thirteen (each list is an entry into the guest),
//! and the Rust SDK splits the two lists back into a [`JobTable`]. Both sides go through this
//! module, so the column order is written down once, here and in `wit/priority.wit`.

use crate::contract::ContractError;
use crate::priority::JobTable;

/// Unsigned columns per row in `u32-columns`.
pub const U32_COLUMNS: usize = 8;

/// Signed columns per row in `s64-columns`.
pub const S64_COLUMNS: usize = 5;

impl JobTable {
    /// Writes the table's columns into `u32s` and `s64s` (both cleared first) in the order of
    /// the contract's `job-table`. Memory above `i64::MAX` MB is sent as `i64::MAX`.
    pub fn concat_columns(&self, u32s: &mut Vec<u32>, s64s: &mut Vec<i64>) {
        u32s.clear();
        s64s.clear();
        u32s.reserve(U32_COLUMNS * self.len());
        s64s.reserve(S64_COLUMNS * self.len());
        for column in [
            &self.job_id,
            &self.association,
            &self.partition,
            &self.qos,
            &self.nodes,
            &self.cpus,
            &self.gpus,
            &self.time_limit,
        ] {
            u32s.extend_from_slice(column);
        }
        s64s.extend_from_slice(&self.submit_time);
        s64s.extend_from_slice(&self.eligible_time);
        s64s.extend(
            self.memory_mb
                .iter()
                .map(|&m| i64::try_from(m).unwrap_or(i64::MAX)),
        );
        s64s.extend(self.nice.iter().map(|&n| i64::from(n)));
        s64s.extend_from_slice(&self.site_factor);
    }

    /// Replaces the table's rows with the `rows` rows of `u32s` and `s64s`, laid out as
    /// [`JobTable::concat_columns`] writes them; each column keeps its room. A list of another
    /// length than its columns need is refused and the table is then empty. Nice values
    /// outside `i32` saturate, negative memory counts as 0.
    pub fn split_columns(
        &mut self,
        rows: u32,
        u32s: &[u32],
        s64s: &[i64],
    ) -> Result<(), ContractError> {
        self.clear();
        let n = rows as usize;
        ContractError::check_length("u32-columns", U32_COLUMNS * n, u32s.len())?;
        ContractError::check_length("s64-columns", S64_COLUMNS * n, s64s.len())?;
        if n == 0 {
            return Ok(());
        }
        let mut u = u32s.chunks_exact(n);
        for column in [
            &mut self.job_id,
            &mut self.association,
            &mut self.partition,
            &mut self.qos,
            &mut self.nodes,
            &mut self.cpus,
            &mut self.gpus,
            &mut self.time_limit,
        ] {
            column.extend_from_slice(u.next().expect("checked length"));
        }
        let mut s = s64s.chunks_exact(n);
        let mut next = || s.next().expect("checked length");
        self.submit_time.extend_from_slice(next());
        self.eligible_time.extend_from_slice(next());
        self.memory_mb
            .extend(next().iter().map(|&m| u64::try_from(m).unwrap_or(0)));
        self.nice.extend(
            next()
                .iter()
                .map(|&v| v.clamp(i32::MIN.into(), i32::MAX.into()) as i32),
        );
        self.site_factor.extend_from_slice(next());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::distinct_job_table as distinct;

    #[test]
    fn a_table_split_from_its_columns_is_the_table() {
        for rows in [0, 1, 7] {
            let table = distinct(rows as usize);
            let (mut u32s, mut s64s) = (vec![99], vec![99]);
            table.concat_columns(&mut u32s, &mut s64s);
            assert_eq!(u32s.len(), U32_COLUMNS * rows as usize);
            assert_eq!(s64s.len(), S64_COLUMNS * rows as usize);
            let mut back = distinct(3);
            back.split_columns(rows, &u32s, &s64s).unwrap();
            assert_eq!(back, table, "{rows} rows");
        }
    }

    #[test]
    fn the_layout_is_the_one_the_wit_file_documents() {
        let table = distinct(2);
        let (mut u32s, mut s64s) = (Vec::new(), Vec::new());
        table.concat_columns(&mut u32s, &mut s64s);
        // Column k of the fixture holds k × 100000 + row, negated for nice and site-factor.
        let rows_of = |k: i64| [k * 100_000, k * 100_000 + 1].map(|v| v * k.signum());
        // job-id 1, association 4, partition 5, qos 6, nodes 7, cpus 8, gpus 10, time-limit 11.
        let want: Vec<u32> = [1, 4, 5, 6, 7, 8, 10, 11]
            .into_iter()
            .flat_map(rows_of)
            .map(|v| v as u32)
            .collect();
        assert_eq!(u32s, want);
        // submit-time 2, eligible-time 3, memory-mb 9, nice 12, site-factor 13.
        let want: Vec<i64> = [2, 3, 9, -12, -13]
            .into_iter()
            .flat_map(|k: i64| rows_of(k.abs()).map(|v| v * k.signum()))
            .collect();
        assert_eq!(s64s, want);
    }

    #[test]
    fn out_of_range_values_saturate_and_wrong_lengths_are_refused() {
        let mut table = distinct(1);
        table.memory_mb[0] = u64::MAX;
        let (mut u32s, mut s64s) = (Vec::new(), Vec::new());
        table.concat_columns(&mut u32s, &mut s64s);
        assert_eq!(s64s[2], i64::MAX);

        s64s[3] = i64::MIN;
        s64s[2] = -5;
        let mut back = JobTable::default();
        back.split_columns(1, &u32s, &s64s).unwrap();
        assert_eq!((back.nice[0], back.memory_mb[0]), (i32::MIN, 0));

        let short = back.split_columns(1, &u32s[1..], &s64s);
        assert_eq!(
            short,
            Err(ContractError::Length {
                what: "u32-columns",
                expected: 8,
                found: 7
            })
        );
        assert!(back.is_empty());
        assert!(back.split_columns(2, &u32s, &s64s).is_err());
    }
}
