//! Asked through MCP elicitation (approve, decline, never answer), a call cancelled while
//! its user decides, the operator's default, and blocked commands that never ask.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn elicitation_approves_declines_or_never_answers() {
    let (c, asked) = start_person(
        Answer::Approve,
        &[WARN, ("PM_TERM_ALLOW_ENV", "GREETING;CR")],
    )
    .await;
    approved_through_elicitation(&c, &asked).await;
    // Commands without a warning are not asked about.
    let p = call(&c, "memory_terminal_interactive", interactive("echo fine")).await;
    assert!(p["result"].get("approval").is_none());
    assert_eq!(asked.lock().unwrap().len(), 1);
    // What the request sets beside the command is shown with it.
    let mut q = interactive("echo careful $GREETING");
    q["execution"]["env"] = json!({"GREETING": "hi there"});
    let p = call(&c, "memory_terminal_interactive", q).await;
    assert_eq!(p["result"]["output"], "careful hi there\n", "{p:#}");
    let shown = asked.lock().unwrap()[1].clone();
    assert!(
        shown.contains("GREETING='hi there' echo careful $GREETING"),
        "{shown}"
    );
    // What a screen would reorder or hide is written out: a right-to-left override draws
    // `~ fr- mr` as `rm -rf ~`, a carriage return in a value redraws a terminal's line.
    let mut q = interactive("echo careful \u{202e}~ fr- mr\u{200b}");
    q["execution"]["env"] = json!({"CR": "a\rb"});
    let p = call(&c, "memory_terminal_interactive", q).await;
    assert_eq!(
        p["result"]["output"], "careful \u{202e}~ fr- mr\u{200b}\n",
        "what runs is what was sent: {p:#}"
    );
    let shown = asked.lock().unwrap()[2].clone();
    assert!(
        shown.contains("CR=a\\u{d}b echo careful \\u{202e}~ fr- mr\\u{200b}"),
        "{shown}"
    );
    assert!(!shown.contains(['\u{202e}', '\u{200b}', '\r']), "{shown:?}");
    let _ = c.cancel().await;

    let (c, _) = start_person(Answer::Decline("not on a Friday"), &[WARN]).await;
    let p = declined_through_elicitation(&c).await;
    assert_eq!(p["fallback"]["strategy"], "report_decline");
    assert_eq!(p["fallback"]["can_auto_retry"], false);
    // Nothing ran: no terminal was opened for it.
    let l = call(&c, "memory_terminal_interactive", json!({"action": "list"})).await;
    assert!(l["result"]["items"].as_array().unwrap().is_empty());
    let _ = c.cancel().await;

    let (c, _) = start_person(Answer::Never, &[WARN]).await;
    let marker = scratch_dir().join("ran");
    let mut req = interactive(&format!("echo careful > {}", marker.display()));
    req["runtime"]["timeout_ms"] = json!(1500);
    let started = std::time::Instant::now();
    let p = call(&c, "memory_terminal_interactive", req).await;
    assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{p:#}");
    assert_eq!(p["error"]["details"]["target"], "approval");
    assert!(started.elapsed() < Duration::from_secs(10));
    // Nothing ran, then or later: no file, no terminal opened for it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!marker.exists(), "a command nobody approved ran");
    let l = call(&c, "memory_terminal_interactive", json!({"action": "list"})).await;
    assert!(
        l["result"]["items"].as_array().unwrap().is_empty(),
        "a terminal was opened for it: {l:#}"
    );
    let _ = c.cancel().await;
}

/// The client cancels the call while its user is still being asked: the command is
/// declined at once and never runs, even when the user's yes arrives afterwards.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_cancelled_while_its_user_decides_never_runs() {
    let dir = scratch_dir();
    let marker = dir.join("ran");
    let (c, asked) = start_person(
        Answer::ApproveAfter(Duration::from_millis(1500)),
        &[("PM_TERM_POLICY_WARN", "touch")],
    )
    .await;
    let req = interactive(&format!("touch {}", marker.display()));
    let pending = send_call(c.peer(), "memory_terminal_interactive", req, None).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while asked.lock().unwrap().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the user was never asked"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pending
        .cancel(Some("the user pressed stop".into()))
        .await
        .unwrap();
    // Past the user's late yes, and time for a terminal to run the command.
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert!(!marker.exists(), "a cancelled call's command ran");
    let l = call(&c, "memory_terminal_interactive", json!({"action": "list"})).await;
    assert!(
        l["result"]["items"].as_array().unwrap().is_empty(),
        "no terminal opened for it: {l:#}"
    );
    let _ = c.cancel().await;
}

/// A client that declares URL elicitation only cannot show the approval's form: it is not
/// asked (in either protocol), and the next approver — here the operator's default —
/// decides at once, instead of a question it cannot show running into its timeout.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_shows_only_urls_is_not_asked_for_a_form() {
    let lifecycles = [
        ClientLifecycleMode::Initialize,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    ];
    for lifecycle in lifecycles {
        let (c, asked) = start_person_with(
            Answer::Approve,
            &[WARN, ("PM_TERM_APPROVAL_DEFAULT", "approve")],
            lifecycle,
            true,
        )
        .await;
        let p = call(
            &c,
            "memory_terminal_interactive",
            interactive("echo careful"),
        )
        .await;
        assert_eq!(
            p["result"]["approval"]["decided_by"], "operator_default",
            "{p:#}"
        );
        assert_eq!(p["result"]["output"], "careful\n", "{p:#}");
        assert!(asked.lock().unwrap().is_empty(), "{:?}", asked.lock());
        let _ = c.cancel().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn operator_default_and_approval_for_everything() {
    // No page, no elicitation: by default the operator's default declines, headless and
    // interactive alike, names the setting, and nothing runs.
    let marker = scratch_dir().join("ran");
    let careful = |mode: &str| {
        json!({"action": "execute",
            "invocation": {"mode": mode, "intent": "execute_command"},
            "execution": {"command": format!("echo careful; touch {}", marker.display())}})
    };
    let s = server()
        .envs(&[WARN, ("PM_TERM_NO_USER_RC", "1")])
        .start()
        .await;
    for mode in ["interactive", "headless"] {
        let p = s.call(careful(mode)).await;
        assert_eq!(code(&p), "PM_TERM_DECLINED", "{mode}: {p:#}");
        assert_eq!(p["error"]["details"]["decided_by"], "operator_default");
        assert_eq!(p["error"]["details"]["setting"], "PM_TERM_APPROVAL_DEFAULT");
        assert_eq!(p["error"]["details"]["rule"], "operator_warned");
        assert!(
            p["error"]["message"]
                .as_str()
                .unwrap()
                .contains("PM_TERM_APPROVAL_DEFAULT=approve"),
            "the refusal names the setting that allows it: {p:#}"
        );
        assert!(!marker.exists(), "{mode}: a declined command ran");
    }
    s.stop().await;
    // The operator may let them run unattended: then they run, with who decided.
    let s = server()
        .envs(&[
            WARN,
            ("PM_TERM_NO_USER_RC", "1"),
            ("PM_TERM_APPROVAL_DEFAULT", "approve"),
        ])
        .start()
        .await;
    let p = s.call(careful("interactive")).await;
    assert_eq!(p["result"]["approval"]["decided_by"], "operator_default");
    assert_eq!(p["result"]["output"], "careful\n");
    let h = s.call(careful("headless")).await;
    assert_eq!(h["result"]["authorization"], "allowed_with_warning");
    assert_eq!(h["result"]["approval"]["decided_by"], "operator_default");
    assert_eq!(h["result"]["stdout"], "careful\n");
    assert!(marker.exists());
    s.stop().await;
    // An operator who sends headless commands past the person keeps the old way.
    std::fs::remove_file(&marker).unwrap();
    let s = server()
        .envs(&[WARN, ("PM_TERM_APPROVE_HEADLESS", "off")])
        .start()
        .await;
    let h = s.call(careful("headless")).await;
    assert_eq!(
        h["result"]["authorization"], "allowed_with_warning",
        "{h:#}"
    );
    assert!(h["result"].get("approval").is_none(), "{h:#}");
    assert!(marker.exists());
    s.stop().await;
    // The operator can ask for approval of every interactive command.
    let (c, asked) = start_person(Answer::Approve, &[("PM_TERM_APPROVAL", "all")]).await;
    let p = call(&c, "memory_terminal_interactive", interactive("echo plain")).await;
    assert_eq!(p["result"]["approval"]["decided_by"], "elicitation");
    assert_eq!(asked.lock().unwrap().len(), 1);
    let _ = c.cancel().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn blocked_commands_never_run_nor_ask() {
    // Inert shells: a policy regression could not run these lines.
    let inert = inert_shells();
    let (c, asked) = start_person(Answer::Approve, &env_refs(&inert)).await;
    for cmd in [
        "rm -rf /",
        "sudo mkfs.ext4 /dev/sda1",
        "bash -c 'dd if=/dev/zero of=/dev/sda'",
    ] {
        let p = call(&c, "memory_terminal_interactive", interactive(cmd)).await;
        assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{cmd}");
        let p = call(&c, "memory_terminal_interactive", headless(cmd)).await;
        assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{cmd}");
    }
    // Raw keystrokes that would enter a blocked command line are judged too.
    let o = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "execute",
        "invocation": {"mode": "interactive", "intent": "open_only"}}),
    )
    .await;
    let id = o["identity"]["terminal_id"].as_str().unwrap();
    let p = call(
        &c,
        "memory_terminal_interactive",
        json!({"action": "execute",
        "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": {"input": "rm -rf ~\r"}}),
    )
    .await;
    assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE");
    assert!(asked.lock().unwrap().is_empty());
    let _ = c.cancel().await;
}
