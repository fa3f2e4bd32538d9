//! What the operator's sandbox costs: the same `echo hi` and the same terminal start through
//! MCP on a server without a sandbox and on servers with `--sandbox workspace-write` (network
//! off) enforced by bubblewrap and by Landlock + seccomp, interleaved in rounds so all meet
//! the same machine, and the raw cost of bubblewrap around `sh -c 'echo hi'` as a floor. Run with `cargo bench --bench sandbox`; results go in
//! docs/benchmarks.md.

#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "support/mod.rs"]
mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use support::*;

/// Interleaved rounds, and calls per round.
const ROUNDS: usize = 10;
const PER_ROUND: usize = 20;
/// Terminals opened (and closed) per server for the terminal row.
const TERMINALS: usize = 20;

fn main() {
    block_on(run());
}

/// `bwrap` with the server's arguments around `sh -c 'echo hi'`, output piped: what the
/// sandbox adds to a bare spawn.
/// `program args` with output piped, median of `n` runs; `None` if it cannot run here.
fn spawn_floor(program: &str, args: &[&str], n: usize) -> Option<Duration> {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let out = std::process::Command::new(program)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        v.push(t.elapsed());
    }
    Some(median(v))
}

fn bwrap_floor(ws: &str, n: usize) -> Duration {
    let args = [
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--bind",
        ws,
        ws,
        "--chdir",
        ws,
        "--",
        "/bin/sh",
        "-c",
        "echo hi",
    ];
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let out = std::process::Command::new("bwrap")
            .args(args)
            .stdout(Stdio::piped())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        v.push(t.elapsed());
    }
    median(v)
}

async fn run() {
    println!("## sandbox (`cargo bench --bench sandbox`)");
    let ws = std::env::temp_dir().join(format!("itmcp-bench-ws-{}", std::process::id()));
    std::fs::create_dir_all(&ws).unwrap();
    let ws_text = ws.display().to_string();
    let (plain, _) = start(&[]).await;
    let (boxed, _) = start(&[
        ("PM_TERM_SANDBOX", "workspace-write"),
        ("PM_TERM_WORKSPACE", &ws_text),
    ])
    .await;
    let (landlocked, _) = start(&[
        ("PM_TERM_SANDBOX", "workspace-write"),
        ("PM_TERM_WORKSPACE", &ws_text),
        ("PM_TERM_SANDBOX_MECHANISM", "landlock"),
    ])
    .await;
    let l = call(&boxed, json!({"action": "list"})).await;
    assert_eq!(l["result"]["sandbox"]["mechanism"], "bubblewrap", "{l:#}");
    let l = call(&landlocked, json!({"action": "list"})).await;
    assert_eq!(l["result"]["sandbox"]["mechanism"], "landlock", "{l:#}");
    let echo = json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": "echo hi"}, "runtime": {"cwd": ws_text}});
    for c in [&plain, &boxed, &landlocked] {
        for _ in 0..5 {
            call(c, echo.clone()).await;
        }
    }
    let (mut a, mut b, mut ll) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        for (c, into) in [(&plain, &mut a), (&boxed, &mut b), (&landlocked, &mut ll)] {
            for _ in 0..PER_ROUND {
                let t = Instant::now();
                let p = call(c, echo.clone()).await;
                into.push(t.elapsed());
                assert_eq!(p["result"]["stdout"], "hi\n", "{p:#}");
            }
        }
    }
    let (a, b, ll) = (median(a), median(b), median(ll));
    let sh = sh_floor("echo hi", 200);
    let bw = bwrap_floor(&ws_text, 200);

    header("cost per command");
    row(
        "`echo hi` through MCP, sandboxed (workspace-write, network off)",
        &ms(b),
        "the same on a server without a sandbox, same run",
        &ms(a),
        b.as_secs_f64() / a.as_secs_f64(),
    );
    row(
        "`echo hi` through MCP, sandboxed by Landlock + seccomp (same settings)",
        &ms(ll),
        "the same on a server without a sandbox, same run",
        &ms(a),
        ll.as_secs_f64() / a.as_secs_f64(),
    );
    row(
        "added by bubblewrap per command",
        &ms(b.saturating_sub(a)),
        "bubblewrap around `sh -c 'echo hi'` minus the bare spawn",
        &ms(bw.saturating_sub(sh)),
        b.saturating_sub(a).as_secs_f64() / bw.saturating_sub(sh).as_secs_f64().max(1e-9),
    );
    row(
        "bubblewrap around `sh -c 'echo hi'`, output piped",
        &ms(bw),
        "`sh -c 'echo hi'`, output piped",
        &ms(sh),
        bw.as_secs_f64() / sh.as_secs_f64(),
    );
    // What the kernel alone charges for the namespaces any private /tmp needs (util-linux's
    // unshare; as an unprivileged user it needs -r, which adds a user namespace).
    let ns_args: &[&str] = if is_root() {
        &["-m", "sh", "-c", "echo hi"]
    } else {
        &["-r", "-m", "sh", "-c", "echo hi"]
    };
    if let Some(ns) = spawn_floor("unshare", ns_args, 200) {
        row(
            "a mount namespace alone: `unshare -m sh -c 'echo hi'`",
            &ms(ns),
            "`sh -c 'echo hi'`, output piped",
            &ms(sh),
            ns.as_secs_f64() / sh.as_secs_f64(),
        );
    }

    let open = json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "execution": {"command": "true"}, "runtime": {"cwd": ws_text}});
    let mut open_times = [Vec::new(), Vec::new()];
    for _ in 0..TERMINALS {
        for (i, c) in [&plain, &boxed].into_iter().enumerate() {
            let t = Instant::now();
            let p = call(c, open.clone()).await;
            open_times[i].push(t.elapsed());
            let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
            call(
                c,
                json!({"action": "terminate", "target": {"terminal_id": id}}),
            )
            .await;
        }
    }
    let [oa, ob] = open_times;
    let (oa, ob) = (median(oa), median(ob));
    row(
        "terminal opened and `true` run in it (bash, shell integration), sandboxed",
        &ms(ob),
        "the same without a sandbox, same run",
        &ms(oa),
        ob.as_secs_f64() / oa.as_secs_f64(),
    );
    plain.cancel().await.unwrap();
    boxed.cancel().await.unwrap();
    landlocked.cancel().await.unwrap();
    let _ = std::fs::remove_dir_all(&ws);
}

/// Whether this bench runs as root (unshare needs no user namespace then).
fn is_root() -> bool {
    #[cfg(unix)]
    return nix::unistd::getuid().is_root();
    #[cfg(not(unix))]
    false
}
