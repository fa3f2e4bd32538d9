//! The JSON Schemas in `schemas/`, embedded at build time and compiled once (on a thread of
//! their own while the server starts), so the files a client reads are exactly the ones the
//! validator enforces.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::advertise::{self, Face};

/// Raw schema texts, straight from `schemas/`.
pub const REQUEST_SCHEMA: &str = include_str!("../../schemas/request.schema.json");
pub const RESPONSE_SCHEMA: &str = include_str!("../../schemas/response.schema.json");
pub const ERROR_SCHEMA: &str = include_str!("../../schemas/error.schema.json");

/// Most schema violations listed in one error payload.
const MAX_REPORTED_VIOLATIONS: usize = 8;

/// Longest violation message that quotes the offending value. A longer one says "the value"
/// instead: a hostile request near the 1 MiB limit was otherwise quoted back whole, in the
/// error's message and again in its list of violations.
const MAX_QUOTING_MESSAGE_BYTES: usize = 240;

/// The schemas as JSON: cheap to parse, and all the tool list needs.
struct Documents {
    request: Value,
    response: Value,
    error: Value,
}

/// The compiled validators: most of the server's start-up work, so they are compiled on a
/// thread of their own once the server answers (see [`compile_in_background`]).
struct Validators {
    request: jsonschema::Validator,
    response: jsonschema::Validator,
    error: jsonschema::Validator,
    /// What the tools advertise as their output: every payload must pass it too.
    advertised_output: jsonschema::Validator,
}

static DOCUMENTS: OnceLock<Result<Documents, String>> = OnceLock::new();
static VALIDATORS: OnceLock<Result<Validators, String>> = OnceLock::new();

fn parse_documents() -> Result<Documents, String> {
    let parse = |name: &str, text: &str| -> Result<Value, String> {
        serde_json::from_str(text).map_err(|e| format!("schemas/{name} is not JSON: {e}"))
    };
    let request = parse("request.schema.json", REQUEST_SCHEMA)?;
    let response = parse("response.schema.json", RESPONSE_SCHEMA)?;
    let error = parse("error.schema.json", ERROR_SCHEMA)?;
    Ok(Documents {
        request,
        response,
        error,
    })
}

fn documents() -> Result<&'static Documents, String> {
    DOCUMENTS
        .get_or_init(parse_documents)
        .as_ref()
        .map_err(Clone::clone)
}

fn compile() -> Result<Validators, String> {
    let d = documents()?;
    let build = |name: &str, v: &Value| {
        jsonschema::validator_for(v).map_err(|e| format!("schemas/{name} does not compile: {e}"))
    };
    Ok(Validators {
        request: build("request.schema.json", &d.request)?,
        response: build("response.schema.json", &d.response)?,
        error: build("error.schema.json", &d.error)?,
        advertised_output: build(
            "advertised output schema",
            &Value::Object(advertise::output_schema()),
        )?,
    })
}

/// Parse and compile every schema now: a broken schema stops the caller early.
pub fn init() -> Result<(), String> {
    compiled().map(|_| ())
}

/// Parse the schemas now (a broken one stops the server at start); compile them later with
/// [`compile_in_background`].
pub fn load() -> Result<(), String> {
    documents().map(|_| ())
}

/// Compile the validators on a thread of their own. The stdio server starts it once
/// `initialize` is answered: on a machine with two cores, compiling while the server starts
/// delays the answer a client waits for, and the first tool call comes later anyway.
pub fn compile_in_background() -> Result<(), String> {
    std::thread::Builder::new()
        .name("schema-compile".into())
        .spawn(|| {
            if let Err(e) = compiled() {
                tracing::error!(error = %e, "the schemas do not compile");
            }
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start the schema compiler: {e}"))
}

fn compiled() -> Result<&'static Validators, String> {
    VALIDATORS
        .get_or_init(compile)
        .as_ref()
        .map_err(Clone::clone)
}

/// One schema violation: where in the request, and what is wrong.
#[derive(Debug, Clone)]
pub struct Violation {
    pub path: String,
    pub message: String,
}

/// Validate a raw request against `schemas/request.schema.json`. Nearly every request is
/// valid, and `is_valid` says so without building an error for each keyword it checks;
/// only an invalid request is walked again for the violations to report.
pub fn check_request(instance: &Value) -> Result<Vec<Violation>, String> {
    let c = compiled()?;
    if c.request.is_valid(instance) {
        return Ok(Vec::new());
    }
    let doc = documents()?;
    Ok(c.request
        .iter_errors(instance)
        .take(MAX_REPORTED_VIOLATIONS)
        .map(|e| {
            let path = display_path(e.instance_path().as_str());
            let mut message = message_of(&e);
            if let jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } =
                e.kind()
            {
                let at = e.instance_path().as_str().trim_start_matches('/');
                let meant: Vec<String> = unexpected
                    .iter()
                    .filter_map(|u| super::suggest::field_meant(&doc.request, at, u))
                    .collect();
                if !meant.is_empty() {
                    message.push_str(&format!("; did you mean {}?", meant.join(", ")));
                }
            }
            Violation { path, message }
        })
        .collect())
}

/// What is wrong, quoting the value only when that keeps the message short.
fn message_of(e: &jsonschema::ValidationError<'_>) -> String {
    let quoting = e.to_string();
    if quoting.len() <= MAX_QUOTING_MESSAGE_BYTES {
        quoting
    } else {
        e.masked_with("the value").to_string()
    }
}

/// True when `payload` is a valid response or error payload (used by tests and debug checks).
pub fn is_valid_payload(payload: &Value) -> bool {
    match compiled() {
        Ok(c) => {
            (c.response.is_valid(payload) || c.error.is_valid(payload))
                && c.advertised_output.is_valid(payload)
        }
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
        .chain(
            c.advertised_output
                .iter_errors(payload)
                .map(|e| format!("advertised output schema: {e}")),
        )
        .collect()
}

/// The input schema a tool advertises (see [`advertise`]).
pub fn tool_input_schema(face: Face) -> Result<Map<String, Value>, String> {
    advertise::input_schema(&documents()?.request, face)
}

/// The output schema both tools advertise: the envelope every answer shares.
pub fn tool_output_schema() -> Map<String, Value> {
    advertise::output_schema()
}

fn display_path(pointer: &str) -> String {
    if pointer.is_empty() {
        "(request)".to_string()
    } else {
        pointer.trim_start_matches('/').replace('/', ".")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_compile_and_check_payloads() {
        init().expect("schemas compile");
        let ok = json!({
            "success": true, "action": "list", "status": "completed",
            "correlation": {"request_id": "req_1", "trace_id": "trace_1"},
            "resolved": {"canonical_action": "list", "alias_applied": false, "legacy_action": null, "mode": null},
            "identity": {}, "result": {"running": false, "items": []}, "error": null
        });
        assert!(is_valid_payload(&ok), "{:?}", payload_violations(&ok));
        let mut bad = ok.clone();
        bad["result"]["running"] = json!("no");
        assert!(!is_valid_payload(&bad));
        let mut off_envelope = ok.clone();
        off_envelope["status"] = json!("maybe");
        assert!(
            payload_violations(&off_envelope)
                .iter()
                .any(|v| v.starts_with("advertised output schema"))
        );
    }

    #[test]
    fn a_valid_request_has_no_violations_and_an_invalid_one_has_each_of_its_own() {
        init().expect("schemas compile");
        let ok = json!({"action": "list", "listing": {"limit": 10}});
        let none = check_request(&ok).expect("schemas compile");
        assert!(none.is_empty(), "{none:?}");
        let bad =
            json!({"action": "list", "listing": {"limit": "ten"}, "runtime": {"wait_ms": -1}});
        let found = check_request(&bad).expect("schemas compile");
        let paths: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
        assert!(paths.contains(&"listing.limit"), "{found:?}");
        assert!(paths.contains(&"runtime.wait_ms"), "{found:?}");
        assert!(
            found.iter().any(|v| v.message.contains("\"ten\"")),
            "a short value is quoted: {found:?}"
        );
    }

    #[test]
    fn a_long_value_is_named_not_quoted() {
        init().expect("schemas compile");
        let args: Vec<u32> = (0..100_000).collect();
        let bad = json!({"action": "execute", "execution": {"command": "echo", "args": args}});
        let found = check_request(&bad).expect("schemas compile");
        let too_many = found
            .iter()
            .find(|v| v.path == "execution.args")
            .expect("the array's length is a violation");
        assert!(
            too_many.message.starts_with("the value"),
            "{}",
            too_many.message
        );
        assert!(
            too_many.message.contains("more than"),
            "{}",
            too_many.message
        );
        assert!(
            found
                .iter()
                .all(|v| v.message.len() <= MAX_QUOTING_MESSAGE_BYTES)
        );
    }
}
