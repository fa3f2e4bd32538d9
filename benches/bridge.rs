//! Interactive execute and read_output through the container bridge against the same calls
//! on the local adapter, in one run. `cargo bench --bench bridge`; results in
//! docs/benchmarks.md.
#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "support/mod.rs"]
mod support;

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::*;

const TOKEN: &str = "bench-bridge-token";

fn main() {
    block_on(run());
}

async fn measure(c: &Client) -> (Duration, Duration, Duration) {
    let p = call(
        c,
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}),
    )
    .await;
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let run = |cmd: &str| -> Value {
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"command": cmd}})
    };
    for _ in 0..5 {
        call(c, run("true")).await;
    }
    let exec = time_n(100, || async {
        let r = call(c, run("true")).await;
        assert_eq!(r["result"]["exit_code"], 0, "{r}");
    })
    .await;
    let read =
        json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"cursor": 0}});
    let rd = time_n(200, || async {
        call(c, read.clone()).await;
    })
    .await;
    let open = time_n(20, || async {
        let r = call(c, json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": "true"}})).await;
        assert_eq!(r["result"]["exit_code"], 0);
        let t = r["identity"]["terminal_id"].as_str().unwrap().to_string();
        call(c, json!({"action": "terminate", "target": {"terminal_id": t}})).await;
    })
    .await;
    (exec, rd, open)
}

async fn run() {
    println!("## bridge (`cargo bench --bench bridge`)");
    let mut host = Command::new(HOST_BIN)
        .args([
            "--port",
            "0",
            "--token",
            TOKEN,
            "--no-user-rc",
            "--log",
            "error",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(host.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: Value = serde_json::from_str(&line).unwrap();
    let port = ready["address"]
        .as_str()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();

    let (local, _) = start(&[("PM_TERM_NO_USER_RC", "1")]).await;
    let (bridge, _) = start(&[
        ("PM_TERM_NO_USER_RC", "1"),
        ("PM_RUNNING_IN_CONTAINER", "true"),
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1"),
        ("PM_INTERACTIVE_TERMINAL_HOST_PORT", &port),
        ("PM_INTERACTIVE_TERMINAL_TOKEN", TOKEN),
    ])
    .await;
    let (le, lr, lo) = measure(&local).await;
    let (be, br, bo) = measure(&bridge).await;
    header("container bridge against local, same calls");
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    row(
        "execute `true` in an open terminal (exit code detected)",
        &ms(be),
        "same on local",
        &ms(le),
        ratio(be, le),
    );
    row(
        "read_output from cursor 0",
        &ms(br),
        "same on local",
        &ms(lr),
        ratio(br, lr),
    );
    row(
        "open a terminal, run `true`, terminate",
        &ms(bo),
        "same on local",
        &ms(lo),
        ratio(bo, lo),
    );
    let _ = local.cancel().await;
    let _ = bridge.cancel().await;
    let _ = host.kill();
    let _ = host.wait();
}
