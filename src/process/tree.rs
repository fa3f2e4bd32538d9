//! Finding and killing every process an identity started, however it tried to escape.
//!
//! A process belongs to an identity when it descends from the identity's root process, shares
//! its process group (or, for terminals, its session), or carries the identity's marker in
//! its environment. The server is a child subreaper, so children that detach (`nohup`,
//! `setsid`, double forks) are re-parented to it instead of to init, and the marker still
//! names their identity. Killing freezes the whole set with SIGSTOP round after round until
//! no new member appears (a fork bomb cannot outrun it), then SIGKILLs all of it.

use std::collections::{BTreeSet, HashMap};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// Environment variable naming the identity that started a process.
pub const OWNER_ENV: &str = "PM_TERM_OWNER";

/// Freeze rounds before giving up on catching new forks.
const MAX_FREEZE_ROUNDS: usize = 64;

/// One row of the process table.
#[derive(Debug, Clone, Copy)]
pub struct ProcEntry {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    pub zombie: bool,
}

/// What to kill.
#[derive(Debug, Clone, Default)]
pub struct Selector {
    /// The identity's root process.
    pub root: Option<i32>,
    /// Every process in this process group.
    pub pgrp: Option<i32>,
    /// Every process in this session (terminals: the shell is a session leader).
    pub session: Option<i32>,
    /// Value of [`OWNER_ENV`] that marks the identity's processes.
    pub marker: Option<String>,
}

/// Parse `/proc/<pid>/stat`; the command name may contain spaces and parentheses.
fn parse_stat(pid: i32, stat: &str) -> Option<ProcEntry> {
    let close = stat.rfind(')')?;
    let mut f = stat.get(close + 2..)?.split_ascii_whitespace();
    let state = f.next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    let session = f.next()?.parse().ok()?;
    Some(ProcEntry {
        pid,
        ppid,
        pgrp,
        session,
        zombie: state == "Z" || state == "X",
    })
}

/// The current process table (processes that vanish mid-scan are skipped).
pub fn snapshot() -> Vec<ProcEntry> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        parse_stat(pid, &stat)
    })
    .collect()
}

/// Whether the process's environment carries `OWNER_ENV=marker`.
pub fn has_marker(pid: i32, marker: &str) -> bool {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let needle = format!("{OWNER_ENV}={marker}");
    env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes())
}

/// Pids that must never be signalled: this process and its ancestors.
fn protected() -> BTreeSet<i32> {
    let mut out = BTreeSet::from([0, 1]);
    let table: HashMap<i32, i32> = snapshot().iter().map(|p| (p.pid, p.ppid)).collect();
    let mut pid = std::process::id() as i32;
    while pid > 1 && out.insert(pid) {
        pid = table.get(&pid).copied().unwrap_or(0);
    }
    out
}

/// Living members of the selection in `table` (zombies are already dead).
pub fn members(table: &[ProcEntry], sel: &Selector) -> BTreeSet<i32> {
    let mut set: BTreeSet<i32> = BTreeSet::new();
    for p in table {
        let seed = Some(p.pid) == sel.root
            || (sel.pgrp.is_some() && Some(p.pgrp) == sel.pgrp)
            || (sel.session.is_some() && Some(p.session) == sel.session)
            || sel
                .marker
                .as_deref()
                .is_some_and(|m| !p.zombie && has_marker(p.pid, m));
        if seed {
            set.insert(p.pid);
        }
    }
    // Close over descendants.
    loop {
        let before = set.len();
        for p in table {
            if set.contains(&p.ppid) {
                set.insert(p.pid);
            }
        }
        if set.len() == before {
            break;
        }
    }
    let alive: BTreeSet<i32> = table.iter().filter(|p| !p.zombie).map(|p| p.pid).collect();
    set.intersection(&alive).copied().collect()
}

/// Freeze, then kill, every process of the selection. Returns the pids killed.
pub fn kill_tree(sel: &Selector) -> Vec<i32> {
    let protect = protected();
    let mut frozen: BTreeSet<i32> = BTreeSet::new();
    for _ in 0..MAX_FREEZE_ROUNDS {
        let table = snapshot();
        let fresh: Vec<i32> = members(&table, sel)
            .into_iter()
            .filter(|p| !protect.contains(p) && !frozen.contains(p))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for pid in fresh {
            let _ = kill(Pid::from_raw(pid), Signal::SIGSTOP);
            frozen.insert(pid);
        }
    }
    for pid in &frozen {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    frozen.into_iter().collect()
}

/// Every living descendant of this process (used at shutdown: after the subreaper has
/// adopted them, all leftovers of every identity are descendants).
pub fn kill_all_descendants() -> Vec<i32> {
    kill_tree(&Selector {
        root: Some(std::process::id() as i32),
        ..Selector::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_names() {
        let e = parse_stat(42, "42 (a) b (c)) S 7 42 40 0 -1 4194304").expect("parse");
        assert_eq!((e.ppid, e.pgrp, e.session, e.zombie), (7, 42, 40, false));
        let z = parse_stat(5, "5 (x) Z 1 5 5 0").expect("parse");
        assert!(z.zombie);
        assert!(parse_stat(1, "garbage").is_none());
    }

    #[test]
    fn members_close_over_descendants() {
        let t = [
            ProcEntry {
                pid: 10,
                ppid: 1,
                pgrp: 10,
                session: 10,
                zombie: false,
            },
            ProcEntry {
                pid: 11,
                ppid: 10,
                pgrp: 10,
                session: 10,
                zombie: false,
            },
            ProcEntry {
                pid: 12,
                ppid: 11,
                pgrp: 12,
                session: 12,
                zombie: false,
            },
            ProcEntry {
                pid: 13,
                ppid: 1,
                pgrp: 13,
                session: 13,
                zombie: false,
            },
            ProcEntry {
                pid: 14,
                ppid: 12,
                pgrp: 12,
                session: 12,
                zombie: true,
            },
        ];
        let sel = Selector {
            root: Some(10),
            ..Selector::default()
        };
        assert_eq!(
            members(&t, &sel).into_iter().collect::<Vec<_>>(),
            vec![10, 11, 12]
        );
        let sel = Selector {
            pgrp: Some(13),
            ..Selector::default()
        };
        assert_eq!(members(&t, &sel).into_iter().collect::<Vec<_>>(), vec![13]);
    }

    #[test]
    fn the_server_is_protected() {
        let p = protected();
        assert!(p.contains(&(std::process::id() as i32)));
        assert!(p.contains(&1));
    }
}
