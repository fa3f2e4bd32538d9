//! The host service driven by Microsoft's `ahp` client over the `ahp-ws` transport: version
//! negotiation, createTerminal, following a terminal with the `ahp` reducers, dispatched
//! input, claims and rejections, reconnect with replay, dispose, tokens.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use ahp::{Client, ClientConfig, ClientError, SubscriptionEvent};
use ahp_types::PROTOCOL_VERSION;
use ahp_types::actions::{StateAction, TerminalClaimedAction, TerminalInputAction};
use ahp_types::commands::{CreateTerminalParams, DisposeTerminalParams, ReconnectResult};
use ahp_types::state::{SnapshotState, TerminalClaim, TerminalClientClaim, TerminalState};
use common::{HostProc, ahp_client, create_terminal, host, http_get, sign_in};
use serde_json::Value;

/// The next action on `sub` that `wanted` accepts (within 5 s).
async fn next_action(
    sub: &mut ahp::SessionSubscription,
    wanted: impl Fn(&ahp_types::ActionEnvelope) -> bool,
) -> ahp_types::ActionEnvelope {
    loop {
        let Some(SubscriptionEvent::Action(env)) =
            tokio::time::timeout(Duration::from_secs(5), sub.recv())
                .await
                .unwrap()
        else {
            continue;
        };
        if wanted(&env) {
            return env;
        }
    }
}

fn terminal_uri(name: &str) -> String {
    format!("ahp-terminal:/term_{name}_{}", std::process::id())
}

async fn create(client: &Client, uri: &str, holder: &str) {
    let r = create_terminal(client, uri, holder).await.unwrap();
    assert!(r.is_null());
}

fn terminal_state(snap: Option<ahp_types::commands::SubscribeResult>) -> TerminalState {
    match snap.and_then(|s| s.snapshot).map(|s| s.state) {
        Some(SnapshotState::Terminal(t)) => *t,
        other => panic!("not a terminal snapshot: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ahp_client_follows_a_terminal_with_its_reducers() {
    let h = host("tok-follow").start();
    let client = ahp_client(&h, "follower").await;
    let uri = terminal_uri("follow");
    create(&client, &uri, "follower").await;
    let (snap, mut sub) = client.subscribe(uri.clone()).await.unwrap();
    let mut mirror = terminal_state(Some(snap));
    client
        .dispatch(
            uri.clone(),
            StateAction::TerminalInput(TerminalInputAction {
                data: "echo from-ahp; (exit 4)\r".into(),
            }),
        )
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut finished = None;
    let mut echoed_input = false;
    while finished.is_none() {
        let ev = tokio::time::timeout_at(deadline.into(), sub.recv())
            .await
            .unwrap()
            .unwrap();
        let SubscriptionEvent::Action(env) = ev else {
            continue;
        };
        ahp::reducers::apply_action_to_terminal(&mut mirror, &env.action);
        match &env.action {
            StateAction::TerminalInput(_) => {
                echoed_input = env
                    .origin
                    .as_ref()
                    .is_some_and(|o| o.client_id == "follower");
            }
            StateAction::TerminalCommandFinished(f) => finished = Some(f.exit_code),
            _ => {}
        }
    }
    assert!(
        echoed_input,
        "the dispatched input is echoed with its origin"
    );
    assert_eq!(finished, Some(Some(4)));
    // The mirror built by Microsoft's reducer equals the host's own state.
    tokio::time::sleep(Duration::from_millis(300)).await;
    while let Ok(Some(SubscriptionEvent::Action(env))) =
        tokio::time::timeout(Duration::from_millis(100), sub.recv()).await
    {
        ahp::reducers::apply_action_to_terminal(&mut mirror, &env.action);
    }
    let (fresh, _) = client.subscribe(uri.clone()).await.unwrap();
    let fresh = terminal_state(Some(fresh));
    assert_eq!(mirror.content, fresh.content);
    assert_eq!(mirror.supports_command_detection, Some(true));
    client.ping().await.unwrap();
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn claims_are_held_and_rejections_carry_a_reason() {
    let h = host("tok-claims").start();
    let a = ahp_client(&h, "alice").await;
    let b = ahp_client(&h, "bob").await;
    let uri = terminal_uri("claims");
    create(&a, &uri, "alice").await;
    let (_, mut sub_a) = a.subscribe(uri.clone()).await.unwrap();
    // Alice's terminal is hers: Bob may not watch it, nor take its claim.
    match b.subscribe(uri.clone()).await {
        Err(ClientError::Rpc(e)) => {
            assert_eq!(
                e.code,
                ahp_types::errors::ahp_error_codes::PERMISSION_DENIED
            );
            assert!(e.message.contains("another client"), "{}", e.message);
        }
        Err(other) => panic!("unexpected error: {other:?}"),
        Ok(_) => panic!("Bob subscribed to Alice's terminal"),
    }
    b.dispatch(uri.clone(), claim_for("bob")).await.unwrap();
    let (snap, _) = a.subscribe(uri.clone()).await.unwrap();
    assert_eq!(
        terminal_state(Some(snap)).claim,
        TerminalClaim::Client(TerminalClientClaim {
            client_id: "alice".into()
        }),
        "Bob's grab did not land"
    );
    // Alice hands the claim over: now Bob may.
    a.dispatch(uri.clone(), claim_for("bob")).await.unwrap();
    let (snap_b, _) = b.subscribe(uri.clone()).await.unwrap();
    assert_eq!(
        terminal_state(Some(snap_b)).claim,
        TerminalClaim::Client(TerminalClientClaim {
            client_id: "bob".into()
        })
    );
    for sub in [&mut sub_a] {
        let env = next_action(sub, |e| matches!(e.action, StateAction::TerminalClaimed(_))).await;
        assert!(env.rejection_reason.is_none());
        let StateAction::TerminalClaimed(c) = &env.action else {
            unreachable!()
        };
        assert_eq!(
            c.claim,
            TerminalClaim::Client(TerminalClientClaim {
                client_id: "bob".into()
            })
        );
    }
    // Non-dispatchable actions are refused too.
    let (_, mut sub) = a.subscribe(uri.clone()).await.unwrap();
    a.dispatch(uri.clone(), StateAction::TerminalExited(Default::default()))
        .await
        .unwrap();
    let env = next_action(&mut sub, |e| {
        matches!(e.action, StateAction::TerminalExited(_))
    })
    .await;
    assert!(env.rejection_reason.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn version_negotiation_tokens_and_bind_rules() {
    let h = host("tok-version").start();
    let url = format!("ws://{}/ahp?token={}", h.addr, h.token);
    let c = Client::connect(
        ahp_ws::WebSocketTransport::connect(&url).await.unwrap(),
        ClientConfig::default(),
    )
    .await
    .unwrap();
    match c
        .initialize("old".into(), vec!["9.9.9".into()], vec![])
        .await
    {
        Err(ClientError::Rpc(e)) => {
            assert_eq!(
                e.code,
                ahp_types::errors::ahp_error_codes::UNSUPPORTED_PROTOCOL_VERSION
            );
            let versions = e.data.unwrap()["supportedVersions"].clone();
            assert!(
                versions
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|v| v == PROTOCOL_VERSION)
            );
        }
        other => panic!("expected UnsupportedProtocolVersion, got {other:?}"),
    }
    // No token, or a wrong one: refused at the upgrade.
    for bad in [
        format!("ws://{}/ahp", h.addr),
        format!("ws://{}/ahp?token=nope", h.addr),
    ] {
        assert!(
            ahp_ws::WebSocketTransport::connect(&bad).await.is_err(),
            "{bad}"
        );
    }
    // The page itself holds no secret and is served to anyone; what it connects to needs a
    // credential: never a token in its URL, but a page session from the one-time link, or
    // (a program) the token in a header.
    let page = http_get(&h.addr, "/", &[]).await;
    assert!(
        page.starts_with("HTTP/1.1 200") && page.contains("<title>interactive-terminal</title>"),
        "{page}"
    );
    assert!(!page.contains(&h.token));
    let health = http_get(&h.addr, "/healthz", &[]).await;
    assert!(health.starts_with("HTTP/1.1 401"), "{health}");
    let health = http_get(&h.addr, &format!("/healthz?token={}", h.token), &[]).await;
    assert!(health.starts_with("HTTP/1.1 401"), "{health}");
    let bearer = format!("Bearer {}", h.token);
    let health = http_get(&h.addr, "/healthz", &[("Authorization", &bearer)]).await;
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let session = sign_in(&h.addr, &h.login).await;
    let origin = format!("http://{}", h.addr);
    let upgrade = |protocols: String| {
        vec![
            ("Upgrade".to_string(), "websocket".to_string()),
            ("Connection".to_string(), "Upgrade".to_string()),
            (
                "Sec-WebSocket-Key".to_string(),
                "dGhlIHNhbXBsZSBub25jZQ==".to_string(),
            ),
            ("Sec-WebSocket-Version".to_string(), "13".to_string()),
            ("Origin".to_string(), origin.clone()),
            ("Sec-WebSocket-Protocol".to_string(), protocols),
        ]
    };
    let ask = |headers: Vec<(String, String)>| {
        let addr = h.addr.clone();
        async move {
            let refs: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            http_get(&addr, "/ahp", &refs).await
        }
    };
    let ws = ask(upgrade(common::page_protocols(&session))).await;
    assert!(ws.starts_with("HTTP/1.1 101"), "{ws}");
    assert!(ws.contains("Sec-WebSocket-Protocol: itmcp-page"), "{ws}");
    let ws = ask(upgrade(common::page_protocols("1-forged.00"))).await;
    assert!(ws.starts_with("HTTP/1.1 401"), "{ws}");
    // A public address without a configured token is refused.
    let out = Command::new(common::HOST_BIN)
        .args(["--bind", "0.0.0.0", "--port", "0"])
        .env_remove("PM_INTERACTIVE_TERMINAL_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("non-loopback"));
}

/// A host whose terminals are shared, and a terminal `name` created by client `holder`.
async fn shared_terminal(token: &str, name: &str, holder: &str) -> (HostProc, Client, String) {
    let h = host(token).args(&["--share-terminals"]).start();
    let client = ahp_client(&h, holder).await;
    let uri = terminal_uri(name);
    create(&client, &uri, holder).await;
    (h, client, uri)
}

/// A new connection to `h` that has not said who it is yet (it will `reconnect`).
async fn connect_again(h: &HostProc) -> Client {
    let url = format!("ws://{}/ahp?token={}", h.addr, h.token);
    Client::connect(
        ahp_ws::WebSocketTransport::connect(&url).await.unwrap(),
        ClientConfig::default(),
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn reconnect_replays_what_was_missed_and_dispose_removes() {
    // Another client types into the watcher's terminal while it is away: shared terminals.
    let (h, a, uri) = shared_terminal("tok-reconnect", "replay", "watcher").await;
    let (snap, mut sub) = a.subscribe(uri.clone()).await.unwrap();
    let mut mirror = terminal_state(Some(snap));
    let mut last_seq = 0u64;
    // Follow until the first prompt, then drop the connection.
    let deadline = Instant::now() + Duration::from_secs(10);
    while mirror.supports_command_detection != Some(true) {
        if let SubscriptionEvent::Action(env) = tokio::time::timeout_at(deadline.into(), sub.recv())
            .await
            .unwrap()
            .unwrap()
        {
            ahp::reducers::apply_action_to_terminal(&mut mirror, &env.action);
            last_seq = env.server_seq;
        }
    }
    a.shutdown().await;
    // Someone else makes things happen meanwhile.
    let other = ahp_client(&h, "other").await;
    other
        .dispatch(
            uri.clone(),
            StateAction::TerminalInput(TerminalInputAction {
                data: "echo while-away\r".into(),
            }),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    // The watcher comes back: replay from its last sequence.
    let back = connect_again(&h).await;
    match back
        .reconnect("watcher".into(), last_seq as i64, vec![uri.clone()])
        .await
        .unwrap()
    {
        ReconnectResult::Replay(r) => {
            assert!(r.missing.is_empty());
            assert!(
                r.actions
                    .iter()
                    .all(|e| e.server_seq > last_seq && e.channel == uri)
            );
            for e in &r.actions {
                ahp::reducers::apply_action_to_terminal(&mut mirror, &e.action);
            }
            let text: String = mirror
                .content
                .iter()
                .map(|p| match p {
                    ahp_types::state::TerminalContentPart::Command(c) => c.output.clone(),
                    ahp_types::state::TerminalContentPart::Unclassified(u) => u.value.clone(),
                    _ => String::new(),
                })
                .collect();
            assert!(text.contains("while-away"), "{text:?}");
        }
        ReconnectResult::Snapshot(_) => panic!("the log still holds the gap: expected a replay"),
    }
    // A sequence from another life of the host gets a snapshot.
    match back
        .reconnect("watcher".into(), 1 << 40, vec![uri.clone()])
        .await
        .unwrap()
    {
        ReconnectResult::Snapshot(s) => assert_eq!(s.snapshots.len(), 1),
        ReconnectResult::Replay(_) => panic!("expected a snapshot"),
    }
    // Dispose: the root list drops it; a reconnect reports it missing.
    let _: Value = back
        .request(
            "disposeTerminal",
            DisposeTerminalParams {
                channel: uri.clone(),
                meta: None,
            },
        )
        .await
        .unwrap();
    match back
        .reconnect("watcher".into(), last_seq as i64, vec![uri.clone()])
        .await
        .unwrap()
    {
        ReconnectResult::Replay(r) => assert_eq!(r.missing, vec![uri.clone()]),
        ReconnectResult::Snapshot(s) => assert!(s.snapshots.is_empty()),
    }
}

/// Every action on `sub` until it has been quiet for `quiet`.
async fn drain(
    sub: &mut ahp::SessionSubscription,
    quiet: Duration,
) -> Vec<ahp_types::ActionEnvelope> {
    let mut out = Vec::new();
    while let Ok(Some(ev)) = tokio::time::timeout(quiet, sub.recv()).await {
        if let SubscriptionEvent::Action(env) = ev {
            out.push(env);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replay_is_what_the_live_feed_carried_envelope_for_envelope() {
    // The log keeps small output and input compactly and builds their envelopes again for
    // a replay: a client that was away must get exactly what one that stayed saw.
    let (h, stayed, uri) = shared_terminal("tok-replay-same", "replaysame", "stayed").await;
    let (_, mut live) = stayed.subscribe(uri.clone()).await.unwrap();
    let away = ahp_client(&h, "away").await;
    let (snap, _away_sub) = away.subscribe(uri.clone()).await.unwrap();
    let left_at = snap.snapshot.map(|s| s.from_seq).unwrap() as u64;
    away.shutdown().await;
    // Small output in many pieces (prompts, echoes, a few lines), and one piece larger than
    // the log keeps compactly.
    for line in [
        "head -c 20000 /dev/zero | tr '\\0' a; echo\r",
        "for i in 1 2 3; do echo \"line $i é\"; done\r",
        "echo done-typing\r",
    ] {
        stayed
            .dispatch(
                uri.clone(),
                StateAction::TerminalInput(TerminalInputAction { data: line.into() }),
            )
            .await
            .unwrap();
    }
    let mut seen = drain(&mut live, Duration::from_millis(1500)).await;
    seen.retain(|e| e.server_seq > left_at);
    let back = connect_again(&h).await;
    let ReconnectResult::Replay(r) = back
        .reconnect("away".into(), left_at as i64, vec![uri.clone()])
        .await
        .unwrap()
    else {
        panic!("the log still holds the gap: expected a replay")
    };
    let output = |es: &[ahp_types::ActionEnvelope]| -> String {
        es.iter()
            .filter_map(|e| match &e.action {
                StateAction::TerminalData(d) => Some(d.data.as_str()),
                _ => None,
            })
            .collect()
    };
    assert!(output(&seen).contains("done-typing"), "{seen:?}");
    assert!(output(&seen).contains("line 3 é"), "{seen:?}");
    assert!(
        seen.iter()
            .any(|e| matches!(&e.action, StateAction::TerminalData(d) if d.data.len() > 1024)),
        "one piece of output is larger than the log keeps compactly: {seen:?}"
    );
    assert_eq!(r.actions, seen);
    back.shutdown().await;
    stayed.shutdown().await;
}

/// `terminal/claimed` handing the terminal to `client`.
fn claim_for(client: &str) -> StateAction {
    StateAction::TerminalClaimed(TerminalClaimedAction {
        claim: TerminalClaim::Client(TerminalClientClaim {
            client_id: client.into(),
        }),
    })
}

/// A client's `createTerminal` whose cwd is a broken percent-escape (`%` before a multi-byte
/// character, a lone `%`) gets an answer, and the host keeps serving: the cwd arrives from
/// the network and must never take the host down.
#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_cwd_is_answered_and_the_host_stays_up() {
    let h = host("tok-cwd").start();
    let client = ahp_client(&h, "hostile").await;
    for (i, cwd) in ["file:///%aé", "file:///tmp/%", "file:///tmp/%4"]
        .iter()
        .enumerate()
    {
        let params = CreateTerminalParams {
            channel: terminal_uri(&format!("cwd{i}")),
            meta: None,
            claim: TerminalClaim::Client(TerminalClientClaim {
                client_id: "hostile".into(),
            }),
            name: None,
            cwd: Some((*cwd).into()),
            cols: Some(80),
            rows: Some(24),
        };
        let answer = tokio::time::timeout(
            Duration::from_secs(10),
            client.request::<_, Value>("createTerminal", params),
        )
        .await;
        // Created (a directory by that name may exist) or refused with a reason; never silence.
        assert!(answer.is_ok(), "{cwd}: no answer");
    }
    // Still serving: a new client connects and creates a terminal in a real directory.
    let other = ahp_client(&h, "after").await;
    create(&other, &terminal_uri("after-hostile"), "after").await;
    let mut h = h;
    assert!(h.child.try_wait().unwrap().is_none(), "the host died");
}

/// A client may not make the host hold a screen of any size: `createTerminal` and
/// `terminal/resized` past 100,000 cells (or 1000 columns or rows) are refused with the
/// reason, the terminal keeps its size, and the host keeps serving. A 1000 × 1000 screen
/// held 1.5 million cells of 32 bytes, and a client could ask for 65535 × 65535.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_cannot_ask_for_a_screen_past_the_cell_limit() {
    use ahp_types::actions::TerminalResizedAction;
    let h = host("tok-size").start();
    let client = ahp_client(&h, "sizer").await;
    for (i, (cols, rows)) in [(1000, 1000), (65535, 65535)].into_iter().enumerate() {
        let params = CreateTerminalParams {
            channel: terminal_uri(&format!("size{i}")),
            meta: None,
            claim: TerminalClaim::Client(TerminalClientClaim {
                client_id: "sizer".into(),
            }),
            name: None,
            cwd: None,
            cols: Some(cols),
            rows: Some(rows),
        };
        match client.request::<_, Value>("createTerminal", params).await {
            Err(ClientError::Rpc(e)) => assert!(
                e.message.contains("cells") || e.message.contains("1..=1000"),
                "{cols}x{rows}: {}",
                e.message
            ),
            other => panic!("{cols}x{rows} was not refused: {other:?}"),
        }
    }
    let uri = terminal_uri("size-ok");
    create(&client, &uri, "sizer").await;
    let (_, mut sub) = client.subscribe(uri.clone()).await.unwrap();
    for (cols, rows) in [(1000, 1000), (-5, 70000)] {
        client
            .dispatch(
                uri.clone(),
                StateAction::TerminalResized(TerminalResizedAction { cols, rows }),
            )
            .await
            .unwrap();
        let env = next_action(
            &mut sub,
            |e| matches!(&e.action, StateAction::TerminalResized(r) if r.cols == cols),
        )
        .await;
        let why = env.rejection_reason.unwrap_or_default();
        assert!(
            why.contains("cells") || why.contains("1..=1000"),
            "{cols}x{rows}: {why:?}"
        );
    }
    let (snap, _) = client.subscribe(uri.clone()).await.unwrap();
    let state = terminal_state(Some(snap));
    assert_eq!((state.cols, state.rows), (Some(100), Some(30)), "{state:?}");
    let mut h = h;
    assert!(h.child.try_wait().unwrap().is_none(), "the host died");
}

/// Approvals are their own request (`pm/approval/ask`), not a terminal operation: with no
/// page signed in a token client is answered `unavailable` at once, the same request id
/// asked again gets the same answer, a malformed question is refused, and `pm/terminal`
/// no longer knows an `approval` op.
#[tokio::test(flavor = "multi_thread")]
async fn approvals_are_asked_apart_from_terminal_operations() {
    let h = host("tok-ask").start();
    let client = ahp_client(&h, "asker").await;
    let question = serde_json::json!({
        "request_id": "req_ask1", "trace_id": "trace_ask1", "command": "git push --force",
        "cwd": null, "terminal_id": null, "warning": "force push", "rule": "git_force_push",
        "timeout_ms": 5000, "page_wait_ms": 0,
    });
    let params = serde_json::json!({"request_id": "req_ask1/approval", "approval": question});
    for _ in 0..2 {
        let r: Value = tokio::time::timeout(
            Duration::from_secs(10),
            client.request("pm/approval/ask", params.clone()),
        )
        .await
        .expect("answered")
        .unwrap();
        assert_eq!(r["ok"]["decision"], "unavailable", "{r}");
    }
    let bad = serde_json::json!({"request_id": "req_ask2/approval", "approval": {"command": 7}});
    let refused = client.request::<_, Value>("pm/approval/ask", bad).await;
    assert!(matches!(refused, Err(ClientError::Rpc(_))), "{refused:?}");
    let old = serde_json::json!({"request_id": "req_ask3/approval", "request": {"op": "approval"}});
    let refused = client.request::<_, Value>("pm/terminal", old).await;
    assert!(matches!(refused, Err(ClientError::Rpc(_))), "{refused:?}");
}

/// A question is taken back only by the program that asked it (`pm/approval/withdraw`):
/// another program with the token withdraws nothing, a person's page may not withdraw, and
/// the asker's withdrawal answers its own pending question `withdrawn` and takes it off the
/// page.
#[tokio::test(flavor = "multi_thread")]
async fn only_the_asker_withdraws_its_question() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let h = host("tok-withdraw-host").start();
    // A person's page, an approver: it is told when the question is pending.
    let session = common::sign_in(&h.addr, &h.login).await;
    let (mut page_tx, mut page_rx) = common::page_socket(&h.addr, &session).await.split();
    let mut page_next = async |method: &str| loop {
        let Ok(Some(Ok(Message::Text(t)))) =
            tokio::time::timeout(Duration::from_secs(10), page_rx.next()).await
        else {
            panic!("no {method} on the page");
        };
        let v: Value = serde_json::from_str(&t).unwrap();
        if v["method"] == method || (v["id"] == 2 && method == "answer") {
            return v;
        }
    };
    page_tx
        .send(Message::text(
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "channel": "ahp-root://", "protocolVersions": ["1.0.0"], "clientId": "page",
                "_meta": {"interactiveTerminal": {"approver": true}}}})
            .to_string(),
        ))
        .await
        .unwrap();
    let asker = std::sync::Arc::new(ahp_client(&h, "asker").await);
    let other = ahp_client(&h, "other").await;
    let question = serde_json::json!({
        "request_id": "req_wd1", "trace_id": "trace_wd1", "command": "git push --force",
        "cwd": null, "terminal_id": null, "warning": "force push", "rule": "git_force_push",
        "timeout_ms": 30000, "page_wait_ms": 0,
    });
    let params = serde_json::json!({"request_id": "req_wd1/approval", "approval": question});
    let asked = {
        let asker = asker.clone();
        tokio::spawn(async move { asker.request::<_, Value>("pm/approval/ask", params).await })
    };
    let pending = page_next("pm/approval/pending").await;
    assert_eq!(pending["params"]["request_id"], "req_wd1", "{pending}");
    let withdraw = serde_json::json!({"request_id": "req_wd1"});
    // Another program: another client's request ids are not its own.
    let r: Value = other
        .request("pm/approval/withdraw", withdraw.clone())
        .await
        .unwrap();
    assert_eq!(r["withdrawn"], 0, "{r}");
    // The page: it decides, it does not withdraw.
    page_tx
        .send(Message::text(
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "pm/approval/withdraw",
                "params": withdraw.clone()})
            .to_string(),
        ))
        .await
        .unwrap();
    let refused = page_next("answer").await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("person"),
        "{refused}"
    );
    assert!(!asked.is_finished(), "still waiting for a person");
    // The asker: withdrawn, answered so, and resolved on the page.
    let r: Value = asker
        .request("pm/approval/withdraw", withdraw)
        .await
        .unwrap();
    assert_eq!(r["withdrawn"], 1, "{r}");
    let answer = tokio::time::timeout(Duration::from_secs(10), asked)
        .await
        .expect("the ask answered")
        .unwrap()
        .unwrap();
    assert_eq!(answer["ok"]["decision"], "withdrawn", "{answer}");
    let resolved = page_next("pm/approval/resolved").await;
    assert_eq!(resolved["params"]["decision"], "withdrawn", "{resolved}");
}
