//! Processes as the kernel lists them: found by their command line, their children, killed
//! with SIGKILL, their memory.

use super::*;

/// Pids of processes whose command line contains `needle`.
pub fn pids_with_arg(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    let me = std::process::id() as i32;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        if let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                // Zombies have an empty cmdline, so a match is a live process.
                out.push(pid);
            }
        }
    }
    out
}

/// Wait until no process has `needle` in its command line.
pub async fn wait_gone(needle: &str, within: Duration) -> Vec<i32> {
    let deadline = Instant::now() + within;
    loop {
        let left = pids_with_arg(needle);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Wait until at least `n` processes have `needle` in their command line.
pub async fn wait_present(needle: &str, n: usize, within: Duration) -> usize {
    let deadline = Instant::now() + within;
    loop {
        let found = pids_with_arg(needle).len();
        if found >= n || Instant::now() >= deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A unique token for process command lines in this test.
pub fn unique(tag: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(1);
    format!(
        "{tag}{}x{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Direct children of `pid` (every thread's list), as the kernel reports them.
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let path = t.path().join("children");
        let list = std::fs::read_to_string(path).unwrap_or_default();
        out.extend(
            list.split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok()),
        );
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Direct children of `pid` running the binary `exe`: a launched host, found by its file.
pub fn children_running(pid: u32, exe: &str) -> Vec<u32> {
    children_of(pid)
        .into_iter()
        .filter(|c| {
            std::fs::read_link(format!("/proc/{c}/exe")).unwrap_or_default()
                == std::path::Path::new(exe)
        })
        .collect()
}

/// Kill `pid` with SIGKILL, as the OOM killer or a crash would.
pub fn sigkill(pid: u32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
}

/// Whether `pid` is a live process (not gone, not a zombie waiting to be reaped).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .map(|(_, rest)| !rest.starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// A unique number usable as a `sleep` argument, so leftover processes can be found.
pub fn unique_sleep() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(1);
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("{}.{:05}{:03}", 900 + n, std::process::id() % 100_000, n)
}

/// Resident set size of a process in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
