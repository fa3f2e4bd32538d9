//! Walking and killing a process's own subtree, at a cost in proportion to that subtree.
//!
//! Children come from the system's process table through `os::children` (on Linux one small
//! read of `/proc/<pid>/task/<tid>/children` per process of the tree, never a scan of the
//! machine's processes unless the kernel lacks those files). Killing freezes each process with
//! SIGSTOP before reading its children (a stopped process cannot fork, so a fork bomb cannot
//! outrun the walk), then SIGKILLs everything found, and repeats until nothing is left: the
//! caller is a child subreaper, so whatever a dying process leaves behind comes back to the
//! caller as a child and is found on the next round.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// Pause between rounds while killed processes die.
const ROUND_PAUSE: Duration = Duration::from_millis(2);

/// The session id of `pid`.
pub fn session_of(pid: i32) -> Option<i32> {
    crate::os::session_of(pid)
}

/// Whether `pid` is a zombie (or gone).
pub fn is_zombie(pid: i32) -> bool {
    crate::os::parent_of(pid).is_none_or(|(_, zombie)| zombie)
}

/// The direct children of `pid`, every thread's.
pub fn children(pid: i32) -> Vec<i32> {
    crate::os::children(pid)
}

/// Freeze `roots` and everything below them, then kill all of it. Returns the pids found.
fn freeze_and_kill(roots: &[i32], seen: &mut BTreeSet<i32>) -> Vec<i32> {
    let mut found = Vec::new();
    let mut frontier: Vec<i32> = roots.to_vec();
    while let Some(p) = frontier.pop() {
        if p <= 1 || !seen.insert(p) {
            continue;
        }
        // Stopped first: it can no longer fork while its children are read.
        let _ = kill(Pid::from_raw(p), Signal::SIGSTOP);
        found.push(p);
        frontier.extend(children(p));
    }
    for p in &found {
        let _ = kill(Pid::from_raw(*p), Signal::SIGKILL);
    }
    found
}

/// What killing a subtree did.
#[derive(Debug, Default)]
pub struct Killed {
    /// Every pid signalled.
    pub pids: Vec<i32>,
    /// How each reaped child of the caller ended.
    pub reaped: Vec<WaitStatus>,
}

/// Kill every descendant of the calling process (a child subreaper), reaping as they die,
/// until none is left or `within` has passed.
pub fn kill_own_descendants(within: Duration) -> Killed {
    let me = std::process::id() as i32;
    let deadline = Instant::now() + within;
    let mut seen = BTreeSet::new();
    let mut out = Killed::default();
    loop {
        out.pids.extend(freeze_and_kill(&children(me), &mut seen));
        // Reap what died; stop when no child is left.
        let mut left = false;
        loop {
            match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => {
                    left = true;
                    break;
                }
                Ok(s) => out.reaped.push(s),
                Err(Errno::EINTR) => continue,
                Err(_) => break,
            }
        }
        if !left || Instant::now() >= deadline {
            return out;
        }
        std::thread::sleep(ROUND_PAUSE);
    }
}

/// Freeze and kill `root` and its subtree (a process that is not the caller's own tree:
/// an orphan adopted by the server). Returns the pids killed.
pub fn kill_subtree(root: i32) -> Vec<i32> {
    let mut seen = BTreeSet::new();
    freeze_and_kill(&[root], &mut seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_of_this_process_include_a_spawned_one() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("spawn sleep");
        let me = std::process::id() as i32;
        assert!(children(me).contains(&(child.id() as i32)));
        let killed = kill_subtree(child.id() as i32);
        assert_eq!(killed, vec![child.id() as i32]);
        let status = child.wait().expect("wait");
        assert!(!status.success());
    }
}
