//! The comparison's difference plot: how much longer jobs waited under run B than under run A,
//! averaged over jobs submitted in the same stretch of time.

use std::io;

use super::chart::{self, Bar, Labels};
use super::time_axis::TimeAxis;
use crate::job::Time;

/// Bars across the submission span; enough to show trends, few enough to read.
const BARS: i64 = 120;

/// One job of a comparison: when it was submitted and `wait_b − wait_a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitDelta {
    /// Submission time.
    pub submit: Time,
    /// Wait under run B minus wait under run A, in seconds.
    pub delta: Time,
}

/// Signed bars of the mean `wait_b − wait_a` (hours) of the jobs submitted in each of about 120
/// equal stretches since `origin`, the first submission: above zero where B made jobs wait longer.
pub fn difference_chart(
    label_a: &str,
    label_b: &str,
    origin: Time,
    jobs: &[WaitDelta],
) -> io::Result<String> {
    let span = jobs
        .iter()
        .map(|j| j.submit - origin)
        .max()
        .unwrap_or(0)
        .max(0);
    let width = ((span + BARS) / BARS).max(1);
    let mut sums = vec![(0i128, 0u64); (span / width + 1) as usize];
    for job in jobs {
        let bucket = &mut sums[((job.submit - origin).max(0) / width) as usize];
        bucket.0 += i128::from(job.delta);
        bucket.1 += 1;
    }
    let axis = TimeAxis::fitted(sums.len() as Time * width);
    let bars: Vec<Bar> = sums
        .iter()
        .enumerate()
        .filter(|(_, (_, count))| *count > 0)
        .map(|(i, &(sum, count))| Bar {
            from: axis.at(i as Time * width),
            to: axis.at((i as Time + 1) * width),
            value: sum as f64 / count as f64 / 3_600.0,
        })
        .collect();
    let labels = Labels {
        title: "Mean wait difference B − A, by submission time",
        y: "hours",
    };
    let up = format!("B ({label_b}) waits longer");
    let down = format!("B waits less than A ({label_a})");
    chart::signed_bars_chart(&labels, axis, &bars, (&up, &down))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_longer_and_less_show_on_either_side_of_zero() {
        let jobs = [
            WaitDelta {
                submit: 100,
                delta: 7_200,
            },
            WaitDelta {
                submit: 100,
                delta: 0,
            },
            WaitDelta {
                submit: 50_000,
                delta: -3_600,
            },
        ];
        let svg = difference_chart("fcfs", "easy", 100, &jobs).unwrap();
        assert!(svg.contains("B (easy) waits longer") && svg.contains("less than A (fcfs)"));
        // One bar above zero (mean +1 h), one below (−1 h), each a filled rect in its colour.
        assert_eq!(svg.matches(r##"fill="#D55E00""##).count() - 1, 1, "{svg}");
        assert_eq!(svg.matches(r##"fill="#0072B2""##).count() - 1, 1);
    }
}
