//! Interactive benchmarks: REPL round trip, pty throughput (consumed by the server, and
//! every byte read by the client), memory per idle terminal and under a long output,
//! `list` and `terminate` with 500 live terminals, each beside a floor measured in the
//! same run.
//! Run with `cargo bench --bench interactive`; results go in docs/benchmarks.md.
#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "support/mod.rs"]
mod support;

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::{Value, json};
use support::*;

/// Bytes printed through a terminal in the throughput run.
const PTY_BYTES: usize = 64 * 1024 * 1024;
/// Rounds of the pty throughput rows, each timing the floor and ours side by side.
const PTY_ROUNDS: usize = 7;
/// Terminals for the memory figure.
const IDLE_TERMINALS: usize = 100;
/// Terminals alive while `list` is timed.
const LIST_TERMINALS: usize = 500;
/// Terminates timed (each a terminal of its own).
const TERMINATE_SAMPLES: usize = 20;
/// `list` calls timed for the percentiles.
const LIST_SAMPLES: usize = 200;
/// Bytes printed through one terminal for the memory-under-output figure.
const LONG_OUTPUT_BYTES: usize = 1024 * 1024 * 1024;
/// Bytes per page when the client reads the stream.
const PAGE_BYTES: u64 = 1024 * 1024;

fn main() {
    block_on(run());
}

fn open_req(command: Option<&str>) -> Value {
    match command {
        Some(c) => {
            json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": c}, "runtime": {"wait_ms": 600000}, "output": {"max_bytes": 1}})
        }
        None => {
            json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})
        }
    }
}

/// The floor for a REPL round trip: python in a pty driven directly, no server at all.
fn direct_repl_round_trip(n: usize) -> Duration {
    let pair = native_pty_system().openpty(PtySize::default()).unwrap();
    let mut cmd = CommandBuilder::new("python3");
    cmd.arg("-q");
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut writer = pair.master.take_writer().unwrap();
    let mut buf = [0u8; 4096];
    let mut wait_prompt = |reader: &mut Box<dyn Read + Send>| {
        let mut seen = Vec::new();
        while !seen.ends_with(b">>> ") {
            let k = reader.read(&mut buf).unwrap();
            seen.extend_from_slice(&buf[..k]);
        }
    };
    wait_prompt(&mut reader);
    let mut v = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        writer.write_all(b"1+1\r").unwrap();
        wait_prompt(&mut reader);
        v.push(t.elapsed());
    }
    let _ = child.kill();
    median(v)
}

/// `cat FILE` in a new terminal until it exits; with `read_all`, every byte of the stream
/// read back by the client (raw view, 1 MiB pages); then the terminal is terminated.
async fn cat_in_a_terminal(c: &Client, file: &std::path::Path, read_all: bool) {
    let r = call(c, open_req(Some(&format!("cat {}", file.display())))).await;
    assert_eq!(r["result"]["exit_code"], 0, "{r}");
    let tid = r["identity"]["terminal_id"].as_str().unwrap().to_string();
    if read_all {
        let mut cursor = 0u64;
        loop {
            let p = call(
                c,
                json!({"action": "read_output", "target": {"terminal_id": tid},
                    "output": {"view": "raw", "cursor": cursor, "max_bytes": PAGE_BYTES}}),
            )
            .await;
            let next = p["result"]["cursor"]["output"].as_u64().unwrap();
            if next == cursor {
                break;
            }
            cursor = next;
        }
        assert!(cursor >= PTY_BYTES as u64, "{cursor}");
    }
    call(
        c,
        json!({"action": "terminate", "target": {"terminal_id": tid}}),
    )
    .await;
}

async fn run() {
    println!("## interactive (`cargo bench --bench interactive`)");
    let env = [
        ("PM_TERM_NO_USER_RC", "1"),
        ("PM_TERM_MAX_TERMINALS", "600"),
    ];
    let (c, pid) = start(&env).await;

    header("REPL round trip");
    let p = call(&c, open_req(None)).await;
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let send = |data: &str, wait_for: &str| {
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"input": data, "wait_for": wait_for},
            "runtime": {"wait_ms": 10000}})
    };
    call(&c, send("python3 -q\r", ">>> $")).await;
    for _ in 0..5 {
        call(&c, send("1+1\r", ">>> $")).await;
    }
    let ours = time_n(100, || async {
        let r = call(&c, send("1+1\r", ">>> $")).await;
        assert!(r["result"]["output"].as_str().unwrap().contains('2'));
    })
    .await;
    let floor = direct_repl_round_trip(100);
    row(
        "python `1+1` → `2`, send + answer through MCP",
        &ms(ours),
        "same REPL on a bare pty",
        &ms(floor),
        ours.as_secs_f64() / floor.as_secs_f64(),
    );
    let detected = {
        call(&c, json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"keys": ["ctrl-d"]}})).await;
        time_n(100, || async {
            let r = call(
                &c,
                json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                    "target": {"terminal_id": id}, "execution": {"command": "true"}}),
            )
            .await;
            assert_eq!(r["result"]["exit_code"], 0);
        })
        .await
    };
    // One floor for the figure and its ratio.
    let spawn_floor = sh_true_floor(200);
    row(
        "shell command `true` with exit code (detected), through MCP",
        &ms(detected),
        "`sh -c true` spawn+wait",
        &ms(spawn_floor),
        detected.as_secs_f64() / spawn_floor.as_secs_f64(),
    );

    header("pty throughput");
    let file = std::env::temp_dir().join(format!("itmcp-bench-{}.txt", std::process::id()));
    {
        let line = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!@#$%^&*()_+-=[]{}|;:,.<>/?\n";
        let mut f = std::fs::File::create(&file).unwrap();
        let mut written = 0;
        while written < PTY_BYTES {
            f.write_all(line).unwrap();
            written += line.len();
        }
    }
    // The floor swings by a third from run to run on a shared machine (the kernel's pty
    // path is most of it): each round times the floor, ours, and ours with every byte read
    // back, one after the other, and each figure is the median of its rounds.
    let (mut floors, mut consumed, mut to_client) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..PTY_ROUNDS {
        let t = Instant::now();
        Command::new("script")
            .args(["-qc", &format!("cat {}", file.display()), "/dev/null"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .unwrap();
        floors.push(t.elapsed());
        let t = Instant::now();
        cat_in_a_terminal(&c, &file, false).await;
        consumed.push(t.elapsed());
        let t = Instant::now();
        cat_in_a_terminal(&c, &file, true).await;
        to_client.push(t.elapsed());
    }
    let floor = median(floors);
    throughput_row(
        &format!(
            "`cat` of {} MiB in a terminal, consumed by the server",
            PTY_BYTES >> 20
        ),
        PTY_BYTES as u64,
        median(consumed),
        "`script -qc 'cat FILE' /dev/null`",
        floor,
    );
    throughput_row(
        "same, every byte read by the client (raw view, 1 MiB pages)",
        PTY_BYTES as u64,
        median(to_client),
        "`script -qc 'cat FILE' /dev/null`",
        floor,
    );
    let _ = std::fs::remove_file(&file);

    header("memory and list");
    let (m, mpid) = start(&env).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kib(mpid);
    let mut opened = Vec::new();
    for _ in 0..IDLE_TERMINALS {
        let p = call(&m, open_req(None)).await;
        opened.push(p["identity"]["terminal_id"].as_str().unwrap().to_string());
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_kib(mpid);
    let per = (after.saturating_sub(before)) as f64 / IDLE_TERMINALS as f64;
    let bash_rss = idle_rss_of("bash", &["--norc", "-c", "sleep 1"]);
    row(
        "server memory per idle terminal",
        &format!("{per:.0} KiB"),
        "RSS of the idle bash it runs",
        &format!("{bash_rss} KiB"),
        per / bash_rss.max(1) as f64,
    );
    let list = json!({"action": "list"});
    let one = {
        let (l, _) = start(&env).await;
        call(&l, open_req(None)).await;
        let mut v = Vec::new();
        for _ in 0..LIST_SAMPLES {
            let t = Instant::now();
            call(&l, list.clone()).await;
            v.push(t.elapsed());
        }
        let _ = l.cancel().await;
        v
    };
    for _ in IDLE_TERMINALS..LIST_TERMINALS {
        let p = call(&m, open_req(None)).await;
        opened.push(p["identity"]["terminal_id"].as_str().unwrap().to_string());
    }
    let mut many = Vec::new();
    for _ in 0..LIST_SAMPLES {
        let t = Instant::now();
        let r = call(&m, list.clone()).await;
        many.push(t.elapsed());
        assert_eq!(r["result"]["total"], LIST_TERMINALS);
    }
    row(
        &format!("`list` with {LIST_TERMINALS} live terminals (first page of 100), median"),
        &ms(median(many.clone())),
        "`list` with 1 terminal, median",
        &ms(median(one.clone())),
        median(many.clone()).as_secs_f64() / median(one.clone()).as_secs_f64(),
    );
    row(
        &format!("`list` with {LIST_TERMINALS} live terminals (first page of 100), p99"),
        &ms(p99(many.clone())),
        "`list` with 1 terminal, p99",
        &ms(p99(one.clone())),
        p99(many).as_secs_f64() / p99(one.clone()).as_secs_f64(),
    );
    let all_pages = time_n(20, || async {
        let mut seen = 0;
        let mut cursor: Option<String> = None;
        loop {
            let mut req = json!({"action": "list", "listing": {"limit": 1000}});
            if let Some(c) = &cursor {
                req["listing"]["cursor"] = json!(c);
            }
            let r = call(&m, req).await;
            seen += r["result"]["items"].as_array().unwrap().len();
            match r["result"]["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        assert_eq!(seen, LIST_TERMINALS);
    })
    .await;
    row(
        &format!("`list` of all {LIST_TERMINALS} terminals in one answer (limit 1000), median"),
        &ms(all_pages),
        "`list` with 1 terminal, median",
        &ms(median(one.clone())),
        all_pages.as_secs_f64() / median(one).as_secs_f64(),
    );
    // Terminate costs what the terminal's own tree costs, not what the machine holds.
    let terminate = |id: &str| json!({"action": "terminate", "target": {"terminal_id": id}});
    let alone = {
        let (l, _) = start(&env).await;
        let mut v = Vec::new();
        for _ in 0..TERMINATE_SAMPLES {
            let p = call(&l, open_req(None)).await;
            let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
            let t = Instant::now();
            call(&l, terminate(&id)).await;
            v.push(t.elapsed());
        }
        let _ = l.cancel().await;
        median(v)
    };
    let mut v = Vec::new();
    for id in opened.iter().take(TERMINATE_SAMPLES) {
        let t = Instant::now();
        call(&m, terminate(id)).await;
        v.push(t.elapsed());
    }
    let crowded = median(v);
    row(
        &format!("`terminate` with {LIST_TERMINALS} live terminals"),
        &ms(crowded),
        "`terminate` with 1 live terminal",
        &ms(alone),
        crowded.as_secs_f64() / alone.as_secs_f64(),
    );
    let _ = m.cancel().await;

    header("memory under a long output");
    let big = std::env::temp_dir().join(format!("itmcp-bench-big-{}.txt", std::process::id()));
    {
        let line = [b'x'; 99].iter().chain(b"\n").copied().collect::<Vec<u8>>();
        let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
        for _ in 0..LONG_OUTPUT_BYTES / line.len() {
            f.write_all(&line).unwrap();
        }
    }
    let (l, lpid) = start(&env).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = rss_kib(lpid);
    let r = call(&l, open_req(Some(&format!("cat {}", big.display())))).await;
    assert_eq!(r["result"]["exit_code"], 0, "{r}");
    let after = rss_kib(lpid);
    row(
        &format!(
            "server RSS after {} MiB through one terminal",
            LONG_OUTPUT_BYTES >> 20
        ),
        &format!("{after} KiB"),
        "server RSS after initialize",
        &format!("{idle} KiB"),
        after as f64 / idle.max(1) as f64,
    );
    let _ = std::fs::remove_file(&big);
    let _ = (pid, l.cancel().await, c.cancel().await);
}
