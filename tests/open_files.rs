//! The open-file limit as users meet it: a server started from a shell whose soft limit is
//! the low one most systems give (1024 on a desktop; [`SOFT`] here, to stay quick), and an
//! operator who allows more terminals than that limit leaves descriptors for. Every
//! terminal opens, the commands after them all run, and programs — a terminal's shell and a
//! headless command — see the limit the server was given, not the one it raised.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use common::*;

/// The soft limit the server is started with.
const SOFT: u64 = 256;

/// Terminals the operator allows and the test opens: each holds about three descriptors in
/// the server (its pty, its supervisor's socket, a spool), well over [`SOFT`] in all.
const TERMINALS: usize = 120;

/// Headless commands run after them: more than the ended sessions the server keeps (256),
/// each of which held a descriptor until it was pruned.
const COMMANDS: usize = 300;

/// The hard open-file limit of this process (the server's, started from it).
fn hard_limit() -> u64 {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .unwrap()
        .1
}

/// The server, started from a shell with the soft limit [`SOFT`], on `adapter`.
async fn started_under_a_low_soft_limit(adapter: &str) -> Option<Server> {
    let needed = (TERMINALS as u64) * 4;
    if hard_limit() < needed {
        eprintln!("skipped: the hard open-file limit is below {needed}; nothing to raise to");
        return None;
    }
    let start = format!("ulimit -Sn {SOFT} && exec \"$0\"");
    let s = server()
        .bin("/bin/sh")
        .args(&["-c", &start, SERVER_BIN])
        .envs(&[
            ("PM_TERM_NO_USER_RC", "1"),
            ("PM_TERM_INTERACTIVE_SHELL", "bash"),
            ("PM_TERM_MAX_TERMINALS", &TERMINALS.to_string()),
            ("PM_TERM_ADAPTER_MODE", adapter),
        ])
        .start()
        .await;
    Some(s)
}

#[tokio::test]
async fn a_server_started_under_a_low_soft_limit_opens_every_terminal_it_allows() {
    let Some(s) = started_under_a_low_soft_limit("local").await else {
        return;
    };
    let mut ids = Vec::new();
    for n in 0..TERMINALS {
        let p = s.call(open_terminal()).await;
        assert_eq!(p["success"], true, "terminal {n} of {TERMINALS}: {p:#}");
        ids.push(p["identity"]["terminal_id"].as_str().unwrap().to_string());
    }
    for n in 0..COMMANDS {
        let p = s.call(headless("true")).await;
        assert_eq!(p["success"], true, "command {n} after the terminals: {p:#}");
    }
    let p = s.call(headless("ulimit -Sn")).await;
    assert_eq!(p["result"]["stdout"], format!("{SOFT}\n"), "{p:#}");
    for id in [&ids[0], &ids[TERMINALS - 1]] {
        let p = s.call(terminal_command(id, "ulimit -Sn")).await;
        assert_eq!(p["result"]["output"], format!("{SOFT}\n"), "{p:#}");
    }
    s.stop().await;
}

/// The server's open descriptors.
fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// An ended command keeps its output readable, not a descriptor: the server's count stays
/// where it was after more commands than it keeps (each held its supervisor's socket until
/// it was pruned, which a raised limit alone would only have hidden).
#[tokio::test]
async fn ended_commands_hold_no_descriptors() {
    let s = server().env("PM_TERM_NO_USER_RC", "1").start().await;
    for _ in 0..10 {
        s.call(headless("true")).await;
    }
    let before = open_descriptors(s.pid);
    for n in 0..COMMANDS {
        let p = s.call(headless("echo kept")).await;
        assert_eq!(p["result"]["stdout"], "kept\n", "command {n}: {p:#}");
    }
    let after = open_descriptors(s.pid);
    assert!(
        after <= before + 8,
        "{before} descriptors before {COMMANDS} commands, {after} after"
    );
    s.stop().await;
}

/// The bundled adapter: the server launches its sibling host service, whose terminals get
/// the user's limit too (the host raises its own, from the one it was given).
#[tokio::test(flavor = "multi_thread")]
async fn a_bundled_hosts_terminals_get_the_limit_the_server_was_given() {
    let Some(s) = started_under_a_low_soft_limit("bundled").await else {
        return;
    };
    let p = s.call(open_terminal()).await;
    assert_eq!(p["success"], true, "{p:#}");
    assert_eq!(p["resolved"]["adapter"], "bundled", "{p:#}");
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let p = s.call(terminal_command(&id, "ulimit -Sn")).await;
    assert_eq!(p["result"]["output"], format!("{SOFT}\n"), "{p:#}");
    s.stop().await;
}
