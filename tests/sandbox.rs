//! The operator's sandbox, through the real binary: a corpus of writes and deletes in many
//! forms (redirections, interpreters, scripts written a moment before, subshells, coreutils)
//! against files outside the workspace, in `.git` and in a home with real rc files; `/tmp`
//! kept apart between sessions; connections with the network off; a sandboxed terminal
//! running a REPL and `vim`; what `list` says; bad settings refused at start; a sandbox that
//! cannot be set up refusing every command; and containment holding inside the sandbox.
//!
//! The home, the workspace and the "outside" directory live under /var/tmp, not /tmp: every
//! sandbox has a private /tmp, so a path under the real one would be hidden rather than
//! read-only, and the test would prove less than it says.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};

/// Where a test's files are: a home with real rc files, a workspace with a repository, and a
/// directory outside the workspace; removed at the end.
struct Place {
    base: PathBuf,
    home: PathBuf,
    ws: PathBuf,
    out: PathBuf,
}

impl Drop for Place {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// What a headless command printed on stdout.
fn stdout(r: &Value) -> &str {
    r["result"]["stdout"].as_str().unwrap_or_default()
}

fn place() -> Place {
    let base = PathBuf::from("/var/tmp").join(unique("itmcp-sbx-"));
    let home = base.join("home");
    let ws = base.join("ws");
    let out = base.join("outside");
    for d in [&home, &ws.join(".git/hooks"), &out] {
        std::fs::create_dir_all(d).unwrap();
    }
    let rc = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rc/bash/debian-skel.bashrc");
    std::fs::copy(rc, home.join(".bashrc")).unwrap();
    std::fs::write(home.join(".profile"), "[ -f ~/.bashrc ] && . ~/.bashrc\n").unwrap();
    std::fs::write(home.join(".gitconfig"), "[user]\n\tname = Someone\n").unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(out.join("keep.txt"), "keep\n").unwrap();
    Place {
        base,
        home,
        ws,
        out,
    }
}

/// Every file under `dir` with its content (directories as empty entries).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut all = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                todo.push(p.clone());
                all.insert(p, Vec::new());
            } else {
                all.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    all
}

fn in_dir(command: &str, cwd: &Path) -> Value {
    let mut q = headless(command);
    q["runtime"] = json!({"cwd": cwd.display().to_string(), "wait_ms": 20000});
    q
}

async fn sandboxed(p: &Place, level: &str, extra: &[&str]) -> Server {
    let ws = p.ws.display().to_string();
    let mut args = vec!["--sandbox", level, "--workspace", &ws];
    args.extend_from_slice(extra);
    // Warned commands run unasked: what is tested is what the sandbox lets them do.
    server()
        .args(&args)
        .env("HOME", &p.home.display().to_string())
        .env("PM_TERM_APPROVAL_DEFAULT", "approve")
        .start()
        .await
}

/// Writes and deletes outside the writable roots, in as many forms as agents use.
fn hostile_corpus(p: &Place) -> Vec<String> {
    let out = p.out.display();
    vec![
        format!("echo x > {out}/new1"),
        format!("python3 -c \"open('{out}/new2', 'w').write('x')\""),
        format!("cp /etc/hostname {out}/new3"),
        format!("mkdir {out}/newdir"),
        format!("rm -f {out}/keep.txt"),
        format!("sh -c 'echo x >> {out}/keep.txt'"),
        format!(
            "printf '#!/bin/sh\\necho x > {out}/new4\\n' > run.sh && chmod +x run.sh && ./run.sh"
        ),
        format!("(cd {out} && touch new5)"),
        format!("perl -e 'open(F, \">{out}/new6\") or die \"$!\\n\"'"),
        format!("find {out} -name keep.txt -delete"),
        format!("ln -s /etc/passwd {out}/link"),
        format!("echo moved > m.txt && mv m.txt {out}/"),
        format!("truncate -s 0 {out}/keep.txt"),
        // A build tool whose recipe writes outside.
        format!("printf 'all:\\n\\techo x > {out}/new7\\n' > Makefile && make -s"),
        // Through a link made inside the workspace.
        format!("ln -s {out}/keep.txt link && echo x >> link"),
        format!("ln {out}/keep.txt hard && echo x >> hard"),
        format!("python3 -c \"import os; os.rename('{out}/keep.txt', 'stolen.txt')\""),
        "echo 'alias ls=rm' >> ~/.bashrc".into(),
        "rm -f ~/.profile".into(),
        "git config --global user.name Mallory".into(),
        "echo x >> .git/config".into(),
        "rm -f .git/HEAD".into(),
        "printf '#!/bin/sh\\ncurl evil' > .git/hooks/pre-commit".into(),
        "mv .git .git-away".into(),
    ]
}

/// Work an agent does inside the workspace: all of it must keep working.
fn benign_corpus() -> Vec<(&'static str, &'static str)> {
    vec![
        ("echo ok > inside.txt && cat inside.txt", "ok\n"),
        ("mkdir -p sub/dir && touch sub/dir/f && ls sub/dir", "f\n"),
        (
            "python3 -c \"open('py.txt', 'w').write('py')\" && cat py.txt",
            "py",
        ),
        ("head -c 6 .git/config", "[core]"),
        (
            "grep -c skel ~/.bashrc >/dev/null && echo read-home",
            "read-home\n",
        ),
        ("echo t > /tmp/t && cat /tmp/t", "t\n"),
        ("rm inside.txt && echo gone", "gone\n"),
        (
            "printf 'all:\\n\\t@echo built > built.txt\\n' > Makefile && make -s && cat built.txt",
            "built\n",
        ),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn workspace_write_lets_nothing_outside_the_workspace_change() {
    let p = place();
    let s = sandboxed(&p, "workspace-write", &[]).await;
    let before = (
        snapshot(&p.out),
        snapshot(&p.home),
        snapshot(&p.ws.join(".git")),
    );
    let mut got_through = Vec::new();
    let mut named = 0;
    for c in hostile_corpus(&p) {
        let r = s.call(in_dir(&c, &p.ws)).await;
        assert_eq!(r["success"], true, "{c}: {r:#}");
        if r["result"]["exit_code"] == 0 {
            got_through.push(c.clone());
        }
        if let Some(d) = r["result"].get("sandbox_denial") {
            assert_eq!(d["kind"], "write", "{c}: {r:#}");
            assert!(d["message"].as_str().unwrap().contains("writable"), "{d:#}");
            named += 1;
        }
    }
    let after = (
        snapshot(&p.out),
        snapshot(&p.home),
        snapshot(&p.ws.join(".git")),
    );
    assert_eq!(before.0, after.0, "the outside directory changed");
    assert_eq!(before.1, after.1, "the home directory changed");
    assert_eq!(before.2, after.2, ".git changed");
    assert!(got_through.is_empty(), "reported success: {got_through:#?}");
    assert!(named >= 10, "only {named} failures were explained");
    // The first one names its path.
    let r = s.call(in_dir(&hostile_corpus(&p)[0], &p.ws)).await;
    assert_eq!(
        r["result"]["sandbox_denial"]["target"],
        format!("{}/new1", p.out.display()),
        "{r:#}"
    );
    for (c, want) in benign_corpus() {
        let r = s.call(in_dir(c, &p.ws)).await;
        assert_eq!(r["result"]["exit_code"], 0, "{c}: {r:#}");
        assert_eq!(r["result"]["stdout"], want, "{c}: {r:#}");
        assert!(r["result"].get("sandbox_denial").is_none(), "{r:#}");
    }
    assert_eq!(std::fs::read_to_string(p.ws.join("py.txt")).unwrap(), "py");
    assert!(p.ws.join("sub/dir/f").exists());
    // A working directory outside the workspace gives no way out either.
    let r = s.call(in_dir("touch here", &p.out)).await;
    assert_ne!(r["result"]["exit_code"], 0, "{r:#}");
    assert!(!p.out.join("here").exists());
    // list says what is in force.
    let l = s.call(json!({"action": "list"})).await;
    let sb = &l["result"]["sandbox"];
    assert_eq!(sb["mode"], "workspace-write", "{l:#}");
    assert_eq!(sb["network"], "off");
    assert_eq!(sb["mechanism"], "bubblewrap");
    assert_eq!(sb["available"], true);
    assert_eq!(sb["workspaces"], json!([p.ws.display().to_string()]));
    s.stop().await;

    // The same corpus without a sandbox does change things: the checks above can fail.
    let s = server()
        .env("HOME", &p.home.display().to_string())
        .start()
        .await;
    let r = s.call(in_dir(&hostile_corpus(&p)[0], &p.ws)).await;
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    assert!(p.out.join("new1").exists());
    let l = s.call(json!({"action": "list"})).await;
    assert_eq!(l["result"]["sandbox"]["mode"], "off");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_writes_nothing_but_its_private_tmp() {
    let p = place();
    let s = sandboxed(&p, "read-only", &[]).await;
    let before = snapshot(&p.base);
    let r = s.call(in_dir("echo x > inside.txt", &p.ws)).await;
    assert_ne!(r["result"]["exit_code"], 0, "{r:#}");
    assert_eq!(r["result"]["sandbox_denial"]["kind"], "write", "{r:#}");
    let r = s
        .call(in_dir(
            "echo t > /tmp/t && cat /tmp/t && cat inside.txt 2>/dev/null; true",
            &p.ws,
        ))
        .await;
    assert_eq!(r["result"]["stdout"], "t\n", "{r:#}");
    assert_eq!(snapshot(&p.base), before);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_session_has_a_tmp_of_its_own() {
    let p = place();
    let s = sandboxed(&p, "workspace-write", &[]).await;
    let name = unique("itmcp-sbx-secret-");
    let host_path = Path::new("/tmp").join(&name);
    let r = s
        .call(in_dir(
            &format!("echo secret > /tmp/{name} && cat /tmp/{name}"),
            &p.ws,
        ))
        .await;
    assert_eq!(r["result"]["stdout"], "secret\n", "{r:#}");
    let r = s.call(in_dir(&format!("cat /tmp/{name}"), &p.ws)).await;
    assert_ne!(r["result"]["exit_code"], 0, "another session saw it: {r:#}");
    assert!(!host_path.exists(), "it reached the machine's /tmp");
    // Nor can a sandboxed command read what others keep in the machine's /tmp.
    std::fs::write(&host_path, "host secret").unwrap();
    let r = s.call(in_dir(&format!("cat /tmp/{name}"), &p.ws)).await;
    assert_ne!(r["result"]["exit_code"], 0, "{r:#}");
    let _ = std::fs::remove_file(&host_path);
    s.stop().await;
}

/// A listener on the machine's loopback that counts the connections it accepts.
fn listener() -> (u16, std::net::TcpListener) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    (l.local_addr().unwrap().port(), l)
}

fn accepted(l: &std::net::TcpListener) -> usize {
    std::iter::from_fn(|| l.accept().ok()).count()
}

#[tokio::test(flavor = "multi_thread")]
async fn with_the_network_off_no_connection_leaves_the_sandbox() {
    let p = place();
    let (port, l) = listener();
    let s = sandboxed(&p, "workspace-write", &[]).await;
    let attempts = [
        format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\""
        ),
        format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'"),
        format!("curl -sS --max-time 3 http://127.0.0.1:{port}/"),
        "curl -sS --max-time 3 http://example.com/".into(),
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\"".into(),
    ];
    for c in &attempts {
        let r = s.call(in_dir(c, &p.ws)).await;
        assert_ne!(r["result"]["exit_code"], 0, "{c}: {r:#}");
        assert_eq!(
            r["result"]["sandbox_denial"]["kind"], "network",
            "{c}: {r:#}"
        );
    }
    assert_eq!(accepted(&l), 0, "a connection got through");
    s.stop().await;

    // With the network on, the same connection is made: the check above can fail.
    let s = sandboxed(&p, "workspace-write", &["--network", "on"]).await;
    let r = s.call(in_dir(&attempts[0], &p.ws)).await;
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(accepted(&l), 1);
    s.stop().await;
}

/// A tiny HTTP server on the machine's loopback: answers `hello-from-host` and counts the
/// requests it served.
fn web_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for mut conn in l.incoming().flatten() {
            let mut head = Vec::new();
            let mut b = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut b) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&b[..n]),
                }
            }
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = conn.write_all(
                b"HTTP/1.0 200 OK\r\nContent-Length: 15\r\nConnection: close\r\n\r\nhello-from-host",
            );
        }
    });
    (port, served)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_allow_list_reaches_listed_domains_through_the_proxy_and_nothing_else() {
    use std::sync::atomic::Ordering;
    let p = place();
    let (port, served) = web_server();
    // localhost resolves from /etc/hosts: no DNS is needed for the allowed name, and the
    // denied one is refused before any lookup.
    let s = sandboxed(&p, "workspace-write", &["--network", "allow:localhost"]).await;
    let via_proxy = [
        format!("curl -sS http://localhost:{port}/"),
        format!("curl -sS --proxytunnel http://localhost:{port}/"),
        format!(
            "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://localhost:{port}/').read().decode())\""
        ),
    ];
    for c in &via_proxy {
        let r = s.call(in_dir(c, &p.ws)).await;
        assert_eq!(r["result"]["exit_code"], 0, "{c}: {r:#}");
        assert!(stdout(&r).contains("hello-from-host"), "{c}: {r:#}");
    }
    assert_eq!(served.load(Ordering::SeqCst), via_proxy.len());
    let denied = [
        "curl -fsS http://denied.test/".to_string(),
        "curl -sS https://denied.test/".to_string(),
        "curl -fsS http://127.0.0.1.nip.io/".to_string(),
        format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\""
        ),
        format!("curl -sS --noproxy '*' http://localhost:{port}/"),
    ];
    for c in &denied {
        let r = s.call(in_dir(c, &p.ws)).await;
        assert_ne!(r["result"]["exit_code"], 0, "{c}: {r:#}");
        assert_eq!(
            r["result"]["sandbox_denial"]["kind"], "network",
            "{c}: {r:#}"
        );
    }
    // The proxy's own answer names the host and the list.
    let r = s.call(in_dir("curl -sS http://denied.test/", &p.ws)).await;
    let body = stdout(&r);
    assert!(
        body.contains("denied.test is not on the sandbox's network allow-list (localhost)"),
        "{r:#}"
    );
    assert_eq!(
        served.load(Ordering::SeqCst),
        via_proxy.len(),
        "a denied connection got through"
    );
    // A hostile program speaks garbage, or an endless head, to the proxy: it answers each
    // with a clear refusal and goes on serving.
    let r = s
        .call(in_dir(
            "bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128; printf \"\\001\\002 GARBAGE\\r\\n\\r\\n\" >&3; cat <&3'",
            &p.ws,
        ))
        .await;
    assert!(stdout(&r).starts_with("HTTP/1.1 400 "), "{r:#}");
    let r = s
        .call(in_dir(
            "python3 -c \"import socket; c = socket.create_connection(('127.0.0.1', 3128)); c.sendall(b'GET http://localhost/ HTTP/1.1\\r\\nX: ' + b'a' * 40000); print(c.recv(100).decode().splitlines()[0])\"",
            &p.ws,
        ))
        .await;
    assert!(stdout(&r).starts_with("HTTP/1.1 431 "), "{r:#}");
    let r = s.call(in_dir(&via_proxy[0], &p.ws)).await;
    assert!(stdout(&r).contains("hello-from-host"), "{r:#}");
    assert_eq!(served.load(Ordering::SeqCst), via_proxy.len() + 1);
    // A terminal's programs go the same way.
    let r = s
        .call(term(None, json!({"command": format!("curl -sS http://localhost:{port}/; echo; curl -sS http://denied.test/")})))
        .await;
    let out = r["result"]["output"].as_str().unwrap();
    assert!(
        out.contains("hello-from-host") && out.contains("not on the sandbox's network allow-list"),
        "{r:#}"
    );
    assert_eq!(served.load(Ordering::SeqCst), via_proxy.len() + 2);
    let l = s.call(json!({"action": "list"})).await;
    assert_eq!(
        l["result"]["sandbox"]["network"], "allow:localhost",
        "{l:#}"
    );
    s.stop().await;
}

/// Start a Python REPL in terminal `id` and have it compute `expr`, which shows `want`.
async fn python_computes(s: &Server, id: &str, expr: &str, want: &str) {
    s.call(term(
        Some(id),
        json!({"input": "python3 -q\r", "wait_for": ">>> "}),
    ))
    .await;
    let r = s
        .call(term(
            Some(id),
            json!({"input": format!("{expr}\r"), "wait_for": want}),
        ))
        .await;
    assert!(
        r["result"]["output"].as_str().unwrap().contains(want),
        "{r:#}"
    );
}

fn term(id: Option<&str>, execution: Value) -> Value {
    let mut q = json!({"action": "execute",
        "invocation": {"mode": "interactive", "intent": "execute_command"},
        "execution": execution, "runtime": {"wait_ms": 10000}});
    if let Some(id) = id {
        q["target"] = json!({"terminal_id": id});
    }
    q
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_terminal_runs_its_users_shell_a_repl_and_vim() {
    let p = place();
    let s = sandboxed(&p, "workspace-write", &[]).await;
    // The user's own ~/.bashrc (Debian's) runs inside the sandbox.
    let r = s
        .call(term(
            None,
            json!({"command": format!("cd {} && touch ~/.hushlogin; echo rc=$?", p.ws.display())}),
        ))
        .await;
    assert_eq!(r["success"], true, "{r:#}");
    let out = r["result"]["output"].as_str().unwrap();
    assert!(
        out.contains("Read-only file system") && out.contains("rc=1"),
        "{r:#}"
    );
    assert_eq!(r["result"]["shell_integration"], "full", "{r:#}");
    let id = r["identity"]["terminal_id"].as_str().unwrap().to_string();
    // A command that fails on the sandbox is explained, as in headless answers.
    let target = format!("{}/from-terminal", p.out.display());
    let r = s
        .call(term(
            Some(&id),
            json!({"command": format!("touch {target}")}),
        ))
        .await;
    assert_eq!(r["result"]["command"]["exit_code"], 1, "{r:#}");
    assert_eq!(r["result"]["sandbox_denial"]["kind"], "write", "{r:#}");
    assert_eq!(r["result"]["sandbox_denial"]["target"], target, "{r:#}");
    let r = s.call(term(Some(&id), json!({"command": "false"}))).await;
    assert!(r["result"].get("sandbox_denial").is_none(), "{r:#}");
    // With a second terminal open, this one sees its own shell-integration nonce only.
    let other = s.call(term(None, json!({"command": "true"}))).await;
    assert_eq!(other["success"], true, "{other:#}");
    let r = s
        .call(term(
            Some(&id),
            json!({"command": "ls -d /tmp/interactive-terminal-mcp-*/run-*/nonce-* | wc -l"}),
        ))
        .await;
    assert_eq!(r["result"]["output"], "1\n", "{r:#}");

    // A REPL: it computes, and its writes outside the workspace fail.
    python_computes(&s, &id, "1+1", "2").await;
    let line = format!("open('{}/repl.txt', 'w')\r", p.out.display());
    let r = s
        .call(term(
            Some(&id),
            json!({"input": line, "wait_for": "Read-only file system"}),
        ))
        .await;
    assert!(
        r["result"]["output"]
            .as_str()
            .unwrap()
            .contains("Read-only file system"),
        "{r:#}"
    );
    s.call(term(Some(&id), json!({"input": "exit()\r"}))).await;

    // vim edits a file in the workspace.
    let file = p.ws.join("notes.txt");
    s.call(term(
        Some(&id),
        json!({"input": "vim -u NONE -N notes.txt\r", "wait_for": "~"}),
    ))
    .await;
    s.call(term(
        Some(&id),
        json!({"input": "ihello from vim", "wait_for": "hello from vim"}),
    ))
    .await;
    s.call(term(Some(&id), json!({"keys": ["escape"]}))).await;
    s.call(term(Some(&id), json!({"input": ":wq\r"}))).await;
    let r = s
        .call(term(Some(&id), json!({"command": "cat notes.txt"})))
        .await;
    assert_eq!(r["result"]["output"], "hello from vim\n", "{r:#}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello from vim\n");
    assert!(!p.out.join("repl.txt").exists());
    assert!(!p.home.join(".hushlogin").exists());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bundled_host_confines_its_terminals_as_the_server_was_told() {
    let p = place();
    let s = sandboxed(&p, "workspace-write", &["--adapter", "bundled"]).await;
    let cmd = format!("touch {}/from-host; echo rc=$?", p.out.display());
    let r = s.call(term(None, json!({"command": cmd}))).await;
    assert_eq!(r["resolved"]["adapter"], "bundled", "{r:#}");
    assert!(
        r["result"]["output"].as_str().unwrap().contains("rc=1"),
        "{r:#}"
    );
    assert!(!p.out.join("from-host").exists());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandbox_that_cannot_be_set_up_refuses_every_command() {
    let p = place();
    // No bubblewrap on this PATH.
    let empty = scratch_dir();
    let ws = p.ws.display().to_string();
    let path = empty.display().to_string();
    let s = server()
        .args(&[
            "--sandbox",
            "workspace-write",
            "--workspace",
            &ws,
            "--sandbox-mechanism",
            "bubblewrap",
        ])
        .env("PATH", &path)
        .start()
        .await;
    let r = s
        .call(in_dir(&format!("touch {}/x", p.out.display()), &p.ws))
        .await;
    assert_eq!(code(&r), "PM_TERM_INVALID_MODE", "{r:#}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bubblewrap"),
        "{r:#}"
    );
    assert_eq!(r["fallback"]["can_auto_retry"], false, "{r:#}");
    let r = s.call(term(None, json!({"command": "echo hi"}))).await;
    assert_eq!(code(&r), "PM_TERM_INVALID_MODE", "{r:#}");
    let l = s.call(json!({"action": "list"})).await;
    assert_eq!(l["result"]["sandbox"]["available"], false, "{l:#}");
    assert!(!p.out.join("x").exists());
    s.stop().await;
    let check = |mechanism: &str| {
        server()
            .args(&["--sandbox", "read-only", "--check-config"])
            .args(&["--sandbox-mechanism", mechanism])
            .env("PATH", &path)
            .output()
    };
    let out = check("bubblewrap");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("bubblewrap"));
    // auto falls back to Landlock + seccomp, and says so.
    let out = check("auto");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("enforced by Landlock + seccomp"));
}

#[test]
fn bad_sandbox_settings_stop_the_server_at_start() {
    for (args, env, says) in [
        (&["--sandbox", "writable"][..], None, "sandbox mode"),
        (
            &[
                "--sandbox",
                "workspace-write",
                "--workspace",
                "/no/such/dir",
            ],
            None,
            "/no/such/dir",
        ),
        (
            &["--sandbox", "workspace-write", "--workspace", "/"],
            None,
            "whole file system",
        ),
        (&["--network", "allow:"], None, "names no domain"),
        (&["--network", "sometimes"], None, "network setting"),
        (&[], Some(("PM_TERM_SANDBOX", "yes")), "PM_TERM_SANDBOX"),
    ] {
        let out = server().args(args).envs(env.as_slice()).output();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "stdout is the MCP channel");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn containment_holds_inside_the_sandbox_even_when_the_server_is_killed() {
    let p = place();
    let s = sandboxed(&p, "workspace-write", &[]).await;
    // What a command leaves running in the background ends with it: its pid namespace does.
    let mark = unique("sbxbg");
    let r = s
        .call(in_dir(
            &format!("sh -c 'sleep 600' {mark} & echo started"),
            &p.ws,
        ))
        .await;
    assert_eq!(r["result"]["stdout"], "started\n", "{r:#}");
    assert!(wait_gone(&mark, Duration::from_secs(5)).await.is_empty());

    // terminate kills a running command's whole tree, a setsid double fork included.
    let mark = unique("sbxkeep");
    let mut q = in_dir(
        &format!("sh -c 'sleep 600' {mark}a & setsid sh -c 'sleep 600' {mark}b & wait"),
        &p.ws,
    );
    q["runtime"]["wait_ms"] = json!(300);
    let r = s.call(q).await;
    assert_eq!(r["result"]["running"], true, "{r:#}");
    assert!(wait_present(&mark, 2, Duration::from_secs(5)).await >= 2);
    let id = r["identity"]["session_id"].as_str().unwrap().to_string();
    let t = s
        .call(json!({"action": "terminate", "target": {"session_id": id}}))
        .await;
    assert_eq!(t["success"], true, "{t:#}");
    assert!(wait_gone(&mark, Duration::from_secs(5)).await.is_empty());

    // A server killed with SIGKILL leaves nothing running, in a command or a terminal.
    let mark = unique("sbxkill");
    let mut q = in_dir(&format!("setsid sh -c 'sleep 600' {mark}h & wait"), &p.ws);
    q["runtime"]["wait_ms"] = json!(300);
    s.call(q).await;
    s.call(term(
        None,
        json!({"command": format!("sh -c 'sleep 600' {mark}t &")}),
    ))
    .await;
    assert!(wait_present(&mark, 2, Duration::from_secs(5)).await >= 2);
    sigkill(s.pid);
    let left = wait_gone(&mark, Duration::from_secs(10)).await;
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Under Landlock each session's `TMPDIR` is a directory of its own: it goes when the
/// session ends, finished or killed (once a supervisor restricted itself and could empty
/// it but never remove it, so every sandboxed command left one behind).
#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_sessions_tmpdir_goes_with_it() {
    let p = place();
    std::fs::remove_dir_all(p.ws.join(".git")).unwrap();
    let s = sandboxed(&p, "workspace-write", &["--sandbox-mechanism", "landlock"]).await;
    let finished = s
        .call(in_dir("echo x > \"$TMPDIR/f\" && echo \"$TMPDIR\"", &p.ws))
        .await;
    let mut left = vec![PathBuf::from(stdout(&finished).trim())];
    let mut running = in_dir("echo \"$TMPDIR\"; echo x > \"$TMPDIR/g\"; sleep 60", &p.ws);
    running["runtime"]["wait_ms"] = json!(1000);
    let r = s.call(running).await;
    let id = r["identity"]["session_id"].as_str().unwrap().to_string();
    left.push(PathBuf::from(stdout(&r).trim()));
    assert!(left[1].join("g").exists(), "{r:#}");
    let t = s
        .call(json!({"action": "terminate", "target": {"session_id": id}}))
        .await;
    assert_eq!(t["success"], true, "{t:#}");
    for dir in &left {
        assert!(dir.starts_with(std::env::temp_dir()), "{dir:?}");
        let gone = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            !dir.exists()
        });
        assert!(gone, "{} is still there", dir.display());
    }
    s.stop().await;
}

/// A server killed with SIGKILL together with its spawner and the supervisor (as the OOM
/// killer, or `kill -9` of the whole tree, does): nothing of it is left to remove the session's
/// `TMPDIR`, so the next server's start does.
#[tokio::test(flavor = "multi_thread")]
async fn a_tmpdir_left_by_a_killed_server_goes_at_the_next_start() {
    let p = place();
    std::fs::remove_dir_all(p.ws.join(".git")).unwrap();
    let s = sandboxed(&p, "workspace-write", &["--sandbox-mechanism", "landlock"]).await;
    let mut running = in_dir("echo \"$TMPDIR\"; echo x > \"$TMPDIR/g\"; sleep 600", &p.ws);
    running["runtime"]["wait_ms"] = json!(1000);
    let r = s.call(running).await;
    let dir = PathBuf::from(stdout(&r).trim());
    assert!(dir.join("g").exists(), "{r:#}");
    // Every process of the tree, stopped first so that none sees another die and cleans up.
    let mut tree = vec![s.pid];
    let mut i = 0;
    while i < tree.len() {
        let more = children_of(tree[i]);
        tree.extend(more);
        i += 1;
    }
    for sig in [
        nix::sys::signal::Signal::SIGSTOP,
        nix::sys::signal::Signal::SIGKILL,
    ] {
        for pid in &tree {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid as i32), sig);
        }
    }
    let gone = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        tree.iter().all(|pid| !alive(*pid))
    });
    assert!(gone, "the tree outlived SIGKILL: {tree:?}");
    assert!(dir.exists(), "nothing was left to remove {}", dir.display());
    drop(s);
    let again = sandboxed(&p, "workspace-write", &["--sandbox-mechanism", "landlock"]).await;
    assert!(
        !dir.exists(),
        "{} outlived the next server's start",
        dir.display()
    );
    again.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn landlock_and_seccomp_confine_where_bubblewrap_is_not_used() {
    let p = place();
    std::fs::remove_dir_all(p.ws.join(".git")).unwrap();
    let (port, l) = listener();
    let s = sandboxed(&p, "workspace-write", &["--sandbox-mechanism", "landlock"]).await;
    let before = (snapshot(&p.out), snapshot(&p.home));
    for c in hostile_corpus(&p).iter().filter(|c| !c.contains(".git")) {
        let r = s.call(in_dir(c, &p.ws)).await;
        assert_ne!(r["result"]["exit_code"], 0, "{c}: {r:#}");
    }
    assert_eq!(
        before,
        (snapshot(&p.out), snapshot(&p.home)),
        "something changed"
    );
    let r = s
        .call(in_dir(&format!("echo x > {}/new1", p.out.display()), &p.ws))
        .await;
    assert_eq!(r["result"]["sandbox_denial"]["kind"], "write", "{r:#}");
    for (c, want) in [
        ("echo ok > inside.txt && cat inside.txt", "ok\n"),
        (
            "python3 -c \"open('py.txt', 'w').write('py')\" && cat py.txt",
            "py",
        ),
        ("echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"", "t\n"),
    ] {
        let r = s.call(in_dir(c, &p.ws)).await;
        assert_eq!(r["result"]["stdout"], want, "{c}: {r:#}");
    }
    // No private /tmp here: the machine's is read-only, TMPDIR is the session's own.
    let name = unique("itmcp-ll-");
    let r = s
        .call(in_dir(&format!("echo x > /tmp/{name}"), &p.ws))
        .await;
    assert_ne!(r["result"]["exit_code"], 0, "{r:#}");
    assert!(!Path::new("/tmp").join(&name).exists());
    let c = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\""
    );
    let r = s.call(in_dir(&c, &p.ws)).await;
    assert_ne!(r["result"]["exit_code"], 0, "{r:#}");
    assert_eq!(r["result"]["sandbox_denial"]["kind"], "network", "{r:#}");
    assert_eq!(accepted(&l), 0, "a connection got through");
    let list = s.call(json!({"action": "list"})).await;
    assert_eq!(
        list["result"]["sandbox"]["mechanism"], "landlock",
        "{list:#}"
    );
    // A terminal with the user's bash set-up, and a REPL, under Landlock.
    let r = s
        .call(term(
            None,
            json!({"command": format!("cd {} && touch ~/.hushlogin; echo rc=$?", p.ws.display())}),
        ))
        .await;
    assert!(
        r["result"]["output"].as_str().unwrap().contains("rc=1"),
        "{r:#}"
    );
    let id = r["identity"]["terminal_id"].as_str().unwrap().to_string();
    python_computes(&s, &id, "6*7", "42").await;
    assert!(!p.home.join(".hushlogin").exists());
    s.stop().await;

    // Landlock can only grant: a workspace holding .git cannot be writable with .git kept
    // read-only, so it is refused, never granted.
    std::fs::create_dir_all(p.ws.join(".git")).unwrap();
    let s = sandboxed(&p, "workspace-write", &["--sandbox-mechanism", "landlock"]).await;
    let r = s.call(in_dir("echo hi", &p.ws)).await;
    assert_eq!(code(&r), "PM_TERM_INVALID_MODE", "{r:#}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains(".git"),
        "{r:#}"
    );
    s.stop().await;
    // Nor can it route connections through the allow-list proxy.
    let s = sandboxed(
        &p,
        "read-only",
        &[
            "--sandbox-mechanism",
            "landlock",
            "--network",
            "allow:localhost",
        ],
    )
    .await;
    let r = s.call(in_dir("echo hi", &p.ws)).await;
    assert_eq!(code(&r), "PM_TERM_INVALID_MODE", "{r:#}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bubblewrap"),
        "{r:#}"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bridged_terminals_are_confined_as_the_hosts_operator_decides() {
    let p = place();
    let ws = p.ws.display().to_string();
    let host = host("tok-sandbox")
        .args(&["--sandbox", "workspace-write", "--workspace", &ws])
        .start();
    // The server in its container has no sandbox of its own: its headless commands are not
    // confined, the host's terminals are.
    let s = bridged_server(host.port, "tok-sandbox")
        .env("PM_TERM_NO_USER_RC", "1")
        .start()
        .await;
    let mut q = term(
        None,
        json!({"command": format!("touch {}/bridged; echo rc=$?; touch inside-ok; echo rc=$?", p.out.display())}),
    );
    q["runtime"]["cwd"] = json!(ws);
    let r = s.call(q).await;
    assert_eq!(r["resolved"]["adapter"], "container_bridge", "{r:#}");
    let out = r["result"]["output"].as_str().unwrap();
    assert!(
        out.contains("Read-only file system") && out.contains("rc=1\nrc=0"),
        "{r:#}"
    );
    assert!(!p.out.join("bridged").exists());
    assert!(p.ws.join("inside-ok").exists());
    let r = s
        .call(in_dir(
            &format!("touch {}/headless", p.out.display()),
            &p.ws,
        ))
        .await;
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    assert!(p.out.join("headless").exists());
    s.stop().await;
}

/// The uid and gid an unprivileged user runs the server with, when the tests run as root.
const NOBODY: u32 = 65534;

#[tokio::test(flavor = "multi_thread")]
async fn an_unprivileged_user_gets_the_same_sandbox() {
    let p = place();
    let is_root = nix::unistd::getuid().is_root();
    if is_root {
        for d in [&p.base, &p.home, &p.ws, &p.ws.join(".git"), &p.out] {
            std::os::unix::fs::chown(d, Some(NOBODY), Some(NOBODY)).unwrap();
        }
    }
    let ws = p.ws.display().to_string();
    let server_args = ["--sandbox", "workspace-write", "--workspace", &ws];
    let uid = format!("--reuid={NOBODY}");
    let gid = format!("--regid={NOBODY}");
    // As root, the server is started as `nobody` (bubblewrap then needs user namespaces, as
    // for any user); otherwise the tests already run unprivileged.
    let launch = if is_root {
        let mut args = vec![
            uid.as_str(),
            gid.as_str(),
            "--clear-groups",
            "--",
            SERVER_BIN,
        ];
        args.extend(server_args);
        server().bin(&on_path("setpriv")).args(&args)
    } else {
        server().args(&server_args)
    };
    let s = launch
        .env("HOME", &p.home.display().to_string())
        .start()
        .await;
    let r = s
        .call(in_dir(
            "id -u; echo ok > inside.txt && cat inside.txt",
            &p.ws,
        ))
        .await;
    let who = if is_root {
        NOBODY.to_string()
    } else {
        nix::unistd::getuid().to_string()
    };
    assert_eq!(r["result"]["stdout"], format!("{who}\nok\n"), "{r:#}");
    let r = s
        .call(in_dir(&format!("echo x > {}/new1", p.out.display()), &p.ws))
        .await;
    assert_eq!(r["result"]["sandbox_denial"]["kind"], "write", "{r:#}");
    assert!(!p.out.join("new1").exists());
    let r = s.call(in_dir("echo x >> .git/config", &p.ws)).await;
    assert_ne!(r["result"]["exit_code"], 0, "{r:#}");
    let l = s.call(json!({"action": "list"})).await;
    assert_eq!(l["result"]["sandbox"]["available"], true, "{l:#}");
    s.stop().await;
}

/// A hostile request: the agent builds a library in the workspace and asks for it as
/// `LD_PRELOAD`. In `execution.env` it is refused (the loader's variables carry code the
/// policy does not see); in the command line it is judged, and under a sandbox it runs only
/// in the confined program (set on the sandbox's own process, bwrap, it would run before
/// the sandbox exists).
#[tokio::test(flavor = "multi_thread")]
async fn a_variable_from_the_request_never_reaches_the_sandbox_itself() {
    let p = place();
    std::fs::remove_dir_all(p.ws.join(".git")).unwrap();
    let escaped = p.out.join("escaped");
    let src = p.ws.join("evil.c");
    let lib = p.ws.join("evil.so");
    std::fs::write(
        &src,
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void evil(void) {{\n  \
             FILE *f = fopen(\"{}\", \"a\");\n  if (f) {{ fputs(\"out\\n\", f); fclose(f); }}\n}}\n",
            escaped.display()
        ),
    )
    .unwrap();
    let built = std::process::Command::new(on_path("gcc"))
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .unwrap();
    assert!(built.success());
    let mut in_env = in_dir("/bin/true", &p.ws);
    in_env["execution"]["env"] = json!({"LD_PRELOAD": lib.display().to_string()});
    // `/bin/true`, not the shell's builtin: a program the loader starts.
    let q = in_dir(&format!("LD_PRELOAD='{}' /bin/true", lib.display()), &p.ws);
    for mechanism in ["bubblewrap", "landlock"] {
        let s = sandboxed(&p, "workspace-write", &["--sandbox-mechanism", mechanism]).await;
        let r = s.call(in_env.clone()).await;
        assert_eq!(code(&r), "PM_TERM_INVALID_PAYLOAD", "{mechanism}: {r:#}");
        assert_eq!(r["error"]["details"]["field"], "execution.env.LD_PRELOAD");
        let r = s.call(q.clone()).await;
        assert_eq!(r["success"], true, "{mechanism}: {r:#}");
        assert!(
            !escaped.exists(),
            "{mechanism}: the library ran outside the sandbox"
        );
        s.stop().await;
    }
    // Without a sandbox the library does run: the check above can fail. (The line is
    // warned, `code_in_environment`: it runs unasked here.)
    let s = server()
        .env("HOME", &p.home.display().to_string())
        .env("PM_TERM_APPROVAL_DEFAULT", "approve")
        .start()
        .await;
    s.call(q).await;
    assert!(escaped.exists());
    s.stop().await;
}
