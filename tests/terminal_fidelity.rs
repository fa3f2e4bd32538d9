//! The terminal behaves as the one a person uses: a program that asks its terminal something
//! gets the answer a terminal gives (device attributes, status, the cursor's position where
//! the program asked, the terminal's version, a mode report), before any key the agent sends
//! later; named keys take the form the program's
//! cursor mode asks for, and keys a raw program took never make the next command line look
//! like history recall; cols/rows resize an existing terminal; the screen view keeps a text
//! row per screen row and says a hidden cursor. Through the real binary, a real pty and bash.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

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

/// `printf` a query, read its answer with the terminal in raw mode (as programs do) up to
/// the answer's last byte, and print what came between brackets.
fn ask(query: &str, last: &str) -> String {
    format!(
        "old=$(stty -g); stty raw -echo; printf '{query}'; IFS= read -rs -t 5 -d '{last}' a; \
         stty \"$old\"; printf '[%s]\\n' \"${{a#?}}\""
    )
}

fn out(r: &Value) -> String {
    r["result"]["output"].as_str().unwrap_or("").to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_that_asks_its_terminal_gets_the_answer() {
    let (s, id) = shell().await;
    // Primary and secondary device attributes.
    let r = s.call(run(&id, &ask("\\033[c", "c"))).await;
    assert!(out(&r).contains("[[?1;2]"), "{r:#}");
    let r = s.call(run(&id, &ask("\\033[>c", "c"))).await;
    assert!(out(&r).contains("[[>0;10;1]"), "{r:#}");
    // Status, and the cursor where the program left it: row 3, column 6 of a cleared screen.
    let r = s.call(run(&id, &ask("\\033[5n", "n"))).await;
    assert!(out(&r).contains("[[0]"), "{r:#}");
    let r = s
        .call(run(
            &id,
            &format!(
                "clear; printf 'one\\ntwo\\nthree'; {}",
                ask("\\033[6n", "R")
            ),
        ))
        .await;
    assert!(out(&r).contains("[[3;6]"), "{r:#}");
    // The position where the program asked, though it moved the cursor in the same write
    // (vim's check of ambiguous widths: row 2, a character, the query, then back to the top).
    let r = s
        .call(run(&id, &ask("\\033[2;1Hx\\033[6n\\033[1;1H  ", "R")))
        .await;
    assert!(out(&r).contains("[[2;2]"), "{r:#}");
    // The terminal's name and version.
    let r = s.call(run(&id, &ask("\\033[>q", "\\\\"))).await;
    assert!(out(&r).contains("interactive-terminal-mcp("), "{r:#}");
    // A mode report: bracketed paste is off while this command runs.
    let r = s.call(run(&id, &ask("\\033[?2004$p", "y"))).await;
    assert!(out(&r).contains("[[?2004;2$]"), "{r:#}");
    // The answers went to the program, not into the agent's next command.
    let r = s.call(run(&id, "echo after-queries")).await;
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    assert!(out(&r).contains("after-queries"), "{r:#}");
    s.stop().await;
}

/// Character widths are what programs compute (the C library's `wcwidth`, as readline, vim
/// and curses count): the cursor a program asks for after printing stands where it counted.
#[tokio::test(flavor = "multi_thread")]
async fn character_widths_agree_with_what_programs_count() {
    let (s, id) = shell().await;
    // text, the columns wcwidth gives it
    for (text, cols) in [("❤️", 1), ("👨‍👩‍👧", 6), ("日本", 4), ("é", 1), ("😀", 2)]
    {
        let r = s
            .call(run(&id, &ask(&format!("\\r{text}x\\033[6n"), "R")))
            .await;
        let expect = format!("[[{};{}]", "", cols + 2);
        let got = out(&r);
        let col = got
            .split("[[")
            .nth(1)
            .and_then(|a| a.split(']').next())
            .and_then(|a| a.split(';').nth(1))
            .unwrap_or_default()
            .to_string();
        assert_eq!(col, (cols + 2).to_string(), "{text}: {expect} in {got:?}");
    }
    s.stop().await;
}

/// vim asks its terminal at start (secondary attributes, and where a character of ambiguous
/// width left the cursor) and records the answers; the file holds only what was typed.
#[tokio::test(flavor = "multi_thread")]
async fn vim_gets_its_answers_and_the_file_only_what_was_typed() {
    let (s, id) = shell().await;
    let dir = std::env::temp_dir().join(format!("fidelity-vim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("notes.txt");
    let input = |text: String, wait_for: &str| {
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"input": text, "wait_for": wait_for},
            "runtime": {"wait_ms": 10000}})
    };
    s.call(input(format!("vim -u NONE -N {}\r", file.display()), "~"))
        .await;
    s.call(input("ihello from vim\x1b".into(), "hello from vim"))
        .await;
    // vim keeps the version answer in v:termresponse: put it on the buffer's second line.
    s.call(input(":put =v:termresponse\r".into(), "10;1c"))
        .await;
    s.call(input(":wq\r".into(), "written")).await;
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(text, "hello from vim\n\x1b[>0;10;1c\n", "{text:?}");
    s.stop().await;
}

/// Keys the agent sends right after a program asked come after the answer: the program reads
/// the answer first, then the keys, as from a terminal a person types into.
#[tokio::test(flavor = "multi_thread")]
async fn keys_sent_after_a_query_come_after_its_answer() {
    let (s, id) = shell().await;
    // The program asks for its device attributes, then reads the answer, then four keys.
    let prog = "old=$(stty -g); stty raw -echo; printf '\\033[c'; \
                IFS= read -rs -t 5 -d c a; IFS= read -rs -t 5 -n 4 k; stty \"$old\"; \
                printf 'answer[%s] keys[%s]\\n' \"${a#?}\" \"$k\"";
    let r = s.call(run(&id, prog)).await;
    assert_eq!(r["result"]["waiting_for_input"], true, "{r:#}");
    let keys = json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": {"input": "keys"}, "runtime": {"wait_ms": 10000}});
    let r = s.call(keys).await;
    assert!(out(&r).contains("answer[[?1;2] keys[keys]"), "{r:#}");
    s.stop().await;
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
    // A size whose cells the screen model would have to hold past the limit is refused,
    // naming it, and the terminal keeps its size: a screen of 1000 × 1000 held 1.5 million
    // cells (48 MB with its scrollback), and 64 of them took gigabytes.
    let r = s.call(sized(1000, 1000)).await;
    assert_eq!(r["error"]["code"], "PM_TERM_INVALID_PAYLOAD", "{r:#}");
    let why = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        why.contains("1000000 cells") && why.contains("at most 100000"),
        "{r:#}"
    );
    let r = s.call(sized(72, 20)).await;
    assert!(
        r["result"]["output"].as_str().unwrap().contains("20 72"),
        "{r:#}"
    );
    let open = |cols: u16, rows: u16| {
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
            "execution": {"cols": cols, "rows": rows}})
    };
    let r = s.call(open(1000, 1000)).await;
    assert_eq!(r["error"]["code"], "PM_TERM_INVALID_PAYLOAD", "{r:#}");
    assert!(r["identity"]["terminal_id"].is_null(), "{r:#}");
    // A wide terminal within the cells opens.
    let r = s.call(open(1000, 100)).await;
    assert!(r["identity"]["terminal_id"].is_string(), "{r:#}");
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
