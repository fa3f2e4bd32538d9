//! Building the canonical response and the deterministic error payload (docs/contract.md,
//! "Answers").

use serde_json::{Map, Value, json};

use super::error::{ErrorCode, Fallback, TermError};
use super::request::{Action, Correlation, Request, Resolution};
use super::result::Outcome;

/// Which session and terminal an answer is about.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Identity {
    pub session_id: Option<String>,
    pub terminal_id: Option<String>,
    /// A command held for a person's decision (`service::held`).
    pub approval_id: Option<String>,
}

impl Identity {
    pub fn session(id: &str) -> Identity {
        Identity {
            session_id: Some(id.to_string()),
            ..Identity::default()
        }
    }

    pub fn terminal(id: &str) -> Identity {
        Identity {
            terminal_id: Some(id.to_string()),
            ..Identity::default()
        }
    }

    pub fn approval(id: &str) -> Identity {
        Identity {
            approval_id: Some(id.to_string()),
            ..Identity::default()
        }
    }

    /// What `other` learned wins; what it does not know is kept.
    pub fn update(&mut self, other: Identity) {
        if other.session_id.is_some() {
            self.session_id = other.session_id;
        }
        if other.terminal_id.is_some() {
            self.terminal_id = other.terminal_id;
        }
        if other.approval_id.is_some() {
            self.approval_id = other.approval_id;
        }
    }

    fn is_empty(&self) -> bool {
        self.session_id.is_none() && self.terminal_id.is_none() && self.approval_id.is_none()
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        if let Some(s) = &self.session_id {
            m.insert("session_id".into(), json!(s));
        }
        if let Some(t) = &self.terminal_id {
            m.insert("terminal_id".into(), json!(t));
        }
        if let Some(a) = &self.approval_id {
            m.insert("approval_id".into(), json!(a));
        }
        Value::Object(m)
    }
}

/// Everything around a `result` or an `error`: the action, the correlation, how the request
/// was resolved, what it is about and which adapter served it. Known even when parsing failed
/// halfway (correlation is always known: ids are generated first).
#[derive(Debug, Clone, Default)]
pub struct Envelope {
    pub action: Option<Action>,
    pub correlation: Correlation,
    pub resolution: Resolution,
    pub identity: Identity,
    pub adapter: Option<&'static str>,
}

impl Envelope {
    pub fn from_request(req: &Request) -> Envelope {
        Envelope {
            action: Some(req.action),
            correlation: req.correlation.clone(),
            resolution: req.resolution.clone(),
            identity: Identity {
                session_id: req.target.session_id.clone(),
                terminal_id: req.target.terminal_id.clone(),
                approval_id: req.target.approval_id.clone(),
            },
            adapter: None,
        }
    }

    fn correlation_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("request_id".into(), json!(self.correlation.request_id));
        m.insert("trace_id".into(), json!(self.correlation.trace_id));
        if let Some(c) = &self.correlation.client_request_id {
            m.insert("client_request_id".into(), json!(c));
        }
        Value::Object(m)
    }

    fn resolved_json(&self) -> Value {
        let r = &self.resolution;
        let mut m = Map::new();
        m.insert(
            "canonical_action".into(),
            json!(r.canonical_action.map(Action::as_str)),
        );
        m.insert("alias_applied".into(), json!(r.alias_applied));
        m.insert("legacy_action".into(), json!(r.legacy_action));
        m.insert("mode".into(), json!(r.mode.map(|m| m.as_str())));
        if let Some(a) = self.adapter {
            m.insert("adapter".into(), json!(a));
        }
        if let Some(d) = &r.deprecation {
            m.insert("deprecation".into(), json!(d));
        }
        Value::Object(m)
    }
}

/// A successful answer. Still running is `accepted`.
pub fn success(env: &Envelope, result: Outcome) -> Value {
    json!({
        "success": true,
        "action": env.action.map(Action::as_str),
        "status": if result.running() { "accepted" } else { "completed" },
        "correlation": env.correlation_json(),
        "resolved": env.resolved_json(),
        "identity": env.identity.to_json(),
        "result": Value::Object(result.into_map()),
        "error": Value::Null,
    })
}

/// A failure payload; the fallback section is always present.
pub fn failure(env: &Envelope, err: &TermError) -> Value {
    let mut details = err.details.clone();
    if err.code == ErrorCode::Internal {
        // Sanitized: the caller gets the trace id to quote, never a cause or stack.
        details.retain(|k, _| k == "timeout_ms" || k == "target");
        details.insert("trace_id".into(), json!(env.correlation.trace_id));
    }
    let fallback = Fallback::for_term_error(err, env.action, env.resolution.mode);
    let mut payload = json!({
        "success": false,
        "action": env.action.map(Action::as_str),
        "status": "failed",
        "correlation": env.correlation_json(),
        "resolved": env.resolved_json(),
        "error": {
            "code": err.code.as_str(),
            "category": err.code.category(),
            "message": err.message,
            "retriable": err.code.retriable(),
            "details": Value::Object(details),
        },
        "fallback": fallback.to_json(),
    });
    if !env.identity.is_empty() {
        payload["identity"] = env.identity.to_json();
    }
    payload
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::result::*;
    use crate::contract::schema;
    use crate::text::views::{CommandRecord, Encoding, ScreenView, View};

    fn ctx() -> Envelope {
        Envelope {
            action: Some(Action::Execute),
            correlation: Correlation {
                request_id: "req_1".into(),
                trace_id: "trace_1".into(),
                client_request_id: None,
            },
            ..Envelope::default()
        }
    }

    #[test]
    fn internal_errors_are_sanitized_and_carry_the_trace() {
        let err = TermError::new(ErrorCode::Internal, "internal error")
            .with("cause", json!("/home/x/src/lib.rs:10 panicked"));
        let p = failure(&ctx(), &err);
        assert_eq!(p["error"]["details"]["trace_id"], "trace_1");
        assert!(p["error"]["details"].get("cause").is_none());
        assert_eq!(p["fallback"]["strategy"], "deterministic_internal_fallback");
        assert!(
            schema::is_valid_payload(&p),
            "{:?}",
            schema::payload_violations(&p)
        );
    }

    #[test]
    fn every_failure_has_a_fallback_and_matches_the_schema() {
        for code in ErrorCode::ALL {
            let p = failure(&ctx(), &TermError::new(code, "x"));
            assert_eq!(p["success"], false);
            assert_eq!(p["fallback"]["strategy"], code.strategy().as_str());
            assert!(
                schema::is_valid_payload(&p),
                "{:?}",
                schema::payload_violations(&p)
            );
        }
    }

    fn stream(end: u64) -> StreamInfo {
        StreamInfo {
            start: 0,
            end,
            total: end + 3,
            truncated: true,
            bytes_omitted: 3,
            lossy: true,
            left_out: Some(crate::contract::result::LeftOut { from: 2, to: 3 }),
            dropped: None,
        }
    }

    fn command() -> CommandRecord {
        CommandRecord {
            command_id: "cmd_1".into(),
            command_line: "make".into(),
            complete: true,
            exit_code: Some(2),
            duration_ms: Some(40),
            started_at_ms: 1_700_000_000_000,
            output_start: 0,
            output_end: Some(12),
        }
    }

    fn verdict() -> Option<Verdict> {
        Some(Verdict {
            authorization: Authorization::AllowedWithWarning,
            warning: Some("removes files".into()),
            approval: Some(Approval {
                approver: Some("alice".into()),
                note: Some("by the page".into()),
                ..Approval::approved(DecidedBy::Page)
            }),
        })
    }

    fn session() -> Outcome {
        Outcome::Session(Box::new(SessionOutput {
            stdout: "hi\n".into(),
            stderr: String::new(),
            encoding: Some(Encoding::Base64),
            exit_code: Some(0),
            signal: None,
            running: false,
            duration_ms: 3,
            cursor: Cursors {
                stdout: Some(3),
                stderr: Some(0),
                output: None,
            },
            streams: Streams {
                stdout: Some(stream(3)),
                stderr: Some(stream(0)),
                output: None,
            },
            truncated: true,
            verdict: verdict(),
            sandbox_denial: Some(crate::contract::result::SandboxDenial {
                kind: "write",
                target: Some("/etc/motd".into()),
                message: "refused".into(),
            }),
            note: None,
        }))
    }

    fn terminal() -> Outcome {
        Outcome::Terminal(Box::new(TerminalOutput {
            running: true,
            waiting_for_input: true,
            prompt: Some(">>> ".into()),
            exit_code: None,
            signal: Some(Some("SIGTERM".into())),
            supports_command_detection: Some(true),
            shell_integration: Some("full".into()),
            output: Some("make: ok".into()),
            encoding: Some(Encoding::Utf8),
            view: Some(View::Screen),
            cursor: Some(Cursors {
                output: Some(12),
                ..Cursors::default()
            }),
            streams: Some(Streams {
                output: Some(stream(12)),
                ..Streams::default()
            }),
            truncated: Some(false),
            command: Some(command()),
            duration_ms: Some(40),
            commands: Some(vec![command()]),
            screen: Some(ScreenView {
                rows: 24,
                cols: 80,
                cursor_row: 1,
                cursor_col: 2,
                alternate_screen: false,
                cursor_hidden: false,
                text: "$ make".into(),
            }),
            terminated: Some(vec![41, 42]),
            note: Some("no shell integration".into()),
            verdict: verdict(),
            sandbox_denial: None,
            reached_line_editor: None,
        }))
    }

    fn every_kind() -> Vec<Outcome> {
        let item = |kind| ListItem {
            id: "x_1".into(),
            mode: "headless",
            command: Some("ls".into()),
            cwd: Some("/tmp".into()),
            state: "exited",
            running: false,
            exit_code: Some(0),
            signal: None,
            age_ms: 5,
            started_at_ms: 1,
            workspace_id: None,
            kind,
        };
        vec![
            Outcome::List(Listing {
                running: false,
                total: 3,
                next_cursor: Some("t.1.t_1".into()),
                sandbox: Some(crate::contract::result::SandboxSummary {
                    mode: "off".into(),
                    network: "on".into(),
                    workspaces: Vec::new(),
                    mechanism: None,
                    available: true,
                    reason: None,
                }),
                items: vec![
                    item(ItemKind::Session {
                        timed_out: false,
                        stdout_bytes: 1,
                        stderr_bytes: 0,
                    }),
                    item(ItemKind::Terminal {
                        title: "bash".into(),
                        adapter: "local",
                        resource: "ahp-terminal:/t_1".into(),
                        claim: json!({"kind": "session"}),
                        supports_command_detection: true,
                        shell_integration: "full".into(),
                        output_bytes: 10,
                        background_jobs: vec![crate::process::jobs::Job {
                            pid: 42,
                            command: "npm run dev".into(),
                        }],
                        closes_when_idle_ms: Some(600_000),
                    }),
                ],
            }),
            session(),
            Outcome::SessionEnded(SessionEnded {
                running: false,
                exit_code: None,
                signal: Some("SIGKILL".into()),
                terminated: vec![7],
                duration_ms: 9,
                cursor: Cursors::default(),
                note: Some("already exited".into()),
            }),
            terminal(),
            Outcome::Pair(Box::new(session()), Box::new(terminal())),
        ]
    }

    #[test]
    fn every_kind_of_result_matches_the_schema() {
        for outcome in every_kind() {
            // Moved in, the output taken out first: the same map as serialising it whole.
            assert_eq!(outcome.clone().into_map(), outcome.to_map(), "{outcome:?}");
            let p = success(&ctx(), outcome.clone());
            assert!(
                schema::is_valid_payload(&p),
                "{outcome:?}: {:?}",
                schema::payload_violations(&p)
            );
        }
    }

    #[test]
    fn a_terminal_without_output_has_no_output_key_when_moved_in() {
        let t = Outcome::Terminal(Box::default());
        assert!(!t.clone().into_map().contains_key("output"));
        assert_eq!(t.clone().into_map(), t.to_map());
    }

    #[test]
    fn the_schema_refuses_a_result_it_does_not_describe() {
        let mut p = success(&ctx(), session());
        p["result"]["stdout_text"] = json!("x");
        assert!(!schema::is_valid_payload(&p));
    }

    #[test]
    fn a_pair_runs_while_either_runs_and_carries_both_cursors() {
        let pair = Outcome::Pair(Box::new(session()), Box::new(terminal()));
        let p = success(&ctx(), pair);
        assert_eq!(p["status"], "accepted");
        assert_eq!(p["result"]["running"], true);
        assert_eq!(p["result"]["cursor"]["stdout"], 3);
        assert_eq!(p["result"]["cursor"]["output"], 12);
        assert_eq!(p["result"]["exit_code"], 0, "the session's exit code");
        assert_eq!(p["result"]["terminated"], json!([41, 42]));
        assert_eq!(p["result"]["truncated"], true);
    }

    #[test]
    fn running_means_accepted() {
        assert_eq!(success(&ctx(), terminal())["status"], "accepted");
        assert_eq!(success(&ctx(), session())["status"], "completed");
    }
}
