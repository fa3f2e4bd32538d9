//! Landlock + seccomp: the sandbox where bubblewrap is missing or cannot make namespaces
//! (`--sandbox-mechanism landlock`, or `auto` without a working bubblewrap). The session's
//! supervisor restricts itself, just before it starts the program, and everything below it
//! inherits the restriction; nothing the program does can lift it.
//!
//! What it can and cannot do, compared with bubblewrap:
//! - writes are limited to the writable roots, a private temporary directory (`TMPDIR`) and
//!   the terminal devices; reads are not restricted;
//! - a path inside a writable root cannot be kept read-only (Landlock only grants, and a
//!   grant covers everything beneath), so a writable root holding `.git` or one of the
//!   server's own files is refused, never granted;
//! - with the network off, seccomp refuses every IPv4/IPv6 socket (and io_uring, which could
//!   open one), and Landlock refuses TCP bind/connect where the kernel has it;
//! - there is no private `/tmp` (only `TMPDIR`), no pid namespace, and no allow-list proxy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, path_beneath_rules,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};
use serde::{Deserialize, Serialize};

/// The Landlock version whose write rights the sandbox needs: V3 adds truncation, without
/// which `truncate` and `O_TRUNC` could empty any file.
const NEEDED_ABI: ABI = ABI::V3;

/// Devices every program writes to (and terminals, for programs that make their own).
const WRITABLE_DEVICES: [&str; 7] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// What one session's supervisor applies to itself before starting the program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Writable roots (besides the private temporary directory and the devices).
    pub writable: Vec<String>,
    /// Where the private temporary directory of each session is made.
    pub tmp_parent: String,
    pub network_off: bool,
}

/// Whether this kernel can enforce the sandbox; the mechanism's description when it can.
pub fn probe() -> Result<String, String> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_write(NEEDED_ABI))
        .and_then(|r| r.create())
        .map_err(|e| format!("Landlock (ABI 3, Linux 6.2) is not available: {e}"))?;
    seccomp_filter(true).map_err(|e| format!("seccomp cannot be used: {e}"))?;
    Ok("Landlock + seccomp".into())
}

/// Why `roots` cannot be granted: a path that must stay read-only lies inside one of them.
pub fn refusal(roots: &[PathBuf], protected: &[PathBuf]) -> Option<String> {
    for r in roots {
        for name in super::settings::PROTECTED_NAMES {
            let p = r.join(name);
            if p.exists() {
                return Some(format!(
                    "Landlock cannot keep {} read-only inside the writable workspace {}; \
                     install bubblewrap, or use --sandbox read-only",
                    p.display(),
                    r.display()
                ));
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

/// Restrict this process (a session's supervisor, single-threaded) and everything it will
/// start; `tmp` is the session's private temporary directory.
pub fn apply(plan: &Plan, tmp: &Path) -> Result<(), String> {
    let write = AccessFs::from_write(NEEDED_ABI);
    let mut writable: Vec<PathBuf> = plan.writable.iter().map(PathBuf::from).collect();
    writable.push(tmp.to_path_buf());
    let devices: Vec<&str> = WRITABLE_DEVICES
        .into_iter()
        .filter(|d| Path::new(d).exists())
        .collect();
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(write)
        .map_err(|e| e.to_string())?;
    if plan.network_off {
        // Where the kernel has it; seccomp below refuses the sockets in any case.
        ruleset = ruleset
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(|e| e.to_string())?;
    }
    let status = ruleset
        .create()
        .and_then(|r| r.add_rules(path_beneath_rules(&writable, write)))
        .and_then(|r| r.add_rules(path_beneath_rules(&devices, write)))
        .and_then(|r| r.restrict_self())
        .map_err(|e| e.to_string())?;
    if !status.no_new_privs {
        return Err("no_new_privs could not be set".into());
    }
    if plan.network_off {
        let filter = seccomp_filter(true)?;
        seccompiler::apply_filter(&filter).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The filter that refuses IPv4/IPv6 sockets and io_uring with EACCES / EPERM.
fn seccomp_filter(network_off: bool) -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    if network_off {
        let domain = |family: i32| {
            SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, family as u64)
                .and_then(|c| SeccompRule::new(vec![c]))
        };
        let inet = vec![
            domain(nix::libc::AF_INET).map_err(|e| e.to_string())?,
            domain(nix::libc::AF_INET6).map_err(|e| e.to_string())?,
        ];
        rules.insert(nix::libc::SYS_socket, inet);
        rules.insert(nix::libc::SYS_io_uring_setup, Vec::new());
    }
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(nix::libc::EACCES as u32),
        arch,
    )
    .map_err(|e| e.to_string())?
    .try_into()
    .map_err(|e: seccompiler::BackendError| e.to_string())
}
