//! A progress bar on stderr, drawn only when stderr is a terminal.

use std::io::{IsTerminal, Stderr, Write};
use std::time::{Duration, Instant};

use crate::replay::ReplayObserver;

/// Redraw at most this often, so drawing never shows up in the replay's speed.
const REDRAW: Duration = Duration::from_millis(100);
const WIDTH: u64 = 30;

/// `[#######        ] 45%  12,800 / 28,476 jobs` on stderr, or a plain count when the total is
/// unknown; silent when stderr is not a terminal.
pub struct ProgressBar {
    out: Option<Stderr>,
    total: Option<u64>,
    last_draw: Option<Instant>,
}

impl ProgressBar {
    /// A bar for `total` jobs (if known), enabled only if stderr is a terminal.
    pub fn stderr(total: Option<u64>) -> Self {
        let err = std::io::stderr();
        ProgressBar {
            out: err.is_terminal().then_some(err),
            total,
            last_draw: None,
        }
    }

    /// Erases the bar.
    pub fn clear(&mut self) {
        if let (Some(out), Some(_)) = (&mut self.out, self.last_draw.take()) {
            let _ = write!(out, "\r{:width$}\r", "", width = WIDTH as usize + 40);
            let _ = out.flush();
        }
    }

    fn draw(&mut self, done: u64) {
        let Some(out) = &mut self.out else { return };
        let line = match self.total.filter(|&t| t > 0) {
            Some(total) => {
                let done = done.min(total);
                let filled = done * WIDTH / total;
                format!(
                    "\r[{}{}] {:>3}%  {} / {} jobs",
                    "#".repeat(filled as usize),
                    " ".repeat((WIDTH - filled) as usize),
                    done * 100 / total,
                    done,
                    total
                )
            }
            None => format!("\r{done} jobs"),
        };
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
    }
}

impl ReplayObserver for ProgressBar {
    fn progress(&mut self, submitted: u64) {
        if self.out.is_none() {
            return;
        }
        let now = Instant::now();
        if self.last_draw.is_none_or(|last| now - last >= REDRAW) {
            self.last_draw = Some(now);
            self.draw(submitted);
        }
    }
}

impl Drop for ProgressBar {
    fn drop(&mut self) {
        self.clear();
    }
}
