//! The system-call filter around a sandboxed program, beside what bubblewrap's namespaces
//! or Landlock confine: what those cannot see.
//!
//! - **Calls** are an allow-list ([`super::syscalls`]): what ordinary programs use, without
//!   the kernel keyrings, new namespaces, tracing, io_uring, typing into a terminal
//!   (`TIOCSTI`, `TIOCLINUX`) and the interfaces that need privilege. A call nobody listed is
//!   refused.
//! - **Sockets** are an allow-list of address families when the network is not fully on.
//!   A Unix socket reaches any local service through the file system (path sockets) or, in
//!   the machine's network namespace, by name (abstract ones) — a Docker daemon, a desktop
//!   bus, an agent's own listener outside — so it is a way out as wide as the network.
//!   Under bubblewrap the network namespace is the sandbox's own, so IPv4, IPv6 and netlink
//!   stay (its loopback, the allow-list proxy's helper); under Landlock, which shares the
//!   machine's network, no family is left. `socketpair` stays: it connects nothing outside.
//! - Under Landlock only: **metadata** — permissions, ownership and times set with a path or
//!   on a descriptor — which Landlock does not govern, so it would let them through outside
//!   the writable roots. Refused everywhere (Landlock cannot say where a path lies); setting
//!   a descriptor's times to now (what `touch` does to the file it just opened) stays.
//!
//! A refused call fails with `EACCES` (sockets) or `EPERM`, as the kernel refuses what a
//! process may not do; `clone3` with `ENOSYS`, so the C library uses `clone`.

#[cfg(target_os = "linux")]
use std::collections::BTreeMap;
#[cfg(unix)]
use std::ffi::OsString;
#[cfg(unix)]
use std::os::unix::process::CommandExt;

#[cfg(target_os = "linux")]
use nix::libc;
#[cfg(target_os = "linux")]
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// The helper's own argument: the server's binary run as `--pm-confine SOCKETS -- PROGRAM
/// ARGS…` applies the filter to itself and becomes the program (inside bubblewrap).
pub const FLAG: &str = "--pm-confine";

/// Which sockets a sandboxed program may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// Any: the network is on.
    Any,
    /// IPv4, IPv6 and netlink in a network namespace of the sandbox's own (bubblewrap with
    /// the network off or an allow-list): no Unix socket.
    OwnNamespace,
    /// None (Landlock with the network off: the machine's own network namespace).
    None,
}

impl Sockets {
    fn as_str(self) -> &'static str {
        match self {
            Sockets::Any => "any",
            Sockets::OwnNamespace => "own-namespace",
            Sockets::None => "none",
        }
    }

    #[cfg(unix)]
    fn parse(s: &str) -> Option<Sockets> {
        [Sockets::Any, Sockets::OwnNamespace, Sockets::None]
            .into_iter()
            .find(|k| k.as_str() == s)
    }

    /// Families allowed, when the list is closed.
    #[cfg(target_os = "linux")]
    fn allowed(self) -> Option<&'static [i32]> {
        match self {
            Sockets::Any => None,
            Sockets::OwnNamespace => Some(&[libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK]),
            Sockets::None => Some(&[]),
        }
    }
}

/// What a sandboxed program is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    pub sockets: Sockets,
    /// Refuse permission, ownership and time changes (Landlock does not govern them).
    pub metadata: bool,
}

/// The helper's arguments that run `program args` under `sockets` (bubblewrap).
pub fn helper_args(sockets: Sockets, program: &str, args: &[String]) -> Vec<String> {
    let mut a = vec![
        FLAG.to_string(),
        sockets.as_str().to_string(),
        "--".to_string(),
        program.to_string(),
    ];
    a.extend(args.iter().cloned());
    a
}

#[cfg(unix)]
/// Exit status when the helper cannot do its job (as a shell says "cannot execute").
const CANNOT_RUN: i32 = 126;

#[cfg(unix)]
/// Run the helper with the arguments after [`FLAG`]: apply the filter, then become the
/// program. Returns an exit status only when that fails.
pub fn main(args: Vec<OsString>) -> i32 {
    let mut it = args.into_iter();
    let (Some(sockets), Some(sep), Some(program)) = (it.next(), it.next(), it.next()) else {
        eprintln!("{FLAG}: usage: {FLAG} SOCKETS -- PROGRAM [ARGS…]");
        return CANNOT_RUN;
    };
    let Some(sockets) = sockets.to_str().and_then(Sockets::parse) else {
        eprintln!("{FLAG}: unknown socket rule {sockets:?}");
        return CANNOT_RUN;
    };
    if sep != "--" {
        eprintln!("{FLAG}: usage: {FLAG} SOCKETS -- PROGRAM [ARGS…]");
        return CANNOT_RUN;
    }
    let rules = Rules {
        sockets,
        metadata: false,
    };
    if let Err(e) = apply(&rules) {
        // Fail closed: no filter, no program.
        eprintln!("{FLAG}: the sandbox's system-call filter cannot be applied: {e}");
        return CANNOT_RUN;
    }
    let rest: Vec<OsString> = it.collect();
    let e = std::process::Command::new(&program).args(&rest).exec();
    eprintln!("{}: {e}", program.to_string_lossy());
    if e.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        CANNOT_RUN
    }
}

/// Apply the filters to this thread (and everything it starts); sets `no_new_privs`.
#[cfg(target_os = "linux")]
pub fn apply(rules: &Rules) -> Result<(), String> {
    for f in filters(rules)? {
        seccompiler::apply_filter(&f).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// seccomp is Linux's: elsewhere the filter cannot be applied, and what needs it fails
/// closed.
#[cfg(not(target_os = "linux"))]
pub fn apply(_rules: &Rules) -> Result<(), String> {
    Err(super::NOT_LINUX.into())
}

#[cfg(target_os = "linux")]
pub(super) fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, len, op, value).map_err(|e| e.to_string())
}

#[cfg(target_os = "linux")]
pub(super) fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| e.to_string())
}

/// The kernel's name for this architecture in `seccomp_data` (`AUDIT_ARCH_*`).
#[cfg(target_os = "linux")]
fn audit_arch() -> Result<u32, String> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(0xc000_003e),
        "aarch64" => Ok(0xc000_00b7),
        "riscv64" => Ok(0xc000_00f3),
        other => Err(format!(
            "no system-call filter for the architecture {other}"
        )),
    }
}

/// The compiled filters for `rules`, in the order they are installed: one for sockets
/// (refused with `EACCES`) when the list of families is closed, the allow-list of calls by
/// number (anything else refused with `EPERM`, see [`super::syscalls`] and
/// [`super::bpf_tree`]), what is refused of the calls allowed under conditions, and last
/// `clone3` answered "not implemented". Every filter runs for every call; the most restrictive answer wins,
/// and between refusals the filter installed last gives the error.
#[cfg(target_os = "linux")]
pub fn filters(rules: &Rules) -> Result<Vec<BpfProgram>, String> {
    let mut refuse_sockets = BTreeMap::new();
    if let Some(families) = rules.sockets.allowed() {
        // Refused when the family is none of the allowed ones (all conditions of a rule
        // must hold): an allow-list, so a family nobody thought of is refused too.
        let conditions = families
            .iter()
            .map(|f| cond(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, *f as u64))
            .collect::<Result<Vec<_>, _>>()?;
        let refused = if conditions.is_empty() {
            Vec::new()
        } else {
            vec![rule(conditions)?]
        };
        refuse_sockets.insert(libc::SYS_socket, refused);
    }
    let arch: seccompiler::TargetArch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    let compile = |map: BTreeMap<i64, Vec<SeccompRule>>,
                   mismatch: SeccompAction,
                   matched: SeccompAction|
     -> Result<BpfProgram, String> {
        SeccompFilter::new(map, mismatch, matched, arch)
            .map_err(|e| e.to_string())?
            .try_into()
            .map_err(|e: seccompiler::BackendError| e.to_string())
    };
    let errno = |e: i32| SeccompAction::Errno(e as u32);
    let mut out = Vec::new();
    if !refuse_sockets.is_empty() {
        out.push(compile(
            refuse_sockets,
            SeccompAction::Allow,
            errno(libc::EACCES),
        )?);
    }
    // The allow-list by number (a search tree), then what is refused of the calls it
    // allows under conditions.
    let numbers: Vec<i64> = super::syscalls::allowed(rules.metadata)?
        .into_keys()
        .collect();
    out.push(super::bpf_tree::allow_numbers(
        &numbers,
        audit_arch()?,
        libc::EPERM as u32,
    )?);
    out.push(compile(
        super::syscalls::refusals(rules.metadata)?,
        SeccompAction::Allow,
        errno(libc::EPERM),
    )?);
    out.push(compile(
        BTreeMap::from([(super::syscalls::CLONE3, Vec::new())]),
        SeccompAction::Allow,
        errno(libc::ENOSYS),
    )?);
    Ok(out)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles() {
        for sockets in [Sockets::Any, Sockets::OwnNamespace, Sockets::None] {
            for metadata in [false, true] {
                let f = filters(&Rules { sockets, metadata }).expect("compiles");
                assert_eq!(f.len(), if sockets == Sockets::Any { 3 } else { 4 });
                assert!(f.iter().all(|p| !p.is_empty()));
            }
        }
        assert_eq!(Sockets::parse("own-namespace"), Some(Sockets::OwnNamespace));
        assert_eq!(Sockets::parse("nope"), None);
        let a = helper_args(Sockets::None, "sh", &["-c".into(), "x".into()]);
        assert_eq!(a, ["--pm-confine", "none", "--", "sh", "-c", "x"]);
    }
}
