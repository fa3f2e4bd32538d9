//! Windows' containment: a Job Object per session. Every process a session's program starts
//! is in its job (Windows puts a child in its parent's job, and the job allows no
//! breakaway), so ending the job ends them all, and so does closing its last handle
//! (`KILL_ON_JOB_CLOSE`): the server's death closes it, as a killed server's socket ends a
//! supervisor on Linux.
//!
//! A program is started suspended and put in its job before its first instruction runs, so
//! nothing it starts can be outside the job; then its one thread is let go.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::os::windows::process::CommandExt;
use std::process::{Child, Command};

use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOBOBJECT_BASIC_PROCESS_ID_LIST,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectBasicProcessIdList,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_SUSPENDED, OpenThread, ResumeThread, THREAD_SUSPEND_RESUME,
};

/// A job whose processes all end when it is terminated or its last handle closes.
pub struct Job {
    handle: OwnedHandle,
}

/// The error of the last Win32 call, when `ok` says it failed.
fn check(ok: bool) -> io::Result<()> {
    if ok {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Job {
    /// A new, unnamed job: killed on close, no breakaway, and a process that crashes ends
    /// rather than waiting on an error dialog nobody sees.
    pub fn new() -> io::Result<Job> {
        // SAFETY: no security attributes and no name; the handle is checked before use.
        let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a valid handle just returned to this process, owned from here.
        let job = Job {
            handle: unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) },
        };
        // SAFETY: a zeroed limit structure is its documented empty value.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags =
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
        // SAFETY: the pointer and size describe `limits`, which outlives the call.
        check(
            unsafe {
                SetInformationJobObject(
                    job.raw(),
                    JobObjectExtendedLimitInformation,
                    (&raw const limits).cast(),
                    size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
                )
            } != 0,
        )?;
        Ok(job)
    }

    fn raw(&self) -> HANDLE {
        self.handle.as_raw_handle() as HANDLE
    }

    /// Start `cmd` inside the job: suspended, put in the job, then let go. A start the job
    /// refuses kills the suspended process, so nothing runs outside it.
    pub fn spawn(&self, cmd: &mut Command) -> io::Result<Child> {
        let mut child = cmd.creation_flags(CREATE_SUSPENDED).spawn()?;
        let contained = self
            .assign(child.as_raw_handle())
            .and_then(|()| resume(child.id()));
        if let Err(e) = contained {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        Ok(child)
    }

    /// Put a process already started in the job (a pty's program, started by the pty):
    /// what it started before this call is not in it.
    pub fn assign(&self, process: RawHandle) -> io::Result<()> {
        // SAFETY: both handles are valid for the call's duration.
        check(unsafe { AssignProcessToJobObject(self.raw(), process as HANDLE) } != 0)
    }

    /// End every process in the job with `exit_code`.
    pub fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: the job handle is valid.
        check(unsafe { TerminateJobObject(self.raw(), exit_code) } != 0)
    }

    /// The ids of the processes in the job now.
    pub fn pids(&self) -> io::Result<Vec<u32>> {
        // Room for this many; a job with more is asked again with room for all.
        let mut room = 64usize;
        loop {
            // The list's header (two counts) and then `room` ids, as usize words so the
            // buffer is aligned for the structure.
            let words = 2 + room;
            let mut buf = vec![0usize; words];
            let bytes = (words * size_of::<usize>()) as u32;
            // SAFETY: the buffer is `bytes` long and aligned for the list's header.
            let ok = unsafe {
                QueryInformationJobObject(
                    self.raw(),
                    JobObjectBasicProcessIdList,
                    buf.as_mut_ptr().cast(),
                    bytes,
                    std::ptr::null_mut(),
                )
            } != 0;
            let list = buf.as_ptr().cast::<JOBOBJECT_BASIC_PROCESS_ID_LIST>();
            // SAFETY: the header is within the buffer whether or not the call succeeded.
            let (assigned, listed) = unsafe {
                (
                    (*list).NumberOfAssignedProcesses as usize,
                    (*list).NumberOfProcessIdsInList as usize,
                )
            };
            if !ok && assigned <= room {
                return Err(io::Error::last_os_error());
            }
            if assigned > room {
                room = assigned + 16;
                continue;
            }
            // SAFETY: `listed` ids follow the header, within the buffer (listed <= room).
            let ids = unsafe {
                std::slice::from_raw_parts(
                    (&raw const (*list).ProcessIdList).cast::<usize>(),
                    listed,
                )
            };
            return Ok(ids.iter().map(|&id| id as u32).collect());
        }
    }
}

/// Let every thread of a process started suspended run (it has one: its first).
fn resume(pid: u32) -> io::Result<()> {
    // SAFETY: a snapshot of the system's threads; the handle is checked and closed below.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snap == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `snap` is a valid handle owned from here.
    let snap = unsafe { OwnedHandle::from_raw_handle(snap as RawHandle) };
    let mut entry = THREADENTRY32 {
        dwSize: size_of::<THREADENTRY32>() as u32,
        ..THREADENTRY32::default()
    };
    let mut resumed = 0;
    // SAFETY: `entry` is sized as the call requires and outlives it.
    let mut more = unsafe { Thread32First(snap.as_raw_handle() as HANDLE, &raw mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: a thread id from the snapshot; the handle is checked and closed.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if thread.is_null() {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: a valid handle owned from here.
            let thread = unsafe { OwnedHandle::from_raw_handle(thread as RawHandle) };
            // SAFETY: the thread handle is valid and has the resume right.
            if unsafe { ResumeThread(thread.as_raw_handle() as HANDLE) } == u32::MAX {
                return Err(io::Error::last_os_error());
            }
            resumed += 1;
        }
        // SAFETY: as for the first entry.
        more = unsafe { Thread32Next(snap.as_raw_handle() as HANDLE, &raw mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::other(format!(
            "process {pid} has no thread to resume"
        )));
    }
    Ok(())
}
