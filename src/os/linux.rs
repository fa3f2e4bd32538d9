//! Linux's side of the seam (see `os`).

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use nix::fcntl::OFlag;

pub fn pipe_cloexec(nonblocking: bool) -> nix::Result<(OwnedFd, OwnedFd)> {
    let mut flags = OFlag::O_CLOEXEC;
    if nonblocking {
        flags |= OFlag::O_NONBLOCK;
    }
    nix::unistd::pipe2(flags)
}

pub fn grow_pipe(fd: BorrowedFd<'_>, bytes: i32) {
    let _ = nix::fcntl::fcntl(fd.as_raw_fd(), nix::fcntl::FcntlArg::F_SETPIPE_SZ(bytes));
}

pub fn socket_pair_cloexec(kind: nix::sys::socket::SockType) -> nix::Result<(OwnedFd, OwnedFd)> {
    use nix::sys::socket::{AddressFamily, SockFlag, socketpair};
    socketpair(AddressFamily::Unix, kind, None, SockFlag::SOCK_CLOEXEC)
}

pub fn forbid_tracing() -> Result<(), String> {
    nix::sys::prctl::set_dumpable(false).map_err(|e| e.to_string())
}

pub fn name_process(name: &std::ffi::CStr) {
    let _ = nix::sys::prctl::set_name(name);
}

pub fn own_policy() -> Option<i32> {
    // SAFETY: sched_getscheduler reads this process's own policy and takes no pointer.
    let policy = unsafe { nix::libc::sched_getscheduler(0) };
    (policy >= 0).then_some(policy)
}

use nix::sys::resource::Resource;

pub const LIMITS: &[Resource] = &[
    Resource::RLIMIT_AS,
    Resource::RLIMIT_CORE,
    Resource::RLIMIT_CPU,
    Resource::RLIMIT_DATA,
    Resource::RLIMIT_FSIZE,
    Resource::RLIMIT_LOCKS,
    Resource::RLIMIT_MEMLOCK,
    Resource::RLIMIT_MSGQUEUE,
    Resource::RLIMIT_NICE,
    Resource::RLIMIT_NOFILE,
    Resource::RLIMIT_NPROC,
    Resource::RLIMIT_RSS,
    Resource::RLIMIT_RTPRIO,
    Resource::RLIMIT_RTTIME,
    Resource::RLIMIT_SIGPENDING,
    Resource::RLIMIT_STACK,
];

pub type Affinity = nix::sched::CpuSet;

pub fn affinity() -> Option<Affinity> {
    nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok()
}

pub fn into_batch() -> Option<i32> {
    let policy = own_policy()?;
    (policy == nix::libc::SCHED_OTHER && set_policy(nix::libc::SCHED_BATCH)).then_some(policy)
}

/// At the static priority 0 these policies take.
pub fn set_policy(policy: i32) -> bool {
    let param = nix::libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler on this process, with a parameter that lives through the
    // call.
    unsafe { nix::libc::sched_setscheduler(0, policy, &param) == 0 }
}

pub fn send_flags() -> nix::sys::socket::MsgFlags {
    nix::sys::socket::MsgFlags::MSG_NOSIGNAL
}

pub fn receive_flags() -> nix::sys::socket::MsgFlags {
    nix::sys::socket::MsgFlags::MSG_CMSG_CLOEXEC
}

/// Set on receipt already ([`receive_flags`]).
pub fn received_cloexec(_fd: BorrowedFd<'_>) -> nix::Result<()> {
    Ok(())
}

/// A memory file.
pub fn anonymous_file(body: &[u8]) -> std::io::Result<OwnedFd> {
    use nix::sys::memfd::{MemFdCreateFlag, memfd_create};
    use std::os::unix::fs::FileExt;
    let fd = memfd_create(c"itmcp-request", MemFdCreateFlag::MFD_CLOEXEC)?;
    let file = std::fs::File::from(fd);
    file.write_all_at(body, 0)?;
    Ok(file.into())
}
