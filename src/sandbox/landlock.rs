//! Landlock + seccomp: the sandbox where bubblewrap is missing or cannot make namespaces
//! (`--sandbox-mechanism landlock`, or `auto` without a working bubblewrap). The session's
//! supervisor prepares the restriction and the program enters it between fork and exec;
//! everything below it inherits the restriction, and nothing the program does can lift it.
//!
//! What it can and cannot do, compared with bubblewrap:
//! - writes are limited to the writable roots, a private temporary directory (`TMPDIR`),
//!   the common devices and the session's own terminal; reads are limited to everything but
//!   the server's own files (tokens, the page key, the policy) and the devices a fresh
//!   `/dev` would not have (other terminals, disks, input devices);
//! - a path inside a writable root cannot be kept read-only (Landlock only grants, and a
//!   grant covers everything beneath), so a writable root holding a `.git` — its own or a
//!   nested repository's — or one of the server's own files is refused, never granted;
//! - what Landlock does not govern is closed by seccomp (`seccomp.rs`): permission,
//!   ownership and time changes, tracing, typing into terminals, io_uring, and with the
//!   network off every socket (Landlock also refuses TCP bind/connect where the kernel has
//!   it);
//! - run by root, the program starts with no capability (the bounding set is emptied);
//! - there is no private `/tmp` (only `TMPDIR`), no pid namespace, and no allow-list proxy.

use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, path_beneath_rules,
};
use serde::{Deserialize, Serialize};

#[cfg(target_os = "linux")]
use super::seccomp::{self, Rules, Sockets};

/// The Landlock version whose write rights the sandbox needs: V3 adds truncation, without
/// which `truncate` and `O_TRUNC` could empty any file.
#[cfg(target_os = "linux")]
const NEEDED_ABI: ABI = ABI::V3;

/// Devices every program writes to, and the terminal it runs on (`/dev/tty`, and its own
/// device by name: `tty_path`). `/dev/ptmx` makes a new terminal, but its other side, a
/// new entry in `/dev/pts`, cannot be granted before it exists, so programs that make
/// their own terminals (`script`, `tmux`, Python's `pty`) cannot open it here. Not
/// `/dev/pts` as a whole: every terminal of this user (as root, every root terminal) is
/// there, and reading one takes what a person types into it, writing one shows them
/// anything. Not `/dev/shm`: shared by every process of the machine, a sandboxed program
/// would write there for another to read (or run).
#[cfg(target_os = "linux")]
const WRITABLE_DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
];

/// Devices read and not written. Every other entry of `/dev` is unreadable, as it is
/// missing from bubblewrap's fresh `/dev`: disks (every file on them, past their
/// permissions), input devices (every key pressed), consoles' memory, the kernel's log,
/// other programs' shared memory.
#[cfg(target_os = "linux")]
const READABLE_DEVICES: [&str; 2] = ["/dev/random", "/dev/urandom"];

/// Where device files are: read only as [`WRITABLE_DEVICES`] and [`READABLE_DEVICES`] say.
#[cfg(target_os = "linux")]
const DEVICES: &str = "/dev";

/// What one session's supervisor applies to itself before starting the program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Writable roots (besides the private temporary directory and the devices).
    pub writable: Vec<String>,
    /// Where the private temporary directory of each session is made.
    pub tmp_parent: String,
    pub network_off: bool,
    /// What the program may not read (the server's own files).
    #[serde(default)]
    pub hidden: Vec<String>,
}

/// Where the sessions' private temporary directories are made: one per user, private.
pub fn tmp_parent() -> PathBuf {
    crate::private_dir::per_user("interactive-terminal-sbx")
}

/// The private temporary directory (`TMPDIR`) of the session whose supervisor is `supervisor`
/// (its pid as the spawner sees it).
pub fn session_tmp(parent: &Path, supervisor: i32) -> PathBuf {
    parent.join(format!("tmp-{supervisor}"))
}

/// Remove a session's private temporary directory once its supervisor has ended: the
/// supervisor removes it when its session ends, but one killed first cannot, so the spawner
/// does when it reaps it. `remove_dir_all` does not follow the links a sandboxed program
/// may have planted there.
pub fn remove_session_tmp(parent: &Path, supervisor: i32) {
    let dir = session_tmp(parent, supervisor);
    if std::fs::symlink_metadata(&dir).is_ok() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// At start: remove what sessions of servers that were killed left (a directory whose
/// supervisor no longer exists). A directory whose pid is alive is left alone: it may be
/// another server's session.
#[cfg(unix)]
pub fn sweep_session_tmps(parent: &Path) {
    crate::stale::remove_left_by_dead(parent, "tmp-", "", |dir| {
        let _ = std::fs::remove_dir_all(dir);
    });
}

/// Whether this kernel can enforce the sandbox; the mechanism's description when it can.
#[cfg(not(target_os = "linux"))]
pub fn probe() -> Result<String, String> {
    Err(super::NOT_LINUX.into())
}

/// Whether this kernel can enforce the sandbox; the mechanism's description when it can.
#[cfg(target_os = "linux")]
pub fn probe() -> Result<String, String> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_write(NEEDED_ABI))
        .and_then(|r| r.create())
        .map_err(|e| format!("Landlock (ABI 3, Linux 6.2) is not available: {e}"))?;
    seccomp::filters(&rules(true)).map_err(|e| format!("seccomp cannot be used: {e}"))?;
    Ok("Landlock + seccomp".into())
}

/// Why `roots` cannot be granted: a path that must stay read-only lies inside one of them
/// (a `.git`, the root's own or a nested repository's, or one of the server's own files).
pub fn refusal(roots: &[PathBuf], protected: &[PathBuf]) -> Option<String> {
    for r in roots {
        match super::gitdirs::under(r) {
            Err(why) => return Some(why),
            Ok(found) => {
                if let Some(p) = found.first() {
                    return Some(format!(
                        "Landlock cannot keep {} read-only inside the writable workspace {}; \
                         install bubblewrap, or use --sandbox read-only",
                        p.display(),
                        r.display()
                    ));
                }
            }
        }
        if let Some(p) = protected.iter().find(|p| p.starts_with(r) && p.exists()) {
            return Some(format!(
                "Landlock cannot keep {} read-only inside the writable workspace {}",
                p.display(),
                r.display()
            ));
        }
    }
    None
}

/// What seccomp refuses under Landlock.
#[cfg(target_os = "linux")]
fn rules(network_off: bool) -> Rules {
    Rules {
        sockets: if network_off {
            Sockets::None
        } else {
            Sockets::Any
        },
        metadata: true,
    }
}

#[cfg(target_os = "linux")]
/// Where reading is granted so that `hidden` stays unreadable: Landlock only grants, so
/// every entry along the way to a hidden path is granted but the one that leads to it —
/// `/` and everything in it but `/root` (say), everything in `/root` but `.config`, and so
/// on. An entry made later in one of those directories is not readable inside.
fn readable(hidden: &[PathBuf]) -> Vec<PathBuf> {
    if hidden.is_empty() {
        return vec![PathBuf::from("/")];
    }
    let mut out = Vec::new();
    let mut dirs = vec![PathBuf::from("/")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if hidden.contains(&p) {
                continue;
            }
            if hidden.iter().any(|h| h.starts_with(&p)) {
                dirs.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// Empty the bounding set, so that the program (and whatever it starts) has no capability
/// even as root. The supervisor keeps its own until it ends.
#[cfg(target_os = "linux")]
fn drop_capabilities(last: u64) -> Result<(), String> {
    for cap in 0..=last {
        // SAFETY: prctl with integer arguments only.
        let rc = unsafe { nix::libc::prctl(nix::libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(nix::libc::EINVAL) {
                return Err(format!("cannot drop capability {cap}: {e}"));
            }
        }
    }
    // SAFETY: prctl with integer arguments only.
    unsafe {
        nix::libc::prctl(
            nix::libc::PR_CAP_AMBIENT,
            nix::libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    Ok(())
}

/// What restricts a session's program, made ready by its supervisor before the program's
/// fork — the Landlock ruleset with its rules (a descriptor), the compiled call filters —
/// so that the child has only a few calls left to make ([`Prepared::enter`]). Why the child
/// and not the supervisor: a restriction cannot be lifted, so a supervisor that restricted
/// itself served one session and exited, and the spawner forked another; unrestricted, it
/// is reused like any other, and it can remove the session's `TMPDIR` itself.
#[cfg(target_os = "linux")]
pub struct Prepared {
    ruleset: Option<landlock::RulesetCreated>,
    filters: Vec<seccompiler::BpfProgram>,
    /// The highest capability number, when capabilities are to be dropped (root).
    last_cap: Option<u64>,
}

/// Elsewhere than Linux there is nothing to prepare: [`prepare`] fails, and the
/// supervisor starts nothing.
#[cfg(not(target_os = "linux"))]
pub struct Prepared;

#[cfg(not(target_os = "linux"))]
pub fn prepare(_plan: &Plan, _tmp: &Path, _tty_path: Option<&Path>) -> Result<Prepared, String> {
    Err(super::NOT_LINUX.into())
}

#[cfg(not(target_os = "linux"))]
impl Prepared {
    pub fn enter(&mut self) -> Result<(), String> {
        Err(super::NOT_LINUX.into())
    }
}

/// Make the restriction of a session's program ready; `tmp` is the session's private
/// temporary directory, `tty_path` the device of the terminal it runs on (none for a
/// headless command).
#[cfg(target_os = "linux")]
pub fn prepare(plan: &Plan, tmp: &Path, tty_path: Option<&Path>) -> Result<Prepared, String> {
    let write = AccessFs::from_write(NEEDED_ABI);
    let read: BitFlags<AccessFs> = AccessFs::ReadFile.into();
    let mut writable: Vec<PathBuf> = plan.writable.iter().map(PathBuf::from).collect();
    writable.push(tmp.to_path_buf());
    let existing = |devices: &[&str]| -> Vec<PathBuf> {
        devices
            .iter()
            .map(PathBuf::from)
            .filter(|d| d.exists())
            .collect()
    };
    let mut devices = existing(&WRITABLE_DEVICES);
    devices.extend(tty_path.map(Path::to_path_buf));
    let read_devices = existing(&READABLE_DEVICES);
    let mut hidden: Vec<PathBuf> = plan.hidden.iter().map(PathBuf::from).collect();
    hidden.push(PathBuf::from(DEVICES));
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(write | read)
        .map_err(|e| e.to_string())?;
    if plan.network_off {
        // Where the kernel has it; seccomp below refuses the sockets in any case.
        ruleset = ruleset
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(|e| e.to_string())?;
    }
    let ruleset = ruleset
        .create()
        .and_then(|r| r.add_rules(path_beneath_rules(readable(&hidden), read)))
        .and_then(|r| r.add_rules(path_beneath_rules(&writable, write | read)))
        .and_then(|r| r.add_rules(path_beneath_rules(&devices, write | read)))
        .and_then(|r| r.add_rules(path_beneath_rules(&read_devices, read)))
        .map_err(|e| e.to_string())?;
    let last_cap = nix::unistd::geteuid().is_root().then(|| {
        std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(40)
    });
    Ok(Prepared {
        ruleset: Some(ruleset),
        filters: seccomp::filters(&rules(plan.network_off))?,
        last_cap,
    })
}

#[cfg(target_os = "linux")]
impl Prepared {
    /// Restrict this process (the program's, between fork and exec) and everything it will
    /// start: the ruleset, no capability left even as root, the call filters. Once only.
    pub fn enter(&mut self) -> Result<(), String> {
        let ruleset = self
            .ruleset
            .take()
            .ok_or("the sandbox was already entered")?;
        let status = ruleset.restrict_self().map_err(|e| e.to_string())?;
        if !status.no_new_privs {
            return Err("no_new_privs could not be set".into());
        }
        if let Some(last) = self.last_cap {
            drop_capabilities(last)?;
        }
        for f in &self.filters {
            seccompiler::apply_filter(f).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn reading_is_granted_around_what_is_hidden() {
        let root = std::env::temp_dir().join(format!("itmcp-readable-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["home/.config/itmcp", "home/.config/other", "home/project"] {
            std::fs::create_dir_all(root.join(d)).expect("dirs");
        }
        let hidden = [root.join("home/.config/itmcp")];
        let r = readable(&hidden);
        assert!(r.contains(&root.join("home/project")));
        assert!(r.contains(&root.join("home/.config/other")));
        assert!(!r.iter().any(|p| hidden[0].starts_with(p)), "{r:?}");
        assert!(r.contains(&PathBuf::from("/usr")));
        assert_eq!(readable(&[]), vec![PathBuf::from("/")]);
        let _ = std::fs::remove_dir_all(&root);
    }
}
