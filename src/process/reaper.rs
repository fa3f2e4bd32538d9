//! The server (or host service) as child subreaper, the last line of containment.
//!
//! Every session lives under its own supervisor, below the spawner; the server's own children
//! are only those it starts itself (the spawner, a launched host), registered here while
//! they are spawned so their owners keep collecting their status. Anything else that shows
//! up as the server's child was adopted: a process whose supervisor and spawner were both
//! killed. It is killed with its subtree and reaped. Only the server's own children are
//! looked at, never the machine's process table.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, OnceLock};
#[cfg(unix)]
use std::time::Duration;

#[cfg(unix)]
use nix::sys::wait::{WaitPidFlag, waitpid};
#[cfg(unix)]
use nix::unistd::Pid;

#[cfg(unix)]
use super::tree;
use crate::locks::lock;

/// How often adoptions are looked for even without SIGCHLD.
#[cfg(unix)]
const REAP_INTERVAL: Duration = Duration::from_secs(2);

fn owned() -> &'static Mutex<HashSet<i32>> {
    static OWNED: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    OWNED.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Make this process the subreaper of its descendants. Returns false where unsupported.
/// Windows re-parents nothing: a session's job holds what its program leaves (`process`).
#[cfg(windows)]
pub fn become_subreaper() -> bool {
    false
}

/// Make this process the subreaper of its descendants. Returns false where unsupported.
#[cfg(unix)]
pub fn become_subreaper() -> bool {
    match crate::os::become_subreaper() {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(error = %e, "cannot become child subreaper; orphans of killed supervisors go to init");
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
    SpawnGuard(lock(owned()))
}

/// Run a helper program of the server's own (not a session: no supervisor), registered as
/// the server's own child while it runs, so the subreaper leaves its status to this caller;
/// its output. Started directly, it was reaped from under the caller (`ECHILD`).
pub async fn own_output(mut cmd: tokio::process::Command) -> std::io::Result<std::process::Output> {
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = {
        let mut guard = spawn_guard();
        let child = cmd.spawn()?;
        if let Some(pid) = child.id() {
            guard.register(pid as i32);
        }
        child
    };
    let pid = child.id();
    let out = child.wait_with_output().await;
    if let Some(pid) = pid {
        unregister(pid as i32);
    }
    out
}

/// Forget a child once its owner has collected its status.
pub fn unregister(pid: i32) {
    lock(owned()).remove(&pid);
}

/// Sessions of programs started for the operator and let go (a browser opened on the page):
/// what they leave is theirs, never killed as an orphan of a session.
fn released() -> &'static Mutex<HashSet<i32>> {
    static RELEASED: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    RELEASED.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Let the processes of session `sid` go (see [`released`]).
pub fn release_session(sid: i32) {
    lock(released()).insert(sid);
}

/// Nothing is adopted on Windows (see [`become_subreaper`]).
#[cfg(windows)]
pub fn handle_adopted() -> usize {
    0
}

/// Kill and reap every child of ours that nobody started; returns how many were handled.
#[cfg(unix)]
pub fn handle_adopted() -> usize {
    let me = std::process::id() as i32;
    let guard = lock(owned());
    let let_go = lock(released()).clone();
    let mut handled = 0;
    for pid in tree::children(me) {
        if guard.contains(&pid) {
            continue;
        }
        handled += 1;
        let theirs = tree::session_of(pid).is_some_and(|s| let_go.contains(&s));
        if !theirs && !tree::is_zombie(pid) {
            let killed = tree::kill_subtree(pid);
            tracing::warn!(pid, ?killed, "killed processes whose supervisor was killed");
        }
        let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
    }
    handled
}

/// Nothing is adopted on Windows (see [`become_subreaper`]).
#[cfg(windows)]
pub fn spawn_reaper() {}

/// Watch for adoptions for the life of the process: on every SIGCHLD and every few seconds.
#[cfg(unix)]
pub fn spawn_reaper() {
    tokio::spawn(async move {
        let mut sigchld = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())
        {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(error = %e, "no SIGCHLD stream; looking for orphans on a timer only");
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
            let _ = tokio::task::spawn_blocking(handle_adopted).await;
        }
    });
}
