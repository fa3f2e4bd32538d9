//! MCP over streamable HTTP through the real binary and rmcp's streamable HTTP client: two
//! clients with sessions of their own (their commands, and their share of the log), progress
//! over SSE, a call cancelled by its client, and — as users meet it — a server killed with
//! SIGKILL leaving none of its sessions' processes behind.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

const TOKEN: &str = "rmcp-http-test-token-0123456789abcdef";

/// The server process, killed when the test ends however it ends (a failed assertion must
/// not leave a server holding the test runner's pipes).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A server on `--http` at a free loopback port, started once its address is printed.
fn http_server() -> (Running, String) {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = server()
        .args(&["--http", &port.to_string()])
        .envs(&[("PM_TERM_HTTP_TOKEN", TOKEN), ("PM_TERM_NO_USER_RC", "1")])
        .std_command()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("serving MCP on http://127.0.0.1:"), "{line}");
    // The rest is read and dropped: a closed pipe would fail the server's later writes, and
    // an unread one would fill up and stall it.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (Running(child), format!("http://127.0.0.1:{port}/mcp"))
}

async fn http_client(url: &str, pid: u32) -> Server {
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(TOKEN);
    let transport = StreamableHttpClientTransport::from_config(config);
    client_over(transport, pid, Arc::default()).await
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_clients_over_http_have_sessions_of_their_own() {
    let (server, url) = http_server();
    let a = http_client(&url, server.0.id()).await;
    let b = http_client(&url, server.0.id()).await;
    let p = a.call(headless("echo one; echo two >&2")).await;
    assert_eq!(p["result"]["stdout"], "one\n", "{p:#}");
    let id = p["identity"]["session_id"].as_str().unwrap().to_string();
    // The session's state lives across requests of that session...
    let r = a
        .call(json!({"action": "read_output", "target": {"session_id": id}, "output": {"stdout_cursor": 0, "stderr_cursor": 0}}))
        .await;
    assert_eq!(r["result"]["stderr"], "two\n", "{r:#}");
    // ... and is not another session's.
    let r = b
        .call(json!({"action": "read_output", "target": {"session_id": id}}))
        .await;
    assert_eq!(code(&r), "PM_TERM_NOT_FOUND", "{r:#}");
    let (item, l) = b.listed(&id).await;
    assert!(item.is_none(), "{l:#}");
    // Progress reaches the client over the request's SSE stream.
    let mut slow = headless("sleep 1.5; echo slow");
    slow["runtime"] = json!({"wait_ms": 8000});
    let p = a.call_with_progress(slow, "tok-http").await;
    assert_eq!(p["result"]["stdout"], "slow\n");
    assert!(!a.recorder.progress.lock().unwrap().is_empty());
    // A call its client cancels (over its own POST): the command it started is stopped,
    // and the session goes on.
    let n = unique_sleep();
    let mut long = headless(&format!("sleep {n}"));
    long["runtime"] = json!({"wait_ms": 60000});
    let left = cancel_once_running(a.client.peer(), long, &n, 1).await;
    assert!(left.is_empty(), "ran on after the cancel: {left:?}");
    let p = a.call(headless("echo after")).await;
    assert_eq!(p["result"]["stdout"], "after\n", "{p:#}");
    a.stop().await;
    b.stop().await;
}

/// Each HTTP session has its own log level and receives the events of its own commands,
/// never another session's: two sessions at `info` each hear their own refused command
/// only, and a third that set nothing (warnings and errors) hears neither.
#[tokio::test(flavor = "multi_thread")]
#[allow(deprecated)] // logging/setLevel is the negotiated 2025-11-25 protocol's
async fn each_http_session_hears_its_own_log_at_its_own_level() {
    let (server, url) = http_server();
    let a = http_client(&url, server.0.id()).await;
    let b = http_client(&url, server.0.id()).await;
    let quiet = http_client(&url, server.0.id()).await;
    for s in [&a, &b] {
        s.client
            .set_level(rmcp::model::SetLevelRequestParams::new(
                rmcp::model::LoggingLevel::Info,
            ))
            .await
            .unwrap();
    }
    // Off the strict allowlist: refused, and the refusal logged at info with the command.
    let (word_a, word_b) = (unique("alpha-"), unique("beta-"));
    for (s, word) in [(&a, &word_a), (&b, &word_b)] {
        let r = s
            .call_result_of(
                "memory_terminal",
                json!({"command": format!("lsof /{word}")}),
            )
            .await;
        assert_eq!(r.is_error, Some(true), "{r:?}");
    }
    let heard = |s: &Server, word: &str| {
        s.recorder
            .logged
            .lock()
            .unwrap()
            .iter()
            .any(|m| m.contains(word))
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !(heard(&a, &word_a) && heard(&b, &word_b)) {
        assert!(
            std::time::Instant::now() < deadline,
            "each session's own refusal: {:?} / {:?}",
            a.recorder.logged.lock().unwrap(),
            b.recorder.logged.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A call after them all, answered: anything sent for them has arrived.
    for s in [&a, &b, &quiet] {
        s.call(json!({"action": "list"})).await;
    }
    assert!(
        !heard(&a, &word_b),
        "{:?}",
        a.recorder.logged.lock().unwrap()
    );
    assert!(
        !heard(&b, &word_a),
        "{:?}",
        b.recorder.logged.lock().unwrap()
    );
    assert!(
        !heard(&quiet, &word_a) && !heard(&quiet, &word_b),
        "{:?}",
        quiet.recorder.logged.lock().unwrap()
    );
    a.stop().await;
    b.stop().await;
    quiet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http_server_killed_with_sigkill_leaves_no_process_behind() {
    let (mut server, url) = http_server();
    let a = http_client(&url, server.0.id()).await;
    let tag = unique("itmcp-http-kill-");
    let mut req = headless(&format!("sleep 300 # {tag}"));
    req["runtime"] = json!({"wait_ms": 100});
    let p = a.call(req).await;
    assert_eq!(p["result"]["running"], true, "{p:#}");
    assert_eq!(wait_present(&tag, 1, Duration::from_secs(5)).await, 1);
    sigkill(server.0.id());
    server.0.wait().unwrap();
    let left = wait_gone(&tag, Duration::from_secs(10)).await;
    assert!(left.is_empty(), "still running after SIGKILL: {left:?}");
}
