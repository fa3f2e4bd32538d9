//! The one next step an answer suggests, as a ready request, in both of its forms.
//!
//! Why: clients pass the model either the structured content or the text, not both, so a
//! hint that lived in the text alone ("continue from cursor …") was lost to half of them;
//! and an answer that gave two continuations for one stream sent a model that followed the
//! last one past 917,504 bytes. So an answer carries at most one next step, computed from
//! the canonical payload, placed in the structured content (`next`) and rendered in the
//! text, in this order: answer a program that waits for input; read what an excerpt left
//! out; read the rest of a page; come back to what still runs.

use serde_json::{Value, json};

fn target(payload: &Value) -> Option<Value> {
    let id = payload.get("identity")?;
    if let Some(s) = id.get("session_id").and_then(Value::as_str) {
        return Some(json!({"session_id": s}));
    }
    if let Some(t) = id.get("terminal_id").and_then(Value::as_str) {
        return Some(json!({"terminal_id": t}));
    }
    id.get("approval_id")
        .and_then(Value::as_str)
        .map(|a| json!({"approval_id": a}))
}

/// The next step of a successful answer: why, and the request to send; `None` when there
/// is nothing left to do with it.
/// `page`: the most bytes a continuation asks for (the answer budget's share for output, so
/// that following the steps keeps every answer within the budget).
pub fn step(payload: &Value, page: u64) -> Option<Value> {
    if payload.get("success") != Some(&Value::Bool(true)) {
        return None;
    }
    let r = payload.get("result")?;
    let target = target(payload)?;
    if r.get("waiting_for_approval") == Some(&Value::Bool(true)) {
        return Some(json!({
            "why": "the command waits for a person's decision: read_output waits for it and then gives the command's answer (terminate withdraws it)",
            "request": {"action": "read_output", "target": target, "runtime": {"wait_ms": 30000}}
        }));
    }
    let full_screen = r
        .get("screen")
        .is_some_and(|s| s.get("alternate_screen") == Some(&Value::Bool(true)));
    if r.get("waiting_for_input") == Some(&Value::Bool(true)) && full_screen {
        return Some(json!({
            "why": "the full-screen program waits for keys: send them (named keys in execution.keys, text in execution.input)",
            "request": {"action": "execute",
                "invocation": {"mode": "interactive", "intent": "execute_command"},
                "target": target, "execution": {"input": "…"}}
        }));
    }
    if r.get("waiting_for_input") == Some(&Value::Bool(true)) {
        let prompt = r.get("prompt").and_then(Value::as_str).unwrap_or("");
        return Some(json!({
            "why": format!("the program waits for input at {prompt:?}: send the answer (a line ends with \\n)"),
            "request": {"action": "execute",
                "invocation": {"mode": "interactive", "intent": "execute_command"},
                "target": target, "execution": {"input": "…\n"}}
        }));
    }
    let streams = r.get("streams").and_then(Value::as_object);
    for (name, info) in streams.into_iter().flatten() {
        if let Some(gap) = info.get("left_out") {
            let (from, to) = (
                gap.get("from").and_then(Value::as_u64)?,
                gap.get("to").and_then(Value::as_u64)?,
            );
            let key = cursor_key(name);
            return Some(json!({
                "why": format!("{} bytes of {name} between the head and the tail shown were left out: read them if you need them", to - from),
                "request": {"action": "read_output", "target": target,
                    "output": {key: from, "max_bytes": (to - from).min(page)}}
            }));
        }
    }
    for (name, info) in streams.into_iter().flatten() {
        let after = info
            .get("bytes_omitted")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let end = info.get("end").and_then(Value::as_u64);
        if info.get("truncated") == Some(&Value::Bool(true))
            && after > 0
            && let Some(end) = end
        {
            return Some(json!({
                "why": format!("{after} more bytes of {name} after this page"),
                "request": {"action": "read_output", "target": target,
                    "output": {cursor_key(name): end, "max_bytes": after.min(page)}}
            }));
        }
    }
    if r.get("running") == Some(&Value::Bool(true)) && payload.get("action") != Some(&json!("list"))
    {
        return Some(json!({
            "why": "it still runs: read what comes next (waits up to wait_ms for more), or terminate it",
            "request": {"action": "read_output", "target": target, "runtime": {"wait_ms": 10000}}
        }));
    }
    None
}

fn cursor_key(stream: &str) -> &'static str {
    match stream {
        "stdout" => "stdout_cursor",
        "stderr" => "stderr_cursor",
        _ => "cursor",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_step_in_order() {
        let base = |result: Value| json!({"success": true, "action": "execute", "identity": {"session_id": "ses_1"}, "result": result});
        let left = base(
            json!({"running": false, "streams": {"stdout": {"start": 0, "end": 900, "total": 900,
            "truncated": false, "bytes_omitted": 0, "left_out": {"from": 100, "to": 800}}}}),
        );
        let s = step(&left, 65_536).expect("a step");
        assert_eq!(s["request"]["output"]["stdout_cursor"], 100);
        assert_eq!(s["request"]["output"]["max_bytes"], 700);
        let page = base(
            json!({"running": true, "streams": {"stdout": {"start": 0, "end": 65536, "total": 900000,
            "truncated": true, "bytes_omitted": 834464}}}),
        );
        assert_eq!(
            step(&page, 65_536).expect("a step")["request"]["output"]["stdout_cursor"],
            65536
        );
        let running = base(json!({"running": true}));
        assert_eq!(
            step(&running, 65_536).expect("a step")["request"]["action"],
            "read_output"
        );
        assert!(step(&base(json!({"running": false})), 65_536).is_none());
        let mut waiting =
            base(json!({"running": true, "waiting_for_input": true, "prompt": ">>> "}));
        waiting["identity"] = json!({"terminal_id": "term_1"});
        assert_eq!(
            step(&waiting, 65_536).expect("a step")["request"]["target"]["terminal_id"],
            "term_1"
        );
    }
}
