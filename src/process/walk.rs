//! Walking and killing a process's own subtree, at a cost in proportion to that subtree.
//!
//! Children come from `/proc/<pid>/task/<tid>/children` (one small read per process of the
//! tree), never from a scan of the machine's process table; a kernel without that file
//! (`CONFIG_PROC_CHILDREN` off) falls back to the scan. Killing freezes each process with
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

/// Whether this kernel lists children per task.
fn has_children_files() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        let me = std::process::id();
        std::path::Path::new(&format!("/proc/{me}/task/{me}/children")).exists()
    })
}

/// Field `n` of a `/proc/<pid>/stat` line, numbered as in proc(5) from 3 (the state) on: the
/// command name before them may hold spaces and `)`.
fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let close = stat.rfind(')')?;
    stat.get(close + 2..)?
        .split_ascii_whitespace()
        .nth(n.checked_sub(3)?)
}

/// The parent pid in a `/proc/<pid>/stat` line, and whether the process is a zombie.
pub fn parse_ppid(stat: &str) -> Option<(i32, bool)> {
    let state = stat_field(stat, 3)?;
    let ppid = stat_field(stat, 4)?.parse().ok()?;
    Some((ppid, state == "Z" || state == "X"))
}

/// The session id of `pid`.
pub fn session_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_field(&stat, 6)?.parse().ok()
}

/// Whether `pid` is a zombie (or gone).
pub fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| parse_ppid(&s))
        .is_none_or(|(_, zombie)| zombie)
}

/// The direct children of `pid`, every thread's.
pub fn children(pid: i32) -> Vec<i32> {
    if !has_children_files() {
        return children_by_scan(pid);
    }
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let mut path = t.path();
        path.push("children");
        if let Ok(text) = std::fs::read_to_string(&path) {
            out.extend(
                text.split_ascii_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    out
}

fn children_by_scan(pid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| parse_ppid(&s))
                .is_some_and(|(ppid, _)| ppid == pid)
        })
        .collect()
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
    fn parses_stat_with_odd_names() {
        assert_eq!(parse_ppid("42 (a) b (c)) S 7 42 40 0 -1"), Some((7, false)));
        assert_eq!(parse_ppid("5 (x) Z 1 5 5 0"), Some((1, true)));
        assert_eq!(parse_ppid("garbage"), None);
        assert_eq!(stat_field("42 (a) b (c)) S 7 42 40 0 -1", 6), Some("40"));
        assert_eq!(stat_field("42 (a) S 7", 2), None);
        assert_eq!(stat_field("42 (a) S 7", 5), None);
    }

    #[test]
    fn children_of_this_process_include_a_spawned_one() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("spawn sleep");
        let me = std::process::id() as i32;
        assert!(children(me).contains(&(child.id() as i32)));
        assert!(children_by_scan(me).contains(&(child.id() as i32)));
        let killed = kill_subtree(child.id() as i32);
        assert_eq!(killed, vec![child.id() as i32]);
        let status = child.wait().expect("wait");
        assert!(!status.success());
    }
}
