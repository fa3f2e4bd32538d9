//! The operating system's facilities that differ between the systems the server is built
//! for, behind one seam: callers name what they need (a close-on-exec pipe, a process other
//! processes cannot trace, a session's processes contained) rather than the call that gives
//! it on one system. `unix_family` serves Linux and macOS (one function per facility, an
//! implementation per system inside it); `job` is Windows' containment. docs/platforms.md
//! says what runs where.

#[cfg(unix)]
mod unix_family;
#[cfg(unix)]
pub use unix_family::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
