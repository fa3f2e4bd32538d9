//! Whether a terminal's foreground program is waiting for input, as the kernel sees it.
//!
//! Why from the kernel: an answer that waits for output to go quiet waits its whole wait at a
//! prompt (`read -p`, a REPL, a password prompt), and one that looks for prompt-shaped text
//! (`>>> `) fires for a program that prints it and keeps computing. The kernel knows what each
//! process is doing: the foreground process group of the terminal (`tcgetpgrp`), each of its
//! processes' state (`/proc/<pid>/stat`: running or asleep) and, asleep, the system call it
//! sleeps in (`/proc/<pid>/syscall`) with its arguments. A process waits for input when it
//! sleeps in `read` of the terminal, or in `poll`/`select`/`epoll_wait` with the terminal
//! among what it waits to read (the descriptor sets read from `/proc/<pid>/mem`, an epoll's
//! from `/proc/<pid>/fdinfo`). A foreground group waits for input when none of its processes
//! runs and one of them waits so.
//!
//! Where the kernel does not say: a set-uid program (`sudo`, `su`) is not readable by the
//! server's user; such a process asleep, on a terminal in canonical mode with echo off (a
//! password prompt), counts as waiting; otherwise it is `Unknown`, and the caller waits for
//! the output to go quiet, as before.

#[cfg(target_os = "linux")]
use std::os::unix::fs::MetadataExt;

#[cfg(unix)]
/// Most processes of a foreground group looked at.
const MAX_MEMBERS: usize = 256;
#[cfg(target_os = "linux")]
/// Most descriptors of a `poll` set read.
const MAX_POLLFDS: usize = 256;
#[cfg(target_os = "linux")]
/// `/dev/tty`'s device number (5, 0): reading it reads the controlling terminal.
const DEV_TTY: u64 = 5 << 8;

/// What the foreground group is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputWait {
    /// Blocked reading the terminal: it waits for input.
    Waiting,
    /// Running, or asleep in something else (a child, a timer, the network).
    Busy,
    /// The kernel would not say (see the module's note).
    Unknown,
}

#[cfg(unix)]
/// What one process is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doing {
    ReadsTerminal,
    /// Waits to read the terminal only a moment (a short timeout): it is between two
    /// steps of its own work (vim deciding whether an Escape starts a key, a screen that
    /// redraws), not yet waiting for someone.
    ReadsTerminalBriefly,
    Other,
    Running,
    Hidden,
}

#[cfg(unix)]
/// A wait for the terminal with a timeout shorter than this is a pause in the program's
/// own work, not a wait for input.
const BRIEF_MS: i64 = 500;

#[cfg(target_os = "linux")]
/// A `timespec`/`timeval` at `addr` in milliseconds (`None` for a null pointer: no timeout).
/// `nanos`: the second field counts nanoseconds (`timespec`) rather than microseconds.
fn timeout_at(pid: i32, addr: u64, nanos: bool) -> Option<i64> {
    if addr == 0 {
        return None;
    }
    let raw = read_mem(pid, addr, 16)?;
    let secs = i64::from_ne_bytes(raw[..8].try_into().ok()?);
    let frac = i64::from_ne_bytes(raw[8..16].try_into().ok()?);
    Some(secs.saturating_mul(1000) + if nanos { frac / 1_000_000 } else { frac / 1000 })
}

#[cfg(unix)]
/// Field `n` of a `/proc/<pid>/stat` line (proc(5) numbering, from 3 on).
fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let close = stat.rfind(')')?;
    stat.get(close + 2..)?
        .split_ascii_whitespace()
        .nth(n.checked_sub(3)?)
}

#[cfg(unix)]
/// The processes of group `pgid` among `root` and its descendants.
fn members(root: i32, pgid: i32) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    let mut todo = vec![root];
    let mut seen = 0usize;
    while let Some(p) = todo.pop() {
        seen += 1;
        if seen > MAX_MEMBERS * 4 || out.len() >= MAX_MEMBERS {
            break;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        if stat_field(&stat, 5).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) {
            out.push((p, stat));
        }
        todo.extend(super::tree::children(p));
    }
    out
}

#[cfg(target_os = "linux")]
/// Whether descriptor `fd` of `pid` is the terminal (`tty`, its device number).
fn is_terminal(pid: i32, fd: u64, tty: u64) -> bool {
    std::fs::metadata(format!("/proc/{pid}/fd/{fd}"))
        .is_ok_and(|m| m.rdev() == tty || m.rdev() == DEV_TTY)
}

#[cfg(target_os = "linux")]
/// `len` bytes of `pid`'s memory at `addr`.
fn read_mem(pid: i32, addr: u64, len: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut buf = vec![0u8; len];
    f.read_exact_at(&mut buf, addr).ok()?;
    Some(buf)
}

#[cfg(target_os = "linux")]
/// Whether a `poll` set at `addr` of `n` entries waits to read the terminal.
fn poll_reads_terminal(pid: i32, addr: u64, n: u64, tty: u64) -> Option<bool> {
    let n = (n as usize).min(MAX_POLLFDS);
    // struct pollfd { int fd; short events; short revents; }
    let raw = read_mem(pid, addr, n * 8)?;
    Some(raw.chunks_exact(8).any(|e| {
        let fd = i32::from_ne_bytes([e[0], e[1], e[2], e[3]]);
        let events = i16::from_ne_bytes([e[4], e[5]]);
        fd >= 0 && events & nix::libc::POLLIN != 0 && is_terminal(pid, fd as u64, tty)
    }))
}

#[cfg(target_os = "linux")]
/// Whether a `select` read set at `addr` over `nfds` descriptors holds the terminal.
fn select_reads_terminal(pid: i32, nfds: u64, addr: u64, tty: u64) -> Option<bool> {
    if addr == 0 {
        return Some(false);
    }
    let nfds = nfds.min(4096);
    let raw = read_mem(pid, addr, nfds.div_ceil(8) as usize)?;
    Some(
        (0..nfds)
            .any(|fd| raw[(fd / 8) as usize] & (1 << (fd % 8)) != 0 && is_terminal(pid, fd, tty)),
    )
}

#[cfg(target_os = "linux")]
/// Whether epoll instance `epfd` of `pid` waits to read the terminal.
fn epoll_reads_terminal(pid: i32, epfd: u64, tty: u64) -> Option<bool> {
    let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")).ok()?;
    Some(info.lines().any(|l| {
        let mut w = l.split_ascii_whitespace();
        if w.next() != Some("tfd:") {
            return false;
        }
        let fd = w.next().and_then(|f| f.parse::<u64>().ok());
        let events = w
            .skip_while(|x| *x != "events:")
            .nth(1)
            .and_then(|e| u32::from_str_radix(e, 16).ok());
        matches!((fd, events), (Some(fd), Some(ev)) if ev & 1 != 0 && is_terminal(pid, fd, tty))
    }))
}

#[cfg(unix)]
/// What process `pid` (its `stat` line read) is doing.
fn doing(pid: i32, stat: &str, tty: u64) -> Doing {
    match stat_field(stat, 3) {
        Some("S") => {}
        Some("Z" | "X") => return Doing::Other,
        _ => return Doing::Running,
    }
    let Ok(sys) = std::fs::read_to_string(format!("/proc/{pid}/syscall")) else {
        return Doing::Hidden;
    };
    let mut w = sys.split_ascii_whitespace();
    let Some(nr) = w.next().and_then(|n| n.parse::<i64>().ok()) else {
        // "running", or a process that left the call as it was read.
        return Doing::Running;
    };
    let args: Vec<u64> = w
        .take(6)
        .filter_map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .collect();
    let (reads, timeout) = reading_call(pid, nr, &args, tty);
    match reads {
        Some(true) if timeout.is_some_and(|t| t < BRIEF_MS) => Doing::ReadsTerminalBriefly,
        Some(true) => Doing::ReadsTerminal,
        Some(false) => Doing::Other,
        None => Doing::Hidden,
    }
}

/// Whether the system call `nr` (arguments `args`) that process `pid` sleeps in reads the
/// terminal `tty` (`None`: cannot tell), and its timeout in milliseconds (`None`: for ever).
#[cfg(target_os = "linux")]
fn reading_call(pid: i32, nr: i64, args: &[u64], tty: u64) -> (Option<bool>, Option<i64>) {
    let arg = |i: usize| args.get(i).copied().unwrap_or(0);
    // How long it waits, when the call has a timeout (milliseconds; `None`: for ever).
    let ms = |v: u64| Some(v as i32 as i64).filter(|m| *m >= 0);
    let timeout = match nr {
        n if n == nix::libc::SYS_ppoll => timeout_at(pid, arg(2), true),
        n if n == nix::libc::SYS_pselect6 => timeout_at(pid, arg(4), true),
        n if n == nix::libc::SYS_epoll_pwait => ms(arg(3)),
        #[cfg(target_arch = "x86_64")]
        n if n == nix::libc::SYS_poll || n == nix::libc::SYS_epoll_wait => {
            ms(arg(2 + (n == nix::libc::SYS_epoll_wait) as usize))
        }
        #[cfg(target_arch = "x86_64")]
        n if n == nix::libc::SYS_select => timeout_at(pid, arg(4), false),
        _ => None,
    };
    let reads = match nr {
        n if n == nix::libc::SYS_read
            || n == nix::libc::SYS_readv
            || n == nix::libc::SYS_pread64 =>
        {
            Some(is_terminal(pid, arg(0), tty))
        }
        n if n == nix::libc::SYS_ppoll => poll_reads_terminal(pid, arg(0), arg(1), tty),
        n if n == nix::libc::SYS_pselect6 => select_reads_terminal(pid, arg(0), arg(1), tty),
        n if n == nix::libc::SYS_epoll_pwait || n == EPOLL_PWAIT2 => {
            epoll_reads_terminal(pid, arg(0), tty)
        }
        #[cfg(target_arch = "x86_64")]
        n if n == nix::libc::SYS_poll => poll_reads_terminal(pid, arg(0), arg(1), tty),
        #[cfg(target_arch = "x86_64")]
        n if n == nix::libc::SYS_select => select_reads_terminal(pid, arg(0), arg(1), tty),
        #[cfg(target_arch = "x86_64")]
        n if n == nix::libc::SYS_epoll_wait => epoll_reads_terminal(pid, arg(0), tty),
        _ => Some(false),
    };
    (reads, timeout)
}

#[cfg(unix)]
/// Only Linux says which call a process sleeps in (`/proc/<pid>/syscall`).
#[cfg(not(target_os = "linux"))]
fn reading_call(_pid: i32, _nr: i64, _args: &[u64], _tty: u64) -> (Option<bool>, Option<i64>) {
    (None, None)
}

#[cfg(target_os = "linux")]
/// `epoll_pwait2` (Linux 5.11), not in every C library's list of numbers.
const EPOLL_PWAIT2: i64 = 441;

#[cfg(unix)]
/// Whether the foreground group `pgid` of a terminal (device `tty`) whose program is `root`
/// waits for input. `password_mode`: the terminal reads lines with echo off, as a password
/// prompt sets it.
pub fn foreground_waits(root: i32, pgid: i32, tty: u64, password_mode: bool) -> InputWait {
    let members = members(root, pgid);
    if members.is_empty() {
        return InputWait::Unknown;
    }
    let mut reads = false;
    let mut hidden = false;
    for (pid, stat) in &members {
        match doing(*pid, stat, tty) {
            Doing::Running => return InputWait::Busy,
            Doing::ReadsTerminal => reads = true,
            Doing::Hidden | Doing::ReadsTerminalBriefly => hidden = true,
            Doing::Other => {}
        }
    }
    if reads || (hidden && password_mode) {
        InputWait::Waiting
    } else if hidden {
        InputWait::Unknown
    } else {
        InputWait::Busy
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_process_reading_a_pipe_is_not_waiting_for_the_terminal_and_one_sleeping_is_busy() {
        use std::process::{Command, Stdio};
        // Read a pipe, then sleep: neither is the terminal's input (there is none here).
        let mut cat = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("cat");
        let mut sleep = Command::new("sleep").arg("5").spawn().expect("sleep");
        std::thread::sleep(std::time::Duration::from_millis(100));
        for child in [&cat, &sleep] {
            let pid = child.id() as i32;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
            assert_eq!(doing(pid, &stat, 1), Doing::Other, "{pid}");
        }
        let _ = cat.kill();
        let _ = sleep.kill();
        let _ = cat.wait();
        let _ = sleep.wait();
    }
}
