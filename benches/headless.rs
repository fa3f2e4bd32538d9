//! Headless benchmarks: cold start, `echo` end to end through MCP (on a quiet server, and on
//! one holding 500 terminals while thousands of idle processes sit on the machine), a long
//! output delivered line for line to the client, pipe throughput, memory. Run with
//! `cargo bench --bench headless`; results go in docs/benchmarks.md.

#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "support/mod.rs"]
mod support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::*;

/// Bytes pushed through the pipe in the throughput run (also the memory-under-output run).
const THROUGHPUT_BYTES: u64 = 1024 * 1024 * 1024;
/// Live terminals in the server for the busy `echo` row.
const BUSY_TERMINALS: usize = 500;
/// Idle processes on the machine for the busy `echo` row.
const BUSY_PROCESSES: usize = 2000;
/// Lines of `seq` delivered to the client.
const SEQ_LINES: u64 = 2_000_000;
/// Bytes per page when the client reads a long output.
const PAGE_BYTES: u64 = 1024 * 1024;

fn main() {
    block_on(run());
}

async fn cold_start() -> Duration {
    // Raw JSON-RPC over the child's stdio: the time until the initialize answer arrives.
    let t = Instant::now();
    let mut child = Command::new(SERVER_BIN)
        .env("PM_TERM_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n")
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let d = t.elapsed();
    assert!(line.contains("\"result\""), "{line}");
    drop(stdin);
    let _ = child.wait();
    d
}

async fn run() {
    println!("## headless (`cargo bench --bench headless`)");
    let floor = sh_true_floor(200);

    header("start-up and round trip");
    let mut cs = Vec::new();
    for _ in 0..15 {
        cs.push(cold_start().await);
    }
    let cold = median(cs);
    row(
        "cold start → initialize answer",
        &ms(cold),
        "`sh -c true` spawn+wait",
        &ms(floor),
        cold.as_secs_f64() / floor.as_secs_f64(),
    );

    let (c, pid) = start(&[("PM_TERM_MAX_TERMINALS", "600")]).await;
    let req = json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": "echo hi"}});
    // Warm up.
    for _ in 0..5 {
        call(&c, req.clone()).await;
    }
    let echo_n = |n| {
        time_n(n, || async {
            let p = call(&c, req.clone()).await;
            assert_eq!(p["result"]["stdout"], "hi\n");
        })
    };
    let echo = echo_n(200).await;
    let echo_floor = sh_floor("echo hi", 200);
    row(
        "`echo hi` execute, end to end through MCP",
        &ms(echo),
        "`sh -c 'echo hi'`, output piped",
        &ms(echo_floor),
        echo.as_secs_f64() / echo_floor.as_secs_f64(),
    );
    let argv = json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": "true", "args": []}});
    let direct = time_n(200, || async {
        call(&c, argv.clone()).await;
    })
    .await;
    row(
        "`true` as argv (no shell), end to end through MCP",
        &ms(direct),
        "`sh -c true` spawn+wait",
        &ms(floor),
        direct.as_secs_f64() / floor.as_secs_f64(),
    );
    {
        let _terminals = open_terminals(&c, BUSY_TERMINALS).await;
        let _crowd = Crowd::start(BUSY_PROCESSES);
        tokio::time::sleep(Duration::from_millis(500)).await;
        let busy = echo_n(200).await;
        let busy_floor = sh_floor("echo hi", 200);
        row(
            &format!(
                "`echo hi` with {BUSY_TERMINALS} live terminals and {BUSY_PROCESSES} idle processes"
            ),
            &ms(busy),
            "`sh -c 'echo hi'`, output piped, same machine state",
            &ms(busy_floor),
            busy.as_secs_f64() / busy_floor.as_secs_f64(),
        );
        for id in _terminals {
            call(
                &c,
                json!({"action": "terminate", "target": {"terminal_id": id}}),
            )
            .await;
        }
    }

    header("output to the client");
    let seq = format!("seq 1 {SEQ_LINES}");
    let seq_floor = sh_floor(&format!("{seq} | cat"), 5);
    let every_line = time_n(5, || async {
        let r = call(
            &c,
            json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
                "execution": {"command": seq}, "runtime": {"wait_ms": 600000},
                "output": {"max_bytes": PAGE_BYTES}}),
        )
        .await;
        let sid = r["identity"]["session_id"].as_str().unwrap().to_string();
        let total = r["result"]["streams"]["stdout"]["total"].as_u64().unwrap();
        let mut got = r["result"]["stdout"].as_str().unwrap().len() as u64;
        let mut last = r["result"]["stdout"].as_str().unwrap().ends_with(&format!("{SEQ_LINES}\n"));
        while got < total {
            let r = call(
                &c,
                json!({"action": "read_output", "target": {"session_id": sid},
                    "output": {"max_bytes": PAGE_BYTES, "stdout_cursor": got}}),
            )
            .await;
            let page = r["result"]["stdout"].as_str().unwrap();
            got += page.len() as u64;
            last = page.ends_with(&format!("{SEQ_LINES}\n"));
        }
        assert!(last && got == total, "{got} of {total}");
    })
    .await;
    let bytes = (1..=SEQ_LINES)
        .map(|n| n.to_string().len() as u64 + 1)
        .sum();
    throughput_row(
        &format!("`{seq}` headless, every line read by the client in 1 MiB pages"),
        bytes,
        every_line,
        "`seq … \\| cat`, read by this process",
        seq_floor,
    );

    // A server of its own for the throughput runs, so the memory they leave is theirs alone
    // (not the 500 terminals of the busy row).
    let (t, tpid) = start(&[]).await;
    header("throughput");
    let cmd = format!("head -c {THROUGHPUT_BYTES} /dev/zero");
    let mut floors = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        Command::new("/bin/sh")
            .args(["-c", &format!("{cmd} | cat > /dev/null")])
            .status()
            .unwrap();
        floors.push(t.elapsed());
    }
    let pipe_floor = median(floors);
    // What keeping every byte costs at the least: the same pipe into files in the temp
    // directory, where the server's spool spills, kept until all runs are done (the server
    // keeps its output too). Dirty pages are flushed before each side, so neither pays for
    // the other's writeback.
    let sink = |i: usize| {
        std::env::temp_dir().join(format!("itmcp-bench-sink-{}-{i}", std::process::id()))
    };
    let _ = Command::new("sync").status();
    let mut disk_floors = Vec::new();
    for i in 0..3 {
        let t = Instant::now();
        Command::new("/bin/sh")
            .args(["-c", &format!("{cmd} | cat > '{}'", sink(i).display())])
            .status()
            .unwrap();
        disk_floors.push(t.elapsed());
    }
    for i in 0..3 {
        let _ = std::fs::remove_file(sink(i));
    }
    let _ = Command::new("sync").status();
    let disk_floor = median(disk_floors);
    let big = json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": cmd}, "runtime": {"wait_ms": 600000}, "output": {"max_bytes": 1}});
    let ours = time_n(3, || async {
        let p = call(&t, big.clone()).await;
        assert_eq!(p["result"]["streams"]["stdout"]["total"], THROUGHPUT_BYTES);
    })
    .await;
    let name = format!(
        "{} MiB through the server's pipe (read + spooled)",
        THROUGHPUT_BYTES >> 20
    );
    throughput_row(
        &name,
        THROUGHPUT_BYTES,
        ours,
        "`… \\| cat > /dev/null`",
        pipe_floor,
    );
    throughput_row(
        &name,
        THROUGHPUT_BYTES,
        ours,
        "`… \\| cat > $TMPDIR/file` (every byte kept, as the spool does)",
        disk_floor,
    );

    header("memory");
    let (idle, idle_pid) = start(&[]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle_rss = rss_kib(idle_pid);
    let sh_rss = idle_rss_of("/bin/sh", &["-c", "sleep 1"]);
    row(
        "idle RSS after initialize",
        &format!("{idle_rss} KiB"),
        "idle `sh` RSS",
        &format!("{sh_rss} KiB"),
        idle_rss as f64 / sh_rss.max(1) as f64,
    );
    row(
        &format!(
            "RSS after {} MiB of output, three times over",
            THROUGHPUT_BYTES >> 20
        ),
        &format!("{} KiB", rss_kib(tpid)),
        "idle RSS after initialize",
        &format!("{idle_rss} KiB"),
        rss_kib(tpid) as f64 / idle_rss.max(1) as f64,
    );
    let _ = idle.cancel().await;
    let _ = (pid, t.cancel().await, c.cancel().await);
}
