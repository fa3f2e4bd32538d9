//! Bounded waits that keep the caller informed: every wait has a deadline, and while it
//! lasts a progress report goes out at a steady pace (MCP clients give up on silent calls).
//! A wait also ends when the caller stops waiting (an MCP client cancels the call): what
//! the call was waiting for is then the service's to settle.

use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Pace of progress reports during a wait.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

/// The caller of one request, as its waits see it: where progress goes (the MCP layer
/// turns it into `notifications/progress`), and whether the caller still waits.
pub trait Progress: Send + Sync {
    /// `what` is waited for, and has been for `elapsed`: the face that shows it says both
    /// once (the words carry no time of their own).
    fn report(&self, elapsed: Duration, what: &str);

    /// Fired when the caller stopped waiting for the answer (an MCP client's
    /// `notifications/cancelled`); `None` for a caller that cannot.
    fn abandoned(&self) -> Option<&CancellationToken> {
        None
    }
}

/// Whether the caller stopped waiting.
pub fn is_abandoned(progress: &dyn Progress) -> bool {
    progress
        .abandoned()
        .is_some_and(CancellationToken::is_cancelled)
}

/// Resolves when the caller stops waiting; never, for a caller that cannot.
pub async fn abandoned(progress: &dyn Progress) {
    match progress.abandoned() {
        Some(t) => t.cancelled().await,
        None => std::future::pending().await,
    }
}

/// Progress nobody listens to, from a caller that always waits.
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&self, _elapsed: Duration, _what: &str) {}
}

/// Wait until `done()` holds, `deadline` passes or the caller stops waiting, waking on
/// every change of `rx`. Returns whether `done()` held.
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
        tokio::select! {
            changed = tokio::time::timeout_at(wake.into(), rx.changed()) => match changed {
                Ok(Ok(())) | Err(_) => {}
                // The sender is gone: nothing will change any more.
                Ok(Err(_)) => return done(),
            },
            () = abandoned(progress) => return done(),
        }
    }
}

/// Await `fut`, reporting progress at a steady pace while it runs. It is awaited to its end
/// even when the caller stops waiting: what it does (an operation on a terminal host) is
/// not to be cut in the middle; [`unless_abandoned`] is for what may be.
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

/// Await `fut`, or until the caller stops waiting (`None`, and `fut` is dropped): for a wait
/// that leaves nothing half done, such as a question put to a person.
pub async fn unless_abandoned<F: std::future::Future>(
    fut: F,
    progress: &dyn Progress,
) -> Option<F::Output> {
    tokio::select! {
        // A caller already gone is not answered by whatever else is ready.
        biased;
        () = abandoned(progress) => None,
        out = fut => Some(out),
    }
}
