//! Linux's and macOS's facilities: one function per facility here, an implementation per
//! system in `linux` and `bsd` (macOS), and `unix` for what both do alike.
//!
//! The seam grows as the Linux-only code moves behind it (docs/platforms.md says what runs
//! where); what has no counterpart on a system says so by its result, never by doing less
//! in silence.

use std::os::fd::{BorrowedFd, OwnedFd};

#[cfg(not(target_os = "linux"))]
mod bsd;
mod unix;

pub use unix::{
    ask_to_end, create_private, create_scratch, detach_session, effective_uid, executable,
    exhausted, not_private, process_exists, program_file_names, program_of, read_exact_at,
    real_uid, scrub_environment_block, user_label, write_all_at,
};
#[cfg(target_os = "linux")]
mod linux;
#[cfg(any(test, not(target_os = "linux")))]
mod posix;

#[cfg(not(target_os = "linux"))]
use bsd as imp;
#[cfg(target_os = "linux")]
use linux as imp;

/// A pipe whose two ends are closed on `exec`; `nonblocking` makes both ends return
/// `EAGAIN` instead of waiting.
pub fn pipe_cloexec(nonblocking: bool) -> nix::Result<(OwnedFd, OwnedFd)> {
    imp::pipe_cloexec(nonblocking)
}

/// Make the pipe `fd` hold up to `bytes` (a bigger buffer, fewer wake-ups for a reader of a
/// fast writer). Where the system has no such setting the pipe keeps its size; an error
/// does too.
pub fn grow_pipe(fd: BorrowedFd<'_>, bytes: i32) {
    imp::grow_pipe(fd, bytes)
}

/// A connected pair of Unix sockets of `kind`, both closed on `exec`.
pub fn socket_pair_cloexec(kind: nix::sys::socket::SockType) -> nix::Result<(OwnedFd, OwnedFd)> {
    imp::socket_pair_cloexec(kind)
}

/// Keep other processes of the same user from tracing this one or reading its memory and
/// environment. `Err` names why it could not be done.
pub fn forbid_tracing() -> Result<(), String> {
    imp::forbid_tracing()
}

/// Name this process as `ps` and `top` show it (at most 15 bytes); where the system has no
/// such name, nothing.
pub fn name_process(name: &std::ffi::CStr) {
    imp::name_process(name)
}

/// Tune the C library's allocator for a server that builds megabyte answers again and
/// again (glibc: see `linux`); elsewhere the allocator stays as it is.
pub fn tune_allocator() {
    imp::tune_allocator()
}

/// A descriptor that becomes readable once `after` has passed, timed by the kernel's
/// monotonic clock to the microsecond: an async runtime's timers tick in milliseconds, too
/// coarse for a wait of a quarter of one. `None` where the system has no such descriptor
/// (or it cannot be made): the caller falls back to its runtime's timer.
pub fn oneshot_timer(after: std::time::Duration) -> Option<OwnedFd> {
    imp::oneshot_timer(after)
}

/// This process's scheduling policy (`SCHED_OTHER`, `SCHED_BATCH`, ...); `None` when the
/// system cannot say.
pub fn own_policy() -> Option<i32> {
    imp::own_policy()
}

/// Every resource limit the system has: a program may change any of them on the process
/// that started it, so a process kept for the next program compares them all.
pub const LIMITS: &[nix::sys::resource::Resource] = imp::LIMITS;

/// The set of processors this process may run on, to compare; `None` when the system
/// cannot say.
pub fn affinity() -> Option<Affinity> {
    imp::affinity()
}

pub use imp::Affinity;

/// Move this process to the batch scheduling policy (run when a core is free, never ahead
/// of the process on it); the policy to give back to the processes it forks, or `None` when
/// nothing changed (already another policy, or a system without one).
pub fn into_batch() -> Option<i32> {
    imp::into_batch()
}

/// Set this process's scheduling policy back to `policy` (from [`into_batch`]).
pub fn set_policy(policy: i32) -> bool {
    imp::set_policy(policy)
}

/// Flags for sending on a socket whose peer may be gone: an error, not a `SIGPIPE`.
pub fn send_flags() -> nix::sys::socket::MsgFlags {
    imp::send_flags()
}

/// Flags for receiving descriptors: close-on-exec where the system sets it on receipt
/// (elsewhere [`received_cloexec`] sets it after).
pub fn receive_flags() -> nix::sys::socket::MsgFlags {
    imp::receive_flags()
}

/// Close-on-exec on a descriptor just received, where [`receive_flags`] could not ask for
/// it.
pub fn received_cloexec(fd: BorrowedFd<'_>) -> nix::Result<()> {
    imp::received_cloexec(fd)
}

/// A file with no name holding `body`, to pass to another process (a request too long for
/// one message).
pub fn anonymous_file(body: &[u8]) -> std::io::Result<OwnedFd> {
    imp::anonymous_file(body)
}

/// Whether the terminal whose pty master is `fd` holds input its program has not read (as
/// the program would read it: in canonical mode, whole lines). `None` where the system
/// cannot say. `fd` must be open for the length of the call.
pub fn pty_input_unread(fd: std::os::fd::RawFd) -> Option<bool> {
    imp::pty_input_unread(fd)
}

// ---- processes ------------------------------------------------------------------------

/// The direct children of `pid` (every thread's).
pub fn children(pid: i32) -> Vec<i32> {
    imp::children(pid)
}

/// The parent of `pid`, and whether `pid` is a zombie; `None` when it is gone.
pub fn parent_of(pid: i32) -> Option<(i32, bool)> {
    imp::parent_of(pid)
}

/// Whether `pid` runs: it exists and is not a zombie (ended, its status not yet read by its
/// parent — which, once that parent is dead too, may be an init that reaps late or never).
pub fn process_running(pid: i32) -> bool {
    process_exists(pid) && !parent_of(pid).is_some_and(|(_, zombie)| zombie)
}

/// The session `pid` belongs to.
pub fn session_of(pid: i32) -> Option<i32> {
    imp::session_of(pid)
}

/// Make this process the one its orphaned descendants are given to (a child subreaper).
/// `Err` says why not (macOS has no such thing: orphans go to launchd).
pub fn become_subreaper() -> Result<(), String> {
    imp::become_subreaper()
}

/// Whether this process dies (SIGKILL) when its parent does. Where the system has no such
/// setting it says so, and the caller relies on its other way of noticing.
pub fn die_with_parent(die: bool) -> Result<(), String> {
    imp::die_with_parent(die)
}

/// Signals read as events, for a process that keeps them blocked: a descriptor to wait on
/// beside others, and the signals taken from it one by one (Linux: a signalfd; macOS: a
/// kqueue, the pending signal taken off as it is read). It can also report the parent's
/// death as a signal ([`SignalSource::watch_parent`]).
pub use imp::SignalSource;

/// Field `n` of a Linux `/proc/<pid>/stat` line, numbered as in proc(5) from 3 (the state)
/// on: the command name before them may hold spaces and `)`.
pub fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let close = stat.rfind(')')?;
    stat.get(close + 2..)?
        .split_ascii_whitespace()
        .nth(n.checked_sub(3)?)
}

/// The parent pid in a Linux `/proc/<pid>/stat` line, and whether the process is a zombie.
pub fn parse_stat_ppid(stat: &str) -> Option<(i32, bool)> {
    let state = stat_field(stat, 3)?;
    let ppid = stat_field(stat, 4)?.parse().ok()?;
    Some((ppid, state == "Z" || state == "X"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_names() {
        assert_eq!(
            parse_stat_ppid("42 (a) b (c)) S 7 42 40 0 -1"),
            Some((7, false))
        );
        assert_eq!(parse_stat_ppid("5 (x) Z 1 5 5 0"), Some((1, true)));
        assert_eq!(parse_stat_ppid("garbage"), None);
        assert_eq!(stat_field("42 (a) b (c)) S 7 42 40 0 -1", 6), Some("40"));
        assert_eq!(stat_field("42 (a) S 7", 2), None);
        assert_eq!(stat_field("42 (a) S 7", 5), None);
    }

    #[test]
    fn the_process_table_knows_a_spawned_child() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("spawn sleep");
        let (me, pid) = (std::process::id() as i32, child.id() as i32);
        assert!(children(me).contains(&pid));
        assert_eq!(parent_of(pid), Some((me, false)));
        assert_eq!(session_of(pid), session_of(me));
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(parent_of(pid), None);
    }

    #[test]
    fn a_zombie_exists_but_does_not_run() {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        let pid = child.id() as i32;
        // Ended, not yet reaped: a zombie.
        let ended = (0..500).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            parent_of(pid).is_some_and(|(_, zombie)| zombie)
        });
        assert!(ended, "true did not end");
        assert!(process_exists(pid));
        assert!(!process_running(pid));
        assert!(process_running(std::process::id() as i32));
        let _ = child.wait();
        assert!(!process_running(pid));
    }

    #[test]
    fn a_signal_source_reports_blocked_signals_once() {
        use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask, raise};
        let mut mask = SigSet::empty();
        mask.add(Signal::SIGUSR2);
        // This thread only: the test harness's other threads keep their masks.
        pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&mask), None).expect("block");
        let mut source = SignalSource::new(&mask).expect("source");
        assert_eq!(source.next_signal(), None);
        raise(Signal::SIGUSR2).expect("raise");
        assert_eq!(source.next_signal(), Some(Signal::SIGUSR2));
        assert_eq!(source.next_signal(), None, "read once");
        pthread_sigmask(SigmaskHow::SIG_UNBLOCK, Some(&mask), None).expect("unblock");
    }
}
