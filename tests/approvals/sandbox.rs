//! Leaving the operator's sandbox asks a person (nobody means no), and what the operator
//! may let run without asking inside it.

use super::*;

/// A workspace and a directory outside it, under /var/tmp (a sandbox's /tmp is its own).
fn sandbox_dirs() -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let base = std::path::PathBuf::from("/var/tmp").join(unique("itmcp-escape-"));
    let (ws, out) = (base.join("ws"), base.join("outside"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    (base, ws, out)
}

#[tokio::test(flavor = "multi_thread")]
async fn leaving_the_sandbox_asks_a_person_and_nobody_means_no() {
    let (base, ws, out) = sandbox_dirs();
    let ws_text = ws.display().to_string();
    let env = [
        ("PM_TERM_SANDBOX", "workspace-write"),
        ("PM_TERM_WORKSPACE", ws_text.as_str()),
    ];
    let escaped = out.join("escaped");
    let mut escape = headless(&format!("touch {}", escaped.display()));
    escape["runtime"] = json!({"unsandboxed": true, "cwd": ws_text});

    // Nobody can be asked (no page, no elicitation) and the operator's default is to
    // approve: leaving the sandbox is still refused.
    let s = server().envs(&env).start().await;
    let p = s.call(escape.clone()).await;
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    assert_eq!(p["error"]["details"]["decided_by"], "nobody", "{p:#}");
    assert!(!escaped.exists());
    // Blocked stays blocked, whatever the request asks.
    let mut blocked = headless("rm -rf /");
    blocked["runtime"] = json!({"unsandboxed": true});
    let p = s.call(blocked).await;
    assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{p:#}");
    // A terminal cannot leave: its shell and everything typed into it stay confined.
    let mut term = interactive("touch /var/tmp/never");
    term["runtime"]["unsandboxed"] = json!(true);
    let p = s.call(term).await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
    assert_eq!(p["error"]["details"]["field"], "runtime.unsandboxed");
    // Only a boolean asks: anything else is a malformed request, and nothing runs.
    for bad in [json!("yes"), json!(1), json!({"really": true})] {
        let mut q = escape.clone();
        q["runtime"]["unsandboxed"] = bad;
        let p = s.call(q).await;
        assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
    }
    assert!(!escaped.exists());
    s.stop().await;

    // A person declines: nothing runs.
    let (c, _) = start_person(Answer::Decline("stay inside"), &env).await;
    let p = call(&c, "memory_terminal_interactive", escape.clone()).await;
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    assert!(!escaped.exists());
    // The strict tool never leaves the sandbox.
    let p = call(&c, "memory_terminal", escape.clone()).await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
    let _ = c.cancel().await;

    // A person approves, told that it runs outside the sandbox: the command runs unconfined.
    let (c, asked) = start_person(Answer::Approve, &env).await;
    let p = call(&c, "memory_terminal_interactive", escape.clone()).await;
    assert_eq!(p["result"]["exit_code"], 0, "{p:#}");
    assert_eq!(
        p["result"]["approval"]["decided_by"], "elicitation",
        "{p:#}"
    );
    assert!(escaped.exists());
    assert!(
        asked.lock().unwrap()[0].contains("OUTSIDE the sandbox"),
        "{:?}",
        asked.lock().unwrap()
    );
    // Without the request, the same command stays confined and nobody is asked.
    let mut plain = headless(&format!("touch {}/again", out.display()));
    plain["runtime"] = json!({"cwd": ws_text});
    let p = call(&c, "memory_terminal_interactive", plain).await;
    assert_ne!(p["result"]["exit_code"], 0, "{p:#}");
    assert!(!out.join("again").exists());
    assert_eq!(asked.lock().unwrap().len(), 1);
    let _ = c.cancel().await;
    let _ = std::fs::remove_dir_all(base);
}

#[tokio::test(flavor = "multi_thread")]
async fn inside_a_sandbox_the_operator_may_let_warned_commands_run_without_asking() {
    let (base, ws, _) = sandbox_dirs();
    let ws_text = ws.display().to_string();
    let env = [
        WARN,
        ("PM_TERM_SANDBOX", "workspace-write"),
        ("PM_TERM_WORKSPACE", ws_text.as_str()),
        ("PM_TERM_APPROVAL_DEFAULT", "decline"),
        ("PM_TERM_APPROVE_HEADLESS", "on"),
        ("PM_TERM_NO_USER_RC", "1"),
    ];
    // By default a sandbox changes nothing about approvals.
    let s = server().envs(&env).start().await;
    let p = s.call(headless("echo careful")).await;
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    s.stop().await;
    // With the operator's setting, warned commands run without asking, headless and in a
    // terminal, and say they were warned about.
    let s = server()
        .envs(&env)
        .env("PM_TERM_SANDBOX_SKIPS_APPROVAL", "1")
        .start()
        .await;
    let p = s.call(headless("echo careful")).await;
    assert_eq!(p["result"]["stdout"], "careful\n", "{p:#}");
    assert_eq!(p["result"]["authorization"], "allowed_with_warning");
    assert!(p["result"].get("approval").is_none(), "{p:#}");
    let p = s.call(interactive("echo careful")).await;
    assert_eq!(p["result"]["output"], "careful\n", "{p:#}");
    // Blocked stays blocked.
    let p = s.call(headless("rm -rf /")).await;
    assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{p:#}");
    s.stop().await;
    let _ = std::fs::remove_dir_all(base);
}
