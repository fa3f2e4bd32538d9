//! The schemas a client reads in `tools/list`: derived from the validating schemas in
//! `schemas/`, but small enough that a model can afford them on every turn.
//!
//! The validating request schema stays the one authority on what is accepted (legacy flat
//! keys, `compat`, length limits); what a tool advertises is what a caller should send:
//! canonical fields only, enums where the contract has a closed set, the limits a model needs
//! (integer ranges) and none it does not (string lengths, id patterns). `memory_terminal`
//! advertises only its headless subset. The output schema is the envelope every answer shares;
//! the full per-action shapes stay in `schemas/response.schema.json`.

use serde_json::{Map, Value, json};

use super::request::Action;

/// Keywords that only bound sizes; the server enforces them and reports violations by path.
const SIZE_KEYWORDS: [&str; 7] = [
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxProperties",
    "propertyNames",
    "pattern",
];

/// Request groups a caller never needs to send (compatibility metadata of older callers).
const UNADVERTISED_GROUPS: [&str; 1] = ["compat"];

/// What `memory_terminal` does not accept: terminals, their input and their views.
const STRICT_OMITTED: [(&str, &str); 12] = [
    ("execution", "input"),
    ("execution", "keys"),
    ("execution", "wait_for"),
    ("execution", "name"),
    ("execution", "shell"),
    ("execution", "cols"),
    ("execution", "rows"),
    ("target", "terminal_id"),
    ("output", "cursor"),
    ("output", "view"),
    ("runtime", "adapter_override"),
    ("runtime", "unsandboxed"),
];

/// The action field as advertised: the canonical actions only (aliases are accepted, not
/// offered).
const ACTION_DESCRIPTION: &str = "What to do: execute (run a command, open or drive a terminal), read_output (output after a cursor, optionally waiting), terminate (kill a process tree or terminal), list (sessions and terminals).";

/// Correlation as advertised: optional, and rarely what a model needs, so one line.
const CORRELATION_DESCRIPTION: &str = "Optional ids for your logs: request_id, trace_id (returned unchanged), client_request_id (echoed back); generated when absent.";

/// The strict tool's invocation: headless command execution is all it does.
const STRICT_INVOCATION_DESCRIPTION: &str = "Optional here: mode headless, intent execute_command.";

/// The strict tool's one shortcut: a bare command line is a headless execute.
const STRICT_SHORTCUT: &str = "Shortcut: {\"command\":\"git status\"} alone runs it headless (same as action execute with execution.command).";

/// Which tool a schema is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Face {
    /// `memory_terminal_interactive`: the whole canonical request.
    Interactive,
    /// `memory_terminal`: headless work only.
    Strict,
}

/// The input schema `face` advertises, from the validating request schema.
pub fn input_schema(request: &Value, face: Face) -> Result<Map<String, Value>, String> {
    let Value::Object(full) = request else {
        return Err("request schema is not an object".into());
    };
    let defs = full.get("$defs").cloned().unwrap_or(Value::Null);
    let mut props = match full.get("properties") {
        Some(Value::Object(p)) => p.clone(),
        _ => return Err("request schema has no properties".into()),
    };
    props.retain(|name, p| {
        p.get("deprecated") != Some(&Value::Bool(true))
            && !UNADVERTISED_GROUPS.contains(&name.as_str())
    });
    set_enum(
        &mut props,
        &["action"],
        Action::ALL.map(Action::as_str).to_vec(),
    );
    if let Some(Value::Object(action)) = props.get_mut("action") {
        action.insert("description".into(), json!(ACTION_DESCRIPTION));
    }
    props.insert(
        "correlation".into(),
        json!({
            "type": "object",
            "description": CORRELATION_DESCRIPTION,
            "properties": {
                "request_id": {"type": "string"},
                "trace_id": {"type": "string"},
                "client_request_id": {"type": "string"}
            }
        }),
    );
    set_enum(
        &mut props,
        &["invocation", "mode"],
        match face {
            Face::Interactive => vec!["headless", "interactive"],
            Face::Strict => vec!["headless"],
        },
    );
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    if face == Face::Strict {
        for (group, field) in STRICT_OMITTED {
            if let Some(Value::Object(g)) = props.get_mut(group)
                && let Some(Value::Object(gp)) = g.get_mut("properties")
            {
                gp.remove(field);
            }
        }
        props.insert(
            "command".into(),
            json!({"type": "string", "description": STRICT_SHORTCUT}),
        );
        props.insert(
            "invocation".into(),
            json!({
                "type": "object",
                "description": STRICT_INVOCATION_DESCRIPTION,
                "properties": {
                    "mode": {"type": "string", "enum": ["headless"]},
                    "intent": {"type": "string", "enum": ["execute_command"]}
                }
            }),
        );
    } else {
        out.insert("required".into(), json!(["action"]));
    }
    out.insert("properties".into(), Value::Object(props));
    out.insert("additionalProperties".into(), json!(false));
    let mut out = Value::Object(out);
    inline_refs(&mut out, &defs);
    drop_size_keywords(&mut out);
    match out {
        Value::Object(m) => Ok(m),
        _ => Err("advertised schema is not an object".into()),
    }
}

/// The output schema both tools advertise: the envelope of every answer, success or failure.
/// Every payload that passes the validating response or error schema passes this one.
pub fn output_schema() -> Map<String, Value> {
    let schema = json!({
        "type": "object",
        "description": "success true: result (per action) and next {why, request}, the request to send next. success false: error {code PM_TERM_*, message, details} and fallback (what to do).",
        "required": ["success", "action", "status", "correlation", "resolved"],
        "properties": {
            "success": {"type": "boolean"},
            "action": {"type": ["string", "null"]},
            "status": {"type": "string", "enum": ["accepted", "completed", "failed"]},
            "correlation": {"type": "object"},
            "resolved": {"type": "object"},
            "identity": {"type": "object"},
            "result": {"type": "object"},
            "next": {"type": "object"},
            "error": {"type": ["object", "null"]},
            "fallback": {"type": "object"}
        }
    });
    match schema {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Give `path` (property names, nested through `properties`) a closed set of values.
fn set_enum(props: &mut Map<String, Value>, path: &[&str], values: Vec<&str>) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut here = props;
    for p in parents {
        match here
            .get_mut(*p)
            .and_then(|g| g.get_mut("properties"))
            .and_then(Value::as_object_mut)
        {
            Some(next) => here = next,
            None => return,
        }
    }
    if let Some(Value::Object(field)) = here.get_mut(*last) {
        field.insert("enum".into(), json!(values));
    }
}

/// Replace each `{"$ref": "#/$defs/x", …}` by the definition merged with its siblings, so
/// the advertised schema needs no `$defs`.
fn inline_refs(v: &mut Value, defs: &Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.remove("$ref")
                && let Some(Value::Object(def)) =
                    r.strip_prefix("#/$defs/").and_then(|name| defs.get(name))
            {
                for (k, dv) in def {
                    m.entry(k.clone()).or_insert_with(|| dv.clone());
                }
            }
            m.values_mut().for_each(|c| inline_refs(c, defs));
        }
        Value::Array(a) => a.iter_mut().for_each(|c| inline_refs(c, defs)),
        _ => {}
    }
}

fn drop_size_keywords(v: &mut Value) {
    match v {
        Value::Object(m) => {
            // Inside `properties` the keys are field names, not keywords.
            for (k, child) in m.iter_mut() {
                if k == "properties" {
                    if let Value::Object(fields) = child {
                        fields.values_mut().for_each(drop_size_keywords);
                    }
                } else {
                    drop_size_keywords(child);
                }
            }
            for k in SIZE_KEYWORDS {
                m.remove(k);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(drop_size_keywords),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::schema::{REQUEST_SCHEMA, tool_input_schema};

    fn validator(face: Face) -> jsonschema::Validator {
        let s = tool_input_schema(face).expect("advertised schema");
        jsonschema::validator_for(&Value::Object(s)).expect("advertised schema compiles")
    }

    fn full() -> jsonschema::Validator {
        let v: Value = serde_json::from_str(REQUEST_SCHEMA).expect("request schema");
        jsonschema::validator_for(&v).expect("request schema compiles")
    }

    #[test]
    fn canonical_requests_pass_both_the_advertised_and_the_full_schema() {
        let adv = validator(Face::Interactive);
        let full = full();
        for req in [
            json!({"action":"execute","invocation":{"mode":"headless","intent":"execute_command"},"execution":{"command":"cargo test"}}),
            json!({"action":"execute","invocation":{"mode":"interactive","intent":"open_only"}}),
            json!({"action":"execute","invocation":{"mode":"interactive","intent":"execute_command"},"target":{"terminal_id":"term_1"},"execution":{"input":"y\n","keys":["ctrl-c"],"wait_for":">>> $"}}),
            json!({"action":"read_output","target":{"session_id":"ses_1"},"runtime":{"wait_ms":10000},"output":{"stdout_cursor":10}}),
            json!({"action":"list","listing":{"state":"running","limit":5}}),
        ] {
            assert!(adv.is_valid(&req), "advertised rejects {req}");
            assert!(full.is_valid(&req), "full rejects {req}");
        }
    }

    #[test]
    fn legacy_keys_are_accepted_but_not_advertised() {
        let legacy = json!({"action":"execute","command":"ls","cwd":"/tmp"});
        assert!(full().is_valid(&legacy));
        assert!(!validator(Face::Interactive).is_valid(&legacy));
        let adv = tool_input_schema(Face::Interactive).expect("schema");
        let text = Value::Object(adv).to_string();
        assert!(!text.contains("deprecated"), "{text}");
        assert!(
            !text.contains("$ref") && !text.contains("maxLength"),
            "{text}"
        );
        // Closed sets are enums.
        let adv = validator(Face::Interactive);
        assert!(!adv.is_valid(&json!({"action":"run"})));
        assert!(!adv.is_valid(&json!({"action":"execute","invocation":{"mode":"gui"}})));
    }

    #[test]
    fn the_strict_face_advertises_headless_work_only() {
        let strict = validator(Face::Strict);
        assert!(strict.is_valid(&json!({"command":"git status"})));
        assert!(strict.is_valid(&json!({"action":"execute","invocation":{"mode":"headless","intent":"execute_command"},"execution":{"command":"ls"}})));
        assert!(strict.is_valid(&json!({"action":"read_output","target":{"session_id":"ses_1"}})));
        assert!(!strict.is_valid(&json!({"action":"execute","invocation":{"mode":"interactive"}})));
        assert!(!strict.is_valid(&json!({"action":"execute","execution":{"keys":["enter"]}})));
        assert!(
            !strict.is_valid(&json!({"action":"read_output","target":{"terminal_id":"term_1"}}))
        );
        let size = |f| {
            Value::Object(tool_input_schema(f).expect("schema"))
                .to_string()
                .len()
        };
        assert!(size(Face::Strict) < size(Face::Interactive));
    }
}
