//! The system calls a sandboxed program may make: an allow-list, so a call nobody thought of
//! is refused rather than let through.
//!
//! It is the set container runtimes give an unprivileged container (Docker's and Podman's
//! default profile: what ordinary programs — shells, compilers, interpreters, servers on
//! loopback, test suites — use), without the calls that need a capability the sandbox does
//! not have, and without what reaches past the sandbox even without one:
//!
//! - the **kernel keyrings** (`keyctl`, `add_key`, `request_key`): they are not namespaced,
//!   so a program would read and plant the user's keys (a session's Kerberos tickets, an
//!   encrypted home's key) outside the sandbox;
//! - **new namespaces** (`unshare`, `setns`, `clone` with a namespace flag, `mount` and the
//!   new mount calls): a user namespace inside hands the program every capability in it and
//!   the kernel's whole namespaced surface to attack; `clone3`, whose flags sit in memory a
//!   filter cannot read, answers "not implemented", so the C library falls back to `clone`;
//! - **tracing** (`ptrace`, `process_vm_*`, `kcmp`, `pidfd_getfd`): another process's
//!   memory would run code outside; **io_uring**, whose operations this filter cannot see;
//! - **kernel interfaces for tools that need privilege**: `bpf`, `perf_event_open`,
//!   `userfaultfd`, `fanotify_init`, `kexec_*`, modules, `syslog`, `quotactl`, `acct`,
//!   `reboot`, `swapon`, clocks, `iopl`/`ioperm`, `vhangup`, `chroot`, `pivot_root`,
//!   `open_by_handle_at`;
//! - `personality` beyond the flags programs ask for (32-bit uname, the query itself).
//!
//! A call of another architecture's numbering (the x32 ABI's, which a deny-list keyed on
//! x86-64 numbers would let through) matches no entry and is refused; a 32-bit call is
//! refused by the architecture check before it.

#![cfg(target_os = "linux")]

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule};

use super::seccomp::rule;

/// Calls allowed whatever their arguments, on every architecture.
const EVERYWHERE: &[i64] = &[
    libc::SYS_accept,
    libc::SYS_accept4,
    libc::SYS_bind,
    libc::SYS_brk,
    libc::SYS_capget,
    libc::SYS_capset,
    libc::SYS_chdir,
    libc::SYS_clock_getres,
    libc::SYS_clock_gettime,
    libc::SYS_clock_nanosleep,
    libc::SYS_close,
    libc::SYS_close_range,
    libc::SYS_connect,
    libc::SYS_copy_file_range,
    libc::SYS_dup,
    libc::SYS_dup3,
    libc::SYS_epoll_create1,
    libc::SYS_epoll_ctl,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
    libc::SYS_eventfd2,
    libc::SYS_execve,
    libc::SYS_execveat,
    libc::SYS_exit,
    libc::SYS_exit_group,
    libc::SYS_faccessat,
    libc::SYS_faccessat2,
    libc::SYS_fadvise64,
    libc::SYS_fallocate,
    libc::SYS_fanotify_mark,
    libc::SYS_fchdir,
    libc::SYS_fcntl,
    libc::SYS_fdatasync,
    libc::SYS_fgetxattr,
    libc::SYS_flistxattr,
    libc::SYS_flock,
    libc::SYS_fremovexattr,
    libc::SYS_fsetxattr,
    libc::SYS_fstat,
    libc::SYS_fstatfs,
    libc::SYS_fsync,
    libc::SYS_ftruncate,
    libc::SYS_futex,
    libc::SYS_futex_waitv,
    libc::SYS_get_mempolicy,
    libc::SYS_get_robust_list,
    libc::SYS_getcpu,
    libc::SYS_getcwd,
    libc::SYS_getdents64,
    libc::SYS_getegid,
    libc::SYS_geteuid,
    libc::SYS_getgid,
    libc::SYS_getgroups,
    libc::SYS_getitimer,
    libc::SYS_getpeername,
    libc::SYS_getpgid,
    libc::SYS_getpid,
    libc::SYS_getppid,
    libc::SYS_getpriority,
    libc::SYS_getrandom,
    libc::SYS_getresgid,
    libc::SYS_getresuid,
    libc::SYS_getrlimit,
    libc::SYS_getrusage,
    libc::SYS_getsid,
    libc::SYS_getsockname,
    libc::SYS_getsockopt,
    libc::SYS_gettid,
    libc::SYS_gettimeofday,
    libc::SYS_getuid,
    libc::SYS_getxattr,
    libc::SYS_inotify_add_watch,
    libc::SYS_inotify_init1,
    libc::SYS_inotify_rm_watch,
    libc::SYS_io_cancel,
    libc::SYS_io_destroy,
    libc::SYS_io_getevents,
    libc::SYS_io_setup,
    libc::SYS_io_submit,
    libc::SYS_ioprio_get,
    libc::SYS_ioprio_set,
    libc::SYS_kill,
    libc::SYS_landlock_add_rule,
    libc::SYS_landlock_create_ruleset,
    libc::SYS_landlock_restrict_self,
    libc::SYS_lgetxattr,
    libc::SYS_linkat,
    libc::SYS_listen,
    libc::SYS_listxattr,
    libc::SYS_llistxattr,
    libc::SYS_lremovexattr,
    libc::SYS_lseek,
    libc::SYS_lsetxattr,
    libc::SYS_madvise,
    libc::SYS_mbind,
    libc::SYS_membarrier,
    libc::SYS_memfd_create,
    libc::SYS_mincore,
    libc::SYS_mkdirat,
    libc::SYS_mknodat,
    libc::SYS_mlock,
    libc::SYS_mlock2,
    libc::SYS_mlockall,
    libc::SYS_mmap,
    libc::SYS_mprotect,
    libc::SYS_mq_getsetattr,
    libc::SYS_mq_notify,
    libc::SYS_mq_open,
    libc::SYS_mq_timedreceive,
    libc::SYS_mq_timedsend,
    libc::SYS_mq_unlink,
    libc::SYS_mremap,
    libc::SYS_msgctl,
    libc::SYS_msgget,
    libc::SYS_msgrcv,
    libc::SYS_msgsnd,
    libc::SYS_msync,
    libc::SYS_munlock,
    libc::SYS_munlockall,
    libc::SYS_munmap,
    libc::SYS_name_to_handle_at,
    libc::SYS_nanosleep,
    libc::SYS_newfstatat,
    libc::SYS_openat,
    libc::SYS_openat2,
    libc::SYS_pidfd_open,
    libc::SYS_pidfd_send_signal,
    libc::SYS_pipe2,
    libc::SYS_pkey_alloc,
    libc::SYS_pkey_free,
    libc::SYS_pkey_mprotect,
    libc::SYS_ppoll,
    libc::SYS_prctl,
    libc::SYS_pread64,
    libc::SYS_preadv,
    libc::SYS_preadv2,
    libc::SYS_prlimit64,
    libc::SYS_pselect6,
    libc::SYS_pwrite64,
    libc::SYS_pwritev,
    libc::SYS_pwritev2,
    libc::SYS_read,
    libc::SYS_readahead,
    libc::SYS_readlinkat,
    libc::SYS_readv,
    libc::SYS_recvfrom,
    libc::SYS_recvmmsg,
    libc::SYS_recvmsg,
    libc::SYS_remap_file_pages,
    libc::SYS_removexattr,
    libc::SYS_renameat,
    libc::SYS_renameat2,
    libc::SYS_restart_syscall,
    libc::SYS_rseq,
    libc::SYS_rt_sigaction,
    libc::SYS_rt_sigpending,
    libc::SYS_rt_sigprocmask,
    libc::SYS_rt_sigqueueinfo,
    libc::SYS_rt_sigreturn,
    libc::SYS_rt_sigsuspend,
    libc::SYS_rt_sigtimedwait,
    libc::SYS_rt_tgsigqueueinfo,
    libc::SYS_sched_get_priority_max,
    libc::SYS_sched_get_priority_min,
    libc::SYS_sched_getaffinity,
    libc::SYS_sched_getattr,
    libc::SYS_sched_getparam,
    libc::SYS_sched_getscheduler,
    libc::SYS_sched_rr_get_interval,
    libc::SYS_sched_setaffinity,
    libc::SYS_sched_setattr,
    libc::SYS_sched_setparam,
    libc::SYS_sched_setscheduler,
    libc::SYS_sched_yield,
    libc::SYS_seccomp,
    libc::SYS_semctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_sendfile,
    libc::SYS_sendmmsg,
    libc::SYS_sendmsg,
    libc::SYS_sendto,
    libc::SYS_set_mempolicy,
    libc::SYS_set_robust_list,
    libc::SYS_set_tid_address,
    libc::SYS_setfsgid,
    libc::SYS_setfsuid,
    libc::SYS_setgid,
    libc::SYS_setgroups,
    libc::SYS_setitimer,
    libc::SYS_setpgid,
    libc::SYS_setpriority,
    libc::SYS_setregid,
    libc::SYS_setresgid,
    libc::SYS_setresuid,
    libc::SYS_setreuid,
    libc::SYS_setrlimit,
    libc::SYS_setsid,
    libc::SYS_setsockopt,
    libc::SYS_setuid,
    libc::SYS_setxattr,
    libc::SYS_shmat,
    libc::SYS_shmctl,
    libc::SYS_shmdt,
    libc::SYS_shmget,
    libc::SYS_shutdown,
    libc::SYS_sigaltstack,
    libc::SYS_signalfd4,
    libc::SYS_socketpair,
    libc::SYS_splice,
    libc::SYS_statfs,
    libc::SYS_statx,
    libc::SYS_symlinkat,
    libc::SYS_sync,
    libc::SYS_sync_file_range,
    libc::SYS_syncfs,
    libc::SYS_sysinfo,
    libc::SYS_tee,
    libc::SYS_tgkill,
    libc::SYS_timer_create,
    libc::SYS_timer_delete,
    libc::SYS_timer_getoverrun,
    libc::SYS_timer_gettime,
    libc::SYS_timer_settime,
    libc::SYS_timerfd_create,
    libc::SYS_timerfd_gettime,
    libc::SYS_timerfd_settime,
    libc::SYS_times,
    libc::SYS_tkill,
    libc::SYS_truncate,
    libc::SYS_umask,
    libc::SYS_uname,
    libc::SYS_unlinkat,
    libc::SYS_vmsplice,
    libc::SYS_wait4,
    libc::SYS_waitid,
    libc::SYS_write,
    libc::SYS_writev,
];

/// Calls numbered alike on every architecture since Linux 5.1 and not yet in every C
/// library's list: `cachestat`, `map_shadow_stack` (shadow stacks of newer C libraries),
/// `futex_wake`/`futex_wait`/`futex_requeue`, `mseal`, and the `*xattrat` calls.
const NEWER: &[i64] = &[451, 453, 454, 455, 456, 462, 463, 464, 465, 466];

/// The older calls x86-64 still has beside their `*at` forms.
#[cfg(target_arch = "x86_64")]
const THIS_ARCH: &[i64] = &[
    libc::SYS_access,
    libc::SYS_alarm,
    libc::SYS_arch_prctl,
    libc::SYS_creat,
    libc::SYS_dup2,
    libc::SYS_epoll_create,
    libc::SYS_epoll_wait,
    libc::SYS_eventfd,
    libc::SYS_fork,
    libc::SYS_getdents,
    libc::SYS_getpgrp,
    libc::SYS_inotify_init,
    libc::SYS_link,
    libc::SYS_lstat,
    libc::SYS_mkdir,
    libc::SYS_mknod,
    libc::SYS_modify_ldt,
    libc::SYS_open,
    libc::SYS_pause,
    libc::SYS_pipe,
    libc::SYS_poll,
    libc::SYS_readlink,
    libc::SYS_rename,
    libc::SYS_rmdir,
    libc::SYS_select,
    libc::SYS_signalfd,
    libc::SYS_stat,
    libc::SYS_symlink,
    libc::SYS_time,
    libc::SYS_unlink,
    libc::SYS_vfork,
    // io_pgetevents (not in every C library's list of numbers).
    333,
];

#[cfg(not(target_arch = "x86_64"))]
const THIS_ARCH: &[i64] = &[];

/// Permission, ownership and time changes: allowed unless the mechanism cannot confine them
/// to the writable roots (Landlock does not govern them).
fn metadata_calls() -> Vec<i64> {
    let mut calls = vec![
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        // fchmodat2 (Linux 6.6).
        452,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ]);
    calls
}

/// The namespace flags of `clone`: a new namespace of any kind is refused.
const NEW_NAMESPACE: u64 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u64;

/// `personality` values programs ask for: Linux's own, 32-bit, uname with a 2.6 version,
/// both, and the query (`0xffffffff`).
const PERSONALITIES: &[u64] = &[0, 0x0008, 0x0002_0000, 0x0002_0008, 0xffff_ffff];

/// `AF_VSOCK`: a socket to the hypervisor of the virtual machine the server runs in.
const AF_VSOCK: u64 = 40;

/// A condition on an `int` argument, compared on its low 32 bits (what the kernel reads).
fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    super::seccomp::cond(arg, SeccompCmpArgLen::Dword, op, value)
}

/// The allow-list: each call mapped to the rules under which it is allowed (none: always).
/// `metadata` refuses permission, ownership and time changes.
pub fn allowed(metadata: bool) -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
    let mut map: BTreeMap<i64, Vec<SeccompRule>> = EVERYWHERE
        .iter()
        .chain(NEWER)
        .chain(THIS_ARCH)
        .map(|c| (*c, Vec::new()))
        .collect();
    if !metadata {
        for c in metadata_calls() {
            map.insert(c, Vec::new());
        }
        map.insert(libc::SYS_utimensat, Vec::new());
    } else {
        // utimensat passes only as futimens(fd, NULL): a descriptor's times set to now
        // (what `touch` does to the file it just opened).
        map.insert(
            libc::SYS_utimensat,
            vec![rule(vec![
                super::seccomp::cond(1, SeccompCmpArgLen::Qword, SeccompCmpOp::Eq, 0)?,
                super::seccomp::cond(2, SeccompCmpArgLen::Qword, SeccompCmpOp::Eq, 0)?,
            ])?],
        );
    }
    // The request is an int to the kernel: compared on its low 32 bits, so high bits set by
    // the caller do not slip past. Typing into a terminal's input (`TIOCSTI`) runs keys in
    // whatever reads it — another terminal's shell, outside the sandbox.
    map.insert(
        libc::SYS_ioctl,
        vec![rule(
            vec![
                cond(1, SeccompCmpOp::Ne, libc::TIOCSTI),
                cond(1, SeccompCmpOp::Ne, libc::TIOCLINUX),
            ]
            .into_iter()
            .collect::<Result<_, _>>()?,
        )?],
    );
    map.insert(
        libc::SYS_clone,
        vec![rule(vec![cond(
            0,
            SeccompCmpOp::MaskedEq(NEW_NAMESPACE),
            0,
        )?])?],
    );
    map.insert(
        libc::SYS_personality,
        PERSONALITIES
            .iter()
            .map(|p| rule(vec![cond(0, SeccompCmpOp::Eq, *p)?]))
            .collect::<Result<_, _>>()?,
    );
    // Which families: the sockets filter, when the network is not fully on.
    map.insert(
        libc::SYS_socket,
        vec![rule(vec![cond(0, SeccompCmpOp::Ne, AF_VSOCK)?])?],
    );
    Ok(map)
}

/// `clone3`: refused as "not implemented" (its flags are in memory the filter cannot read),
/// so the C library falls back to `clone`, whose flags it can.
pub const CLONE3: i64 = libc::SYS_clone3;

/// The calls [`allowed`] lets through under conditions on their arguments, as the
/// conditions under which each is refused: the filter built from this refuses what matches
/// (with the number filter of [`super::bpf_tree`] refusing every call not listed at all).
pub fn refusals(metadata: bool) -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
    let mut map = BTreeMap::new();
    if metadata {
        // Allowed only as futimens(fd, NULL): refused when either argument is set.
        map.insert(
            libc::SYS_utimensat,
            vec![
                rule(vec![super::seccomp::cond(
                    1,
                    SeccompCmpArgLen::Qword,
                    SeccompCmpOp::Ne,
                    0,
                )?])?,
                rule(vec![super::seccomp::cond(
                    2,
                    SeccompCmpArgLen::Qword,
                    SeccompCmpOp::Ne,
                    0,
                )?])?,
            ],
        );
    }
    map.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCSTI)?])?,
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCLINUX)?])?,
        ],
    );
    // Any namespace flag set: one rule per flag (a rule's conditions must all hold).
    map.insert(
        libc::SYS_clone,
        (0..64)
            .map(|bit| 1u64 << bit)
            .filter(|b| NEW_NAMESPACE & b != 0)
            .map(|b| rule(vec![cond(0, SeccompCmpOp::MaskedEq(b), b)?]))
            .collect::<Result<_, _>>()?,
    );
    map.insert(
        libc::SYS_personality,
        vec![rule(
            PERSONALITIES
                .iter()
                .map(|p| cond(0, SeccompCmpOp::Ne, *p))
                .collect::<Result<_, _>>()?,
        )?],
    );
    map.insert(
        libc::SYS_socket,
        vec![rule(vec![cond(0, SeccompCmpOp::Eq, AF_VSOCK)?])?],
    );
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_reaches_past_the_sandbox_is_not_listed() {
        let map = allowed(false).expect("compiles");
        for call in [
            libc::SYS_keyctl,
            libc::SYS_add_key,
            libc::SYS_request_key,
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_mount,
            libc::SYS_ptrace,
            libc::SYS_process_vm_readv,
            libc::SYS_process_vm_writev,
            libc::SYS_io_uring_setup,
            libc::SYS_bpf,
            libc::SYS_perf_event_open,
            libc::SYS_userfaultfd,
            libc::SYS_clone3,
            libc::SYS_open_by_handle_at,
        ] {
            assert!(!map.contains_key(&call), "{call} is listed");
        }
        let strict = allowed(true).expect("compiles");
        assert!(!strict.contains_key(&libc::SYS_fchmodat));
        assert!(map.contains_key(&libc::SYS_fchmodat));
    }
}
