//! Shared harness: start the real server binary and talk to it with rmcp's client over
//! stdio, exactly as an MCP client would.
//!
//! The one launcher: every test server is set up by [`Launch`] (`server()`, then `.start()`,
//! `.command()` for a client of the test's own, `.std_command()` for one it drives itself,
//! `.output()` for a start that ends at once), every test host by [`HostLaunch`] (`host()`).
//! Two files start the binaries another way on purpose, because the way is what they test:
//! `tests/options.rs` from bash with a cleared environment, as a user's shell does, and
//! `tests/entrypoint.rs` through the container's `entrypoint.sh`.
#![allow(dead_code, clippy::unwrap_used)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, RequestMetaObject,
    ResourceUpdatedNotificationParam, ServerResult,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, PeerRequestOptions, RunningService,
};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};

mod host_service;
mod processes;
pub use host_service::*;
pub use processes::*;

pub const SERVER_BIN: &str = env!("CARGO_BIN_EXE_interactive-terminal-mcp");
pub const HOST_BIN: &str = env!("CARGO_BIN_EXE_interactive-terminal");

/// A client that records what the server pushes.
#[derive(Clone, Default)]
pub struct Recorder {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pub updated: Arc<Mutex<Vec<String>>>,
    /// How many `notifications/resources/list_changed` arrived.
    pub list_changed: Arc<Mutex<usize>>,
    /// The `data` of every `notifications/message`, as text.
    pub logged: Arc<Mutex<Vec<String>>>,
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

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        *self.list_changed.lock().unwrap() += 1;
    }

    #[allow(deprecated)] // MCP logging, deprecated by the protocol's later revisions
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logged.lock().unwrap().push(params.data.to_string());
    }
}

pub struct Server {
    pub client: RunningService<RoleClient, Recorder>,
    pub recorder: Recorder,
    pub pid: u32,
    /// The server's stderr, when started with [`Launch::capture_stderr`].
    pub stderr: Arc<Mutex<String>>,
}

/// How a test starts a server: `server().env(..).start().await`. The defaults are the
/// embedded server binary, no flags, a scratch directory as home and working directory, and
/// stderr passed through.
pub struct Launch {
    bin: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    capture: bool,
    discover: bool,
}

/// A server in a container reaching the host service on loopback `port` with `token`.
pub fn bridged_server(port: u16, token: &str) -> Launch {
    server().envs(&[
        ("PM_RUNNING_IN_CONTAINER", "true"),
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1"),
        ("PM_INTERACTIVE_TERMINAL_HOST_PORT", &port.to_string()),
        ("PM_INTERACTIVE_TERMINAL_TOKEN", token),
    ])
}

/// A server bridged to the host service `h`, started, with no user rc files.
pub async fn start_bridged(h: &HostProc) -> Server {
    bridged_server(h.port, &h.token)
        .envs(&[("PM_TERM_NO_USER_RC", "1")])
        .start()
        .await
}

/// A server launch with the defaults.
pub fn server() -> Launch {
    Launch {
        bin: SERVER_BIN.to_string(),
        args: Vec::new(),
        env: Vec::new(),
        capture: false,
        discover: false,
    }
}

impl Launch {
    /// Another binary (a copy, a wrapper).
    pub fn bin(mut self, bin: &str) -> Launch {
        self.bin = bin.to_string();
        self
    }

    pub fn args(mut self, args: &[&str]) -> Launch {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    pub fn env(mut self, key: &str, value: &str) -> Launch {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    pub fn envs(mut self, env: &[(&str, &str)]) -> Launch {
        self.env
            .extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self
    }

    /// Keep what the server writes on stderr (in [`Server::stderr`]).
    pub fn capture_stderr(mut self) -> Launch {
        self.capture = true;
        self
    }

    /// The command, for a test that changes how it is run before [`connect`].
    pub fn command(&self) -> tokio::process::Command {
        tokio::process::Command::from(self.std_command())
    }

    /// The command as std's, for a test that drives the process itself (a server on
    /// `--http`, one whose stderr it reads line by line).
    pub fn std_command(&self) -> std::process::Command {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        server_std_command(&self.bin, &args, &env)
    }

    /// Run it to its end with nothing on its input, for a start the server refuses or a
    /// flag that answers and exits (`--check-config`): its status, stdout and stderr.
    pub fn output(&self) -> std::process::Output {
        self.std_command()
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    }

    /// Talk to it as a client of the 2026-07-28 protocol: `server/discover` instead of
    /// `initialize`, the protocol version on every request, `subscriptions/listen`.
    pub fn protocol_2026(mut self) -> Launch {
        self.discover = true;
        self
    }

    /// Start it and initialize an MCP session over its stdio.
    pub async fn start(self) -> Server {
        let lifecycle = if self.discover {
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            }
        } else {
            ClientLifecycleMode::Initialize
        };
        connect_with(self.command(), self.capture, lifecycle).await
    }
}

/// A server whose terminals run bash in `home`, with whatever rc files the test put there
/// (a user's own set-up, not a scratch one).
pub async fn bash_server_in(home: &std::path::Path) -> Server {
    let home = home.display().to_string();
    server()
        .envs(&[
            ("HOME", home.as_str()),
            ("PM_TERM_INTERACTIVE_SHELL", "bash"),
        ])
        .start()
        .await
}

/// The command that starts a server binary in a scratch directory (also its `HOME`).
pub fn server_command(bin: &str, args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
    tokio::process::Command::from(server_std_command(bin, args, env))
}

/// [`server_command`] as std's: the one place a test server's process is set up.
pub fn server_std_command(bin: &str, args: &[&str], env: &[(&str, &str)]) -> std::process::Command {
    let mut cmd = std::process::Command::new(bin);
    cmd.args(args);
    // A scratch directory as the working directory and home: whatever a test runs can never
    // touch the checkout or the user's files.
    let scratch = scratch_dir();
    cmd.current_dir(&scratch);
    cmd.env("HOME", &scratch);
    // A pager or editor in the environment the tests run from is an operator's choice, which
    // the server keeps: the tests make none.
    for name in ["PAGER", "GIT_PAGER", "GIT_EDITOR", "VISUAL", "EDITOR"] {
        cmd.env_remove(name);
    }
    cmd.env(
        "PM_TERM_LOG",
        std::env::var("PM_TEST_SERVER_LOG").unwrap_or_else(|_| "warn".into()),
    );
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Start `cmd` and initialize an MCP session with it over its stdio.
pub async fn connect(cmd: tokio::process::Command, capture: bool) -> Server {
    connect_with(cmd, capture, ClientLifecycleMode::Initialize).await
}

/// Start `cmd` and open an MCP session with it over its stdio, as `lifecycle` says.
pub async fn connect_with(
    cmd: tokio::process::Command,
    capture: bool,
    lifecycle: ClientLifecycleMode,
) -> Server {
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(if capture {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .spawn()
        .expect("spawn server");
    let captured = Arc::new(Mutex::new(String::new()));
    if let Some(mut e) = stderr {
        let sink = captured.clone();
        tokio::spawn(async move {
            use tokio::io::AsyncReadExt;
            let mut buf = vec![0u8; 8192];
            while let Ok(n) = e.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
    }
    let pid = transport.id().expect("server pid");
    client_with(transport, pid, captured, lifecycle).await
}

/// Initialize an MCP session over `transport` (stdio, HTTP) with a server whose pid is `pid`.
pub async fn client_over<T, E, A>(transport: T, pid: u32, stderr: Arc<Mutex<String>>) -> Server
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    client_with(transport, pid, stderr, ClientLifecycleMode::Initialize).await
}

/// Open an MCP session over `transport` as `lifecycle` says.
pub async fn client_with<T, E, A>(
    transport: T,
    pid: u32,
    stderr: Arc<Mutex<String>>,
    lifecycle: ClientLifecycleMode,
) -> Server
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let recorder = Recorder::default();
    let client = recorder
        .clone()
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("initialize");
    Server {
        client,
        recorder,
        pid,
        stderr,
    }
}

/// A fresh empty directory under the system temp dir.
/// Shells for tests that send destructive command lines, so that a policy regression can
/// never run one: `true` ignores `-c LINE` (headless), and python's REPL reads any shell
/// line typed into a terminal as a syntax error (interactive).
pub fn inert_shells() -> Vec<(&'static str, String)> {
    vec![
        ("PM_TERM_SHELL", "/bin/true".to_string()),
        ("PM_TERM_INTERACTIVE_SHELL", on_path("python3")),
    ]
}

/// The absolute path of `name` on PATH.
pub fn on_path(name: &str) -> String {
    on_path_opt(name).unwrap_or_else(|| panic!("{name} on PATH"))
}

/// The absolute path of `name` on PATH, if it is there.
pub fn on_path_opt(name: &str) -> Option<String> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string())
}

/// [`inert_shells`] as `Launch::envs` takes them.
pub fn env_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

pub fn scratch_dir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "itmcp-scratch-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    // Fresh: a test process of an earlier run may have had this pid, and left its files.
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

impl Server {
    pub async fn call_result(&self, args: Value) -> CallToolResult {
        self.call_result_of("memory_terminal_interactive", args)
            .await
    }

    /// Call `tool` with `args`; its result as it came.
    pub async fn call_result_of(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(map) = args else {
            panic!("arguments must be an object")
        };
        self.client
            .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map))
            .await
            .expect("tools/call")
    }

    /// Call the tool; returns the structured payload after checking it against the schemas
    /// and checking that isError matches success.
    pub async fn call(&self, args: Value) -> Value {
        let r = self.call_result(args).await;
        check_result(&r)
    }

    /// `list`, and the item with this id in it (with the whole answer, for messages).
    pub async fn listed(&self, id: &str) -> (Option<Value>, Value) {
        let l = self.call(serde_json::json!({"action": "list"})).await;
        let item = l["result"]["items"]
            .as_array()
            .and_then(|items| items.iter().find(|i| i["id"] == id).cloned());
        (item, l)
    }

    /// Call with a progress token; returns the payload.
    pub async fn call_with_progress(&self, args: Value, token: &str) -> Value {
        let mut meta = RequestMetaObject::new();
        meta.set_progress_token(ProgressToken(rmcp::model::NumberOrString::String(
            token.into(),
        )));
        let handle = send_call(
            self.client.peer(),
            "memory_terminal_interactive",
            args,
            Some(meta),
        )
        .await;
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

/// A request that opens a terminal and runs `command` in it.
pub fn open_running(command: &str) -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "execution": {"command": command}})
}

/// Raw input to terminal `id`, answered when `wait_for` matches (or within 10 s).
pub fn terminal_input(id: &str, data: &str, wait_for: Option<&str>) -> Value {
    let mut e = json!({"input": data});
    if let Some(w) = wait_for {
        e["wait_for"] = json!(w);
    }
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": e, "runtime": {"wait_ms": 10000}})
}

/// Open a terminal in `s`; its id.
pub async fn open_shell(s: &Server) -> String {
    let p = s.call(open_terminal()).await;
    assert_eq!(p["success"], true, "{p:#}");
    p["identity"]["terminal_id"].as_str().unwrap().to_string()
}

/// A server whose terminals start `shell` in a home holding `files` (name, content).
pub async fn server_in_home(shell: &str, files: &[(&str, &str)]) -> (Server, std::path::PathBuf) {
    let home = scratch_dir();
    for (name, content) in files {
        let path = home.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, content).unwrap();
    }
    let home_s = home.display().to_string();
    // Warned lines (one left open is `unparseable`) run unasked: these tests are about what
    // the terminal does with them.
    let s = server()
        .envs(&[
            ("HOME", home_s.as_str()),
            ("PM_TERM_INTERACTIVE_SHELL", shell),
            ("PM_TERM_APPROVAL_DEFAULT", "approve"),
        ])
        .start()
        .await;
    (s, home)
}

/// A request that opens a terminal running the user's shell.
pub fn open_terminal() -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})
}

/// A request that runs `command` in the terminal `id`.
pub fn terminal_command(id: &str, command: &str) -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": {"command": command}})
}

pub fn code(payload: &Value) -> &str {
    payload["error"]["code"].as_str().unwrap_or("")
}

/// Send a call of `tool` without waiting for its answer: the handle awaits it, or cancels
/// the call (`notifications/cancelled`), as a client's stop button does.
pub async fn send_call(
    peer: &rmcp::Peer<RoleClient>,
    tool: &'static str,
    args: Value,
    meta: Option<RequestMetaObject>,
) -> rmcp::service::RequestHandle<RoleClient> {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    let mut params = CallToolRequestParams::new(tool).with_arguments(map);
    params.meta = meta;
    peer.send_request_with_option(
        ClientRequest::CallToolRequest(CallToolRequest::new(params)),
        PeerRequestOptions::no_options(),
    )
    .await
    .expect("send")
}

/// Call the interactive tool with `args`, wait until `n` processes carry `tag`, cancel the
/// call (`notifications/cancelled`, a stop button) and return what still carries `tag` after
/// the time it may take to stop.
pub async fn cancel_once_running(
    peer: &rmcp::Peer<RoleClient>,
    args: Value,
    tag: &str,
    n: usize,
) -> Vec<i32> {
    let call = send_call(peer, "memory_terminal_interactive", args, None).await;
    let found = wait_present(tag, n, Duration::from_secs(10)).await;
    assert!(found >= n, "{found} of {n} processes with {tag} started");
    call.cancel(Some("the user pressed stop".into()))
        .await
        .unwrap();
    wait_gone(tag, Duration::from_secs(10)).await
}

/// The next notification of a `subscriptions/listen` subscription that `want` accepts,
/// within 10 s (`what` names it in the failure).
pub async fn next_matching(
    sub: &mut rmcp::service::Subscription,
    what: &str,
    want: impl Fn(&rmcp::model::ServerNotification) -> bool,
) -> rmcp::model::ServerNotification {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let n = tokio::time::timeout(left, sub.next())
            .await
            .unwrap_or_else(|_| panic!("no {what} within 10 s"))
            .unwrap()
            .unwrap_or_else(|| panic!("the subscription ended before {what}"));
        if want(&n) {
            return n;
        }
    }
}
