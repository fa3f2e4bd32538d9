//! Headless execution through the real binary and rmcp's client: every action, the legacy
//! run/kill aliases, timeouts, process-tree kills, stdin, huge and non-UTF-8 output,
//! concurrency, cursors, progress, a call its client cancels, and cleanup at server exit.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::time::{Duration, Instant};

use base64::Engine;
use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn tool_is_listed_with_schemas_and_annotations() {
    let s = server().start().await;
    let tools = s.client.list_all_tools().await.unwrap();
    let t = tools
        .iter()
        .find(|t| t.name == "memory_terminal_interactive")
        .expect("tool listed");
    let input = serde_json::to_value(t.input_schema.as_ref()).unwrap();
    assert_eq!(input["type"], "object");
    // Every field a model fills in is described (correlation's optional ids in one line).
    assert!(input["properties"]["correlation"]["description"].is_string());
    for group in ["invocation", "runtime", "execution", "target", "output"] {
        assert!(
            input["properties"][group]["description"].is_string(),
            "{group}"
        );
        for (k, v) in input["properties"][group]["properties"]
            .as_object()
            .unwrap()
        {
            assert!(
                v["description"].is_string(),
                "{group}.{k} has a description"
            );
        }
    }
    assert!(t.output_schema.is_some());
    let a = t.annotations.as_ref().unwrap();
    assert_eq!(a.read_only_hint, Some(false));
    assert_eq!(a.destructive_hint, Some(true));
    s.stop().await;
}

/// What a model pays for the tools on every turn: the whole `tools/list` answer, as JSON.
const TOOLS_LIST_BUDGET: usize = 16_000;

#[tokio::test]
async fn the_tool_list_stays_within_its_budget_and_advertises_canonical_fields_only() {
    let s = server().start().await;
    let tools = s.client.list_all_tools().await.unwrap();
    let text = serde_json::to_string(&json!({ "tools": tools })).unwrap();
    eprintln!("tools/list: {} characters", text.len());
    assert!(
        text.len() <= TOOLS_LIST_BUDGET,
        "tools/list is {} characters, over its budget of {TOOLS_LIST_BUDGET}",
        text.len()
    );
    let schema = |name: &str| {
        let t = tools.iter().find(|t| t.name == name).expect("tool listed");
        serde_json::to_value(t.input_schema.as_ref()).unwrap()
    };
    let interactive = schema("memory_terminal_interactive");
    let strict = schema("memory_terminal");
    assert_eq!(
        interactive["properties"]["action"]["enum"],
        json!(["execute", "read_output", "terminate", "list"])
    );
    assert_eq!(
        interactive["properties"]["invocation"]["properties"]["mode"]["enum"],
        json!(["headless", "interactive"])
    );
    assert!(interactive["properties"]["invocation"]["properties"]["intent"]["enum"].is_array());
    assert!(
        interactive["properties"].get("cwd").is_none(),
        "legacy keys not advertised"
    );
    assert_eq!(
        strict["properties"]["invocation"]["properties"]["mode"]["enum"],
        json!(["headless"])
    );
    assert!(
        strict["properties"]["execution"]["properties"]
            .get("keys")
            .is_none()
    );
    assert!(strict.to_string().len() < interactive.to_string().len());
    // Legacy flat keys are still accepted, though no longer advertised.
    let p = s
        .call(json!({"action": "run", "command": "echo legacy"}))
        .await;
    assert_eq!(p["result"]["stdout"], "legacy\n", "{p}");
    s.stop().await;
}

#[tokio::test]
async fn execute_returns_exit_code_and_separate_streams() {
    let s = server().start().await;
    let p = s.call(headless("echo out; echo err >&2; exit 7")).await;
    assert_eq!(p["success"], true);
    assert_eq!(p["status"], "completed");
    let r = &p["result"];
    assert_eq!(r["stdout"], "out\n");
    assert_eq!(r["stderr"], "err\n");
    assert_eq!(r["exit_code"], 7);
    assert_eq!(r["running"], false);
    assert_eq!(r["authorization"], "allowed");
    assert!(
        p["identity"]["session_id"]
            .as_str()
            .unwrap()
            .starts_with("ses_")
    );
    assert!(
        p["correlation"]["request_id"]
            .as_str()
            .unwrap()
            .starts_with("req_")
    );
    s.stop().await;
}

#[tokio::test]
async fn args_are_argv_without_a_shell_and_env_and_cwd_apply() {
    let s = server().start().await;
    let p = s
        .call(json!({
            "action": "execute",
            "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": "printf", "args": ["%s|%s|%s", "a b", "$HOME", "'q'"], "env": {"NODE_ENV": "v1"}},
        }))
        .await;
    assert_eq!(p["result"]["stdout"], "a b|$HOME|'q'");
    let dir = std::env::temp_dir();
    let p = s
        .call(json!({
            "action": "execute",
            "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": "echo $NODE_ENV; pwd", "env": {"NODE_ENV": "v1"}},
            "runtime": {"cwd": dir.to_str().unwrap()},
        }))
        .await;
    let canonical = std::fs::canonicalize(&dir).unwrap();
    assert_eq!(
        p["result"]["stdout"],
        format!("v1\n{}\n", canonical.display())
    );
    s.stop().await;
}

#[tokio::test]
async fn missing_cwd_and_missing_program_are_clear_payload_errors() {
    let s = server().start().await;
    let mut req = headless("pwd");
    req["runtime"] = json!({"cwd": "/definitely/not/here"});
    let p = s.call(req).await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD");
    assert!(
        p["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not exist")
    );
    assert_eq!(p["fallback"]["strategy"], "reject_no_retry");
    let p = s
        .call(json!({
            "action": "execute",
            "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": "/no/such/program", "args": []},
        }))
        .await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD");
    // A missing program behind a shell is the shell's own 127.
    let p = s.call(headless("no-such-program-xyz")).await;
    assert_eq!(p["result"]["exit_code"], 127);
    s.stop().await;
}

/// A program started without a shell (nothing in between resets signals) begins with no
/// signal blocked and none of the usual ones ignored: the supervisor blocks the signals it
/// reads itself, and a blocked mask would pass through exec to every program and job.
#[tokio::test]
async fn programs_start_with_no_signal_blocked_or_ignored() {
    // The check below signals its own process from python, which the policy warns about.
    let s = server()
        .env("PM_TERM_APPROVAL_DEFAULT", "approve")
        .start()
        .await;
    for _ in 0..3 {
        let p = s
            .call(json!({
                "action": "execute",
                "invocation": {"mode": "headless", "intent": "execute_command"},
                "execution": {"command": "grep", "args": ["-E", "^Sig(Blk|Ign)", "/proc/self/status"]},
            }))
            .await;
        let out = p["result"]["stdout"].as_str().unwrap().to_string();
        let mask = |name: &str| {
            let line = out.lines().find(|l| l.starts_with(name)).unwrap();
            u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
        };
        assert_eq!(mask("SigBlk:"), 0, "{out}");
        // HUP INT QUIT USR1 USR2 PIPE TERM CHLD: none ignored.
        for sig in [1, 2, 3, 10, 12, 13, 15, 17] {
            assert_eq!(mask("SigIgn:") & (1 << (sig - 1)), 0, "signal {sig}: {out}");
        }
    }
    // And a signal sent to it arrives: `kill -TERM` of its own pid ends it with SIGTERM.
    let p = s
        .call(json!({
            "action": "execute",
            "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": "python3", "args": ["-c", "import os, signal, time; os.kill(os.getpid(), signal.SIGTERM); time.sleep(5)"]},
        }))
        .await;
    assert_eq!(p["result"]["running"], false, "{p:#}");
    assert_eq!(p["result"]["signal"], "SIGTERM", "{p:#}");
    s.stop().await;
}

#[tokio::test]
async fn stdin_is_closed_so_readers_get_eof() {
    let s = server().start().await;
    let t = Instant::now();
    let p = s.call(headless("cat; read x; echo \"got:[$x] $?\"")).await;
    assert_eq!(p["result"]["stdout"], "got:[] 1\n");
    assert_eq!(p["result"]["running"], false);
    let p = s.call(headless("python3 -c 'input()'")).await;
    assert_eq!(p["result"]["running"], false);
    assert_ne!(p["result"]["exit_code"], 0);
    assert!(p["result"]["stderr"].as_str().unwrap().contains("EOFError"));
    assert!(t.elapsed() < Duration::from_secs(4));
    s.stop().await;
}

/// `git commit` without `-m`, as agents type it: git starts an editor for the message, and
/// headless there is no terminal for one — vim printed its screen as escape codes into the
/// output, waited two seconds and left. Git's editor is `true` unless the server's own
/// environment names one: the commit stops at once with git's own message. An operator's
/// editor (one that needs no terminal) is still the one git starts.
#[tokio::test]
async fn git_starts_no_terminal_editor_headless_unless_the_operator_names_one() {
    let repo = scratch_dir();
    let init = format!(
        "cd {} && git init -q && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m first",
        repo.display()
    );
    let commit = format!(
        "cd {} && git -c user.name=a -c user.email=a@b commit --allow-empty",
        repo.display()
    );
    let s = server().start().await;
    assert_eq!(s.call(headless(&init)).await["result"]["exit_code"], 0);
    let r = s.call(headless(&commit)).await;
    assert_ne!(r["result"]["exit_code"], 0, "{r:#}");
    let out = format!("{}{}", r["result"]["stdout"], r["result"]["stderr"]);
    assert!(out.contains("empty commit message"), "{r:#}");
    assert!(!out.contains('\u{1b}') && !out.contains("Vim"), "{r:#}");
    s.stop().await;
    // The operator's editor writes the message itself.
    let editor = repo.join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\necho from-the-operators-editor > \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let s = server()
        .env("EDITOR", editor.to_str().unwrap())
        .start()
        .await;
    let r = s.call(headless(&commit)).await;
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    let log = s
        .call(headless(&format!(
            "cd {} && git log -1 --format=%s",
            repo.display()
        )))
        .await;
    assert_eq!(
        log["result"]["stdout"], "from-the-operators-editor\n",
        "{log:#}"
    );
    s.stop().await;
}

#[tokio::test]
async fn long_command_answers_running_then_read_output_follows_by_cursor() {
    let s = server().start().await;
    let mut req = headless("for i in 1 2 3 4 5 6; do echo line$i; sleep 0.3; done; echo done >&2");
    req["runtime"] = json!({"wait_ms": 200});
    let p = s.call(req).await;
    assert_eq!(p["status"], "accepted");
    assert_eq!(p["result"]["running"], true);
    let id = p["identity"]["session_id"].as_str().unwrap().to_string();
    let mut stdout = p["result"]["stdout"].as_str().unwrap().to_string();
    let mut stderr = p["result"]["stderr"].as_str().unwrap().to_string();
    // Reads without cursors continue where the last answer ended: no byte twice.
    loop {
        let r = s
            .call(json!({"action": "read_output", "target": {"session_id": id}, "runtime": {"wait_ms": 3000}}))
            .await;
        assert_eq!(r["success"], true, "{r}");
        stdout.push_str(r["result"]["stdout"].as_str().unwrap());
        stderr.push_str(r["result"]["stderr"].as_str().unwrap());
        if r["result"]["running"] == false {
            assert_eq!(r["result"]["exit_code"], 0);
            break;
        }
    }
    assert_eq!(stdout, "line1\nline2\nline3\nline4\nline5\nline6\n");
    assert_eq!(stderr, "done\n");
    // Explicit cursors re-read any part.
    let r = s
        .call(json!({"action": "read_output", "target": {"session_id": id}, "output": {"stdout_cursor": 6, "max_bytes": 6}}))
        .await;
    assert_eq!(r["result"]["stdout"], "line2\n");
    assert_eq!(r["result"]["cursor"]["stdout"], 12);
    assert_eq!(r["result"]["streams"]["stdout"]["truncated"], true);
    s.stop().await;
}

#[tokio::test]
async fn hard_timeout_kills_the_tree_and_returns_output_so_far() {
    let s = server().start().await;
    let tag = unique_sleep();
    let mut req = headless(&format!("echo started; (sleep {tag} &); sleep {tag}"));
    req["runtime"] = json!({"timeout_ms": 700});
    let t = Instant::now();
    let p = s.call(req).await;
    assert!(
        t.elapsed() < Duration::from_secs(6),
        "answered in {:?}",
        t.elapsed()
    );
    assert_eq!(code(&p), "PM_TERM_TIMEOUT");
    assert_eq!(p["error"]["retriable"], true);
    assert_eq!(
        p["fallback"]["strategy"],
        "suggest_retry_headless_or_interactive"
    );
    assert_eq!(p["error"]["details"]["stdout"], "started\n");
    assert_eq!(p["error"]["details"]["timeout_ms"], 700);
    assert!(p["identity"]["session_id"].is_string());
    assert!(wait_gone(&tag, Duration::from_secs(3)).await.is_empty());
    s.stop().await;
}

#[tokio::test]
async fn terminate_kills_escaping_children() {
    let s = server().start().await;
    let tag = unique_sleep();
    // Background job, nohup, setsid, a double fork, and a foreground sleep.
    let script = format!(
        "sleep {tag} & nohup sleep {tag} >/dev/null 2>&1 & setsid sleep {tag} & (sh -c 'sleep {tag} &' &) ; sleep {tag}"
    );
    let mut req = headless(&script);
    req["runtime"] = json!({"wait_ms": 600});
    let p = s.call(req).await;
    assert_eq!(p["result"]["running"], true);
    assert!(
        wait_present(&tag, 5, Duration::from_secs(3)).await >= 5,
        "{:?}",
        pids_with_arg(&tag)
    );
    let id = p["identity"]["session_id"].as_str().unwrap().to_string();
    let t = s
        .call(json!({"action": "terminate", "target": {"session_id": id}}))
        .await;
    assert_eq!(t["success"], true, "{t}");
    assert_eq!(t["result"]["running"], false);
    assert_eq!(t["result"]["signal"], "SIGKILL");
    assert!(t["result"]["terminated"].as_array().unwrap().len() >= 5);
    assert!(wait_gone(&tag, Duration::from_secs(3)).await.is_empty());
    // Output stays readable after terminate.
    let r = s
        .call(json!({"action": "read_output", "target": {"session_id": id}}))
        .await;
    assert_eq!(r["success"], true);
    assert_eq!(r["result"]["running"], false);
    s.stop().await;
}

#[tokio::test]
async fn terminate_after_exit_kills_what_it_left_behind() {
    let s = server().start().await;
    let tag = unique_sleep();
    let p = s
        .call(headless(&format!(
            "setsid sleep {tag} >/dev/null 2>&1 < /dev/null & echo bye"
        )))
        .await;
    assert_eq!(p["result"]["running"], false);
    assert!(wait_present(&tag, 1, Duration::from_secs(3)).await >= 1);
    let id = p["identity"]["session_id"].as_str().unwrap();
    let t = s.call(json!({"action": "kill", "session_id": id})).await;
    assert_eq!(t["resolved"]["legacy_action"], "kill");
    assert_eq!(t["resolved"]["canonical_action"], "terminate");
    assert_eq!(t["resolved"]["alias_applied"], true);
    assert!(wait_gone(&tag, Duration::from_secs(3)).await.is_empty());
    s.stop().await;
}

#[tokio::test]
async fn output_written_after_the_exit_by_a_child_holding_the_pipe_still_arrives() {
    // The shell ends at once; the child it left holds stdout open and writes later. The
    // answer must not wait for that child, and what it writes must not be lost: the pipe is
    // first read when the exit is reported, then watched until its last writer closes it.
    let s = server().start().await;
    let p = s
        .call(headless("echo first; (sleep 0.6; echo later) &"))
        .await;
    assert_eq!(p["result"]["running"], false, "{}", p["result"]);
    assert_eq!(p["result"]["exit_code"], 0);
    assert_eq!(p["result"]["stdout"], "first\n");
    let id = p["identity"]["session_id"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    let later = loop {
        let r = s
            .call(
                json!({"action": "read_output", "target": {"session_id": id},
                "output": {"stdout_cursor": 6}}),
            )
            .await;
        let out = r["result"]["stdout"].as_str().unwrap().to_string();
        if !out.is_empty() || Instant::now() >= deadline {
            break out;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(later, "later\n");
    s.stop().await;
}

#[tokio::test]
async fn more_output_than_the_pipe_holds_before_the_first_read_is_all_kept() {
    // 3 MB, written faster than the first read of the pipe (which holds 1 MiB) comes.
    let s = server().start().await;
    let p = s
        .call(headless(
            "head -c 3000000 /dev/zero | tr '\\0' a; echo end >&2",
        ))
        .await;
    assert_eq!(p["result"]["running"], false, "{}", p["result"]);
    assert_eq!(p["result"]["streams"]["stdout"]["total"], 3_000_000);
    assert_eq!(p["result"]["stderr"], "end\n");
    s.stop().await;
}

#[tokio::test]
async fn huge_output_is_bounded_in_memory_and_every_byte_is_readable() {
    let s = server().start().await;
    const TOTAL: u64 = 100_000_000;
    let mut req = headless(&format!("yes 0123456789abcdef | head -c {TOTAL}"));
    req["runtime"] = json!({"wait_ms": 120000});
    req["output"] = json!({"max_bytes": 1024});
    let p = s.call(req).await;
    assert_eq!(p["result"]["running"], false, "{}", p["result"]);
    assert_eq!(p["result"]["exit_code"], 0);
    assert_eq!(p["result"]["streams"]["stdout"]["total"], TOTAL);
    assert_eq!(p["result"]["truncated"], true);
    let rss = rss_kib(s.pid);
    let id = p["identity"]["session_id"].as_str().unwrap().to_string();
    // Read it all back in 1 MiB pieces (the largest answer), checking every byte.
    let line = b"0123456789abcdef\n";
    let mut cursor: u64 = 0;
    while cursor < TOTAL {
        let r = s
            .call(
                json!({"action": "read_output", "target": {"session_id": id},
                "output": {"stdout_cursor": cursor, "max_bytes": 1_048_576}}),
            )
            .await;
        let chunk = r["result"]["stdout"].as_str().unwrap().as_bytes();
        assert!(!chunk.is_empty());
        for (i, b) in chunk.iter().enumerate() {
            let pos = (cursor as usize + i) % line.len();
            assert_eq!(*b, line[pos], "byte {}", cursor as usize + i);
        }
        cursor += chunk.len() as u64;
        assert_eq!(r["result"]["cursor"]["stdout"], cursor);
    }
    assert_eq!(cursor, TOTAL);
    let rss_after = rss_kib(s.pid);
    eprintln!("server RSS: {rss} KiB after 100 MB of output, {rss_after} KiB after reading it all");
    assert!(
        rss < 40 * 1024,
        "server RSS {rss} KiB after 100 MB of output"
    );
    assert!(
        rss_after < 64 * 1024,
        "server RSS {rss_after} KiB after reading 100 MB back"
    );
    s.stop().await;
}

#[tokio::test]
async fn non_utf8_output_is_flagged_or_exact_in_base64() {
    let s = server().start().await;
    let p = s.call(headless(r"printf 'a\377\376b'")).await;
    assert_eq!(p["result"]["stdout"], "a\u{fffd}\u{fffd}b");
    assert_eq!(p["result"]["streams"]["stdout"]["lossy"], true);
    let id = p["identity"]["session_id"].as_str().unwrap();
    let r = s
        .call(
            json!({"action": "read_output", "target": {"session_id": id},
            "output": {"stdout_cursor": 0, "encoding": "base64"}}),
        )
        .await;
    assert_eq!(r["result"]["encoding"], "base64");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(r["result"]["stdout"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes, b"a\xff\xfeb");
    // A multi-byte character is never split by max_bytes.
    let p = s.call(headless("printf 'ab€cd'")).await;
    let id = p["identity"]["session_id"].as_str().unwrap();
    let r = s
        .call(
            json!({"action": "read_output", "target": {"session_id": id},
            "output": {"stdout_cursor": 0, "max_bytes": 4}}),
        )
        .await;
    assert_eq!(r["result"]["stdout"], "ab");
    assert_eq!(r["result"]["cursor"]["stdout"], 2);
    // A limit smaller than the next character returns that whole character: the reader
    // always moves on, never by half a character, and reading on by default cursor (what was
    // delivered) loses nothing.
    let p = s.call(headless("printf 'é€😀z'")).await;
    let id = p["identity"]["session_id"].as_str().unwrap();
    let mut got = String::new();
    let mut cursor = 0;
    for _ in 0..10 {
        let r = s
            .call(
                json!({"action": "read_output", "target": {"session_id": id},
                "output": {"stdout_cursor": cursor, "max_bytes": 1}}),
            )
            .await;
        let piece = r["result"]["stdout"].as_str().unwrap();
        assert!(!piece.contains('\u{fffd}'), "{r:#}");
        assert_eq!(piece.chars().count(), 1, "{r:#}");
        assert_ne!(r["result"]["streams"]["stdout"]["lossy"], true);
        got.push_str(piece);
        cursor = r["result"]["cursor"]["stdout"].as_u64().unwrap();
        if got.len() == 10 {
            break;
        }
    }
    assert_eq!(got, "é€😀z");
    let mut req = headless("printf '€€€'");
    req["output"] = json!({"max_bytes": 4});
    let p = s.call(req).await;
    let id = p["identity"]["session_id"].as_str().unwrap();
    let mut got = p["result"]["stdout"].as_str().unwrap().to_string();
    assert_eq!(got, "€");
    for _ in 0..5 {
        let r = s
            .call(
                json!({"action": "read_output", "target": {"session_id": id},
                "output": {"max_bytes": 4}}),
            )
            .await;
        got.push_str(r["result"]["stdout"].as_str().unwrap());
    }
    assert_eq!(got, "€€€", "default cursors follow whole characters");
    s.stop().await;
}

#[tokio::test]
async fn concurrent_sessions_keep_their_own_output() {
    let s = std::sync::Arc::new(server().start().await);
    let mut handles = Vec::new();
    for i in 0..24 {
        let s = s.clone();
        handles.push(tokio::spawn(async move {
            let p = s
                .call(headless(&format!(
                    "sleep 0.{}; echo me-{i}; echo err-{i} >&2",
                    i % 5
                )))
                .await;
            assert_eq!(p["result"]["stdout"], format!("me-{i}\n"));
            assert_eq!(p["result"]["stderr"], format!("err-{i}\n"));
            p["identity"]["session_id"].as_str().unwrap().to_string()
        }));
    }
    let mut ids = Vec::new();
    for h in handles {
        ids.push(h.await.unwrap());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 24);
    let l = s.call(json!({"action": "list"})).await;
    let items = l["result"]["items"].as_array().unwrap();
    assert!(items.len() >= 24);
    let one = items.iter().find(|i| i["id"] == ids[0].as_str()).unwrap();
    assert_eq!(one["kind"], "session");
    assert_eq!(one["state"], "exited");
    assert_eq!(one["exit_code"], 0);
    assert!(one["command"].as_str().unwrap().contains("echo me-"));
    assert!(one["age_ms"].is_u64());
}

#[tokio::test]
async fn long_waits_send_progress_notifications() {
    let s = server().start().await;
    let mut req = headless("sleep 2.5; echo ok");
    req["runtime"] = json!({"wait_ms": 10000});
    let p = s.call_with_progress(req, "tok-1").await;
    assert_eq!(p["result"]["stdout"], "ok\n");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let progress = s.recorder.progress.lock().unwrap().clone();
    assert!(progress.len() >= 2, "{progress:?}");
    let values: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    assert!(values.windows(2).all(|w| w[1] > w[0]), "{values:?}");
    // Each message says what is waited for and for how long, once.
    let first = progress[0].message.clone().unwrap_or_default();
    assert_eq!(first, "running (1 s)", "{progress:?}");
    s.stop().await;
}

/// A client's stop button: the call is cancelled (`notifications/cancelled`) while its
/// command runs. The command's whole tree is stopped at once, not left running where the
/// agent never learns its session, and what its answer would have shown is still there to
/// read; a `read_output` whose wait is cancelled stops waiting and stops nothing, since
/// reading started nothing.
#[tokio::test]
async fn a_call_its_client_cancels_stops_its_command() {
    let s = server().start().await;
    // Both `sleep`s carry the unique number: the whole tree is looked for, not the shell.
    let tag = unique_sleep();
    let mut req = headless(&format!("echo first-words; sleep {tag} & sleep {tag}"));
    req["runtime"] = json!({"wait_ms": 60000});
    let started = Instant::now();
    let left = cancel_once_running(s.client.peer(), req, &tag, 2).await;
    assert!(left.is_empty(), "left running after the cancel: {left:?}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "stopped long before its wait"
    );
    // The session is there, ended once its supervisor has reported the end (a moment after
    // the processes are gone, on a busy machine); the server answers as before.
    let deadline = Instant::now() + Duration::from_secs(10);
    let items = loop {
        let l = s.call(json!({"action": "list"})).await;
        let items = l["result"]["items"].as_array().unwrap().clone();
        assert_eq!(items.len(), 1, "{l:#}");
        if items[0]["state"] == "exited" {
            break items;
        }
        assert!(Instant::now() < deadline, "the session never ended: {l:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // The cancelled call's answer reached nobody: its output is still there to read.
    let r = s
        .call(json!({"action": "read_output", "target": {"session_id": items[0]["id"]}}))
        .await;
    assert_eq!(r["result"]["stdout"], "first-words\n", "{r:#}");
    // A read's wait, cancelled: the command it reads goes on.
    let tag = unique_sleep();
    let mut req = headless(&format!("exec sleep {tag}"));
    req["runtime"] = json!({"wait_ms": 100});
    let p = s.call(req).await;
    assert_eq!(p["result"]["running"], true, "{p:#}");
    let id = p["identity"]["session_id"].as_str().unwrap();
    let read = json!({"action": "read_output", "target": {"session_id": id}, "runtime": {"wait_ms": 60000}});
    let call = send_call(s.client.peer(), "memory_terminal_interactive", read, None).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    call.cancel(None).await.unwrap();
    let p = s
        .call(json!({"action": "read_output", "target": {"session_id": id}}))
        .await;
    assert_eq!(p["result"]["running"], true, "{p:#}");
    assert_eq!(pids_with_arg(&tag).len(), 1);
    s.stop().await;
    assert!(wait_gone(&tag, Duration::from_secs(10)).await.is_empty());
}

#[tokio::test]
async fn unknown_ids_are_not_found_with_a_refresh_hint() {
    let s = server().start().await;
    let p = s
        .call(json!({"action": "read_output", "target": {"session_id": "ses_NOPE"}}))
        .await;
    assert_eq!(code(&p), "PM_TERM_NOT_FOUND");
    assert_eq!(p["fallback"]["strategy"], "refresh_list_then_retry");
    assert_eq!(p["fallback"]["next_action"], "list");
    let p = s
        .call(json!({"action": "terminate", "target": {"session_id": "ses_NOPE"}}))
        .await;
    assert_eq!(code(&p), "PM_TERM_NOT_FOUND");
    s.stop().await;
}

#[tokio::test]
async fn run_alias_with_flat_legacy_keys() {
    let s = server().start().await;
    let dir = std::env::temp_dir();
    let p = s
        .call(json!({"action": "run", "command": "echo", "args": ["$X", "x y"], "cwd": dir.to_str().unwrap(),
            "timeout": 10000, "env": {"CI": "1"}, "workspace_id": "ws-1"}))
        .await;
    assert_eq!(p["result"]["stdout"], "$X x y\n");
    assert_eq!(p["resolved"]["alias_applied"], true);
    assert_eq!(p["resolved"]["legacy_action"], "run");
    assert_eq!(p["resolved"]["mode"], "headless");
    let l = s.call(json!({"action": "list"})).await;
    assert_eq!(l["result"]["items"][0]["workspace_id"], "ws-1");
    s.stop().await;
}

/// Every coupling-rule rejection (docs/contract.md, "The pipeline"), through the binary.
#[tokio::test]
async fn every_validation_rule_is_a_pm_term_payload() {
    let s = server().start().await;
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "PM_TERM_INVALID_PAYLOAD"),
        (json!({"action": "explode"}), "PM_TERM_INVALID_ACTION"),
        (
            json!({"action": "execute", "invocation": {"mode": "gui", "intent": "open_only"}}),
            "PM_TERM_INVALID_MODE",
        ),
        (
            json!({"action": "execute", "invocation": {"intent": "execute_command"}, "execution": {"command": "ls"}}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
        (
            json!({"action": "execute", "invocation": {"mode": "headless"}, "execution": {"command": "ls"}}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
        (
            json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"}}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
        (
            json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}, "execution": {"command": "ls"}}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
        (json!({"action": "read_output"}), "PM_TERM_INVALID_PAYLOAD"),
        (
            json!({"action": "terminate", "target": {}}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
        (
            json!({"action": "list", "execution": {"command": "ls"}}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
        (
            json!({"action": "list", "target": {"session_id": "ses_1"}}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
        (
            json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"}, "execution": {"command": "ls"}, "target": {"terminal_id": "term_1"}}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
        (
            json!({"action": "list", "compat": {"legacy_action": "zap"}}),
            "PM_TERM_INVALID_ACTION",
        ),
        (
            json!({"action": "list", "compat": {"legacy_action": "run"}}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
        (
            json!({"action": "list", "runtime": {"adapter_override": "weird"}}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
        (
            json!({"action": "list", "extra": true}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
        (json!({"action": ["execute"]}), "PM_TERM_INVALID_PAYLOAD"),
        (
            json!({"action": "list", "correlation": {"request_id": ""}}),
            "PM_TERM_INVALID_PAYLOAD",
        ),
    ];
    for (req, want) in cases {
        let p = s.call(req.clone()).await;
        assert_eq!(code(&p), want, "{req} -> {p:#}");
        assert_eq!(p["status"], "failed");
        assert!(p["fallback"]["strategy"].is_string());
        assert!(
            p["correlation"]["request_id"]
                .as_str()
                .unwrap()
                .starts_with("req_")
        );
    }
    // The caller's trace id survives a rejection unchanged.
    let p = s
        .call(json!({"action": "nope", "correlation": {"trace_id": "trace-abc-123", "client_request_id": "mine"}}))
        .await;
    assert_eq!(p["correlation"]["trace_id"], "trace-abc-123");
    assert_eq!(p["correlation"]["client_request_id"], "mine");
    s.stop().await;
}

#[tokio::test]
async fn tool_call_without_arguments_or_for_unknown_tools() {
    let s = server().start().await;
    let r = s
        .client
        .call_tool(rmcp::model::CallToolRequestParams::new(
            "memory_terminal_interactive",
        ))
        .await
        .unwrap();
    let p = check_result(&r);
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD");
    // An unknown tool is a protocol error, not a tool result.
    let e = s
        .client
        .call_tool(rmcp::model::CallToolRequestParams::new("no_such_tool"))
        .await;
    assert!(e.is_err());
    s.stop().await;
}

async fn server_exit_kills_everything(how: &str) {
    let s = server().start().await;
    let tag = unique_sleep();
    let mut req = headless(&format!("setsid sleep {tag} & sleep {tag}"));
    req["runtime"] = json!({"wait_ms": 300});
    let p = s.call(req).await;
    assert_eq!(p["result"]["running"], true);
    // A finished session's leftover, too.
    s.call(headless(&format!("nohup sleep {tag} >/dev/null 2>&1 &")))
        .await;
    assert!(wait_present(&tag, 3, Duration::from_secs(3)).await >= 3);
    let pid = s.pid as i32;
    match how {
        "stdin" => s.stop().await,
        "sigterm" => {
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            )
            .unwrap();
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        _ => {
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGINT,
            )
            .unwrap();
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let left = wait_gone(&tag, Duration::from_secs(5)).await;
    assert!(left.is_empty(), "{how}: left behind {left:?}");
}

#[tokio::test]
async fn closing_stdin_kills_everything() {
    server_exit_kills_everything("stdin").await;
}

#[tokio::test]
async fn sigterm_kills_everything() {
    server_exit_kills_everything("sigterm").await;
}

#[tokio::test]
async fn sigint_kills_everything() {
    server_exit_kills_everything("sigint").await;
}
