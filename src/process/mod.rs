//! Containment: every headless session and every terminal runs under a supervisor of its
//! own (a child subreaper in its own session), forked by one spawner per server; the kernel
//! — not an environment marker or a process group the program could leave — keeps the
//! session's processes together, and closing a socket is enough to end them all, even when
//! the server is killed. See docs/containment.md.
//!
//! `spawner`, `standby` and `supervisor` run in the helper processes; `supervised` is the
//! server's side; `requests` carries a request from one to the other; `tree` kills subtrees
//! in proportion to their size; `reaper` catches what a killed supervisor leaves; `wire` is
//! what they say to each other; `open_files` raises the server's open-file limit and gives
//! programs back the one it was given.

pub mod inspect;
pub mod jobs;
#[cfg(unix)]
pub mod namespace;
pub mod open_files;
pub mod reaper;
#[cfg(unix)]
pub mod requests;
mod settle;
#[cfg(unix)]
pub mod spawner;
mod spec;
#[cfg(unix)]
pub mod standby;
#[cfg(unix)]
pub mod supervised;
#[cfg(unix)]
pub mod supervisor;
#[cfg(unix)]
pub mod tree;
#[cfg(windows)]
mod windows;
pub mod wire;
pub mod workdir;

pub use settle::kill_and_settle;
pub use spec::SessionSpec;
#[cfg(unix)]
pub use supervised::{SessionIo, Supervised, spawn, use_spawner_program};
#[cfg(windows)]
pub use windows::{SessionIo, Supervised, namespace, spawn, use_spawner_program};
pub use wire::ChildExit;

#[cfg(unix)]
pub use crate::os::own_policy;

/// Make reads (and writes) of `fd` return `EAGAIN` instead of waiting.
#[cfg(unix)]
pub fn set_nonblocking(fd: std::os::fd::BorrowedFd<'_>) -> nix::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    use std::os::fd::AsRawFd;
    let flags = OFlag::from_bits_truncate(fcntl(fd.as_raw_fd(), FcntlArg::F_GETFL)?);
    fcntl(fd.as_raw_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).map(|_| ())
}

/// At the end of the server: stop the spawner (it kills whatever is still below it) and
/// kill anything adopted, after every session was killed its own way.
pub async fn shutdown() {
    #[cfg(unix)]
    supervised::stop_spawner().await;
    #[cfg(windows)]
    windows::stop_spawner().await;
    let _ = tokio::task::spawn_blocking(reaper::handle_adopted).await;
}

/// When this process was started as a helper (the spawner), run it and return its exit
/// status. Both binaries call this first thing, before any thread exists.
pub fn helper_main() -> Option<i32> {
    #[cfg(windows)]
    return None;
    #[cfg(unix)]
    helper_main_unix()
}

#[cfg(unix)]
fn helper_main_unix() -> Option<i32> {
    let mut args = std::env::args_os().skip(1);
    let first = args.next()?;
    if first == crate::sandbox::netbridge::FLAG {
        return Some(crate::sandbox::netbridge::main(args.collect()));
    }
    if first == crate::sandbox::seccomp::FLAG {
        return Some(crate::sandbox::seccomp::main(args.collect()));
    }
    if first != spawner::SPAWNER_FLAG {
        return None;
    }
    // Its optional arguments: the open-file limit to give programs back, and whether the
    // operator chose supervisors alone.
    let mut open_files = None;
    for a in args {
        if a == namespace::SUBREAPER_FLAG {
            namespace::set_subreaper_only(true);
        } else {
            open_files = Some(a.to_str()?.parse().ok()?);
        }
    }
    Some(spawner::main(open_files))
}

/// Signal names for exit reports (`SIGKILL`, not `9`).
#[cfg(unix)]
pub fn signal_name(sig: i32) -> String {
    match nix::sys::signal::Signal::try_from(sig) {
        Ok(s) => s.as_str().to_string(),
        Err(_) => format!("SIG{sig}"),
    }
}

/// The signal name for a C library description (`Killed` → `SIGKILL`): portable-pty reports
/// a terminal's signal as `strsignal(3)` text, headless sessions as a number, and answers
/// should name signals one way.
#[cfg(unix)]
pub fn signal_name_from_description(description: &str) -> String {
    use std::sync::OnceLock;
    static TABLE: OnceLock<Vec<(String, &'static str)>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        nix::sys::signal::Signal::iterator()
            .filter_map(|s| {
                // SAFETY: strsignal returns a pointer to a NUL-terminated string that stays
                // valid until the next strsignal call; it is copied at once, during a
                // one-time initialisation guarded by the OnceLock.
                let p = unsafe { nix::libc::strsignal(s as i32) };
                if p.is_null() {
                    return None;
                }
                // SAFETY: non-null and NUL-terminated, as above.
                let text = unsafe { std::ffi::CStr::from_ptr(p) };
                Some((text.to_string_lossy().into_owned(), s.as_str()))
            })
            .collect()
    });
    if description.starts_with("SIG") {
        return description.to_string();
    }
    if let Some(n) = description
        .strip_prefix("Signal ")
        .and_then(|n| n.trim().parse::<i32>().ok())
    {
        return signal_name(n);
    }
    table
        .iter()
        .find(|(text, _)| text == description)
        .map_or_else(|| description.to_string(), |(_, name)| (*name).to_string())
}

/// Windows ends processes with exit codes, never signals: a number is all there is to say.
#[cfg(windows)]
pub fn signal_name(sig: i32) -> String {
    format!("SIG{sig}")
}

/// portable-pty's description of how a program ended, as it is (Windows has no signals).
#[cfg(windows)]
pub fn signal_name_from_description(description: &str) -> String {
    description.to_string()
}

#[cfg(all(test, unix))]
mod tests {
    #[test]
    fn descriptions_become_names() {
        assert_eq!(super::signal_name_from_description("Killed"), "SIGKILL");
        assert_eq!(super::signal_name_from_description("Terminated"), "SIGTERM");
        assert_eq!(super::signal_name_from_description("Hangup"), "SIGHUP");
        assert_eq!(super::signal_name_from_description("SIGINT"), "SIGINT");
        assert_eq!(super::signal_name_from_description("Signal 9"), "SIGKILL");
    }
}
