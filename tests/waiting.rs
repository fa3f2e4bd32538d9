//! An interactive answer comes back as soon as the terminal's program waits for input, known
//! from the kernel, not guessed from the output: REPLs, `read -p`, password prompts, editors
//! and pagers say `waiting_for_input` with the line they prompt on, well inside a long wait;
//! a program that prints something prompt-shaped and keeps computing does not. Through the
//! local adapter, a bundled host, and inside the operator's sandbox.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use common::*;
use serde_json::{Value, json};

/// Every call waits up to this long: an answer that says `waiting_for_input` came early.
const LONG_WAIT: u64 = 30_000;

fn run(id: &str, command: &str) -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": {"command": command},
        "runtime": {"wait_ms": LONG_WAIT}})
}

fn input(id: &str, data: &str, wait_ms: u64) -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": {"input": data},
        "runtime": {"wait_ms": wait_ms}})
}

fn waiting(r: &Value) -> bool {
    r["result"]["waiting_for_input"] == true
}

fn prompt(r: &Value) -> &str {
    r["result"]["prompt"].as_str().unwrap_or("")
}

/// The everyday prompts, in a terminal of `s`.
async fn prompts_are_seen(s: &Server, label: &str) {
    let id = open_shell(s).await;
    // A REPL started by a command line, then a line of input.
    let r = s.call(run(&id, "python3 -q")).await;
    assert!(waiting(&r), "{label}: python: {r:#}");
    assert_eq!(prompt(&r), ">>> ", "{label}: {r:#}");
    assert_eq!(r["result"]["running"], true);
    let r = s.call(input(&id, "6*7\n", LONG_WAIT)).await;
    assert!(waiting(&r), "{label}: {r:#}");
    assert!(
        r["result"]["output"].as_str().unwrap().contains("42"),
        "{label}: {r:#}"
    );
    // Something prompt-shaped printed while it keeps computing is not a wait for input:
    // the answer comes when it really waits, with all it printed.
    let r = s
        .call(input(
            &id,
            "import time; print('>>> ', end='', flush=True); time.sleep(1.5); print('done')\n",
            LONG_WAIT,
        ))
        .await;
    assert!(waiting(&r), "{label}: {r:#}");
    assert!(
        r["result"]["output"].as_str().unwrap().contains("done"),
        "{label}: {r:#}"
    );
    // Busy and short of its wait: running, not waiting.
    let r = s.call(input(&id, "time.sleep(3)\n", 800)).await;
    assert!(!waiting(&r), "{label}: {r:#}");
    assert_eq!(r["result"]["running"], true);
    // read_output with a wait ends when it waits again.
    // Each read ends on new output; the prompt may come in pieces (one byte of `>>> ` per
    // read), so read on until a read ends on the wait. Bounded: the prompt is 4 bytes.
    let mut r = Value::Null;
    for _ in 0..6 {
        r = s
            .call(
                json!({"action": "read_output", "target": {"terminal_id": id},
                "runtime": {"wait_ms": LONG_WAIT}}),
            )
            .await;
        if waiting(&r) {
            break;
        }
    }
    assert!(waiting(&r), "{label}: read_output: {r:#}");
    s.call(input(&id, "exit()\n", 5000)).await;
    // The shell's own `read`, and a password prompt (no echo).
    let r = s
        .call(run(&id, "read -p 'Continue? ' x; echo got $x"))
        .await;
    assert!(waiting(&r), "{label}: read -p: {r:#}");
    assert_eq!(prompt(&r), "Continue? ");
    let r = s.call(input(&id, "yes\n", LONG_WAIT)).await;
    assert!(
        r["result"]["output"].as_str().unwrap().contains("got yes"),
        "{label}: {r:#}"
    );
    assert_eq!(r["result"]["running"], false, "{label}: {r:#}");
    let r = s
        .call(run(
            &id,
            "python3 -c 'import getpass; print(len(getpass.getpass()))'",
        ))
        .await;
    assert!(waiting(&r), "{label}: getpass: {r:#}");
    assert_eq!(prompt(&r), "Password: ");
    let r = s.call(input(&id, "secret\n", LONG_WAIT)).await;
    assert!(
        r["result"]["output"].as_str().unwrap().contains('6'),
        "{label}: {r:#}"
    );
    // A full-screen editor waits for keys; its screen is the prompt.
    let file = scratch_dir().join("notes.txt");
    let r = s
        .call(run(&id, &format!("vim -u NONE -N {}", file.display())))
        .await;
    assert!(waiting(&r), "{label}: vim: {r:#}");
    assert_eq!(prompt(&r), "");
    // Its answer shows the screen, not the cursor moves and padding that drew it: rows
    // without trailing blanks, and where the bytes are if wanted.
    let screen = &r["result"]["screen"];
    assert_eq!(screen["alternate_screen"], true, "{label}: {r:#}");
    let text = screen["text"].as_str().unwrap();
    assert!(text.lines().any(|l| l == "~"), "{label}: {text:?}");
    assert!(text.lines().all(|l| l == l.trim_end()), "{label}: {text:?}");
    assert!(text.len() < 600, "{label}: {} chars", text.len());
    assert!(r["result"].get("output").is_none(), "{label}: {r:#}");
    assert!(
        r["result"]["note"]
            .as_str()
            .unwrap()
            .contains("output.view=raw"),
        "{label}: {r:#}"
    );
    assert_eq!(r["next"]["request"]["target"]["terminal_id"], id.as_str());
    let r = s.call(input(&id, "ihello\u{1b}:wq\r", LONG_WAIT)).await;
    assert_eq!(r["result"]["running"], false, "{label}: {r:#}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello\n");
    // `cat` reading the terminal, and a command that only sleeps (not waiting).
    let r = s.call(run(&id, "cat")).await;
    assert!(waiting(&r), "{label}: cat: {r:#}");
    s.call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": {"keys": ["ctrl-d"]}}))
        .await;
    let r = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"command": "sleep 2; echo slept"},
            "runtime": {"wait_ms": 800}}))
        .await;
    assert!(!waiting(&r), "{label}: sleep: {r:#}");
    s.call(json!({"action": "terminate", "target": {"terminal_id": id}}))
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_adapter_answers_at_a_prompt() {
    let s = server()
        .envs(&[
            ("PM_TERM_NO_USER_RC", "1"),
            ("PM_TERM_INTERACTIVE_SHELL", "bash"),
        ])
        .start()
        .await;
    prompts_are_seen(&s, "local").await;
    // node's REPL waits in epoll, not in read.
    if on_path_opt("node").is_some() {
        let id = open_shell(&s).await;
        let r = s.call(run(&id, "node")).await;
        assert!(waiting(&r), "node: {r:#}");
        assert_eq!(prompt(&r), "> ");
        let r = s.call(input(&id, "6*7\n", LONG_WAIT)).await;
        assert!(
            waiting(&r) && r["result"]["output"].as_str().unwrap().contains("42"),
            "{r:#}"
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bundled_host_answers_at_a_prompt() {
    let s = server()
        .envs(&[
            ("PM_TERM_NO_USER_RC", "1"),
            ("PM_TERM_INTERACTIVE_SHELL", "bash"),
            ("PM_TERM_ADAPTER_MODE", "bundled"),
            ("PM_INTERACTIVE_TERMINAL_BINARY", HOST_BIN),
        ])
        .start()
        .await;
    prompts_are_seen(&s, "bundled").await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_terminal_answers_at_a_prompt() {
    let ws = scratch_dir();
    let ws_s = ws.display().to_string();
    let s = server()
        .args(&["--sandbox", "workspace-write", "--workspace", &ws_s])
        .envs(&[
            ("PM_TERM_NO_USER_RC", "1"),
            ("PM_TERM_INTERACTIVE_SHELL", "bash"),
        ])
        .start()
        .await;
    let id = open_shell(&s).await;
    let r = s.call(run(&id, "python3 -q")).await;
    assert!(waiting(&r), "sandboxed python: {r:#}");
    assert_eq!(prompt(&r), ">>> ");
    let r = s.call(input(&id, "6*7\n", LONG_WAIT)).await;
    assert!(
        waiting(&r) && r["result"]["output"].as_str().unwrap().contains("42"),
        "{r:#}"
    );
    s.stop().await;
}
