//! What every unix the server is built for (Linux, macOS) provides the same way, through
//! the POSIX calls both have: processes by pid, user ids, file modes and kinds, sessions, the
//! environment block, and the error numbers that say a resource ran out. The system-specific
//! rest is in `linux` and `bsd`.

use std::io;
use std::path::PathBuf;

use nix::errno::Errno;
use nix::unistd::Pid;

/// Whether process `pid` still exists (a zombie counts; one of another user too).
pub fn process_exists(pid: i32) -> bool {
    !matches!(
        nix::sys::signal::kill(Pid::from_raw(pid), None),
        Err(Errno::ESRCH)
    )
}

/// Ask process `pid` to end (SIGTERM); gone already is fine.
pub fn ask_to_end(pid: i32) {
    let _ = nix::sys::signal::kill(Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM);
}

/// This process's effective user id.
pub fn effective_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// This process's real user id.
pub fn real_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

/// Whether a file's metadata says someone may execute it.
pub fn executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.is_file() && meta.permissions().mode() & 0o111 != 0
}

/// Run before `exec` in a child a `Command` starts: make it a session of its own, which its
/// parent lets go (a browser the server opens).
pub fn detach_session(cmd: &mut tokio::process::Command) {
    // SAFETY: setsid in the child before exec is async-signal-safe and touches no memory
    // shared with the parent.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()?;
            Ok(())
        });
    }
}

/// The resource an OS error says ran out (`disk_space`, `open_files`, `processes`,
/// `memory`), if it names one.
pub fn exhausted(e: &io::Error) -> Option<&'static str> {
    Some(match Errno::from_raw(e.raw_os_error()?) {
        Errno::ENOSPC | Errno::EDQUOT => "disk_space",
        Errno::EMFILE | Errno::ENFILE => "open_files",
        Errno::EAGAIN => "processes",
        Errno::ENOMEM => "memory",
        _ => return None,
    })
}

/// Overwrite the value of `name` in place, in the block the kernel set up at `execve`.
/// Why: `/proc/<pid>/environ` reads that block, not the environment as changed since, so a
/// variable only removed stays readable there to root and to any process allowed to trace
/// this one. The C library's `getenv` points into that block for a variable the process
/// started with. Only while no other thread exists (the environment is not thread-safe).
pub fn scrub_environment_block(name: &str) {
    let Ok(c) = std::ffi::CString::new(name) else {
        return;
    };
    // SAFETY: single-threaded (the caller's contract); getenv returns a pointer to the
    // value's NUL-terminated bytes, which stay valid and writable (the process's own stack,
    // or a copy `setenv` made) until the variable is changed, and nothing changes it
    // meanwhile. The bytes are overwritten within their length, terminator kept.
    unsafe {
        let p = nix::libc::getenv(c.as_ptr());
        if !p.is_null() {
            let len = nix::libc::strlen(p);
            std::ptr::write_bytes(p, 0, len);
        }
    }
}

/// The program process `pid` runs now, where the system says (Linux: `/proc/<pid>/exe`).
pub fn program_of(pid: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_and_a_process_limit_are_named_and_others_are_not() {
        let e = |n| io::Error::from_raw_os_error(n);
        assert_eq!(exhausted(&e(nix::libc::ENOSPC)), Some("disk_space"));
        assert_eq!(exhausted(&e(nix::libc::EMFILE)), Some("open_files"));
        assert_eq!(exhausted(&e(nix::libc::EAGAIN)), Some("processes"));
        assert_eq!(exhausted(&e(nix::libc::ENOENT)), None);
        assert_eq!(exhausted(&io::Error::other("x")), None);
    }

    #[test]
    fn a_process_is_there_until_it_is_reaped() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("spawn sleep");
        let pid = child.id() as i32;
        assert!(process_exists(pid));
        let _ = child.kill();
        let _ = child.wait();
        assert!(!process_exists(pid));
        assert!(process_exists(std::process::id() as i32));
    }
}
