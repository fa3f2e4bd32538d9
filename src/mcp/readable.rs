//! The short readable text block that accompanies every structured result: status, exit
//! code, the output, and what to do next. Built from the canonical payload alone.

use serde_json::Value;

fn s<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    s(v, path).and_then(Value::as_str)
}

/// Render a payload (success or failure) as text for the model.
pub fn render(payload: &Value) -> String {
    if payload.get("success") != Some(&Value::Bool(true)) {
        return render_failure(payload);
    }
    let mut out = String::new();
    let action = str_at(payload, &["action"]).unwrap_or("");
    let status = str_at(payload, &["status"]).unwrap_or("");
    let r = payload.get("result").unwrap_or(&Value::Null);
    let id = str_at(payload, &["identity", "session_id"])
        .or_else(|| str_at(payload, &["identity", "terminal_id"]))
        .or_else(|| str_at(payload, &["identity", "approval_id"]));
    if action == "list" {
        return render_list(r);
    }
    let mut head = format!("[{status}]");
    if let Some(code) = r.get("exit_code").and_then(Value::as_i64) {
        head.push_str(&format!(" exit {code}"));
    }
    if let Some(sig) = str_at(r, &["signal"]) {
        head.push_str(&format!(" signal {sig}"));
    }
    if let Some(ms) = r.get("duration_ms").and_then(Value::as_u64) {
        head.push_str(&format!(" after {ms} ms"));
    }
    if let Some(id) = id {
        head.push_str(&format!(" · {id}"));
    }
    let full_screen =
        s(r, &["screen"]).is_some_and(|sc| sc.get("alternate_screen") == Some(&Value::Bool(true)));
    if r.get("waiting_for_approval") == Some(&Value::Bool(true)) {
        head.push_str(" · waiting for a person's decision");
    } else if r.get("waiting_for_input") == Some(&Value::Bool(true)) && full_screen {
        head.push_str(" · a full-screen program waits for keys: send them with execution.keys or execution.input");
    } else if r.get("waiting_for_input") == Some(&Value::Bool(true)) {
        let prompt = str_at(r, &["prompt"]).unwrap_or("");
        head.push_str(&format!(
            " · waiting for input at {prompt:?}: answer with execution.input (end a line with \\n) or execution.keys"
        ));
    } else if r.get("running") == Some(&Value::Bool(true)) {
        head.push_str(" · still running: call read_output (runtime.wait_ms to wait) or terminate");
    }
    out.push_str(&head);
    out.push('\n');
    if let Some(w) = str_at(r, &["warning"]) {
        out.push_str(&format!("warning: {w}\n"));
    }
    if let Some(d) = str_at(payload, &["resolved", "deprecation"]) {
        out.push_str(&format!("deprecated: {d}\n"));
    }
    if let Some(c) = s(r, &["command"])
        && let Some(line) = str_at(c, &["command_line"])
    {
        out.push_str(&format!("command: {line}\n"));
    }
    if let Some(a) = s(r, &["approval"]) {
        let by = str_at(a, &["decided_by"]).unwrap_or("?");
        let decision = str_at(a, &["decision"]).unwrap_or("approved");
        out.push_str(&format!("approval: {decision} by {by}"));
        if let Some(note) = str_at(a, &["note"]) {
            out.push_str(&format!(" ({note})"));
        }
        out.push('\n');
    }
    // The output as the structured form has it (within the answer's budget, or the page the
    // request asked for): the text stands alone, and says where to go on in `next`.
    for (label, key) in [
        ("stdout", "stdout"),
        ("stderr", "stderr"),
        ("output", "output"),
    ] {
        if let Some(text) = str_at(r, &[key])
            && !text.is_empty()
        {
            out.push_str(&format!("--- {label} ---\n{text}"));
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    if let Some(screen) = s(r, &["screen"]) {
        let at = |k: &str| screen.get(k).and_then(Value::as_u64).unwrap_or(0);
        out.push_str(&format!(
            "--- screen ({}×{}, cursor at row {} column {}, from 1) ---\n",
            at("cols"),
            at("rows"),
            at("cursor_row") + 1,
            at("cursor_col") + 1
        ));
        out.push_str(str_at(screen, &["text"]).unwrap_or(""));
        out.push('\n');
    }
    if let Some(cmds) = r.get("commands").and_then(Value::as_array) {
        for c in cmds {
            out.push_str(&format!(
                "{} {} (exit {})\n",
                str_at(c, &["command_id"]).unwrap_or("?"),
                str_at(c, &["command_line"]).unwrap_or(""),
                c.get("exit_code")
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "?".into())
            ));
        }
    }
    if let Some(n) = str_at(r, &["note"]) {
        out.push_str(&format!("note: {n}\n"));
    }
    if let Some(next) = payload.get("next") {
        out.push_str(&format!(
            "next: {} → {}\n",
            str_at(next, &["why"]).unwrap_or(""),
            next.get("request")
                .map(Value::to_string)
                .unwrap_or_default()
        ));
    }
    out
}

fn render_list(r: &Value) -> String {
    let items = r.get("items").and_then(Value::as_array);
    let Some(items) = items.filter(|i| !i.is_empty()) else {
        return "no sessions or terminals\n".into();
    };
    let mut out = String::new();
    for i in items {
        let state = str_at(i, &["state"]).unwrap_or("?");
        let code = i
            .get("exit_code")
            .and_then(Value::as_i64)
            .map(|c| format!(" (exit {c})"))
            .unwrap_or_default();
        let what = str_at(i, &["command"])
            .or_else(|| str_at(i, &["title"]))
            .unwrap_or("");
        let age = i.get("age_ms").and_then(Value::as_u64).unwrap_or(0) / 1000;
        out.push_str(&format!(
            "{} {}{} {}s {}\n",
            str_at(i, &["id"]).unwrap_or("?"),
            state,
            code,
            age,
            what
        ));
        for job in i
            .get("background_jobs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.push_str(&format!(
                "  background: pid {} {}\n",
                job.get("pid").and_then(Value::as_i64).unwrap_or(0),
                str_at(job, &["command"]).unwrap_or("")
            ));
        }
        if let Some(ms) = i.get("closes_when_idle_ms").and_then(Value::as_u64) {
            out.push_str(&format!(
                "  opened for one command: closed after {} s without use\n",
                ms / 1000
            ));
        }
    }
    if let Some(next) = str_at(r, &["next_cursor"]) {
        let total = r.get("total").and_then(Value::as_u64).unwrap_or(0);
        out.push_str(&format!(
            "{} of {total} shown; the next page: listing.cursor = {next:?}\n",
            items.len()
        ));
    }
    out
}

fn render_failure(payload: &Value) -> String {
    let code = str_at(payload, &["error", "code"]).unwrap_or("PM_TERM_INTERNAL");
    let msg = str_at(payload, &["error", "message"]).unwrap_or("");
    let strategy = str_at(payload, &["fallback", "strategy"]).unwrap_or("");
    let hint = str_at(payload, &["fallback", "user_message"]).unwrap_or("");
    let mut out = format!("{code}: {msg}\nfallback {strategy}: {hint}\n");
    let details = s(payload, &["error", "details"]);
    for key in ["stdout", "stderr"] {
        if let Some(text) = details.and_then(|d| d.get(key)).and_then(Value::as_str)
            && !text.is_empty()
        {
            out.push_str(&format!("--- {key} so far ---\n{text}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_success_and_failure() {
        let ok = json!({"success": true, "action": "execute", "status": "completed",
            "identity": {"session_id": "ses_1"},
            "result": {"exit_code": 0, "running": false, "stdout": "hi\n", "stderr": "", "duration_ms": 3}});
        let t = render(&ok);
        assert!(t.starts_with("[completed] exit 0 after 3 ms · ses_1"));
        assert!(t.contains("--- stdout ---\nhi\n"));
        let err = json!({"success": false, "error": {"code": "PM_TERM_NOT_FOUND", "message": "no session"},
            "fallback": {"strategy": "refresh_list_then_retry", "user_message": "list"}});
        assert!(render(&err).starts_with("PM_TERM_NOT_FOUND: no session"));
    }
}
