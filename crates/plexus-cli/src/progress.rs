//! Import progress on stderr: a bar with bytes, rows, rate and ETA when stderr is a terminal; otherwise a plain
//! line every few seconds (for logs). Runs on its own thread, sampling the import's shared counters.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use plexus_import::progress::{Progress, Snapshot};

/// Time between plain progress lines.
const LINE_EVERY: Duration = Duration::from_secs(5);

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// One plain progress line.
fn line(s: &Snapshot, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(1e-9);
    if s.writing {
        // Parsing is done (bytes are at 100 %): what moves now is the commits.
        return format!("plexus import: {}: {} operations committed, {:.1} s", s.phase, s.rows, secs);
    }
    let pct = if s.bytes_total > 0 { 100.0 * s.bytes_done as f64 / s.bytes_total as f64 } else { 0.0 };
    format!(
        "plexus import: {}: {:.1} of {:.1} MB ({:.0}%), {} rows, {:.1} MB/s, {:.0} rows/s, {:.1} s",
        if s.phase.is_empty() { "starting" } else { &s.phase },
        mb(s.bytes_done),
        mb(s.bytes_total),
        pct.min(100.0),
        s.rows,
        mb(s.bytes_done) / secs,
        s.rows as f64 / secs,
        secs
    )
}

/// Reports `progress` until `done` is set.
pub fn report(progress: &Progress, done: &AtomicBool) {
    let start = Instant::now();
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {percent:>3}% {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let mut next_line = LINE_EVERY;
    while !done.load(Ordering::Acquire) {
        let s = progress.snapshot();
        match &bar {
            Some(bar) => {
                bar.set_length(s.bytes_total.max(s.bytes_done));
                bar.set_position(s.bytes_done);
                let rows = if s.writing { "operations committed" } else { "rows" };
                bar.set_message(format!("{} {rows}, {}", s.rows, s.phase));
            }
            None if start.elapsed() >= next_line => {
                eprintln!("{}", line(&s, start.elapsed()));
                next_line = start.elapsed() + LINE_EVERY;
            }
            None => {}
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}

/// Work with no progress measure of its own (a check, a checkpoint): on a terminal a spinner with the elapsed
/// time until the returned guard is dropped; otherwise, for work worth announcing (`large`), one plain line as
/// it starts, so a log shows what the process is doing.
pub fn busy(message: String, large: bool) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        if large {
            eprintln!("{message}");
        }
        return None;
    }
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    spinner.set_message(message);
    spinner.enable_steady_tick(Duration::from_millis(200));
    spinner.tick();
    Some(spinner)
}

/// Relationships above which a check or checkpoint is announced in a log.
pub const LARGE: u64 = 10_000_000;

/// A [`busy`] spinner that clears itself when dropped.
pub struct Spinner(pub indicatif::ProgressBar);

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
