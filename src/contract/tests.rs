//! One test per coupling rule (docs/contract.md, "The pipeline"), alias transform and correlation constraint.

use serde_json::{Value, json};

use super::alias::Phase;
use super::error::ErrorCode;
use super::request::{Action, Intent, Mode};
use super::response;
use super::{parse, schema};

fn ok(v: Value) -> super::Request {
    match parse(&v, Phase::A) {
        Ok(r) => r,
        Err(e) => panic!("{v} rejected: {}", e.error),
    }
}

fn code(v: Value) -> ErrorCode {
    code_in(v, Phase::A)
}

fn code_in(v: Value, phase: Phase) -> ErrorCode {
    match parse(&v, phase) {
        Ok(_) => panic!("{v} accepted"),
        Err(e) => {
            let payload = response::failure(&e.envelope, &e.error);
            assert!(
                schema::is_valid_payload(&payload),
                "{:?}",
                schema::payload_violations(&payload)
            );
            e.error.code
        }
    }
}

fn exec(mode: &str, intent: &str) -> Value {
    json!({"action": "execute", "invocation": {"mode": mode, "intent": intent}})
}

// --- execute coupling ---

#[test]
fn execute_requires_mode() {
    assert_eq!(
        code(
            json!({"action": "execute", "invocation": {"intent": "execute_command"}, "execution": {"command": "ls"}})
        ),
        ErrorCode::InvalidPayload
    );
}

#[test]
fn execute_requires_intent() {
    assert_eq!(
        code(
            json!({"action": "execute", "invocation": {"mode": "headless"}, "execution": {"command": "ls"}})
        ),
        ErrorCode::InvalidPayload
    );
}

#[test]
fn execute_command_requires_command() {
    assert_eq!(
        code(exec("headless", "execute_command")),
        ErrorCode::InvalidPayload
    );
    assert_eq!(
        code(exec("interactive", "execute_command")),
        ErrorCode::InvalidPayload
    );
    let mut v = exec("headless", "execute_command");
    v["execution"] = json!({"command": "echo hi"});
    assert_eq!(ok(v).intent, Some(Intent::ExecuteCommand));
}

#[test]
fn open_only_forbids_command() {
    let mut v = exec("interactive", "open_only");
    v["execution"] = json!({"command": "ls"});
    assert_eq!(code(v), ErrorCode::InvalidPayload);
    assert_eq!(
        ok(exec("interactive", "open_only")).intent,
        Some(Intent::OpenOnly)
    );
}

// --- read_output / terminate / list ---

#[test]
fn read_output_requires_a_target() {
    assert_eq!(
        code(json!({"action": "read_output"})),
        ErrorCode::InvalidPayload
    );
    assert_eq!(
        code(json!({"action": "read_output", "target": {}})),
        ErrorCode::InvalidPayload
    );
    let r = ok(json!({"action": "read_output", "target": {"session_id": "ses_1"}}));
    assert_eq!(r.mode, Some(Mode::Headless));
    let r = ok(json!({"action": "read_output", "target": {"terminal_id": "term_1"}}));
    assert_eq!(r.mode, Some(Mode::Interactive));
}

#[test]
fn terminate_requires_a_target() {
    assert_eq!(
        code(json!({"action": "terminate"})),
        ErrorCode::InvalidPayload
    );
    ok(json!({"action": "terminate", "target": {"terminal_id": "term_1"}}));
}

#[test]
fn list_forbids_execution_and_target() {
    assert_eq!(
        code(json!({"action": "list", "execution": {"command": "ls"}})),
        ErrorCode::InvalidPayload
    );
    assert_eq!(
        code(json!({"action": "list", "target": {"session_id": "ses_1"}})),
        ErrorCode::InvalidPayload
    );
    // Legacy flat keys count too.
    assert_eq!(
        code(json!({"action": "list", "session_id": "ses_1"})),
        ErrorCode::InvalidPayload
    );
    assert_eq!(ok(json!({"action": "list"})).action, Action::List);
}

// --- mode constraints ---

#[test]
fn headless_forbids_terminal_id_on_execute() {
    let mut v = exec("headless", "execute_command");
    v["execution"] = json!({"command": "ls"});
    v["target"] = json!({"terminal_id": "term_1"});
    assert_eq!(code(v), ErrorCode::InvalidPayload);
}

#[test]
fn headless_allows_session_id_for_follow_ups() {
    ok(
        json!({"action": "read_output", "invocation": {"mode": "headless"}, "target": {"session_id": "ses_1"}}),
    );
    ok(
        json!({"action": "terminate", "invocation": {"mode": "headless"}, "target": {"session_id": "ses_1"}}),
    );
    assert_eq!(
        code(
            json!({"action": "read_output", "invocation": {"mode": "headless"}, "target": {"terminal_id": "term_1"}})
        ),
        ErrorCode::InvalidPayload
    );
}

#[test]
fn interactive_allows_terminal_id_and_open_only() {
    let mut v = exec("interactive", "execute_command");
    v["execution"] = json!({"command": "ls"});
    v["target"] = json!({"terminal_id": "term_1"});
    ok(v);
    let mut v = exec("interactive", "execute_command");
    v["execution"] = json!({"input": "y\n", "keys": ["enter"]});
    v["target"] = json!({"terminal_id": "term_1"});
    assert_eq!(ok(v).execution.input.as_deref(), Some("y\n\r"));
    assert_eq!(
        code(exec("headless", "open_only")),
        ErrorCode::InvalidPayload
    );
}

#[test]
fn unsupported_mode_is_invalid_mode() {
    assert_eq!(code(exec("gui", "open_only")), ErrorCode::InvalidMode);
    assert_eq!(code(exec("", "open_only")), ErrorCode::InvalidMode);
    // Not a string at all: a schema violation.
    assert_eq!(
        code(json!({"action": "execute", "invocation": {"mode": 3, "intent": "open_only"}})),
        ErrorCode::InvalidPayload
    );
}

#[test]
fn raw_input_rules() {
    // Raw input needs an existing terminal.
    let mut v = exec("interactive", "execute_command");
    v["execution"] = json!({"input": "ls\n"});
    assert_eq!(code(v), ErrorCode::InvalidPayload);
    // Not both a command and raw input.
    let mut v = exec("interactive", "execute_command");
    v["execution"] = json!({"input": "x", "command": "ls"});
    v["target"] = json!({"terminal_id": "term_1"});
    assert_eq!(code(v), ErrorCode::InvalidPayload);
    // Unknown key names.
    let mut v = exec("interactive", "execute_command");
    v["execution"] = json!({"keys": ["hyper"]});
    v["target"] = json!({"terminal_id": "term_1"});
    assert_eq!(code(v), ErrorCode::InvalidPayload);
    // Invalid regex.
    let mut v = exec("interactive", "execute_command");
    v["execution"] = json!({"input": "x", "wait_for": "("});
    v["target"] = json!({"terminal_id": "term_1"});
    assert_eq!(code(v), ErrorCode::InvalidPayload);
}

#[test]
fn a_command_line_typed_at_a_prompt_holds_no_control_key() {
    // Ctrl-U, DEL or an escape would edit the line before the shell ran it.
    for bad in [
        "echo x\u{15}rm v",
        "rmx\u{7f} v",
        "echo \u{1b}[201~",
        "a\u{3}b",
    ] {
        let mut v = exec("interactive", "execute_command");
        v["execution"] = json!({"command": bad});
        v["target"] = json!({"terminal_id": "term_1"});
        assert_eq!(code(v), ErrorCode::InvalidPayload, "{bad:?}");
        let mut v = exec("interactive", "execute_command");
        v["execution"] = json!({"command": "echo", "args": ["ok", bad]});
        assert_eq!(code(v), ErrorCode::InvalidPayload, "args {bad:?}");
    }
    // Tabs and line ends are text; headless, a command goes to `sh -c` as it is.
    let mut v = exec("interactive", "execute_command");
    v["execution"] = json!({"command": "printf 'a\tb'\r\necho c"});
    v["target"] = json!({"terminal_id": "term_1"});
    ok(v);
    let mut v = exec("headless", "execute_command");
    v["execution"] = json!({"command": "echo x\u{15}y"});
    ok(v);
}

// --- correlation ---

#[test]
fn request_id_is_generated_when_absent() {
    let r = ok(json!({"action": "list"}));
    assert!(r.correlation.request_id.starts_with("req_"));
    assert!(r.correlation.trace_id.starts_with("trace_"));
    let r2 = ok(json!({"action": "list"}));
    assert_ne!(r.correlation.request_id, r2.correlation.request_id);
}

#[test]
fn trace_id_is_propagated_unchanged() {
    let r = ok(
        json!({"action": "list", "correlation": {"request_id": "req_mine", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "client_request_id": "c-1"}}),
    );
    assert_eq!(r.correlation.request_id, "req_mine");
    assert_eq!(r.correlation.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(r.correlation.client_request_id.as_deref(), Some("c-1"));
}

#[test]
fn rejections_carry_the_callers_trace() {
    let e = parse(
        &json!({"action": "nope", "correlation": {"trace_id": "trace_keep"}}),
        Phase::A,
    )
    .expect_err("rejected");
    assert_eq!(e.envelope.correlation.trace_id, "trace_keep");
    assert_eq!(e.error.code, ErrorCode::InvalidAction);
}

#[test]
fn malformed_correlation_is_a_payload_error() {
    assert_eq!(
        code(json!({"action": "list", "correlation": {"trace_id": "has space"}})),
        ErrorCode::InvalidPayload
    );
    assert_eq!(
        code(json!({"action": "list", "correlation": {"request_id": 7}})),
        ErrorCode::InvalidPayload
    );
}

// --- aliases ---

#[test]
fn alias_run() {
    let r = ok(
        json!({"action": "run", "command": "echo", "args": ["hi"], "cwd": "/tmp", "timeout": 5000, "env": {"A": "1"}, "workspace_id": "w"}),
    );
    assert_eq!(r.action, Action::Execute);
    assert_eq!(r.mode, Some(Mode::Headless));
    assert_eq!(r.intent, Some(Intent::ExecuteCommand));
    assert!(r.resolution.alias_applied);
    assert_eq!(r.resolution.legacy_action.as_deref(), Some("run"));
    assert_eq!(r.execution.command.as_deref(), Some("echo"));
    assert_eq!(r.execution.args.as_deref(), Some(&["hi".to_string()][..]));
    assert_eq!(r.runtime.cwd.as_deref(), Some("/tmp"));
    assert_eq!(r.runtime.timeout_ms, Some(5000));
    assert_eq!(r.runtime.workspace_id.as_deref(), Some("w"));
}

#[test]
fn alias_kill() {
    let r = ok(json!({"action": "kill", "session_id": "ses_1"}));
    assert_eq!(r.action, Action::Terminate);
    assert_eq!(r.target.session_id.as_deref(), Some("ses_1"));
    assert_eq!(r.resolution.legacy_action.as_deref(), Some("kill"));
    // Terminal identities are accepted too (docs/contract.md, "The pipeline").
    ok(json!({"action": "kill", "terminal_id": "term_1"}));
    assert_eq!(code(json!({"action": "kill"})), ErrorCode::InvalidPayload);
}

#[test]
fn alias_send() {
    let r = ok(json!({"action": "send", "terminal_id": "term_1", "command": "ls"}));
    assert_eq!(r.action, Action::Execute);
    assert_eq!(r.mode, Some(Mode::Interactive));
    assert_eq!(r.target.terminal_id.as_deref(), Some("term_1"));
    assert_eq!(
        code(json!({"action": "send", "command": "ls"})),
        ErrorCode::InvalidPayload
    );
}

#[test]
fn alias_close() {
    let r = ok(json!({"action": "close", "terminal_id": "term_1"}));
    assert_eq!(r.action, Action::Terminate);
    assert_eq!(r.mode, Some(Mode::Interactive));
    assert_eq!(
        code(json!({"action": "close", "session_id": "ses_1"})),
        ErrorCode::InvalidPayload
    );
}

#[test]
fn alias_create() {
    let r = ok(json!({"action": "create", "name": "dev", "cwd": "/tmp"}));
    assert_eq!(r.action, Action::Execute);
    assert_eq!(r.intent, Some(Intent::OpenOnly));
    assert_eq!(r.mode, Some(Mode::Interactive));
    assert_eq!(r.execution.name.as_deref(), Some("dev"));
    let r = ok(json!({"action": "create", "command": "top"}));
    assert_eq!(r.intent, Some(Intent::ExecuteCommand));
    // A conflicting explicit intent is rejected rather than silently changed.
    assert_eq!(
        code(json!({"action": "create", "invocation": {"intent": "execute_command"}})),
        ErrorCode::InvalidPayload
    );
}

#[test]
fn canonical_actions_are_not_aliases() {
    let r = ok(json!({"action": "list"}));
    assert!(!r.resolution.alias_applied);
    assert_eq!(r.resolution.legacy_action, None);
}

#[test]
fn unknown_action_fails_fast_with_a_hint() {
    let e = parse(&json!({"action": "delete"}), Phase::A).expect_err("rejected");
    assert_eq!(e.error.code, ErrorCode::InvalidAction);
    assert!(e.error.details.contains_key("migration"));
    assert_eq!(code(json!({})), ErrorCode::InvalidPayload);
    assert_eq!(code(json!({"action": 1})), ErrorCode::InvalidPayload);
    assert_eq!(code(json!([])), ErrorCode::InvalidPayload);
}

#[test]
fn legacy_action_must_map_to_this_action() {
    let mut v = exec("headless", "execute_command");
    v["execution"] = json!({"command": "ls"});
    v["compat"] = json!({"legacy_action": "run"});
    ok(v.clone());
    v["compat"] = json!({"legacy_action": "kill"});
    assert_eq!(code(v.clone()), ErrorCode::InvalidPayload);
    v["compat"] = json!({"legacy_action": "frobnicate"});
    assert_eq!(code(v), ErrorCode::InvalidAction);
}

#[test]
fn flat_and_nested_must_agree() {
    assert_eq!(
        code(json!({"action": "run", "command": "a", "execution": {"command": "b"}})),
        ErrorCode::InvalidPayload
    );
    ok(json!({"action": "run", "command": "a", "execution": {"command": "a"}}));
}

#[test]
fn deprecation_phases() {
    let v = json!({"action": "kill", "session_id": "ses_1"});
    assert!(
        parse(&v, Phase::A)
            .map(|r| r.resolution.deprecation.is_none())
            .unwrap_or(false)
    );
    let b = parse(&v, Phase::B)
        .ok()
        .and_then(|r| r.resolution.deprecation);
    assert_eq!(
        b.as_deref(),
        Some("action \"kill\" is deprecated: use action \"terminate\" with target.session_id")
    );
    let e = parse(&v, Phase::C).expect_err("phase C rejects");
    assert_eq!(e.error.code, ErrorCode::InvalidAction);
    assert!(e.error.message.contains("terminate"));
    // A known alias is not an unknown action: the fallback names the canonical one.
    let p = crate::contract::response::failure(&e.envelope, &e.error);
    assert_eq!(p["fallback"]["next_action"], "terminate", "{p}");
    assert_eq!(p["fallback"]["strategy"], "reject_no_retry");
    let words = p["fallback"]["user_message"].as_str().unwrap_or_default();
    assert!(
        !words.contains("Unknown action") && words.contains("\"terminate\""),
        "{words}"
    );
    // An unknown action keeps the generic words.
    let e = parse(&json!({"action": "delete"}), Phase::C).expect_err("unknown");
    let p = crate::contract::response::failure(&e.envelope, &e.error);
    assert_eq!(p["fallback"]["next_action"], Value::Null);
    assert!(
        p["fallback"]["user_message"]
            .as_str()
            .unwrap_or_default()
            .contains("Unknown action")
    );
    // Canonical requests are untouched in every phase.
    assert!(parse(&json!({"action": "list"}), Phase::C).is_ok());
}

// --- runtime fields ---

#[test]
fn adapter_override_must_be_known() {
    let v = json!({"action": "list", "runtime": {"adapter_override": "gui"}});
    assert_eq!(code(v), ErrorCode::InvalidPayload);
    ok(json!({"action": "list", "runtime": {"adapter_override": "container_bridge"}}));
}

#[test]
fn programs_to_launch_are_never_a_request_s_choice() {
    for v in [
        json!({"action": "list", "runtime": {"binary_path": "/usr/bin/interactive-terminal"}}),
        json!({"action": "list", "runtime": {"binary_path": "bin/interactive-terminal"}}),
        json!({"action": "list", "binary_path": "/tmp/x"}),
    ] {
        let e = parse(&v, Phase::A).expect_err("refused");
        assert_eq!(e.error.code, ErrorCode::InvalidPayload);
        assert_eq!(e.error.details["field"], "runtime.binary_path");
    }
    let mut v = exec("interactive", "open_only");
    v["execution"] = json!({"shell": "/tmp/evil.sh"});
    assert_eq!(code(v), ErrorCode::InvalidPayload);
    let mut v = exec("interactive", "open_only");
    v["execution"] = json!({"shell": "fish"});
    ok(v);
}

#[test]
fn unknown_fields_and_wrong_types_are_rejected() {
    assert_eq!(
        code(json!({"action": "list", "bogus": 1})),
        ErrorCode::InvalidPayload
    );
    let mut v = exec("headless", "execute_command");
    v["execution"] = json!({"command": "ls", "args": "not-an-array"});
    assert_eq!(code(v), ErrorCode::InvalidPayload);
    let mut v = exec("headless", "execute_command");
    v["execution"] = json!({"command": "ls"});
    v["runtime"] = json!({"timeout_ms": -1});
    assert_eq!(code(v), ErrorCode::InvalidPayload);
    let mut v = exec("headless", "execute_command");
    v["execution"] = json!({"command": "ls", "env": {"A=B": "x"}});
    assert_eq!(code(v), ErrorCode::InvalidPayload);
}

#[test]
fn interactive_argv_becomes_a_quoted_command_line() {
    let mut v = exec("interactive", "execute_command");
    v["execution"] = json!({"command": "echo", "args": ["a b", "$HOME"]});
    assert_eq!(
        ok(v).execution.command.as_deref(),
        Some("echo 'a b' '$HOME'")
    );
}
