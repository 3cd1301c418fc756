//! Progress of long runs (`match`, `route`, `bench`) for a person watching a terminal.
//!
//! - A progress bar (`indicatif`) on standard error, when standard error is a terminal and
//!   standard output is not (the output goes to a file or a pipe; when both are the same
//!   terminal, the output itself shows the progress and a bar would tear it): lines done,
//!   messages per second, and with an input of known size (a file) the share done and the time
//!   left.
//! - A one-line summary on standard error at the end (lines, matched, errors, elapsed), when
//!   standard error is a terminal.
//!
//! Otherwise nothing at all: what scripts read from standard error stays the errors.

use super::output::Stderr;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// How often the bar is redrawn at most.
const REFRESH: Duration = Duration::from_millis(100);

/// Whether standard error is a terminal (a person reads it).
pub(super) fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Whether a progress bar is drawn: standard error is a terminal and standard output is not.
pub(super) fn bar_wanted() -> bool {
    stderr_is_terminal() && !std::io::stdout().is_terminal()
}

/// The progress of one run over lines of input.
pub(super) struct Progress {
    /// The command, for the summary (`match`, `route`).
    command: &'static str,
    bar: Option<ProgressBar>,
    started: Instant,
    last_draw: Instant,
    lines: u64,
}

impl Progress {
    /// Starts the progress of `command` over an input of `size` bytes when known.
    pub(super) fn new(command: &'static str, size: Option<u64>) -> Progress {
        let bar = bar_wanted().then(|| lines_bar(size));
        let now = Instant::now();
        Progress {
            command,
            bar,
            started: now,
            last_draw: now,
            lines: 0,
        }
    }

    /// `lines` more lines done at once (a batch); `consumed` bytes of the input are read.
    pub(super) fn lines(&mut self, lines: u64, consumed: u64) {
        self.lines += lines;
        if self.bar.is_some() {
            self.draw(consumed);
        }
    }

    fn draw(&mut self, consumed: u64) {
        let now = Instant::now();
        if now.duration_since(self.last_draw) < REFRESH {
            return;
        }
        self.last_draw = now;
        if let Some(bar) = &self.bar {
            let rate = self.lines as f64 / now.duration_since(self.started).as_secs_f64();
            bar.set_position(consumed);
            bar.set_message(format!("{} lines, {rate:.0} msg/s", self.lines));
        }
    }

    /// Runs `f` (which writes to standard error) with the bar hidden, then draws it again.
    pub(super) fn suspend(&self, f: impl FnOnce()) {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// Clears the bar (so that a report on standard error starts on a clean line).
    pub(super) fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// Ends the run: clears the bar and, on a terminal, prints the summary.
    pub(super) fn finish(&self, lines: u64, matched: u64, errors: u64) {
        self.clear();
        if stderr_is_terminal() {
            writeln!(
                Stderr,
                "filtervm {}: {lines} lines, {matched} matched, {errors} errors, {:.2} s",
                self.command,
                self.started.elapsed().as_secs_f64()
            );
        }
    }
}

/// A bar over `size` bytes, or a spinner counting lines when the size is unknown.
fn lines_bar(size: Option<u64>) -> ProgressBar {
    let target = ProgressDrawTarget::stderr_with_hz(10);
    let (bar, template) = match size {
        Some(size) => (
            ProgressBar::with_draw_target(Some(size), target),
            "{bar:30} {percent:>3}% {msg}, {elapsed} elapsed, {eta} left",
        ),
        None => (
            ProgressBar::with_draw_target(None, target),
            "{spinner} {msg}, {elapsed} elapsed",
        ),
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar.set_message("0 lines, 0 msg/s");
    bar.tick();
    bar
}

/// A bar for one phase of `bench`: `total` steps, `phase` as its prefix; hidden unless a bar is
/// wanted.
pub(super) fn phase_bar(phase: &str, total: u64) -> ProgressBar {
    if !bar_wanted() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(10));
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix:>12} {bar:30} {pos}/{len} {per_sec}, {elapsed} elapsed, {eta} left",
    ) {
        bar.set_style(style);
    }
    bar.set_prefix(phase.to_owned());
    bar
}
