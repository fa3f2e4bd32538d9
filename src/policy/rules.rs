//! The built-in rules, each decided on a parsed argv (never on substrings of the raw text,
//! except PowerShell / cmd.exe syntax and fork bombs, which no POSIX parser reads).

use std::sync::OnceLock;

use regex::Regex;

use super::lex::{self, COMPUTED, Simple};
use super::unwrap::{basename, unwrap};

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

const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "https",
    "iwr",
    "irm",
    "invoke-webrequest",
    "invoke-restmethod",
];
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "php",
    "iex",
    "invoke-expression",
    "source",
    ".",
    "eval",
    "pwsh",
    "powershell",
];

fn is_block_device(path: &str) -> bool {
    BLOCK_DEVICE_PREFIXES.iter().any(|p| path.starts_with(p))
}

/// Normalize a path as the shell would resolve it for comparison: `~` and `$HOME` kept as
/// markers, duplicate and trailing slashes removed, `.` and `..` applied.
fn normalize(path: &str, cwd: Option<&str>) -> String {
    let p = path.trim();
    for home in ["~", "$HOME", "${HOME}"] {
        if p == home || p == format!("{home}/") {
            return "~".into();
        }
        if let Some(rest) = p.strip_prefix(&format!("{home}/")) {
            return normalize_abs(&format!("/~/{rest}")).replacen("/~", "~", 1);
        }
    }
    if p.starts_with('/') {
        return normalize_abs(p);
    }
    match cwd {
        Some(c) if c.starts_with('/') => normalize_abs(&format!("{c}/{p}")),
        _ => p.to_string(),
    }
}

fn normalize_abs(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

fn home_dir() -> Option<String> {
    std::env::var("HOME")
        .ok()
        .filter(|h| h.starts_with('/') && h.len() > 1)
        .map(|h| normalize_abs(&h))
}

/// Whether a (normalized) target is `/`, home, a system directory, or everything in one.
fn is_critical(target: &str) -> bool {
    let t = target.strip_suffix("/*").unwrap_or(target);
    let t = if t.is_empty() { "/" } else { t };
    if t == "/" || t == "~" || t == "/*" {
        return true;
    }
    if home_dir().as_deref() == Some(t) {
        return true;
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

/// Rules on one argv (after unwrapping) and the redirections of its command.
pub fn check_argv(argv: &[String], redirects: &[String], cwd: Option<&str>) -> Vec<Finding> {
    use Severity::*;
    let mut out = Vec::new();
    for r in redirects {
        if is_block_device(r) {
            out.push(finding(
                Block,
                "device_write",
                format!("writes onto the disk device {r}"),
                argv,
            ));
        }
    }
    let Some(first) = argv.first() else {
        return out;
    };
    let name = basename(first);
    let args = &argv[1..];
    let (flags, targets) = flags_and_targets(args);
    let recursive = has_short(&flags, &['r', 'R']) || flags.contains(&"--recursive");
    match name.as_str() {
        "rm" if recursive => {
            let critical: Vec<String> = targets
                .iter()
                .map(|t| normalize(t, cwd))
                .filter(|t| is_critical(t))
                .collect();
            if !critical.is_empty() || flags.contains(&"--no-preserve-root") {
                out.push(finding(
                    Block,
                    "rm_recursive_critical",
                    format!(
                        "recursive deletion of {}",
                        if critical.is_empty() {
                            "/ (--no-preserve-root)".into()
                        } else {
                            critical.join(", ")
                        }
                    ),
                    argv,
                ));
            } else {
                out.push(finding(
                    Warn,
                    "recursive_delete",
                    "deletes recursively",
                    argv,
                ));
            }
        }
        n if n.starts_with("mkfs")
            || matches!(
                n,
                "mke2fs" | "mkswap" | "mkntfs" | "mkdosfs" | "mkexfatfs" | "newfs"
            ) =>
        {
            out.push(finding(
                Block,
                "mkfs",
                "creates a file system (erases the device)",
                argv,
            ));
        }
        "dd" => {
            for a in args {
                if let Some(of) = a.strip_prefix("of=") {
                    if is_block_device(of) {
                        out.push(finding(
                            Block,
                            "dd_device",
                            format!("dd writes onto the disk device {of}"),
                            argv,
                        ));
                    }
                }
            }
        }
        "shred" | "wipefs" | "blkdiscard" | "sgdisk" | "sfdisk" | "fdisk" | "parted" => {
            let devices: Vec<&str> = targets
                .iter()
                .copied()
                .filter(|t| is_block_device(t))
                .collect();
            let destructive_tool = matches!(name.as_str(), "shred" | "wipefs" | "blkdiscard")
                || (matches!(name.as_str(), "sgdisk" | "sfdisk") && has_short(&flags, &['Z', 'o']))
                || flags
                    .iter()
                    .any(|f| f.contains("zap") || f.contains("delete"));
            if !devices.is_empty() && destructive_tool {
                out.push(finding(
                    Block,
                    "device_wipe",
                    format!("{name} destroys the disk device {}", devices.join(", ")),
                    argv,
                ));
            } else if name == "shred" && !targets.is_empty() {
                out.push(finding(Warn, "shred", "shreds files beyond recovery", argv));
            }
        }
        "tee" | "cp" | "mv" | "cat" | "truncate" | "ln" => {
            let last_is_device = if matches!(name.as_str(), "cp" | "mv" | "ln") {
                targets.last().is_some_and(|t| is_block_device(t))
            } else if name == "tee" || name == "truncate" {
                targets.iter().any(|t| is_block_device(t))
            } else {
                false
            };
            if last_is_device {
                out.push(finding(
                    Block,
                    "device_write",
                    format!("{name} writes onto a disk device"),
                    argv,
                ));
            }
            if name == "mv"
                && targets.len() >= 2
                && targets[..targets.len() - 1]
                    .iter()
                    .any(|t| is_critical(&normalize(t, cwd)))
            {
                out.push(finding(
                    Block,
                    "move_critical",
                    "moves away /, home or a system directory",
                    argv,
                ));
            }
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            out.push(finding(
                Block,
                "power",
                format!("{name} stops the machine"),
                argv,
            ));
        }
        "init" | "telinit" if targets.first().is_some_and(|t| matches!(*t, "0" | "6")) => {
            out.push(finding(
                Block,
                "power",
                format!("{name} {} stops the machine", targets[0]),
                argv,
            ));
        }
        "systemctl" | "loginctl"
            if targets.iter().any(|t| {
                matches!(
                    *t,
                    "poweroff"
                        | "reboot"
                        | "halt"
                        | "kexec"
                        | "emergency"
                        | "rescue"
                        | "suspend"
                        | "hibernate"
                )
            }) =>
        {
            out.push(finding(
                Block,
                "power",
                format!("{name} stops the machine"),
                argv,
            ));
        }
        "chmod" | "chown" | "chgrp" if recursive => {
            let critical: Vec<String> = targets
                .iter()
                .map(|t| normalize(t, cwd))
                .filter(|t| is_critical(t))
                .collect();
            if !critical.is_empty() {
                out.push(finding(
                    Block,
                    "recursive_permissions_root",
                    format!(
                        "changes permissions of everything under {}",
                        critical.join(", ")
                    ),
                    argv,
                ));
            }
        }
        // `kill -9 -1` (pid -1: every process); a leading -1 alone is the signal HUP.
        "kill" if args.iter().skip(1).any(|a| a == "-1") => {
            out.push(finding(Block, "kill_all", "kills every process", argv));
        }
        "killall5" => out.push(finding(Block, "kill_all", "kills every process", argv)),
        "find" if args.iter().any(|a| a == "-delete") => {
            let roots: Vec<String> = args
                .iter()
                .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
                .map(|t| normalize(t, cwd))
                .collect();
            if roots.iter().any(|r| is_critical(r)) {
                out.push(finding(
                    Block,
                    "rm_recursive_critical",
                    format!("find -delete under {}", roots.join(", ")),
                    argv,
                ));
            } else {
                out.push(finding(
                    Warn,
                    "recursive_delete",
                    "find -delete deletes recursively",
                    argv,
                ));
            }
        }
        "git" => git(argv, &mut out),
        "sudo" | "doas" | "su" | "pkexec" | "run0" => {
            out.push(finding(
                Warn,
                "privileged",
                format!("runs with elevated privileges ({name})"),
                argv,
            ));
        }
        _ => {}
    }
    if let Some(f) = package_install(&name, args) {
        out.push(finding(Warn, "package_install", f, argv));
    }
    out
}

fn git(argv: &[String], out: &mut Vec<Finding>) {
    use Severity::Warn;
    // Skip global options to the subcommand.
    let mut i = 1;
    while i < argv.len() {
        match argv[i].as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => i += 2,
            a if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = argv.get(i) else { return };
    let rest = &argv[i + 1..];
    let (flags, targets) = flags_and_targets(rest);
    match sub.as_str() {
        "push" => {
            let force = flags.iter().any(|f| {
                matches!(
                    *f,
                    "--force" | "--force-with-lease" | "--force-if-includes" | "--mirror"
                ) || f.starts_with("--force-with-lease=")
                    || (!f.starts_with("--") && f.contains('f'))
            }) || targets.iter().any(|t| t.starts_with('+'));
            let delete = flags.iter().any(|f| *f == "--delete" || *f == "-d")
                || targets.iter().any(|t| t.starts_with(':'));
            if force {
                out.push(finding(
                    Warn,
                    "git_force_push",
                    "force-pushes (rewrites remote history)",
                    argv,
                ));
            } else if delete {
                out.push(finding(
                    Warn,
                    "git_delete_remote",
                    "deletes a remote branch",
                    argv,
                ));
            }
        }
        "reset" if flags.contains(&"--hard") => {
            out.push(finding(
                Warn,
                "git_reset_hard",
                "git reset --hard discards uncommitted work",
                argv,
            ));
        }
        "clean" if has_short(&flags, &['f']) || flags.contains(&"--force") => {
            out.push(finding(
                Warn,
                "git_clean",
                "git clean deletes untracked files",
                argv,
            ));
        }
        _ => {}
    }
}

fn package_install(name: &str, args: &[String]) -> Option<String> {
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let first = words.first().copied().unwrap_or("");
    let flag = |f: &str| args.iter().any(|a| a == f);
    let installs = match name {
        "apt" | "apt-get" | "aptitude" => matches!(
            first,
            "install"
                | "remove"
                | "purge"
                | "upgrade"
                | "dist-upgrade"
                | "full-upgrade"
                | "autoremove"
                | "reinstall"
        ),
        "dpkg" => args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-i" | "--install" | "-r" | "--remove" | "-P" | "--purge"
            )
        }),
        "yum" | "dnf" | "microdnf" | "tdnf" => matches!(
            first,
            "install" | "remove" | "erase" | "upgrade" | "update" | "reinstall" | "downgrade"
        ),
        "zypper" => matches!(
            first,
            "install" | "in" | "remove" | "rm" | "update" | "up" | "dist-upgrade" | "dup"
        ),
        "pacman" | "yay" | "paru" => args
            .iter()
            .any(|a| a.starts_with("-S") || a.starts_with("-R") || a.starts_with("-U")),
        "apk" => matches!(first, "add" | "del"),
        "brew" | "port" => matches!(first, "install" | "uninstall" | "upgrade" | "reinstall"),
        "snap" | "flatpak" => matches!(first, "install" | "remove" | "uninstall"),
        "pip" | "pip3" | "pipx" | "uv" if first == "pip" => {
            matches!(words.get(1).copied(), Some("install" | "uninstall"))
        }
        "pip" | "pip3" | "pipx" => matches!(first, "install" | "uninstall"),
        "python" | "python3" => args.windows(3).any(|w| {
            w[0] == "-m" && w[1] == "pip" && matches!(w[2].as_str(), "install" | "uninstall")
        }),
        "npm" | "pnpm" => {
            matches!(first, "install" | "i" | "add" | "uninstall" | "remove")
                && (flag("-g") || flag("--global"))
        }
        "yarn" => first == "global",
        "gem" | "cargo" | "go" | "conda" | "mamba" | "choco" | "winget" | "scoop" | "nix-env" => {
            matches!(first, "install" | "uninstall") || (name == "nix-env" && flag("-i"))
        }
        _ => false,
    };
    installs.then(|| format!("installs or removes packages ({name} {first})"))
}

/// Words of a PowerShell / cmd.exe statement: whitespace-separated, quotes removed,
/// backslashes literal (as those shells read them), lower-cased.
fn windows_words(stmt: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in stmt.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'') | (None, '"') => quote = Some(c),
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur).to_ascii_lowercase());
                }
            }
            (_, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur.to_ascii_lowercase());
    }
    if words.first().is_some_and(|w| w == "&") {
        words.remove(0);
    }
    words
}

fn is_drive_root(w: &str) -> bool {
    let w = w.trim_end_matches('*');
    let b = w.as_bytes();
    (b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[1] == b':'
        && (b.len() == 2 || (b.len() == 3 && (b[2] == b'\\' || b[2] == b'/'))))
        || w == "\\"
        || w == "/"
        || matches!(
            w.trim_end_matches(['\\', '/']),
            "$env:systemdrive"
                | "$env:systemroot"
                | "$env:windir"
                | "$env:userprofile"
                | "$env:homedrive"
                | "$home"
                | "~"
        )
}

/// PowerShell / cmd.exe commands, one statement at a time.
pub fn check_windows(text: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut push = |severity, rule, message: &str, stmt: &str| {
        out.push(Finding {
            severity,
            rule,
            message: message.into(),
            command: stmt.to_string(),
        });
    };
    for stmt in text
        .split(['\n', ';', '|'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let w = windows_words(stmt);
        let Some(cmd) = w.first() else { continue };
        let rest = &w[1..];
        match cmd.as_str() {
            "format-volume" | "clear-disk" | "initialize-disk" => push(
                Severity::Block,
                "powershell_format",
                "erases a disk or volume",
                stmt,
            ),
            "format" | "format.com" | "format.exe"
                if rest.first().is_some_and(|d| is_drive_root(d)) =>
            {
                push(Severity::Block, "cmd_format", "format erases a drive", stmt)
            }
            "remove-item" | "ri" | "rm" | "rmdir" | "rd" | "del" | "erase" => {
                let recursive = rest
                    .iter()
                    .any(|a| matches!(a.as_str(), "-r" | "-recurse" | "-recurse:$true" | "/s"));
                let targets: Vec<&String> = rest
                    .iter()
                    .enumerate()
                    .filter(|(i, a)| {
                        !a.starts_with('-') && !a.starts_with('/')
                            || (*i > 0 && matches!(rest[i - 1].as_str(), "-path" | "-literalpath"))
                            || a.as_str() == "/"
                    })
                    .map(|(_, a)| a)
                    .collect();
                let powershell =
                    cmd.contains('-') || rest.iter().any(|a| a.starts_with("-r") && a.len() > 2);
                if recursive && targets.iter().any(|t| is_drive_root(t)) {
                    push(
                        Severity::Block,
                        "windows_remove_root",
                        "recursive deletion of a drive root",
                        stmt,
                    );
                } else if recursive && (powershell || rest.iter().any(|a| a == "/s")) {
                    push(
                        Severity::Warn,
                        "recursive_delete",
                        "deletes recursively",
                        stmt,
                    );
                }
            }
            _ => {}
        }
    }
    out
}

/// The script of `powershell -Command "..."` / `pwsh -c '...'`, read without POSIX quoting.
pub fn powershell_script(line: &str) -> Option<String> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    let re = R
        .get_or_init(|| Regex::new(r"(?i)^\s*(?:powershell|pwsh)(?:\.exe)?\b.*?\s[-/](?:c|command|commandwithargs)\s+(.*)$").ok())
        .as_ref()?;
    let cap = re.captures(line.trim())?;
    let script = cap[1].trim();
    let unquoted = script
        .strip_prefix('"')
        .map(|s| s.strip_suffix('"').unwrap_or(s))
        .or_else(|| {
            script
                .strip_prefix('\'')
                .map(|s| s.strip_suffix('\'').unwrap_or(s))
        })
        .unwrap_or(script);
    Some(unquoted.to_string())
}

/// A line that starts with a PowerShell cmdlet (`Verb-Noun`).
pub fn looks_like_powershell(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or("");
    let mut parts = first.splitn(2, '-');
    matches!((parts.next(), parts.next()), (Some(v), Some(n)) if !v.is_empty() && !n.is_empty()
        && v.chars().all(|c| c.is_ascii_alphabetic()) && v.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && n.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Words and the one-character operators `|`, `&`, `;` of a function body, in order.
fn fork_tokens(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in body.char_indices() {
        let op = matches!(c, '|' | '&' | ';');
        if c.is_whitespace() || op {
            if let Some(s) = start.take() {
                out.push(&body[s..i]);
            }
            if op {
                out.push(&body[i..i + 1]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(&body[s..]);
    }
    out
}

/// Fork bombs: a function that calls itself into the background, twice.
pub fn check_fork_bomb(text: &str) -> Option<Finding> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    let re = R
        .get_or_init(|| {
            Regex::new(
                r"(?s)(?:\bfunction\s+([A-Za-z_:.][A-Za-z0-9_:.]*)\s*(?:\(\))?|([A-Za-z_:.][A-Za-z0-9_:.]*)\s*\(\))\s*\{(.*?)\}",
            )
            .ok()
        })
        .as_ref()?;
    for cap in re.captures_iter(text) {
        let Some(name) = cap.get(1).or(cap.get(2)).map(|m| m.as_str()) else {
            continue;
        };
        let body = cap.get(3).map_or("", |m| m.as_str());
        let tokens = fork_tokens(body);
        let calls_self_twice = tokens
            .windows(3)
            .any(|w| w[0] == name && w[1] == "|" && w[2] == name);
        let backgrounds = body.contains('&');
        if calls_self_twice && backgrounds {
            return Some(Finding {
                severity: Severity::Block,
                rule: "fork_bomb",
                message: "a fork bomb exhausts the machine's processes".into(),
                command: text.trim().chars().take(200).collect(),
            });
        }
    }
    let t = text.to_ascii_lowercase();
    if t.contains("fork while fork")
        || t.contains("os.fork() while")
        || t.contains("while true; do $0")
    {
        return Some(Finding {
            severity: Severity::Block,
            rule: "fork_bomb",
            message: "a fork bomb exhausts the machine's processes".into(),
            command: text.trim().chars().take(200).collect(),
        });
    }
    None
}

fn downloads(c: &Simple) -> bool {
    unwrap(c).argvs.iter().any(|a| {
        a.first()
            .is_some_and(|w| DOWNLOADERS.contains(&basename(w).as_str()))
    }) || c.substitutions.iter().any(downloads)
}

fn interprets(c: &Simple) -> bool {
    unwrap(c).argvs.iter().any(|a| {
        a.first()
            .is_some_and(|w| INTERPRETERS.contains(&basename(w).as_str()))
    })
}

/// `curl … | sh`, `sh -c "$(curl …)"`, `bash <(wget …)`, `eval "$(curl …)"`.
pub fn check_download_execute(line: &str) -> Option<Finding> {
    let parsed = lex::parse(line);
    let cmds = &parsed.commands;
    for (i, c) in cmds.iter().enumerate() {
        for inner in unwrap(c).shell_lines {
            if let Some(f) = check_download_execute(&inner) {
                return Some(f);
            }
        }
        let piped = downloads(c)
            && cmds[i + 1..]
                .iter()
                .any(|d| d.pipeline == c.pipeline && interprets(d));
        let substituted = interprets(c) && c.substitutions.iter().any(downloads);
        if piped || substituted {
            return Some(finding(
                Severity::Warn,
                "download_execute",
                "runs code downloaded from the network",
                &c.argv,
            ));
        }
    }
    None
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
        assert!(is_critical("/*"));
        assert!(is_critical("/etc"));
        assert!(is_critical("/usr/*"));
        assert!(!is_critical("/tmp/build"));
    }

    #[test]
    fn fork_bombs() {
        assert!(check_fork_bomb(":(){ :|:& };:").is_some());
        assert!(check_fork_bomb("bomb() { bomb | bomb & }; bomb").is_some());
        assert!(check_fork_bomb("f() { echo hi; }; f").is_none());
    }
}
