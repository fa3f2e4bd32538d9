//! Rules on one POSIX argv (after unwrapping) and the redirections of its command.

use super::*;
use crate::policy::wrappers::basename;

/// Writing a letter here makes the kernel reboot (`b`), crash (`c`) or power off (`o`).
const SYSRQ_TRIGGER: &str = "/proc/sysrq-trigger";

/// Rules on one argv (after unwrapping) and the redirections of its command.
pub fn check_argv(argv: &[String], redirects: &[String], cwd: Option<&str>) -> Vec<Finding> {
    use Severity::*;
    // As the program will read it: options unabbreviated, numbers plain, braces expanded.
    let read = super::reading::as_read(argv);
    let argv = read.as_slice();
    let mut out = Vec::new();
    if let Some(f) = super::reading::shell_state(argv) {
        out.push(f);
    }
    for r in redirects {
        if is_block_device(r) || is_block_device(&normalize(r, cwd)) {
            out.push(finding(
                Block,
                "device_write",
                format!("writes onto the disk device {r}"),
                argv,
            ));
        } else if r == SYSRQ_TRIGGER {
            out.push(finding(
                Block,
                "power",
                "a SysRq trigger reboots, crashes or powers off the machine at once",
                argv,
            ));
        } else if is_system_file(&normalize(r, cwd)) {
            out.push(finding(
                Warn,
                "system_file_write",
                format!("overwrites the system file {r}"),
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
            // A glob deletes whatever it matches: judged by where its matches lie.
            let critical: Vec<String> = targets
                .iter()
                .map(|t| normalize(super::reading::glob_base(t).unwrap_or(t), cwd))
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
                if let Some(of) = a.strip_prefix("of=")
                    && (is_block_device(of) || is_block_device(&normalize(of, cwd)))
                {
                    out.push(finding(
                        Block,
                        "dd_device",
                        format!("dd writes onto the disk device {of}"),
                        argv,
                    ));
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
                    .any(|f| f.contains("zap") || f.contains("delete"))
                || (name == "parted" && targets.iter().any(|t| matches!(*t, "mklabel" | "rm")));
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
            if name == "tee" && targets.contains(&SYSRQ_TRIGGER) {
                out.push(finding(
                    Block,
                    "power",
                    "a SysRq trigger reboots, crashes or powers off the machine at once",
                    argv,
                ));
            } else if last_is_device {
                out.push(finding(
                    Block,
                    "device_write",
                    format!("{name} writes onto a disk device"),
                    argv,
                ));
            } else if name != "cat" && writes_system_file(&name, &targets, cwd) {
                out.push(finding(
                    Warn,
                    "system_file_write",
                    format!("{name} writes into a system directory"),
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
            // A glob deletes whatever it matches: judged by where its matches lie.
            let critical: Vec<String> = targets
                .iter()
                .map(|t| normalize(super::reading::glob_base(t).unwrap_or(t), cwd))
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
        "kill" if kills_init(args) => {
            out.push(finding(
                Block,
                "kill_all",
                "kills init (pid 1): the machine or container goes down",
                argv,
            ));
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
    if let Some(what) = admin_destructive(&name, &targets, &flags) {
        out.push(finding(Warn, "destructive_admin", what, argv));
    }
    if let Some(f) = package_install(&name, args) {
        out.push(finding(Warn, "package_install", f, argv));
    }
    out
}

/// `kill [-SIG] 1`: pid 1 among the targets (not the value of `-s`/`-n`; `kill -l 1` only
/// names a signal).
fn kills_init(args: &[String]) -> bool {
    if args
        .first()
        .is_some_and(|a| matches!(a.as_str(), "-l" | "-L" | "--list" | "--table"))
    {
        return false;
    }
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-s" | "-n" | "--signal" => i += 2,
            "1" => return true,
            _ => i += 1,
        }
    }
    false
}

/// Files under system configuration and boot directories (`/etc/passwd`, `/boot/...`).
fn is_system_file(path: &str) -> bool {
    const SYSTEM_FILE_DIRS: &[&str] = &[
        "/etc/",
        "/boot/",
        "/bin/",
        "/sbin/",
        "/lib/",
        "/lib64/",
        "/usr/bin/",
        "/usr/sbin/",
        "/usr/lib/",
    ];
    SYSTEM_FILE_DIRS.iter().any(|d| path.starts_with(d))
}

fn writes_system_file(name: &str, targets: &[&str], cwd: Option<&str>) -> bool {
    let written: &[&str] = match name {
        // The destination is the last operand (when there are a source and a destination).
        "cp" | "mv" | "ln" if targets.len() >= 2 => &targets[targets.len() - 1..],
        "tee" | "truncate" => targets,
        _ => &[],
    };
    written.iter().any(|t| is_system_file(&normalize(t, cwd)))
}

/// Operations that destroy infrastructure, data or access, by tool.
fn admin_destructive(name: &str, targets: &[&str], flags: &[&str]) -> Option<String> {
    let first = targets.first().copied().unwrap_or("");
    let second = targets.get(1).copied().unwrap_or("");
    let what = match name {
        "terraform" | "tofu" | "pulumi" if first == "destroy" => "destroys managed infrastructure",
        "kubectl" | "oc" if first == "delete" => "deletes cluster resources",
        "helm" if matches!(first, "uninstall" | "delete") => "uninstalls a release",
        "docker" | "podman" if first == "system" && second == "prune" => {
            "deletes containers, images and volumes"
        }
        "docker" | "podman"
            if matches!(first, "volume" | "image" | "container") && second == "prune" =>
        {
            "deletes unused containers, images or volumes"
        }
        "crontab" if has_short(flags, &['r']) => "deletes the user's crontab",
        "iptables" | "ip6tables" | "nft"
            if has_short(flags, &['F', 'X']) || flags.contains(&"--flush") || first == "flush" =>
        {
            "flushes firewall rules"
        }
        "userdel" | "deluser" | "groupdel" => "deletes users or groups",
        "dropdb" => "drops a database",
        "redis-cli"
            if targets.iter().any(|t| {
                t.eq_ignore_ascii_case("flushall") || t.eq_ignore_ascii_case("flushdb")
            }) =>
        {
            "deletes every key"
        }
        "aws"
            if first == "s3"
                && ((second == "rm" && flags.contains(&"--recursive"))
                    || (second == "rb" && flags.contains(&"--force"))) =>
        {
            "deletes S3 objects recursively"
        }
        "vssadmin" | "wbadmin" if first == "delete" => "deletes shadow copies or backups",
        "gsutil" if first == "rm" && has_short(flags, &['r']) => {
            "deletes storage objects recursively"
        }
        _ => return None,
    };
    Some(what.to_string())
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
        // `git checkout -- .`, `git checkout .`, `git restore .`: uncommitted edits dropped.
        "checkout" | "restore"
            if (sub == "restore" && !flags.contains(&"--staged") && !targets.is_empty())
                || (sub == "checkout"
                    && (rest.iter().any(|a| a == "--") || targets.contains(&"."))
                    && !targets.is_empty())
                || flags.contains(&"-f")
                || flags.contains(&"--force") =>
        {
            out.push(finding(
                Warn,
                "git_discard",
                "discards uncommitted changes",
                argv,
            ));
        }
        "branch"
            if flags.contains(&"-D")
                || (flags.contains(&"--delete") && flags.contains(&"--force")) =>
        {
            out.push(finding(
                Warn,
                "git_branch_delete",
                "deletes a branch even if it is not merged",
                argv,
            ));
        }
        "stash" if matches!(targets.first().copied(), Some("drop" | "clear")) => {
            out.push(finding(
                Warn,
                "git_stash_drop",
                "deletes stashed changes",
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
        // Named packages (new code from the registry, with install scripts) or global ones;
        // a bare `npm install` / `npm ci` restores the project's locked dependencies.
        "npm" | "pnpm" | "bun" => {
            matches!(first, "install" | "i" | "add" | "uninstall" | "remove")
                && (flag("-g") || flag("--global") || words.len() > 1)
        }
        "yarn" => first == "global" || first == "add",
        "uv" | "poetry" | "pdm" => matches!(first, "add" | "remove"),
        "gem" | "cargo" | "go" | "conda" | "mamba" | "choco" | "winget" | "scoop" | "nix-env" => {
            matches!(first, "install" | "uninstall") || (name == "nix-env" && flag("-i"))
        }
        _ => false,
    };
    installs.then(|| format!("installs or removes packages ({name} {first})"))
}
