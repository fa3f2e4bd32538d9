//! A person on the host's page decides: questions withdrawn with their call, fields an agent
//! sends that would route around the page, a page host killed while asking.

use super::*;

/// A call cancelled while a person on the host's page is asked: the question is taken off
/// the page at once (resolved as withdrawn), a late yes finds nothing to decide, the same
/// request asked again is a new question on the page, and the command never runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_question_on_the_page_is_withdrawn_when_its_call_is_cancelled() {
    let host = host("tok-withdraw").start();
    let port = host.port.to_string();
    let marker = scratch_dir().join("ran");
    let env = [
        ("PM_RUNNING_IN_CONTAINER", "true"),
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1"),
        ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port.as_str()),
        ("PM_INTERACTIVE_TERMINAL_TOKEN", "tok-withdraw"),
        ("PM_TERM_POLICY_WARN", "touch"),
    ];
    let (c, asked) = start_person(Answer::Approve, &env).await;
    let (mut tx, mut rx) = page(&host.addr, &host.login).await;
    let mut req = interactive(&format!("touch {}", marker.display()));
    req["correlation"] = json!({"request_id": "req_withdrawn_1"});
    let pending = send_call(c.peer(), "memory_terminal_interactive", req.clone(), None).await;
    let a = next_pending(&mut rx).await;
    pending
        .cancel(Some("the user pressed stop".into()))
        .await
        .unwrap();
    let resolved = next_of(&mut rx, "pm/approval/resolved").await;
    assert_eq!(
        resolved["params"]["approval_id"], a["approval_id"],
        "{resolved}"
    );
    assert_eq!(resolved["params"]["decision"], "withdrawn", "{resolved}");
    decide(&mut tx, 7, &a["approval_id"], "approve", None).await;
    let late = next_of(&mut rx, "").await;
    assert!(
        late["error"].is_object(),
        "a withdrawn question is not decided: {late}"
    );
    // The same request asked again (same request id): a new question on the page, which
    // the person decides; the client's user, who would say yes, is not asked.
    let again = send_call(c.peer(), "memory_terminal_interactive", req, None).await;
    let q = next_pending(&mut rx).await;
    assert_ne!(q["approval_id"], a["approval_id"], "{q}");
    decide(&mut tx, 8, &q["approval_id"], "decline", Some("not now")).await;
    let rmcp::model::ServerResult::CallToolResult(r) = again.await_response().await.unwrap() else {
        panic!("not a tool result")
    };
    let p = check_result(&r);
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    assert_eq!(p["error"]["details"]["decided_by"], "page", "{p:#}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!marker.exists(), "a cancelled call's command ran");
    assert!(
        asked.lock().unwrap().is_empty(),
        "not handed on to the client"
    );
    let _ = c.cancel().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_on_the_host_page_decides() {
    let host = host("tok-page").start();
    let port = host.port.to_string();
    let env = [
        ("PM_RUNNING_IN_CONTAINER", "true"),
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1"),
        ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port.as_str()),
        ("PM_INTERACTIVE_TERMINAL_TOKEN", "tok-page"),
        WARN,
    ];
    // The MCP client declares elicitation too: the page comes first.
    let (c, asked) = start_person(Answer::Approve, &env).await;
    let c = Arc::new(c);
    let (mut tx, mut rx) = page(&host.addr, &host.login).await;

    let pending = in_background(&c, "echo careful declined");
    let a = next_pending(&mut rx).await;
    assert_eq!(a["command"], "echo careful declined");
    assert!(a["warning"].as_str().unwrap().contains("operator"));
    decide(&mut tx, 2, &a["approval_id"], "decline", Some("not now")).await;
    let p = pending.await.unwrap();
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    assert_eq!(p["error"]["details"]["decided_by"], "page");
    assert_eq!(p["error"]["details"]["reason"], "not now");

    let approved = in_background(&c, "echo careful approved");
    let a = next_pending(&mut rx).await;
    decide(&mut tx, 3, &a["approval_id"], "approve", None).await;
    let p = approved.await.unwrap();
    assert_eq!(p["result"]["output"], "careful approved\n", "{p:#}");
    // The page is shown what a screen would reorder written out, as the client is.
    let reordered = in_background(&c, "echo careful \u{2067}reordered");
    let a = next_pending(&mut rx).await;
    assert_eq!(a["command"], "echo careful \\u{2067}reordered", "{a:#}");
    decide(&mut tx, 4, &a["approval_id"], "approve", None).await;
    let p = reordered.await.unwrap();
    assert_eq!(
        p["result"]["output"], "careful \u{2067}reordered\n",
        "{p:#}"
    );
    assert_eq!(p["result"]["approval"]["decided_by"], "page");
    assert_eq!(p["result"]["approval"]["approver"], "page-test");

    // Nobody decides in time.
    let mut req = interactive("echo careful ignored");
    req["runtime"]["timeout_ms"] = json!(1500);
    let p = call(&c, "memory_terminal_interactive", req).await;
    assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{p:#}");
    assert_eq!(p["error"]["details"]["decided_by"], "page");
    assert!(
        asked.lock().unwrap().is_empty(),
        "the page answered, elicitation was not needed"
    );
}

/// Every field an agent controls, tried as a way around the person at the page: none picks a
/// program, none skips the page.
#[tokio::test(flavor = "multi_thread")]
async fn no_field_an_agent_sends_routes_around_the_page() {
    let host = host("tok-hostile-agent").start();
    let port = host.port.to_string();
    let env = [
        ("PM_RUNNING_IN_CONTAINER", "true"),
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1"),
        ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port.as_str()),
        ("PM_INTERACTIVE_TERMINAL_TOKEN", "tok-hostile-agent"),
        // The operator lets requests pick a local terminal, and sends headless through approval.
        ("PM_TERM_ADAPTER_OVERRIDES", "local"),
        ("PM_TERM_APPROVE_HEADLESS", "on"),
        WARN,
    ];
    // The client would approve anything through elicitation: the page must come first.
    let (c, asked) = start_person(Answer::Approve, &env).await;
    let c = Arc::new(c);
    let (mut tx, mut rx) = page(&host.addr, &host.login).await;

    // A program of the agent's choosing: a script that leaves a mark if it ever runs.
    let dir = scratch_dir();
    let mark = dir.join("agent-program-ran");
    let script = dir.join("agent-program");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch {}\nexec /bin/sh \"$@\"\n", mark.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = script.to_str().unwrap();
    for (req, field) in [
        (
            json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
                "runtime": {"adapter_override": "bundled", "binary_path": script}}),
            "runtime.binary_path",
        ),
        (
            json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
                "execution": {"shell": script}}),
            "execution.shell",
        ),
        (
            json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                "execution": {"command": "echo careful"}, "runtime": {"adapter_override": "bundled"}}),
            "runtime.adapter_override",
        ),
    ] {
        let p = call(&c, "memory_terminal_interactive", req).await;
        assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
        let named = p["error"]["details"]["field"]
            .as_str()
            .or(p["error"]["details"]["violations"][0]["path"].as_str());
        assert_eq!(named, Some(field), "{p:#}");
    }
    assert!(!mark.exists(), "an agent-chosen program ran");

    // A local terminal and a headless command: both wait for the page.
    let local = interactive("echo careful local");
    let mut local_req = local.clone();
    local_req["runtime"]["adapter_override"] = json!("local");
    let mut headless_req = headless("echo careful headless");
    headless_req["runtime"] = json!({"adapter_override": "auto"});
    for (req, command) in [
        (local_req, "echo careful local"),
        (headless_req, "echo careful headless"),
    ] {
        let pending = {
            let c = c.clone();
            let tool = if command.contains("headless") {
                "memory_terminal"
            } else {
                "memory_terminal_interactive"
            };
            tokio::spawn(async move { call(&c, tool, req).await })
        };
        let a = next_pending(&mut rx).await;
        assert_eq!(a["command"], command);
        decide(&mut tx, 9, &a["approval_id"], "decline", Some("no")).await;
        let p = pending.await.unwrap();
        assert_eq!(code(&p), "PM_TERM_DECLINED", "{command}: {p:#}");
        assert_eq!(p["error"]["details"]["decided_by"], "page");
    }

    // `auto` is the same as saying nothing: the operator's adapter (the container's host).
    let mut auto =
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}});
    let unset = call(&c, "memory_terminal_interactive", auto.clone()).await;
    auto["runtime"] = json!({"adapter_override": "auto"});
    let picked = call(&c, "memory_terminal_interactive", auto).await;
    assert_eq!(
        unset["resolved"]["adapter"], "container_bridge",
        "{unset:#}"
    );
    assert_eq!(
        picked["resolved"]["adapter"], unset["resolved"]["adapter"],
        "{picked:#}"
    );
    assert!(
        asked.lock().unwrap().is_empty(),
        "elicitation was asked instead of the page"
    );
    assert!(!mark.exists());
}

/// The `--gui` set-up as people run it: a person's page is asked about a warned command,
/// and the page's host dies (SIGKILL) while the question waits. The agent is not left
/// waiting for an answer that cannot come: the chain goes on to the MCP client's
/// elicitation at once, well before the approval's own (ten-minute) deadline.
#[tokio::test(flavor = "multi_thread")]
async fn a_page_host_killed_while_asking_hands_the_question_on() {
    use tokio::io::AsyncBufReadExt;
    let cmd = server()
        .args(&["--gui"])
        .envs(&[
            ("PM_TERM_NO_USER_RC", "1"),
            ("PM_TERM_APPROVAL_TIMEOUT_MS", "600000"),
            WARN,
        ])
        .command();
    let (t, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let server_pid = t.id().unwrap();
    let (link_tx, link_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr.unwrap()).lines();
        let mut link_tx = Some(link_tx);
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(at) = line.find("http://")
                && line.contains("/login?code=")
                && let Some(tx) = link_tx.take()
            {
                let link = line[at..].split_whitespace().next().unwrap().to_string();
                let _ = tx.send(link);
            }
            eprintln!("{line}");
        }
    });
    let asked = Arc::new(Mutex::new(Vec::new()));
    let person = Person {
        answer: Answer::Approve,
        asked: asked.clone(),
        urls_only: false,
    };
    let c = Arc::new(person.serve(t).await.unwrap());
    let link = tokio::time::timeout(Duration::from_secs(20), link_rx)
        .await
        .expect("the server logs the page's address")
        .unwrap();
    let addr = link
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let (_tx, mut rx) = page(&addr, &link).await;

    let mut req = interactive("echo careful after the host died");
    req["runtime"]["timeout_ms"] = json!(600_000);
    let pending = {
        let c = c.clone();
        tokio::spawn(async move { call(&c, "memory_terminal_interactive", req).await })
    };
    let a = next_pending(&mut rx).await;
    assert_eq!(a["command"], "echo careful after the host died");
    assert!(asked.lock().unwrap().is_empty(), "the page is asked first");

    // The host is the server's child; kill it as the OOM killer would.
    let hosts: Vec<u32> = children_of(server_pid)
        .into_iter()
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .map(|c| c.contains("--lifeline"))
                .unwrap_or(false)
        })
        .collect();
    assert_eq!(hosts.len(), 1, "one host under the server: {hosts:?}");
    sigkill(hosts[0]);

    // Far sooner than the approval's deadline: the question goes on to elicitation.
    let p = tokio::time::timeout(Duration::from_secs(60), pending)
        .await
        .expect("the agent is answered soon after the host died, not at the deadline")
        .unwrap();
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "elicitation asked once: {asked:?}; {p:#}");
    assert!(
        asked[0].contains("echo careful after the host died"),
        "{asked:?}"
    );
    // Approved there, the command runs on the host the adapter started again.
    assert_eq!(
        p["result"]["approval"]["decided_by"], "elicitation",
        "{p:#}"
    );
    assert_eq!(
        p["result"]["output"], "careful after the host died\n",
        "{p:#}"
    );
    let _ = Arc::try_unwrap(c).ok().map(|c| c.cancel());
}
