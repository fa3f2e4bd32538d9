//! The operating system's facilities that differ between the systems the server is built
//! for, behind one seam: one function per facility here, an implementation per OS family in
//! `linux` and `bsd` (macOS). Callers name what they need (a close-on-exec pipe, a process
//! other processes cannot trace) rather than the call that gives it on one system.
//!
//! The seam grows as the Linux-only code moves behind it (docs/platforms.md says what runs
//! where); what has no counterpart on a system says so by its result, never by doing less
//! in silence.

use std::os::fd::{BorrowedFd, OwnedFd};

#[cfg(not(target_os = "linux"))]
mod bsd;
#[cfg(target_os = "linux")]
mod linux;

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
