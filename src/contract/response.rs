//! Building the canonical response (§2.2) and the deterministic error payload (§3.2).

use serde_json::{Map, Value, json};

use super::error::{ErrorCode, Fallback, TermError};
use super::request::{Action, Correlation, Request, Resolution};

/// The parts of a response that come from the request, known even when parsing failed
/// halfway (correlation is always known: ids are generated first).
#[derive(Debug, Clone, Default)]
pub struct Ctx {
    pub action: Option<Action>,
    pub correlation: Correlation,
    pub resolution: Resolution,
    pub session_id: Option<String>,
    pub terminal_id: Option<String>,
    pub adapter: Option<&'static str>,
}

impl Ctx {
    pub fn from_request(req: &Request) -> Ctx {
        Ctx {
            action: Some(req.action),
            correlation: req.correlation.clone(),
            resolution: req.resolution.clone(),
            session_id: req.target.session_id.clone(),
            terminal_id: req.target.terminal_id.clone(),
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

    fn identity_json(&self) -> Value {
        let mut m = Map::new();
        if let Some(s) = &self.session_id {
            m.insert("session_id".into(), json!(s));
        }
        if let Some(t) = &self.terminal_id {
            m.insert("terminal_id".into(), json!(t));
        }
        Value::Object(m)
    }
}

/// A successful answer. `running` decides the status: still running is `accepted`.
pub fn success(ctx: &Ctx, result: Map<String, Value>) -> Value {
    let running = result
        .get("running")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    json!({
        "success": true,
        "action": ctx.action.map(Action::as_str),
        "status": if running { "accepted" } else { "completed" },
        "correlation": ctx.correlation_json(),
        "resolved": ctx.resolved_json(),
        "identity": ctx.identity_json(),
        "result": Value::Object(result),
        "error": Value::Null,
    })
}

/// A §3.2 failure payload; the fallback section is always present.
pub fn failure(ctx: &Ctx, err: &TermError) -> Value {
    let mut details = err.details.clone();
    if err.code == ErrorCode::Internal {
        // Sanitized: the caller gets the trace id to quote, never a cause or stack.
        details.retain(|k, _| k == "timeout_ms" || k == "target");
        details.insert("trace_id".into(), json!(ctx.correlation.trace_id));
    }
    let fallback = Fallback::for_error(err.code, ctx.action, ctx.resolution.mode);
    let mut payload = json!({
        "success": false,
        "action": ctx.action.map(Action::as_str),
        "status": "failed",
        "correlation": ctx.correlation_json(),
        "resolved": ctx.resolved_json(),
        "error": {
            "code": err.code.as_str(),
            "category": err.code.category(),
            "message": err.message,
            "retriable": err.code.retriable(),
            "details": Value::Object(details),
        },
        "fallback": fallback.to_json(),
    });
    if ctx.session_id.is_some() || ctx.terminal_id.is_some() {
        payload["identity"] = ctx.identity_json();
    }
    payload
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::schema;

    fn ctx() -> Ctx {
        Ctx {
            action: Some(Action::Execute),
            correlation: Correlation {
                request_id: "req_1".into(),
                trace_id: "trace_1".into(),
                client_request_id: None,
            },
            ..Ctx::default()
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

    #[test]
    fn running_means_accepted() {
        let mut r = Map::new();
        r.insert("running".into(), json!(true));
        assert_eq!(success(&ctx(), r)["status"], "accepted");
        let mut r = Map::new();
        r.insert("running".into(), json!(false));
        assert_eq!(success(&ctx(), r)["status"], "completed");
    }
}
