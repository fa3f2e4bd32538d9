//! The kernel's pty: portable-pty opens it, the shell runs under its own supervisor
//! (`process`) with the pty as its session's controlling terminal; the master side is then
//! driven without threads, through a non-blocking descriptor registered with tokio's
//! reactor, so a thousand idle terminals cost no threads.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use nix::fcntl::{FcntlArg, fcntl};
use nix::sys::termios::LocalFlags;
use portable_pty::{MasterPty, PtySize, native_pty_system};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use super::{InputWait, Job, Pty, Signalled, Stop};
use crate::process::{self, ChildExit, SessionIo, SessionSpec, Supervised};
use crate::terminal::shell::ShellLaunch;

/// A kernel pty with the shell's session under its own supervisor.
pub struct KernelPty {
    master: Mutex<Box<dyn MasterPty + Send>>,
    /// The terminal's device number (what a program reading it has open).
    tty_rdev: u64,
    io: PtyIo,
    /// The shell's supervisor: its pid, its exit, and the kill of the whole terminal.
    supervised: Supervised,
}

impl Pty for KernelPty {
    fn pid(&self) -> i32 {
        self.supervised.pid
    }

    fn canonical(&self) -> bool {
        crate::locks::lock(&self.master)
            .get_termios()
            .is_some_and(|t| t.local_flags.contains(LocalFlags::ICANON))
    }

    fn unread_output(&self) -> bool {
        let master = crate::locks::lock(&self.master);
        master.as_raw_fd().is_some_and(output_unread)
    }

    fn try_read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        self.io.try_read(buf)
    }

    fn unread_input(&self) -> bool {
        let master = crate::locks::lock(&self.master);
        master
            .as_raw_fd()
            .is_some_and(|fd| crate::os::pty_input_unread(fd).unwrap_or(false))
    }

    fn background_jobs(&self) -> Vec<Job> {
        let foreground = {
            let master = crate::locks::lock(&self.master);
            let Some(fd) = master.as_raw_fd() else {
                return Vec::new();
            };
            // SAFETY: tcgetpgrp on the master's descriptor, which `master` keeps open for
            // the length of the call; it takes no pointer.
            unsafe { nix::libc::tcgetpgrp(fd) }
        };
        crate::process::jobs::background(
            self.supervised.supervisor_pid(),
            self.supervised.pid,
            foreground,
        )
    }

    fn signal_foreground(&self, stop: Stop) -> Signalled {
        use nix::sys::signal::{Signal, killpg};
        let pgid = {
            let master = crate::locks::lock(&self.master);
            let Some(fd) = master.as_raw_fd() else {
                return Signalled::Unknown;
            };
            // SAFETY: tcgetpgrp on the master's descriptor, as above; it takes no pointer.
            unsafe { nix::libc::tcgetpgrp(fd) }
        };
        // The kernel names only a group of the terminal's own session: the agent's
        // processes, never the supervisor's or anything outside. Its number is checked
        // against the session once more (a group that has ended leaves its number behind,
        // for another group to take); a group whose leader has ended is not signalled.
        let session = crate::os::session_of(self.supervised.pid);
        if pgid <= 0 || session.is_none() || crate::os::session_of(pgid) != session {
            return Signalled::Unknown;
        }
        let signal = match stop {
            Stop::Interrupt => Signal::SIGINT,
            _ if pgid == self.supervised.pid => return Signalled::ShellItself,
            Stop::Terminate => Signal::SIGTERM,
            Stop::Kill => Signal::SIGKILL,
        };
        match killpg(nix::unistd::Pid::from_raw(pgid), signal) {
            Ok(()) => Signalled::Sent,
            Err(e) => {
                tracing::warn!(pgid, %e, "could not signal the terminal's foreground");
                Signalled::Unknown
            }
        }
    }

    fn input_wait(&self) -> InputWait {
        let (pgid, password_mode) = {
            let master = crate::locks::lock(&self.master);
            let Some(fd) = master.as_raw_fd() else {
                return InputWait::Unknown;
            };
            // Output the program wrote that the reader has not taken yet: what the kernel
            // says now is ahead of what the terminal shows.
            if output_unread(fd) {
                return InputWait::Busy;
            }
            // SAFETY: tcgetpgrp on the master's descriptor, as above; it takes no pointer.
            let pgid = unsafe { nix::libc::tcgetpgrp(fd) };
            let password = master.get_termios().is_some_and(|t| {
                t.local_flags.contains(LocalFlags::ICANON)
                    && !t.local_flags.contains(LocalFlags::ECHO)
            });
            (pgid, password)
        };
        if pgid <= 0 || self.tty_rdev == 0 {
            return InputWait::Unknown;
        }
        crate::process::inspect::foreground_waits(
            self.supervised.pid,
            pgid,
            self.tty_rdev,
            password_mode,
        )
    }

    fn read<'a>(&'a self, buf: &'a mut [u8]) -> BoxFuture<'a, io::Result<usize>> {
        Box::pin(self.io.read(buf))
    }

    fn write_all<'a>(&'a self, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(self.io.write_all(data))
    }

    fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
        super::resize(&self.master, cols, rows)
    }

    fn wait(&self) -> BoxFuture<'_, ChildExit> {
        Box::pin(self.supervised.wait())
    }

    fn kill(&self) -> BoxFuture<'_, Vec<i32>> {
        Box::pin(self.supervised.kill())
    }
}

/// Non-blocking reads and writes on the pty master.
///
/// The master is registered with the reactor for reading only. Registered for writing too,
/// the server was woken each time the program read a byte of its input: the kernel wakes a
/// pty master's writers as the slave's input drains, and a REPL reads its line one byte at
/// a time. Each of those wake-ups preempted the program for nothing. A write goes straight
/// to the kernel; only when the terminal's input is full does it register a duplicate of the
/// master for writing, for as long as that write lasts.
struct PtyIo {
    fd: AsyncFd<OwnedFd>,
}

fn errno(e: nix::errno::Errno) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

/// A close-on-exec, non-blocking duplicate of `fd`, registered with the reactor for
/// `interest`. Close-on-exec so no program started later inherits the master.
fn register(fd: RawFd, interest: Interest) -> io::Result<AsyncFd<OwnedFd>> {
    let dup = fcntl(fd, FcntlArg::F_DUPFD_CLOEXEC(0)).map_err(errno)?;
    // SAFETY: F_DUPFD_CLOEXEC just returned this descriptor; nothing else owns it.
    let owned = unsafe { OwnedFd::from_raw_fd(dup) };
    crate::process::set_nonblocking(owned.as_fd()).map_err(errno)?;
    // SAFETY: the descriptor is an open OwnedFd that this AsyncFd owns for its whole life,
    // so it stays open and refers to the same file description.
    unsafe { AsyncFd::register_with_interest(owned, interest) }
        .map_err(|e| io::Error::other(e.to_string()))
}

/// Whether the master `fd` holds output the reader has not taken (or the kernel would not
/// say). `fd` must be open for the length of the call.
fn output_unread(fd: RawFd) -> bool {
    let mut unread: nix::libc::c_int = 0;
    // SAFETY: FIONREAD on an open descriptor (the caller's promise), into an int that lives
    // through the call.
    let rc = unsafe { nix::libc::ioctl(fd, nix::libc::FIONREAD, &mut unread) };
    rc != 0 || unread > 0
}

/// A `nix` result as `io`, `EAGAIN` as the `WouldBlock` that `try_io` expects.
fn would_block(r: nix::Result<usize>) -> io::Result<usize> {
    r.map_err(|e| match e {
        nix::errno::Errno::EAGAIN => io::ErrorKind::WouldBlock.into(),
        other => errno(other),
    })
}

impl PtyIo {
    fn new(master_fd: RawFd) -> io::Result<PtyIo> {
        Ok(PtyIo {
            fd: register(master_fd, Interest::READABLE)?,
        })
    }

    /// Read what the terminal printed; `Ok(0)` once every slave side has closed.
    async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.fd.readable().await?;
            match guard.try_io(|inner| would_block(nix::unistd::read(inner.as_raw_fd(), buf))) {
                Ok(Ok(n)) => return Ok(n),
                // The slave side is gone: the terminal has nothing more to say.
                Ok(Err(e)) if e.raw_os_error() == Some(nix::libc::EIO) => return Ok(0),
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
    }

    /// A read that does not wait (the descriptor is non-blocking): `None` for `EAGAIN`, and
    /// for the end of the terminal, which the waiting read reports.
    fn try_read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            match nix::unistd::read(self.fd.get_ref().as_raw_fd(), buf) {
                Ok(0) => return Ok(None),
                Ok(n) => return Ok(Some(n)),
                Err(nix::errno::Errno::EINTR) => {}
                Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EIO) => return Ok(None),
                Err(e) => return Err(errno(e)),
            }
        }
    }

    /// Write all of `data` to the terminal's input: straight to the kernel while it takes
    /// the bytes, then through [`PtyIo::write_when_writable`].
    async fn write_all(&self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            match nix::unistd::write(self.fd.get_ref(), data) {
                Ok(n) => data = &data[n..],
                Err(nix::errno::Errno::EINTR) => {}
                Err(nix::errno::Errno::EAGAIN) => return self.write_when_writable(data).await,
                Err(e) => return Err(errno(e)),
            }
        }
        Ok(())
    }

    /// The rest of a write the terminal's full input refused: a duplicate of the master,
    /// registered for writing until the last byte is in.
    async fn write_when_writable(&self, mut data: &[u8]) -> io::Result<()> {
        let writer = register(self.fd.as_raw_fd(), Interest::WRITABLE)?;
        while !data.is_empty() {
            let mut guard = writer.writable().await?;
            match guard.try_io(|inner| would_block(nix::unistd::write(inner.get_ref(), data))) {
                Ok(Ok(n)) => data = &data[n..],
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
        Ok(())
    }
}

/// Spawn `launch` in a new pty of `cols` x `rows`, under its own supervisor (whose session
/// has the pty as controlling terminal).
pub async fn spawn(
    launch: &ShellLaunch,
    cwd: &Path,
    extra_env: &BTreeMap<String, String>,
    cols: u16,
    rows: u16,
) -> io::Result<KernelPty> {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(io::Error::other)?;
    let name = pair
        .master
        .tty_name()
        .ok_or_else(|| io::Error::other("the pty has no name"))?;
    // The supervisor gets its own descriptor of the terminal; portable-pty's is closed here,
    // or reads never see the end of the terminal.
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nix::libc::O_NOCTTY | nix::libc::O_CLOEXEC)
        .open(&name)?;
    let tty_rdev = {
        use std::os::unix::fs::MetadataExt;
        tty.metadata().map(|m| m.rdev()).unwrap_or(0)
    };
    drop(pair.slave);
    let env = super::terminal_env(extra_env, &launch.env);
    let program = launch.program.display().to_string();
    let supervised = process::spawn(SessionSpec {
        program: &program,
        args: &launch.args,
        cwd,
        env,
        expose: &launch.expose,
        confined: true,
        io: SessionIo::Terminal { tty: tty.into() },
    })
    .await?;
    let fd = pair
        .master
        .as_raw_fd()
        .ok_or_else(|| io::Error::other("pty master has no descriptor"))?;
    let io = PtyIo::new(fd)?;
    Ok(KernelPty {
        master: Mutex::new(pair.master),
        tty_rdev,
        io,
        supervised,
    })
}
