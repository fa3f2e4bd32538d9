//! The JSON Schemas in `schemas/`, embedded at build time and compiled once at start-up, so
//! the files a client reads are exactly the ones the validator enforces.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

/// Raw schema texts, straight from `schemas/`.
pub const REQUEST_SCHEMA: &str = include_str!("../../schemas/request.schema.json");
pub const RESPONSE_SCHEMA: &str = include_str!("../../schemas/response.schema.json");
pub const ERROR_SCHEMA: &str = include_str!("../../schemas/error.schema.json");

/// Most schema violations listed in one error payload.
const MAX_REPORTED_VIOLATIONS: usize = 8;

struct Compiled {
    request_json: Value,
    request: jsonschema::Validator,
    response: jsonschema::Validator,
    error: jsonschema::Validator,
    output_schema: Value,
}

static COMPILED: OnceLock<Result<Compiled, String>> = OnceLock::new();

fn compile() -> Result<Compiled, String> {
    let parse = |name: &str, text: &str| -> Result<Value, String> {
        serde_json::from_str(text).map_err(|e| format!("schemas/{name} is not JSON: {e}"))
    };
    let request_json = parse("request.schema.json", REQUEST_SCHEMA)?;
    let response_json = parse("response.schema.json", RESPONSE_SCHEMA)?;
    let error_json = parse("error.schema.json", ERROR_SCHEMA)?;
    let build = |name: &str, v: &Value| {
        jsonschema::validator_for(v).map_err(|e| format!("schemas/{name} does not compile: {e}"))
    };
    Ok(Compiled {
        request: build("request.schema.json", &request_json)?,
        response: build("response.schema.json", &response_json)?,
        error: build("error.schema.json", &error_json)?,
        output_schema: combine_output_schema(&response_json, &error_json),
        request_json,
    })
}

/// Compile every schema; call once at start-up so a broken schema stops the server early.
pub fn init() -> Result<(), String> {
    match COMPILED.get_or_init(compile) {
        Ok(_) => Ok(()),
        Err(e) => Err(e.clone()),
    }
}

fn compiled() -> Result<&'static Compiled, String> {
    COMPILED.get_or_init(compile).as_ref().map_err(Clone::clone)
}

/// One schema violation: where in the request, and what is wrong.
#[derive(Debug, Clone)]
pub struct Violation {
    pub path: String,
    pub message: String,
}

/// Validate a raw request against `schemas/request.schema.json`.
pub fn check_request(instance: &Value) -> Result<Vec<Violation>, String> {
    let c = compiled()?;
    Ok(c.request
        .iter_errors(instance)
        .take(MAX_REPORTED_VIOLATIONS)
        .map(|e| Violation {
            path: display_path(e.instance_path().as_str()),
            message: e.to_string(),
        })
        .collect())
}

/// True when `payload` is a valid response or error payload (used by tests and debug checks).
pub fn is_valid_payload(payload: &Value) -> bool {
    match compiled() {
        Ok(c) => c.response.is_valid(payload) || c.error.is_valid(payload),
        Err(_) => false,
    }
}

/// Violations of a payload against the response (success) or error schema.
pub fn payload_violations(payload: &Value) -> Vec<String> {
    let Ok(c) = compiled() else {
        return vec!["schemas did not compile".into()];
    };
    let v = if payload.get("success") == Some(&Value::Bool(true)) {
        &c.response
    } else {
        &c.error
    };
    v.iter_errors(payload)
        .map(|e| format!("{}: {e}", display_path(e.instance_path().as_str())))
        .collect()
}

/// The request schema as the tool's input schema.
pub fn request_schema() -> Result<Map<String, Value>, String> {
    match &compiled()?.request_json {
        Value::Object(m) => Ok(m.clone()),
        _ => Err("request schema is not an object".into()),
    }
}

/// The tool's output schema: success response or error payload.
pub fn output_schema() -> Result<Map<String, Value>, String> {
    match &compiled()?.output_schema {
        Value::Object(m) => Ok(m.clone()),
        _ => Err("output schema is not an object".into()),
    }
}

fn display_path(pointer: &str) -> String {
    if pointer.is_empty() {
        "(request)".to_string()
    } else {
        pointer.trim_start_matches('/').replace('/', ".")
    }
}

/// Merge the two payload schemas into one object schema (MCP wants `type: object` at the
/// root): their `$defs` are prefixed so internal references keep resolving.
fn combine_output_schema(response: &Value, error: &Value) -> Value {
    let mut defs = Map::new();
    let mut branch = |prefix: &str, schema: &Value| -> Value {
        let mut s = schema.clone();
        rewrite_refs(&mut s, prefix);
        if let Value::Object(m) = &mut s {
            m.remove("$schema");
            if let Some(Value::Object(d)) = m.remove("$defs") {
                for (k, v) in d {
                    defs.insert(format!("{prefix}{k}"), v);
                }
            }
        }
        s
    };
    let ok = branch("response_", response);
    let err = branch("error_", error);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "description": "The canonical response (success: true) or the PM_TERM_* error payload (success: false).",
        "anyOf": [ok, err],
        "$defs": Value::Object(defs),
    })
}

fn rewrite_refs(v: &mut Value, prefix: &str) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if k == "$ref" {
                    if let Value::String(s) = child
                        && let Some(rest) = s.strip_prefix("#/$defs/")
                    {
                        *s = format!("#/$defs/{prefix}{rest}");
                    }
                } else {
                    rewrite_refs(child, prefix);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|c| rewrite_refs(c, prefix)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_compile_and_combine() {
        init().expect("schemas compile");
        let out = output_schema().expect("output schema");
        let v = jsonschema::validator_for(&Value::Object(out)).expect("combined compiles");
        let ok = json!({
            "success": true, "action": "list", "status": "completed",
            "correlation": {"request_id": "req_1", "trace_id": "trace_1"},
            "resolved": {"canonical_action": "list", "alias_applied": false, "legacy_action": null, "mode": null},
            "identity": {}, "result": {"running": false, "items": []}, "error": null
        });
        assert!(v.is_valid(&ok));
        assert!(is_valid_payload(&ok));
        let mut bad = ok.clone();
        bad["result"]["running"] = json!("no");
        assert!(!v.is_valid(&bad));
    }
}
