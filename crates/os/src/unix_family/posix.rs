//! The plain POSIX forms of what Linux does in one call (`pipe2`, `SOCK_CLOEXEC`,
//! `memfd_create`): what macOS uses, compiled on Linux too for the tests below, so this code
//! runs somewhere.

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

pub(super) fn cloexec(fd: BorrowedFd<'_>, nonblocking: bool) -> nix::Result<()> {
    fcntl(fd.as_raw_fd(), FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
    if nonblocking {
        let flags = OFlag::from_bits_truncate(fcntl(fd.as_raw_fd(), FcntlArg::F_GETFL)?);
        fcntl(fd.as_raw_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    }
    Ok(())
}

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

/// A file created in the temporary directory and removed at once: only the descriptor
/// names it (macOS has no memory files).
pub fn anonymous_file(body: &[u8]) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("itmcp-request-{}-{n}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_CLOEXEC)
        .open(&path)?;
    let _ = std::fs::remove_file(&path);
    // At offset 0, leaving the shared offset where a reader of the passed descriptor starts.
    file.write_all_at(body, 0)?;
    Ok(file.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn is_cloexec(fd: BorrowedFd<'_>) -> bool {
        let flags = fcntl(fd.as_raw_fd(), FcntlArg::F_GETFD).expect("F_GETFD");
        FdFlag::from_bits_truncate(flags).contains(FdFlag::FD_CLOEXEC)
    }

    #[test]
    fn pipes_and_socket_pairs_are_closed_on_exec() {
        let (r, w) = pipe_cloexec(true).expect("pipe");
        assert!(is_cloexec(r.as_fd()) && is_cloexec(w.as_fd()));
        let mut buf = [0u8; 1];
        assert_eq!(
            nix::unistd::read(r.as_raw_fd(), &mut buf),
            Err(nix::errno::Errno::EAGAIN),
            "non-blocking"
        );
        let (a, b) = socket_pair_cloexec(nix::sys::socket::SockType::Stream).expect("pair");
        assert!(is_cloexec(a.as_fd()) && is_cloexec(b.as_fd()));
        let mut a = std::os::unix::net::UnixStream::from(a);
        let mut b = std::os::unix::net::UnixStream::from(b);
        a.write_all(b"x").expect("write");
        b.read_exact(&mut buf).expect("read");
        assert_eq!(&buf, b"x");
    }

    #[test]
    fn a_nameless_file_holds_the_body_and_nothing_is_left_on_disk() {
        let fd = anonymous_file(b"the request").expect("file");
        assert!(is_cloexec(fd.as_fd()));
        let mut f = std::fs::File::from(fd);
        let mut s = String::new();
        f.read_to_string(&mut s).expect("read");
        assert_eq!(s, "the request", "read from the start");
        let mine = format!("itmcp-request-{}-", std::process::id());
        let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
            .expect("temp dir")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&mine))
            .collect();
        assert!(left.is_empty(), "left on disk: {left:?}");
    }
}
