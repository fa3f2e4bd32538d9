//! Answers are shaped for the model that reads them: a default answer stays within the
//! answer budget however much a command printed, shows the head and the tail (where a
//! failure is), names exactly what it left out, and carries one next step — in the
//! structured content and in the text alike, since a client passes the model one of them.
//! Following the next steps reads every byte once, none skipped.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use common::*;
use serde_json::{Value, json};

/// The default answer budget, in characters of one form of the answer.
const BUDGET: usize = 30_000;

fn text_of(r: &rmcp::model::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

/// Follow `next` from `step` until there is none: the bytes of `stream` read, in order.
async fn follow(s: &Server, mut step: Value, cursor_key: &str, stream: &str) -> String {
    let mut got = String::new();
    let from = step["request"]["output"][cursor_key].as_u64().unwrap();
    for _ in 0..1000 {
        let request = step["request"].clone();
        assert_eq!(request["action"], "read_output", "{step:#}");
        let at = request["output"][cursor_key].as_u64().unwrap();
        assert_eq!(
            at,
            from + got.len() as u64,
            "each step starts where the last ended"
        );
        let result = s.call_result(request).await;
        let r = check_result(&result);
        assert_eq!(r["success"], true, "{r:#}");
        let size = serde_json::to_string(&r).unwrap().len() + text_of(&result).len();
        assert!(size <= BUDGET, "a followed step answered {size} characters");
        got.push_str(r["result"][stream].as_str().unwrap());
        match r.get("next") {
            Some(n) if n["request"]["action"] == "read_output" => step = n.clone(),
            _ => return got,
        }
    }
    panic!("next steps did not end")
}

#[tokio::test]
async fn a_flood_answers_within_budget_and_following_next_reads_every_byte() {
    let s = server().start().await;
    let r = s
        .call_result(headless("seq 1 200000; echo the-end >&2"))
        .await;
    let p = check_result(&r);
    let text = text_of(&r);
    let structured = serde_json::to_string(&p).unwrap();
    assert!(
        structured.len() + text.len() <= BUDGET,
        "text and structured together: {} + {} chars",
        structured.len(),
        text.len()
    );
    let out = p["result"]["stdout"].as_str().unwrap();
    assert!(out.starts_with("1\n2\n3\n"), "the head is shown");
    assert!(out.ends_with("199999\n200000\n"), "the tail is shown");
    assert_eq!(p["result"]["stderr"], "the-end\n");
    let gap = &p["result"]["streams"]["stdout"]["left_out"];
    let (from, to) = (gap["from"].as_u64().unwrap(), gap["to"].as_u64().unwrap());
    let next = p["next"].clone();
    assert_eq!(next["request"]["output"]["stdout_cursor"], from, "{next:#}");
    // The text stands alone: the excerpt's marker and the same next step.
    assert!(text.contains("200000\n"), "{text}");
    assert!(
        text.contains(&format!("stdout_cursor={from}")),
        "the text names where the gap is: {text}"
    );
    assert!(text.contains("next: "), "{text}");

    // Following the steps reads from the gap to the end: head + that is the whole output.
    let rest = follow(&s, next, "stdout_cursor", "stdout").await;
    let whole: String = (1..=200_000).map(|i| format!("{i}\n")).collect();
    let head_len = from as usize;
    assert_eq!(
        &whole[..head_len],
        &out[..head_len],
        "the head is the start"
    );
    assert_eq!(head_len + rest.len(), whole.len(), "every byte once");
    assert!(
        whole[head_len..] == rest,
        "the rest is exactly what was left out and after"
    );
    assert!(to as usize <= whole.len());
    s.stop().await;
}

#[tokio::test]
async fn a_failing_run_shows_its_last_lines_and_its_errors() {
    let s = server().start().await;
    let p = s
        .call(headless(
            "for i in $(seq 6000); do echo log line $i; done; echo 'FAILED: boom' >&2; exit 3",
        ))
        .await;
    assert_eq!(p["result"]["exit_code"], 3, "{p:#}");
    let out = p["result"]["stdout"].as_str().unwrap();
    assert!(out.starts_with("log line 1\n"));
    assert!(
        out.ends_with("log line 6000\n"),
        "the failure's end is shown"
    );
    assert!(out.contains("bytes left out here"), "the gap is marked");
    assert_eq!(p["result"]["stderr"], "FAILED: boom\n");
    s.stop().await;
}

#[tokio::test]
async fn the_operator_sets_the_budget_and_explicit_reads_get_exactly_what_they_ask() {
    let s = server().args(&["--answer-budget", "8000"]).start().await;
    let r = s.call_result(headless("seq 1 100000")).await;
    let p = check_result(&r);
    let size = serde_json::to_string(&p).unwrap().len() + text_of(&r).len();
    assert!(size <= 8000, "{size} chars");
    assert!(
        p["result"]["stdout"]
            .as_str()
            .unwrap()
            .ends_with("100000\n")
    );
    // A read that names a cursor and a size is a page, not an excerpt.
    let sid = p["identity"]["session_id"].as_str().unwrap();
    let r = s
        .call(
            json!({"action": "read_output", "target": {"session_id": sid},
            "output": {"stdout_cursor": 0, "max_bytes": 20000}}),
        )
        .await;
    let page = r["result"]["stdout"].as_str().unwrap();
    assert_eq!(page.len(), 20000, "{r:#}");
    assert!(!page.contains("left out"));
    assert!(r["result"]["streams"]["stdout"].get("left_out").is_none());
    assert_eq!(
        r["next"]["request"]["output"]["stdout_cursor"], 20000,
        "the next page follows: {r:#}"
    );
    s.stop().await;
}

#[tokio::test]
async fn a_terminal_flood_answers_within_budget_with_its_tail() {
    let s = server().start().await;
    let id = open_shell(&s).await;
    let r = s
        .call_result(json!({"action": "execute",
            "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"command": "seq 1 300000"},
            "runtime": {"wait_ms": 60000}}))
        .await;
    let p = check_result(&r);
    let structured = serde_json::to_string(&p).unwrap();
    let text = text_of(&r);
    assert!(
        structured.len() + text.len() <= BUDGET,
        "text and structured together: {} + {} chars",
        structured.len(),
        text.len()
    );
    let out = p["result"]["output"].as_str().unwrap();
    assert!(
        out.contains("300000"),
        "the tail is shown: {}",
        &out[out.len() - 200..]
    );
    let gap = &p["result"]["streams"]["output"]["left_out"];
    let from = gap["from"].as_u64().unwrap();
    assert_eq!(p["next"]["request"]["output"]["cursor"], from, "{p:#}");
    // The gap reads back as the numbers the head and tail leave out.
    let r = s.call(p["next"]["request"].clone()).await;
    let page = r["result"]["output"].as_str().unwrap();
    let nums: Vec<u64> = page.lines().filter_map(|l| l.trim().parse().ok()).collect();
    assert!(nums.len() > 1000, "{}", &page[..200]);
    assert!(nums.windows(2).all(|w| w[1] == w[0] + 1), "contiguous");
    s.stop().await;
}

#[tokio::test]
async fn a_full_screen_program_answers_with_its_screen_in_both_forms() {
    let s = server().env("PM_TERM_NO_USER_RC", "1").start().await;
    let file = scratch_dir().join("three.txt");
    std::fs::write(&file, "one\ntwo\nthree\n").unwrap();
    let r = s
        .call_result(json!({"action": "execute",
            "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": format!("vim -u NONE -N {}", file.display())},
            "runtime": {"wait_ms": 30000}}))
        .await;
    let p = check_result(&r);
    let text = text_of(&r);
    let screen = p["result"]["screen"]["text"].as_str().unwrap();
    assert!(screen.starts_with("one\ntwo\nthree\n~\n"), "{screen:?}");
    // Today's 3,416 characters of padded rows become what the screen holds.
    assert!(text.len() < 1500, "{} chars: {text}", text.len());
    assert!(
        text.contains("full-screen program waits for keys"),
        "{text}"
    );
    assert!(text.contains("cursor at row 1 column 1"), "{text}");
    assert!(text.contains("one\ntwo\nthree\n~\n"), "{text}");
    assert!(text.contains("next: "), "{text}");
    let id = p["identity"]["terminal_id"].as_str().unwrap();
    let r = s
        .call(json!({"action": "execute",
            "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"input": ":q\r"},
            "runtime": {"wait_ms": 30000}}))
        .await;
    assert_eq!(r["result"]["running"], false, "{r:#}");
    assert!(
        r["result"].get("screen").is_none(),
        "back at the prompt: {r:#}"
    );
    s.stop().await;
}

#[tokio::test]
async fn mistakes_are_answered_with_the_way_forward() {
    let s = server().env("PM_TERM_NO_USER_RC", "1").start().await;
    // A field one edit away, or in another group, is named.
    let mut req = headless("true");
    req["runtime"] = json!({"wait": 5});
    let p = s.call(req).await;
    let msg = p["error"]["message"].as_str().unwrap();
    assert!(msg.contains("did you mean runtime.wait_ms?"), "{p:#}");
    let mut req = headless("true");
    req["execution"]["cwd"] = json!("/");
    let p = s.call(req).await;
    assert!(
        p["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean runtime.cwd?"),
        "{p:#}"
    );
    // A busy terminal is not a malformed request: the answer says how to go on.
    let r = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": "sleep 30"}, "runtime": {"wait_ms": 300}}))
        .await;
    let id = r["identity"]["terminal_id"].as_str().unwrap().to_string();
    let p = s.call(terminal_command(&id, "ls")).await;
    assert_eq!(p["error"]["details"]["busy"], true, "{p:#}");
    let hint = p["fallback"]["user_message"].as_str().unwrap();
    assert!(!hint.contains("malformed"), "{hint}");
    assert!(hint.contains("read_output"), "{hint}");
    assert_eq!(p["fallback"]["next_action"], "read_output");
    s.call(json!({"action": "terminate", "target": {"terminal_id": id}}))
        .await;
    s.stop().await;
}
