//! Linux's side of the seam (see `os`).

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use nix::fcntl::OFlag;

pub fn pipe_cloexec(nonblocking: bool) -> nix::Result<(OwnedFd, OwnedFd)> {
    let mut flags = OFlag::O_CLOEXEC;
    if nonblocking {
        flags |= OFlag::O_NONBLOCK;
    }
    nix::unistd::pipe2(flags)
}

pub fn grow_pipe(fd: BorrowedFd<'_>, bytes: i32) {
    let _ = nix::fcntl::fcntl(fd.as_raw_fd(), nix::fcntl::FcntlArg::F_SETPIPE_SZ(bytes));
}

pub fn socket_pair_cloexec(kind: nix::sys::socket::SockType) -> nix::Result<(OwnedFd, OwnedFd)> {
    use nix::sys::socket::{AddressFamily, SockFlag, socketpair};
    socketpair(AddressFamily::Unix, kind, None, SockFlag::SOCK_CLOEXEC)
}

pub fn forbid_tracing() -> Result<(), String> {
    nix::sys::prctl::set_dumpable(false).map_err(|e| e.to_string())
}

pub fn name_process(name: &std::ffi::CStr) {
    let _ = nix::sys::prctl::set_name(name);
}

pub fn own_policy() -> Option<i32> {
    // SAFETY: sched_getscheduler reads this process's own policy and takes no pointer.
    let policy = unsafe { nix::libc::sched_getscheduler(0) };
    (policy >= 0).then_some(policy)
}

use nix::sys::resource::Resource;

pub const LIMITS: &[Resource] = &[
    Resource::RLIMIT_AS,
    Resource::RLIMIT_CORE,
    Resource::RLIMIT_CPU,
    Resource::RLIMIT_DATA,
    Resource::RLIMIT_FSIZE,
    Resource::RLIMIT_LOCKS,
    Resource::RLIMIT_MEMLOCK,
    Resource::RLIMIT_MSGQUEUE,
    Resource::RLIMIT_NICE,
    Resource::RLIMIT_NOFILE,
    Resource::RLIMIT_NPROC,
    Resource::RLIMIT_RSS,
    Resource::RLIMIT_RTPRIO,
    Resource::RLIMIT_RTTIME,
    Resource::RLIMIT_SIGPENDING,
    Resource::RLIMIT_STACK,
];

pub type Affinity = nix::sched::CpuSet;

pub fn affinity() -> Option<Affinity> {
    nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok()
}

pub fn into_batch() -> Option<i32> {
    let policy = own_policy()?;
    (policy == nix::libc::SCHED_OTHER && set_policy(nix::libc::SCHED_BATCH)).then_some(policy)
}

/// At the static priority 0 these policies take.
pub fn set_policy(policy: i32) -> bool {
    let param = nix::libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler on this process, with a parameter that lives through the
    // call.
    unsafe { nix::libc::sched_setscheduler(0, policy, &param) == 0 }
}

pub fn send_flags() -> nix::sys::socket::MsgFlags {
    nix::sys::socket::MsgFlags::MSG_NOSIGNAL
}

pub fn receive_flags() -> nix::sys::socket::MsgFlags {
    nix::sys::socket::MsgFlags::MSG_CMSG_CLOEXEC
}

/// Set on receipt already ([`receive_flags`]).
pub fn received_cloexec(_fd: BorrowedFd<'_>) -> nix::Result<()> {
    Ok(())
}

/// A memory file.
pub fn anonymous_file(body: &[u8]) -> std::io::Result<OwnedFd> {
    use nix::sys::memfd::{MemFdCreateFlag, memfd_create};
    use std::os::unix::fs::FileExt;
    let fd = memfd_create(c"itmcp-request", MemFdCreateFlag::MFD_CLOEXEC)?;
    let file = std::fs::File::from(fd);
    file.write_all_at(body, 0)?;
    Ok(file.into())
}

// ---- processes ------------------------------------------------------------------------

/// Whether this kernel lists children per task (`CONFIG_PROC_CHILDREN`).
fn has_children_files() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        let me = std::process::id();
        std::path::Path::new(&format!("/proc/{me}/task/{me}/children")).exists()
    })
}

/// From `/proc/<pid>/task/<tid>/children` (one small read per process), never a scan of
/// the machine's process table unless the kernel lacks those files.
pub fn children(pid: i32) -> Vec<i32> {
    if !has_children_files() {
        return children_by_scan(pid);
    }
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let mut path = t.path();
        path.push("children");
        if let Ok(text) = std::fs::read_to_string(&path) {
            out.extend(
                text.split_ascii_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    out
}

pub(super) fn children_by_scan(pid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| parent_of(*p).is_some_and(|(ppid, _)| ppid == pid))
        .collect()
}

pub fn parent_of(pid: i32) -> Option<(i32, bool)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    super::parse_stat_ppid(&stat)
}

pub fn session_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    super::stat_field(&stat, 6)?.parse().ok()
}

pub fn become_subreaper() -> Result<(), String> {
    nix::sys::prctl::set_child_subreaper(true).map_err(|e| e.to_string())
}

pub fn die_with_parent(die: bool) -> Result<(), String> {
    let sig = die.then_some(nix::sys::signal::Signal::SIGKILL);
    nix::sys::prctl::set_pdeathsig(sig).map_err(|e| e.to_string())
}

/// A signalfd over the blocked signals.
pub struct SignalSource(nix::sys::signalfd::SignalFd);

impl SignalSource {
    pub fn new(mask: &nix::sys::signal::SigSet) -> nix::Result<SignalSource> {
        use nix::sys::signalfd::{SfdFlags, SignalFd};
        SignalFd::with_flags(mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC).map(SignalSource)
    }

    pub fn as_fd(&self) -> BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(&self.0)
    }

    /// The next signal taken, `None` when none is pending.
    pub fn next_signal(&mut self) -> Option<nix::sys::signal::Signal> {
        while let Ok(Some(info)) = self.0.read_signal() {
            if let Ok(sig) = nix::sys::signal::Signal::try_from(info.ssi_signo as i32) {
                return Some(sig);
            }
        }
        None
    }

    /// Report the death of the parent (`parent`, this process's parent now) as `report_as`,
    /// which must be among the source's signals: the kernel's parent-death signal. It also
    /// comes when the parent's thread that started this process ends, so the receiver
    /// checks that its parent changed.
    pub fn watch_parent(
        &mut self,
        _parent: i32,
        report_as: nix::sys::signal::Signal,
    ) -> Result<(), String> {
        nix::sys::prctl::set_pdeathsig(report_as).map_err(|e| e.to_string())
    }
}

/// Allocations up to this size come from the allocator's heaps rather than a mapping of
/// their own. glibc's default (128 KiB, raised as mappings are freed) mapped each megabyte
/// page of output afresh; a fresh mapping is a page fault for every 4 KiB written into it.
#[cfg(target_env = "gnu")]
const HEAP_ALLOCATIONS_UP_TO: i32 = 4 << 20;
/// Free memory at the top of a heap kept for the next allocation instead of being given
/// back at once. glibc's default (128 KiB) returned and faulted in again the buffers of
/// every page of output: about a third of the server's CPU per page. This bounds what an
/// idle server keeps per allocator arena.
#[cfg(target_env = "gnu")]
const KEEP_FREE_UP_TO: i32 = 8 << 20;

pub fn tune_allocator() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets allocator parameters, under the allocator's own lock.
    unsafe {
        nix::libc::mallopt(nix::libc::M_MMAP_THRESHOLD, HEAP_ALLOCATIONS_UP_TO);
        nix::libc::mallopt(nix::libc::M_TRIM_THRESHOLD, KEEP_FREE_UP_TO);
    }
}

/// Through a descriptor of the terminal's own side (`TIOCGPTPEER`, Linux 4.13), opened for
/// the look and closed after it: one kept open would keep the terminal from hanging up
/// when its programs end. Asked with `poll`, not the unread count: the kernel moves what is
/// written to the master across in a worker of its own, and only a poll (as a read would)
/// waits for that move before it answers — right after a write the count still says 0.
/// Readable as the program would read it: in canonical mode, a whole line.
pub fn pty_input_unread(fd: std::os::fd::RawFd) -> Option<bool> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::{AsFd, FromRawFd};
    let flags =
        nix::libc::O_RDWR | nix::libc::O_NOCTTY | nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC;
    // SAFETY: TIOCGPTPEER on the master's descriptor (open for the call, the caller's
    // promise) with integer flags; it returns a new descriptor or -1.
    let peer = unsafe { nix::libc::ioctl(fd, nix::libc::TIOCGPTPEER, flags) };
    if peer < 0 {
        return None;
    }
    // SAFETY: the descriptor was just returned to this process; nothing else owns it.
    let peer = unsafe { OwnedFd::from_raw_fd(peer) };
    let mut fds = [PollFd::new(peer.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(_) => Some(
            fds[0]
                .revents()
                .is_some_and(|r| r.contains(PollFlags::POLLIN)),
        ),
        Err(_) => None,
    }
}

pub fn oneshot_timer(after: std::time::Duration) -> Option<OwnedFd> {
    use nix::sys::time::TimeSpec;
    use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
    let timer = TimerFd::new(
        ClockId::CLOCK_MONOTONIC,
        TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
    )
    .ok()?;
    // A zero expiry would disarm the timer: the shortest wait is a nanosecond.
    let after = after.max(std::time::Duration::from_nanos(1));
    timer
        .set(
            Expiration::OneShot(TimeSpec::from_duration(after)),
            TimerSetTimeFlags::empty(),
        )
        .ok()?;
    // The caller owns a descriptor of the same timer (close-on-exec, as every duplicate
    // this process makes): `TimerFd` gives no `OwnedFd` of its own.
    std::os::fd::AsFd::as_fd(&timer).try_clone_to_owned().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_scan_finds_what_the_children_files_list() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("spawn sleep");
        let me = std::process::id() as i32;
        assert!(super::children_by_scan(me).contains(&(child.id() as i32)));
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn a_oneshot_timer_fires_once_its_time_has_passed_and_not_before() {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        use std::os::fd::AsFd;
        let readable = |fd: &std::os::fd::OwnedFd, ms: u16| {
            let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
            poll(&mut fds, PollTimeout::from(ms)).expect("poll") == 1
        };
        let later = super::oneshot_timer(std::time::Duration::from_secs(3600)).expect("timer");
        assert!(!readable(&later, 0), "an hour's timer fired at once");
        let soon = super::oneshot_timer(std::time::Duration::from_micros(250)).expect("timer");
        assert!(
            readable(&soon, 10_000),
            "a quarter-millisecond timer never fired"
        );
        // Zero is the shortest wait, not a disarmed timer.
        let now = super::oneshot_timer(std::time::Duration::ZERO).expect("timer");
        assert!(readable(&now, 10_000), "a zero timer never fired");
    }
}
