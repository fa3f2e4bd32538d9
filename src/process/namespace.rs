//! A pid namespace per supervisor: the supervisor is process 1 of a namespace of its own,
//! and its session's processes live in it and see nothing outside.
//!
//! Why: every command runs as the server's user, and a process of the same user may signal,
//! stop or trace any other. A command stopped the spawner, killed its supervisor and the
//! server, and its `setsid` child lived on under init; `kill -STOP` of its own supervisor
//! made `terminate` a no-op; `gdb -p` into an unrelated process of the user ran code
//! outside every supervisor. In a pid namespace of its own a session's processes cannot
//! name any process outside (a signal or a trace names a process by its pid in the caller's
//! namespace), `/proc` shows the session alone, and the namespace's process 1 — the
//! supervisor — takes from inside only the signals it handles (never SIGKILL or SIGSTOP).
//! When process 1 ends, the kernel kills everything left in the namespace, so a supervisor
//! killed from outside (or its parent-death signal, which comes when the spawner dies)
//! ends the whole session, stopped processes included.
//!
//! An unprivileged user gets the pid namespace inside a user namespace of its own, with its
//! own uid and gid mapped to themselves (root, and setuid programs, are not there: `sudo`
//! does not work in a session). Root gets it without one. Where the kernel refuses (user
//! namespaces disabled, a container's seccomp profile), or `/proc` cannot be mounted for the
//! namespace, supervisors are forked as before and containment rests on the subreaper
//! alone (`docs/containment.md`); the start-up log and `list` say which.
//!
//! The supervisor keeps a descriptor of the machine's `/proc` from before it mounted its
//! own: pids it tells the server (the program's, the ones it killed) are the server's pids,
//! read there.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::OnceLock;

#[cfg(target_os = "linux")]
use nix::sched::CloneFlags;
use nix::unistd::Pid;

/// What a supervisor in its own namespace knows of the world outside.
struct Inside {
    /// Its own pid as the server sees it.
    host_pid: i32,
    /// The machine's `/proc`, from before the namespace's own was mounted.
    host_proc: OwnedFd,
}

static INSIDE: OnceLock<Inside> = OnceLock::new();

/// Whether this process is a supervisor in a namespace of its own.
pub fn inside() -> bool {
    INSIDE.get().is_some()
}

/// This process's pid as the server sees it.
pub fn host_pid() -> i32 {
    INSIDE
        .get()
        .map_or(std::process::id() as i32, |i| i.host_pid)
}

/// A file under the machine's `/proc`, read through the kept descriptor.
fn read_host_proc(path: &str) -> Option<String> {
    let i = INSIDE.get()?;
    let fd = nix::fcntl::openat(
        Some(i.host_proc.as_raw_fd()),
        path,
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .ok()?;
    // SAFETY: openat just returned this descriptor; nothing else owns it.
    let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
    let mut s = String::new();
    std::io::Read::read_to_string(&mut f, &mut s).ok()?;
    Some(s)
}

/// The parent of this process as the server sees it (in a namespace, `getppid` says 0).
pub fn parent_host_pid() -> Option<i32> {
    if !inside() {
        return Some(nix::unistd::getppid().as_raw());
    }
    let stat = read_host_proc(&format!("{}/stat", host_pid()))?;
    crate::os::parse_stat_ppid(&stat).map(|(ppid, _)| ppid)
}

/// The children of `pid` (a pid as the server sees it), read in the machine's `/proc`.
fn host_children(pid: i32) -> Vec<i32> {
    read_host_proc(&format!("{pid}/task/{pid}/children"))
        .map(|t| {
            t.split_ascii_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// `ns_pid`, a child of this process, as the server sees it: the supervisor's one child
/// right after it started the program. Outside a namespace, the pid itself.
pub fn host_pid_of_child(ns_pid: i32) -> i32 {
    if !inside() {
        return ns_pid;
    }
    match host_children(host_pid()).as_slice() {
        [only] => *only,
        _ => ns_pid,
    }
}

/// Every descendant of this process, as the server sees them (for what a kill reports).
pub fn host_descendants() -> Vec<i32> {
    let mut out = Vec::new();
    let mut todo = host_children(host_pid());
    while let Some(p) = todo.pop() {
        if out.len() > 100_000 || out.contains(&p) {
            continue;
        }
        out.push(p);
        todo.extend(host_children(p));
    }
    out
}

/// Whether supervisors get a namespace of their own here, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Containment {
    /// A pid namespace (and mount namespace for its `/proc`), in a user namespace when not
    /// root.
    PidNamespace { user_namespace: bool },
    /// The subreaper alone.
    Subreaper,
}

impl Containment {
    #[cfg(target_os = "linux")]
    fn flags(self) -> Option<CloneFlags> {
        match self {
            Containment::PidNamespace { user_namespace } => {
                let mut f = CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWNS;
                if user_namespace {
                    f |= CloneFlags::CLONE_NEWUSER;
                }
                Some(f)
            }
            Containment::Subreaper => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Containment::PidNamespace { .. } => "pid-namespace",
            Containment::Subreaper => "subreaper",
        }
    }
}

/// The operator chose supervisors alone (`--containment subreaper`).
static SUBREAPER_ONLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The spawner's argument that says so.
pub const SUBREAPER_FLAG: &str = "--subreaper";

/// Record the operator's choice (at start, before any session).
pub fn set_subreaper_only(only: bool) {
    SUBREAPER_ONLY.store(only, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the operator chose supervisors alone.
pub fn subreaper_only() -> bool {
    SUBREAPER_ONLY.load(std::sync::atomic::Ordering::Relaxed)
}

/// Exit status of a probe child whose namespace could not be made ready.
const PROBE_FAILED: i32 = 70;

/// Find out, once, what this machine allows: a probe child is started the way supervisors
/// will be, sets its namespace up, and exits.
pub fn probe() -> Containment {
    // Pid namespaces are Linux's: elsewhere a session is kept by its supervisor alone.
    if subreaper_only() || cfg!(not(target_os = "linux")) {
        return Containment::Subreaper;
    }
    // Root first without a user namespace (its programs keep root's powers over its own
    // files), then with one where the first is refused.
    let candidates: &[Containment] = if nix::unistd::geteuid().is_root() {
        &[
            Containment::PidNamespace {
                user_namespace: false,
            },
            Containment::PidNamespace {
                user_namespace: true,
            },
        ]
    } else {
        &[Containment::PidNamespace {
            user_namespace: true,
        }]
    };
    for &c in candidates {
        let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
        let Ok(child) = start(c, &mut || match enter(c, uid, gid) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("interactive-terminal spawner: no pid namespace for sessions: {e}");
                PROBE_FAILED
            }
        }) else {
            continue;
        };
        if let Ok(nix::sys::wait::WaitStatus::Exited(_, 0)) = nix::sys::wait::waitpid(child, None) {
            return c;
        }
    }
    Containment::Subreaper
}

#[cfg(target_os = "linux")]
/// The stack a child started with [`start`] runs on (it has no other): mapped once, with a
/// page below it that faults, and copied into each child like the rest of the spawner's
/// memory.
fn stack() -> Option<&'static mut [u8]> {
    const SIZE: usize = 8 << 20;
    const GUARD: usize = 64 << 10;
    struct Stack(usize);
    static STACK: OnceLock<Option<Stack>> = OnceLock::new();
    let at = STACK
        .get_or_init(|| {
            // SAFETY: an anonymous private mapping of fresh memory; nothing aliases it.
            let p = unsafe {
                nix::libc::mmap(
                    std::ptr::null_mut(),
                    SIZE + GUARD,
                    nix::libc::PROT_READ | nix::libc::PROT_WRITE,
                    nix::libc::MAP_PRIVATE | nix::libc::MAP_ANONYMOUS | nix::libc::MAP_STACK,
                    -1,
                    0,
                )
            };
            if p == nix::libc::MAP_FAILED {
                return None;
            }
            // SAFETY: the first GUARD bytes of the mapping just made.
            unsafe { nix::libc::mprotect(p, GUARD, nix::libc::PROT_NONE) };
            Some(Stack(p as usize + GUARD))
        })
        .as_ref()?
        .0;
    // SAFETY: the mapping lives as long as the process and is used only as the stack of a
    // child being started: the spawner is single-threaded, and a child gets its own copy.
    Some(unsafe { std::slice::from_raw_parts_mut(at as *mut u8, SIZE) })
}

/// Start a child running `run` the way `containment` says: forked, or cloned into new
/// namespaces. The child exits with what `run` returns.
pub fn start(containment: Containment, run: &mut dyn FnMut() -> i32) -> nix::Result<Pid> {
    #[cfg(not(target_os = "linux"))]
    let flags: Option<std::convert::Infallible> = match containment {
        Containment::Subreaper => None,
        Containment::PidNamespace { .. } => return Err(nix::errno::Errno::ENOSYS),
    };
    #[cfg(target_os = "linux")]
    let flags = containment.flags();
    let Some(flags) = flags else {
        // SAFETY: the caller (the spawner) is single-threaded.
        return match unsafe { nix::unistd::fork() }? {
            nix::unistd::ForkResult::Child => std::process::exit(run()),
            nix::unistd::ForkResult::Parent { child } => Ok(child),
        };
    };
    clone_into(flags, run)
}

/// No namespaces to clone into here (the type has no value).
#[cfg(not(target_os = "linux"))]
fn clone_into(flags: std::convert::Infallible, _run: &mut dyn FnMut() -> i32) -> nix::Result<Pid> {
    match flags {}
}

/// Clone a child running `run` into the namespaces `flags` name.
#[cfg(target_os = "linux")]
fn clone_into(flags: CloneFlags, run: &mut dyn FnMut() -> i32) -> nix::Result<Pid> {
    let stack = stack().ok_or(nix::errno::Errno::ENOMEM)?;
    let cb: nix::sched::CloneCb = Box::new(|| std::process::exit(run()));
    // SAFETY: the caller is single-threaded; the child gets a copy of its memory (no
    // CLONE_VM) and runs on `stack`, its own copy of a mapping nothing else uses.
    unsafe {
        nix::sched::clone(
            cb,
            stack,
            flags,
            Some(nix::sys::signal::Signal::SIGCHLD as i32),
        )
    }
}

/// In a child just started into new namespaces: map its user, mount `/proc` for its pid
/// namespace (keeping the machine's), and remember its pid as the server sees it.
pub fn enter(
    containment: Containment,
    uid: nix::unistd::Uid,
    gid: nix::unistd::Gid,
) -> Result<(), String> {
    let Containment::PidNamespace { user_namespace } = containment else {
        return Ok(());
    };
    enter_namespace(user_namespace, uid, gid)
}

/// Pid namespaces are Linux's.
#[cfg(not(target_os = "linux"))]
fn enter_namespace(
    _user_namespace: bool,
    _uid: nix::unistd::Uid,
    _gid: nix::unistd::Gid,
) -> Result<(), String> {
    Err("this system has no pid namespaces".into())
}

#[cfg(target_os = "linux")]
fn enter_namespace(
    user_namespace: bool,
    uid: nix::unistd::Uid,
    gid: nix::unistd::Gid,
) -> Result<(), String> {
    // Before /proc is mounted anew, "self" is this process in the machine's namespace.
    let host_pid: i32 = std::fs::read_link("/proc/self")
        .map_err(|e| format!("/proc/self: {e}"))?
        .to_string_lossy()
        .parse()
        .map_err(|e| format!("/proc/self: {e}"))?;
    let host_proc = nix::fcntl::open(
        "/proc",
        nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|e| format!("/proc: {e}"))?;
    // SAFETY: open just returned this descriptor; nothing else owns it.
    let host_proc = unsafe { OwnedFd::from_raw_fd(host_proc) };
    if user_namespace {
        let write = |file: &str, text: String| {
            std::fs::write(file, text).map_err(|e| format!("{file}: {e}"))
        };
        write("/proc/self/setgroups", "deny".into())?;
        write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    }
    use nix::mount::{MsFlags, mount};
    // Nothing mounted here goes back to the machine's namespace.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| format!("making / private: {e}"))?;
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(|e| format!("mounting /proc for the namespace: {e}"))?;
    // Not traceable by its session's processes (same user, no capability in here).
    let _ = nix::sys::prctl::set_dumpable(false);
    let _ = INSIDE.set(Inside {
        host_pid,
        host_proc,
    });
    Ok(())
}
