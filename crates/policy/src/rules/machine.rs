//! Rules on what a command does to the machine itself: its disks and devices, its power.

use super::argv::{Cmd, SYSRQ_TRIGGER};
use super::*;

/// Disks and devices written or wiped: `dd`, partitioners and shredders, a copy or `tee` onto a
/// device or the SysRq trigger.
pub(super) fn disks(c: &Cmd<'_>, out: &mut Vec<Finding>) {
    use Severity::*;
    let argv = c.argv;
    let args = c.args;
    let cwd = c.cwd;
    let name = &c.name;
    let flags = &c.flags;
    let targets = &c.targets;
    match name.as_str() {
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
                || (matches!(name.as_str(), "sgdisk" | "sfdisk") && has_short(flags, &['Z', 'o']))
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
        // Erasers and destructive tests of a whole disk: `badblocks -w` (writes patterns
        // over every block), `hdparm --security-erase`, `nvme format` / `sanitize`.
        "badblocks" | "hdparm" | "nvme" => {
            let devices: Vec<&str> = targets
                .iter()
                .copied()
                .filter(|t| is_block_device(t))
                .collect();
            let erases = match name.as_str() {
                "badblocks" => has_short(flags, &['w']),
                "hdparm" => flags.iter().any(|f| {
                    f.starts_with("--security-erase")
                        || f.starts_with("--trim-sector")
                        || f.starts_with("--write-sector")
                        || f.starts_with("--make-bad-sector")
                }),
                _ => targets
                    .first()
                    .is_some_and(|v| matches!(*v, "format" | "sanitize" | "write-zeroes")),
            };
            if erases && !devices.is_empty() {
                out.push(finding(
                    Block,
                    "device_wipe",
                    format!("{name} erases the disk device {}", devices.join(", ")),
                    argv,
                ));
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
            if name == "tee" && targets.iter().any(|t| normalize(t, cwd) == SYSRQ_TRIGGER) {
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
        _ => {}
    }
}

/// Power: shutting down, rebooting, halting, by any of the programs that do it.
pub(super) fn power(c: &Cmd<'_>, out: &mut Vec<Finding>) {
    use Severity::*;
    let argv = c.argv;
    let name = &c.name;
    let targets = &c.targets;
    match name.as_str() {
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            out.push(finding(
                Block,
                "power",
                format!("{name} stops the machine"),
                argv,
            ));
        }
        // `kexec -e` (and a plain `kexec`, which loads and runs) starts another kernel now;
        // `-l`/`-p` only load one for later.
        "kexec"
            if !argv.iter().skip(1).any(|a| {
                matches!(
                    a.as_str(),
                    "-l" | "--load" | "-p" | "--load-panic" | "-u" | "--unload"
                )
            }) =>
        {
            out.push(finding(
                Block,
                "power",
                "kexec starts another kernel: the machine restarts".to_string(),
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
        _ => {}
    }
}
