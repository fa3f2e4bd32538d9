//! Shared bench plumbing: start the real binaries, talk MCP with rmcp's client, take
//! medians, print a markdown table. Every figure is reported beside a floor measured in the
//! same run, because these machines are shared and noisy.
#![allow(dead_code, clippy::unwrap_used)]

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

pub const SERVER_BIN: &str = env!("CARGO_BIN_EXE_interactive-terminal-mcp");
pub const HOST_BIN: &str = env!("CARGO_BIN_EXE_interactive-terminal");

pub type Client = RunningService<RoleClient, ()>;

pub async fn start(env: &[(&str, &str)]) -> (Client, u32) {
    let mut cmd = tokio::process::Command::new(SERVER_BIN);
    cmd.current_dir(std::env::temp_dir());
    cmd.env("PM_TERM_LOG", "error");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (t, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = t.id().unwrap();
    (().serve(t).await.unwrap(), pid)
}

pub async fn call(c: &Client, args: Value) -> Value {
    let Value::Object(m) = args else { panic!() };
    let r = c
        .call_tool(CallToolRequestParams::new("memory_terminal_interactive").with_arguments(m))
        .await
        .unwrap();
    r.structured_content.unwrap()
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Median of `n` timed runs of `f`.
pub async fn time_n<F, Fut>(n: usize, mut f: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f().await;
        v.push(t.elapsed());
    }
    median(v)
}

/// Time to spawn and reap `sh -c true`: the floor for anything that starts a process.
pub fn sh_true_floor(n: usize) -> Duration {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        std::process::Command::new("/bin/sh")
            .args(["-c", "true"])
            .status()
            .unwrap();
        v.push(t.elapsed());
    }
    median(v)
}

/// Time to run `sh -c script` with its output piped into this process and read to the
/// end: the floor for a command whose output a client receives.
pub fn sh_floor(script: &str, n: usize) -> Duration {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", script])
            .stdout(Stdio::piped())
            .output()
            .unwrap();
        assert!(out.status.success());
        v.push(t.elapsed());
    }
    median(v)
}

/// The 99th percentile of `v` (its largest value below 100 samples).
pub fn p99(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[(v.len() * 99 / 100).min(v.len() - 1)]
}

/// Idle processes that make the machine busy the way a developer's machine is: they sit
/// in the process table (what a machine-wide scan would pay for) and do nothing.
pub struct Crowd(Vec<std::process::Child>);

impl Crowd {
    pub fn start(n: usize) -> Crowd {
        let children = (0..n)
            .map(|_| {
                std::process::Command::new("sleep")
                    .arg("3600")
                    .stdin(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        Crowd(children)
    }
}

impl Drop for Crowd {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
        }
        for c in &mut self.0 {
            let _ = c.wait();
        }
    }
}

/// Open `n` idle terminals in the server behind `c`; their ids.
pub async fn open_terminals(c: &Client, n: usize) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        let p = call(
            c,
            serde_json::json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}),
        )
        .await;
        ids.push(p["identity"]["terminal_id"].as_str().unwrap().to_string());
    }
    ids
}

pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// RSS of `program args…` once it idles (a floor for memory figures).
pub fn idle_rss_of(program: &str, args: &[&str]) -> u64 {
    let mut child = std::process::Command::new(program)
        .args(args)
        .spawn()
        .expect("spawn the floor process");
    std::thread::sleep(Duration::from_millis(100));
    let r = rss_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    r
}

/// Run a bench's async body on a multi-threaded runtime (the server tasks need one).
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// A throughput row: `bytes` moved in `ours` against the same bytes through the floor.
pub fn throughput_row(name: &str, bytes: u64, ours: Duration, floor_name: &str, floor: Duration) {
    let mbps = |d: Duration| bytes as f64 / d.as_secs_f64() / 1e6;
    row(
        name,
        &format!("{:.0} MB/s", mbps(ours)),
        floor_name,
        &format!("{:.0} MB/s", mbps(floor)),
        ours.as_secs_f64() / floor.as_secs_f64(),
    );
}

pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

pub fn row(name: &str, ours: &str, floor_name: &str, floor: &str, ratio: f64) {
    println!("| {name} | {ours} | {floor_name} | {floor} | {ratio:.2}x |");
}

pub fn header(title: &str) {
    println!("\n### {title}\n");
    println!("| measure | ours | floor | floor value | ratio |");
    println!("| --- | --- | --- | --- | --- |");
}
