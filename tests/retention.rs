//! What the server keeps of ended commands, and how many may run, as an agent meets them
//! through the real binary: the oldest ended commands are pruned past the operator's
//! retention while a running one is kept however old, and the running limit holds under
//! many calls at once and frees its places as commands end.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use common::*;
use serde_json::{Value, json};

/// The session's output from its start (the call that ran it was given it already).
fn read(id: &str) -> Value {
    json!({"action": "read_output", "target": {"session_id": id}, "output": {"stdout_cursor": 0}})
}

fn session_id(p: &Value) -> String {
    p["identity"]["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {p:#}"))
        .to_string()
}

/// A command that runs on while the call answers.
/// A server with the operator's `limit` set to `n`, and no user rc files.
async fn quiet_server(limit: &str, n: usize) -> Server {
    server()
        .envs(&[(limit, n.to_string().as_str()), ("PM_TERM_NO_USER_RC", "1")])
        .start()
        .await
}

fn long_running() -> Value {
    let mut long = headless("sleep 30");
    long["runtime"] = json!({"wait_ms": 50});
    long
}

#[tokio::test]
async fn the_oldest_ended_commands_are_pruned_and_a_running_one_is_kept() {
    const KEEP: usize = 5;
    const RUN: usize = 9;
    let s = quiet_server("PM_TERM_MAX_RETAINED", KEEP).await;
    let running = session_id(&s.call(long_running()).await);
    let mut ended = Vec::new();
    for i in 0..RUN {
        let p = s.call(headless(&format!("echo {i}"))).await;
        assert_eq!(p["result"]["stdout"], format!("{i}\n"), "{p:#}");
        ended.push(session_id(&p));
    }
    // One more start prunes what the last command left past the retention.
    s.call(headless("true")).await;
    for (i, id) in ended.iter().enumerate() {
        let p = s.call(read(id)).await;
        if i < RUN + 1 - KEEP {
            assert_eq!(code(&p), "PM_TERM_NOT_FOUND", "command {i} is kept: {p:#}");
        } else {
            assert_eq!(
                p["result"]["stdout"],
                format!("{i}\n"),
                "command {i}: {p:#}"
            );
        }
    }
    let p = s.call(read(&running)).await;
    assert_eq!(p["result"]["running"], true, "{p:#}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_running_limit_holds_under_calls_at_once_and_frees_as_commands_end() {
    const MAX: usize = 3;
    let s = quiet_server("PM_TERM_MAX_SESSIONS", MAX).await;
    let answers = futures_util::future::join_all((0..8).map(|_| s.call(long_running()))).await;
    let started: Vec<&Value> = answers.iter().filter(|p| p["success"] == true).collect();
    assert_eq!(started.len(), MAX, "{answers:#?}");
    for p in answers.iter().filter(|p| p["success"] != true) {
        assert_limit(p);
    }
    for p in &started {
        let t = s
            .call(json!({"action": "terminate", "target": {"session_id": session_id(p)}}))
            .await;
        assert_eq!(t["success"], true, "{t:#}");
    }
    // Each place is free again: as many commands as the limit run at once, more one by one.
    for _ in 0..MAX {
        assert_eq!(s.call(long_running()).await["success"], true);
    }
    let p = s.call(long_running()).await;
    assert_limit(&p);
    s.stop().await;
}

/// A refusal by the running cap: a cap, retriable, saying when to retry and how long the
/// call waited for a place (its wait_ms, 50 ms).
fn assert_limit(p: &Value) {
    assert_eq!(p["error"]["code"], "PM_TERM_TIMEOUT", "{p:#}");
    assert_eq!(p["error"]["retriable"], true, "{p:#}");
    let d = &p["error"]["details"];
    assert_eq!(d["limit"], "running_commands", "{p:#}");
    assert!(d["retry_after_ms"].as_u64().unwrap() > 0, "{p:#}");
    assert!(d["queued_ms"].as_u64().unwrap() >= 50, "{p:#}");
    assert_eq!(d["may_have_run"], false, "{p:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_burst_over_the_running_cap_waits_its_turn_and_every_call_is_answered() {
    const MAX: usize = 2;
    let s = quiet_server("PM_TERM_MAX_SESSIONS", MAX).await;
    // The places are taken by commands that end in a moment; a burst of 40 arrives meanwhile.
    let mut short = headless("sleep 0.5");
    short["runtime"] = json!({"wait_ms": 50});
    for _ in 0..MAX {
        assert_eq!(s.call(short.clone()).await["success"], true);
    }
    let answers =
        futures_util::future::join_all((0..40).map(|i| s.call(headless(&format!("echo {i}")))))
            .await;
    let mut waited = 0;
    for (i, p) in answers.iter().enumerate() {
        assert_eq!(p["success"], true, "call {i} of the burst: {p:#}");
        assert_eq!(p["result"]["stdout"], format!("{i}\n"), "{p:#}");
        if let Some(note) = p["result"]["note"].as_str() {
            assert!(
                note.contains("for a place") && note.contains("at most 2 commands"),
                "{p:#}"
            );
            waited += 1;
        }
    }
    assert!(
        waited >= 1,
        "some of the burst waited behind the sleeps: {answers:#?}"
    );
    s.stop().await;
}
