//! Slurm's run-length form of per-node counts (`4(x2),2`), which `SLURM_TASKS_PER_NODE`,
//! `SLURM_JOB_CPUS_PER_NODE` and the step layout's variables are written in.

/// Slurm's run-length list of per-node counts: `4(x2),2` for 4, 4, 2.
pub fn run_lengths(values: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let run = values[i..].iter().take_while(|v| **v == values[i]).count();
        out.push(if run > 1 {
            format!("{}(x{run})", values[i])
        } else {
            values[i].to_string()
        });
        i += run;
    }
    out.join(",")
}

/// The counts a run-length list stands for (`4(x2),2` is 4, 4, 2); `None` when it is not one.
pub fn expand_run_lengths(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let (value, times) = match part.split_once("(x") {
            Some((v, rest)) => (v, rest.strip_suffix(')')?.parse::<usize>().ok()?),
            None => (part, 1),
        };
        let value: u32 = value.parse().ok()?;
        out.extend(std::iter::repeat_n(value, times.min(1 << 16)));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_node_counts_run_length_encode() {
        assert_eq!(run_lengths(&[4, 4, 2]), "4(x2),2");
        assert_eq!(run_lengths(&[8]), "8");
        assert_eq!(run_lengths(&[1, 2, 2, 2, 1]), "1,2(x3),1");
        assert_eq!(run_lengths(&[]), "");
    }

    #[test]
    fn run_lengths_read_back() {
        assert_eq!(expand_run_lengths("4(x2),2"), Some(vec![4, 4, 2]));
        assert_eq!(expand_run_lengths("7,1"), Some(vec![7, 1]));
        assert_eq!(expand_run_lengths("4(x"), None);
        assert_eq!(expand_run_lengths("a"), None);
    }
}
