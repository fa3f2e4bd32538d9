//! One interactive suite, run against every adapter: local (embedded core), bundled (a host
//! launched from the binary beside the server), container_bridge (a host reached over TCP
//! with the container environment of docs/bridge-protocol.md). The contract must not tell them apart.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::time::Duration;

use common::*;
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

fn exec(target: Option<&str>, execution: Value) -> Value {
    let mut v = json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "execution": execution, "runtime": {"wait_ms": 10000}});
    if let Some(t) = target {
        v["target"] = json!({"terminal_id": t});
    }
    v
}

async fn suite(s: &Server, adapter: &str) {
    // Open a shell.
    let p = s.call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
        "runtime": {"cwd": "/tmp"}})).await;
    assert_eq!(p["success"], true, "{p:#}");
    assert_eq!(p["resolved"]["adapter"], adapter);
    assert_eq!(p["result"]["supports_command_detection"], true);
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    // A detected command with its exit code and only its output.
    let r = s
        .call(exec(
            Some(&id),
            json!({"command": "printf 'one\\ntwo\\n'; (exit 5)"}),
        ))
        .await;
    assert_eq!(r["result"]["output"], "one\ntwo\n", "{r:#}");
    assert_eq!(r["result"]["exit_code"], 5);
    assert_eq!(r["resolved"]["adapter"], adapter);
    // The same terminal whatever the adapter: it answers a program's query (device
    // attributes) and draws the line-drawing set.
    let r = s
        .call(exec(
            Some(&id),
            json!({"command": "old=$(stty -g); stty raw -echo; printf '\\033[c'; read -rs -t 5 -d c a; stty \"$old\"; printf 'da[%s]\\n' \"${a#?}\"; printf '\\033(0lqk\\033(B\\n'"}),
        ))
        .await;
    assert!(
        r["result"]["output"]
            .as_str()
            .unwrap_or_default()
            .contains("da[[?1;2]"),
        "{r:#}"
    );
    let screen = s
        .call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"view": "screen"}}))
        .await;
    assert!(
        screen["result"]["screen"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("┌─┐"),
        "{screen:#}"
    );
    // A new terminal running a command.
    let n = s.call(exec(None, json!({"command": "pwd"}))).await;
    assert_eq!(n["result"]["exit_code"], 0, "{n:#}");
    let n_id = n["identity"]["terminal_id"].as_str().unwrap().to_string();
    // Raw input into a REPL.
    let r = s
        .call(exec(
            Some(&id),
            json!({"input": "python3 -q\r", "wait_for": ">>> $"}),
        ))
        .await;
    assert!(
        r["result"]["output"].as_str().unwrap().ends_with(">>> "),
        "{r:#}"
    );
    let r = s
        .call(exec(
            Some(&id),
            json!({"input": "print(2**10)\r", "wait_for": ">>> $"}),
        ))
        .await;
    assert!(r["result"]["output"].as_str().unwrap().contains("1024"));
    s.call(exec(Some(&id), json!({"keys": ["ctrl-d"]}))).await;
    // Cursor reads: the whole stream, then nothing new.
    let all = s.call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"cursor": 0, "view": "raw"}})).await;
    let raw = all["result"]["output"]
        .as_str()
        .unwrap_or_else(|| panic!("{all:#}"));
    assert!(raw.contains("one\r\ntwo") && raw.contains("1024"));
    let commands = s.call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"view": "commands"}})).await;
    let cmds = commands["result"]["commands"].as_array().unwrap();
    assert_eq!(cmds[0]["exit_code"], 5);
    let screen = s.call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"view": "screen"}})).await;
    assert!(
        screen["result"]["screen"]["text"]
            .as_str()
            .unwrap()
            .contains("1024")
    );
    // The terminal is a resource whatever the adapter.
    let uri = format!("ahp-terminal:/{id}");
    let res = s
        .client
        .read_resource(ReadResourceRequestParams::new(uri.clone()))
        .await
        .unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &res.contents[0] else {
        panic!()
    };
    let state: Value = serde_json::from_str(text).unwrap();
    assert_eq!(state["supportsCommandDetection"], true);
    // list shows both terminals with their adapter.
    let l = s
        .call(json!({"action": "list", "invocation": {"mode": "interactive"}}))
        .await;
    let items = l["result"]["items"].as_array().unwrap();
    for tid in [&id, &n_id] {
        let it = items
            .iter()
            .find(|i| i["id"] == tid.as_str())
            .unwrap_or_else(|| panic!("{tid} listed: {l:#}"));
        assert_eq!(it["adapter"], adapter);
    }
    // A call cancelled while its command runs, whatever serves the terminal: the command
    // typed into an existing terminal is interrupted, a terminal opened for it is killed.
    for target in [Some(n_id.as_str()), None] {
        let n = unique_sleep();
        let command = format!("echo unread-{n}; sleep {n}");
        let mut q = exec(target, json!({ "command": command }));
        q["runtime"]["wait_ms"] = json!(60000);
        let left = cancel_once_running(s.client.peer(), q, &n, 1).await;
        assert!(left.is_empty(), "{adapter}, {target:?}: ran on: {left:?}");
        // Its answer reached nobody: the next read shows what the command printed (once the
        // server has heard the command end).
        if let Some(t) = target {
            let read = json!({"action": "read_output", "target": {"terminal_id": t}});
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            loop {
                let r = s.call(read.clone()).await;
                let text = r["result"]["output"].as_str().unwrap_or_default();
                if text.contains(&format!("\nunread-{n}")) || text.starts_with("unread-") {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{adapter}: lost: {r:#}"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    // Terminate: killed, still readable.
    let t = s
        .call(json!({"action": "terminate", "target": {"terminal_id": id}}))
        .await;
    assert_eq!(t["success"], true, "{t:#}");
    assert_eq!(t["result"]["running"], false);
    let after = s.call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"cursor": 0}})).await;
    assert!(after["result"]["output"].as_str().unwrap().contains("two"));
    let nf = s
        .call(json!({"action": "read_output", "target": {"terminal_id": "term_NOT_THERE"}}))
        .await;
    assert_eq!(code(&nf), "PM_TERM_NOT_FOUND");
    // Headless requests still run where the server runs.
    let h = s.call(headless("echo headless-here")).await;
    assert_eq!(h["result"]["stdout"], "headless-here\n");
    assert!(h["resolved"].get("adapter").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn local_adapter() {
    let s = server().envs(&[("PM_TERM_NO_USER_RC", "1")]).start().await;
    suite(&s, "local").await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bundled_adapter_from_the_sibling_binary() {
    let s = server()
        .envs(&[
            ("PM_TERM_NO_USER_RC", "1"),
            ("PM_TERM_ADAPTER_MODE", "bundled"),
        ])
        .start()
        .await;
    suite(&s, "bundled").await;
    // The server launched its sibling host: a child process while the server runs.
    let host_pids: Vec<u32> = children_of(s.pid)
        .into_iter()
        .filter(|c| {
            std::fs::read(format!("/proc/{c}/cmdline"))
                .map(|cmd| String::from_utf8_lossy(&cmd).contains("--lifeline"))
                .unwrap_or(false)
        })
        .collect();
    assert!(
        !host_pids.is_empty(),
        "no launched host among the server's children: {:?}",
        children_of(s.pid)
    );
    s.stop().await;
    // The launched host goes with the server.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while host_pids.iter().any(|p| alive(*p)) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let left: Vec<u32> = host_pids.into_iter().filter(|p| alive(*p)).collect();
    assert!(
        left.is_empty(),
        "launched host outlived the server: {left:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn container_bridge_adapter() {
    let host = host("tok-bridge-suite").start();
    let s = bridged_server(host.port, "tok-bridge-suite")
        .envs(&[
            ("PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS", "2000"),
            ("PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS", "30000"),
        ])
        .start()
        .await;
    suite(&s, "container_bridge").await;
    s.stop().await;
}
