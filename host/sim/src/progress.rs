//! The replay's progress bar on stderr (indicatif), drawn only when stderr is a terminal.

use std::io::IsTerminal;

use indicatif::{ProgressDrawTarget, ProgressStyle};

use crate::replay::ReplayObserver;

/// Bar, percentage, jobs submitted of the expected total and the estimated time left.
const BAR_TEMPLATE: &str = "[{bar:30}] {percent:>3}%  {human_pos} / {human_len} jobs  ETA {eta}";
/// Without a known total: the jobs submitted so far and the rate.
const COUNT_TEMPLATE: &str = "{human_pos} jobs  ({per_sec})";

/// `[#######        ]  45%  12,800 / 28,476 jobs  ETA 3s` on stderr, or a plain count when the
/// total is unknown; silent when stderr is not a terminal.
pub struct ProgressBar {
    bar: indicatif::ProgressBar,
}

impl ProgressBar {
    /// A bar for `total` jobs (if known), enabled only if stderr is a terminal.
    pub fn stderr(total: Option<u64>) -> Self {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let total = total.filter(|&t| t > 0);
        let (bar, template) = match total {
            Some(total) => (indicatif::ProgressBar::new(total), BAR_TEMPLATE),
            None => (indicatif::ProgressBar::no_length(), COUNT_TEMPLATE),
        };
        let style = ProgressStyle::with_template(template)
            .expect("the progress templates are valid")
            .progress_chars("## ");
        bar.set_style(style);
        bar.set_draw_target(target);
        ProgressBar { bar }
    }

    /// Whether anything is drawn (stderr is a terminal).
    pub fn is_visible(&self) -> bool {
        !self.bar.is_hidden()
    }

    /// Erases the bar.
    pub fn clear(&mut self) {
        self.bar.finish_and_clear();
    }
}

impl ReplayObserver for ProgressBar {
    fn progress(&mut self, submitted: u64) {
        // A trace may hold more jobs than its header announced; the bar stops at its total.
        let position = self.bar.length().map_or(submitted, |t| submitted.min(t));
        self.bar.set_position(position);
    }
}

impl Drop for ProgressBar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_is_the_job_count_and_progress_stops_there() {
        let mut bar = ProgressBar::stderr(Some(100));
        assert_eq!(bar.bar.length(), Some(100));
        bar.progress(40);
        assert_eq!(bar.bar.position(), 40);
        bar.progress(120);
        assert_eq!(bar.bar.position(), 100);
    }

    #[test]
    fn an_unknown_or_zero_total_counts_without_a_length() {
        assert_eq!(ProgressBar::stderr(None).bar.length(), None);
        assert_eq!(ProgressBar::stderr(Some(0)).bar.length(), None);
    }

    #[test]
    fn nothing_is_drawn_when_stderr_is_not_a_terminal() {
        let bar = ProgressBar::stderr(Some(10));
        assert_eq!(bar.is_visible(), std::io::stderr().is_terminal());
    }
}
