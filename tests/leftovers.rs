//! Nothing is left behind unseen: an answer that leaves a terminal open says so, `list`
//! shows what runs in the background of each terminal, and a terminal opened for one
//! command is closed once idle under the operator's rule — unless it holds background jobs
//! or is in use; terminals opened on purpose stay.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

fn state(list: &Value, id: &str) -> String {
    list["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == id)
        .map(|i| i["state"].as_str().unwrap().to_string())
        .unwrap_or_else(|| "gone".into())
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_terminals_opened_for_one_command_are_closed_and_the_rest_shown() {
    let s = server()
        .envs(&[
            ("PM_TERM_IDLE_CLOSE_MS", "1500"),
            ("PM_TERM_NO_USER_RC", "1"),
        ])
        .start()
        .await;
    let once = s.call(open_running("echo once")).await;
    let a = once["identity"]["terminal_id"]
        .as_str()
        .unwrap()
        .to_string();
    let note = once["result"]["note"].as_str().unwrap();
    assert!(
        note.contains("stays open") && note.contains("closed after 1 s"),
        "{once:#}"
    );
    let jobs = s.call(open_running("sleep 1000 & echo started")).await;
    let b = jobs["identity"]["terminal_id"]
        .as_str()
        .unwrap()
        .to_string();
    let c = open_shell(&s).await;
    let used = s.call(open_running("echo used")).await;
    let d = used["identity"]["terminal_id"]
        .as_str()
        .unwrap()
        .to_string();

    let (item, list) = s.listed(&b).await;
    let item = item.unwrap();
    assert_eq!(item["closes_when_idle_ms"], 1500, "{list:#}");
    let job = &item["background_jobs"][0];
    assert_eq!(job["command"], "sleep 1000", "{list:#}");
    let job_pid = job["pid"].as_i64().unwrap() as i32;
    let (item, _) = s.listed(&c).await;
    assert!(
        item.unwrap().get("closes_when_idle_ms").is_none(),
        "opened on purpose"
    );

    // D is used all along; the others sit.
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        s.call(json!({"action": "read_output", "target": {"terminal_id": d}}))
            .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let list = s.call(json!({"action": "list"})).await;
    assert_eq!(
        state(&list, &a),
        "exited",
        "idle, opened for one command: {list:#}"
    );
    assert_eq!(
        state(&list, &b),
        "running",
        "it holds a background job: {list:#}"
    );
    assert_eq!(state(&list, &c), "running", "opened on purpose: {list:#}");
    assert_eq!(state(&list, &d), "running", "in use: {list:#}");
    assert!(
        std::path::Path::new(&format!("/proc/{job_pid}")).exists(),
        "the background job runs on"
    );
    // The text form of list names the job too.
    let r = s.call_result(json!({"action": "list"})).await;
    let text: String = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert!(
        text.contains("background: pid") && text.contains("sleep 1000"),
        "{text}"
    );
    s.stop().await;
}
