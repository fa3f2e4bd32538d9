//! The AHP commands a client sends, each answered on its connection: initialize and
//! reconnect, subscriptions, dispatched actions, terminals created and disposed, approvals
//! decided, and `pm/terminal` (the operations the MCP server's adapters use).

use std::sync::Arc;

use ahp_types::commands::*;
use ahp_types::errors::{
    UnsupportedProtocolVersionErrorData, ahp_error_codes, json_rpc_error_codes,
};
use serde_json::{Value, json};
use tracing::Instrument;

use super::conn::{Conn, DISPATCH_WRITE_LIMIT, RpcResult, invalid_params, rpc_error, rpc_result};
use super::page::Role;
use crate::terminal::client_actions::Resume;
use crate::terminal::ops::{self, ApprovalArgs, TermRequest};

/// Why a read-only page may not touch a terminal.
const READ_ONLY: &str =
    "the operator made the page read-only: it watches terminals and decides approvals";

pub(super) async fn handle_message(conn: &Arc<Conn>, v: Value) {
    let method = v.get("method").and_then(Value::as_str).map(str::to_string);
    let id = v.get("id").cloned();
    let params = v.get("params").cloned().unwrap_or(Value::Null);
    let Some(method) = method else {
        // Responses to requests we never send, or junk.
        if let Some(id) = id {
            conn.send(&rpc_error(
                &id,
                json_rpc_error_codes::INVALID_REQUEST,
                "not a request",
                None,
            ));
        }
        return;
    };
    let initialized = conn.state().client_id.is_some();
    if !initialized && !matches!(method.as_str(), "initialize" | "reconnect" | "ping") {
        if let Some(id) = id {
            conn.send(&rpc_error(
                &id,
                json_rpc_error_codes::INVALID_REQUEST,
                "initialize first",
                None,
            ));
        }
        return;
    }
    // Long operations run beside the reader so pings and dispatches keep flowing.
    if method == "pm/terminal" || method == "pm/approval/ask" {
        let conn = conn.clone();
        tokio::spawn(async move {
            let r = if method == "pm/terminal" {
                pm_terminal(&conn, params).await
            } else {
                pm_approval_ask(&conn, params).await
            };
            if let Some(id) = id {
                conn.send(&match r {
                    Ok(v) => rpc_result(&id, v),
                    Err((c, m, d)) => rpc_error(&id, c, m, d),
                });
            }
        });
        return;
    }
    // (dispatchAction answers with a rejected action, below.)
    let opens_or_closes = matches!(method.as_str(), "createTerminal" | "disposeTerminal");
    if opens_or_closes && conn.page_is_read_only() {
        if let Some(id) = id {
            conn.send(&rpc_error(
                &id,
                ahp_error_codes::PERMISSION_DENIED,
                READ_ONLY,
                None,
            ));
        }
        return;
    }
    let r = match method.as_str() {
        "initialize" => initialize(conn, params, id.as_ref()),
        "reconnect" => reconnect(conn, params, id.as_ref()),
        "ping" => Ok(Value::Null),
        "subscribe" => subscribe(conn, params, id.as_ref()),
        "unsubscribe" => {
            if let Some(ch) = params.get("channel").and_then(Value::as_str) {
                conn.state().subs.remove(ch);
            }
            Ok(Value::Null)
        }
        "dispatchAction" => dispatch(conn, params).await,
        "pm/approval/decide" => decide(conn, params),
        "pm/approval/withdraw" => withdraw(conn, params),
        "pm/screen/watch" => super::screens::watch(conn, params),
        "pm/screen/unwatch" => super::screens::unwatch(conn, params),
        "pm/screen/history" => super::screens::history(conn, params),
        "pm/terminals" => super::screens::list(conn),
        "createTerminal" => create_terminal(conn, params).await,
        "disposeTerminal" => dispose_terminal(conn, params).await,
        other => Err((
            json_rpc_error_codes::METHOD_NOT_FOUND,
            format!("unknown method {other:?}"),
            None,
        )),
    };
    // initialize / reconnect / subscribe queue their own answers (ordered with actions).
    if matches!(method.as_str(), "initialize" | "reconnect" | "subscribe") && r.is_ok() {
        return;
    }
    if let Some(id) = id {
        conn.send(&match r {
            Ok(v) => rpc_result(&id, v),
            Err((c, m, d)) => rpc_error(&id, c, m, d),
        });
    }
}

fn initialize(conn: &Conn, params: Value, id: Option<&Value>) -> RpcResult {
    let p: InitializeParams = serde_json::from_value(params).map_err(invalid_params)?;
    let version = match ahp_types::negotiate_protocol_version(&p.protocol_versions) {
        Ok(Some(v)) => v.to_string(),
        Ok(None) => {
            let data = UnsupportedProtocolVersionErrorData {
                supported_versions: ahp_types::SUPPORTED_PROTOCOL_VERSIONS
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            };
            return Err((
                ahp_error_codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!("none of {:?} is supported", p.protocol_versions),
                serde_json::to_value(data).ok(),
            ));
        }
        Err(e) => return Err(invalid_params(e)),
    };
    let shared = &conn.shared;
    let asks_to_approve = p
        .meta
        .as_ref()
        .and_then(|m| m.get("interactiveTerminal"))
        .and_then(|m| m.get("approver"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    // Only a person decides: a program with the token (an agent's MCP server) never
    // approves, whatever it says.
    let approver = asks_to_approve && conn.role == Role::Page;
    if asks_to_approve && !approver {
        tracing::warn!(peer = %conn.peer, client = %p.client_id, "a token client asked to approve; refused (only a signed-in page approves)");
    }
    if conn.role == Role::Client {
        shared
            .clients
            .claim(
                &p.client_id,
                crate::host::clients::secret_in(p.meta.as_ref()).as_deref(),
            )
            .map_err(|e| (ahp_error_codes::PERMISSION_DENIED, e, None))?;
    }
    let mut st = conn.state();
    st.client_id = Some(p.client_id.clone());
    let mut snapshots = Vec::new();
    for uri in p.initial_subscriptions.unwrap_or_default() {
        if crate::ids::terminal_id_from_uri(&uri)
            .is_some_and(|id| !conn.may_use_as(id, &p.client_id))
        {
            continue;
        }
        if let Some((snap, seq)) = shared.core.snapshot_with_seq(&uri) {
            st.subs.insert(uri, seq);
            snapshots.push(snap);
        }
    }
    let result = InitializeResult {
        protocol_version: version,
        server_seq: shared.core.current_seq() as i64,
        server_info: Some(Implementation {
            name: "interactive-terminal".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
            title: Some("Interactive terminal host".into()),
        }),
        meta: json!({"interactiveTerminal": {
            "instance": shared.instance,
            "runtimeSessionId": shared.runtime_session_id,
            "traceId": shared.trace_id,
            "extensions": ["pm/terminal", "pm/approval", "pm/screen"],
            "pageReadOnly": conn.page_is_read_only(),
        }})
        .as_object()
        .cloned(),
        snapshots,
        default_directory: None,
        completion_trigger_characters: None,
        terminal_command_prefix: None,
        telemetry: None,
        automations: None,
    };
    tracing::info!(peer = %conn.peer, client = %p.client_id, approver, "initialized");
    if let Some(id) = id {
        let v = rpc_result(id, serde_json::to_value(result).map_err(invalid_params)?);
        Conn::queue(&mut st, &v);
    }
    if approver {
        // After the answer, so the pending approvals follow it.
        shared.approvals.add_approver(conn.id, st.out.clone());
    }
    Ok(Value::Null)
}

fn decide(conn: &Conn, params: Value) -> RpcResult {
    if conn.role != Role::Page {
        return Err((
            json_rpc_error_codes::INVALID_REQUEST,
            "only a person on the signed-in page decides approvals".into(),
            None,
        ));
    }
    let approval = params
        .get("approval_id")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("approval_id is required"))?;
    let approve = match params.get("decision").and_then(Value::as_str) {
        Some("approve") | Some("approved") => true,
        Some("decline") | Some("declined") => false,
        _ => return Err(invalid_params("decision must be approve or decline")),
    };
    let reason = params
        .get("reason")
        .and_then(Value::as_str)
        .map(String::from);
    let by = conn.state().client_id.clone().unwrap_or_default();
    conn.shared
        .approvals
        .decide(approval, approve, reason, &by)
        .map(|()| json!({"ok": true}))
        .map_err(|e| (ahp_error_codes::NOT_FOUND, e, None))
}

/// `pm/approval/withdraw` (`docs/bridge-protocol.md`): `{request_id}` → `{withdrawn: n}`.
/// A program takes back the question it asked for that request (its call was cancelled);
/// another client's questions are not its to take back, and a page decides, never withdraws.
fn withdraw(conn: &Conn, params: Value) -> RpcResult {
    if conn.role == Role::Page {
        return Err((
            json_rpc_error_codes::INVALID_REQUEST,
            "a person on the page decides approvals; only the program that asked withdraws one"
                .into(),
            None,
        ));
    }
    let request_id = request_id_of(&params)?;
    let caller = conn.state().client_id.clone();
    let n = conn
        .shared
        .approvals
        .withdraw(&request_id, caller.as_deref());
    Ok(json!({"withdrawn": n}))
}

fn reconnect(conn: &Conn, params: Value, id: Option<&Value>) -> RpcResult {
    let mut p: ReconnectParams = serde_json::from_value(params).map_err(invalid_params)?;
    let last = u64::try_from(p.last_seen_server_seq).unwrap_or(0);
    if conn.role == Role::Client {
        conn.shared
            .clients
            .claim(
                &p.client_id,
                crate::host::clients::secret_in(p.meta.as_ref()).as_deref(),
            )
            .map_err(|e| (ahp_error_codes::PERMISSION_DENIED, e, None))?;
    }
    let client = p.client_id.clone();
    p.subscriptions.retain(|u| {
        crate::ids::terminal_id_from_uri(u).is_none_or(|id| conn.may_use_as(id, &client))
    });
    let mut st = conn.state();
    st.client_id = Some(p.client_id.clone());
    let (resume, missing, seq) = conn.shared.core.resume(last, &p.subscriptions);
    let result = match resume {
        Resume::Replay(actions) => {
            for u in p.subscriptions.iter().filter(|u| !missing.contains(u)) {
                st.subs.insert(u.clone(), seq);
            }
            ReconnectResult::Replay(ReconnectReplayResult {
                actions: actions.iter().map(|a| (**a).clone()).collect(),
                missing,
            })
        }
        Resume::Snapshot(snapshots) => {
            for s in &snapshots {
                st.subs.insert(s.resource.clone(), seq);
            }
            ReconnectResult::Snapshot(ReconnectSnapshotResult { snapshots })
        }
    };
    st.last_seen = st.last_seen.max(seq);
    tracing::info!(peer = %conn.peer, client = %p.client_id, last, "reconnected");
    if let Some(id) = id {
        let v = rpc_result(id, serde_json::to_value(result).map_err(invalid_params)?);
        Conn::queue(&mut st, &v);
    }
    Ok(Value::Null)
}

fn subscribe(conn: &Conn, params: Value, id: Option<&Value>) -> RpcResult {
    let p: SubscribeParams = serde_json::from_value(params).map_err(invalid_params)?;
    conn.check_channel(&p.channel)?;
    let mut st = conn.state();
    let Some((snap, seq)) = conn.shared.core.snapshot_with_seq(&p.channel) else {
        return Err((
            ahp_error_codes::NOT_FOUND,
            format!("no such channel {}", p.channel),
            None,
        ));
    };
    st.subs.insert(p.channel.clone(), seq);
    if let Some(id) = id {
        let result = SubscribeResult {
            snapshot: Some(snap),
        };
        let v = rpc_result(id, serde_json::to_value(result).map_err(invalid_params)?);
        Conn::queue(&mut st, &v);
    }
    Ok(Value::Null)
}

async fn dispatch(conn: &Conn, params: Value) -> RpcResult {
    let p: DispatchActionParams = serde_json::from_value(params).map_err(invalid_params)?;
    conn.check_channel(&p.channel)?;
    let client = conn.state().client_id.clone().unwrap_or_default();
    let core = conn.shared.core.clone();
    if conn.page_is_read_only() {
        let rejected = ahp_types::ActionEnvelope {
            channel: p.channel,
            action: p.action,
            server_seq: core.current_seq(),
            origin: Some(ahp_types::actions::ActionOrigin {
                client_id: client,
                client_seq: p.client_seq,
            }),
            rejection_reason: Some(READ_ONLY.into()),
        };
        conn.send(&Conn::action(&rejected));
        return Ok(Value::Null);
    }
    let outcome = tokio::time::timeout(
        DISPATCH_WRITE_LIMIT,
        core.dispatch_client(&client, p.client_seq, &p.channel, p.action),
    )
    .await;
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(rejected)) => conn.send(&Conn::action(&rejected)),
        Err(_) => {
            tracing::warn!(peer = %conn.peer, "dispatched input did not fit into the terminal in time")
        }
    }
    Ok(Value::Null)
}

async fn create_terminal(conn: &Conn, params: Value) -> RpcResult {
    let p: CreateTerminalParams = serde_json::from_value(params).map_err(invalid_params)?;
    let id = crate::ids::terminal_id_from_uri(&p.channel)
        .filter(|id| crate::ids::is_acceptable_external_id(id))
        .ok_or_else(|| {
            invalid_params(format!(
                "channel must be ahp-terminal:/<id>, not {:?}",
                p.channel
            ))
        })?;
    let ext = p
        .meta
        .as_ref()
        .and_then(|m| m.get("interactiveTerminal"))
        .cloned()
        .unwrap_or(Value::Null);
    let env = ext
        .get("env")
        .and_then(|e| serde_json::from_value(e.clone()).ok())
        .unwrap_or_default();
    let cwd = match &p.cwd {
        Some(u) => std::path::PathBuf::from(crate::terminal::file_uri::file_uri_path(u)),
        None => std::env::current_dir().unwrap_or_else(|_| "/".into()),
    };
    let spec = crate::terminal::CreateSpec {
        id: Some(id.to_string()),
        name: p.name,
        cwd,
        env,
        shell: ext.get("shell").and_then(Value::as_str).map(String::from),
        cols: p
            .cols
            .and_then(|c| u16::try_from(c).ok())
            .unwrap_or(crate::terminal::DEFAULT_COLS),
        rows: p
            .rows
            .and_then(|r| u16::try_from(r).ok())
            .unwrap_or(crate::terminal::DEFAULT_ROWS),
        claim: p.claim,
        holder_client: conn.state().client_id.clone(),
        workspace_id: None,
    };
    match conn.shared.core.create(spec).await {
        Ok(_) => Ok(Value::Null),
        Err(crate::terminal::CoreError::Exists(id)) => Err((
            ahp_error_codes::ALREADY_EXISTS,
            format!("terminal {id} exists"),
            None,
        )),
        Err(e) => Err((json_rpc_error_codes::INTERNAL_ERROR, e.to_string(), None)),
    }
}

async fn dispose_terminal(conn: &Conn, params: Value) -> RpcResult {
    let p: DisposeTerminalParams = serde_json::from_value(params).map_err(invalid_params)?;
    let id = crate::ids::terminal_id_from_uri(&p.channel)
        .ok_or_else(|| invalid_params("not a terminal channel"))?;
    conn.check_channel(&p.channel)?;
    conn.shared
        .core
        .dispose(id)
        .await
        .map(|_| Value::Null)
        .map_err(|e| (ahp_error_codes::NOT_FOUND, e.to_string(), None))
}

/// The terminal operations of the adapters (`docs/bridge-protocol.md`):
/// `{request_id, trace_id?, request: TermRequest}` → `{ok: TermResponse}` or `{err: OpError}`.
async fn pm_terminal(conn: &Arc<Conn>, params: Value) -> RpcResult {
    let request_id = request_id_of(&params)?;
    let req: TermRequest =
        serde_json::from_value(params.get("request").cloned().unwrap_or(Value::Null))
            .map_err(invalid_params)?;
    let trace = params
        .get("trace_id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let core = conn.shared.core.clone();
    let caller = conn.state().client_id.clone();
    tracing::debug!(peer = %conn.peer, %request_id, trace_id = %trace, "pm/terminal");
    if let Some(id) = req.terminal_id()
        && !conn.may_use(id)
    {
        let e = ops::OpError::new(
            ops::OpErrorKind::Invalid,
            format!(
                "terminal {id} belongs to another client; only it (or a person on the page) may use it"
            ),
        );
        return Ok(json!({"err": e}));
    }
    // How long the caller waits is not part of what the operation is.
    let mut what = params.get("request").cloned().unwrap_or(Value::Null);
    if let Some(o) = what.as_object_mut() {
        for k in ["wait_ms", "timeout_ms", "claim", "output"] {
            o.remove(k);
        }
    }
    let key = request_key(caller.as_deref(), &request_id, &what);
    let answer = conn
        .shared
        .requests
        .run(&key, async move {
            let span = tracing::info_span!("pm_terminal", trace_id = %trace);
            match ops::execute(&core, req, caller.as_deref())
                .instrument(span)
                .await
            {
                Ok(r) => json!({"ok": r}),
                Err(e) => json!({"err": e}),
            }
        })
        .await;
    Ok((*answer).clone())
}

/// `pm/approval/ask` (`docs/bridge-protocol.md`): `{request_id, trace_id?, approval:
/// ApprovalArgs}` → `{ok: ApprovalAnswer}`. The people on the page decide; one request id
/// is asked once, and a retry gets the same decision.
async fn pm_approval_ask(conn: &Arc<Conn>, params: Value) -> RpcResult {
    let request_id = request_id_of(&params)?;
    let what = params.get("approval").cloned().unwrap_or(Value::Null);
    let question: ApprovalArgs = serde_json::from_value(what.clone()).map_err(invalid_params)?;
    let caller = conn.state().client_id.clone();
    let key = request_key(caller.as_deref(), &request_id, &what);
    let shared = conn.shared.clone();
    let answer = conn
        .shared
        .requests
        .run(&key, async move {
            json!({"ok": shared.approvals.request(question, caller.as_deref()).await})
        })
        .await;
    Ok((*answer).clone())
}

fn request_id_of(params: &Value) -> Result<String, (i32, String, Option<Value>)> {
    params
        .get("request_id")
        .and_then(Value::as_str)
        .filter(|s| crate::ids::is_acceptable_external_id(s))
        .map(String::from)
        .ok_or_else(|| invalid_params("request_id is required"))
}

/// One client's request ids are its own (another cannot replay them to read its answers),
/// and an id names one request: the same id with other contents is another request.
fn request_key(caller: Option<&str>, request_id: &str, what: &Value) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    what.to_string().hash(&mut h);
    format!(
        "{}\u{0}{request_id}\u{0}{:016x}",
        caller.unwrap_or(""),
        h.finish()
    )
}
