//! A client that misbehaves on raw stdio: every malformed JSON-RPC message that carries an id
//! gets an answer with the error it deserves (and its id whenever it can be recovered), the
//! server stays up, and an agent's NUL bytes are refused naming the field.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// How long one answer may take.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

struct Raw {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Raw {
    /// The server, spoken to raw, with nothing said yet.
    fn spawn() -> Raw {
        let mut cmd = server().command();
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Raw {
            child,
            stdin,
            lines,
        }
    }

    /// The server after a 2025-06-18 `initialize`.
    async fn start() -> Raw {
        let mut raw = Raw::spawn();
        raw.send(br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#)
            .await;
        let a = raw.answer().await.expect("initialize answered");
        assert_eq!(a["id"], "init", "{a}");
        raw.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        raw
    }

    async fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next message from the server, if one comes in time.
    async fn answer(&mut self) -> Option<Value> {
        match tokio::time::timeout(ANSWER_WITHIN, self.lines.next_line()).await {
            Ok(Ok(Some(l))) => Some(serde_json::from_str(&l).unwrap_or(Value::String(l))),
            _ => None,
        }
    }
}

/// Malformed lines, the error code each deserves, and the id the answer must carry.
fn corpus() -> Vec<(String, Vec<u8>, i64, Value)> {
    let mut c: Vec<(String, Vec<u8>, i64, Value)> = Vec::new();
    let mut add = |name: &str, line: Vec<u8>, code: i64, id: Value| {
        c.push((name.to_string(), line, code, id));
    };
    add(
        "invalid UTF-8",
        b"{\"jsonrpc\":\"2.0\",\"id\":101,\"method\":\"ping\",\"x\":\"\xff\xfe\"}".to_vec(),
        -32700,
        json!(101),
    );
    add(
        "truncated JSON",
        br#"{"jsonrpc":"2.0","id":102,"method":"ping""#.to_vec(),
        -32700,
        json!(102),
    );
    add(
        "not JSON at all",
        b"hello there".to_vec(),
        -32700,
        Value::Null,
    );
    add(
        "trailing garbage",
        br#"{"jsonrpc":"2.0","id":103,"method":"ping"} }"#.to_vec(),
        -32700,
        json!(103),
    );
    add(
        "two objects on a line",
        br#"{"jsonrpc":"2.0","id":104,"method":"ping"}{"jsonrpc":"2.0","id":105,"method":"ping"}"#
            .to_vec(),
        -32700,
        json!(104),
    );
    add(
        "lone surrogate",
        br#"{"jsonrpc":"2.0","id":106,"method":"ping","params":{"s":"\ud800"}}"#.to_vec(),
        -32700,
        json!(106),
    );
    add(
        "jsonrpc missing",
        br#"{"id":107,"method":"ping"}"#.to_vec(),
        -32600,
        json!(107),
    );
    add(
        "jsonrpc 1.0",
        br#"{"jsonrpc":"1.0","id":108,"method":"ping"}"#.to_vec(),
        -32600,
        json!(108),
    );
    add(
        "jsonrpc a number",
        br#"{"jsonrpc":2.0,"id":109,"method":"ping"}"#.to_vec(),
        -32600,
        json!(109),
    );
    add(
        "id an object",
        br#"{"jsonrpc":"2.0","id":{"n":110},"method":"ping"}"#.to_vec(),
        -32600,
        Value::Null,
    );
    add(
        "id an array",
        br#"{"jsonrpc":"2.0","id":[111],"method":"ping"}"#.to_vec(),
        -32600,
        Value::Null,
    );
    add(
        "id a float",
        br#"{"jsonrpc":"2.0","id":112.5,"method":"ping"}"#.to_vec(),
        -32600,
        Value::Null,
    );
    add(
        "id a bool",
        br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#.to_vec(),
        -32600,
        Value::Null,
    );
    add(
        "id null",
        br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
        -32600,
        Value::Null,
    );
    add(
        "id out of range",
        br#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#.to_vec(),
        -32600,
        Value::Null,
    );
    add(
        "id past 2^53 (no JavaScript client holds it exactly)",
        br#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#.to_vec(),
        -32600,
        Value::Null,
    );
    add(
        "method a number",
        br#"{"jsonrpc":"2.0","id":113,"method":1}"#.to_vec(),
        -32600,
        json!(113),
    );
    add(
        "method null",
        br#"{"jsonrpc":"2.0","id":114,"method":null}"#.to_vec(),
        -32600,
        json!(114),
    );
    add(
        "params an array",
        br#"{"jsonrpc":"2.0","id":115,"method":"tools/list","params":[1]}"#.to_vec(),
        -32602,
        json!(115),
    );
    add(
        "params a string",
        br#"{"jsonrpc":"2.0","id":116,"method":"ping","params":"p"}"#.to_vec(),
        -32602,
        json!(116),
    );
    add("tools/call arguments a string", br#"{"jsonrpc":"2.0","id":117,"method":"tools/call","params":{"name":"memory_terminal_interactive","arguments":"x"}}"#.to_vec(), -32602, json!(117));
    add("tools/call arguments an array", br#"{"jsonrpc":"2.0","id":118,"method":"tools/call","params":{"name":"memory_terminal_interactive","arguments":[]}}"#.to_vec(), -32602, json!(118));
    add(
        "tools/call without a name",
        br#"{"jsonrpc":"2.0","id":119,"method":"tools/call","params":{"arguments":{}}}"#.to_vec(),
        -32602,
        json!(119),
    );
    add(
        "tools/call name a number",
        br#"{"jsonrpc":"2.0","id":"s120","method":"tools/call","params":{"name":5}}"#.to_vec(),
        -32602,
        json!("s120"),
    );
    add(
        "resources/read without uri",
        br#"{"jsonrpc":"2.0","id":121,"method":"resources/read","params":{}}"#.to_vec(),
        -32602,
        json!(121),
    );
    add(
        "a batch",
        br#"[{"jsonrpc":"2.0","id":122,"method":"ping"}]"#.to_vec(),
        -32600,
        json!(122),
    );
    add("an empty batch", b"[]".to_vec(), -32600, Value::Null);
    add("a bare number", b"7".to_vec(), -32600, Value::Null);
    add("a bare string", br#""ping""#.to_vec(), -32600, Value::Null);
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":123,"method":"ping","params":{{"x":{}}}}}"#,
        "[".repeat(100_000)
    );
    add("100k-deep nesting", deep.into_bytes(), -32700, json!(123));
    let deep_obj = format!(
        r#"{{"jsonrpc":"2.0","id":124,"method":"ping","params":{}}}"#,
        "{\"a\":".repeat(50_000)
    );
    add(
        "50k-deep objects",
        deep_obj.into_bytes(),
        -32700,
        json!(124),
    );
    let mut big = br#"{"jsonrpc":"2.0","id":125,"method":"tools/call","params":{"name":"memory_terminal_interactive","arguments":{"action":"list","pad":""#.to_vec();
    big.extend(std::iter::repeat_n(b'a', 50 * 1024 * 1024));
    big.extend_from_slice(br#""}}}"#);
    add("a 50 MB line", big, -32600, json!(125));
    c
}

#[tokio::test]
async fn every_malformed_message_with_an_id_is_answered() {
    let mut raw = Raw::start().await;
    let mut unanswered = Vec::new();
    let mut wrong = Vec::new();
    let corpus = corpus();
    let count = corpus.len();
    for (name, line, code, id) in corpus {
        raw.send(&line).await;
        let Some(a) = raw.answer().await else {
            unanswered.push(name);
            continue;
        };
        // A batch is answered by an array, one error per request in it.
        let a = match a {
            Value::Array(mut v) if v.len() == 1 => v.remove(0),
            other => other,
        };
        if a["error"]["code"] != code || a["id"] != id || a["jsonrpc"] != "2.0" {
            wrong.push(format!("{name}: expected {code} with id {id}, got {a}"));
        }
    }
    assert!(
        unanswered.is_empty(),
        "{} of {count} unanswered: {unanswered:?}",
        unanswered.len()
    );
    assert!(wrong.is_empty(), "{wrong:#?}");
    // Well-formed requests rmcp itself refuses are answered too, and the server is still up.
    for (line, id) in [
        (
            json!({"jsonrpc": "2.0", "id": 200, "method": "no/such/method"}),
            200,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 201, "method": "tools/call", "params": {"name": "no_such_tool"}}),
            201,
        ),
        (json!({"jsonrpc": "2.0", "id": 202, "method": "ping"}), 202),
    ] {
        raw.send(line.to_string().as_bytes()).await;
        let a = raw.answer().await.expect("answered");
        assert_eq!(a["id"], id, "{a}");
    }
    // Notifications, even malformed ones, get no answer (JSON-RPC), and break nothing.
    for line in [
        br#"{"jsonrpc":"2.0","method":"notifications/bogus","params":[1]}"#.to_vec(),
        br#"{"method":"notifications/x"}"#.to_vec(),
        b"".to_vec(),
        b"   ".to_vec(),
    ] {
        raw.send(&line).await;
    }
    raw.send(br#"{"jsonrpc":"2.0","id":"last","method":"tools/list"}"#)
        .await;
    let a = raw.answer().await.expect("answered");
    assert_eq!(a["id"], "last", "notifications were not answered: {a}");
    assert!(a["result"]["tools"].is_array());
    drop(raw.stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), raw.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status:?}");
}

/// The server writes rmcp's answers and this layer's own error answers to the same stdout.
/// With megabyte answers under way, a client that reads slowly, and malformed lines and
/// requests arriving all the while, every line that comes out is one whole JSON message:
/// every request and every malformed line is answered exactly once, and every
/// page of output arrives intact.
#[tokio::test]
async fn answers_never_interleave_while_large_answers_are_written() {
    const PAGES: usize = 6;
    const PAGE: usize = 900_000;
    let mut raw = Raw::start().await;
    let big = |id: usize| {
        json!({"jsonrpc": "2.0", "id": format!("page-{id}"), "method": "tools/call", "params": {
            "name": "memory_terminal_interactive",
            "arguments": {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
                "execution": {"command": format!("head -c {PAGE} /dev/zero | tr '\\0' {}", id % 10)},
                "output": {"max_bytes": 1_048_576}}}})
        .to_string()
    };
    // Everything is sent before anything is read: the answers queue up behind the pipe.
    let mut expected = std::collections::BTreeSet::new();
    for i in 0..PAGES {
        raw.send(big(i).as_bytes()).await;
        expected.insert(format!("page-{i}"));
        for j in 0..5 {
            raw.send(
                format!("{{\"jsonrpc\":\"2.0\",\"id\":\"bad-{i}-{j}\",\"method\":3}}").as_bytes(),
            )
            .await;
            expected.insert(format!("bad-{i}-{j}"));
            raw.send(
                format!("{{\"jsonrpc\":\"2.0\",\"id\":\"ping-{i}-{j}\",\"method\":\"ping\"}}")
                    .as_bytes(),
            )
            .await;
            expected.insert(format!("ping-{i}-{j}"));
            raw.send(b"{not json").await;
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut unparsable = 0;
    while seen.len() < expected.len() || unparsable < PAGES * 5 {
        // A slow reader: the server's writes meet a full pipe again and again.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let a = raw.answer().await.expect("every line answered in time");
        if a["id"].is_null() {
            // `{not json`: a parse error, whose id JSON-RPC says is null.
            assert_eq!(a["error"]["code"], -32700, "{a}");
            unparsable += 1;
            continue;
        }
        let id = a["id"]
            .as_str()
            .unwrap_or_else(|| panic!("an answer with an id never sent: {:.200}", a.to_string()))
            .to_string();
        if let Some(i) = id.strip_prefix("page-") {
            let i: usize = i.parse().unwrap();
            let out = a["result"]["structuredContent"]["result"]["stdout"]
                .as_str()
                .unwrap_or_default();
            let digit = char::from(b'0' + (i % 10) as u8);
            assert_eq!(out.len(), PAGE, "{id}");
            assert!(
                out.chars().all(|c| c == digit),
                "{id}: a page arrived mixed"
            );
        } else if id.starts_with("bad-") {
            assert_eq!(a["error"]["code"], -32600, "{a}");
        } else {
            assert!(a["result"].is_object(), "{a}");
        }
        assert!(seen.insert(id.clone()), "{id} answered twice");
    }
    assert_eq!(seen, expected);
    assert_eq!(unparsable, PAGES * 5);
}

/// A client that asks for page after page of output and reads none of the answers (a
/// stuck client, or one that writes all its requests before it reads): the server stops
/// taking its requests once a few answers wait to be written — the client's writes block —
/// instead of holding every answer in memory (gigabytes within seconds before). Once the
/// client reads, every request it got written is answered exactly once, each page whole.
#[tokio::test]
async fn a_client_that_reads_no_answers_is_not_answered_into_memory() {
    /// Requests the client tries to send before it reads anything.
    const TRIES: usize = 1000;
    /// Bytes of output per page asked for.
    const PAGE: usize = 256 * 1024;
    /// What the server may hold for such a client: far below the ~350 MB that `TRIES`
    /// answers would take.
    const RSS_BOUND_KIB: u64 = 200 * 1024;
    let mut raw = Raw::start().await;
    raw.send(
        json!({"jsonrpc": "2.0", "id": "seq", "method": "tools/call", "params": {
            "name": "memory_terminal_interactive", "arguments": {"action": "execute",
                "invocation": {"mode": "headless", "intent": "execute_command"},
                "execution": {"command": "seq 1 400000"}, "runtime": {"wait_ms": 60000},
                "output": {"max_bytes": 1}}}})
        .to_string()
        .as_bytes(),
    )
    .await;
    let a = raw.answer().await.expect("seq answered");
    assert_eq!(
        a["result"]["structuredContent"]["result"]["exit_code"], 0,
        "{a}"
    );
    let session = a["result"]["structuredContent"]["identity"]["session_id"].clone();
    let page = |i: usize| {
        let mut line = json!({"jsonrpc": "2.0", "id": format!("p{i:04}"), "method": "tools/call",
            "params": {"name": "memory_terminal_interactive", "arguments": {"action": "read_output",
                "target": {"session_id": session}, "output": {"max_bytes": PAGE, "stdout_cursor": 0}}}})
        .to_string()
        .into_bytes();
        line.push(b'\n');
        line
    };
    // Write until a write waits for seconds: the server has stopped reading.
    let mut complete = 0;
    let mut partial: Option<(Vec<u8>, usize)> = None;
    'sending: while complete < TRIES {
        let line = page(complete);
        let mut off = 0;
        while off < line.len() {
            match tokio::time::timeout(Duration::from_secs(3), raw.stdin.write(&line[off..])).await
            {
                Ok(Ok(n)) => off += n,
                Ok(Err(e)) => panic!("the server closed its input: {e}"),
                Err(_) => {
                    partial = Some((line, off));
                    break 'sending;
                }
            }
        }
        complete += 1;
    }
    let pid = raw.child.id().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let rss: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        complete < TRIES,
        "the server took all {TRIES} requests from a client that read no answer (RSS {rss} KiB)"
    );
    assert!(
        rss < RSS_BOUND_KIB,
        "RSS {rss} KiB after {complete} requests"
    );
    // Now read: every request written is answered once, with the same whole page.
    let mut first: Option<String> = None;
    let mut seen = std::collections::BTreeSet::new();
    let mut check = |a: Value| {
        let id = a["id"].as_str().unwrap_or_default().to_string();
        let out = a["result"]["structuredContent"]["result"]["stdout"]
            .as_str()
            .unwrap_or_else(|| panic!("{id}: no page: {:.300}", a.to_string()))
            .to_string();
        assert!(
            out.starts_with("1\n2\n3\n") && out.len() > PAGE - 16,
            "{id}"
        );
        match &first {
            None => first = Some(out),
            Some(f) => assert!(*f == out, "{id}: a page differs"),
        }
        assert!(seen.insert(id.clone()), "{id} answered twice");
    };
    for _ in 0..complete {
        check(
            raw.answer()
                .await
                .expect("every request written is answered"),
        );
    }
    if let Some((line, off)) = partial {
        raw.stdin.write_all(&line[off..]).await.unwrap();
        raw.stdin.flush().await.unwrap();
        check(raw.answer().await.expect("the last request answered"));
        complete += 1;
    }
    assert_eq!(seen.len(), complete);
}

/// A NUL byte in what becomes a C string is the agent's error, named, in both modes.
#[tokio::test]
async fn nul_bytes_are_refused_naming_the_field() {
    let s = server().envs(&[("PM_TERM_NO_USER_RC", "1")]).start().await;
    let cases = [
        (
            json!({"command": "echo a\u{0}b"}),
            json!({}),
            "execution.command",
        ),
        (
            json!({"command": "echo", "args": ["x", "y\u{0}"]}),
            json!({}),
            "execution.args[1]",
        ),
        (
            json!({"command": "env", "env": {"A": "b\u{0}"}}),
            json!({}),
            "execution.env.A",
        ),
        (
            json!({"command": "pwd"}),
            json!({"cwd": "/tmp\u{0}/x"}),
            "runtime.cwd",
        ),
    ];
    for mode in ["headless", "interactive"] {
        for (execution, runtime, field) in &cases {
            let p = s
                .call(json!({"action": "execute", "invocation": {"mode": mode, "intent": "execute_command"},
                    "execution": execution, "runtime": runtime}))
                .await;
            assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{mode} {field}: {p:#}");
            assert_eq!(p["error"]["details"]["field"], *field, "{mode}: {p:#}");
        }
    }
    s.stop().await;
}

/// A request wrong in many places, built just under the size limit, is answered with its
/// first violations (a bounded list, each naming its place, none quoting the whole value
/// back) and the server serves on.
#[tokio::test]
async fn a_request_wrong_everywhere_is_answered_with_its_first_violations() {
    let s = server().start().await;
    let numbers: Vec<u32> = (0..150_000).collect();
    let p = s
        .call(json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": "echo", "args": numbers}, "runtime": {"wait_ms": "soon"}}))
        .await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
    let violations = p["error"]["details"]["violations"]
        .as_array()
        .expect("violations listed");
    assert!((2..=8).contains(&violations.len()), "{}", violations.len());
    assert!(
        violations
            .iter()
            .all(|v| v["path"].as_str().is_some_and(|p| !p.is_empty())),
        "{violations:?}"
    );
    assert!(
        violations.iter().any(|v| v["path"]
            .as_str()
            .is_some_and(|p| p.starts_with("execution.args"))),
        "{violations:?}"
    );
    let answer = p.to_string().len();
    assert!(answer < 16 * 1024, "an answer of {answer} bytes");
    let p = s.call(headless("echo after")).await;
    assert_eq!(p["result"]["stdout"], "after\n", "{p:#}");
    s.stop().await;
}

/// An agent's request of more than a mebibyte (the tool's own limit; the line itself is
/// under the framing's limit) is refused whole, naming the limit, and the server serves on.
#[tokio::test]
async fn a_request_over_a_mebibyte_is_refused_naming_the_limit() {
    let s = server().start().await;
    let p = s
        .call(headless(&format!("echo {}", "x".repeat(1_100_000))))
        .await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
    assert_eq!(p["error"]["details"]["limit"], "request_bytes", "{p:#}");
    assert_eq!(p["error"]["details"]["max"], 1_048_576, "{p:#}");
    let p = s.call(headless("echo after")).await;
    assert_eq!(p["result"]["stdout"], "after\n", "{p:#}");
    s.stop().await;
}

/// A 2026-07-28 client (no `initialize`: every request carries its protocol version) whose
/// per-request log level is not a level gets the error an invalid parameter deserves, naming
/// the key; a valid one gets its own log before its answer, and none is sent unasked.
#[tokio::test]
async fn a_2026_request_with_a_log_level_that_is_not_one_is_refused() {
    let mut raw = Raw::spawn();
    let call = |id: u32, level: Option<Value>| {
        let mut meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}});
        if let Some(l) = level {
            meta["io.modelcontextprotocol/logLevel"] = l;
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "memory_terminal", "arguments": {"command": "lsof"}, "_meta": meta}})
        .to_string()
    };
    for (id, bad) in [
        (1, json!("loud")),
        (2, json!(7)),
        (3, json!(null)),
        (4, json!({})),
    ] {
        raw.send(call(id, Some(bad.clone())).as_bytes()).await;
        let a = raw.answer().await.expect("answered");
        assert_eq!(a["id"], id, "{bad}: {a}");
        assert_eq!(a["error"]["code"], -32602, "{bad}: {a}");
        let message = a["error"]["message"].as_str().unwrap();
        assert!(message.contains("logLevel"), "{bad}: {a}");
    }
    // Unasked: the answer and nothing before it.
    raw.send(call(5, None).as_bytes()).await;
    let a = raw.answer().await.expect("answered");
    assert_eq!(a["id"], 5, "{a}");
    assert!(a["result"].is_object(), "{a}");
    // Asked: the refusal's log entry, then the answer.
    raw.send(call(6, Some(json!("info"))).as_bytes()).await;
    let m = raw.answer().await.expect("a log entry");
    assert_eq!(m["method"], "notifications/message", "{m}");
    assert_eq!(m["params"]["level"], "info", "{m}");
    assert!(
        m["params"]["data"]
            .as_str()
            .unwrap()
            .contains("strict allowlist refused"),
        "{m}"
    );
    let a = raw.answer().await.expect("answered");
    assert_eq!(a["id"], 6, "{a}");
    assert!(a["result"].is_object(), "{a}");
    drop(raw.stdin);
    raw.child.wait().await.unwrap();
}

/// An `initialize` request with id 1, as one line without its newline.
fn initialize_line(client: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": client, "version": "1"}}})
    .to_string()
}

/// A headless `execute` of `command` answering up to a megabyte of output, as one line.
fn headless_call(id: u32, command: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "memory_terminal_interactive",
        "arguments": {"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": command}, "output": {"max_bytes": 1_048_576}}}})
    .to_string()
}

/// Node-based clients (most desktop clients and editors) give the server Unix socket pairs
/// as stdin and stdout, not pipes; the server reads and writes those through its event loop.
/// Driven that way — separate sockets, and one socket for both directions — a call answers,
/// a large answer arrives whole while the client reads slowly, and closing the client's end
/// ends the server.
#[tokio::test]
async fn socket_pairs_as_stdio_work_like_pipes() {
    for shared in [false, true] {
        let (client_in, server_in) = std::os::unix::net::UnixStream::pair().unwrap();
        let (client_out, server_out) = if shared {
            (
                client_in.try_clone().unwrap(),
                server_in.try_clone().unwrap(),
            )
        } else {
            std::os::unix::net::UnixStream::pair().unwrap()
        };
        let mut cmd = server().command();
        cmd.stdin(Stdio::from(std::os::fd::OwnedFd::from(server_in)))
            .stdout(Stdio::from(std::os::fd::OwnedFd::from(server_out)));
        let mut child = cmd.spawn().unwrap();
        drop(cmd);
        client_out.set_nonblocking(true).unwrap();
        client_in.set_nonblocking(true).unwrap();
        let mut writer = tokio::net::UnixStream::from_std(client_in).unwrap();
        let mut lines =
            BufReader::new(tokio::net::UnixStream::from_std(client_out).unwrap()).lines();
        let mut ask = async |line: String| -> Value {
            writer
                .write_all(format!("{line}\n").as_bytes())
                .await
                .unwrap();
            let l = tokio::time::timeout(ANSWER_WITHIN, lines.next_line())
                .await
                .expect("answered in time")
                .unwrap()
                .expect("a line");
            serde_json::from_str(&l).unwrap()
        };
        let a = ask(initialize_line("sockets")).await;
        assert_eq!(a["id"], 1, "{a}");
        let a = ask(headless_call(2, "echo over-sockets")).await;
        assert_eq!(
            a["result"]["structuredContent"]["result"]["stdout"], "over-sockets\n",
            "shared={shared}: {a}"
        );
        // About a megabyte of answer: many writes on a non-blocking socket, none lost.
        let a = ask(headless_call(3, "head -c 700000 /dev/zero | tr '\\0' x")).await;
        let out = a["result"]["structuredContent"]["result"]["stdout"]
            .as_str()
            .unwrap();
        assert_eq!(out.len(), 700_000, "shared={shared}");
        assert!(out.bytes().all(|b| b == b'x'));
        drop(writer);
        drop(lines);
        let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
            .await
            .expect("the server ends when its client's sockets close")
            .unwrap();
        assert!(status.success(), "shared={shared}: {status:?}");
    }
}

/// A person may start the server by hand in a terminal (or a wrapper may give it one): its
/// stdin and stdout are then a terminal — its controlling terminal — which the server reads
/// and writes on blocking threads. Driven through the terminal in raw mode, calls answer, an
/// answer many times the terminal's buffer arrives whole, and when the terminal goes away
/// (its master closed, a hangup) the server ends and leaves no command behind.
#[test]
fn a_terminal_as_stdio_answers_and_a_hangup_ends_the_server() {
    const ANSWERS: usize = 4;
    use std::io::{BufRead, Write};
    use std::os::fd::AsRawFd;
    let pty = nix::pty::openpty(None, None).unwrap();
    // openpty leaves both ends inheritable; a terminal emulator keeps its master to itself.
    nix::fcntl::fcntl(
        pty.master.as_raw_fd(),
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
    )
    .unwrap();
    let mut raw = nix::sys::termios::tcgetattr(&pty.slave).unwrap();
    nix::sys::termios::cfmakeraw(&mut raw);
    nix::sys::termios::tcsetattr(&pty.slave, nix::sys::termios::SetArg::TCSANOW, &raw).unwrap();
    let slave = pty.slave.as_raw_fd();
    // The test's usual launch (its environment), started and waited on without the runtime.
    let mut launch = server().command();
    let cmd = launch.as_std_mut();
    cmd.stdin(Stdio::from(pty.slave.try_clone().unwrap()))
        .stdout(Stdio::from(pty.slave.try_clone().unwrap()))
        .stderr(Stdio::null());
    // SAFETY: setsid and TIOCSCTTY in the child before exec, both async-signal-safe: the
    // server is a session leader whose controlling terminal is the pty, as from a shell.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(cmd, move || {
            nix::unistd::setsid()?;
            if nix::libc::ioctl(slave, nix::libc::TIOCSCTTY as _, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    drop(pty.slave);
    let master = std::fs::File::from(pty.master);
    let mut writer = master.try_clone().unwrap();
    // The answers are read on their own thread: a blocking read with nothing to read would
    // otherwise hang the test instead of failing it. It reads the four answers expected and
    // then lets its end of the terminal go.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(master).lines().take(ANSWERS) {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut ask = |line: String| -> Value {
        writer.write_all(format!("{line}\n").as_bytes()).unwrap();
        let l = rx.recv_timeout(ANSWER_WITHIN).expect("answered in time");
        serde_json::from_str(&l).unwrap_or_else(|e| panic!("{e}: {l:.300}"))
    };
    let a = ask(initialize_line("tty"));
    assert_eq!(a["id"], 1, "{a}");
    let a = ask(headless_call(2, "echo over-a-terminal"));
    assert_eq!(
        a["result"]["structuredContent"]["result"]["stdout"], "over-a-terminal\n",
        "{a}"
    );
    let a = ask(headless_call(3, "head -c 300000 /dev/zero | tr '\\0' x"));
    let out = a["result"]["structuredContent"]["result"]["stdout"]
        .as_str()
        .unwrap();
    assert_eq!(out.len(), 300_000);
    assert!(out.bytes().all(|b| b == b'x'));
    // A command still running when the terminal goes away must not outlive the server. (It
    // is found by its command line: `$!` is a pid in the session's own namespace.)
    let tag = unique_sleep();
    let a = ask(headless_call(4, &format!("sleep {tag} & echo started")));
    assert_eq!(
        a["result"]["structuredContent"]["result"]["stdout"], "started\n",
        "{a}"
    );
    assert!(
        !pids_with_arg(&tag).is_empty(),
        "the background process runs while the server does"
    );
    drop(writer);
    std::thread::sleep(Duration::from_millis(100));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server outlived its terminal"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // A hangup ends the server as it ends anything else started from that terminal.
    use std::os::unix::process::ExitStatusExt;
    assert!(
        status.success() || status.signal() == Some(nix::libc::SIGHUP),
        "{status:?}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !pids_with_arg(&tag).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "a command's background process outlived the server's terminal"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A client that sends two command lines for one terminal in one write, without waiting for
/// either answer: they run one at a time — the second refused as busy while the first runs.
/// Before, both were typed — the second while the first waited for the line editor — and ran
/// in the opposite order.
#[tokio::test]
async fn two_command_lines_for_one_terminal_in_one_write_run_one_at_a_time() {
    let mut raw = Raw::start().await;
    let call = |id: &str, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "memory_terminal_interactive", "arguments": args}})
        .to_string()
    };
    raw.send(call("open", open_terminal()).as_bytes()).await;
    let opened = raw.answer().await.expect("the terminal opens");
    let id = opened["result"]["structuredContent"]["identity"]["terminal_id"]
        .as_str()
        .unwrap()
        .to_string();
    let both = format!(
        "{}\n{}",
        call("a", terminal_command(&id, "sleep 0.5; echo first")),
        call("b", terminal_command(&id, "echo second"))
    );
    raw.send(both.as_bytes()).await;
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let a = raw.answer().await.expect("both calls answered");
        answers.push(a["result"]["structuredContent"].clone());
    }
    let ran: Vec<&Value> = answers.iter().filter(|r| r["success"] == true).collect();
    let busy = answers
        .iter()
        .filter(|r| r["error"]["details"]["busy"] == true)
        .count();
    // The two calls are handled concurrently, so either one may reach the terminal first; when
    // that one has already finished as the other arrives (`echo second` takes under a
    // millisecond), both run. Whatever the order, each runs alone: its output is its own and
    // the two commands' ranges of the transcript do not overlap.
    assert_eq!(ran.len() + busy, 2, "{answers:#?}");
    assert!(!ran.is_empty(), "{answers:#?}");
    for r in &ran {
        let line = r["result"]["command"]["command_line"].as_str().unwrap();
        let expected = if line.ends_with("first") {
            "first\n"
        } else {
            "second\n"
        };
        assert_eq!(r["result"]["output"], expected, "{answers:#?}");
    }
    if let [x, y] = ran.as_slice() {
        let range = |r: &Value| {
            let c = &r["result"]["command"];
            (
                c["output_start"].as_u64().unwrap(),
                c["output_end"].as_u64().unwrap(),
            )
        };
        let ((xs, xe), (ys, ye)) = (range(x), range(y));
        assert!(
            xe <= ys || ye <= xs,
            "the commands overlapped: {answers:#?}"
        );
    }
    raw.child.kill().await.unwrap();
}
