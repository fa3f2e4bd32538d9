//! Faults across the container bridge and in bundled discovery: connections cut mid-stream
//! (no byte lost or duplicated), the host killed and restarted, bad or missing tokens and
//! inputs, an unreachable host, bridge telemetry, launches from PATH, bad configured paths,
//! and what a subscriber or listener hears when a bridged or bundled host is killed.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::time::{Duration, Instant};

use common::*;
use rmcp::model::SubscribeRequestParams;
use serde_json::{Value, json};

fn bridge_env(port: &str, token: &str) -> Vec<(&'static str, String)> {
    vec![
        ("PM_RUNNING_IN_CONTAINER", "true".into()),
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1".into()),
        ("PM_INTERACTIVE_TERMINAL_FALLBACK_UNUSED", String::new()),
        ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port.into()),
        ("PM_INTERACTIVE_TERMINAL_TOKEN", token.into()),
        ("PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS", "1000".into()),
        ("PM_TERM_NO_USER_RC", "1".into()),
    ]
}

async fn start_env(env: &[(&'static str, String)]) -> Server {
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    server().envs(&pairs).start().await
}

fn open_running(command: &str, wait_ms: u64) -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "execution": {"command": command}, "runtime": {"wait_ms": wait_ms}})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_connection_loses_and_duplicates_nothing() {
    let host = host("tok-cut").start();
    let proxy = Proxy::start(host.addr.clone()).await;
    let env = bridge_env(&proxy.port.to_string(), "tok-cut");
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let s = server().envs(&pairs).capture_stderr().start().await;
    let p = s
        .call(open_running(
            "for i in $(seq 1 60); do echo line-$i; sleep 0.04; done",
            300,
        ))
        .await;
    assert_eq!(p["result"]["running"], true, "{p:#}");
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let mut text = p["result"]["output"].as_str().unwrap().to_string();
    let mut cursor = p["result"]["cursor"]["output"].as_u64().unwrap();
    let mut reads = 0;
    loop {
        reads += 1;
        if reads % 3 == 0 {
            proxy.cut();
        }
        let r = s
            .call(
                json!({"action": "read_output", "target": {"terminal_id": id},
                "output": {"cursor": cursor}, "runtime": {"wait_ms": 300}}),
            )
            .await;
        assert_eq!(r["success"], true, "read {reads}: {r:#}");
        text.push_str(r["result"]["output"].as_str().unwrap());
        cursor = r["result"]["cursor"]["output"].as_u64().unwrap();
        let c = s
            .call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"view": "commands"}}))
            .await;
        let done = c["result"]["commands"][0]["complete"] == true;
        if done
            && r["result"]["streams"]["output"]["end"] == r["result"]["streams"]["output"]["total"]
        {
            break;
        }
        assert!(reads < 200);
    }
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("line-")).collect();
    let want: Vec<String> = (1..=60).map(|i| format!("line-{i}")).collect();
    assert_eq!(
        lines,
        want,
        "every line exactly once, in order, across {} cuts",
        reads / 3
    );
    // Cuts are expected on a bridge: the operator's log is not flooded with a library's
    // warning for each of them.
    let log = s.stderr.lock().unwrap().clone();
    assert!(!log.contains("Connection reset"), "{log}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_connection_in_the_middle_of_a_wait_still_answers_once() {
    let host = host("tok-midwait").start();
    let proxy = Proxy::start(host.addr.clone()).await;
    let s =
        std::sync::Arc::new(start_env(&bridge_env(&proxy.port.to_string(), "tok-midwait")).await);
    let p = s.call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})).await;
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let marker = unique("ran-once-");
    // The command runs while the connection is cut under the waiting request.
    let call = {
        let (s, id, marker) = (s.clone(), id.clone(), marker.clone());
        tokio::spawn(async move {
            s.call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                "target": {"terminal_id": id}, "execution": {"command": format!("sleep 1; echo {marker}")},
                "runtime": {"wait_ms": 10000}}))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(400)).await;
    proxy.cut();
    let r = call.await.unwrap();
    assert_eq!(r["success"], true, "{r:#}");
    assert_eq!(r["result"]["output"], format!("{marker}\n"));
    assert_eq!(r["result"]["exit_code"], 0);
    // It ran exactly once.
    let c = s.call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"view": "commands"}})).await;
    let ran = c["result"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["command_line"].as_str().unwrap().contains(&marker))
        .count();
    assert_eq!(ran, 1);
}

/// A stalled link: the host ran the command but its answer never came back. The caller is
/// told it may have run; retrying with the same request id gets that run's answer, and the
/// command ran once.
#[tokio::test(flavor = "multi_thread")]
async fn a_retry_after_a_stalled_link_does_not_run_twice() {
    let host = host("tok-stall").start();
    let proxy = Proxy::start(host.addr.clone()).await;
    let mut env = bridge_env(&proxy.port.to_string(), "tok-stall");
    env.push(("PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS", "1000".into()));
    let s = start_env(&env).await;
    let p = s.call(open_running("true", 10000)).await;
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let file = scratch_dir().join("appended");
    let append = json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id},
        "execution": {"command": format!("echo x >> '{}'", file.display())},
        "correlation": {"request_id": "append-once-1"},
        "runtime": {"wait_ms": 500}});
    proxy.stall_replies(true);
    let r = s.call(append.clone()).await;
    assert_eq!(code(&r), "PM_TERM_TIMEOUT", "{r:#}");
    assert_eq!(r["error"]["details"]["may_have_run"], true, "{r:#}");
    assert_eq!(
        r["error"]["details"]["request_id"], "append-once-1",
        "{r:#}"
    );
    // The link comes back (a new connection); the caller retries the same request.
    proxy.cut();
    proxy.stall_replies(false);
    let r = s.call(append).await;
    assert_eq!(r["success"], true, "{r:#}");
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    assert_eq!(
        text,
        "x\n",
        "the command ran {} times",
        text.lines().count()
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_host_killed_and_restarted() {
    let mut host = host("tok-restart").start();
    let port = host.port;
    let s = start_env(&bridge_env(&port.to_string(), "tok-restart")).await;
    let p = s.call(open_running("echo before", 10000)).await;
    let old = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    // Killed with nobody to restart it: nothing listens, and the answers say so at once
    // (no recovery window to sit out): the terminal is cut off, a new one unavailable.
    host.child.kill().unwrap();
    host.child.wait().unwrap();
    let t = Instant::now();
    let r = s
        .call(json!({"action": "read_output", "target": {"terminal_id": old}}))
        .await;
    assert_eq!(code(&r), "PM_TERM_DISCONNECTED", "{r:#}");
    assert_eq!(r["error"]["details"]["host_down"], true, "{r:#}");
    assert_eq!(r["fallback"]["strategy"], "suggest_reconnect_retry");
    let r = s.call(open_running("echo while-down", 10000)).await;
    assert_eq!(code(&r), "PM_TERM_GUI_UNAVAILABLE", "{r:#}");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "both answered in {:?}",
        t.elapsed()
    );
    // Back on the same port: new terminals work; the old one is gone with the old host, and
    // the answer says the host restarted (with how to reopen), not just "not found".
    let _host = common::host("tok-restart").port(port).start();
    let r = s
        .call(json!({"action": "read_output", "target": {"terminal_id": old}}))
        .await;
    assert_eq!(code(&r), "PM_TERM_NOT_FOUND", "{r:#}");
    assert_eq!(r["error"]["details"]["host_restarted"], true, "{r:#}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("restarted"),
        "{r:#}"
    );
    assert_eq!(
        r["error"]["details"]["reopen"]["invocation"]["intent"],
        "open_only"
    );
    assert_eq!(r["fallback"]["next_action"], "list");
    let n = s.call(open_running("echo after", 10000)).await;
    assert_eq!(n["result"]["output"], "after\n", "{n:#}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_inputs_tokens_and_unreachable_hosts() {
    let host = host("tok-right").start();
    let port = host.port.to_string();
    // No token: the bridge is not configured.
    let mut env = bridge_env(&port, "");
    env.retain(|(k, _)| *k != "PM_INTERACTIVE_TERMINAL_TOKEN");
    let s = start_env(&env).await;
    let r = s.call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})).await;
    assert_eq!(code(&r), "PM_TERM_INVALID_MODE", "{r:#}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("PM_INTERACTIVE_TERMINAL_TOKEN")
    );
    s.stop().await;
    // A port that is not a port.
    let s = start_env(&bridge_env("not-a-port", "x")).await;
    let r = s.call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})).await;
    assert_eq!(code(&r), "PM_TERM_INVALID_MODE");
    s.stop().await;
    // The wrong token: the host refuses the handshake (refused: GUI_UNAVAILABLE).
    let s = start_env(&bridge_env(&port, "tok-wrong")).await;
    let r = s.call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})).await;
    assert_eq!(code(&r), "PM_TERM_GUI_UNAVAILABLE", "{r:#}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("PM_INTERACTIVE_TERMINAL_TOKEN")
    );
    assert!(
        r["error"]["details"]["attempts"][0]["error"]
            .as_str()
            .unwrap()
            .contains("401")
    );
    s.stop().await;
    // Nobody listening: GUI unavailable, every alias tried and reported.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let s = start_env(&bridge_env(&closed.to_string(), "x")).await;
    let r = s.call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})).await;
    assert_eq!(code(&r), "PM_TERM_GUI_UNAVAILABLE", "{r:#}");
    assert_eq!(r["fallback"]["strategy"], "fallback_to_headless_if_allowed");
    assert_eq!(r["fallback"]["recommended_mode"], "headless");
    let attempts = r["error"]["details"]["attempts"].as_array().unwrap();
    let tried: Vec<&str> = attempts
        .iter()
        .map(|a| a["endpoint"].as_str().unwrap())
        .collect();
    assert_eq!(tried.len(), 3, "{tried:?}");
    assert!(
        tried[0].starts_with("127.0.0.1:")
            && tried[1].starts_with("host.containers.internal:")
            && tried[2].starts_with("host.docker.internal:")
    );
    // Headless still works inside the "container".
    let h = s.call(headless("echo still-here")).await;
    assert_eq!(h["result"]["stdout"], "still-here\n");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bridge_telemetry_on_stderr() {
    let host_log = scratch_dir().join("host.log");
    let host = host("tok-trace").log_to(&host_log).start();
    let mut env = bridge_env(&host.port.to_string(), "tok-trace");
    env.push(("PM_INTERACTIVE_TERMINAL_TRACE_BRIDGE", "1".into()));
    env.push(("PM_TERM_LOG", "info".into()));
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let s = server().envs(&pairs).capture_stderr().start().await;
    let mut q = open_running("true", 10000);
    q["correlation"] = json!({"trace_id": "trace_follow_me_across"});
    let r = s.call(q).await;
    assert_eq!(r["success"], true);
    assert_eq!(r["correlation"]["trace_id"], "trace_follow_me_across");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let log = s.stderr.lock().unwrap().clone();
    for what in [
        "bridge: connect",
        "bridge: initialized",
        "bridge: request",
        "bridge: response",
    ] {
        assert!(log.contains(what), "missing {what:?} in:\n{log}");
    }
    // The caller's trace id reaches the host unchanged.
    let host_side = std::fs::read_to_string(&host_log).unwrap();
    assert!(
        host_side.contains("trace_follow_me_across"),
        "host log lacks the trace id:\n{host_side}"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bundled_from_path_and_bad_configured_paths() {
    // A copy of the server with no host beside it: the host is found on PATH.
    let dir = std::env::temp_dir().join(format!("itmcp-path-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lone = dir.join("interactive-terminal-mcp");
    std::fs::copy(SERVER_BIN, &lone).unwrap();
    let host_dir = std::path::Path::new(HOST_BIN)
        .parent()
        .unwrap()
        .display()
        .to_string();
    let path = format!("{host_dir}:/usr/bin:/bin");
    let s = server()
        .bin(lone.to_str().unwrap())
        .args(&[])
        .envs(&[
            ("PM_TERM_ADAPTER_MODE", "bundled"),
            ("PATH", &path),
            ("PM_TERM_NO_USER_RC", "1"),
        ])
        .start()
        .await;
    let r = s.call(open_running("echo from-path", 15000)).await;
    assert_eq!(r["result"]["output"], "from-path\n", "{r:#}");
    assert_eq!(r["resolved"]["adapter"], "bundled");
    s.stop().await;
    // A relative configured path is refused.
    let s = server()
        .envs(&[("PM_INTERACTIVE_TERMINAL_BINARY", "bin/interactive-terminal")])
        .start()
        .await;
    let r = s.call(open_running("true", 1000)).await;
    assert_eq!(code(&r), "PM_TERM_INVALID_PAYLOAD", "{r:#}");
    s.stop().await;
    let r_req = server().start().await;
    let r = r_req
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
            "runtime": {"adapter_override": "bundled", "binary_path": "relative/interactive-terminal"}}))
        .await;
    assert_eq!(code(&r), "PM_TERM_INVALID_PAYLOAD");
    r_req.stop().await;
    // Nothing usable anywhere: GUI unavailable with every candidate and why it failed.
    let s = server()
        .bin(lone.to_str().unwrap())
        .args(&[])
        .envs(&[
            (
                "PM_INTERACTIVE_TERMINAL_BINARY",
                "/nonexistent/interactive-terminal",
            ),
            ("PATH", "/usr/bin:/bin"),
        ])
        .start()
        .await;
    let r = s.call(open_running("true", 1000)).await;
    assert_eq!(code(&r), "PM_TERM_GUI_UNAVAILABLE", "{r:#}");
    let cands = r["error"]["details"]["attempted_candidates"]
        .as_array()
        .unwrap();
    assert_eq!(cands[0]["source"], "configured");
    assert_eq!(cands[1]["source"], "bundled");
    let errs = r["error"]["details"]["spawn_errors"].as_array().unwrap();
    assert!(
        errs.iter()
            .all(|e| e["transient"] == false && e["attempt"] == 1),
        "no retry for missing binaries: {errs:?}"
    );
    s.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stand-in for a host that accepts connections and then misbehaves in one way.
#[derive(Clone, Copy)]
enum Misbehaviour {
    /// Accepts and never says a word.
    Silent,
    /// Reads the upgrade request and hangs up.
    HangsUp,
    /// Completes the WebSocket upgrade, then refuses every protocol version offered.
    NoCommonVersion,
}

async fn misbehaving_host(how: Misbehaviour) -> u16 {
    use futures_util::{SinkExt, StreamExt};
    use tokio::io::AsyncReadExt;
    use tokio_tungstenite::tungstenite::Message;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut sock, _)) = l.accept().await {
            match how {
                Misbehaviour::Silent => held.push(sock),
                Misbehaviour::HangsUp => {
                    let mut buf = [0u8; 64];
                    let _ = sock.read(&mut buf).await;
                    drop(sock);
                }
                Misbehaviour::NoCommonVersion => {
                    tokio::spawn(async move {
                        let Ok(mut ws) = tokio_tungstenite::accept_async(sock).await else {
                            return;
                        };
                        while let Some(Ok(m)) = ws.next().await {
                            let Message::Text(t) = m else { continue };
                            let req: Value = serde_json::from_str(&t).unwrap();
                            let answer = json!({"jsonrpc": "2.0", "id": req["id"],
                                "error": {"code": -32005, "message": "unsupported protocol version",
                                    "data": {"supportedVersions": ["99.0.0"]}}});
                            let _ = ws.send(Message::text(answer.to_string())).await;
                        }
                    });
                }
            }
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_handshake_is_a_disconnect_or_a_timeout_with_where_and_which_versions() {
    let open =
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}});
    for (how, expected) in [
        (Misbehaviour::Silent, "PM_TERM_TIMEOUT"),
        (Misbehaviour::HangsUp, "PM_TERM_DISCONNECTED"),
        (Misbehaviour::NoCommonVersion, "PM_TERM_DISCONNECTED"),
    ] {
        let port = misbehaving_host(how).await;
        let s = start_env(&bridge_env(&port.to_string(), "tok")).await;
        let r = s.call(open.clone()).await;
        assert_eq!(code(&r), expected, "{r:#}");
        let d = &r["error"]["details"];
        assert_eq!(d["alias"], "127.0.0.1", "{r:#}");
        assert_eq!(d["port"], port, "{r:#}");
        if let Misbehaviour::NoCommonVersion = how {
            assert_eq!(d["host_versions"], json!(["99.0.0"]), "{r:#}");
            assert!(
                !d["client_versions"].as_array().unwrap().is_empty(),
                "{r:#}"
            );
            assert!(
                r["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("no common version"),
                "{r:#}"
            );
        }
        // Headless work is untouched by a broken host.
        let h = s.call(headless("echo fine")).await;
        assert_eq!(h["result"]["stdout"], "fine\n");
        s.stop().await;
    }
}

/// Across the bridge, container paths are mapped to host paths by the operator's map: a
/// terminal opened with a container `cwd` (or none: the server's own directory) runs in the
/// host directory mounted there, and answers name the container's path again. Without a map,
/// a container path is refused with where it was looked up.
#[tokio::test(flavor = "multi_thread")]
async fn working_directories_cross_the_bridge_through_the_operators_path_map() {
    let host = host("tok-paths").start();
    let host_dir = std::fs::canonicalize(scratch_dir()).unwrap();
    std::fs::create_dir_all(host_dir.join("sub")).unwrap();
    let container_dir = std::fs::canonicalize(scratch_dir()).unwrap();
    let host_dir_of_server = std::fs::canonicalize(scratch_dir()).unwrap();
    let container_path = format!("/itmcp-container-{}", std::process::id());
    let map = format!(
        "{container_path}={};{}={}",
        host_dir.display(),
        container_dir.display(),
        host_dir_of_server.display()
    );
    let mut env = bridge_env(&host.port.to_string(), "tok-paths");
    env.push(("PM_TERM_PATH_MAP", map));
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut cmd = server().envs(&pairs).command();
    cmd.current_dir(&container_dir);
    let s = connect(cmd, false).await;
    // A container path given as cwd.
    let mut q = open_running("pwd", 10000);
    q["runtime"]["cwd"] = json!(format!("{container_path}/sub"));
    let p = s.call(q).await;
    assert_eq!(p["success"], true, "{p:#}");
    let printed = p["result"]["output"].as_str().unwrap().trim().to_string();
    assert_eq!(printed, host_dir.join("sub").display().to_string(), "{p:#}");
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    // No cwd: the server's own directory, on its host side.
    let p = s.call(open_running("pwd", 10000)).await;
    assert_eq!(
        p["result"]["output"].as_str().unwrap().trim(),
        host_dir_of_server.display().to_string(),
        "{p:#}"
    );
    // list shows the container's view of where the terminal works.
    let (item, l) = s.listed(&id).await;
    assert_eq!(
        item.unwrap()["cwd"],
        format!("{container_path}/sub"),
        "{l:#}"
    );
    s.stop().await;
    // Without a map, a container path is refused as what it is: a path on the host.
    let s = start_env(&bridge_env(&host.port.to_string(), "tok-paths")).await;
    let mut q = open_running("pwd", 10000);
    q["runtime"]["cwd"] = json!(container_path);
    let p = s.call(q).await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
    let m = p["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("on the terminal host") && m.contains("PM_TERM_PATH_MAP"),
        "{m}"
    );
    s.stop().await;
}

/// A client that subscribed before the container bridge was first used still hears about
/// the bridged terminal it subscribes to, without reading it first: the bridge's adapter is
/// created at the first request that needs it, after the runtime's actions started being
/// followed, and the subscription itself must make the host's terminal followed (its
/// actions reach the server only for channels it subscribed to on the host).
#[tokio::test(flavor = "multi_thread")]
#[allow(deprecated)] // resources/subscribe is the subscription of the negotiated 2025-11-25 protocol
async fn a_subscription_made_before_the_bridge_connects_hears_the_bridged_terminal() {
    let host = host("tok-subscribe").start();
    let s = start_env(&bridge_env(&host.port.to_string(), "tok-subscribe")).await;
    // A terminal of this server's own, watched: following starts here, with no bridge yet.
    let mut local = open_terminal();
    local["runtime"] = json!({"adapter_override": "local"});
    let l = s.call(local).await;
    assert_eq!(l["resolved"]["adapter"], "local", "{l:#}");
    let local_uri = format!(
        "ahp-terminal:/{}",
        l["identity"]["terminal_id"].as_str().unwrap()
    );
    s.client
        .subscribe(SubscribeRequestParams::new(local_uri))
        .await
        .unwrap();
    // A URI that names no terminal is refused, as a read of it is.
    let e = s
        .client
        .subscribe(SubscribeRequestParams::new("ahp-terminal:/term_none"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no terminal at"), "{e}");
    let (id, uri) = open_bridged_and_subscribe(&s).await;
    run_and_hear(&s, &id, &uri, "bridged-update").await;
    s.stop().await;
}

/// The same through a 2026-07-28 client's `subscriptions/listen`: listening to a bridged
/// terminal makes the host's terminal followed, as `resources/subscribe` does.
#[tokio::test(flavor = "multi_thread")]
async fn a_listen_to_a_bridged_terminal_hears_its_updates() {
    let host = host("tok-listen").start();
    let env = bridge_env(&host.port.to_string(), "tok-listen");
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let s = server().envs(&pairs).protocol_2026().start().await;
    let p = s.call(open_terminal()).await;
    assert_eq!(p["resolved"]["adapter"], "container_bridge", "{p:#}");
    let uri = format!(
        "ahp-terminal:/{}",
        p["identity"]["terminal_id"].as_str().unwrap()
    );
    let mut sub = s
        .client
        .listen(
            rmcp::model::SubscriptionFilter::builder()
                .resource_subscription(uri.clone())
                .build(),
        )
        .await
        .unwrap();
    let id = p["identity"]["terminal_id"].as_str().unwrap();
    let r = s.call(terminal_command(id, "echo bridged-listen")).await;
    assert_eq!(r["result"]["output"], "bridged-listen\n", "{r:#}");
    next_matching(&mut sub, "an update of the bridged terminal", |n| {
        matches!(n, rmcp::model::ServerNotification::ResourceUpdatedNotification(u) if u.params.uri == uri)
    })
    .await;
    s.stop().await;
}

/// How many `resources/updated` for `uri` the client has had.
fn updates_of(s: &Server, uri: &str) -> usize {
    s.recorder
        .updated
        .lock()
        .unwrap()
        .iter()
        .filter(|u| *u == uri)
        .count()
}

/// Wait until `done` holds, or fail saying `what` did not happen.
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{what} did not happen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A client subscribed to a bridged terminal hears when the host is killed: the terminal
/// changed (a read now says it is cut off) and so did the list, with no command or read to
/// wake the bridge. When the host is back, a new terminal's updates reach the client as
/// before, and the old terminal reads as gone with the host that held it.
#[tokio::test(flavor = "multi_thread")]
#[allow(deprecated)] // resources/subscribe is the subscription of the negotiated 2025-11-25 protocol
async fn a_subscriber_hears_the_host_killed_and_follows_the_restarted_one() {
    let mut host = host("tok-sub-kill").start();
    let port = host.port;
    let s = start_env(&bridge_env(&port.to_string(), "tok-sub-kill")).await;
    let (old, old_uri) = open_bridged_and_subscribe(&s).await;
    run_and_hear(&s, &old, &old_uri, "before-kill").await;
    // Past the coalescing window: what arrives from now on is about the kill.
    tokio::time::sleep(Duration::from_millis(500)).await;
    hear_the_cut_off(&s, &old_uri, || {
        host.child.kill().unwrap();
        host.child.wait().unwrap();
    })
    .await;
    let r = s
        .call(json!({"action": "read_output", "target": {"terminal_id": old}}))
        .await;
    assert_eq!(code(&r), "PM_TERM_DISCONNECTED", "{r:#}");
    // The host back on its port: a new terminal is followed on the new connection.
    let _host = common::host("tok-sub-kill").port(port).start();
    let (new, new_uri) = open_bridged_and_subscribe(&s).await;
    run_and_hear(&s, &new, &new_uri, "after-restart").await;
    let r = s
        .call(json!({"action": "read_output", "target": {"terminal_id": old}}))
        .await;
    assert_eq!(code(&r), "PM_TERM_NOT_FOUND", "{r:#}");
    assert_eq!(r["error"]["details"]["host_restarted"], true, "{r:#}");
    s.stop().await;
}

/// Kill a host with `kill`, and wait until the subscribed client hears that the terminal at
/// `uri` changed and so did the list.
async fn hear_the_cut_off(s: &Server, uri: &str, kill: impl FnOnce()) {
    let (updates, lists) = (updates_of(s, uri), *s.recorder.list_changed.lock().unwrap());
    kill();
    wait_until("an update for the cut-off terminal", || {
        updates_of(s, uri) > updates
    })
    .await;
    wait_until("a list change", || {
        *s.recorder.list_changed.lock().unwrap() > lists
    })
    .await;
}

/// Open a terminal on the bridged host and subscribe to it (`resources/subscribe`) without
/// reading it first; its id and URI.
#[allow(deprecated)] // resources/subscribe is the subscription of the negotiated 2025-11-25 protocol
async fn open_bridged_and_subscribe(s: &Server) -> (String, String) {
    open_and_subscribe(s, "container_bridge").await
}

/// Open a terminal, which must be on `adapter`, and subscribe to it without reading it
/// first; its id and URI.
#[allow(deprecated)] // resources/subscribe is the subscription of the negotiated 2025-11-25 protocol
async fn open_and_subscribe(s: &Server, adapter: &str) -> (String, String) {
    let p = s.call(open_terminal()).await;
    assert_eq!(p["resolved"]["adapter"], adapter, "{p:#}");
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let uri = format!("ahp-terminal:/{id}");
    s.client
        .subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .unwrap();
    (id, uri)
}

/// Echo `word` in terminal `id` and wait for the client to hear that `uri` changed.
async fn run_and_hear(s: &Server, id: &str, uri: &str, word: &str) {
    let r = s.call(terminal_command(id, &format!("echo {word}"))).await;
    assert_eq!(r["result"]["output"], format!("{word}\n"), "{r:#}");
    wait_until(&format!("an update for {uri} after `echo {word}`"), || {
        updates_of(s, uri) > 0
    })
    .await;
}

/// The same for a bundled host, the one the server launched itself: killed with SIGKILL
/// while a client is subscribed to one of its terminals, the client hears the terminal and
/// the list change at once. The next request launches a new host; the old terminal reads as
/// gone with the host that held it, and a new terminal's updates reach the client.
#[tokio::test(flavor = "multi_thread")]
#[allow(deprecated)] // resources/subscribe is the subscription of the negotiated 2025-11-25 protocol
async fn a_subscriber_hears_the_bundled_host_killed_and_follows_the_relaunched_one() {
    let s = server()
        .envs(&[
            ("PM_TERM_ADAPTER_MODE", "bundled"),
            ("PM_INTERACTIVE_TERMINAL_BINARY", HOST_BIN),
            ("PM_TERM_NO_USER_RC", "1"),
        ])
        .start()
        .await;
    let (old, old_uri) = open_and_subscribe(&s, "bundled").await;
    run_and_hear(&s, &old, &old_uri, "before-kill").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let hosts = children_running(s.pid, HOST_BIN);
    assert_eq!(hosts.len(), 1, "one launched host: {hosts:?}");
    hear_the_cut_off(&s, &old_uri, || sigkill(hosts[0])).await;
    // The next request launches a new host, which never held the old terminal.
    let r = s
        .call(json!({"action": "read_output", "target": {"terminal_id": old}}))
        .await;
    assert_eq!(code(&r), "PM_TERM_NOT_FOUND", "{r:#}");
    assert_eq!(r["error"]["details"]["host_restarted"], true, "{r:#}");
    let relaunched = children_running(s.pid, HOST_BIN);
    assert!(
        relaunched.len() == 1 && relaunched != hosts,
        "a new host: {hosts:?} then {relaunched:?}"
    );
    let (new, new_uri) = open_and_subscribe(&s, "bundled").await;
    run_and_hear(&s, &new, &new_uri, "after-relaunch").await;
    s.stop().await;
}

/// A 2026-07-28 client listening to a bridged terminal and to the list hears the host
/// killed, as a `resources/subscribe` client does: the terminal's update and a list change
/// arrive on its listen stream, and a read then says the host is down.
#[tokio::test(flavor = "multi_thread")]
async fn a_listener_hears_the_host_killed() {
    let mut host = host("tok-listen-kill").start();
    let env = bridge_env(&host.port.to_string(), "tok-listen-kill");
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let s = server().envs(&pairs).protocol_2026().start().await;
    let p = s.call(open_terminal()).await;
    assert_eq!(p["resolved"]["adapter"], "container_bridge", "{p:#}");
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let uri = format!("ahp-terminal:/{id}");
    let mut sub = s
        .client
        .listen(
            rmcp::model::SubscriptionFilter::builder()
                .resource_subscription(uri.clone())
                .resources_list_changed()
                .build(),
        )
        .await
        .unwrap();
    let r = s.call(terminal_command(&id, "echo before-kill")).await;
    assert_eq!(r["result"]["output"], "before-kill\n", "{r:#}");
    next_matching(&mut sub, "an update after the command", |n| {
        matches!(n, rmcp::model::ServerNotification::ResourceUpdatedNotification(u) if u.params.uri == uri)
    })
    .await;
    // Drain what the command itself caused, past the coalescing window.
    while let Ok(Ok(Some(_))) = tokio::time::timeout(Duration::from_millis(500), sub.next()).await {
    }
    host.child.kill().unwrap();
    host.child.wait().unwrap();
    let mut heard_update = false;
    let mut heard_list = false;
    while !(heard_update && heard_list) {
        let n = next_matching(&mut sub, "the host's kill", |_| true).await;
        match n {
            rmcp::model::ServerNotification::ResourceUpdatedNotification(u) => {
                heard_update |= u.params.uri == uri;
            }
            rmcp::model::ServerNotification::ResourceListChangedNotification(_) => {
                heard_list = true;
            }
            _ => {}
        }
    }
    let r = s
        .call(json!({"action": "read_output", "target": {"terminal_id": id}}))
        .await;
    assert_eq!(code(&r), "PM_TERM_DISCONNECTED", "{r:#}");
    s.stop().await;
}
