//! A client of the 2026-07-28 protocol over stdio, as rmcp's client speaks it: no
//! `initialize` (`server/discover` first, the protocol version on every request), and a
//! terminal's updates through `subscriptions/listen` instead of `resources/subscribe`.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::time::{Duration, Instant};

use common::*;
use rmcp::model::{ServerNotification, SubscriptionFilter};

/// What the server logs once it has stopped on its own (and killed what it started).
const STOPPED: &str = "stopped; every process this server started was killed";

fn updated(n: &ServerNotification, uri: &str) -> bool {
    matches!(n, ServerNotification::ResourceUpdatedNotification(u) if u.params.uri == uri)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_2026_client_listens_for_a_terminals_updates_and_the_list() {
    let s = server()
        .env("PM_TERM_NO_USER_RC", "1")
        // Its own shutdown is logged at this level: the end of the test looks for it.
        .env("PM_TERM_LOG", "info")
        .protocol_2026()
        .capture_stderr()
        .start()
        .await;
    let p = s.call(open_terminal()).await;
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let uri = format!("ahp-terminal:/{id}");
    let mut sub = s
        .client
        .listen(
            SubscriptionFilter::builder()
                .resource_subscription(uri.clone())
                .resource_subscription("file:///etc/passwd")
                .resources_list_changed()
                .build(),
        )
        .await
        .expect("subscriptions/listen is served");
    // What names no terminal is not granted; the terminal and the list are.
    assert_eq!(
        sub.acknowledged().resource_subscriptions,
        Some(vec![uri.clone()])
    );
    assert_eq!(sub.acknowledged().resources_list_changed, Some(true));

    let r = s.call(terminal_command(&id, "echo listened")).await;
    assert_eq!(r["result"]["output"], "listened\n", "{r:#}");
    next_matching(&mut sub, "an update of the terminal", |n| updated(n, &uri)).await;

    // A terminal opened now changes the list.
    s.call(open_terminal()).await;
    next_matching(&mut sub, "a list change", |n| {
        matches!(n, ServerNotification::ResourceListChangedNotification(_))
    })
    .await;

    // Cancelled by the client: the request ends, and the server goes on serving.
    sub.cancel().await.unwrap();
    let r = s.call(terminal_command(&id, "echo after")).await;
    assert_eq!(r["result"]["output"], "after\n", "{r:#}");

    // A second listen, left open when the client goes: it ends with the client's input, and
    // the server stops on its own. Left open, it would hold the server in its transport's
    // drain (5 s) until the client's own patience ran out and it killed the server.
    let _open = s
        .client
        .listen(
            SubscriptionFilter::builder()
                .resource_subscription(uri.clone())
                .build(),
        )
        .await
        .unwrap();
    let pid = s.pid;
    let log = s.stderr.clone();
    s.stop().await;
    wait_gone(pid).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !log.lock().unwrap().contains(STOPPED) {
        assert!(
            Instant::now() < deadline,
            "the server did not stop on its own: {}",
            log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Stopped because its input ended, not because the client gave up and signalled it.
    let log = log.lock().unwrap().clone();
    assert!(!log.contains("INFO SIGTERM"), "{log}");
    assert!(!log.contains("timed out draining"), "{log}");
}

/// Until the process `pid` has exited (at most 20 s).
async fn wait_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
    {
        assert!(
            Instant::now() < deadline,
            "the server {pid} is still running"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
