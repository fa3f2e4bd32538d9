//! The machine itself: its kernel and device interfaces, and the programs that administer
//! disks, volumes, mounts, services and accounts. Both are allow-lists: a device a program
//! may write is one of a few (`/dev/null`, a terminal, a descriptor), and an administration
//! program passes only with a verb that reads (`systemctl status`, `fdisk -l`, `zpool
//! list`); anything else it does changes the machine and is warned.

use super::{is_block_device, normalize};

/// Devices whose writing touches nothing but the writer's own streams.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
];

/// Whether writing `path` (normalized) changes the kernel, a device or another process:
/// `/sys`, anything under `/proc` but the writer's own descriptors (`/proc/sys`,
/// `/proc/sysrq-trigger`, `/proc/1/mem`, `/proc/<pid>/oom_score_adj`), any device but the
/// harmless ones (`/dev/mem`, `/dev/kmsg`, a disk by id).
/// Programs that read a disk device for what describes it (its partitions, its file
/// system's header, its health), never the files on it.
const DISK_DESCRIBERS: &[&str] = &[
    "blkid",
    "lsblk",
    "fdisk",
    "sfdisk",
    "parted",
    "partprobe",
    "smartctl",
    "hdparm",
    "tune2fs",
    "dumpe2fs",
    "xfs_info",
    "blockdev",
    "udevadm",
    "file",
    "mount",
    "umount",
    "cryptsetup",
    "wipefs",
    "sgdisk",
    "gdisk",
    "fsck",
    "e2fsck",
    "badblocks",
    "nvme",
    "lvs",
    "pvs",
    "vgs",
    "pvdisplay",
    "mkfs",
    "mke2fs",
    "mkswap",
    "stat",
    "ls",
];

/// Programs whose operands are not what they read: wrappers (the program they run is
/// judged on its own), and programs that write their operands (judged as writes).
const NOT_READERS: &[&str] = &[
    "sudo",
    "doas",
    "pkexec",
    "run0",
    "su",
    "env",
    "nice",
    "ionice",
    "timeout",
    "nohup",
    "stdbuf",
    "time",
    "xargs",
    "setsid",
    "taskset",
    "chrt",
    "flock",
    "watch",
    "strace",
    "ltrace",
    "busybox",
    "toybox",
    "command",
    "exec",
    "builtin",
    "unbuffer",
    "chroot",
    "tee",
    "truncate",
    "shred",
    "blkdiscard",
];

/// Memory and the kernel's image as files: whatever any process holds, keys included.
const MEMORY_DEVICES: &[&str] = &["/dev/mem", "/dev/kmem", "/dev/port", "/proc/kcore"];

/// What a command reads from a raw disk or memory device, past every file's permissions
/// (`dd if=/dev/sda`, `cat /dev/sda`, `strings /dev/mem`), said as why; `None` for
/// a program that only describes disks, or when no such device is read. Also an input
/// redirection's target (`name` empty).
pub fn raw_device_read(name: &str, operands: &[&str], cwd: Option<&str>) -> Option<String> {
    if DISK_DESCRIBERS.contains(&name) || NOT_READERS.contains(&name) || name.starts_with("mkfs.") {
        return None;
    }
    operands.iter().find_map(|o| {
        let o = o.strip_prefix("if=").unwrap_or(o);
        let n = normalize(o, cwd);
        let what = if MEMORY_DEVICES.contains(&n.as_str()) {
            "the machine's memory"
        } else if is_block_device(o) || is_block_device(&n) {
            "a disk"
        } else {
            return None;
        };
        Some(format!(
            "reads {o}, {what} as raw bytes: every file on it, credentials included, past \
             their permissions"
        ))
    })
}

pub fn kernel_interface(path: &str) -> bool {
    if path.starts_with("/sys/") {
        return true;
    }
    if let Some(proc) = path.strip_prefix("/proc/") {
        return !(proc.starts_with("self/fd/") || proc.starts_with("thread-self/fd/"));
    }
    let Some(dev) = path.strip_prefix("/dev/") else {
        return false;
    };
    !(HARMLESS_DEVICES.contains(&path)
        || dev.starts_with("fd/")
        || dev.starts_with("pts/")
        || dev.starts_with("shm/")
        || dev.starts_with("mqueue/")
        // bash's network connections: a connection, as `curl` makes one.
        || dev.starts_with("tcp/")
        || dev.starts_with("udp/"))
}

/// What an administration program does to the machine, when its words are not a reading
/// verb: `None` for a program that is not one, or one that only reads.
pub fn administers(name: &str, words: &[&str], flags: &[&str]) -> Option<&'static str> {
    let first = words.first().copied().unwrap_or("");
    let second = words.get(1).copied().unwrap_or("");
    let lists = |short: &[char], long: &[&str]| {
        flags.iter().any(|f| {
            if let Some(l) = f.strip_prefix("--") {
                long.contains(&l)
            } else {
                f[1..].chars().any(|c| short.contains(&c))
            }
        })
    };
    let what = match name {
        "fdisk" | "sfdisk" | "cfdisk" | "gdisk" | "cgdisk" => {
            if lists(&['l', 'd'], &["list", "dump", "version", "help"]) {
                return None;
            }
            "changes a disk's partitions"
        }
        "parted" => {
            if lists(&['l'], &["list", "version", "help"]) || words.contains(&"print") {
                return None;
            }
            "changes a disk's partitions"
        }
        "cryptsetup" if !matches!(first, "status" | "luksDump" | "isLuks" | "benchmark" | "") => {
            "changes an encrypted volume"
        }
        "lvremove" | "vgremove" | "pvremove" | "lvreduce" | "lvresize" | "lvchange"
        | "vgchange" | "pvmove" | "vgreduce" | "lvcreate" | "vgcreate" | "pvcreate" | "wipefs" => {
            "changes the machine's volumes"
        }
        "zpool" | "zfs"
            if !matches!(first, "list" | "status" | "get" | "iostat" | "history" | "") =>
        {
            "changes the machine's pools or datasets"
        }
        "btrfs" if !btrfs_reads(first, second) => "changes a btrfs filesystem",
        "mount" if !words.is_empty() || lists(&['o', 'a', 'B', 'M'], &["bind", "move"]) => {
            "mounts or remounts a filesystem"
        }
        "umount" => "unmounts a filesystem",
        // `date -s TIME` / `--set`: the system clock (certificates, builds, logs follow it).
        "date"
            if flags.iter().any(|f| {
                f.starts_with("--se")
                    || f.strip_prefix('-').is_some_and(|cluster| {
                        !cluster.starts_with('-')
                            // Letters after one that takes a value are that value (`-Iseconds`).
                            && cluster.chars().take_while(|c| !"dfrI".contains(*c)).any(|c| c == 's')
                    })
            }) =>
        {
            "sets the system clock"
        }
        "hwclock" if lists(&['w', 's'], &["systohc", "hctosys", "set"]) => "sets the clock",
        "timedatectl" if matches!(first, "set-time" | "set-timezone" | "set-ntp" | "set-local-rtc") => {
            "sets the system clock or time zone"
        }
        // `hostname NAME` (or `-F FILE`) renames the machine; its flags only print.
        "hostname" if !first.is_empty() || lists(&['F', 'b'], &["file", "boot"]) => {
            "renames the machine"
        }
        "hostnamectl" if matches!(first, "set-hostname" | "hostname" | "set-chassis" | "set-icon-name") && !second.is_empty() => {
            "renames the machine"
        }
        "systemctl"
            if !matches!(
                first,
                "" | "status"
                    | "show"
                    | "cat"
                    | "help"
                    | "list-units"
                    | "list-unit-files"
                    | "list-timers"
                    | "list-sockets"
                    | "list-dependencies"
                    | "list-jobs"
                    | "list-machines"
                    | "is-active"
                    | "is-enabled"
                    | "is-failed"
                    | "is-system-running"
                    | "get-default"
                    | "show-environment"
                    // Bringing a service up or back keeps it running: everyday, not a
                    // change of what the machine runs.
                    | "start"
                    | "restart"
                    | "try-restart"
                    | "reload"
                    | "reload-or-restart"
                    | "daemon-reload"
            ) =>
        {
            "stops, disables or masks services, or changes the machine's state"
        }
        "service" if !matches!(second, "status" | "start" | "restart" | "reload" | "") => {
            "stops a service"
        }
        "chattr" => "changes files' attributes (immutable, append-only)",
        "setcap" if !lists(&['v'], &[]) => "gives a program capabilities (root's powers)",
        "ufw" if !matches!(first, "status" | "show" | "version" | "help" | "") => {
            "changes the firewall"
        }
        "firewall-cmd"
            if !flags.iter().all(|f| {
                [
                    "--state",
                    "--list",
                    "--get",
                    "--query",
                    "--info",
                    "--help",
                    "--version",
                ]
                .iter()
                .any(|r| f.starts_with(r))
            }) =>
        {
            "changes the firewall"
        }
        // Lingering keeps a user's processes running after every session ends: out of
        // reach of the person's logout.
        "loginctl"
            if !(first.is_empty()
                || first.starts_with("list-")
                || first.starts_with("show-")
                || first.ends_with("-status")) =>
        {
            "changes sessions, or keeps a user's processes after logout"
        }
        "passwd" if !lists(&['S'], &["status"]) => "changes an account's password",
        "usermod" | "useradd" | "adduser" | "groupadd" | "groupmod" | "gpasswd" | "chpasswd"
        | "chage" | "visudo" | "vipw" | "vigr" | "newusers" | "chsh" | "chfn" => {
            "changes the machine's accounts"
        }
        _ => return None,
    };
    Some(what)
}

/// Whether `btrfs FIRST SECOND` only shows.
fn btrfs_reads(first: &str, second: &str) -> bool {
    match first {
        "filesystem" | "fi" => matches!(second, "show" | "df" | "usage" | "du"),
        "subvolume" | "sub" => matches!(second, "list" | "show" | "get-default"),
        "version" | "help" | "" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_harmless_devices_are_written_unasked() {
        for kernel in [
            "/dev/mem",
            "/dev/kmsg",
            "/dev/disk/by-id/ata-x",
            "/sys/power/state",
            "/proc/sys/kernel/sysrq",
            "/proc/sysrq-trigger",
            "/proc/1/mem",
            "/proc/1/oom_score_adj",
            "/proc/self/oom_score_adj",
        ] {
            assert!(kernel_interface(kernel), "{kernel}");
        }
        for plain in [
            "/dev/null",
            "/dev/fd/3",
            "/dev/pts/0",
            "/dev/shm/x",
            "/tmp/x",
            "/proc/self/fd/1",
        ] {
            assert!(!kernel_interface(plain), "{plain}");
        }
    }

    #[test]
    fn administration_passes_only_with_a_reading_verb() {
        let a = |name: &str, words: &[&str], flags: &[&str]| administers(name, words, flags);
        assert!(a("systemctl", &["stop", "sshd"], &[]).is_some());
        assert!(a("systemctl", &["status", "sshd"], &[]).is_none());
        assert!(a("systemctl", &["restart", "nginx"], &[]).is_none());
        assert!(a("systemctl", &["mask", "ssh"], &[]).is_some());
        assert!(a("fdisk", &["/dev/sda"], &[]).is_some());
        assert!(a("fdisk", &[], &["-l"]).is_none());
        assert!(a("mount", &[], &[]).is_none());
        assert!(a("mount", &["/dev/sdb1", "/mnt"], &[]).is_some());
        assert!(a("zpool", &["destroy", "tank"], &[]).is_some());
        assert!(a("zpool", &["status"], &[]).is_none());
        assert!(a("passwd", &[], &["-d"]).is_some());
        assert!(a("passwd", &[], &["-S"]).is_none());
        assert!(a("ls", &["/"], &[]).is_none());
    }
}
