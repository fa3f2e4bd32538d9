//! What runs in a terminal besides its shell and its foreground program: the background
//! jobs and daemons a command left behind (`npm run dev &`, `nohup`, a `setsid` daemon).
//!
//! Why: a terminal an agent opened for one command and forgot may still hold a dev server;
//! `list` shows such jobs so that nothing runs unseen, and an idle terminal that still holds
//! one is not closed under it. Known from the kernel: every process below the terminal's
//! supervisor (orphans are re-parented to it) outside the shell's process group and the
//! foreground group.

use serde::{Deserialize, Serialize};

#[cfg(unix)]
/// Most jobs reported for one terminal.
const MAX_JOBS: usize = 16;
#[cfg(unix)]
/// Most processes looked at under one terminal.
const MAX_WALK: usize = 1024;
#[cfg(unix)]
/// Longest command line reported.
const MAX_COMMAND: usize = 160;

/// A background job: its leader's pid (as the server sees it) and command line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Job {
    pub pid: i32,
    pub command: String,
}

#[cfg(unix)]
fn stat_field(stat: &str, n: usize) -> Option<i32> {
    let close = stat.rfind(')')?;
    stat.get(close + 2..)?
        .split_ascii_whitespace()
        .nth(n.checked_sub(3)?)?
        .parse()
        .ok()
}

#[cfg(unix)]
fn command_line(pid: i32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let mut line: String = String::from_utf8_lossy(&raw)
        .split('\0')
        .filter(|a| !a.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if line.chars().count() > MAX_COMMAND {
        line = line.chars().take(MAX_COMMAND).collect::<String>() + "…";
    }
    line
}

#[cfg(unix)]
/// The process groups under `root` (the terminal's supervisor) other than the shell's
/// (`shell`) and the foreground's (`fg_pgid`), leaving out the processes between the
/// supervisor and the shell (a sandbox's): one job per group, named by its leader when it
/// lives, else by its first member found.
pub fn background(root: i32, shell: i32, fg_pgid: i32) -> Vec<Job> {
    let Ok(shell_stat) = std::fs::read_to_string(format!("/proc/{shell}/stat")) else {
        return Vec::new();
    };
    let Some(shell_pgid) = stat_field(&shell_stat, 5) else {
        return Vec::new();
    };
    // The shell and its ancestors up to the supervisor.
    let mut line = vec![shell];
    let mut at = shell;
    while at != root && line.len() < 16 {
        let parent = std::fs::read_to_string(format!("/proc/{at}/stat"))
            .ok()
            .and_then(|s| stat_field(&s, 4));
        match parent {
            Some(p) if p > 1 => {
                line.push(p);
                at = p;
            }
            _ => break,
        }
    }
    let mut jobs: Vec<(i32, Job)> = Vec::new();
    let mut todo = super::tree::children(root);
    let mut seen = 0usize;
    while let Some(p) = todo.pop() {
        seen += 1;
        if seen > MAX_WALK {
            break;
        }
        todo.extend(super::tree::children(p));
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let Some(pgid) = stat_field(&stat, 5) else {
            continue;
        };
        // A zombie has no command line: nothing runs there.
        if pgid == shell_pgid || pgid == fg_pgid || line.contains(&p) || stat.contains(") Z ") {
            continue;
        }
        let leader = p == pgid;
        if let Some((_, job)) = jobs.iter_mut().find(|(g, _)| *g == pgid) {
            if leader {
                *job = Job {
                    pid: p,
                    command: command_line(p),
                };
            }
        } else if jobs.len() < MAX_JOBS {
            jobs.push((
                pgid,
                Job {
                    pid: p,
                    command: command_line(p),
                },
            ));
        }
    }
    let mut jobs: Vec<Job> = jobs.into_iter().map(|(_, j)| j).collect();
    jobs.sort_by_key(|j| j.pid);
    jobs
}
