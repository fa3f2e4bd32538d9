//! Authorization and approvals through the real binary: blocked commands never run, warned
//! interactive commands wait for a person — on the host page, else through MCP elicitation
//! (approve, decline, never answer), else the operator's default — and the strict
//! allowlisted `memory_terminal` tool.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

#[path = "../common/mod.rs"]
mod common;
mod elicitation;
mod page;
mod rounds;
mod sandbox;
mod strict;

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use futures_util::{SinkExt, StreamExt};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, Implementation, InputResponses,
    ProtocolVersion, UrlElicitationCapability,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

/// How the test client's user answers elicitations.
#[derive(Clone)]
enum Answer {
    Approve,
    Decline(&'static str),
    Never,
    /// Approves, after this long.
    ApproveAfter(Duration),
}

#[derive(Clone)]
struct Person {
    answer: Answer,
    asked: Arc<Mutex<Vec<String>>>,
    /// The client declares URL elicitation only: it cannot show a form.
    urls_only: bool,
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::builder().enable_elicitation().build();
        if self.urls_only {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_url(UrlElicitationCapability::new()));
        }
        ClientConfig::new(capabilities, Implementation::new("approver-test", "1"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.asked.lock().unwrap().push(message.clone());
        }
        match &self.answer {
            Answer::Approve => {
                Ok(ElicitResult::new(ElicitationAction::Accept)
                    .with_content(json!({"approve": true})))
            }
            Answer::Decline(why) => Ok(ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"approve": false, "reason": why}))),
            Answer::Never => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(ElicitResult::new(ElicitationAction::Cancel))
            }
            Answer::ApproveAfter(delay) => {
                tokio::time::sleep(*delay).await;
                Ok(ElicitResult::new(ElicitationAction::Accept)
                    .with_content(json!({"approve": true})))
            }
        }
    }
}

async fn start_person(
    answer: Answer,
    env: &[(&str, &str)],
) -> (RunningService<RoleClient, Person>, Arc<Mutex<Vec<String>>>) {
    start_person_with(answer, env, ClientLifecycleMode::Initialize, false).await
}

/// A person behind a client of the 2026-07-28 protocol: its questions come as
/// `input_required` answers, which rmcp's client fulfils and calls again with.
async fn start_person_2026(
    answer: Answer,
    env: &[(&str, &str)],
) -> (RunningService<RoleClient, Person>, Arc<Mutex<Vec<String>>>) {
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    start_person_with(answer, env, lifecycle, false).await
}

async fn start_person_with(
    answer: Answer,
    env: &[(&str, &str)],
    lifecycle: ClientLifecycleMode,
    urls_only: bool,
) -> (RunningService<RoleClient, Person>, Arc<Mutex<Vec<String>>>) {
    // The shared launch (scratch home and working directory, the tests' log level), with
    // an rmcp client of this test's own that answers elicitations as a person would.
    let cmd = server()
        .envs(&[("PM_TERM_NO_USER_RC", "1")])
        .envs(env)
        .command();
    let (t, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let person = Person {
        answer,
        asked: asked.clone(),
        urls_only,
    };
    (
        person.serve_with_lifecycle(t, lifecycle).await.unwrap(),
        asked,
    )
}

async fn call(c: &RunningService<RoleClient, Person>, tool: &'static str, args: Value) -> Value {
    let Value::Object(m) = args else { panic!() };
    let r = c
        .call_tool(CallToolRequestParams::new(tool).with_arguments(m))
        .await
        .unwrap();
    check_result(&r)
}

fn interactive(command: &str) -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "execution": {"command": command}, "runtime": {"wait_ms": 10000}})
}

const WARN: (&str, &str) = ("PM_TERM_POLICY_WARN", "echo careful");

/// A warned command, approved by the client's user, runs, and the user saw it.
async fn approved_through_elicitation(
    c: &RunningService<RoleClient, Person>,
    asked: &Mutex<Vec<String>>,
) {
    let p = call(
        c,
        "memory_terminal_interactive",
        interactive("echo careful now"),
    )
    .await;
    assert_eq!(p["success"], true, "{p:#}");
    assert_eq!(p["result"]["output"], "careful now\n");
    assert_eq!(p["result"]["authorization"], "allowed_with_warning");
    assert_eq!(p["result"]["approval"]["decided_by"], "elicitation");
    assert!(asked.lock().unwrap()[0].contains("echo careful now"));
}

/// A warned command, declined by the client's user with a reason: the answer.
async fn declined_through_elicitation(c: &RunningService<RoleClient, Person>) -> Value {
    let p = call(
        c,
        "memory_terminal_interactive",
        interactive("echo careful"),
    )
    .await;
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    assert_eq!(p["error"]["category"], "user_decision");
    assert_eq!(p["error"]["retriable"], false);
    assert_eq!(p["error"]["details"]["reason"], "not on a Friday");
    assert_eq!(p["error"]["details"]["decided_by"], "elicitation");
    p
}

/// An interactive command line called for on a task of its own, for a test that decides on it
/// meanwhile.
fn in_background(
    c: &Arc<RunningService<RoleClient, Person>>,
    command: &'static str,
) -> tokio::task::JoinHandle<Value> {
    let c = c.clone();
    tokio::spawn(async move { call(&c, "memory_terminal_interactive", interactive(command)).await })
}

/// A person's page on the host service (signed in with the one-time link), as a raw
/// WebSocket client that approves or declines.
async fn page(
    addr: &str,
    login: &str,
) -> (
    impl SinkExt<Message, Error = tokio_tungstenite::tungstenite::Error> + Unpin,
    impl StreamExt<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
) {
    let session = sign_in(addr, login).await;
    let ws = page_socket(addr, &session).await;
    let (mut tx, mut rx) = ws.split();
    tx.send(Message::text(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "channel": "ahp-root://", "protocolVersions": ["1.0.0"], "clientId": "page-test",
        "_meta": {"interactiveTerminal": {"approver": true}}}})
        .to_string(),
    ))
    .await
    .unwrap();
    loop {
        let Some(Ok(Message::Text(t))) = rx.next().await else {
            continue;
        };
        let v: Value = serde_json::from_str(&t).unwrap();
        if v["id"] == 1 {
            assert!(v["result"].is_object(), "{v}");
            break;
        }
    }
    (tx, rx)
}

async fn next_pending(
    rx: &mut (impl StreamExt<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin),
) -> Value {
    next_of(rx, "pm/approval/pending").await["params"].clone()
}

/// The person on the page decides approval `approval_id` (`decision`: approve or decline),
/// as request `id`.
async fn decide(
    tx: &mut (impl SinkExt<Message, Error = tokio_tungstenite::tungstenite::Error> + Unpin),
    id: u64,
    approval_id: &Value,
    decision: &str,
    reason: Option<&str>,
) {
    let mut params = json!({"approval_id": approval_id, "decision": decision});
    if let Some(r) = reason {
        params["reason"] = json!(r);
    }
    tx.send(Message::text(
        json!({"jsonrpc": "2.0", "id": id, "method": "pm/approval/decide", "params": params})
            .to_string(),
    ))
    .await
    .unwrap();
}

/// The next message from the page's socket with this `method`.
async fn next_of(
    rx: &mut (impl StreamExt<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin),
    method: &str,
) -> Value {
    loop {
        let m = tokio::time::timeout(Duration::from_secs(10), rx.next())
            .await
            .unwrap_or_else(|_| panic!("no {method} within 10 s"))
            .unwrap()
            .unwrap();
        if let Message::Text(t) = m {
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["method"] == method || (method.is_empty() && v.get("id").is_some()) {
                return v;
            }
        }
    }
}
