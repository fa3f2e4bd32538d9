//! Bounded waits that keep the caller informed: every wait has a deadline, and while it
//! lasts a progress report goes out at a steady pace (MCP clients give up on silent calls).

use std::time::{Duration, Instant};

use tokio::sync::watch;

/// Pace of progress reports during a wait.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

/// Where progress goes; the MCP layer turns it into `notifications/progress`.
pub trait Progress: Send + Sync {
    /// `what` is waited for, and has been for `elapsed`: the face that shows it says both
    /// once (the words carry no time of their own).
    fn report(&self, elapsed: Duration, what: &str);
}

/// Progress nobody listens to.
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&self, _elapsed: Duration, _what: &str) {}
}

/// Wait until `done()` holds or `deadline` passes, waking on every change of `rx`.
/// Returns whether `done()` held.
pub async fn wait_until(
    rx: &mut watch::Receiver<u64>,
    deadline: Instant,
    progress: &dyn Progress,
    what: &str,
    mut done: impl FnMut() -> bool,
) -> bool {
    let started = Instant::now();
    let mut next_report = started + PROGRESS_INTERVAL;
    loop {
        if done() {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        if now >= next_report {
            let elapsed = now - started;
            progress.report(elapsed, what);
            next_report = now + PROGRESS_INTERVAL;
        }
        let wake = deadline.min(next_report);
        match tokio::time::timeout_at(wake.into(), rx.changed()).await {
            Ok(Ok(())) | Err(_) => {}
            // The sender is gone: nothing will change any more.
            Ok(Err(_)) => return done(),
        }
    }
}

/// Await `fut`, reporting progress at a steady pace while it runs.
pub async fn with_progress<F: std::future::Future>(
    fut: F,
    progress: &dyn Progress,
    what: &str,
) -> F::Output {
    let started = Instant::now();
    tokio::pin!(fut);
    let mut tick =
        tokio::time::interval_at((started + PROGRESS_INTERVAL).into(), PROGRESS_INTERVAL);
    loop {
        tokio::select! {
            out = &mut fut => return out,
            _ = tick.tick() => {
                let elapsed = started.elapsed();
                progress.report(elapsed, what);
            }
        }
    }
}
