//! Shared harness: start the real server binary and talk to it with rmcp's client over
//! stdio, exactly as an MCP client would.
#![allow(dead_code, clippy::unwrap_used)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest,
    ProgressNotificationParam, ProgressToken, RequestMetaObject, ResourceUpdatedNotificationParam,
    ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

pub const SERVER_BIN: &str = env!("CARGO_BIN_EXE_interactive-terminal-mcp");
pub const HOST_BIN: &str = env!("CARGO_BIN_EXE_interactive-terminal");

/// A client that records what the server pushes.
#[derive(Clone, Default)]
pub struct Recorder {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pub updated: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated.lock().unwrap().push(params.uri);
    }
}

pub struct Server {
    pub client: RunningService<RoleClient, Recorder>,
    pub recorder: Recorder,
    pub pid: u32,
}

/// Start the server with extra environment variables.
pub async fn start_with(env: &[(&str, &str)]) -> Server {
    start_bin(SERVER_BIN, &[], env).await
}

pub async fn start() -> Server {
    start_with(&[]).await
}

pub async fn start_bin(bin: &str, args: &[&str], env: &[(&str, &str)]) -> Server {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(args);
    cmd.env(
        "PM_TERM_LOG",
        std::env::var("PM_TEST_SERVER_LOG").unwrap_or_else(|_| "warn".into()),
    );
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn server");
    let pid = transport.id().expect("server pid");
    let recorder = Recorder::default();
    let client = recorder.clone().serve(transport).await.expect("initialize");
    Server {
        client,
        recorder,
        pid,
    }
}

impl Server {
    pub async fn call_result(&self, args: Value) -> CallToolResult {
        let Value::Object(map) = args else {
            panic!("arguments must be an object")
        };
        self.client
            .call_tool(
                CallToolRequestParams::new("memory_terminal_interactive").with_arguments(map),
            )
            .await
            .expect("tools/call")
    }

    /// Call the tool; returns the structured payload after checking it against the schemas
    /// and checking that isError matches success.
    pub async fn call(&self, args: Value) -> Value {
        let r = self.call_result(args).await;
        check_result(&r)
    }

    /// Call with a progress token; returns the payload.
    pub async fn call_with_progress(&self, args: Value, token: &str) -> Value {
        let Value::Object(map) = args else {
            panic!("arguments must be an object")
        };
        let mut meta = RequestMetaObject::new();
        meta.set_progress_token(ProgressToken(rmcp::model::NumberOrString::String(
            token.into(),
        )));
        let mut params =
            CallToolRequestParams::new("memory_terminal_interactive").with_arguments(map);
        params.meta = Some(meta);
        let handle = self
            .client
            .send_request_with_option(
                ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                PeerRequestOptions::no_options(),
            )
            .await
            .expect("send");
        match handle.await_response().await.expect("response") {
            ServerResult::CallToolResult(r) => check_result(&r),
            other => panic!("unexpected {other:?}"),
        }
    }

    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}

pub fn check_result(r: &CallToolResult) -> Value {
    let payload = r.structured_content.clone().expect("structuredContent");
    let violations = itmcp::contract::schema::payload_violations(&payload);
    assert!(
        violations.is_empty(),
        "payload violates schema: {violations:?}\n{payload:#}"
    );
    let success = payload["success"].as_bool().unwrap();
    assert_eq!(
        r.is_error,
        Some(!success),
        "isError must mirror success: {payload:#}"
    );
    assert!(
        !r.content.is_empty(),
        "a text block accompanies the payload"
    );
    payload
}

/// A headless execute request.
pub fn headless(command: &str) -> Value {
    json!({
        "action": "execute",
        "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": command}
    })
}

pub fn code(payload: &Value) -> &str {
    payload["error"]["code"].as_str().unwrap_or("")
}

/// Pids of processes whose command line contains `needle`.
pub fn pids_with_arg(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    let me = std::process::id() as i32;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        if let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                // Zombies have an empty cmdline, so a match is a live process.
                out.push(pid);
            }
        }
    }
    out
}

/// Wait until no process has `needle` in its command line.
pub async fn wait_gone(needle: &str, within: Duration) -> Vec<i32> {
    let deadline = Instant::now() + within;
    loop {
        let left = pids_with_arg(needle);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A unique token for process command lines in this test.
pub fn unique(tag: &str) -> String {
    format!(
        "{tag}{}{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos() % 100_000
    )
}

/// A unique number usable as a `sleep` argument, so leftover processes can be found.
pub fn unique_sleep() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(1);
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("{}.{:05}{:03}", 900 + n, std::process::id() % 100_000, n)
}

/// Resident set size of a process in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
