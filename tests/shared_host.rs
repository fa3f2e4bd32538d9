//! Several MCP servers on one host service: a terminal belongs to the server (client) that
//! opened it. Another may see it listed, but not read it, type into it or end it — not
//! through the contract, not over raw AHP, not by taking over the owner's client id — unless
//! the host's operator shares terminals. A person on the page may do anything.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::time::Duration;

use common::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

/// One raw AHP request on a fresh token connection; the answer.
async fn raw(addr: &str, token: &str, msgs: &[Value]) -> Vec<Value> {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ahp?token={token}"))
        .await
        .unwrap();
    let (mut tx, mut rx) = ws.split();
    let mut answers = Vec::new();
    for m in msgs {
        tx.send(Message::text(m.to_string())).await.unwrap();
        loop {
            let Ok(Some(Ok(Message::Text(t)))) =
                tokio::time::timeout(Duration::from_secs(10), rx.next()).await
            else {
                panic!("no answer to {m}");
            };
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["id"] == m["id"] {
                answers.push(v);
                break;
            }
        }
    }
    answers
}

fn init(id: u64, client: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "channel": "ahp-root://", "protocolVersions": ["1.0.0"], "clientId": client}})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_belongs_to_the_server_that_opened_it() {
    let host = host("tok-shared").start();
    let a = start_bridged(&host).await;
    let b = start_bridged(&host).await;
    let p = a
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": "echo secret-of-a"}}))
        .await;
    assert_eq!(p["success"], true, "{p:#}");
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();

    // B, with a terminal of its own on the same host, sees A's listed...
    let own = b
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}))
        .await;
    assert_eq!(own["success"], true, "{own:#}");
    let (item, _) = b.listed(&id).await;
    let item = item.expect("listed for everyone");
    // ... but cannot read, type into or end it.
    let r = b
        .call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"cursor": 0}}))
        .await;
    assert_eq!(r["success"], false, "{r:#}");
    assert!(!r.to_string().contains("secret-of-a"), "{r:#}");
    let r = b
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"command": "echo from-b"}}))
        .await;
    assert_eq!(r["success"], false, "{r:#}");
    let r = b
        .call(json!({"action": "terminate", "target": {"terminal_id": id}}))
        .await;
    assert_eq!(r["success"], false, "{r:#}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another client"),
        "{r:#}"
    );

    // Over raw AHP with the token: no subscription, no input.
    let uri = format!("ahp-terminal:/{id}");
    let answers = raw(
        &host.addr,
        &host.token,
        &[
            init(1, "intruder"),
            json!({"jsonrpc": "2.0", "id": 2, "method": "subscribe", "params": {"channel": uri}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "disposeTerminal", "params": {"channel": uri}}),
        ],
    )
    .await;
    assert!(answers[1]["error"].is_object(), "{:?}", answers[1]);
    assert!(answers[2]["error"].is_object(), "{:?}", answers[2]);
    assert_eq!(item["state"], "running");
    // A client id is bound to the secret that first claimed it: knowing the name is not
    // enough to act as its owner.
    let mut owner = init(1, "owner-x");
    owner["params"]["_meta"] =
        json!({"interactiveTerminal": {"clientSecret": "s3cret-of-owner-x"}});
    let answers = raw(&host.addr, &host.token, &[owner.clone()]).await;
    assert!(answers[0]["result"].is_object(), "{:?}", answers[0]);
    let mut wrong = owner.clone();
    wrong["params"]["_meta"]["interactiveTerminal"]["clientSecret"] = json!("guess");
    for attempt in [init(1, "owner-x"), wrong] {
        let answers = raw(&host.addr, &host.token, &[attempt]).await;
        assert!(
            answers[0]["error"].is_object(),
            "took over owner-x: {:?}",
            answers[0]
        );
    }
    let answers = raw(&host.addr, &host.token, &[owner]).await;
    assert!(
        answers[0]["result"].is_object(),
        "the owner itself comes back: {:?}",
        answers[0]
    );

    // A is not disturbed.
    let r = a
        .call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"cursor": 0}}))
        .await;
    assert!(
        r["result"]["output"]
            .as_str()
            .unwrap()
            .contains("secret-of-a"),
        "{r:#}"
    );

    // The person on the page may look.
    let session = sign_in(&host.addr, &host.login).await;
    let ws = page_socket(&host.addr, &session).await;
    let (mut tx, mut rx) = ws.split();
    for m in [
        init(1, "person"),
        json!({"jsonrpc": "2.0", "id": 2, "method": "subscribe", "params": {"channel": uri}}),
    ] {
        tx.send(Message::text(m.to_string())).await.unwrap();
    }
    let mut seen = false;
    while let Ok(Some(Ok(Message::Text(t)))) =
        tokio::time::timeout(Duration::from_secs(10), rx.next()).await
    {
        let v: Value = serde_json::from_str(&t).unwrap();
        if v["id"] == 2 {
            assert!(v["result"]["snapshot"].is_object(), "{v}");
            seen = true;
            break;
        }
    }
    assert!(seen);
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operator_may_share_terminals() {
    let mut host = host("tok-share").args(&["--share-terminals"]).start();
    let a = start_bridged(&host).await;
    let b = start_bridged(&host).await;
    let p = a
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": "echo shared-line"}}))
        .await;
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let r = b
        .call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"cursor": 0}}))
        .await;
    assert!(
        r["result"]["output"]
            .as_str()
            .unwrap()
            .contains("shared-line"),
        "{r:#}"
    );
    a.stop().await;
    b.stop().await;
    let _ = host.child.kill();
}
