//! Natural ordering of host name prefixes: digit runs compare as numbers (`rack2` before `rack10`).

use std::cmp::Ordering;

/// Compares two strings naturally: runs of digits compare by numeric value, everything else byte by byte.
///
/// Equal numeric values with different zero padding (`01` vs `1`) order the shorter run first, and a final
/// byte comparison makes this a total order (Slurm's `strnatcmp` can call distinct strings equal).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (a_bytes, b_bytes) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a_bytes.len() && j < b_bytes.len() {
        if a_bytes[i].is_ascii_digit() && b_bytes[j].is_ascii_digit() {
            let a_end = digit_run_end(a_bytes, i);
            let b_end = digit_run_end(b_bytes, j);
            let order = cmp_digit_runs(&a_bytes[i..a_end], &b_bytes[j..b_end]);
            if order != Ordering::Equal {
                return order;
            }
            i = a_end;
            j = b_end;
        } else {
            match a_bytes[i].cmp(&b_bytes[j]) {
                Ordering::Equal => {
                    i += 1;
                    j += 1;
                }
                order => return order,
            }
        }
    }
    (a_bytes.len() - i)
        .cmp(&(b_bytes.len() - j))
        .then_with(|| a_bytes.cmp(b_bytes))
}

fn digit_run_end(bytes: &[u8], start: usize) -> usize {
    bytes[start..]
        .iter()
        .position(|b| !b.is_ascii_digit())
        .map_or(bytes.len(), |offset| start + offset)
}

fn cmp_digit_runs(a: &[u8], b: &[u8]) -> Ordering {
    let strip = |run: &[u8]| -> usize { run.iter().take_while(|&&d| d == b'0').count() };
    let (a_value, b_value) = (&a[strip(a)..], &b[strip(b)..]);
    a_value
        .len()
        .cmp(&b_value.len())
        .then_with(|| a_value.cmp(b_value))
        .then_with(|| a.len().cmp(&b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digit_runs_compare_numerically() {
        assert_eq!(natural_cmp("rack2", "rack10"), Ordering::Less);
        assert_eq!(natural_cmp("rack10_n", "rack9_n"), Ordering::Greater);
        assert_eq!(natural_cmp("a", "b"), Ordering::Less);
        assert_eq!(natural_cmp("n1", "n01"), Ordering::Less);
        assert_eq!(natural_cmp("x", "x"), Ordering::Equal);
        assert_eq!(natural_cmp("x", "xa"), Ordering::Less);
    }
}
