//! The strict allow-listed `memory_terminal` tool, and limits answered clearly.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn the_strict_tool() {
    let s = server().start().await;
    let strict = |args: Value| {
        let Value::Object(m) = args else { panic!() };
        CallToolRequestParams::new("memory_terminal").with_arguments(m)
    };
    let tools = s.client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "memory_terminal"));
    let ok = check_result(
        &s.client
            .call_tool(strict(json!({"command": "echo strict-ok"})))
            .await
            .unwrap(),
    );
    assert_eq!(ok["result"]["stdout"], "strict-ok\n", "{ok:#}");
    // The documented shortcut is not a legacy alias.
    assert_eq!(ok["resolved"]["alias_applied"], false, "{ok:#}");
    assert_eq!(ok["resolved"]["canonical_action"], "execute");
    let id = ok["identity"]["session_id"].as_str().unwrap().to_string();
    let ok = check_result(
        &s.client
            .call_tool(strict(headless("git --version")))
            .await
            .unwrap(),
    );
    assert_eq!(ok["success"], true, "{ok:#}");
    for bad in [
        "lsof",
        "git branch -D main",
        "ls; rm -rf x",
        "ls | sh",
        "echo $(id)",
        "rm -rf build",
        "FOO=1 ls",
    ] {
        let p = check_result(
            &s.client
                .call_tool(strict(json!({"command": bad})))
                .await
                .unwrap(),
        );
        assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{bad}: {p:#}");
        assert_eq!(p["error"]["details"]["rule"], "strict_allowlist");
        assert!(p["error"]["details"]["allowed"].as_array().unwrap().len() > 10);
        let words = p["fallback"]["user_message"].as_str().unwrap();
        assert!(
            words.contains("strict allowlist") && words.contains("memory_terminal_interactive"),
            "{bad}: {words}"
        );
        assert!(!words.contains("destructive"), "{bad}: {words}");
    }
    let p = check_result(
        &s.client
            .call_tool(strict(json!({"action": "execute",
        "invocation": {"mode": "interactive", "intent": "open_only"}})))
            .await
            .unwrap(),
    );
    assert_eq!(code(&p), "PM_TERM_INVALID_MODE");
    let r = check_result(&s.client.call_tool(strict(json!({"action": "read_output", "target": {"session_id": id}, "output": {"stdout_cursor": 0}}))).await.unwrap());
    assert_eq!(r["result"]["stdout"], "strict-ok\n");
    let l = check_result(
        &s.client
            .call_tool(strict(json!({"action": "list"})))
            .await
            .unwrap(),
    );
    assert!(
        l["result"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["kind"] == "session")
    );
    s.stop().await;
    // The operator extends the list.
    let s = server()
        .envs(&[("PM_TERM_STRICT_ALLOW", "printf")])
        .start()
        .await;
    let ok = check_result(
        &s.client
            .call_tool(strict(json!({"command": "printf extended"})))
            .await
            .unwrap(),
    );
    assert_eq!(ok["result"]["stdout"], "extended");
    s.stop().await;
    // Phase C refuses legacy aliases, not the shortcut it documents.
    let s = server()
        .envs(&[("PM_TERM_DEPRECATION_PHASE", "C")])
        .start()
        .await;
    let ok = check_result(
        &s.client
            .call_tool(strict(json!({"command": "echo phase-c"})))
            .await
            .unwrap(),
    );
    assert_eq!(ok["result"]["stdout"], "phase-c\n", "{ok:#}");
    assert_eq!(ok["resolved"]["alias_applied"], false);
    assert!(ok["resolved"].get("deprecation").is_none(), "{ok:#}");
    let p = check_result(
        &s.client
            .call_tool(strict(json!({"action": "run", "command": "echo old"})))
            .await
            .unwrap(),
    );
    assert_eq!(code(&p), "PM_TERM_INVALID_ACTION", "{p:#}");
    assert_eq!(p["fallback"]["next_action"], "execute", "{p:#}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn limits_answer_clearly() {
    let s = server()
        .envs(&[
            ("PM_TERM_MAX_SESSIONS", "2"),
            ("PM_TERM_MAX_TERMINALS", "1"),
            ("PM_TERM_NO_USER_RC", "1"),
        ])
        .start()
        .await;
    let mut long = headless("sleep 30");
    long["runtime"] = json!({"wait_ms": 50});
    s.call(long.clone()).await;
    s.call(long.clone()).await;
    let p = s.call(long).await;
    assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{p:#}");
    assert_eq!(p["error"]["retriable"], true, "{p:#}");
    assert_eq!(p["error"]["details"]["limit"], "running_commands");
    assert!(
        p["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit of 2 running commands"),
        "{p:#}"
    );
    let open =
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}});
    assert_eq!(s.call(open.clone()).await["success"], true);
    let p = s.call(open).await;
    assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{p:#}");
    assert_eq!(p["error"]["details"]["limit"], "live_terminals");
    // Oversized requests and environments.
    let big = "x".repeat(1_100_000);
    let p = s.call(headless(&format!("echo {big}"))).await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD");
    let mut env = serde_json::Map::new();
    for i in 0..300 {
        env.insert(format!("K{i}"), json!("v"));
    }
    let mut req = headless("true");
    req["execution"]["env"] = Value::Object(env);
    assert_eq!(code(&s.call(req).await), "PM_TERM_INVALID_PAYLOAD");
    s.stop().await;
}
