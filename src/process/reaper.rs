//! The server as child subreaper: orphaned descendants are re-parented to it (so they can be
//! found and killed), and it reaps them when they exit.
//!
//! Reaping must never take the exit status of a child someone else waits for (tokio's
//! `Child`, portable-pty's child): those are registered here while they are spawned, under
//! the same lock the reaper holds while it scans, and only unregistered zombies are reaped.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

/// How often the reaper scans even without SIGCHLD.
const REAP_INTERVAL: Duration = Duration::from_secs(2);

fn owned() -> &'static Mutex<HashSet<i32>> {
    static OWNED: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    OWNED.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Make this process the subreaper of its descendants. Returns false where unsupported.
pub fn become_subreaper() -> bool {
    match nix::sys::prctl::set_child_subreaper(true) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(error = %e, "cannot become child subreaper; detached grandchildren may escape");
            false
        }
    }
}

/// Held while spawning a child whose status is collected elsewhere; register the pid
/// before dropping it.
pub struct SpawnGuard(MutexGuard<'static, HashSet<i32>>);

impl SpawnGuard {
    pub fn register(&mut self, pid: i32) {
        self.0.insert(pid);
    }
}

pub fn spawn_guard() -> SpawnGuard {
    SpawnGuard(owned().lock().unwrap_or_else(|p| p.into_inner()))
}

/// Forget a child once its owner has collected its status.
pub fn unregister(pid: i32) {
    owned()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&pid);
}

/// Reap every zombie child of ours that nobody else is waiting for.
pub fn reap_orphans() -> usize {
    let me = std::process::id() as i32;
    let guard = owned().lock().unwrap_or_else(|p| p.into_inner());
    let mut reaped = 0;
    for p in super::tree::snapshot() {
        if p.ppid == me
            && p.zombie
            && !guard.contains(&p.pid)
            && waitpid(Pid::from_raw(p.pid), Some(WaitPidFlag::WNOHANG)).is_ok()
        {
            reaped += 1;
        }
    }
    reaped
}

/// Run the reaper for the life of the process: on every SIGCHLD and every few seconds.
pub fn spawn_reaper() {
    tokio::spawn(async move {
        let mut sigchld = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())
        {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(error = %e, "no SIGCHLD stream; reaping on a timer only");
                None
            }
        };
        loop {
            match &mut sigchld {
                Some(s) => {
                    let _ = tokio::time::timeout(REAP_INTERVAL, s.recv()).await;
                }
                None => tokio::time::sleep(REAP_INTERVAL).await,
            }
            let _ = tokio::task::spawn_blocking(reap_orphans).await;
        }
    });
}
