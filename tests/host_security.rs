//! The host service hardened like a local web service people trust, checked from outside:
//! hostile `Origin` and `Host` (DNS rebinding), the page's security headers, the one-time
//! sign-in link (no token in a URL, none printed), weak tokens on public addresses,
//! world-readable token files, a flood of silent half-open connections, and approvals only
//! a signed-in person can give.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::io::BufRead;
use std::process::Stdio;
use std::time::Duration;

use common::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// A WebSocket upgrade request with the token and extra headers; the status it gets.
async fn upgrade_status(addr: &str, token: &str, headers: &[(&str, &str)]) -> String {
    let mut req = format!("ws://{addr}/ahp").into_client_request().unwrap();
    req.headers_mut()
        .insert("Authorization", format!("Bearer {token}").parse().unwrap());
    for (k, v) in headers {
        let name: tokio_tungstenite::tungstenite::http::HeaderName = k.parse().unwrap();
        req.headers_mut().insert(name, v.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(req).await {
        Ok((_, resp)) => resp.status().as_u16().to_string(),
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
            resp.status().as_u16().to_string()
        }
        Err(e) => format!("error {e}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_origins_and_host_names_are_refused() {
    let h = host("tok-origin").start();
    assert_eq!(upgrade_status(&h.addr, &h.token, &[]).await, "101");
    assert_eq!(
        upgrade_status(
            &h.addr,
            &h.token,
            &[("Origin", &format!("http://{}", h.addr))]
        )
        .await,
        "101",
        "a same-origin page may connect"
    );
    for origin in [
        "http://evil.example",
        "https://127.0.0.1",
        "null",
        "http://localhost.evil.example",
    ] {
        assert_eq!(
            upgrade_status(&h.addr, &h.token, &[("Origin", origin)]).await,
            "403",
            "{origin}"
        );
    }
    // DNS rebinding: the attacker's name in Host, even with every credential.
    let bearer = format!("Bearer {}", h.token);
    for host in [
        "rebind.evil.example",
        &format!("rebind.evil.example:{}", h.port),
    ] {
        let a = http_get(&h.addr, "/", &[("Host", host), ("Authorization", &bearer)]).await;
        assert!(a.starts_with("HTTP/1.1 421"), "{host}: {a}");
    }
    let a = http_get(
        &h.addr,
        "/",
        &[
            ("Host", &format!("localhost:{}", h.port)),
            ("Authorization", &bearer),
        ],
    )
    .await;
    assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    // A name the operator adds is accepted.
    let mut child = host("tok-extra")
        .args(&["--allow-host", "gateway.local"])
        .std_command()
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: Value = serde_json::from_str(&line).unwrap();
    let addr = ready["address"].as_str().unwrap();
    let a = http_get(
        addr,
        "/healthz",
        &[
            ("Host", "gateway.local"),
            ("Authorization", "Bearer tok-extra"),
        ],
    )
    .await;
    assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_is_served_with_strict_headers_and_no_inline_code() {
    let h = host("tok-headers").start();
    let page = http_get(&h.addr, "/", &[]).await;
    let (head, body) = page.split_once("\r\n\r\n").unwrap();
    for needed in [
        "Content-Security-Policy: default-src 'none'; script-src 'self'",
        "frame-ancestors 'none'",
        "Referrer-Policy: no-referrer",
        "X-Content-Type-Options: nosniff",
    ] {
        assert!(head.contains(needed), "{needed} missing in\n{head}");
    }
    assert!(!head.contains("unsafe-inline"));
    assert!(
        !body.contains("<script>") && !body.contains("<style>"),
        "no inline code"
    );
    for asset in ["/page.js", "/term.js", "/page.css", "/favicon.ico"] {
        let a = http_get(&h.addr, asset, &[]).await;
        assert!(a.starts_with("HTTP/1.1 200"), "{asset}: {a}");
        assert!(a.contains("Content-Security-Policy"), "{asset}");
    }
}

/// The host's stderr, line by line, as it comes.
fn stderr_lines(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    rx
}

#[tokio::test(flavor = "multi_thread")]
async fn one_time_links_sign_a_browser_in_once_and_no_token_is_printed() {
    let home = scratch_dir();
    let token_file = home.join("token");
    let mut child = host("")
        .no_token()
        .args(&["--token-file", token_file.to_str().unwrap()])
        .std_command()
        .current_dir(&home)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: Value = serde_json::from_str(&line).unwrap();
    let addr = ready["address"].as_str().unwrap().to_string();
    let errs = stderr_lines(&mut child);
    let token = std::fs::read_to_string(&token_file).unwrap();
    let mut printed = Vec::new();
    let first_link = loop {
        let l = errs.recv_timeout(Duration::from_secs(5)).unwrap();
        printed.push(l.clone());
        if let Some(i) = l.find("http://") {
            break l[i..].split_whitespace().next().unwrap().to_string();
        }
    };
    assert!(first_link.contains("/login?code="), "{first_link}");
    // The link's page holds no secret and sets nothing: its script makes the exchange.
    let login_page = http_get(&addr, first_link.split_once(&addr).unwrap().1, &[]).await;
    assert!(login_page.starts_with("HTTP/1.1 200"), "{login_page}");
    assert!(!login_page.contains("Set-Cookie"), "{login_page}");
    assert!(login_page.contains("/login.js"), "{login_page}");
    // Another origin cannot trade the code — another port of the same address included —
    // and the attempt does not spend it.
    let (ip, port) = addr.rsplit_once(':').unwrap();
    let other_port: u16 = port.parse::<u16>().unwrap().wrapping_add(1);
    for origin in [
        format!("http://{ip}:{other_port}"),
        "http://localhost".to_string(),
        "null".to_string(),
    ] {
        let r = redeem(&addr, &first_link, &origin).await;
        assert!(r.starts_with("HTTP/1.1 403"), "{origin}: {r}");
    }
    let session = sign_in(&addr, &first_link).await;
    assert!(!session.contains(token.trim()));
    // The link is spent: a second browser with the same link gets nothing.
    let again = redeem(&addr, &first_link, &format!("http://{addr}")).await;
    assert!(again.starts_with("HTTP/1.1 403"), "{again}");
    // A new link was printed, and it works.
    let next_link = loop {
        let l = errs.recv_timeout(Duration::from_secs(5)).unwrap();
        printed.push(l.clone());
        if let Some(i) = l.find("http://") {
            break l[i..].split_whitespace().next().unwrap().to_string();
        }
    };
    assert_ne!(next_link, first_link);
    let second = sign_in(&addr, &next_link).await;
    assert_ne!(second, session);
    let bogus = redeem(&addr, "/login?code=bogus", &format!("http://{addr}")).await;
    assert!(bogus.starts_with("HTTP/1.1 403"), "{bogus}");
    let _ = child.kill();
    let _ = child.wait();
    while let Ok(l) = errs.recv_timeout(Duration::from_millis(200)) {
        printed.push(l);
    }
    let all = printed.join("\n");
    assert!(!all.contains(token.trim()), "the token was printed:\n{all}");
    assert!(
        all.contains(token_file.to_str().unwrap()),
        "where it is kept is said:\n{all}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn weak_tokens_and_readable_token_files_are_refused() {
    for token in ["secret", &"ab".repeat(20)] {
        let out = host(token).args(&["--bind", "0.0.0.0"]).output();
        assert_eq!(out.status.code(), Some(2), "{token}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("too weak"),
            "{token}"
        );
    }
    // A strong one binds.
    let strong = "3f9a1c0e7b2d4f6a8c1e3b5d7f9a2c4e";
    let mut child = host(strong)
        .args(&["--bind", "0.0.0.0"])
        .std_command()
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("\"ready\""), "{line}");
    let _ = child.kill();
    let _ = child.wait();
    // A token file other users can read: refused, and left as it is.
    use std::os::unix::fs::PermissionsExt;
    let file = scratch_dir().join("token");
    std::fs::write(&file, "0123456789abcdef0123456789abcdef").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = host("")
        .no_token()
        .args(&["--token-file", file.to_str().unwrap()])
        .output();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("other users"));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "0123456789abcdef0123456789abcdef"
    );
}

/// CPU time (user + system) a process has used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_silent_connections_costs_no_cpu_and_keeps_no_one_out() {
    let h = host("tok-flood").start();
    let pid = h.child.id();
    let mut silent = Vec::new();
    for _ in 0..800 {
        if let Ok(s) = tokio::net::TcpStream::connect(&h.addr).await {
            silent.push(s);
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = cpu_ticks(pid);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let used = cpu_ticks(pid) - before;
    // Idle sockets are parked reads: no polling loop. (The old peek-and-sleep loop spent a
    // third to half a core on this flood: 100+ ticks in 3 s.)
    assert!(
        used < 30,
        "{used} ticks of CPU in 3 s with 800 idle connections"
    );
    // Only the newest wait: all but the last 64 were closed.
    let mut open = 0;
    for s in &mut silent {
        let mut b = [0u8; 1];
        use tokio::io::AsyncReadExt;
        if let Err(_) | Ok(Ok(1..)) =
            tokio::time::timeout(Duration::from_millis(5), s.read(&mut b)).await
        {
            open += 1;
        }
    }
    assert!(open <= 64, "{open} silent connections still held");
    // A real client, which sends its request at once, gets in.
    assert_eq!(upgrade_status(&h.addr, &h.token, &[]).await, "101");
}

#[tokio::test(flavor = "multi_thread")]
async fn only_a_signed_in_person_approves() {
    let h = host("tok-approve").start();
    // A program with the token says it approves: it is not made an approver...
    let (ws, _) =
        tokio_tungstenite::connect_async(format!("ws://{}/ahp?token={}", h.addr, h.token))
            .await
            .unwrap();
    let (mut tx, mut rx) = ws.split();
    tx.send(Message::text(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "channel": "ahp-root://", "protocolVersions": ["1.0.0"], "clientId": "sneaky",
            "_meta": {"interactiveTerminal": {"approver": true}}}})
        .to_string(),
    ))
    .await
    .unwrap();
    // ... and may not decide.
    tx.send(Message::text(
        json!({"jsonrpc": "2.0", "id": 2, "method": "pm/approval/decide",
            "params": {"approval_id": "appr_x", "decision": "approve"}})
        .to_string(),
    ))
    .await
    .unwrap();
    let mut answered = false;
    while let Ok(Some(Ok(Message::Text(t)))) =
        tokio::time::timeout(Duration::from_secs(5), rx.next()).await
    {
        let v: Value = serde_json::from_str(&t).unwrap();
        if v["id"] == 2 {
            assert!(
                v["error"]["message"].as_str().unwrap().contains("person"),
                "{v}"
            );
            answered = true;
            break;
        }
    }
    assert!(answered);
}

/// Send one request on a raw AHP socket and wait for its answer (other messages skipped).
async fn ask_socket(
    tx: &mut (impl SinkExt<Message, Error = tokio_tungstenite::tungstenite::Error> + Unpin),
    rx: &mut (impl StreamExt<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin),
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    tx.send(Message::text(
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
    ))
    .await
    .unwrap();
    loop {
        let Ok(Some(Ok(m))) = tokio::time::timeout(Duration::from_secs(10), rx.next()).await else {
            panic!("no answer to {method}");
        };
        if let Message::Text(t) = m {
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

/// The page's screens and list (`pm/screen/watch`, `pm/terminals`): a program with the
/// token sees only its own terminals there, bad requests get clear errors, and a person's
/// page gets frames of the terminal's screen.
#[tokio::test(flavor = "multi_thread")]
async fn screens_and_the_list_answer_only_what_each_may_see() {
    let h = host("tok-screens").start();
    let client = |id: &'static str| {
        let addr = h.addr.clone();
        let token = h.token.clone();
        async move {
            let (ws, _) =
                tokio_tungstenite::connect_async(format!("ws://{addr}/ahp?token={token}"))
                    .await
                    .unwrap();
            let (mut tx, mut rx) = ws.split();
            let init = ask_socket(
                &mut tx,
                &mut rx,
                1,
                "initialize",
                json!({
                "channel": "ahp-root://", "protocolVersions": ["1.0.0"], "clientId": id}),
            )
            .await;
            assert!(init["result"].is_object(), "{init}");
            (tx, rx)
        }
    };
    let (mut a_tx, mut a_rx) = client("owner").await;
    let made = ask_socket(
        &mut a_tx,
        &mut a_rx,
        2,
        "createTerminal",
        json!({
        "channel": "ahp-terminal:/owned", "claim": {"kind": "client", "clientId": "owner"}}),
    )
    .await;
    assert!(made.get("error").is_none(), "{made}");
    let (mut b_tx, mut b_rx) = client("stranger").await;
    let listed = ask_socket(&mut b_tx, &mut b_rx, 2, "pm/terminals", json!({})).await;
    assert_eq!(listed["result"]["terminals"], json!([]), "{listed}");
    let denied = ask_socket(
        &mut b_tx,
        &mut b_rx,
        3,
        "pm/screen/watch",
        json!({"channel": "ahp-terminal:/owned"}),
    )
    .await;
    assert!(
        denied["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another client"),
        "{denied}"
    );
    for (id, params, says) in [
        (4, json!({}), "channel is required"),
        (5, json!({"channel": 7}), "channel is required"),
        (6, json!({"channel": "ahp-terminal:/nope"}), "no terminal"),
        (7, json!({"channel": "ahp-root://"}), "no terminal"),
    ] {
        let v = ask_socket(&mut b_tx, &mut b_rx, id, "pm/screen/watch", params).await;
        assert!(
            v["error"]["message"].as_str().unwrap().contains(says),
            "{v}"
        );
    }

    // The owner lists it, and a person's page gets its screen as frames.
    let listed = ask_socket(&mut a_tx, &mut a_rx, 3, "pm/terminals", json!({})).await;
    assert_eq!(
        listed["result"]["terminals"][0]["terminal_id"], "owned",
        "{listed}"
    );
    assert_eq!(
        listed["result"]["terminals"][0]["holder"], "owner",
        "{listed}"
    );
    let session = sign_in(&h.addr, &h.login).await;
    let (mut p_tx, mut p_rx) = page_socket(&h.addr, &session).await.split();
    ask_socket(
        &mut p_tx,
        &mut p_rx,
        1,
        "initialize",
        json!({
        "channel": "ahp-root://", "protocolVersions": ["1.0.0"], "clientId": "person"}),
    )
    .await;
    let ok = ask_socket(
        &mut p_tx,
        &mut p_rx,
        2,
        "pm/screen/watch",
        json!({"channel": "ahp-terminal:/owned"}),
    )
    .await;
    assert_eq!(ok["result"]["ok"], true, "{ok}");
    p_tx.send(Message::text(
        json!({"jsonrpc": "2.0", "method": "dispatchAction", "params": {
        "channel": "ahp-terminal:/owned", "clientSeq": 1,
        "action": {"type": "terminal/input", "data": "printf 'a\\rframed\\n'\r"}}})
        .to_string(),
    ))
    .await
    .unwrap();
    let mut first = None;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut seen = String::new();
    while std::time::Instant::now() < deadline {
        let Ok(Some(Ok(Message::Text(t)))) =
            tokio::time::timeout(Duration::from_secs(5), p_rx.next()).await
        else {
            continue;
        };
        let v: Value = serde_json::from_str(&t).unwrap();
        if v["method"] != "pm/screen/frame" {
            continue;
        }
        let f = &v["params"]["frame"];
        first.get_or_insert_with(|| f.clone());
        for line in f["lines"].as_array().unwrap() {
            let text: String = line["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["text"].as_str().unwrap())
                .collect();
            seen.push_str(&text);
            seen.push('\n');
        }
        if seen.lines().any(|l| l == "framed") {
            break;
        }
    }
    let first = first.expect("frames come");
    assert_eq!(
        first["full"], true,
        "the first frame has every row: {first}"
    );
    assert_eq!(
        first["lines"].as_array().unwrap().len(),
        first["rows"].as_u64().unwrap() as usize
    );
    assert!(
        seen.lines().any(|l| l == "framed"),
        "the \\r redrew the row in place: {seen}"
    );
    let v = ask_socket(
        &mut p_tx,
        &mut p_rx,
        3,
        "pm/screen/unwatch",
        json!({"channel": "ahp-terminal:/owned"}),
    )
    .await;
    assert_eq!(v["result"]["ok"], true, "{v}");
}

/// What a command the agent runs in the given mode prints for `command`.
async fn printed(s: &Server, mode: &str, command: &str) -> String {
    let p = s
        .call(
            json!({"action": "execute", "invocation": {"mode": mode, "intent": "execute_command"},
            "execution": {"command": command}, "runtime": {"wait_ms": 15000}}),
        )
        .await;
    assert_eq!(p["success"], true, "{p:#}");
    let r = &p["result"];
    format!(
        "{}{}{}",
        r["stdout"].as_str().unwrap_or_default(),
        r["stderr"].as_str().unwrap_or_default(),
        r["output"].as_str().unwrap_or_default()
    )
}

/// The server's tokens — the host's, the HTTP transport's — were in the environment of every
/// command and terminal shell, the agent's to read (`env`), and with the host's token a
/// program drives the host's terminals over AHP without the server's policy. Now they leave
/// the environment before anything starts, in the server and in the bundled host of `--gui`;
/// and the processes are non-dumpable, so a command of the same user cannot read the
/// environment they started with from `/proc/<pid>/environ` either.
#[tokio::test(flavor = "multi_thread")]
async fn the_servers_tokens_reach_no_command() {
    const HOST_TOKEN: &str = "host-token-0123456789abcdef";
    const HTTP_TOKEN: &str = "http-token-0123456789abcdef";
    let secrets = [
        ("PM_INTERACTIVE_TERMINAL_TOKEN", HOST_TOKEN),
        ("PM_TERM_HTTP_TOKEN", HTTP_TOKEN),
        ("PM_TERM_NO_USER_RC", "1"),
        // Reading another process's environment is warned: here it runs, for the server's
        // own scrubbing to be what keeps the tokens out.
        ("PM_TERM_APPROVAL_DEFAULT", "approve"),
    ];
    let leaked = |text: &str| text.contains(HOST_TOKEN) || text.contains(HTTP_TOKEN);

    // The server started by a client, with the bundled host of --gui: commands run headless
    // in the server's care, terminal shells on the host.
    let s = server().envs(&secrets).args(&["--gui"]).start().await;
    for mode in ["headless", "interactive"] {
        let out = printed(&s, mode, "env").await;
        assert!(!leaked(&out), "{mode}: {out}");
        assert!(!out.contains("_TOKEN="), "{mode}: {out}");
    }
    // Whoever may read the environment the server started with (root, or this test as the
    // same user) finds the values overwritten there too: removing a variable leaves the
    // block `/proc/<pid>/environ` reads as it was.
    let environ = std::fs::read(format!("/proc/{}/environ", s.pid)).unwrap_or_default();
    assert!(
        !leaked(&String::from_utf8_lossy(&environ)),
        "the server's /proc/<pid>/environ keeps a token"
    );
    if nix::unistd::geteuid().is_root() {
        // A root command (containers run as root) reads any process's environment.
        let pid = s.pid;
        let out = printed(
            &s,
            "headless",
            &format!("cat /proc/{pid}/environ | tr '\\0' '\\n'"),
        )
        .await;
        assert!(!leaked(&out), "{out}");
    }
    s.stop().await;

    // A command of the server's own user cannot read the environment the server started
    // with. As root (which may read any process's), the server runs as an unprivileged
    // user, and its commands with it.
    let root = nix::unistd::geteuid().is_root();
    let home = scratch_dir();
    let home_s = home.display().to_string();
    let launch = if root {
        // A copy in its home: the checkout may be in a directory that user cannot enter.
        let bin = home.join("interactive-terminal-mcp");
        std::fs::copy(SERVER_BIN, &bin).unwrap();
        std::os::unix::fs::chown(&home, Some(65534), Some(65534)).unwrap();
        server().bin("setpriv").args(&[
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            bin.to_str().unwrap(),
        ])
    } else {
        server()
    };
    let mut cmd = launch
        .envs(&[("HOME", &home_s), ("TMPDIR", &home_s)])
        .envs(&secrets)
        .command();
    cmd.current_dir(&home);
    let s = connect(cmd, false).await;
    let pid = s.pid;
    for mode in ["headless", "interactive"] {
        let out = printed(&s, mode, &format!("id -u; cat /proc/{pid}/environ")).await;
        assert!(!leaked(&out), "{mode}: {out}");
        // Refused, or not there at all (a session's pid namespace shows only itself).
        assert!(
            out.contains("Permission denied") || out.contains("No such file"),
            "{mode}: {out}"
        );
        let out = printed(&s, mode, "env").await;
        assert!(!leaked(&out), "{mode}: {out}");
    }
    s.stop().await;
}
