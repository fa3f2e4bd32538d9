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

/// Who this process runs as, for messages: `uid 1000`.
pub fn user_label() -> String {
    format!("uid {}", effective_uid())
}

/// This process's real user id.
pub fn real_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

/// Whether `path` is a file someone may execute: its mode says so.
pub fn executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The file names a program called `name` may have: the name itself.
pub fn program_file_names(name: &str) -> Vec<String> {
    vec![name.to_string()]
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

/// Create (or empty) `path` for writing, readable and writable by this user only (0600).
pub fn create_private(path: &std::path::Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

/// A new file at `path` (which must not exist), private to this user, for reading and
/// writing scratch data that no name reaches: the name is removed at once and the data is
/// gone when the handle closes.
pub fn create_scratch(path: &std::path::Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    std::fs::remove_file(path)?;
    Ok(f)
}

/// Write all of `buf` at `offset` of `file`, whatever its cursor.
pub fn write_all_at(file: &std::fs::File, buf: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

/// Fill `buf` from `offset` of `file`, whatever its cursor.
pub fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Why a file holding a secret is not private to this user (others may read it, or someone
/// else owns it), if it is not.
pub fn not_private(meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Some(format!("can be read by other users (mode {mode:03o})"));
    }
    let me = effective_uid();
    (meta.uid() != me).then(|| format!("belongs to user {}, not to this user ({me})", meta.uid()))
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
