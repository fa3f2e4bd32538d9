//! Pseudo-terminals. The core and the driver see a terminal's device through the [`Pty`]
//! trait (portable-pty's habit: a master to read, write and resize, and the process behind
//! it to wait for and kill), so they are tested without a kernel pty.
//!
//! The system's: a kernel pty on unix (`kernel`), a ConPTY on Windows (`conpty`); both
//! opened through portable-pty, each session contained (`process`).

use std::collections::BTreeMap;
use std::io;

use futures_util::future::BoxFuture;

use crate::process::ChildExit;

#[cfg(windows)]
mod conpty;
#[cfg(unix)]
mod kernel;

#[cfg(windows)]
pub use conpty::{ConPty as SystemPty, spawn};
#[cfg(unix)]
pub use kernel::{KernelPty as SystemPty, spawn};

/// The terminal type advertised to programs in the pty.
pub const TERM: &str = "xterm-256color";
/// Pagers a terminal does without: `git log` or `systemctl status` in `less` waits for a key
/// nobody presses, the call runs out its wait and the next command finds the terminal busy.
/// `GIT_PAGER` beats a `core.pager` in the user's git config. Set only where the server's own
/// environment names none (the operator's choice wins); an rc file may still set `PAGER`.
const NO_PAGER: &[(&str, &str)] = &[("PAGER", "cat"), ("GIT_PAGER", "cat")];

/// A terminal's device as the core uses it: the master side of a pty and the session
/// running on it.
pub trait Pty: Send + Sync {
    /// The pid of the program on the terminal (the shell).
    fn pid(&self) -> i32;
    /// Read what the terminal printed; `Ok(0)` once nothing more will come.
    fn read<'a>(&'a self, buf: &'a mut [u8]) -> BoxFuture<'a, io::Result<usize>>;
    /// Write all of `data` to the terminal's input.
    fn write_all<'a>(&'a self, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>>;
    /// Change the terminal's size (programs on it get SIGWINCH).
    fn resize(&self, cols: u16, rows: u16) -> io::Result<()>;
    /// Wait for the program to end.
    fn wait(&self) -> BoxFuture<'_, ChildExit>;
    /// Kill everything in the terminal's session; returns the pids killed.
    fn kill(&self) -> BoxFuture<'_, Vec<i32>>;
    /// Whether the terminal's line discipline collects lines now (`ICANON`: no line editor
    /// of the program's own reads the keys).
    fn canonical(&self) -> bool {
        false
    }
    /// Whether the terminal's foreground program is blocked reading it, as the kernel says
    /// (`process::inspect`). A device in memory cannot say.
    fn input_wait(&self) -> InputWait {
        InputWait::Unknown
    }
    /// Whether the program printed output the reader has not taken yet (the kernel's count
    /// on the master). A device in memory has none.
    fn unread_output(&self) -> bool {
        false
    }
    /// Read what the terminal printed without waiting: `None` when nothing is there. Unlike
    /// the count of [`Pty::unread_output`], which lags while the kernel moves a program's
    /// output across the pty in a worker of its own, a read waits for that move first, so
    /// `None` means the program's every byte so far was taken. A device in memory says
    /// `None`.
    fn try_read(&self, _buf: &mut [u8]) -> io::Result<Option<usize>> {
        Ok(None)
    }
    /// Whether input written to the terminal waits for the program to read it (a line it
    /// has not read yet, keys just typed, a query's answer). Where it cannot be told, none.
    fn unread_input(&self) -> bool {
        false
    }
    /// What runs besides the shell and the foreground program (`process::jobs`).
    fn background_jobs(&self) -> Vec<Job> {
        Vec::new()
    }
    /// Send `stop` to the terminal's foreground process group: a command a typed Ctrl-C did
    /// not stop. The shell's own group is sent SIGINT only (it survives that; ending it
    /// would end the terminal). A device that cannot say its foreground sends nothing.
    fn signal_foreground(&self, _stop: Stop) -> Signalled {
        Signalled::Unknown
    }
}

/// A signal to a terminal's foreground command, mildest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Interrupt,
    Terminate,
    Kill,
}

impl Stop {
    pub fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "SIGINT",
            Stop::Terminate => "SIGTERM",
            Stop::Kill => "SIGKILL",
        }
    }
}

/// What [`Pty::signal_foreground`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signalled {
    Sent,
    /// The foreground is the shell's own group, and the signal would end the terminal.
    ShellItself,
    /// The foreground is not known (or the signal could not be sent).
    Unknown,
}

pub use crate::process::inspect::InputWait;
pub use crate::process::jobs::Job;

/// Give the terminal `cols` x `rows` (its programs are told: SIGWINCH, or the console's
/// resize event).
fn resize(
    master: &std::sync::Mutex<Box<dyn portable_pty::MasterPty + Send>>,
    cols: u16,
    rows: u16,
) -> io::Result<()> {
    crate::locks::lock(master)
        .resize(portable_pty::PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(io::Error::other)
}

/// A terminal program's environment on top of the server's: the request's variables first,
/// then what every terminal sets, then the shell integration's (the last value of a name is
/// the one the program gets).
fn terminal_env(
    extra_env: &BTreeMap<String, String>,
    launch_env: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = extra_env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    env.extend([
        ("TERM".into(), TERM.into()),
        ("COLORTERM".into(), "truecolor".into()),
    ]);
    env.extend(
        NO_PAGER
            .iter()
            .filter(|(k, _)| std::env::var_os(k).is_none())
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    env.extend(launch_env.iter().cloned());
    env
}
