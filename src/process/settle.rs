//! What every system's sessions share: waiting for a program's exit, and the one kill
//! protocol for headless sessions and terminals alike.

use std::time::Duration;

use tokio::sync::watch;

use super::wire::ChildExit;

/// How a session's program ended, once its owner says (`exit` is set once, when it has);
/// `Unknown` when the owner is gone without saying.
pub async fn exit_of(mut exit: watch::Receiver<Option<ChildExit>>) -> ChildExit {
    loop {
        if let Some(e) = *exit.borrow_and_update() {
            return e;
        }
        if exit.changed().await.is_err() {
            return ChildExit::Unknown;
        }
    }
}

/// The one kill protocol for headless sessions and terminals alike: `kill` everything in
/// the session, then wait up to `settle` for its owner to record the exit (`changes` wakes
/// on every change of the owner's state, `running` reads it). Returns the pids killed and
/// whether the exit was recorded in time.
pub async fn kill_and_settle(
    kill: impl std::future::Future<Output = Vec<i32>>,
    mut changes: watch::Receiver<u64>,
    running: impl Fn() -> bool,
    settle: Duration,
) -> (Vec<i32>, bool) {
    let killed = kill.await;
    let settled = tokio::time::timeout(settle, async {
        while running() {
            if changes.changed().await.is_err() {
                break;
            }
        }
    })
    .await;
    (killed, settled.is_ok())
}
