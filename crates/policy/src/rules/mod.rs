//! The built-in rules, each decided on a parsed argv (never on substrings of the raw text,
//! except PowerShell / cmd.exe syntax and fork bombs, which no POSIX parser reads).
//!
//! By concern: `argv` (POSIX commands on their argv: deletion, disks, power, permissions),
//! `git` (history and work lost), `admin` (infrastructure, packages, every process, setuid,
//! containers given the host), `files` (start-up files written, credentials read),
//! `windows` (PowerShell and cmd.exe text), `patterns` (fork bombs and download-and-execute,
//! which span several commands). Shared here: the finding type and the path and flag
//! helpers every rule uses.

mod admin;
mod argv;
mod bulk_signals;
mod computed_args;
mod dbus;
mod dormant;
mod exposure;
mod files;
mod found_secrets;
mod git;
pub mod globs;
mod into_home;
mod kills;
mod line_shapes;
mod listed_deletes;
mod machine;
mod metadata;
mod option_names;
mod pipeline;
pub mod reading;
mod secret_names;
mod secrets;
mod sequences;
mod startup;
mod startup_given;
pub mod stty;
mod system;
mod terminals;
mod whole_home;
mod windows;
mod windows_unread;

pub use argv::check_argv;
pub use dormant::check_dormant_code;
pub use files::{check_read, is_startup_target, moved_to};
pub use line_shapes::check_line_shapes;
pub use sequences::check_fork_bomb;
pub use windows::{check_windows, looks_like_powershell, powershell_operands, powershell_script};

use super::lex::COMPUTED;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warn,
    Block,
}

/// One rule that matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub severity: Severity,
    pub rule: &'static str,
    pub message: String,
    /// The command it matched, as the shell would run it.
    pub command: String,
}

/// Directories whose recursive deletion (or recursive chmod/chown) is never allowed.
const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/boot",
    "/boot/efi",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/usr/bin",
    "/usr/lib",
    "/usr/lib64",
    "/usr/local",
    "/usr/sbin",
    "/usr/share",
    "/usr/include",
    "/var",
    "/var/lib",
    "/mnt",
    "/media",
    "/snap",
    "/System",
    "/Library",
    "/Applications",
    "/Users",
    "/private",
];

/// Device paths that are disks (writes onto them destroy file systems).
const BLOCK_DEVICE_PREFIXES: &[&str] = &[
    "/dev/sd",
    "/dev/hd",
    "/dev/vd",
    "/dev/xvd",
    "/dev/nvme",
    "/dev/mmcblk",
    "/dev/disk",
    "/dev/rdisk",
    "/dev/md",
    "/dev/dm-",
    "/dev/mapper/",
    "/dev/loop",
    "/dev/zram",
    "/dev/root",
    "/dev/mtdblock",
    "/dev/sr",
    "/dev/nbd",
    "/dev/ubd",
];

/// Whether `path` is a disk: by its name once `.`, `..` and repeated slashes are resolved
/// (`/dev/./sda`, `/dev//sda`), or by what it is when it exists (a link to a disk, a device
/// node made elsewhere).
fn is_block_device(path: &str) -> bool {
    let named = |p: &str| BLOCK_DEVICE_PREFIXES.iter().any(|d| p.starts_with(d));
    if named(path) {
        return true;
    }
    if path.starts_with('/') && named(&normalize_abs(path)) {
        return true;
    }
    path.starts_with('/') && is_block_node(path)
}

/// Whether `path` exists and is a block device node (a link to a disk, a node made
/// elsewhere). Windows names its disks by path only (`\\.\PhysicalDrive0`: the Windows
/// rules).
#[cfg(unix)]
fn is_block_node(path: &str) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

#[cfg(not(unix))]
fn is_block_node(_path: &str) -> bool {
    false
}

/// Normalize a path as the shell would resolve it for comparison: `~` and `$HOME` kept as
/// markers, duplicate and trailing slashes removed, `.` and `..` applied.
fn normalize(path: &str, cwd: Option<&str>) -> String {
    let p = path.trim();
    for home in ["~", "$HOME", "${HOME}"] {
        let Some(after) = p.strip_prefix(home) else {
            continue;
        };
        if after.is_empty() || after == "/" {
            return "~".into();
        }
        if let Some(rest) = after.strip_prefix('/') {
            return normalize_abs(&format!("/~/{rest}")).replacen("/~", "~", 1);
        }
    }
    // `~alice`, `~alice/x`: another user's home, never relative to the working directory.
    if let Some(tilde) = p.strip_prefix('~') {
        return match tilde.split_once('/') {
            Some((user, rest)) if !rest.trim_matches('/').is_empty() => {
                format!("~{user}{}", normalize_abs(&format!("/{rest}")))
            }
            Some((user, _)) => format!("~{user}"),
            None => p.to_string(),
        };
    }
    if p.starts_with('/') {
        let n = normalize_abs(p);
        // The command's own working directory, by `/proc`: where the line is, when known.
        if let Some(rest) = n
            .strip_prefix("/proc/self/cwd")
            .or_else(|| n.strip_prefix("/proc/thread-self/cwd"))
            .filter(|r| r.is_empty() || r.starts_with('/'))
            && let Some(c) = cwd.filter(|c| !c.is_empty() && !c.starts_with('$'))
        {
            return normalize(
                &format!(
                    "{}/{}",
                    c.trim_end_matches('/'),
                    rest.trim_start_matches('/')
                ),
                None,
            );
        }
        return n;
    }
    match cwd {
        Some(c) if c.starts_with('/') => normalize_abs_owned([c, "/", p].concat()),
        // A directory known relative to the home or to where the line started (`cd .git`
        // in a terminal): the path joined to it, as the shell would open it.
        Some(c) if !c.is_empty() && !c.starts_with('$') => {
            normalize(&format!("{}/{p}", c.trim_end_matches('/')), None)
        }
        _ => p.to_string(),
    }
}

/// An absolute path with `.`, `..` and repeated slashes resolved, and a process's view of
/// the root (`/proc/self/root/…`, `/proc/1/root/…`) read as the root it is: the kernel
/// opens `/proc/self/root/dev/sda` as `/dev/sda`.
fn normalize_abs(p: &str) -> String {
    if is_plain_abs(p) {
        return p.to_string();
    }
    normalize_segments(p)
}

/// [`normalize_abs`] of a path built for it, kept as it is when already plain.
fn normalize_abs_owned(p: String) -> String {
    if is_plain_abs(&p) {
        return p;
    }
    normalize_segments(&p)
}

/// An absolute path with nothing to resolve — no empty, `.` or `..` segment, not under
/// `/proc` — is its own normal form: most paths judged are, and they need no rebuilding.
fn is_plain_abs(p: &str) -> bool {
    p.len() > 1
        && p.starts_with('/')
        && !p.starts_with("/proc")
        && p[1..].split('/').all(|seg| !matches!(seg, "" | "." | ".."))
}

fn normalize_segments(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            "root" if parts.len() == 2 && parts[0] == "proc" => parts.clear(),
            // Another process's working directory may be anywhere: init's is `/`, a
            // shell's the home. Read as the root, the widest it can be.
            "cwd"
                if parts.len() == 2
                    && parts[0] == "proc"
                    && !matches!(parts[1], "self" | "thread-self") =>
            {
                parts.clear()
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The server's home directory, read once: the rules ask for it several times a line, and
/// the server's environment is settled before the first line is judged.
fn home_dir() -> Option<&'static str> {
    static HOME: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        std::env::var("HOME")
            .ok()
            .filter(|h| h.starts_with('/') && h.len() > 1)
            .map(|h| normalize_abs(&h))
    })
    .as_deref()
}

/// Whether a (normalized) target is `/`, home, a system directory, or everything in one.
fn is_critical(target: &str) -> bool {
    let t = target.strip_suffix("/*").unwrap_or(target);
    let t = if t.is_empty() { "/" } else { t };
    if t == "/" || t == "~" || t == "/*" {
        return true;
    }
    if home_dir() == Some(t) {
        return true;
    }
    // A home directory by path: `/home/alice`, `/Users/alice`, `/home/$USER`.
    if let Some(name) = t
        .strip_prefix("/home/")
        .or_else(|| t.strip_prefix("/Users/"))
        && !name.is_empty()
        && !name.contains('/')
    {
        return true;
    }
    // `~alice`: another user's home directory.
    if let Some(user) = t.strip_prefix('~') {
        let user = user.trim_end_matches('/');
        if !user.is_empty()
            && user
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return true;
        }
    }
    SYSTEM_DIRS.iter().any(|d| d.eq_ignore_ascii_case(t))
}

fn flags_and_targets(args: &[String]) -> (Vec<&str>, Vec<&str>) {
    let mut flags = Vec::new();
    let mut targets = Vec::new();
    let mut after = false;
    for a in args {
        if !after && a == "--" {
            after = true;
        } else if !after && a.starts_with('-') && a.len() > 1 {
            flags.push(a.as_str());
        } else {
            targets.push(a.as_str());
        }
    }
    (flags, targets)
}

fn has_short(flags: &[&str], letters: &[char]) -> bool {
    flags
        .iter()
        .any(|f| !f.starts_with("--") && f[1..].chars().any(|c| letters.contains(&c)))
}

fn display(argv: &[String]) -> String {
    shell_words::join(
        argv.iter()
            .map(|a| if a == COMPUTED { "$(…)" } else { a.as_str() }),
    )
}

fn finding(
    severity: Severity,
    rule: &'static str,
    message: impl Into<String>,
    argv: &[String],
) -> Finding {
    Finding {
        severity,
        rule,
        message: message.into(),
        command: display(argv),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize() {
        assert_eq!(normalize("/usr/../", None), "/");
        assert_eq!(normalize("//etc//", None), "/etc");
        assert_eq!(normalize("~/", None), "~");
        assert_eq!(normalize("$HOME", None), "~");
        assert_eq!(normalize("x", Some("/")), "/x");
        assert_eq!(normalize("*", Some("/")), "/*");
        assert_eq!(normalize("/proc/self/root/dev/sda", None), "/dev/sda");
        assert_eq!(normalize("/proc/1/root/proc/self/root/etc", None), "/etc");
        assert_eq!(
            normalize("/proc/../proc/sysrq-trigger", None),
            "/proc/sysrq-trigger"
        );
        assert_eq!(normalize("/proc/self/cwd/x", None), "/proc/self/cwd/x");
        assert_eq!(normalize("/proc/self/cwd/", Some("~")), "~");
        assert_eq!(normalize("/proc/thread-self/cwd/x", Some("/w")), "/w/x");
        assert_eq!(normalize("/proc/1/cwd/", None), "/");
        assert_eq!(normalize("/proc/$$/cwd/etc", None), "/etc");
        assert!(is_critical("/*"));
        assert!(is_critical("/etc"));
        assert!(is_critical("/usr/*"));
        assert!(!is_critical("/tmp/build"));
    }
}
