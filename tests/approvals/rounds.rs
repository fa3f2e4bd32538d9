//! A 2026-07-28 client asked in rounds (`input_required`), its answer bound to its call, and
//! a decision slower than the call.

use super::*;

/// A 2026-07-28 client has no `elicitation/create` from the server: the question comes as
/// an `input_required` answer and the call comes back with the user's answer. Approve and
/// decline work as before; the first round starts nothing; and an answer is only good for
/// the call it was asked about, once: an agent that swaps the command under an approval,
/// or a state the server never gave out, gets the question again.
#[tokio::test(flavor = "multi_thread")]
async fn a_2026_client_is_asked_in_rounds_and_its_answer_binds_to_the_call() {
    let (c, asked) = start_person_2026(Answer::Approve, &[WARN]).await;
    approved_through_elicitation(&c, &asked).await;
    assert_eq!(asked.lock().unwrap().len(), 1);

    // Driven by hand: the first round answers with the question and starts nothing.
    let dir = scratch_dir();
    let mark = dir.join("ran");
    let line = format!("echo careful > {}", mark.display());
    let Value::Object(args) = interactive(&line) else {
        panic!()
    };
    let first = c
        .call_tool_once(
            CallToolRequestParams::new("memory_terminal_interactive").with_arguments(args.clone()),
        )
        .await
        .unwrap();
    let CallToolResponse::InputRequired(q) = first else {
        panic!("a question first: {first:?}")
    };
    let state = q.request_state.clone().expect("a state to come back with");
    assert!(q.input_requests.as_ref().unwrap().contains_key("approval"));
    assert!(!mark.exists(), "nothing ran before the answer");
    let approve: InputResponses = [(
        "approval".to_string(),
        json!({"action": "accept", "content": {"approve": true}}),
    )]
    .into();
    // The agent swaps the command under the approval: asked again, the swap not run.
    let other = dir.join("swapped");
    let Value::Object(swapped) = interactive(&format!("echo careful > {}", other.display())) else {
        panic!()
    };
    let mut again =
        CallToolRequestParams::new("memory_terminal_interactive").with_arguments(swapped);
    again.request_state = Some(state.clone());
    again.input_responses = Some(approve.clone());
    let r = c.call_tool_once(again).await.unwrap();
    assert!(matches!(r, CallToolResponse::InputRequired(_)), "{r:?}");
    assert!(
        !other.exists(),
        "an approval of one command let another run"
    );
    // The state was used up by that attempt: the right arguments with it are asked again.
    let mut stale =
        CallToolRequestParams::new("memory_terminal_interactive").with_arguments(args.clone());
    stale.request_state = Some(state);
    stale.input_responses = Some(approve.clone());
    let r = c.call_tool_once(stale).await.unwrap();
    let CallToolResponse::InputRequired(q) = r else {
        panic!("asked again: {r:?}")
    };
    assert!(!mark.exists());
    // A fresh state and the same arguments: the command runs, once.
    let mut answered =
        CallToolRequestParams::new("memory_terminal_interactive").with_arguments(args);
    answered.request_state = q.request_state.clone();
    answered.input_responses = Some(approve);
    let CallToolResponse::Complete(done) = c.call_tool_once(answered).await.unwrap() else {
        panic!("the answered call completes")
    };
    let p = check_result(&done);
    assert_eq!(p["success"], true, "{p:#}");
    assert_eq!(std::fs::read_to_string(&mark).unwrap(), "careful\n");
    let _ = c.cancel().await;

    let (c, _) = start_person_2026(Answer::Decline("not on a Friday"), &[WARN]).await;
    declined_through_elicitation(&c).await;
    let _ = c.cancel().await;
}

/// A person who takes longer than the call waits: the call answers `waiting_for_approval`
/// with an `approval_id` (in both forms, with the next step), the decision runs the command
/// whether or not anyone reads, `read_output` on the id gives the command's own answer, and
/// `terminate` withdraws a question nobody has decided.
#[tokio::test(flavor = "multi_thread")]
async fn a_decision_slower_than_the_call_is_followed_by_read_output() {
    let host = host("tok-held").start();
    let port = host.port.to_string();
    let env = [
        ("PM_RUNNING_IN_CONTAINER", "true"),
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1"),
        ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port.as_str()),
        ("PM_INTERACTIVE_TERMINAL_TOKEN", "tok-held"),
        WARN,
    ];
    let (c, _asked) = start_person(Answer::Never, &env).await;
    let (mut tx, mut rx) = page(&host.addr, &host.login).await;

    // The call waits one second, the person longer.
    let mut req = interactive("echo careful later");
    req["runtime"]["wait_ms"] = json!(1000);
    let Value::Object(m) = req else { panic!() };
    let r = c
        .call_tool(CallToolRequestParams::new("memory_terminal_interactive").with_arguments(m))
        .await
        .unwrap();
    let p = check_result(&r);
    assert_eq!(p["status"], "accepted", "{p:#}");
    assert_eq!(p["result"]["waiting_for_approval"], true, "{p:#}");
    assert_eq!(p["result"]["authorization"], "allowed_with_warning");
    let id = p["identity"]["approval_id"].as_str().unwrap().to_string();
    assert!(id.starts_with("apr_"), "{p:#}");
    assert_eq!(p["next"]["request"]["action"], "read_output");
    assert_eq!(p["next"]["request"]["target"]["approval_id"], id.as_str());
    let text: String = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert!(text.contains("waiting for a person's decision"), "{text}");
    assert!(text.contains(&id), "{text}");
    assert!(text.contains("echo careful later"), "{text}");

    let read = |wait_ms: u64| json!({"action": "read_output", "target": {"approval_id": id}, "runtime": {"wait_ms": wait_ms}});
    let still = call(&c, "memory_terminal_interactive", read(0)).await;
    assert_eq!(still["result"]["waiting_for_approval"], true, "{still:#}");
    let a = next_pending(&mut rx).await;
    assert_eq!(a["command"], "echo careful later");
    decide(&mut tx, 2, &a["approval_id"], "approve", None).await;
    let p = call(&c, "memory_terminal_interactive", read(30_000)).await;
    assert_eq!(p["success"], true, "{p:#}");
    assert_eq!(p["result"]["output"], "careful later\n", "{p:#}");
    assert_eq!(p["result"]["approval"]["decided_by"], "page");
    let term = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    // Its answer was given once; the id then says where the command ran.
    let again = call(&c, "memory_terminal_interactive", read(0)).await;
    assert_eq!(code(&again), "PM_TERM_NOT_FOUND", "{again:#}");
    assert!(
        again["error"]["message"].as_str().unwrap().contains(&term),
        "{again:#}"
    );

    // A headless command held, then withdrawn: it never runs, the page is told.
    let marker = scratch_dir().join("held-ran");
    let line = format!("echo careful > {}", marker.display());
    let mut req = headless(&line);
    req["runtime"] = json!({"wait_ms": 500});
    let p = call(&c, "memory_terminal_interactive", req).await;
    assert_eq!(p["result"]["waiting_for_approval"], true, "{p:#}");
    let id = p["identity"]["approval_id"].as_str().unwrap().to_string();
    let asked = next_pending(&mut rx).await;
    let t = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "terminate", "target": {"approval_id": id}}),
    )
    .await;
    assert_eq!(t["success"], true, "{t:#}");
    assert_eq!(t["result"]["running"], false, "{t:#}");
    let resolved = next_of(&mut rx, "pm/approval/resolved").await;
    assert_eq!(resolved["params"]["approval_id"], asked["approval_id"]);
    assert_eq!(resolved["params"]["decision"], "withdrawn", "{resolved}");
    let p = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "read_output", "target": {"approval_id": id}}),
    )
    .await;
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    // A late yes finds nothing to run.
    decide(&mut tx, 3, &asked["approval_id"], "approve", None).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!marker.exists(), "a withdrawn command ran");

    // Malformed uses of the id are refused, naming the field.
    let bad = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "read_output", "target": {"approval_id": id, "session_id": "ses_x"}}),
    )
    .await;
    assert_eq!(
        bad["error"]["details"]["field"], "target.approval_id",
        "{bad:#}"
    );
    let unknown = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "read_output", "target": {"approval_id": "apr_nothing"}}),
    )
    .await;
    assert_eq!(code(&unknown), "PM_TERM_NOT_FOUND", "{unknown:#}");
}
