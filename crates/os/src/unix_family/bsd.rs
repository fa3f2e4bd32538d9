//! macOS's side of the seam (see `os`): the BSD calls where Linux has its own.

use std::os::fd::{AsFd, BorrowedFd};

use super::posix::cloexec;
pub use super::posix::{anonymous_file, pipe_cloexec, socket_pair_cloexec};

/// A macOS pipe grows by itself (up to 64 KiB) as its writer fills it.
pub fn grow_pipe(_fd: BorrowedFd<'_>, _bytes: i32) {}

pub fn forbid_tracing() -> Result<(), String> {
    // PT_DENY_ATTACH: no debugger attaches to this process from now on.
    // SAFETY: ptrace(PT_DENY_ATTACH) on this process takes no pointer.
    let rc = unsafe { nix::libc::ptrace(nix::libc::PT_DENY_ATTACH, 0, std::ptr::null_mut(), 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

/// macOS names a process by its program; a thread's name is not the process's.
pub fn name_process(_name: &std::ffi::CStr) {}

/// macOS has no scheduling policies to choose between for a process.
pub fn own_policy() -> Option<i32> {
    None
}

use nix::sys::resource::Resource;

pub const LIMITS: &[Resource] = &[
    Resource::RLIMIT_AS,
    Resource::RLIMIT_CORE,
    Resource::RLIMIT_CPU,
    Resource::RLIMIT_DATA,
    Resource::RLIMIT_FSIZE,
    Resource::RLIMIT_NOFILE,
    Resource::RLIMIT_STACK,
];

/// macOS does not let a process name the processors it runs on.
pub type Affinity = ();

pub fn affinity() -> Option<Affinity> {
    Some(())
}

pub fn into_batch() -> Option<i32> {
    None
}

pub fn set_policy(_policy: i32) -> bool {
    false
}

/// macOS has no `MSG_NOSIGNAL`; the server ignores `SIGPIPE` (as Rust programs do), so a
/// gone peer is an `EPIPE` error there too.
pub fn send_flags() -> nix::sys::socket::MsgFlags {
    nix::sys::socket::MsgFlags::empty()
}

pub fn receive_flags() -> nix::sys::socket::MsgFlags {
    nix::sys::socket::MsgFlags::empty()
}

pub fn received_cloexec(fd: BorrowedFd<'_>) -> nix::Result<()> {
    cloexec(fd, false)
}

// ---- processes ------------------------------------------------------------------------

/// From the kernel's process table (`proc_listchildpids`).
pub fn children(pid: i32) -> Vec<i32> {
    let mut buf: Vec<i32> = vec![0; 256];
    loop {
        let bytes = (buf.len() * std::mem::size_of::<i32>()) as nix::libc::c_int;
        // SAFETY: the buffer holds `bytes` bytes and lives through the call.
        let n = unsafe { nix::libc::proc_listchildpids(pid, buf.as_mut_ptr().cast(), bytes) };
        if n <= 0 {
            return Vec::new();
        }
        // It returns a count of pids (not bytes) on macOS; a full buffer may have cut the
        // list, so it is asked again with room to spare.
        let count = n as usize;
        if count < buf.len() {
            buf.truncate(count);
            buf.retain(|p| *p > 0);
            return buf;
        }
        if buf.len() >= 1 << 16 {
            return buf;
        }
        buf.resize(buf.len() * 4, 0);
    }
}

/// From `proc_pidinfo(PROC_PIDTBSDINFO)`.
pub fn parent_of(pid: i32) -> Option<(i32, bool)> {
    let mut info = std::mem::MaybeUninit::<nix::libc::proc_bsdinfo>::zeroed();
    let size = std::mem::size_of::<nix::libc::proc_bsdinfo>() as nix::libc::c_int;
    // SAFETY: `info` has room for one proc_bsdinfo and lives through the call.
    let n = unsafe {
        nix::libc::proc_pidinfo(
            pid,
            nix::libc::PROC_PIDTBSDINFO,
            0,
            info.as_mut_ptr().cast(),
            size,
        )
    };
    if n != size {
        return None;
    }
    // SAFETY: the kernel filled the whole structure (n == size).
    let info = unsafe { info.assume_init() };
    Some((info.pbi_ppid as i32, info.pbi_status == nix::libc::SZOMB))
}

pub fn session_of(pid: i32) -> Option<i32> {
    nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(pid)))
        .ok()
        .map(|p| p.as_raw())
}

pub fn become_subreaper() -> Result<(), String> {
    Err("macOS has no child subreaper: orphans of a session go to launchd".into())
}

pub fn die_with_parent(die: bool) -> Result<(), String> {
    if die {
        Err("macOS has no parent-death signal".into())
    } else {
        Ok(())
    }
}

/// A kqueue watching the blocked signals (and, when asked, the parent's exit).
pub struct SignalSource {
    queue: nix::sys::event::Kqueue,
    /// The signal the parent's exit is reported as.
    parent_as: Option<nix::sys::signal::Signal>,
}

impl SignalSource {
    pub fn new(mask: &nix::sys::signal::SigSet) -> nix::Result<SignalSource> {
        use nix::sys::event::{EventFilter, EventFlag, FilterFlag, KEvent, Kqueue};
        let queue = Kqueue::new()?;
        let changes: Vec<KEvent> = mask
            .iter()
            .map(|sig| {
                KEvent::new(
                    sig as usize,
                    EventFilter::EVFILT_SIGNAL,
                    EventFlag::EV_ADD,
                    FilterFlag::empty(),
                    0,
                    0,
                )
            })
            .collect();
        queue.kevent(&changes, &mut [], None)?;
        Ok(SignalSource {
            queue,
            parent_as: None,
        })
    }

    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.queue.as_fd()
    }

    /// The next signal taken, `None` when none is pending. The kqueue notes a delivery;
    /// the signal itself stays pending while blocked, so it is taken off (`sigwait`) here,
    /// or it would be delivered again once the mask opens.
    pub fn next_signal(&mut self) -> Option<nix::sys::signal::Signal> {
        use nix::sys::event::{EventFilter, EventFlag, FilterFlag, KEvent};
        use nix::sys::signal::{SigSet, Signal};
        let mut events = [KEvent::new(
            0,
            EventFilter::EVFILT_SIGNAL,
            EventFlag::empty(),
            FilterFlag::empty(),
            0,
            0,
        )];
        let now = nix::libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let n = self.queue.kevent(&[], &mut events, Some(now)).ok()?;
        if n == 0 {
            return None;
        }
        let ev = &events[0];
        if ev.filter().ok()? == EventFilter::EVFILT_PROC {
            return self.parent_as;
        }
        let sig = Signal::try_from(ev.ident() as i32).ok()?;
        if pending(sig) {
            // Blocked, so still pending: `sigwait` returns at once and takes it off.
            let _ = SigSet::from(sig).wait();
        }
        Some(sig)
    }

    /// Report the exit of `parent` as `report_as` (`EVFILT_PROC`/`NOTE_EXIT`).
    pub fn watch_parent(
        &mut self,
        parent: i32,
        report_as: nix::sys::signal::Signal,
    ) -> Result<(), String> {
        use nix::sys::event::{EventFilter, EventFlag, FilterFlag, KEvent};
        let watch = KEvent::new(
            parent as usize,
            EventFilter::EVFILT_PROC,
            EventFlag::EV_ADD | EventFlag::EV_ONESHOT,
            FilterFlag::NOTE_EXIT,
            0,
            0,
        );
        self.queue
            .kevent(&[watch], &mut [], None)
            .map_err(|e| e.to_string())?;
        self.parent_as = Some(report_as);
        Ok(())
    }
}

/// Whether `sig` is pending for this process (blocked and delivered).
fn pending(sig: nix::sys::signal::Signal) -> bool {
    let mut set = std::mem::MaybeUninit::<nix::libc::sigset_t>::zeroed();
    // SAFETY: sigpending fills the set, which lives through both calls; sigismember reads it.
    unsafe {
        nix::libc::sigpending(set.as_mut_ptr()) == 0
            && nix::libc::sigismember(set.as_ptr(), sig as nix::libc::c_int) == 1
    }
}

/// macOS's allocator gives small and large blocks their own zones already.
pub fn tune_allocator() {}

/// macOS gives no descriptor of a terminal's own side from its master.
pub fn pty_input_unread(_fd: std::os::fd::RawFd) -> Option<bool> {
    None
}

pub fn oneshot_timer(_after: std::time::Duration) -> Option<std::os::fd::OwnedFd> {
    None
}
