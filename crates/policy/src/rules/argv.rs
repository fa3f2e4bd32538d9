//! Rules on one POSIX argv (after unwrapping) and the redirections of its command.

use super::*;
use crate::wrappers::basename;

/// Writing a letter here makes the kernel reboot (`b`), crash (`c`) or power off (`o`).
pub(super) const SYSRQ_TRIGGER: &str = "/proc/sysrq-trigger";

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
        } else if normalize(r, cwd) == SYSRQ_TRIGGER {
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
        } else if super::system::kernel_interface(&normalize(r, cwd)) {
            out.push(kernel_write(r, argv));
        }
    }
    out.extend(super::files::check_files(argv, redirects, cwd));
    out.extend(super::into_home::into_home(argv, cwd));
    out.extend(super::computed_args::computed_argument(argv, cwd));
    let Some(first) = argv.first() else {
        return out;
    };
    let name = basename(first);
    let args = &argv[1..];
    let (flags, targets) = flags_and_targets(args);
    // `rimraf` (npm's `rm -rf`) deletes recursively with no flag.
    let recursive =
        has_short(&flags, &['r', 'R']) || flags.contains(&"--recursive") || name == "rimraf";
    let c = Cmd {
        argv,
        name: name.into_owned(),
        args,
        flags,
        targets,
        recursive,
        cwd,
    };
    deletions(&c, &mut out);
    super::machine::disks(&c, &mut out);
    super::machine::power(&c, &mut out);
    permissions(&c, &mut out);
    super::kills::kills(&c, &mut out);
    super::bulk_signals::bulk_signals(&c, &mut out);
    super::option_names::option_names(&c, redirects, &mut out);
    super::whole_home::whole_home(&c, &mut out);
    super::terminals::other_terminals(&c, redirects, &mut out);
    others(&c, &mut out);
    let Cmd {
        name,
        flags,
        targets,
        ..
    } = c;
    if let Some((rule, what)) = super::dbus::dbus_call(&name, &argv[1..]) {
        let severity = if rule == "power" { Block } else { Warn };
        out.push(finding(severity, rule, what, argv));
    }
    if let Some((rule, what)) = super::exposure::exposes(&name, &argv[1..], cwd) {
        out.push(finding(Warn, rule, what, argv));
    }
    out.extend(super::metadata::asked(argv));
    // A disk or memory read raw; what writes onto one is judged above (`disks`).
    if !out
        .iter()
        .any(|f| f.rule == "dd_device" || f.rule == "device_write")
        && let Some(what) = super::system::raw_device_read(&name, &targets, cwd)
    {
        out.push(finding(Warn, "raw_device_read", what, argv));
    }
    if let Some(what) = super::admin::admin_destructive(&name, &targets, &flags) {
        out.push(finding(Warn, "destructive_admin", what, argv));
    } else if let Some(what) = super::system::administers(&name, &targets, &flags) {
        out.push(finding(Warn, "destructive_admin", what, argv));
    }
    // Files a command writes or deletes by its nature, onto the kernel's interfaces or into
    // the system's directories.
    let written = super::files::written_by(argv);
    if let Some(w) = written
        .iter()
        .find(|w| super::system::kernel_interface(&normalize(w, cwd)))
    {
        out.push(kernel_write(w, argv));
    } else if let Some(w) = written.iter().find(|w| is_system_file(&normalize(w, cwd))) {
        out.push(finding(
            Warn,
            "system_file_write",
            format!("{name} writes the system file {w}"),
            argv,
        ));
    }
    let deleted: &[&str] = match name.as_str() {
        "rm" | "unlink" | "shred" => &targets,
        "mv" if targets.len() >= 2 => &targets[..targets.len() - 1],
        _ => &[],
    };
    if let Some(d) = deleted.iter().find(|d| is_system_file(&normalize(d, cwd))) {
        out.push(finding(
            Warn,
            "system_file_write",
            format!("removes the system file {d}"),
            argv,
        ));
    }
    if let Some(f) = super::admin::package_install(&name, args)
        .or_else(|| super::admin::runs_fetched(&name, args))
    {
        out.push(finding(Warn, "package_install", f, argv));
    }
    out
}

/// One argv as the rules on programs read it.
pub(super) struct Cmd<'a> {
    pub(super) argv: &'a [String],
    /// The program's basename.
    pub(super) name: String,
    pub(super) args: &'a [String],
    pub(super) flags: Vec<&'a str>,
    pub(super) targets: Vec<&'a str>,
    /// `-r`/`-R`/`--recursive`, or `rimraf`.
    pub(super) recursive: bool,
    pub(super) cwd: Option<&'a str>,
}

/// Recursive deletions: `rm -r`, `find -delete`, `rsync --delete`, judged by what they reach.
fn deletions(c: &Cmd<'_>, out: &mut Vec<Finding>) {
    use Severity::*;
    let argv = c.argv;
    let args = c.args;
    let cwd = c.cwd;
    let recursive = c.recursive;
    let name = &c.name;
    let flags = &c.flags;
    let targets = &c.targets;
    match name.as_str() {
        // `srm -r` and `wipe -r` delete a tree as `rm -r` does (overwriting it first).
        "rm" | "rimraf" | "srm" | "wipe" if recursive => {
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
        // Every file directly in the root, a home or a system directory, named by a glob of
        // wildcards alone (`rm -f ~/*`, `~/?*`, `~/[a-z]*`, `/etc/*`, `~/*/*`): not recursive,
        // and still all there is. (`rm ~/*.log` names some files; `~/.*` is read as the
        // credentials it takes.)
        "rm" | "unlink" | "shred" | "srm" | "wipe" | "truncate" => {
            if let Some(under) = targets.iter().find_map(|t| every_file_under(t, cwd)) {
                out.push(finding(
                    Block,
                    "rm_recursive_critical",
                    format!("deletes or empties every file in {under}"),
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
        // `-exec rm {} +` deletes what find finds as `-delete` does, whatever rm's flags:
        // under the home, the root or a system directory, everything there.
        "find"
            if args.iter().any(|a| a == "-delete")
                || args.windows(2).any(|w| {
                    matches!(w[0].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                        && matches!(&*basename(&w[1]), "rm" | "unlink" | "shred" | "srm")
                }) =>
        {
            let how = if args.iter().any(|a| a == "-delete") {
                "find -delete"
            } else {
                "find -exec rm"
            };
            let roots: Vec<String> = super::listed_deletes::find_roots(args)
                .iter()
                .map(|t| normalize(t, cwd))
                .collect();
            if roots.iter().any(|r| is_critical(r)) {
                out.push(finding(
                    Block,
                    "rm_recursive_critical",
                    format!("{how} under {}", roots.join(", ")),
                    argv,
                ));
            } else if how == "find -delete" {
                // (`-exec rm` under the project is judged as the rm it runs.)
                out.push(finding(
                    Warn,
                    "recursive_delete",
                    "find -delete deletes recursively",
                    argv,
                ));
            }
        }
        // `rsync -a --delete empty/ ~/` deletes everything at the destination the source
        // lacks: all of it, from an empty source.
        "rsync"
            if flags.iter().any(|f| f.starts_with("--delete"))
                && targets
                    .last()
                    .is_some_and(|d| is_critical(&normalize(d, cwd))) =>
        {
            out.push(finding(
                Block,
                "rm_recursive_critical",
                format!(
                    "rsync --delete empties {} of whatever its source lacks",
                    targets.last().copied().unwrap_or_default()
                ),
                argv,
            ));
        }
        "rsync"
            if flags
                .iter()
                .any(|f| f.starts_with("--delete") || *f == "--remove-source-files") =>
        {
            out.push(finding(
                Warn,
                "recursive_delete",
                "rsync deletes files (at the destination, or the sources it sent)",
                argv,
            ));
        }
        _ => {}
    }
}

/// The root, home or system directory a glob names every file of: its wildcards start
/// right after that directory, and every part from there is wildcards alone.
pub(super) fn every_file_under(word: &str, cwd: Option<&str>) -> Option<String> {
    let base = super::reading::glob_base(word)?;
    let under = normalize(base, cwd);
    if !is_critical(&under) {
        return None;
    }
    let rest = if base == "." && !word.starts_with("./") {
        word
    } else {
        word.get(base.len()..)?.trim_start_matches('/')
    };
    rest.split('/')
        .filter(|part| !part.is_empty())
        .all(wildcards_alone)
        .then_some(under)
}

/// Whether a part of a glob matches names by wildcards alone (`*`, `?*`, `[a-z]*`, `[!.]*`),
/// with no letter of its own outside a bracket.
fn wildcards_alone(part: &str) -> bool {
    let mut in_bracket = false;
    let mut seen = false;
    for ch in part.chars() {
        match ch {
            '[' if !in_bracket => in_bracket = true,
            ']' if in_bracket => in_bracket = false,
            '*' | '?' if !in_bracket => seen = true,
            _ if in_bracket => {}
            _ => return false,
        }
    }
    seen || part.starts_with('[')
}

/// Permissions and owners: recursive changes of what matters, system files, setuid bits.
fn permissions(c: &Cmd<'_>, out: &mut Vec<Finding>) {
    use Severity::*;
    let argv = c.argv;
    let cwd = c.cwd;
    let recursive = c.recursive;
    let name = &c.name;
    let targets = &c.targets;
    match name.as_str() {
        "chmod" | "chown" | "chgrp" | "setfacl" if recursive => {
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
        // Of the home or the root itself, not recursively: every file under it becomes
        // unreachable (`chmod 000 ~`) or another user's to change (`setfacl -m u:x:rwx ~`).
        "chmod" | "chown" | "chgrp" | "setfacl"
            if !recursive
                && targets
                    .iter()
                    .skip(usize::from(name != "setfacl"))
                    .any(|t| is_critical(&normalize(t, cwd))) =>
        {
            out.push(finding(
                Warn,
                "permissions_home",
                format!("{name} changes who may use the home or root directory itself"),
                argv,
            ));
        }
        // A repository's hook made runnable: git runs it on commit, checkout, merge or push.
        "chmod"
            if targets.iter().skip(1).any(|t| {
                let t = normalize(t, cwd);
                t.contains("/.git/hooks/") || t.starts_with(".git/hooks/")
            }) =>
        {
            out.push(finding(
                Warn,
                "startup_file_write",
                "makes a repository's hook runnable: git runs it on commit, checkout, merge or push",
                argv,
            ));
        }
        "chmod"
            if targets
                .iter()
                .skip(1)
                .any(|t| is_system_file(&normalize(t, cwd))) =>
        {
            out.push(finding(
                Warn,
                "system_file_write",
                "changes the permissions of a system file",
                argv,
            ));
        }
        "chmod"
            if targets
                .first()
                .is_some_and(|m| super::admin::sets_id_bits(m)) =>
        {
            out.push(finding(
                Warn,
                "setuid",
                "makes a program run as its owner or group (setuid/setgid)",
                argv,
            ));
        }
        // `install -m 4755 /bin/sh x`: a copy made with the bit set (also `--mode=`,
        // `-m4755`).
        "install"
            if crate::getopt::option_value_anywhere(c.args, 'm', "mode")
                .is_some_and(|m| super::admin::sets_id_bits(&m)) =>
        {
            out.push(finding(
                Warn,
                "setuid",
                "installs a program that runs as its owner or group (setuid/setgid)",
                argv,
            ));
        }
        _ => {}
    }
}

/// git, containers handed the host, and privilege.
fn others(c: &Cmd<'_>, out: &mut Vec<Finding>) {
    use Severity::*;
    let argv = c.argv;
    let args = c.args;
    let name = &c.name;
    match name.as_str() {
        "git" => super::git::git(argv, out),
        "docker" | "podman" | "nerdctl" if super::admin::gives_the_host(name, args) => {
            out.push(finding(
                Warn,
                "container_host",
                format!("{name} gives the container the host (privileges, its root, its processes or devices, or its credentials)"),
                argv,
            ));
        }
        "kubectl" | "oc" if super::admin::pod_gets_the_host(args) => {
            out.push(finding(
                Warn,
                "container_host",
                format!("{name} starts a pod given the node (privileged, a spec patched by --overrides, or a node's debugging pod with its processes, network and root)"),
                argv,
            ));
        }
        "sudo" | "doas" | "su" | "pkexec" | "run0" => {
            out.push(finding(
                Warn,
                "privileged",
                format!("runs with elevated privileges ({name})"),
                argv,
            ));
        }
        // Another user's or group's rights, or root over a user namespace's files.
        "gosu" | "su-exec" | "s6-setuidgid" | "chpst" | "newgrp" | "sg" => {
            out.push(finding(
                Warn,
                "privileged",
                format!("runs with another user's or group's rights ({name})"),
                argv,
            ));
        }
        "podman" | "buildah" if c.args.first().is_some_and(|v| v == "unshare") => {
            out.push(finding(
                Warn,
                "privileged",
                format!("{name} unshare runs as root over every file the user namespace maps"),
                argv,
            ));
        }
        _ => {}
    }
}

/// Files under system configuration and boot directories (`/etc/passwd`, `/boot/...`).
fn is_system_file(path: &str) -> bool {
    const SYSTEM_FILE_DIRS: &[&str] = &[
        "/var/log/",
        "/etc/",
        "/boot/",
        "/bin/",
        "/sbin/",
        "/lib/",
        "/lib64/",
        "/usr/bin/",
        "/usr/sbin/",
        "/usr/lib/",
        // First on PATH: a program there shadows the system's.
        "/usr/local/bin/",
        "/usr/local/sbin/",
        "/usr/local/lib/",
        "/usr/libexec/",
        "/usr/share/",
        "/var/spool/",
        "/var/lib/",
    ];
    SYSTEM_FILE_DIRS.iter().any(|d| path.starts_with(d))
}

/// A write onto `/sys`, `/proc/sys` or a device other than the harmless ones.
fn kernel_write(target: &str, argv: &[String]) -> Finding {
    finding(
        Severity::Warn,
        "kernel_write",
        format!("writes {target}, a kernel or device interface: it changes the machine itself"),
        argv,
    )
}
