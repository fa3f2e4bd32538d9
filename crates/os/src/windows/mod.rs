//! Windows' facilities, under the same names as `unix_family`'s where a caller needs the
//! same thing (a process by id, a file one may run, a resource that ran out), and `job`,
//! Windows' containment. What Windows has no counterpart for says so by its result.

pub mod job;

use std::io;
use std::path::PathBuf;

use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_DISK_FULL, ERROR_HANDLE_DISK_FULL, ERROR_NO_PROC_SLOTS,
    ERROR_NOT_ENOUGH_MEMORY, ERROR_OUTOFMEMORY, ERROR_TOO_MANY_OPEN_FILES, HANDLE, STILL_ACTIVE,
};
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, OpenProcess, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION,
    PROCESS_TERMINATE, QueryFullProcessImageNameW, TerminateProcess,
};

/// An open process handle, closed when dropped.
struct Process(HANDLE);

impl Process {
    fn open(pid: i32, access: u32) -> Option<Process> {
        let pid = u32::try_from(pid).ok().filter(|p| *p != 0)?;
        // SAFETY: no handle inheritance; the result is checked before use.
        let h = unsafe { OpenProcess(access, 0, pid) };
        (!h.is_null()).then_some(Process(h))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // SAFETY: the handle was opened by `open` and is closed once, here.
        unsafe { CloseHandle(self.0) };
    }
}

/// Whether process `pid` still runs. A process this user may not open (another user's, a
/// protected one) counts as there: only "no such process" says it is gone.
pub fn process_exists(pid: i32) -> bool {
    let Some(p) = Process::open(pid, PROCESS_QUERY_LIMITED_INFORMATION) else {
        // ERROR_INVALID_PARAMETER is what OpenProcess says of an id no process has.
        return io::Error::last_os_error().raw_os_error() != Some(87);
    };
    let mut code = 0u32;
    // SAFETY: a valid handle and a u32 that outlives the call.
    let ok = unsafe { GetExitCodeProcess(p.0, &mut code) } != 0;
    !ok || code == STILL_ACTIVE as u32
}

/// Whether `pid` runs: Windows keeps no zombie, an ended process does not exist.
pub fn process_running(pid: i32) -> bool {
    process_exists(pid)
}

/// Ask process `pid` to end. Windows has no signal a console-less process can take, so it
/// is ended (exit code 1); gone already is fine.
pub fn ask_to_end(pid: i32) {
    if let Some(p) = Process::open(pid, PROCESS_TERMINATE) {
        // SAFETY: a valid handle opened for termination.
        unsafe { TerminateProcess(p.0, 1) };
    }
}

/// The extensions Windows runs a file by (`PATHEXT`'s usual list), in the order it tries
/// them.
const PROGRAM_EXTENSIONS: [&str; 4] = ["exe", "com", "bat", "cmd"];

/// Whether `path` is a file Windows runs: its extension is a program's. Windows has no mode
/// bit that says so.
pub fn executable(path: &std::path::Path) -> bool {
    path.to_str().is_some_and(executable_extension)
        && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// The file names a program called `name` may have: the name itself when it has a program's
/// extension, else the name with each of them (`pwsh` is `pwsh.exe`).
pub fn program_file_names(name: &str) -> Vec<String> {
    if executable_extension(name) {
        return vec![name.to_string()];
    }
    PROGRAM_EXTENSIONS
        .iter()
        .map(|e| format!("{name}.{e}"))
        .collect()
}

fn executable_extension(name: &str) -> bool {
    std::path::Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| PROGRAM_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// The resource an OS error says ran out (`disk_space`, `open_files`, `processes`,
/// `memory`), if it names one.
pub fn exhausted(e: &io::Error) -> Option<&'static str> {
    let code = u32::try_from(e.raw_os_error()?).ok()?;
    Some(match code {
        ERROR_DISK_FULL | ERROR_HANDLE_DISK_FULL => "disk_space",
        ERROR_TOO_MANY_OPEN_FILES => "open_files",
        ERROR_NO_PROC_SLOTS => "processes",
        ERROR_NOT_ENOUGH_MEMORY | ERROR_OUTOFMEMORY => "memory",
        _ => return None,
    })
}

/// Nothing to overwrite: Windows keeps a process's environment in one block that removing a
/// variable rewrites (`SetEnvironmentVariableW`); no copy of the start-up values is left for
/// another process to read, as `/proc/<pid>/environ` is on Linux.
pub fn scrub_environment_block(_name: &str) {}

/// Windows lets every process of the same user open this one and read its memory; a
/// process cannot refuse that to its own user. Said as the reason, so the start-up log
/// carries it.
pub fn forbid_tracing() -> Result<(), String> {
    Err("Windows lets the user's other processes read this one's memory".into())
}

/// Who this process runs as, for messages: the user's name.
pub fn user_label() -> String {
    std::env::var("USERNAME").map_or_else(|_| "this user".into(), |u| format!("user {u}"))
}

/// Start the command's program on its own, let go by its parent (a browser the server
/// opens): no console of the server's, a process group of its own.
pub fn detach_session(cmd: &mut tokio::process::Command) {
    use windows_sys::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS};
    cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
}

/// The allocator stays as it is.
pub fn tune_allocator() {}

/// The program process `pid` runs now.
pub fn program_of(pid: i32) -> Option<PathBuf> {
    let p = Process::open(pid, PROCESS_QUERY_LIMITED_INFORMATION)?;
    let mut buf = vec![0u16; 32 * 1024];
    let mut len = buf.len() as u32;
    // SAFETY: the buffer holds `len` UTF-16 units and outlives the call, which writes back
    // how many it used.
    let ok =
        unsafe { QueryFullProcessImageNameW(p.0, PROCESS_NAME_WIN32, buf.as_mut_ptr(), &mut len) }
            != 0;
    ok.then(|| PathBuf::from(String::from_utf16_lossy(&buf[..len as usize])))
}

/// Let only the file's owner in: a protected DACL (nothing inherited from the directory)
/// with one entry, full access for the owner (`OW`). What the user's profile directory
/// grants (SYSTEM, the Administrators) does not reach the file.
fn restrict_to_owner(path: &std::path::Path) -> io::Result<()> {
    use std::os::windows::ffi::OsStrExt;
    use windows_sys::Win32::Foundation::LocalFree;
    use windows_sys::Win32::Security::Authorization::{
        ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
    };
    use windows_sys::Win32::Security::{
        DACL_SECURITY_INFORMATION, PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR,
        SetFileSecurityW,
    };
    let sddl: Vec<u16> = "D:P(A;;FA;;;OW)".encode_utf16().chain([0]).collect();
    let name: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: a NUL-terminated SDDL string; the descriptor is allocated by the call and
    // freed below with LocalFree, as its documentation says.
    let made = unsafe {
        ConvertStringSecurityDescriptorToSecurityDescriptorW(
            sddl.as_ptr(),
            SDDL_REVISION_1,
            &mut sd,
            std::ptr::null_mut(),
        )
    } != 0;
    if !made {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a NUL-terminated path and the descriptor made above.
    let set = unsafe {
        SetFileSecurityW(
            name.as_ptr(),
            DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
            sd,
        )
    } != 0;
    let err = io::Error::last_os_error();
    // SAFETY: `sd` was allocated by the conversion above and is freed once.
    unsafe { LocalFree(sd) };
    if set { Ok(()) } else { Err(err) }
}

/// Create (or empty) `path` for writing, readable and writable by its owner only.
pub fn create_private(path: &std::path::Path) -> io::Result<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    restrict_to_owner(path)?;
    Ok(f)
}

/// A new file at `path` (which must not exist) for scratch data: opened by this handle
/// alone (no sharing) and deleted by the system when the handle closes.
pub fn create_scratch(path: &std::path::Path) -> io::Result<std::fs::File> {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_DELETE_ON_CLOSE;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .share_mode(0)
        .custom_flags(FILE_FLAG_DELETE_ON_CLOSE)
        .open(path)
}

/// Write all of `buf` at `offset` of `file`. (Windows moves the cursor; every caller
/// gives the offset.)
pub fn write_all_at(file: &std::fs::File, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_write(buf, offset)? {
            0 => return Err(io::ErrorKind::WriteZero.into()),
            n => {
                buf = &buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// Fill `buf` from `offset` of `file`.
pub fn read_exact_at(file: &std::fs::File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// Files holding secrets are made owner-only when written ([`create_private`]); their ACL
/// is not read back here, so nothing is reported.
pub fn not_private(_meta: &std::fs::Metadata) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_and_a_process_limit_are_named_and_others_are_not() {
        let e = |n: u32| io::Error::from_raw_os_error(n as i32);
        assert_eq!(exhausted(&e(ERROR_DISK_FULL)), Some("disk_space"));
        assert_eq!(exhausted(&e(ERROR_TOO_MANY_OPEN_FILES)), Some("open_files"));
        assert_eq!(exhausted(&e(ERROR_OUTOFMEMORY)), Some("memory"));
        assert_eq!(exhausted(&e(2)), None);
        assert_eq!(exhausted(&io::Error::other("x")), None);
    }

    #[test]
    fn scratch_files_are_read_and_written_by_offset_and_gone_when_closed() {
        let p = std::env::temp_dir().join(format!("itmcp-scratch-{}", std::process::id()));
        let f = create_scratch(&p).expect("scratch");
        write_all_at(&f, b"hello world", 0).expect("write");
        write_all_at(&f, b"W", 6).expect("write at 6");
        let mut b = [0u8; 5];
        read_exact_at(&f, &mut b, 6).expect("read at 6");
        assert_eq!(&b, b"World");
        assert!(read_exact_at(&f, &mut b, 9).is_err(), "past the end");
        drop(f);
        assert!(!p.exists(), "deleted on close");

        let q = std::env::temp_dir().join(format!("itmcp-private-{}", std::process::id()));
        {
            use std::io::Write;
            let mut f = create_private(&q).expect("private");
            f.write_all(b"secret").expect("write");
        }
        assert_eq!(
            std::fs::read_to_string(&q).expect("its owner reads it"),
            "secret"
        );
        let _ = std::fs::remove_file(&q);
    }

    #[test]
    fn a_process_is_there_until_it_ends() {
        assert!(process_exists(std::process::id() as i32));
        let mut child = std::process::Command::new("cmd")
            .args(["/c", "ping -n 30 127.0.0.1 >NUL"])
            .spawn()
            .expect("spawn cmd");
        let pid = child.id() as i32;
        assert!(process_exists(pid));
        ask_to_end(pid);
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(1));
        assert!(!process_exists(pid));
        assert!(program_of(std::process::id() as i32).is_some());
    }
}
