//! macOS's side of the seam (see `os`): the BSD calls where Linux has its own.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};

/// `pipe` then close-on-exec on each end: macOS has no `pipe2`. A program another thread
/// starts in the moment between the two inherits the ends (macOS has no atomic form).
pub fn pipe_cloexec(nonblocking: bool) -> nix::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe()?;
    for fd in [r.as_fd(), w.as_fd()] {
        cloexec(fd, nonblocking)?;
    }
    Ok((r, w))
}

fn cloexec(fd: BorrowedFd<'_>, nonblocking: bool) -> nix::Result<()> {
    fcntl(fd.as_raw_fd(), FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
    if nonblocking {
        let flags = OFlag::from_bits_truncate(fcntl(fd.as_raw_fd(), FcntlArg::F_GETFL)?);
        fcntl(fd.as_raw_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    }
    Ok(())
}

/// A macOS pipe grows by itself (up to 64 KiB) as its writer fills it.
pub fn grow_pipe(_fd: BorrowedFd<'_>, _bytes: i32) {}

/// `socketpair` then close-on-exec on each end: macOS has no `SOCK_CLOEXEC` (the same
/// moment as in [`pipe_cloexec`]).
pub fn socket_pair_cloexec(kind: nix::sys::socket::SockType) -> nix::Result<(OwnedFd, OwnedFd)> {
    use nix::sys::socket::{AddressFamily, SockFlag, socketpair};
    let (a, b) = socketpair(AddressFamily::Unix, kind, None, SockFlag::empty())?;
    for fd in [a.as_fd(), b.as_fd()] {
        cloexec(fd, false)?;
    }
    Ok((a, b))
}

pub fn forbid_tracing() -> Result<(), String> {
    // PT_DENY_ATTACH: no debugger attaches to this process from now on.
    // SAFETY: ptrace(PT_DENY_ATTACH) on this process takes no pointer.
    let rc = unsafe { nix::libc::ptrace(nix::libc::PT_DENY_ATTACH, 0, std::ptr::null_mut(), 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

/// macOS names a process by its program; a thread's name is not the process's.
pub fn name_process(_name: &std::ffi::CStr) {}

/// macOS has no scheduling policies to choose between for a process.
pub fn own_policy() -> Option<i32> {
    None
}

use nix::sys::resource::Resource;

pub const LIMITS: &[Resource] = &[
    Resource::RLIMIT_AS,
    Resource::RLIMIT_CORE,
    Resource::RLIMIT_CPU,
    Resource::RLIMIT_DATA,
    Resource::RLIMIT_FSIZE,
    Resource::RLIMIT_NOFILE,
    Resource::RLIMIT_STACK,
];

/// macOS does not let a process name the processors it runs on.
pub type Affinity = ();

pub fn affinity() -> Option<Affinity> {
    Some(())
}

pub fn into_batch() -> Option<i32> {
    None
}

pub fn set_policy(_policy: i32) -> bool {
    false
}

/// macOS has no `MSG_NOSIGNAL`; the server ignores `SIGPIPE` (as Rust programs do), so a
/// gone peer is an `EPIPE` error there too.
pub fn send_flags() -> nix::sys::socket::MsgFlags {
    nix::sys::socket::MsgFlags::empty()
}

pub fn receive_flags() -> nix::sys::socket::MsgFlags {
    nix::sys::socket::MsgFlags::empty()
}

pub fn received_cloexec(fd: BorrowedFd<'_>) -> nix::Result<()> {
    cloexec(fd, false)
}

/// A file created in the temporary directory and removed at once: only the descriptor
/// names it (macOS has no memory files).
pub fn anonymous_file(body: &[u8]) -> std::io::Result<OwnedFd> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("itmcp-request-{}-{n}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_CLOEXEC)
        .open(&path)?;
    let _ = std::fs::remove_file(&path);
    file.write_all(body)?;
    Ok(file.into())
}
