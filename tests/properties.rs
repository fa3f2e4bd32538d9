//! Property tests: whatever a client sends, the answer is a success or a `PM_TERM_*` payload
//! that matches the schemas — never a panic, a hang or a protocol error.
//!
//! Inputs are generated from the contract's own vocabulary (field names, enum values, ids,
//! numbers on and past every limit) mixed with arbitrary keys and strings, so most cases get
//! past the first check and exercise the coupling rules behind it. `PROPTEST_CASES` scales
//! every test (default below); failures print the minimal request that broke it.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::time::Duration;

use itmcp::contract::{self, ErrorCode, Phase, response};
use itmcp::policy::{Policy, PolicyInputs};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

/// Cases per library-level property when PROPTEST_CASES is unset.
const LIBRARY_CASES: u32 = 4000;
/// Requests sent through the real binary when PROPTEST_CASES is unset (each one may run a
/// harmless command or open a terminal, so fewer).
const BINARY_CASES: u32 = 250;

const ACTIONS: &[&str] = &[
    "execute",
    "read_output",
    "terminate",
    "list",
    "run",
    "kill",
    "send",
    "close",
    "create",
    "launch",
    "EXECUTE",
    "",
];

const KEYS: &[&str] = &[
    "action",
    "invocation",
    "mode",
    "intent",
    "correlation",
    "request_id",
    "trace_id",
    "client_request_id",
    "runtime",
    "workspace_id",
    "cwd",
    "timeout_ms",
    "wait_ms",
    "adapter_override",
    "execution",
    "command",
    "args",
    "env",
    "input",
    "keys",
    "wait_for",
    "name",
    "shell",
    "cols",
    "rows",
    "target",
    "session_id",
    "terminal_id",
    "output",
    "cursor",
    "stdout_cursor",
    "stderr_cursor",
    "max_bytes",
    "tail",
    "view",
    "encoding",
    "compat",
    "legacy_action",
    "caller_surface",
    "timeout",
];

/// Strings a request may carry. Every one is harmless if it reaches a shell: the binary test
/// draws command lines only from here, never from random text.
const WORDS: &[&str] = &[
    "headless",
    "interactive",
    "open_only",
    "execute_command",
    "local",
    "bundled",
    "container_bridge",
    "auto",
    "raw",
    "text",
    "screen",
    "commands",
    "utf8",
    "base64",
    "server",
    "chat_button",
    "true",
    "echo",
    "echo fuzz",
    "printf '%s\\n' a b",
    "pwd",
    "exit 3",
    "cat /dev/null",
    "x\n",
    "\u{3}",
    "ctrl-c",
    "enter",
    "up",
    "f13",
    "fuzz$",
    "[",
    "bash",
    "zsh",
    "sh",
    "/bin/sh",
    "/nonexistent/shell",
    "/tmp",
    "relative/dir",
    "/nonexistent",
    "ses_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "term_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "req_fuzz",
    "trace_fuzz",
    "PATH",
    "A=B",
    "",
    " ",
    "\u{0}",
    "é",
    "-n",
    "--",
    // Blocked and warned, but harmless even if they ran: no such device; not a git repo.
    "mkfs.ext4 /nonexistent-fuzz-device",
    "git clean -fdx",
];

fn number() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        json!(-1),
        json!(0),
        json!(1),
        json!(2),
        json!(9),
        json!(50),
        json!(200),
        json!(1.5),
        json!(1_048_577),
        json!(99_999_999_999u64),
        json!(u64::MAX),
        json!(-1e300),
        json!("100"),
    ])
}

fn word() -> impl Strategy<Value = String> {
    prop::sample::select(WORDS).prop_map(str::to_string)
}

fn key(arbitrary: bool) -> BoxedStrategy<String> {
    if arbitrary {
        prop_oneof![
            8 => prop::sample::select(KEYS).prop_map(str::to_string),
            1 => "[a-zA-Z_]{0,10}",
            1 => ".{0,12}",
        ]
        .boxed()
    } else {
        prop::sample::select(KEYS).prop_map(str::to_string).boxed()
    }
}

/// Scalars: vocabulary always; random text only when `arbitrary` (never through the binary).
fn leaf(arbitrary: bool) -> BoxedStrategy<Value> {
    let base = prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        3 => number(),
        5 => word().prop_map(Value::String),
    ];
    if arbitrary {
        prop_oneof![4 => base, 1 => ".{0,40}".prop_map(Value::String)].boxed()
    } else {
        base.boxed()
    }
}

fn value(arbitrary: bool) -> BoxedStrategy<Value> {
    leaf(arbitrary)
        .prop_recursive(3, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map(key(arbitrary), inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
        .boxed()
}

/// Fields of each canonical group, as the schema names them.
const GROUPS: &[(&str, &[&str])] = &[
    ("invocation", &["mode", "intent"]),
    (
        "correlation",
        &["request_id", "trace_id", "client_request_id"],
    ),
    (
        "runtime",
        &[
            "cwd",
            "timeout_ms",
            "wait_ms",
            "adapter_override",
            "workspace_id",
        ],
    ),
    (
        "execution",
        &[
            "command", "args", "env", "input", "keys", "wait_for", "name", "shell", "cols", "rows",
        ],
    ),
    ("target", &["session_id", "terminal_id"]),
    (
        "output",
        &[
            "cursor",
            "stdout_cursor",
            "stderr_cursor",
            "max_bytes",
            "tail",
            "view",
            "encoding",
        ],
    ),
    ("compat", &["legacy_action", "caller_surface"]),
];

/// Values a field usually gets: valid ones mostly, then values just past a limit or of the
/// wrong kind, then anything at all.
fn field_value(field: &'static str, arbitrary: bool) -> BoxedStrategy<Value> {
    fn s(vals: &[&str]) -> Vec<Value> {
        vals.iter().map(|v| json!(v)).collect()
    }
    fn n(vals: &[i64]) -> Vec<Value> {
        vals.iter().map(|v| json!(v)).collect()
    }
    let (valid, edge): (BoxedStrategy<Value>, Vec<Value>) = match field {
        "mode" => (
            prop::sample::select(s(&["headless", "interactive"])).boxed(),
            s(&["gui", "HEADLESS"]),
        ),
        "intent" => (
            prop::sample::select(s(&["execute_command", "open_only"])).boxed(),
            s(&["run"]),
        ),
        "request_id" | "client_request_id" => (
            prop::sample::select(s(&["req_fuzz", "client-7"])).boxed(),
            s(&[""]),
        ),
        "trace_id" => (Just(json!("trace_fuzz")).boxed(), s(&["", "x\n"])),
        "cwd" => (
            prop::sample::select(s(&["/tmp", "."])).boxed(),
            s(&["relative/dir", "/nonexistent", ""]),
        ),
        "timeout_ms" | "timeout" => (
            prop::sample::select(n(&[100, 1000, 3000])).boxed(),
            n(&[0, -5, 86_400_001]),
        ),
        "wait_ms" => (
            prop::sample::select(n(&[0, 50, 200])).boxed(),
            n(&[-1, 600_001]),
        ),
        "adapter_override" => (
            prop::sample::select(s(&["local", "local", "auto", "bundled"])).boxed(),
            s(&["container_bridge", "gui"]),
        ),
        "workspace_id" => (Just(json!("ws1")).boxed(), s(&[""])),
        "command" => (
            prop::sample::select(s(&[
                "true",
                "echo fuzz",
                "printf '%s\\n' a b",
                "pwd",
                "exit 3",
                "cat",
                "echo",
            ]))
            .boxed(),
            // Blocked and warned, yet harmless if they ran: no such device, no git repo.
            s(&["", "mkfs.ext4 /nonexistent-fuzz-device", "git clean -fdx"]),
        ),
        "args" => (
            prop::collection::vec(prop::sample::select(s(&["fuzz", "-n", "--", "é"])), 0..3)
                .prop_map(Value::Array)
                .boxed(),
            vec![json!([1]), json!("fuzz")],
        ),
        "env" => (
            prop::collection::btree_map(
                prop::sample::select(vec!["FUZZ", "LANG"]),
                prop::sample::select(s(&["1", "C.UTF-8", ""])),
                0..3,
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
            .boxed(),
            vec![json!({"A=B": "1"}), json!({"": "1"}), json!({"X": 1})],
        ),
        "input" => (
            prop::sample::select(s(&["echo hi\n", "x\n", "\u{3}", "true\r"])).boxed(),
            s(&[""]),
        ),
        "keys" => (
            prop::collection::vec(
                prop::sample::select(s(&["enter", "ctrl-c", "up", "tab", "f5"])),
                1..3,
            )
            .prop_map(Value::Array)
            .boxed(),
            vec![json!([]), json!(["nonsense"])],
        ),
        "wait_for" => (
            prop::sample::select(s(&["\\$ $", "fuzz"])).boxed(),
            s(&["[", ""]),
        ),
        "name" => (Just(json!("fuzz")).boxed(), s(&[""])),
        "shell" => (
            prop::sample::select(s(&["bash", "sh", "zsh"])).boxed(),
            s(&["/nonexistent/shell", "/bin/sh", "fish-ish"]),
        ),
        "cols" => (
            prop::sample::select(n(&[80, 120, 10])).boxed(),
            n(&[9, 1001]),
        ),
        "rows" => (prop::sample::select(n(&[24, 40, 2])).boxed(), n(&[1, 1001])),
        "session_id" => (
            Just(json!("ses_01ARZ3NDEKTSV4RRFFQ69G5FAV")).boxed(),
            s(&["bogus", "term_01ARZ3NDEKTSV4RRFFQ69G5FAV"]),
        ),
        "terminal_id" => (
            Just(json!("term_01ARZ3NDEKTSV4RRFFQ69G5FAV")).boxed(),
            s(&["bogus", "ses_01ARZ3NDEKTSV4RRFFQ69G5FAV"]),
        ),
        "cursor" | "stdout_cursor" | "stderr_cursor" => (
            prop::sample::select(vec![json!(0), json!(3), json!(1u64 << 40)]).boxed(),
            n(&[-1]),
        ),
        "max_bytes" => (
            prop::sample::select(n(&[1, 64, 65536])).boxed(),
            n(&[0, 1_048_577]),
        ),
        "tail" => (any::<bool>().prop_map(Value::Bool).boxed(), s(&["yes"])),
        "view" => (
            prop::sample::select(s(&["raw", "text", "screen", "commands"])).boxed(),
            s(&["html"]),
        ),
        "encoding" => (
            prop::sample::select(s(&["utf8", "base64"])).boxed(),
            s(&["latin1"]),
        ),
        "legacy_action" => (
            prop::sample::select(s(&["run", "kill", "send", "close", "create"])).boxed(),
            s(&["exec"]),
        ),
        "caller_surface" => (
            prop::sample::select(s(&["server", "extension", "dashboard", "chat_button"])).boxed(),
            s(&["cli"]),
        ),
        _ => (word().prop_map(Value::String).boxed(), vec![json!(null)]),
    };
    prop_oneof![
        30 => valid,
        2 => prop::sample::select(edge),
        1 => value(arbitrary),
    ]
    .boxed()
}

fn group(fields: &'static [&'static str], arbitrary: bool) -> BoxedStrategy<Map<String, Value>> {
    let chosen: Vec<_> = fields
        .iter()
        .map(|f| {
            let p = match *f {
                "mode" | "intent" | "command" => 0.9,
                "input" | "keys" | "wait_for" | "shell" | "args" | "env" => 0.1,
                _ => 0.2,
            };
            prop::option::weighted(p, field_value(f, arbitrary))
        })
        .collect();
    (
        chosen,
        prop::collection::btree_map(key(arbitrary), value(arbitrary), 0..2),
        prop::bool::weighted(0.03),
    )
        .prop_map(move |(values, extra, with_extra)| {
            let mut m = Map::new();
            // One group per request sometimes carries an unknown key.
            for (f, v) in fields.iter().zip(values) {
                if let Some(v) = v {
                    m.insert((*f).to_string(), v);
                }
            }
            if with_extra {
                m.extend(extra);
            }
            m
        })
        .boxed()
}

/// A request shaped like the contract: an action, then any of its groups with typed fields.
/// Most requests are then fitted to their action (the groups it takes, the target it needs),
/// so the rules past the coupling checks get exercised; the rest stay as generated, and
/// break those rules in every combination.
fn request(arbitrary: bool) -> BoxedStrategy<Value> {
    let groups: Vec<_> = GROUPS
        .iter()
        .map(|(name, fields)| {
            let p = match *name {
                "invocation" => 0.9,
                "compat" | "correlation" => 0.15,
                _ => 0.4,
            };
            prop::option::weighted(p, group(fields, arbitrary))
        })
        .collect();
    let flat_fields: &'static [&'static str] = &[
        "command",
        "args",
        "cwd",
        "timeout",
        "session_id",
        "terminal_id",
        "name",
        "env",
        "workspace_id",
    ];
    (
        prop::option::weighted(
            0.97,
            prop_oneof![
                8 => prop::sample::select(&ACTIONS[..4]),
                2 => prop::sample::select(&ACTIONS[4..9]),
                1 => prop::sample::select(&ACTIONS[9..]),
            ],
        ),
        groups,
        group(flat_fields, arbitrary),
        prop::bool::weighted(0.75),
    )
        .prop_map(|(action, groups, flat, fit)| {
            let mut m = Map::new();
            for ((name, _), g) in GROUPS.iter().zip(groups) {
                if let Some(g) = g {
                    m.insert((*name).into(), Value::Object(g));
                }
            }
            let legacy = action.is_some_and(|a| ACTIONS[4..9].contains(&a));
            if legacy || !fit {
                m.extend(flat);
            }
            if let Some(a) = action {
                m.insert("action".into(), json!(a));
                if fit {
                    fit_to_action(a, &mut m);
                }
            }
            Value::Object(m)
        })
        .boxed()
}

/// Keep the groups `action` takes, and give it what it needs.
fn fit_to_action(action: &str, m: &mut Map<String, Value>) {
    let keep: &[&str] = match action {
        "execute" => &[
            "invocation",
            "execution",
            "runtime",
            "target",
            "correlation",
            "compat",
        ],
        "read_output" => &["target", "output", "runtime", "correlation"],
        "terminate" => &["target", "runtime", "correlation"],
        "list" => &["correlation", "runtime"],
        _ => return,
    };
    m.retain(|k, _| k == "action" || keep.contains(&k.as_str()));
    m.remove("compat");
    let obj = |m: &mut Map<String, Value>, k: &str| {
        if !m.get(k).is_some_and(Value::is_object) {
            m.insert(k.into(), json!({}));
        }
    };
    match action {
        "execute" => {
            obj(m, "invocation");
            let inv = &m["invocation"];
            let interactive = inv["mode"] == json!("interactive");
            let open_only = inv["intent"] == json!("open_only");
            if open_only {
                m["invocation"]["mode"] = json!("interactive");
                if let Some(e) = m.get_mut("execution").and_then(Value::as_object_mut) {
                    e.retain(|k, _| ["shell", "cols", "rows", "env", "name"].contains(&k.as_str()));
                }
                m.remove("target");
            } else {
                m["invocation"]["intent"] = json!("execute_command");
                if !interactive {
                    m["invocation"]["mode"] = json!("headless");
                    m.remove("target");
                }
                obj(m, "execution");
                let e = &mut m["execution"];
                let raw_input =
                    interactive && (e.get("input").is_some() || e.get("keys").is_some());
                if !raw_input && e.get("command").is_none() {
                    e["command"] = json!("true");
                }
            }
        }
        "read_output" | "terminate" => {
            obj(m, "target");
            let t = &m["target"];
            if t.get("session_id").is_none() && t.get("terminal_id").is_none() {
                // Either kind, varied by the request's shape.
                let salt = m.values().map(|v| v.to_string().len()).sum::<usize>();
                if salt % 2 == 0 {
                    m["target"]["session_id"] = json!("ses_01ARZ3NDEKTSV4RRFFQ69G5FAV");
                } else {
                    m["target"]["terminal_id"] = json!("term_01ARZ3NDEKTSV4RRFFQ69G5FAV");
                }
            }
        }
        _ => {}
    }
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        // Failures print the shrunk input; no regression files are written into tests/.
        failure_persistence: None,
        ..Config::default()
    }
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The payload of a rejection: valid against error.schema.json, with the strategy of
/// its code, correlation ids present.
fn check_rejection(payload: &Value) -> Result<(), TestCaseError> {
    let violations = contract::schema::payload_violations(payload);
    prop_assert!(violations.is_empty(), "{violations:?}\n{payload:#}");
    let code = payload["error"]["code"].as_str().unwrap_or_default();
    let parsed = ErrorCode::from_code_str(code);
    prop_assert!(parsed.is_some(), "unknown code {code}");
    let strategy = parsed.map(|c| c.strategy().as_str()).unwrap_or_default();
    prop_assert_eq!(payload["fallback"]["strategy"].as_str(), Some(strategy));
    prop_assert!(payload["correlation"]["request_id"].is_string());
    prop_assert!(payload["correlation"]["trace_id"].is_string());
    Ok(())
}

static ACCEPTED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn validate_everything(input: &Value) -> Result<(), TestCaseError> {
    for phase in [Phase::A, Phase::B, Phase::C] {
        match contract::parse(input, phase) {
            Ok(req) => {
                ACCEPTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // An accepted request builds an envelope whose success payload (identity,
                // resolved mode and correlation taken from the request) is valid against
                // response.schema.json, whatever the request carried. The results the
                // handlers build are checked by the server run below.
                let env = contract::Envelope::from_request(&req);
                let empty = contract::Outcome::List(contract::result::Listing {
                    running: false,
                    items: Vec::new(),
                    total: 0,
                    next_cursor: None,
                    sandbox: None,
                });
                let ok = response::success(&env, empty);
                let violations = contract::schema::payload_violations(&ok);
                prop_assert!(violations.is_empty(), "{violations:?}\n{ok:#}");
                // The caller's trace id survives unchanged.
                if let Some(t) = input["correlation"]["trace_id"].as_str()
                    && t == "trace_fuzz"
                {
                    prop_assert_eq!(req.correlation.trace_id.as_str(), t);
                }
            }
            Err(rej) => check_rejection(&response::failure(&rej.envelope, &rej.error))?,
        }
    }
    Ok(())
}

#[test]
fn contract_answers_every_shaped_request() {
    contract::schema::init().unwrap();
    let mut runner = TestRunner::new(config(cases(LIBRARY_CASES)));
    let before = ACCEPTED.load(std::sync::atomic::Ordering::Relaxed);
    runner
        .run(&request(true), |input| validate_everything(&input))
        .unwrap();
    // The generator must reach past the first checks, or the rules behind them go untested.
    let accepted = ACCEPTED.load(std::sync::atomic::Ordering::Relaxed) - before;
    assert!(
        accepted > cases(LIBRARY_CASES) / 20,
        "only {accepted} accepted"
    );
}

#[test]
fn contract_answers_every_json_value() {
    contract::schema::init().unwrap();
    let mut runner = TestRunner::new(config(cases(LIBRARY_CASES)));
    runner
        .run(&value(true), |input| validate_everything(&input))
        .unwrap();
}

/// Shell-like text built from the tokens that make parsing hard.
fn shell_text() -> BoxedStrategy<String> {
    let token = prop_oneof![
        4 => prop::sample::select(vec![
            "rm", "-rf", "/", "~", "*", "sudo", "env", "A=1", "bash", "-c", "sh", "zsh", "xargs",
            "find", "-exec", "{}", "\\;", "+", "timeout", "5", "nice", "-n", "nohup", "command",
            "exec", "watch", "flock", "|", "||", "&&", ";", "&", "(", ")", "{", "}", "$(", "`",
            "'", "\"", "<<EOF", "<<-'X'", ">", ">>", "2>&1", "/dev/sda", "of=/dev/sda", "dd",
            "mkfs", "git", "push", "--force", "curl", "x", "\n", "EOF", "#", "\\", "$", "${", "!",
            "powershell", "-Command", "Remove-Item", "-Recurse", "C:\\", "format", "c:",
            ":(){", ":|:&", "};:", "chmod", "-R", "777", "shutdown",
        ])
        .prop_map(str::to_string),
        1 => ".{0,8}",
    ];
    prop::collection::vec(token, 0..24)
        .prop_map(|t| t.join(" "))
        .boxed()
}

#[test]
fn policy_decides_every_line() {
    let policy = Policy::load(&PolicyInputs::default()).unwrap().policy;
    let mut runner = TestRunner::new(config(cases(LIBRARY_CASES)));
    runner
        .run(&shell_text(), |line| {
            let d = policy.evaluate(&line, Some("/tmp"));
            // A blocked or warned decision always names its rule and a hint.
            if let Some(f) = d.deciding() {
                prop_assert!(!f.rule.is_empty());
                prop_assert!(!itmcp::policy::safety_hint(f.rule).is_empty());
            }
            let _ = policy.evaluate_input(&line, None);
            let argv: Vec<String> = line.split(' ').map(str::to_string).collect();
            let _ = policy.evaluate_argv(&argv[0], &argv[1..], None);
            Ok(())
        })
        .unwrap();
}

/// Replace the placeholder ids with ids the server gave out (when there are any).
fn substitute_ids(v: &mut Value, known: &[Vec<String>; 2], salt: usize) {
    match v {
        Value::String(s) => {
            let slot = match s.as_str() {
                "ses_01ARZ3NDEKTSV4RRFFQ69G5FAV" => 0,
                "term_01ARZ3NDEKTSV4RRFFQ69G5FAV" => 1,
                _ => return,
            };
            if !known[slot].is_empty() {
                *s = known[slot][salt % known[slot].len()].clone();
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| substitute_ids(x, known, salt)),
        Value::Object(m) => m.values_mut().for_each(|x| substitute_ids(x, known, salt)),
        _ => {}
    }
}

/// Processes whose environment carries `needle` (the tag the test gives the server).
fn pids_with_env(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ"))
            && env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes())
        {
            out.push(pid);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_answers_every_request_and_leaves_nothing() {
    let tag = format!("ITMCP_PROPTEST_TAG={}", common::unique("props"));
    let (tag_key, tag_value) = tag.split_once('=').unwrap();
    let server = common::server()
        .envs(&[
            (tag_key, tag_value),
            ("PM_TERM_DEFAULT_WAIT_MS", "300"),
            ("PM_TERM_INTERACTIVE_SHELL", "bash"),
            ("PM_TERM_NO_USER_RC", "1"),
            // Nothing waits for a person; warned interactive commands are declined, not run.
            ("PM_TERM_APPROVAL_DEFAULT", "decline"),
            ("PM_TERM_MAX_TERMINALS", "12"),
            ("PM_TERM_MAX_SESSIONS", "12"),
            ("PM_INTERACTIVE_TERMINAL_SPAWN_TIMEOUT_MS", "3000"),
        ])
        .start()
        .await;

    // Generate first (proptest's runner is synchronous), then send each through the client.
    let mut runner = TestRunner::new(config(cases(BINARY_CASES)));
    let strategy = request(false);
    let mut requests: Vec<Value> = Vec::new();
    for _ in 0..cases(BINARY_CASES) {
        let tree = strategy.new_tree(&mut runner).unwrap();
        requests.push(proptest::strategy::ValueTree::current(&tree));
    }
    let mut successes = 0;
    let mut seen = std::collections::BTreeMap::<String, u32>::new();
    // Ids the server handed out, so later requests follow up on real sessions and terminals.
    let mut known: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    for (i, req) in requests.iter_mut().enumerate() {
        substitute_ids(req, &known, i);
        let answer = tokio::time::timeout(Duration::from_secs(30), server.call_result(req.clone()))
            .await
            .unwrap_or_else(|_| panic!("no answer within 30 s to {req:#}"));
        let payload = common::check_result(&answer);
        let outcome = match payload["success"] == json!(true) {
            true => format!(
                "{} {} ok",
                payload["action"].as_str().unwrap_or("?"),
                payload["resolved"]["mode"].as_str().unwrap_or("-")
            ),
            false => common::code(&payload).to_string(),
        };
        *seen.entry(outcome).or_default() += 1;
        if payload["success"] == json!(true) {
            successes += 1;
            for (slot, field) in ["session_id", "terminal_id"].iter().enumerate() {
                if let Some(id) = payload["identity"][field].as_str()
                    && !known[slot].iter().any(|k| k == id)
                {
                    known[slot].push(id.to_string());
                }
            }
        } else if let Err(e) = check_rejection(&payload) {
            panic!("{e}\nrequest: {req:#}");
        }
    }
    eprintln!("outcomes of {} requests: {seen:?}", requests.len());
    // Still serving after all of that.
    let listed = server.call(json!({"action": "list"})).await;
    assert_eq!(listed["success"], json!(true));
    assert!(
        successes >= requests.len() / 20,
        "only {successes} of {} generated requests succeeded",
        requests.len()
    );

    server.stop().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = pids_with_env(&tag);
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "processes left behind: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
