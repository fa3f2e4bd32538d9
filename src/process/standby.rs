//! A supervisor's life between sessions: waiting on the server's socket for a request,
//! supervising it, and — after a headless session that ended cleanly — waiting again.
//!
//! Why supervisors are kept: a freshly forked one pays for its fork, for faulting in the
//! code and memory it touches, and for its exit, on every command; a kept one has all of
//! that behind it, and a short command then costs the machine a third less CPU and answers
//! sooner. Only a supervisor as clean as a new one is kept: its headless session ended
//! with no process left (so no child, no terminal, nothing inherited by the next program),
//! it was not confined by Landlock (a restriction cannot be lifted), and no signal asked
//! it to end. At most [`MAX_IDLE`] are kept; the rest exit as before.
//!
//! The spawner keeps count through an events pipe (a supervisor says when it takes a
//! request and when it is idle again) and forks a new standby only when none is idle.
//! Places for kept supervisors are tokens on a slots pipe: a supervisor takes one to stay,
//! and gives it back when it takes its next request; the spawner gives back the token of
//! one killed while idle.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use nix::errno::Errno;
use nix::sys::resource::getrlimit;

use super::requests::{self, Inbox};
use super::supervisor::{self, Over};
use super::wire::Report;

/// Supervisors kept idle after a session, ready for the next request. With the standby
/// the spawner forks when none is idle, at most this many plus one wait.
pub const MAX_IDLE: usize = 2;

/// Exit status of an idle supervisor that found the server's end of the socket closed.
pub const SERVER_GONE: i32 = 4;

/// Exit status of a supervisor whose read of the socket failed: the spawner ends too (the
/// server starts a new one).
pub const SOCKET_BROKEN: i32 = 3;

/// Nice value a supervisor takes once its last session is over and reported: tearing the
/// process down must not hold up the server's answer on a small machine.
const NICE_WHEN_DONE: i32 = 19;

/// An event on the pipe: one kind byte and the supervisor's pid (little-endian).
pub const EVENT_BYTES: usize = 5;
const TAKEN: u8 = b'T';
const IDLE: u8 = b'I';

/// What a supervisor told the spawner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// It took a request: it is no longer idle.
    Taken(i32),
    /// Its session is over and it holds a slot: idle again.
    Idle(i32),
}

/// The descriptors the spawner shares with every supervisor it forks (all close-on-exec:
/// no program inherits them).
pub struct Pool {
    /// The server's socket, where requests arrive.
    pub requests: OwnedFd,
    /// Supervisors → spawner; the read end does not block.
    pub events_r: OwnedFd,
    events_w: OwnedFd,
    /// One byte per place for a kept supervisor; neither end blocks.
    slots_r: OwnedFd,
    slots_w: OwnedFd,
}

impl Pool {
    pub fn new(requests: OwnedFd) -> std::io::Result<Pool> {
        let (events_r, events_w) = crate::os::pipe_cloexec(false)?;
        super::set_nonblocking(events_r.as_fd())?;
        let (slots_r, slots_w) = crate::os::pipe_cloexec(true)?;
        nix::unistd::write(&slots_w, &[0u8; MAX_IDLE])?;
        Ok(Pool {
            requests,
            events_r,
            events_w,
            slots_r,
            slots_w,
        })
    }

    /// Every event waiting on the pipe (none when nothing is there).
    pub fn read_events(&self) -> Vec<Event> {
        let mut out = Vec::new();
        let mut buf = [0u8; EVENT_BYTES * 64];
        let mut kept = Vec::new();
        while let Ok(n @ 1..) = nix::unistd::read(self.events_r.as_raw_fd(), &mut buf) {
            kept.extend_from_slice(&buf[..n]);
        }
        // Writes of five bytes to a pipe are atomic: only whole events are there.
        for e in kept.chunks_exact(EVENT_BYTES) {
            let pid = i32::from_le_bytes([e[1], e[2], e[3], e[4]]);
            match e[0] {
                TAKEN => out.push(Event::Taken(pid)),
                IDLE => out.push(Event::Idle(pid)),
                _ => {}
            }
        }
        out
    }

    /// Give back the slot of a supervisor that held one and is gone.
    pub fn return_slot(&self) {
        let _ = nix::unistd::write(&self.slots_w, &[0]);
    }

    fn take_slot(&self) -> bool {
        let mut b = [0u8; 1];
        nix::unistd::read(self.slots_r.as_raw_fd(), &mut b) == Ok(1)
    }

    fn tell(&self, kind: u8, pid: i32) {
        let mut e = [kind, 0, 0, 0, 0];
        e[1..].copy_from_slice(&pid.to_le_bytes());
        let _ = nix::unistd::write(&self.events_w, &e);
    }
}

/// A supervisor just forked by the spawner: take requests one after another for as long
/// as it stays clean and has a slot; returns its exit status.
pub fn main(pool: &Pool, spawner: i32) -> i32 {
    supervisor::prepare();
    let clean = Fingerprint::now();
    // Pids as the spawner sees them: in a namespace of its own this process is 1, and its
    // parent is outside.
    let me = super::namespace::host_pid();
    let mut holds_slot = false;
    let mut buf = Vec::new();
    loop {
        // Idle, it dies with the spawner: left alone it would take a request that nobody
        // would follow with a new standby. Once it supervises a session it outlives the
        // spawner, as every session does (the server's socket decides).
        // (Where the system has no such signal, an orphaned standby ends when the server's
        // socket closes: `next_request` reads its end.)
        let _ = crate::os::die_with_parent(true);
        if super::namespace::parent_host_pid() != Some(spawner) {
            return 0;
        }
        let received = {
            supervisor::idle_signals(true);
            let r = next_request(pool, &mut buf);
            supervisor::idle_signals(false);
            r
        };
        let r = match received {
            Ok(r) => r,
            Err(code) => return code,
        };
        // Taken: the spawner forks a standby now if no other supervisor is idle. (Later —
        // once the program has started — measured slower: the fork then competes with the
        // program's own start-up.)
        pool.tell(TAKEN, me);
        if std::mem::take(&mut holds_slot) {
            pool.return_slot();
        }
        let _ = crate::os::die_with_parent(false);
        let mut fds = r.fds.into_iter();
        let over = match fds.next() {
            Some(control) => supervisor::run(r.req, control, fds.collect()),
            None => Over::Exit(1),
        };
        match over {
            Over::Reusable
                if clean.is_some() && Fingerprint::now() == clean && pool.take_slot() =>
            {
                holds_slot = true;
                pool.tell(IDLE, me);
            }
            Over::Reusable => return done(0),
            Over::Exit(code) => return done(code),
        }
    }
}

/// What a program may change about its supervisor from outside: a process of the same user
/// may set another's resource limits, priority, scheduling policy and CPU affinity, raise
/// its OOM score, or move it to another cgroup. A kept supervisor would pass such a change
/// on to every later session, so one that finds any of it changed since it was forked
/// exits instead. (Read after the session is reported and its socket closed: it costs the
/// answer nothing. Read with system calls where there are any: `/proc/self/status` and
/// `limits` are formatted text, and reading them was a sixth of a kept supervisor's CPU
/// per command.)
#[derive(Debug, PartialEq, Eq)]
struct Fingerprint {
    /// Soft and hard limit of each of [`crate::os::LIMITS`], in order.
    limits: Vec<(u64, u64)>,
    nice: i32,
    policy: i32,
    affinity: crate::os::Affinity,
    /// No system call reports these two; their files are short.
    oom_score_adj: String,
    cgroup: String,
}

impl Fingerprint {
    /// `None` when the kernel cannot say: such a supervisor is never kept.
    fn now() -> Option<Fingerprint> {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        let limits = crate::os::LIMITS
            .iter()
            .map(|&r| getrlimit(r).ok())
            .collect::<Option<Vec<_>>>()?;
        Errno::clear();
        // SAFETY: getpriority reads this process's own nice value and takes no pointer. -1
        // is a valid nice value, so errno tells an error apart.
        let nice = unsafe { nix::libc::getpriority(nix::libc::PRIO_PROCESS, 0) };
        if nice == -1 && Errno::last_raw() != 0 {
            return None;
        }
        Some(Fingerprint {
            limits,
            nice,
            policy: super::own_policy()?,
            affinity: crate::os::affinity()?,
            oom_score_adj: read("/proc/self/oom_score_adj")?,
            cgroup: read("/proc/self/cgroup")?,
        })
    }
}

/// Wait for the next request; a malformed message is answered on its control socket and
/// skipped (each message stands alone). `Err` is the exit status when waiting is over.
fn next_request(pool: &Pool, buf: &mut Vec<u8>) -> Result<requests::Received, i32> {
    loop {
        match requests::receive(pool.requests.as_fd(), buf) {
            Ok(Inbox::Request(r)) => return Ok(r),
            Ok(Inbox::Closed) => return Err(SERVER_GONE),
            Ok(Inbox::Malformed { control, why }) => turn_away(control, nix::libc::EINVAL, &why),
            Err(e) => {
                eprintln!("interactive-terminal spawner: {e}");
                return Err(SOCKET_BROKEN);
            }
        }
    }
}

/// Turn away a request that will not start: say why on stderr, and answer `errno` on its
/// control socket when it came with one.
pub fn turn_away(control: Option<OwnedFd>, errno: i32, why: &str) {
    eprintln!("interactive-terminal spawner: {why}");
    if let Some(c) = control {
        let mut out = std::os::unix::net::UnixStream::from(c);
        let _ = std::io::Write::write_all(&mut out, Report::Error(errno).line().as_bytes());
    }
}

/// The last session is over: exit at low priority.
fn done(code: i32) -> i32 {
    // SAFETY: setpriority on this process only; it takes no pointer.
    unsafe {
        nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, NICE_WHEN_DONE);
    }
    code
}
