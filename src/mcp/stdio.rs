//! The process's standard input and output as async streams for the MCP channel.
//!
//! Why not `tokio::io::stdin()`/`stdout()`: those hand every read and every write to a
//! thread of the blocking pool, so each request crossed two extra threads (a reader thread
//! waking a worker, a worker waking a writer thread), which on a small machine was most of
//! the server's own CPU per tool call. When the streams are pipes or Unix stream sockets —
//! what every MCP client gives a server it launches (Node-based clients use socket pairs) —
//! they are read and written through the runtime's event loop instead, made non-blocking
//! for that. A terminal or a regular file (a person typing, input redirected from a file)
//! cannot be polled that way and keeps the blocking-pool path.
//!
//! The descriptors are duplicated, never closed: 0 and 1 stay taken for the life of the
//! process, so nothing opened later lands on them.

#[cfg(unix)]
use std::os::fd::{BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll};

#[cfg(unix)]
use nix::sys::stat::{SFlag, fstat};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

#[cfg(unix)]
/// Standard input.
const STDIN: i32 = 0;
#[cfg(unix)]
/// Standard output.
const STDOUT: i32 = 1;

#[cfg(unix)]
/// What a standard stream is, as far as polling it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pipe,
    Socket,
    /// A terminal, a regular file, `/dev/null`: read and written on the blocking pool.
    Other,
}

#[cfg(unix)]
fn kind(fd: BorrowedFd<'_>) -> Kind {
    let Ok(st) = fstat(std::os::fd::AsRawFd::as_raw_fd(&fd)) else {
        return Kind::Other;
    };
    match SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFIFO => Kind::Pipe,
        SFlag::S_IFSOCK if is_stream_socket(fd) => Kind::Socket,
        _ => Kind::Other,
    }
}

#[cfg(unix)]
fn is_stream_socket(fd: BorrowedFd<'_>) -> bool {
    use nix::sys::socket::{
        AddressFamily, SockType, SockaddrLike, SockaddrStorage, getsockname, sockopt,
    };
    let stream =
        nix::sys::socket::getsockopt(&fd, sockopt::SockType).is_ok_and(|t| t == SockType::Stream);
    let unix = getsockname::<SockaddrStorage>(std::os::fd::AsRawFd::as_raw_fd(&fd))
        .is_ok_and(|a| a.family() == Some(AddressFamily::Unix));
    stream && unix
}

#[cfg(unix)]
/// A duplicate of one of this process's standard descriptors, close-on-exec.
fn duplicate(fd: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: 0 and 1 are open for the life of the process (checked by the caller through
    // fstat); the borrow lasts only for the duplication.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    borrowed.try_clone_to_owned()
}

/// Standard input, read through the event loop when it can be.
pub enum Input {
    #[cfg(unix)]
    Pipe(tokio::net::unix::pipe::Receiver),
    #[cfg(unix)]
    Socket(tokio::net::UnixStream),
    Blocking(tokio::io::Stdin),
}

/// Standard output, written through the event loop when it can be.
pub enum Output {
    #[cfg(unix)]
    Pipe(tokio::net::unix::pipe::Sender),
    #[cfg(unix)]
    Socket(tokio::net::UnixStream),
    Blocking(tokio::io::Stdout),
}

#[cfg(unix)]
/// A standard descriptor through the event loop when it is a pipe (`pipe` makes the stream)
/// or a Unix stream socket (`socket` wraps it); `None` for the blocking path.
fn evented<T>(
    fd: i32,
    pipe: impl FnOnce(OwnedFd) -> std::io::Result<T>,
    socket: impl FnOnce(tokio::net::UnixStream) -> T,
) -> Option<T> {
    // SAFETY: `fd` is 0 or 1, open for the life of the process; borrowed for the check only.
    let made = match kind(unsafe { BorrowedFd::borrow_raw(fd) }) {
        Kind::Pipe => duplicate(fd).and_then(pipe),
        Kind::Socket => duplicate(fd).and_then(unix_socket).map(socket),
        Kind::Other => return None,
    };
    made.map_err(|e| tracing::debug!(fd, error = %e, "standard stream on a blocking thread"))
        .ok()
}

/// Standard input for the MCP channel: on Windows through tokio's blocking pool (a
/// console, a pipe or a file alike).
#[cfg(windows)]
pub fn input() -> Input {
    Input::Blocking(tokio::io::stdin())
}

/// Standard output for the MCP channel: on Windows through tokio's blocking pool.
#[cfg(windows)]
pub fn output() -> Output {
    Output::Blocking(tokio::io::stdout())
}

/// Standard input for the MCP channel. Must be called inside the runtime.
#[cfg(unix)]
pub fn input() -> Input {
    evented(
        STDIN,
        |fd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd).map(Input::Pipe),
        Input::Socket,
    )
    .unwrap_or_else(|| Input::Blocking(tokio::io::stdin()))
}

/// Standard output for the MCP channel. Must be called inside the runtime.
#[cfg(unix)]
pub fn output() -> Output {
    evented(
        STDOUT,
        |fd| tokio::net::unix::pipe::Sender::from_owned_fd(fd).map(Output::Pipe),
        Output::Socket,
    )
    .unwrap_or_else(|| Output::Blocking(tokio::io::stdout()))
}

#[cfg(unix)]
fn unix_socket(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
    let std_sock = std::os::unix::net::UnixStream::from(fd);
    std_sock.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(std_sock)
}

impl AsyncRead for Input {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Input::Pipe(p) => Pin::new(p).poll_read(cx, buf),
            #[cfg(unix)]
            Input::Socket(s) => Pin::new(s).poll_read(cx, buf),
            Input::Blocking(b) => Pin::new(b).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            #[cfg(unix)]
            Output::Pipe(p) => Pin::new(p).poll_write(cx, buf),
            #[cfg(unix)]
            Output::Socket(s) => Pin::new(s).poll_write(cx, buf),
            Output::Blocking(b) => Pin::new(b).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Output::Pipe(p) => Pin::new(p).poll_flush(cx),
            #[cfg(unix)]
            Output::Socket(s) => Pin::new(s).poll_flush(cx),
            Output::Blocking(b) => Pin::new(b).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Output::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            // Shutting a socket down would end the client's input for everyone holding
            // it; at the end of the server its descriptor simply closes.
            #[cfg(unix)]
            Output::Socket(_) => Poll::Ready(Ok(())),
            Output::Blocking(b) => Pin::new(b).poll_shutdown(cx),
        }
    }
}
