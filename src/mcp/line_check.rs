//! What the framing layer decides for one line from the client: pass it to rmcp, answer it
//! with the JSON-RPC error it deserves, or drop it (a malformed notification). Pure
//! functions of the bytes; `framing` does the I/O. A line is parsed once into a JSON value
//! and once from that value into rmcp's typed message, which is what rmcp receives.

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, JsonRpcMessage,
    JsonRpcRequest, RequestId, RequestMetaObject,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Longest line accepted (the tool's own request limit is 1 MiB; this leaves room for the
/// contract to answer an oversized request with its own payload).
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Bytes of an over-long line kept to look for its id.
pub const ID_SEARCH_BYTES: usize = 64 * 1024;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// The method nearly every message is: parsed as its own kind (see [`call_tool`]).
const CALL_TOOL: &str = "tools/call";
/// The keys of a tool call's params that are moved out as maps (see `call_tool`).
const META: &str = "_meta";
const ARGUMENTS: &str = "arguments";

/// Request methods rmcp types; one that falls back to its catch-all (custom) variant had
/// params it could not take.
const TYPED_METHODS: &[&str] = &[
    "ping",
    "initialize",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/cancel",
];

/// What to do with one line.
#[derive(Debug)]
pub enum LineAction {
    /// Hand this message to rmcp, parsed once here.
    Forward(Box<ClientJsonRpcMessage>),
    /// Write this answer (one JSON value, no newline) to the client.
    Answer(Vec<u8>),
    /// Nothing to do (a blank line, a malformed notification).
    Drop(&'static str),
}

fn error_value(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn answer(id: Value, code: i64, message: &str) -> LineAction {
    LineAction::Answer(error_value(id, code, message).to_string().into_bytes())
}

/// An id rmcp accepts: a string or an integer that fits an `i64`.
/// Largest integer id every client holds exactly: JavaScript numbers (and I-JSON) stop
/// there, so a larger id would come back as another number to a client that keeps ids as
/// numbers.
const MAX_SAFE_ID: i64 = (1 << 53) - 1;

fn acceptable_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.as_i64().is_some_and(|i| i.abs() <= MAX_SAFE_ID),
        _ => false,
    }
}

/// An id worth echoing: any string or number (even one rmcp cannot take).
fn echoable(id: Option<&Value>) -> Value {
    match id {
        Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
        _ => Value::Null,
    }
}

/// The value of a top-level `"id"` member in the start of a line that may not parse: a
/// string or a number literal, found by a scan that tracks nesting and strings.
pub fn recover_id(text: &[u8]) -> Value {
    let mut depth = 0usize;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let Some(end) = string_end(text, i) else {
                    return Value::Null;
                };
                if depth == 1 && &text[i..=end] == b"\"id\"" {
                    let mut j = end + 1;
                    while j < text.len() && text[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    if text.get(j) == Some(&b':') {
                        return literal_at(text, j + 1);
                    }
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    Value::Null
}

/// Index of the quote closing the string that starts at `start`.
fn string_end(text: &[u8], start: usize) -> Option<usize> {
    let mut j = start + 1;
    while j < text.len() {
        match text[j] {
            b'\\' => j += 2,
            b'"' => return Some(j),
            _ => j += 1,
        }
    }
    None
}

/// A string or number literal at `at` (after whitespace), as a value.
fn literal_at(text: &[u8], at: usize) -> Value {
    let mut j = at;
    while j < text.len() && text[j].is_ascii_whitespace() {
        j += 1;
    }
    let end = match text.get(j) {
        Some(b'"') => string_end(text, j).map(|e| e + 1),
        Some(c) if *c == b'-' || c.is_ascii_digit() => Some(
            j + text[j..]
                .iter()
                .take_while(|c| c.is_ascii_digit() || b"-+.eE".contains(c))
                .count(),
        ),
        _ => None,
    };
    end.and_then(|e| serde_json::from_slice::<Value>(&text[j..e]).ok())
        .filter(|v| v.is_string() || v.is_number())
        .unwrap_or(Value::Null)
}

/// The answer for a line longer than [`MAX_LINE_BYTES`] (`head` is its start).
pub fn oversized(head: &[u8], total: usize) -> LineAction {
    answer(
        recover_id(head),
        INVALID_REQUEST,
        &format!("message of {total} bytes exceeds the limit of {MAX_LINE_BYTES} bytes"),
    )
}

/// Check one line (without its newline).
pub fn classify(line: &[u8]) -> LineAction {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return LineAction::Drop("blank line");
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return answer(
            recover_id(line),
            PARSE_ERROR,
            "Parse error: not valid UTF-8",
        );
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return answer(recover_id(line), PARSE_ERROR, &format!("Parse error: {e}"));
        }
    };
    match value {
        Value::Object(obj) => classify_object(obj),
        Value::Array(items) => batch(&items),
        _ => answer(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: not a JSON-RPC object",
        ),
    }
}

/// JSON-RPC batches left MCP in protocol 2025-06-18: every request in one gets its error, in
/// one array, as a batch would.
fn batch(items: &[Value]) -> LineAction {
    if items.is_empty() {
        return answer(Value::Null, INVALID_REQUEST, "Invalid Request: empty batch");
    }
    let errors: Vec<Value> = items
        .iter()
        .filter_map(|item| item.as_object())
        .filter(|o| o.contains_key("id") && o.contains_key("method"))
        .map(|o| {
            error_value(
                echoable(o.get("id")),
                INVALID_REQUEST,
                "Invalid Request: batches are not supported; send each message on its own line",
            )
        })
        .collect();
    if errors.is_empty() {
        return LineAction::Drop("a batch of notifications");
    }
    LineAction::Answer(Value::Array(errors).to_string().into_bytes())
}

fn classify_object(obj: Map<String, Value>) -> LineAction {
    let has_id = obj.contains_key("id");
    let id = echoable(obj.get("id"));
    let is_request = obj.contains_key("method");
    if !is_request && !has_id {
        return LineAction::Drop("neither a request, a notification nor a response");
    }
    let fail = |code: i64, msg: &str, drop_reason: &'static str| {
        if has_id {
            answer(id.clone(), code, msg)
        } else {
            LineAction::Drop(drop_reason)
        }
    };
    if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return fail(
            INVALID_REQUEST,
            "Invalid Request: jsonrpc must be \"2.0\"",
            "a notification without jsonrpc 2.0",
        );
    }
    if has_id && !obj.get("id").is_some_and(acceptable_id) {
        // JSON-RPC 2.0: an id that cannot be told is answered with a null one.
        return answer(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: id must be a string or an integer between -(2^53-1) and 2^53-1",
        );
    }
    if is_request {
        let Some(method) = obj
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            return fail(
                INVALID_REQUEST,
                "Invalid Request: method must be a string",
                "a notification whose method is not a string",
            );
        };
        if obj.get("params").is_some_and(|p| !p.is_object()) {
            return fail(
                INVALID_PARAMS,
                "Invalid params: params must be an object",
                "a notification whose params are not an object",
            );
        }
        let mut value = Value::Object(obj);
        if has_id
            && method == CALL_TOOL
            && let Some(msg) = call_tool(&mut value)
        {
            return LineAction::Forward(Box::new(msg));
        }
        return match typed(&value, &method, has_id) {
            Ok(msg) => LineAction::Forward(Box::new(msg)),
            Err(msg) => fail(INVALID_PARAMS, &msg, "a notification rmcp cannot parse"),
        };
    }
    let value = Value::Object(obj);
    match ClientJsonRpcMessage::deserialize(&value) {
        Ok(msg) => LineAction::Forward(Box::new(msg)),
        Err(_) => LineAction::Drop("a response rmcp cannot parse"),
    }
}

/// A `tools/call` request as rmcp's typed message, parsed as the one kind its method names.
///
/// rmcp's parse of a whole message tries its twenty-odd request kinds in turn (an untagged
/// enum) and builds an error for each that does not fit before it reaches this one: for the
/// message nearly every call is, that was the costliest step of reading a request (5.7 % of
/// the server's CPU per REPL round trip, about 17 µs). Even the kind's own deserializer
/// buffers every field of `params` (it takes `_meta` apart with a flattened field), so the
/// arguments were copied into serde's buffer and built again from it (4 % more). Here the
/// arguments and `_meta` are moved out of the message as the maps they are, and the few
/// remaining fields go through rmcp's deserializer for the kind's parameters; `_meta` goes
/// into the request's extensions as rmcp puts it. So the message rmcp receives is the one
/// its own parse makes (a unit test compares the two). A message with a response's keys,
/// or one this kind does not take, is left as it came and goes the long way, and gets the
/// answer that way gives.
fn call_tool(value: &mut Value) -> Option<ClientJsonRpcMessage> {
    if value.get("result").is_some() || value.get("error").is_some() {
        return None;
    }
    let id = RequestId::deserialize(value.get("id")?).ok()?;
    let params = value.get_mut("params")?.as_object_mut()?;
    // A map or nothing, as an optional map deserializes; anything else goes the long way.
    let map_or_nothing =
        |v: Option<&Value>| matches!(v, None | Some(Value::Null | Value::Object(_)));
    if !map_or_nothing(params.get(META)) || !map_or_nothing(params.get(ARGUMENTS)) {
        return None;
    }
    let meta = params.remove(META);
    let arguments = params.remove(ARGUMENTS);
    let Ok(mut rest) = CallToolRequestParams::deserialize(&*params) else {
        // Back as it came, for the long way's answer.
        params.extend(meta.map(|m| (META.to_string(), m)));
        params.extend(arguments.map(|a| (ARGUMENTS.to_string(), a)));
        return None;
    };
    rest.arguments = match arguments {
        Some(Value::Object(map)) => Some(map),
        _ => None,
    };
    let mut request = CallToolRequest::new(rest);
    if let Some(Value::Object(map)) = meta {
        request.extensions.insert(RequestMetaObject::from(map));
    }
    Some(JsonRpcMessage::Request(JsonRpcRequest::new(
        id,
        ClientRequest::CallToolRequest(request),
    )))
}

/// This request or notification as rmcp's typed message, if rmcp can take it as what its
/// method says.
fn typed(value: &Value, method: &str, has_id: bool) -> Result<ClientJsonRpcMessage, String> {
    match ClientJsonRpcMessage::deserialize(value) {
        Ok(JsonRpcMessage::Request(r))
            if has_id
                && matches!(r.request, ClientRequest::CustomRequest(_))
                && TYPED_METHODS.contains(&method) =>
        {
            Err(format!(
                "Invalid params for {method}{}",
                params_hint(value, method)
            ))
        }
        Ok(msg) => Ok(msg),
        Err(e) => Err(format!("Invalid params for {method}: {e}")),
    }
}

/// What a known method's params lack, in words a client can act on.
fn params_hint(value: &Value, method: &str) -> String {
    let params = value.get("params");
    if method == "tools/call" {
        if !params
            .and_then(|p| p.get("name"))
            .is_some_and(Value::is_string)
        {
            return ": params.name must be a string (the tool's name)".into();
        }
        if params
            .and_then(|p| p.get("arguments"))
            .is_some_and(|a| !a.is_object() && !a.is_null())
        {
            return ": params.arguments must be an object".into();
        }
    }
    ": the params do not match the method's schema".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(line: &str) -> Value {
        match classify(line.as_bytes()) {
            LineAction::Answer(a) => serde_json::from_slice(&a).unwrap_or(Value::Null),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn ids_are_recovered_from_broken_lines() {
        assert_eq!(
            recover_id(br#"{"jsonrpc":"2.0","id":7,"method":"#),
            json!(7)
        );
        assert_eq!(
            recover_id(br#"{"params":{"id":1},"id":"a\"b"}"#),
            json!("a\"b")
        );
        assert_eq!(
            recover_id(br#"{"method":"x","params":{"id":9}"#),
            Value::Null
        );
        assert_eq!(recover_id(b"\xff{\"id\": -3 ,"), json!(-3));
        assert_eq!(recover_id(b"[[[["), Value::Null);
    }

    #[test]
    fn each_malformed_line_gets_its_error() {
        let cases: &[(&str, i64, Value)] = &[
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"#,
                PARSE_ERROR,
                json!(1),
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"ping"} x"#,
                PARSE_ERROR,
                json!(2),
            ),
            (r#"{"id":3,"method":"ping"}"#, INVALID_REQUEST, json!(3)),
            (
                r#"{"jsonrpc":"1.0","id":4,"method":"ping"}"#,
                INVALID_REQUEST,
                json!(4),
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":7}"#,
                INVALID_REQUEST,
                json!(5),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[]}"#,
                INVALID_PARAMS,
                json!(6),
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","arguments":"y"}}"#,
                INVALID_PARAMS,
                json!(8),
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{}}"#,
                INVALID_PARAMS,
                json!(9),
            ),
            (
                r#"{"jsonrpc":"2.0","id":10,"method":"x","params":{"s":"\ud800"}}"#,
                PARSE_ERROR,
                json!(10),
            ),
            ("42", INVALID_REQUEST, Value::Null),
            ("[]", INVALID_REQUEST, Value::Null),
        ];
        for (line, code, id) in cases {
            let a = answered(line);
            assert_eq!(a["error"]["code"], *code, "{line}: {a}");
            assert_eq!(a["id"], *id, "{line}: {a}");
            assert_eq!(a["jsonrpc"], "2.0");
        }
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":11,"method":"x","params":{}}}"#,
            "[".repeat(100_000)
        );
        assert_eq!(answered(&deep)["id"], 11);
        let b = answered(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"b","method":"ping"}]"#,
        );
        let ids: Vec<&Value> = b
            .as_array()
            .expect("an array")
            .iter()
            .map(|e| &e["id"])
            .collect();
        assert_eq!(ids, vec![&json!(1), &json!("b")]);
    }

    #[test]
    fn good_lines_pass_and_notifications_are_not_answered() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"tools/list\"}\r",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"no/such","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ] {
            assert!(
                matches!(classify(line.as_bytes()), LineAction::Forward(_)),
                "{line}"
            );
        }
        for line in [
            "",
            "  ",
            r#"{"method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":3}"#,
        ] {
            assert!(
                matches!(classify(line.as_bytes()), LineAction::Drop(_)),
                "{line}"
            );
        }
        // Duplicate keys reach rmcp resolved.
        let LineAction::Forward(f) =
            classify(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#)
        else {
            panic!()
        };
        assert_eq!(serde_json::to_value(&*f).unwrap_or_default()["id"], 2);
    }

    #[test]
    fn a_tool_call_reaches_rmcp_as_its_own_parse_makes_it() {
        let calls = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,"x",{"b":null}]}}}"#,
            r#"{"jsonrpc":"2.0","id":"s-2","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":"p","x":1},"name":"t","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":null,"extra":true},"other":5}"#,
            r#"{"params":{"name":"t","arguments":{"k":"v"}},"method":"tools/call","id":-5,"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"_meta":null,"name":"t","arguments":{"x":"é"},"inputResponses":{"q":{"a":1}},"requestState":"s"}}"#,
        ];
        for line in calls {
            let value: Value = serde_json::from_str(line).unwrap_or_default();
            let fast = call_tool(&mut value.clone()).expect(line);
            let slow = ClientJsonRpcMessage::deserialize(&value).expect(line);
            assert!(
                matches!(&fast, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::CallToolRequest(_))),
                "{line}"
            );
            assert_eq!(
                serde_json::to_value(&fast).unwrap_or_default(),
                serde_json::to_value(&slow).unwrap_or_default(),
                "{line}"
            );
            assert!(matches!(classify(line.as_bytes()), LineAction::Forward(_)));
        }
        // Not taken as a call: the long way answers them as before.
        for line in [
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"t"},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t","_meta":3}}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":7,"arguments":{"a":1},"_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"t","arguments":{"a":1},"requestState":5}}"#,
        ] {
            let value: Value = serde_json::from_str(line).unwrap_or_default();
            let mut tried = value.clone();
            assert!(call_tool(&mut tried).is_none(), "{line}");
            assert_eq!(tried, value, "left as it came: {line}");
        }
        assert_eq!(
            answered(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}"#)
                ["error"]["code"],
            INVALID_PARAMS
        );
    }

    #[test]
    fn oversized_lines_are_answered_with_their_id() {
        let v = match oversized(
            br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"#,
            50 << 20,
        ) {
            LineAction::Answer(a) => serde_json::from_slice::<Value>(&a).unwrap_or_default(),
            _ => Value::Null,
        };
        assert_eq!(v["id"], 42);
        assert_eq!(v["error"]["code"], INVALID_REQUEST);
    }
}
