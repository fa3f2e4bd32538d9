//! The terminal behaves as the one a person uses: named keys take the form the program's
//! cursor mode asks for, and keys a raw program took never make the next command line look
//! like history recall; cols/rows resize an existing terminal; the screen view keeps a text
//! row per screen row and says a hidden cursor. Through the real binary, a real pty and bash.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{Value, json};

fn run(id: &str, command: &str) -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": {"command": command},
        "runtime": {"wait_ms": 15000}})
}

/// A server (no rc files; no person to ask, so the test's own commands are not held) and a
/// terminal of it.
async fn shell() -> (Server, String) {
    let s = server()
        .envs(&[("PM_TERM_NO_USER_RC", "1"), ("PM_TERM_APPROVAL", "never")])
        .start()
        .await;
    let id = open_shell(&s).await;
    (s, id)
}

#[tokio::test(flavor = "multi_thread")]
async fn named_keys_follow_the_programs_cursor_mode() {
    let (s, id) = shell().await;
    // A program that reads one key press in raw mode and shows its bytes, in application
    // cursor mode (`?1h`, as vim and curses programs with keypad set it) and in normal mode.
    for (mode, expect) in [("h", "033   O   A"), ("l", "033   [   A")] {
        let prog = format!(
            "printf '\\033[?1{mode}'; old=$(stty -g); stty raw -echo; \
             k=$(dd bs=3 count=1 2>/dev/null | od -An -c); stty \"$old\"; printf '\\033[?1l'; echo \"key:$k\""
        );
        let r = s.call(run(&id, &prog)).await;
        assert_eq!(r["result"]["waiting_for_input"], true, "{r:#}");
        let keys = json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"keys": ["up"]}, "runtime": {"wait_ms": 10000}});
        let r = s.call(keys).await;
        let out = r["result"]["output"].as_str().unwrap_or("");
        assert!(
            out.contains(&format!("key: {expect}")),
            "mode ?1{mode}: {r:#}"
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cols_and_rows_on_an_existing_terminal_resize_it() {
    let (s, id) = shell().await;
    let sized = |cols: u16, rows: u16| {
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"command": "stty size", "cols": cols, "rows": rows},
            "runtime": {"wait_ms": 15000}})
    };
    let r = s.call(sized(100, 30)).await;
    assert!(
        r["result"]["output"].as_str().unwrap().contains("30 100"),
        "{r:#}"
    );
    // The screen view is drawn at the new size too.
    let screen = s
        .call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"view": "screen"}}))
        .await;
    assert_eq!(screen["result"]["screen"]["cols"], 100, "{screen:#}");
    assert_eq!(screen["result"]["screen"]["rows"], 30, "{screen:#}");
    let r = s.call(sized(72, 20)).await;
    assert!(
        r["result"]["output"].as_str().unwrap().contains("20 72"),
        "{r:#}"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_screen_view_has_a_text_row_per_screen_row_and_says_a_hidden_cursor() {
    let (s, id) = shell().await;
    let r = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id},
            "execution": {"command": "clear; printf 'a%.0s' $(seq 1 45); printf '\\033[?25l'; echo", "cols": 20},
            "runtime": {"wait_ms": 15000}}))
        .await;
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    let screen = s
        .call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"view": "screen"}}))
        .await;
    let sc = &screen["result"]["screen"];
    let text: Vec<&str> = sc["text"].as_str().unwrap().split('\n').collect();
    // The 45 letters wrapped onto three rows stay three text rows.
    assert_eq!(
        text[..3],
        ["a".repeat(20), "a".repeat(20), "a".repeat(5)],
        "{sc:#}"
    );
    // The cursor's row indexes the text: the prompt after the output.
    let row = sc["cursor_row"].as_u64().unwrap() as usize;
    assert_eq!(row, 3, "{sc:#}");
    assert!(
        !text[row].is_empty(),
        "the prompt is on the cursor's row: {sc:#}"
    );
    assert_eq!(sc["cursor_hidden"], true, "{sc:#}");
    s.stop().await;
}
