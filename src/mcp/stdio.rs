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

use std::os::fd::{BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use nix::sys::stat::{SFlag, fstat};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Standard input.
const STDIN: i32 = 0;
/// Standard output.
const STDOUT: i32 = 1;

/// What a standard stream is, as far as polling it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pipe,
    Socket,
    /// A terminal, a regular file, `/dev/null`: read and written on the blocking pool.
    Other,
}

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

/// A duplicate of one of this process's standard descriptors, close-on-exec.
fn duplicate(fd: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: 0 and 1 are open for the life of the process (checked by the caller through
    // fstat); the borrow lasts only for the duplication.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    borrowed.try_clone_to_owned()
}

/// Standard input, read through the event loop when it can be.
pub enum Input {
    Pipe(tokio::net::unix::pipe::Receiver),
    Socket(tokio::net::UnixStream),
    Blocking(tokio::io::Stdin),
}

/// Standard output, written through the event loop when it can be.
pub enum Output {
    Pipe(tokio::net::unix::pipe::Sender),
    Socket(tokio::net::UnixStream),
    Blocking(tokio::io::Stdout),
}

/// Standard input for the MCP channel. Must be called inside the runtime.
pub fn input() -> Input {
    // SAFETY: descriptor 0 is this process's standard input; borrowed for the check only.
    let k = kind(unsafe { BorrowedFd::borrow_raw(STDIN) });
    let evented = match k {
        Kind::Pipe => duplicate(STDIN)
            .and_then(tokio::net::unix::pipe::Receiver::from_owned_fd)
            .map(Input::Pipe),
        Kind::Socket => duplicate(STDIN).and_then(socket).map(Input::Socket),
        Kind::Other => return Input::Blocking(tokio::io::stdin()),
    };
    evented.unwrap_or_else(|e| {
        tracing::debug!(error = %e, "standard input is read on a blocking thread");
        Input::Blocking(tokio::io::stdin())
    })
}

/// Standard output for the MCP channel. Must be called inside the runtime.
pub fn output() -> Output {
    // SAFETY: descriptor 1 is this process's standard output; borrowed for the check only.
    let k = kind(unsafe { BorrowedFd::borrow_raw(STDOUT) });
    let evented = match k {
        Kind::Pipe => duplicate(STDOUT)
            .and_then(tokio::net::unix::pipe::Sender::from_owned_fd)
            .map(Output::Pipe),
        Kind::Socket => duplicate(STDOUT).and_then(socket).map(Output::Socket),
        Kind::Other => return Output::Blocking(tokio::io::stdout()),
    };
    evented.unwrap_or_else(|e| {
        tracing::debug!(error = %e, "standard output is written on a blocking thread");
        Output::Blocking(tokio::io::stdout())
    })
}

fn socket(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
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
            Input::Pipe(p) => Pin::new(p).poll_read(cx, buf),
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
            Output::Pipe(p) => Pin::new(p).poll_write(cx, buf),
            Output::Socket(s) => Pin::new(s).poll_write(cx, buf),
            Output::Blocking(b) => Pin::new(b).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Output::Pipe(p) => Pin::new(p).poll_flush(cx),
            Output::Socket(s) => Pin::new(s).poll_flush(cx),
            Output::Blocking(b) => Pin::new(b).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Output::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            // Shutting a socket down would end the client's input for everyone holding
            // it; at the end of the server its descriptor simply closes.
            Output::Socket(_) => Poll::Ready(Ok(())),
            Output::Blocking(b) => Pin::new(b).poll_shutdown(cx),
        }
    }
}
