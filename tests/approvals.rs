//! Authorization and approvals through the real binary: blocked commands never run, warned
//! interactive commands wait for a person — on the host page, else through MCP elicitation
//! (approve, decline, never answer), else the operator's default — and the strict
//! allowlisted `memory_terminal` tool.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

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

#[tokio::test(flavor = "multi_thread")]
async fn elicitation_approves_declines_or_never_answers() {
    let (c, asked) = start_person(
        Answer::Approve,
        &[WARN, ("PM_TERM_ALLOW_ENV", "GREETING;CR")],
    )
    .await;
    approved_through_elicitation(&c, &asked).await;
    // Commands without a warning are not asked about.
    let p = call(&c, "memory_terminal_interactive", interactive("echo fine")).await;
    assert!(p["result"].get("approval").is_none());
    assert_eq!(asked.lock().unwrap().len(), 1);
    // What the request sets beside the command is shown with it.
    let mut q = interactive("echo careful $GREETING");
    q["execution"]["env"] = json!({"GREETING": "hi there"});
    let p = call(&c, "memory_terminal_interactive", q).await;
    assert_eq!(p["result"]["output"], "careful hi there\n", "{p:#}");
    let shown = asked.lock().unwrap()[1].clone();
    assert!(
        shown.contains("GREETING='hi there' echo careful $GREETING"),
        "{shown}"
    );
    // What a screen would reorder or hide is written out: a right-to-left override draws
    // `~ fr- mr` as `rm -rf ~`, a carriage return in a value redraws a terminal's line.
    let mut q = interactive("echo careful \u{202e}~ fr- mr\u{200b}");
    q["execution"]["env"] = json!({"CR": "a\rb"});
    let p = call(&c, "memory_terminal_interactive", q).await;
    assert_eq!(
        p["result"]["output"], "careful \u{202e}~ fr- mr\u{200b}\n",
        "what runs is what was sent: {p:#}"
    );
    let shown = asked.lock().unwrap()[2].clone();
    assert!(
        shown.contains("CR=a\\u{d}b echo careful \\u{202e}~ fr- mr\\u{200b}"),
        "{shown}"
    );
    assert!(!shown.contains(['\u{202e}', '\u{200b}', '\r']), "{shown:?}");
    let _ = c.cancel().await;

    let (c, _) = start_person(Answer::Decline("not on a Friday"), &[WARN]).await;
    let p = declined_through_elicitation(&c).await;
    assert_eq!(p["fallback"]["strategy"], "report_decline");
    assert_eq!(p["fallback"]["can_auto_retry"], false);
    // Nothing ran: no terminal was opened for it.
    let l = call(&c, "memory_terminal_interactive", json!({"action": "list"})).await;
    assert!(l["result"]["items"].as_array().unwrap().is_empty());
    let _ = c.cancel().await;

    let (c, _) = start_person(Answer::Never, &[WARN]).await;
    let marker = scratch_dir().join("ran");
    let mut req = interactive(&format!("echo careful > {}", marker.display()));
    req["runtime"]["timeout_ms"] = json!(1500);
    let started = std::time::Instant::now();
    let p = call(&c, "memory_terminal_interactive", req).await;
    assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{p:#}");
    assert_eq!(p["error"]["details"]["target"], "approval");
    assert!(started.elapsed() < Duration::from_secs(10));
    // Nothing ran, then or later: no file, no terminal opened for it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!marker.exists(), "a command nobody approved ran");
    let l = call(&c, "memory_terminal_interactive", json!({"action": "list"})).await;
    assert!(
        l["result"]["items"].as_array().unwrap().is_empty(),
        "a terminal was opened for it: {l:#}"
    );
    let _ = c.cancel().await;
}

/// The client cancels the call while its user is still being asked: the command is
/// declined at once and never runs, even when the user's yes arrives afterwards.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_cancelled_while_its_user_decides_never_runs() {
    let dir = scratch_dir();
    let marker = dir.join("ran");
    let (c, asked) = start_person(
        Answer::ApproveAfter(Duration::from_millis(1500)),
        &[("PM_TERM_POLICY_WARN", "touch")],
    )
    .await;
    let req = interactive(&format!("touch {}", marker.display()));
    let pending = send_call(c.peer(), "memory_terminal_interactive", req, None).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while asked.lock().unwrap().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the user was never asked"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pending
        .cancel(Some("the user pressed stop".into()))
        .await
        .unwrap();
    // Past the user's late yes, and time for a terminal to run the command.
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert!(!marker.exists(), "a cancelled call's command ran");
    let l = call(&c, "memory_terminal_interactive", json!({"action": "list"})).await;
    assert!(
        l["result"]["items"].as_array().unwrap().is_empty(),
        "no terminal opened for it: {l:#}"
    );
    let _ = c.cancel().await;
}

/// A client that declares URL elicitation only cannot show the approval's form: it is not
/// asked (in either protocol), and the next approver — here the operator's default —
/// decides at once, instead of a question it cannot show running into its timeout.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_shows_only_urls_is_not_asked_for_a_form() {
    let lifecycles = [
        ClientLifecycleMode::Initialize,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    ];
    for lifecycle in lifecycles {
        let (c, asked) = start_person_with(
            Answer::Approve,
            &[WARN, ("PM_TERM_APPROVAL_DEFAULT", "approve")],
            lifecycle,
            true,
        )
        .await;
        let p = call(
            &c,
            "memory_terminal_interactive",
            interactive("echo careful"),
        )
        .await;
        assert_eq!(
            p["result"]["approval"]["decided_by"], "operator_default",
            "{p:#}"
        );
        assert_eq!(p["result"]["output"], "careful\n", "{p:#}");
        assert!(asked.lock().unwrap().is_empty(), "{:?}", asked.lock());
        let _ = c.cancel().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn operator_default_and_approval_for_everything() {
    // No page, no elicitation: by default the operator's default declines, headless and
    // interactive alike, names the setting, and nothing runs.
    let marker = scratch_dir().join("ran");
    let careful = |mode: &str| {
        json!({"action": "execute",
            "invocation": {"mode": mode, "intent": "execute_command"},
            "execution": {"command": format!("echo careful; touch {}", marker.display())}})
    };
    let s = server()
        .envs(&[WARN, ("PM_TERM_NO_USER_RC", "1")])
        .start()
        .await;
    for mode in ["interactive", "headless"] {
        let p = s.call(careful(mode)).await;
        assert_eq!(code(&p), "PM_TERM_DECLINED", "{mode}: {p:#}");
        assert_eq!(p["error"]["details"]["decided_by"], "operator_default");
        assert_eq!(p["error"]["details"]["setting"], "PM_TERM_APPROVAL_DEFAULT");
        assert_eq!(p["error"]["details"]["rule"], "operator_warned");
        assert!(
            p["error"]["message"]
                .as_str()
                .unwrap()
                .contains("PM_TERM_APPROVAL_DEFAULT=approve"),
            "the refusal names the setting that allows it: {p:#}"
        );
        assert!(!marker.exists(), "{mode}: a declined command ran");
    }
    s.stop().await;
    // The operator may let them run unattended: then they run, with who decided.
    let s = server()
        .envs(&[
            WARN,
            ("PM_TERM_NO_USER_RC", "1"),
            ("PM_TERM_APPROVAL_DEFAULT", "approve"),
        ])
        .start()
        .await;
    let p = s.call(careful("interactive")).await;
    assert_eq!(p["result"]["approval"]["decided_by"], "operator_default");
    assert_eq!(p["result"]["output"], "careful\n");
    let h = s.call(careful("headless")).await;
    assert_eq!(h["result"]["authorization"], "allowed_with_warning");
    assert_eq!(h["result"]["approval"]["decided_by"], "operator_default");
    assert_eq!(h["result"]["stdout"], "careful\n");
    assert!(marker.exists());
    s.stop().await;
    // An operator who sends headless commands past the person keeps the old way.
    std::fs::remove_file(&marker).unwrap();
    let s = server()
        .envs(&[WARN, ("PM_TERM_APPROVE_HEADLESS", "off")])
        .start()
        .await;
    let h = s.call(careful("headless")).await;
    assert_eq!(
        h["result"]["authorization"], "allowed_with_warning",
        "{h:#}"
    );
    assert!(h["result"].get("approval").is_none(), "{h:#}");
    assert!(marker.exists());
    s.stop().await;
    // The operator can ask for approval of every interactive command.
    let (c, asked) = start_person(Answer::Approve, &[("PM_TERM_APPROVAL", "all")]).await;
    let p = call(&c, "memory_terminal_interactive", interactive("echo plain")).await;
    assert_eq!(p["result"]["approval"]["decided_by"], "elicitation");
    assert_eq!(asked.lock().unwrap().len(), 1);
    let _ = c.cancel().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn blocked_commands_never_run_nor_ask() {
    // Inert shells: a policy regression could not run these lines.
    let inert = inert_shells();
    let (c, asked) = start_person(Answer::Approve, &env_refs(&inert)).await;
    for cmd in [
        "rm -rf /",
        "sudo mkfs.ext4 /dev/sda1",
        "bash -c 'dd if=/dev/zero of=/dev/sda'",
    ] {
        let p = call(&c, "memory_terminal_interactive", interactive(cmd)).await;
        assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{cmd}");
        let p = call(&c, "memory_terminal_interactive", headless(cmd)).await;
        assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{cmd}");
    }
    // Raw keystrokes that would enter a blocked command line are judged too.
    let o = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "execute",
        "invocation": {"mode": "interactive", "intent": "open_only"}}),
    )
    .await;
    let id = o["identity"]["terminal_id"].as_str().unwrap();
    let p = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "execute",
        "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": {"input": "rm -rf ~\r"}}),
    )
    .await;
    assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE");
    assert!(asked.lock().unwrap().is_empty());
    let _ = c.cancel().await;
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

/// A call cancelled while a person on the host's page is asked: the question is taken off
/// the page at once (resolved as withdrawn), a late yes finds nothing to decide, the same
/// request asked again is a new question on the page, and the command never runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_question_on_the_page_is_withdrawn_when_its_call_is_cancelled() {
    let host = host("tok-withdraw").start();
    let port = host.port.to_string();
    let marker = scratch_dir().join("ran");
    let env = [
        ("PM_RUNNING_IN_CONTAINER", "true"),
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1"),
        ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port.as_str()),
        ("PM_INTERACTIVE_TERMINAL_TOKEN", "tok-withdraw"),
        ("PM_TERM_POLICY_WARN", "touch"),
    ];
    let (c, asked) = start_person(Answer::Approve, &env).await;
    let (mut tx, mut rx) = page(&host.addr, &host.login).await;
    let mut req = interactive(&format!("touch {}", marker.display()));
    req["correlation"] = json!({"request_id": "req_withdrawn_1"});
    let pending = send_call(c.peer(), "memory_terminal_interactive", req.clone(), None).await;
    let a = next_pending(&mut rx).await;
    pending
        .cancel(Some("the user pressed stop".into()))
        .await
        .unwrap();
    let resolved = next_of(&mut rx, "pm/approval/resolved").await;
    assert_eq!(
        resolved["params"]["approval_id"], a["approval_id"],
        "{resolved}"
    );
    assert_eq!(resolved["params"]["decision"], "withdrawn", "{resolved}");
    decide(&mut tx, 7, &a["approval_id"], "approve", None).await;
    let late = next_of(&mut rx, "").await;
    assert!(
        late["error"].is_object(),
        "a withdrawn question is not decided: {late}"
    );
    // The same request asked again (same request id): a new question on the page, which
    // the person decides; the client's user, who would say yes, is not asked.
    let again = send_call(c.peer(), "memory_terminal_interactive", req, None).await;
    let q = next_pending(&mut rx).await;
    assert_ne!(q["approval_id"], a["approval_id"], "{q}");
    decide(&mut tx, 8, &q["approval_id"], "decline", Some("not now")).await;
    let rmcp::model::ServerResult::CallToolResult(r) = again.await_response().await.unwrap() else {
        panic!("not a tool result")
    };
    let p = check_result(&r);
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    assert_eq!(p["error"]["details"]["decided_by"], "page", "{p:#}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!marker.exists(), "a cancelled call's command ran");
    assert!(
        asked.lock().unwrap().is_empty(),
        "not handed on to the client"
    );
    let _ = c.cancel().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_on_the_host_page_decides() {
    let host = host("tok-page").start();
    let port = host.port.to_string();
    let env = [
        ("PM_RUNNING_IN_CONTAINER", "true"),
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1"),
        ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port.as_str()),
        ("PM_INTERACTIVE_TERMINAL_TOKEN", "tok-page"),
        WARN,
    ];
    // The MCP client declares elicitation too: the page comes first.
    let (c, asked) = start_person(Answer::Approve, &env).await;
    let c = Arc::new(c);
    let (mut tx, mut rx) = page(&host.addr, &host.login).await;

    let pending = in_background(&c, "echo careful declined");
    let a = next_pending(&mut rx).await;
    assert_eq!(a["command"], "echo careful declined");
    assert!(a["warning"].as_str().unwrap().contains("operator"));
    decide(&mut tx, 2, &a["approval_id"], "decline", Some("not now")).await;
    let p = pending.await.unwrap();
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    assert_eq!(p["error"]["details"]["decided_by"], "page");
    assert_eq!(p["error"]["details"]["reason"], "not now");

    let approved = in_background(&c, "echo careful approved");
    let a = next_pending(&mut rx).await;
    decide(&mut tx, 3, &a["approval_id"], "approve", None).await;
    let p = approved.await.unwrap();
    assert_eq!(p["result"]["output"], "careful approved\n", "{p:#}");
    // The page is shown what a screen would reorder written out, as the client is.
    let reordered = in_background(&c, "echo careful \u{2067}reordered");
    let a = next_pending(&mut rx).await;
    assert_eq!(a["command"], "echo careful \\u{2067}reordered", "{a:#}");
    decide(&mut tx, 4, &a["approval_id"], "approve", None).await;
    let p = reordered.await.unwrap();
    assert_eq!(
        p["result"]["output"], "careful \u{2067}reordered\n",
        "{p:#}"
    );
    assert_eq!(p["result"]["approval"]["decided_by"], "page");
    assert_eq!(p["result"]["approval"]["approver"], "page-test");

    // Nobody decides in time.
    let mut req = interactive("echo careful ignored");
    req["runtime"]["timeout_ms"] = json!(1500);
    let p = call(&c, "memory_terminal_interactive", req).await;
    assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{p:#}");
    assert_eq!(p["error"]["details"]["decided_by"], "page");
    assert!(
        asked.lock().unwrap().is_empty(),
        "the page answered, elicitation was not needed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_strict_tool() {
    let s = server().start().await;
    let strict = |args: Value| {
        let Value::Object(m) = args else { panic!() };
        CallToolRequestParams::new("memory_terminal").with_arguments(m)
    };
    let tools = s.client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "memory_terminal"));
    let ok = check_result(
        &s.client
            .call_tool(strict(json!({"command": "echo strict-ok"})))
            .await
            .unwrap(),
    );
    assert_eq!(ok["result"]["stdout"], "strict-ok\n", "{ok:#}");
    // The documented shortcut is not a legacy alias.
    assert_eq!(ok["resolved"]["alias_applied"], false, "{ok:#}");
    assert_eq!(ok["resolved"]["canonical_action"], "execute");
    let id = ok["identity"]["session_id"].as_str().unwrap().to_string();
    let ok = check_result(
        &s.client
            .call_tool(strict(headless("git --version")))
            .await
            .unwrap(),
    );
    assert_eq!(ok["success"], true, "{ok:#}");
    for bad in [
        "lsof",
        "git branch -D main",
        "ls; rm -rf x",
        "ls | sh",
        "echo $(id)",
        "rm -rf build",
        "FOO=1 ls",
    ] {
        let p = check_result(
            &s.client
                .call_tool(strict(json!({"command": bad})))
                .await
                .unwrap(),
        );
        assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{bad}: {p:#}");
        assert_eq!(p["error"]["details"]["rule"], "strict_allowlist");
        assert!(p["error"]["details"]["allowed"].as_array().unwrap().len() > 10);
        let words = p["fallback"]["user_message"].as_str().unwrap();
        assert!(
            words.contains("strict allowlist") && words.contains("memory_terminal_interactive"),
            "{bad}: {words}"
        );
        assert!(!words.contains("destructive"), "{bad}: {words}");
    }
    let p = check_result(
        &s.client
            .call_tool(strict(json!({"action": "execute",
        "invocation": {"mode": "interactive", "intent": "open_only"}})))
            .await
            .unwrap(),
    );
    assert_eq!(code(&p), "PM_TERM_INVALID_MODE");
    let r = check_result(&s.client.call_tool(strict(json!({"action": "read_output", "target": {"session_id": id}, "output": {"stdout_cursor": 0}}))).await.unwrap());
    assert_eq!(r["result"]["stdout"], "strict-ok\n");
    let l = check_result(
        &s.client
            .call_tool(strict(json!({"action": "list"})))
            .await
            .unwrap(),
    );
    assert!(
        l["result"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["kind"] == "session")
    );
    s.stop().await;
    // The operator extends the list.
    let s = server()
        .envs(&[("PM_TERM_STRICT_ALLOW", "printf")])
        .start()
        .await;
    let ok = check_result(
        &s.client
            .call_tool(strict(json!({"command": "printf extended"})))
            .await
            .unwrap(),
    );
    assert_eq!(ok["result"]["stdout"], "extended");
    s.stop().await;
    // Phase C refuses legacy aliases, not the shortcut it documents.
    let s = server()
        .envs(&[("PM_TERM_DEPRECATION_PHASE", "C")])
        .start()
        .await;
    let ok = check_result(
        &s.client
            .call_tool(strict(json!({"command": "echo phase-c"})))
            .await
            .unwrap(),
    );
    assert_eq!(ok["result"]["stdout"], "phase-c\n", "{ok:#}");
    assert_eq!(ok["resolved"]["alias_applied"], false);
    assert!(ok["resolved"].get("deprecation").is_none(), "{ok:#}");
    let p = check_result(
        &s.client
            .call_tool(strict(json!({"action": "run", "command": "echo old"})))
            .await
            .unwrap(),
    );
    assert_eq!(code(&p), "PM_TERM_INVALID_ACTION", "{p:#}");
    assert_eq!(p["fallback"]["next_action"], "execute", "{p:#}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn limits_answer_clearly() {
    let s = server()
        .envs(&[
            ("PM_TERM_MAX_SESSIONS", "2"),
            ("PM_TERM_MAX_TERMINALS", "1"),
            ("PM_TERM_NO_USER_RC", "1"),
        ])
        .start()
        .await;
    let mut long = headless("sleep 30");
    long["runtime"] = json!({"wait_ms": 50});
    s.call(long.clone()).await;
    s.call(long.clone()).await;
    let p = s.call(long).await;
    assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{p:#}");
    assert_eq!(p["error"]["retriable"], true, "{p:#}");
    assert_eq!(p["error"]["details"]["limit"], "running_commands");
    assert!(
        p["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit of 2 running commands"),
        "{p:#}"
    );
    let open =
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}});
    assert_eq!(s.call(open.clone()).await["success"], true);
    let p = s.call(open).await;
    assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{p:#}");
    assert_eq!(p["error"]["details"]["limit"], "live_terminals");
    // Oversized requests and environments.
    let big = "x".repeat(1_100_000);
    let p = s.call(headless(&format!("echo {big}"))).await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD");
    let mut env = serde_json::Map::new();
    for i in 0..300 {
        env.insert(format!("K{i}"), json!("v"));
    }
    let mut req = headless("true");
    req["execution"]["env"] = Value::Object(env);
    assert_eq!(code(&s.call(req).await), "PM_TERM_INVALID_PAYLOAD");
    s.stop().await;
}

/// Every field an agent controls, tried as a way around the person at the page: none picks a
/// program, none skips the page.
#[tokio::test(flavor = "multi_thread")]
async fn no_field_an_agent_sends_routes_around_the_page() {
    let host = host("tok-hostile-agent").start();
    let port = host.port.to_string();
    let env = [
        ("PM_RUNNING_IN_CONTAINER", "true"),
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1"),
        ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port.as_str()),
        ("PM_INTERACTIVE_TERMINAL_TOKEN", "tok-hostile-agent"),
        // The operator lets requests pick a local terminal, and sends headless through approval.
        ("PM_TERM_ADAPTER_OVERRIDES", "local"),
        ("PM_TERM_APPROVE_HEADLESS", "on"),
        WARN,
    ];
    // The client would approve anything through elicitation: the page must come first.
    let (c, asked) = start_person(Answer::Approve, &env).await;
    let c = Arc::new(c);
    let (mut tx, mut rx) = page(&host.addr, &host.login).await;

    // A program of the agent's choosing: a script that leaves a mark if it ever runs.
    let dir = scratch_dir();
    let mark = dir.join("agent-program-ran");
    let script = dir.join("agent-program");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch {}\nexec /bin/sh \"$@\"\n", mark.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = script.to_str().unwrap();
    for (req, field) in [
        (
            json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
                "runtime": {"adapter_override": "bundled", "binary_path": script}}),
            "runtime.binary_path",
        ),
        (
            json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
                "execution": {"shell": script}}),
            "execution.shell",
        ),
        (
            json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                "execution": {"command": "echo careful"}, "runtime": {"adapter_override": "bundled"}}),
            "runtime.adapter_override",
        ),
    ] {
        let p = call(&c, "memory_terminal_interactive", req).await;
        assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
        let named = p["error"]["details"]["field"]
            .as_str()
            .or(p["error"]["details"]["violations"][0]["path"].as_str());
        assert_eq!(named, Some(field), "{p:#}");
    }
    assert!(!mark.exists(), "an agent-chosen program ran");

    // A local terminal and a headless command: both wait for the page.
    let local = interactive("echo careful local");
    let mut local_req = local.clone();
    local_req["runtime"]["adapter_override"] = json!("local");
    let mut headless_req = headless("echo careful headless");
    headless_req["runtime"] = json!({"adapter_override": "auto"});
    for (req, command) in [
        (local_req, "echo careful local"),
        (headless_req, "echo careful headless"),
    ] {
        let pending = {
            let c = c.clone();
            let tool = if command.contains("headless") {
                "memory_terminal"
            } else {
                "memory_terminal_interactive"
            };
            tokio::spawn(async move { call(&c, tool, req).await })
        };
        let a = next_pending(&mut rx).await;
        assert_eq!(a["command"], command);
        decide(&mut tx, 9, &a["approval_id"], "decline", Some("no")).await;
        let p = pending.await.unwrap();
        assert_eq!(code(&p), "PM_TERM_DECLINED", "{command}: {p:#}");
        assert_eq!(p["error"]["details"]["decided_by"], "page");
    }

    // `auto` is the same as saying nothing: the operator's adapter (the container's host).
    let mut auto =
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}});
    let unset = call(&c, "memory_terminal_interactive", auto.clone()).await;
    auto["runtime"] = json!({"adapter_override": "auto"});
    let picked = call(&c, "memory_terminal_interactive", auto).await;
    assert_eq!(
        unset["resolved"]["adapter"], "container_bridge",
        "{unset:#}"
    );
    assert_eq!(
        picked["resolved"]["adapter"], unset["resolved"]["adapter"],
        "{picked:#}"
    );
    assert!(
        asked.lock().unwrap().is_empty(),
        "elicitation was asked instead of the page"
    );
    assert!(!mark.exists());
}

/// The `--gui` set-up as people run it: a person's page is asked about a warned command,
/// and the page's host dies (SIGKILL) while the question waits. The agent is not left
/// waiting for an answer that cannot come: the chain goes on to the MCP client's
/// elicitation at once, well before the approval's own (ten-minute) deadline.
#[tokio::test(flavor = "multi_thread")]
async fn a_page_host_killed_while_asking_hands_the_question_on() {
    use tokio::io::AsyncBufReadExt;
    let cmd = server()
        .args(&["--gui"])
        .envs(&[
            ("PM_TERM_NO_USER_RC", "1"),
            ("PM_TERM_APPROVAL_TIMEOUT_MS", "600000"),
            WARN,
        ])
        .command();
    let (t, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let server_pid = t.id().unwrap();
    let (link_tx, link_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr.unwrap()).lines();
        let mut link_tx = Some(link_tx);
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(at) = line.find("http://")
                && line.contains("/login?code=")
                && let Some(tx) = link_tx.take()
            {
                let link = line[at..].split_whitespace().next().unwrap().to_string();
                let _ = tx.send(link);
            }
            eprintln!("{line}");
        }
    });
    let asked = Arc::new(Mutex::new(Vec::new()));
    let person = Person {
        answer: Answer::Approve,
        asked: asked.clone(),
        urls_only: false,
    };
    let c = Arc::new(person.serve(t).await.unwrap());
    let link = tokio::time::timeout(Duration::from_secs(20), link_rx)
        .await
        .expect("the server logs the page's address")
        .unwrap();
    let addr = link
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let (_tx, mut rx) = page(&addr, &link).await;

    let mut req = interactive("echo careful after the host died");
    req["runtime"]["timeout_ms"] = json!(600_000);
    let pending = {
        let c = c.clone();
        tokio::spawn(async move { call(&c, "memory_terminal_interactive", req).await })
    };
    let a = next_pending(&mut rx).await;
    assert_eq!(a["command"], "echo careful after the host died");
    assert!(asked.lock().unwrap().is_empty(), "the page is asked first");

    // The host is the server's child; kill it as the OOM killer would.
    let hosts: Vec<u32> = children_of(server_pid)
        .into_iter()
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .map(|c| c.contains("--lifeline"))
                .unwrap_or(false)
        })
        .collect();
    assert_eq!(hosts.len(), 1, "one host under the server: {hosts:?}");
    sigkill(hosts[0]);

    // Far sooner than the approval's deadline: the question goes on to elicitation.
    let p = tokio::time::timeout(Duration::from_secs(60), pending)
        .await
        .expect("the agent is answered soon after the host died, not at the deadline")
        .unwrap();
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "elicitation asked once: {asked:?}; {p:#}");
    assert!(
        asked[0].contains("echo careful after the host died"),
        "{asked:?}"
    );
    // Approved there, the command runs on the host the adapter started again.
    assert_eq!(
        p["result"]["approval"]["decided_by"], "elicitation",
        "{p:#}"
    );
    assert_eq!(
        p["result"]["output"], "careful after the host died\n",
        "{p:#}"
    );
    let _ = Arc::try_unwrap(c).ok().map(|c| c.cancel());
}

/// A workspace and a directory outside it, under /var/tmp (a sandbox's /tmp is its own).
fn sandbox_dirs() -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let base = std::path::PathBuf::from("/var/tmp").join(unique("itmcp-escape-"));
    let (ws, out) = (base.join("ws"), base.join("outside"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    (base, ws, out)
}

#[tokio::test(flavor = "multi_thread")]
async fn leaving_the_sandbox_asks_a_person_and_nobody_means_no() {
    let (base, ws, out) = sandbox_dirs();
    let ws_text = ws.display().to_string();
    let env = [
        ("PM_TERM_SANDBOX", "workspace-write"),
        ("PM_TERM_WORKSPACE", ws_text.as_str()),
    ];
    let escaped = out.join("escaped");
    let mut escape = headless(&format!("touch {}", escaped.display()));
    escape["runtime"] = json!({"unsandboxed": true, "cwd": ws_text});

    // Nobody can be asked (no page, no elicitation) and the operator's default is to
    // approve: leaving the sandbox is still refused.
    let s = server().envs(&env).start().await;
    let p = s.call(escape.clone()).await;
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    assert_eq!(p["error"]["details"]["decided_by"], "nobody", "{p:#}");
    assert!(!escaped.exists());
    // Blocked stays blocked, whatever the request asks.
    let mut blocked = headless("rm -rf /");
    blocked["runtime"] = json!({"unsandboxed": true});
    let p = s.call(blocked).await;
    assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{p:#}");
    // A terminal cannot leave: its shell and everything typed into it stay confined.
    let mut term = interactive("touch /var/tmp/never");
    term["runtime"]["unsandboxed"] = json!(true);
    let p = s.call(term).await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
    assert_eq!(p["error"]["details"]["field"], "runtime.unsandboxed");
    // Only a boolean asks: anything else is a malformed request, and nothing runs.
    for bad in [json!("yes"), json!(1), json!({"really": true})] {
        let mut q = escape.clone();
        q["runtime"]["unsandboxed"] = bad;
        let p = s.call(q).await;
        assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
    }
    assert!(!escaped.exists());
    s.stop().await;

    // A person declines: nothing runs.
    let (c, _) = start_person(Answer::Decline("stay inside"), &env).await;
    let p = call(&c, "memory_terminal_interactive", escape.clone()).await;
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    assert!(!escaped.exists());
    // The strict tool never leaves the sandbox.
    let p = call(&c, "memory_terminal", escape.clone()).await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
    let _ = c.cancel().await;

    // A person approves, told that it runs outside the sandbox: the command runs unconfined.
    let (c, asked) = start_person(Answer::Approve, &env).await;
    let p = call(&c, "memory_terminal_interactive", escape.clone()).await;
    assert_eq!(p["result"]["exit_code"], 0, "{p:#}");
    assert_eq!(
        p["result"]["approval"]["decided_by"], "elicitation",
        "{p:#}"
    );
    assert!(escaped.exists());
    assert!(
        asked.lock().unwrap()[0].contains("OUTSIDE the sandbox"),
        "{:?}",
        asked.lock().unwrap()
    );
    // Without the request, the same command stays confined and nobody is asked.
    let mut plain = headless(&format!("touch {}/again", out.display()));
    plain["runtime"] = json!({"cwd": ws_text});
    let p = call(&c, "memory_terminal_interactive", plain).await;
    assert_ne!(p["result"]["exit_code"], 0, "{p:#}");
    assert!(!out.join("again").exists());
    assert_eq!(asked.lock().unwrap().len(), 1);
    let _ = c.cancel().await;
    let _ = std::fs::remove_dir_all(base);
}

#[tokio::test(flavor = "multi_thread")]
async fn inside_a_sandbox_the_operator_may_let_warned_commands_run_without_asking() {
    let (base, ws, _) = sandbox_dirs();
    let ws_text = ws.display().to_string();
    let env = [
        WARN,
        ("PM_TERM_SANDBOX", "workspace-write"),
        ("PM_TERM_WORKSPACE", ws_text.as_str()),
        ("PM_TERM_APPROVAL_DEFAULT", "decline"),
        ("PM_TERM_APPROVE_HEADLESS", "on"),
        ("PM_TERM_NO_USER_RC", "1"),
    ];
    // By default a sandbox changes nothing about approvals.
    let s = server().envs(&env).start().await;
    let p = s.call(headless("echo careful")).await;
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    s.stop().await;
    // With the operator's setting, warned commands run without asking, headless and in a
    // terminal, and say they were warned about.
    let s = server()
        .envs(&env)
        .env("PM_TERM_SANDBOX_SKIPS_APPROVAL", "1")
        .start()
        .await;
    let p = s.call(headless("echo careful")).await;
    assert_eq!(p["result"]["stdout"], "careful\n", "{p:#}");
    assert_eq!(p["result"]["authorization"], "allowed_with_warning");
    assert!(p["result"].get("approval").is_none(), "{p:#}");
    let p = s.call(interactive("echo careful")).await;
    assert_eq!(p["result"]["output"], "careful\n", "{p:#}");
    // Blocked stays blocked.
    let p = s.call(headless("rm -rf /")).await;
    assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{p:#}");
    s.stop().await;
    let _ = std::fs::remove_dir_all(base);
}

/// A 2026-07-28 client has no `elicitation/create` from the server: the question comes as
/// an `input_required` answer and the call comes back with the user's answer. Approve and
/// decline work as before; the first round starts nothing; and an answer is only good for
/// the call it was asked about, once: an agent that swaps the command under an approval,
/// or a state the server never gave out, gets the question again.
#[tokio::test(flavor = "multi_thread")]
async fn a_2026_client_is_asked_in_rounds_and_its_answer_binds_to_the_call() {
    let (c, asked) = start_person_2026(Answer::Approve, &[WARN]).await;
    approved_through_elicitation(&c, &asked).await;
    assert_eq!(asked.lock().unwrap().len(), 1);

    // Driven by hand: the first round answers with the question and starts nothing.
    let dir = scratch_dir();
    let mark = dir.join("ran");
    let line = format!("echo careful > {}", mark.display());
    let Value::Object(args) = interactive(&line) else {
        panic!()
    };
    let first = c
        .call_tool_once(
            CallToolRequestParams::new("memory_terminal_interactive").with_arguments(args.clone()),
        )
        .await
        .unwrap();
    let CallToolResponse::InputRequired(q) = first else {
        panic!("a question first: {first:?}")
    };
    let state = q.request_state.clone().expect("a state to come back with");
    assert!(q.input_requests.as_ref().unwrap().contains_key("approval"));
    assert!(!mark.exists(), "nothing ran before the answer");
    let approve: InputResponses = [(
        "approval".to_string(),
        json!({"action": "accept", "content": {"approve": true}}),
    )]
    .into();
    // The agent swaps the command under the approval: asked again, the swap not run.
    let other = dir.join("swapped");
    let Value::Object(swapped) = interactive(&format!("echo careful > {}", other.display())) else {
        panic!()
    };
    let mut again =
        CallToolRequestParams::new("memory_terminal_interactive").with_arguments(swapped);
    again.request_state = Some(state.clone());
    again.input_responses = Some(approve.clone());
    let r = c.call_tool_once(again).await.unwrap();
    assert!(matches!(r, CallToolResponse::InputRequired(_)), "{r:?}");
    assert!(
        !other.exists(),
        "an approval of one command let another run"
    );
    // The state was used up by that attempt: the right arguments with it are asked again.
    let mut stale =
        CallToolRequestParams::new("memory_terminal_interactive").with_arguments(args.clone());
    stale.request_state = Some(state);
    stale.input_responses = Some(approve.clone());
    let r = c.call_tool_once(stale).await.unwrap();
    let CallToolResponse::InputRequired(q) = r else {
        panic!("asked again: {r:?}")
    };
    assert!(!mark.exists());
    // A fresh state and the same arguments: the command runs, once.
    let mut answered =
        CallToolRequestParams::new("memory_terminal_interactive").with_arguments(args);
    answered.request_state = q.request_state.clone();
    answered.input_responses = Some(approve);
    let CallToolResponse::Complete(done) = c.call_tool_once(answered).await.unwrap() else {
        panic!("the answered call completes")
    };
    let p = check_result(&done);
    assert_eq!(p["success"], true, "{p:#}");
    assert_eq!(std::fs::read_to_string(&mark).unwrap(), "careful\n");
    let _ = c.cancel().await;

    let (c, _) = start_person_2026(Answer::Decline("not on a Friday"), &[WARN]).await;
    declined_through_elicitation(&c).await;
    let _ = c.cancel().await;
}

/// A person who takes longer than the call waits: the call answers `waiting_for_approval`
/// with an `approval_id` (in both forms, with the next step), the decision runs the command
/// whether or not anyone reads, `read_output` on the id gives the command's own answer, and
/// `terminate` withdraws a question nobody has decided.
#[tokio::test(flavor = "multi_thread")]
async fn a_decision_slower_than_the_call_is_followed_by_read_output() {
    let host = host("tok-held").start();
    let port = host.port.to_string();
    let env = [
        ("PM_RUNNING_IN_CONTAINER", "true"),
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1"),
        ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port.as_str()),
        ("PM_INTERACTIVE_TERMINAL_TOKEN", "tok-held"),
        WARN,
    ];
    let (c, _asked) = start_person(Answer::Never, &env).await;
    let (mut tx, mut rx) = page(&host.addr, &host.login).await;

    // The call waits one second, the person longer.
    let mut req = interactive("echo careful later");
    req["runtime"]["wait_ms"] = json!(1000);
    let Value::Object(m) = req else { panic!() };
    let r = c
        .call_tool(CallToolRequestParams::new("memory_terminal_interactive").with_arguments(m))
        .await
        .unwrap();
    let p = check_result(&r);
    assert_eq!(p["status"], "accepted", "{p:#}");
    assert_eq!(p["result"]["waiting_for_approval"], true, "{p:#}");
    assert_eq!(p["result"]["authorization"], "allowed_with_warning");
    let id = p["identity"]["approval_id"].as_str().unwrap().to_string();
    assert!(id.starts_with("apr_"), "{p:#}");
    assert_eq!(p["next"]["request"]["action"], "read_output");
    assert_eq!(p["next"]["request"]["target"]["approval_id"], id.as_str());
    let text: String = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert!(text.contains("waiting for a person's decision"), "{text}");
    assert!(text.contains(&id), "{text}");
    assert!(text.contains("echo careful later"), "{text}");

    let read = |wait_ms: u64| json!({"action": "read_output", "target": {"approval_id": id}, "runtime": {"wait_ms": wait_ms}});
    let still = call(&c, "memory_terminal_interactive", read(0)).await;
    assert_eq!(still["result"]["waiting_for_approval"], true, "{still:#}");
    let a = next_pending(&mut rx).await;
    assert_eq!(a["command"], "echo careful later");
    decide(&mut tx, 2, &a["approval_id"], "approve", None).await;
    let p = call(&c, "memory_terminal_interactive", read(30_000)).await;
    assert_eq!(p["success"], true, "{p:#}");
    assert_eq!(p["result"]["output"], "careful later\n", "{p:#}");
    assert_eq!(p["result"]["approval"]["decided_by"], "page");
    let term = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    // Its answer was given once; the id then says where the command ran.
    let again = call(&c, "memory_terminal_interactive", read(0)).await;
    assert_eq!(code(&again), "PM_TERM_NOT_FOUND", "{again:#}");
    assert!(
        again["error"]["message"].as_str().unwrap().contains(&term),
        "{again:#}"
    );

    // A headless command held, then withdrawn: it never runs, the page is told.
    let marker = scratch_dir().join("held-ran");
    let line = format!("echo careful > {}", marker.display());
    let mut req = headless(&line);
    req["runtime"] = json!({"wait_ms": 500});
    let p = call(&c, "memory_terminal_interactive", req).await;
    assert_eq!(p["result"]["waiting_for_approval"], true, "{p:#}");
    let id = p["identity"]["approval_id"].as_str().unwrap().to_string();
    let asked = next_pending(&mut rx).await;
    let t = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "terminate", "target": {"approval_id": id}}),
    )
    .await;
    assert_eq!(t["success"], true, "{t:#}");
    assert_eq!(t["result"]["running"], false, "{t:#}");
    let resolved = next_of(&mut rx, "pm/approval/resolved").await;
    assert_eq!(resolved["params"]["approval_id"], asked["approval_id"]);
    assert_eq!(resolved["params"]["decision"], "withdrawn", "{resolved}");
    let p = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "read_output", "target": {"approval_id": id}}),
    )
    .await;
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    // A late yes finds nothing to run.
    decide(&mut tx, 3, &asked["approval_id"], "approve", None).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!marker.exists(), "a withdrawn command ran");

    // Malformed uses of the id are refused, naming the field.
    let bad = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "read_output", "target": {"approval_id": id, "session_id": "ses_x"}}),
    )
    .await;
    assert_eq!(
        bad["error"]["details"]["field"], "target.approval_id",
        "{bad:#}"
    );
    let unknown = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "read_output", "target": {"approval_id": "apr_nothing"}}),
    )
    .await;
    assert_eq!(code(&unknown), "PM_TERM_NOT_FOUND", "{unknown:#}");
}
