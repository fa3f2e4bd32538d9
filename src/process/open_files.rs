//! The open-file limit. Each terminal holds descriptors in the server (its pty, its
//! supervisor's socket, spool files), and so does each running command; the soft limit most
//! systems give a user's processes (1024) is met long before an operator's limits are (500
//! terminals, say). So each binary raises its soft limit to its hard limit at start, as
//! servers commonly do. Its programs still start with the limit it was given: a program
//! that uses `select(2)` fails on a descriptor above 1023, so a raised limit is not the
//! server's to hand on. The spawner sets it back before it forks any supervisor, and what
//! the server starts itself (the browser it opens, the host service it launches, which
//! raises its own again) gets it back in the child before exec.

#[cfg(unix)]
use std::sync::OnceLock;

#[cfg(unix)]
use nix::sys::resource::{Resource, getrlimit, setrlimit};

/// The soft limit this process was given, when it raised it.
#[cfg(unix)]
static GIVEN: OnceLock<u64> = OnceLock::new();

/// Windows has no open-handle limit to raise: nothing to do.
#[cfg(windows)]
pub fn raise() {}

/// Nothing was raised on Windows, so nothing to give back.
#[cfg(windows)]
pub fn give_back(_cmd: &mut tokio::process::Command) {}

#[cfg(unix)]
/// Raise this process's soft limit to its hard limit, remembering the one it was given.
/// Called once by each binary, before it starts any session.
pub fn raise() {
    let (soft, hard) = match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the open-file limit");
            return;
        }
    };
    if soft >= hard {
        return;
    }
    match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
        Ok(()) => {
            let _ = GIVEN.set(soft);
            tracing::debug!(given = soft, raised = hard, "open-file limit raised");
        }
        Err(e) => tracing::warn!(error = %e, given = soft, "cannot raise the open-file limit"),
    }
}

#[cfg(unix)]
/// The soft limit to give programs back, when this process raised its own.
pub fn given() -> Option<u64> {
    GIVEN.get().copied()
}

#[cfg(unix)]
/// Set the soft limit back to `soft` (in the spawner, so that every supervisor and program
/// it forks inherits it).
pub fn restore(soft: u64) -> nix::Result<()> {
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    setrlimit(Resource::RLIMIT_NOFILE, soft.min(hard), hard)
}

#[cfg(unix)]
/// Start `cmd`'s program with the limit this process was given, when it raised its own.
pub fn give_back(cmd: &mut tokio::process::Command) {
    let Some(n) = given() else { return };
    // SAFETY: getrlimit and setrlimit, in the child before exec, are async-signal-safe system
    // calls, and nothing here allocates.
    unsafe {
        cmd.pre_exec(move || restore(n).map_err(std::io::Error::from));
    }
}
