//! What a request may ask for: data, never a program, code to load or a setting of the
//! server's own; and with nobody to ask, a warned command does not run.

use super::*;

/// Each field of a request that could choose a program, load code or change one of the
/// server's settings is refused, naming the field, as root and as `nobody`: a variable that
/// makes bash run the agent's file (`BASH_ENV`), a search path that puts the agent's `ls`
/// first, a library to preload, the agent's own home with the server's rc switch emptied,
/// the integration's nonce file pointed at a file to delete, a prompt command, the server's
/// approval setting, a shell or a binary given by path. Nothing they name runs and the file
/// stays; data still passes.
#[tokio::test(flavor = "multi_thread")]
async fn request_fields_choose_no_program_and_load_no_code() {
    for who in identities() {
        let p = place(who);
        let ran = p.out.join("ran");
        let touch = format!("touch {}", ran.display());
        let script = format!("#!/bin/sh\n{touch}\n");
        let rc = p.ws.join("rc");
        let evil = p.ws.join("evil");
        let agent_home = p.ws.join("agent-home");
        std::fs::create_dir_all(&evil).unwrap();
        std::fs::create_dir_all(&agent_home).unwrap();
        std::fs::write(&rc, &script).unwrap();
        std::fs::write(agent_home.join(".bashrc"), format!("{touch}\n")).unwrap();
        for name in ["ls", "sh"] {
            let f = evil.join(name);
            std::fs::write(&f, &script).unwrap();
            std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        let precious = p.out.join("keep.txt");
        if who == Who::Nobody {
            chown_tree(&p.base, NOBODY);
        }
        let s = start(who, &p, &[], &[("PM_TERM_INTERACTIVE_SHELL", "bash")]).await;
        let cwd = p.ws.display().to_string();
        let headless = |command: &str, env: Value| {
            json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
                "execution": {"command": command, "env": env}, "runtime": {"cwd": cwd, "wait_ms": 20000}})
        };
        let open = |execution: Value| {
            json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
                "execution": execution, "runtime": {"cwd": cwd, "wait_ms": 20000}})
        };
        let path = |p: &Path| p.display().to_string();
        let requests = [
            (
                headless("bash -c true", json!({"BASH_ENV": path(&rc)})),
                "execution.env.BASH_ENV",
            ),
            (
                headless(
                    "ls",
                    json!({"PATH": format!("{}:/usr/bin:/bin", path(&evil))}),
                ),
                "execution.env.PATH",
            ),
            (
                headless("true", json!({"LD_PRELOAD": path(&p.ws.join("x.so"))})),
                "execution.env.LD_PRELOAD",
            ),
            (
                headless("echo hi", json!({"PM_TERM_APPROVAL_DEFAULT": "approve"})),
                "execution.env.PM_TERM_APPROVAL_DEFAULT",
            ),
            (
                open(json!({"env": {"PM_TERM_NO_USER_RC": "", "HOME": path(&agent_home)}})),
                "execution.env.",
            ),
            (
                open(json!({"env": {"PM_TERM_NONCE_FILE": path(&precious)}})),
                "execution.env.PM_TERM_NONCE_FILE",
            ),
            (
                open(json!({"env": {"PROMPT_COMMAND": touch}})),
                "execution.env.PROMPT_COMMAND",
            ),
            (
                open(json!({"shell": path(&evil.join("sh"))})),
                "execution.shell",
            ),
            (
                json!({"action": "list", "runtime": {"binary_path": path(&evil.join("sh"))}}),
                "runtime.binary_path",
            ),
        ];
        for (q, field) in requests {
            let r = s.call(q.clone()).await;
            assert_eq!(code(&r), "PM_TERM_INVALID_PAYLOAD", "{who:?} {q}: {r:#}");
            // A field's value the server refuses, or one the schema does not admit.
            let named = r["error"]["details"]["field"]
                .as_str()
                .or_else(|| r["error"]["details"]["violations"][0]["path"].as_str())
                .unwrap_or_default();
            assert!(
                named.starts_with(field),
                "{who:?}: the refusal names {field}, not {named:?}: {r:#}"
            );
        }
        // The strict tool's requests are held to the same list.
        let r = s
            .call_result_of(
                "memory_terminal",
                json!({"command": "ls", "execution": {"env": {"PATH": path(&evil)}},
                    "runtime": {"cwd": cwd}}),
            )
            .await;
        assert_eq!(
            code(&check_result(&r)),
            "PM_TERM_BLOCKED_DESTRUCTIVE",
            "{who:?}: {r:#?}"
        );
        // Data passes, so the refusals above are about the names.
        let r = s
            .call(headless(
                "echo $NODE_ENV",
                json!({"NODE_ENV": "data-passes"}),
            ))
            .await;
        assert_eq!(r["result"]["stdout"], "data-passes\n", "{who:?}: {r:#}");
        let id = open_shell(&s).await;
        let r = s
            .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                "target": {"terminal_id": id}, "execution": {"command": "ls >/dev/null; echo listed"},
                "runtime": {"wait_ms": 20000}}))
            .await;
        assert!(
            r["result"]["output"]
                .as_str()
                .unwrap_or_default()
                .contains("listed"),
            "{who:?}: {r:#}"
        );
        assert!(
            !ran.exists(),
            "{who:?}: a request field ran the agent's file"
        );
        assert_eq!(
            std::fs::read_to_string(&precious).unwrap(),
            "keep\n",
            "{who:?}"
        );
        s.stop().await;
    }
}

/// With nobody to ask — no page, no elicitation in the client — and the operator's default
/// left as it is, a warned command is declined, headless and in a terminal alike, and the
/// refusal names the setting that would allow it; it does not run. A command the policy
/// allows still runs.
#[tokio::test(flavor = "multi_thread")]
async fn with_nobody_to_ask_a_warned_command_does_not_run() {
    for who in identities() {
        let p = place(who);
        let ran = p.out.join("ran");
        // A program name the shell computes: warned (`computed_command`), not blocked.
        let warned = format!("$(printf touch) {}", ran.display());
        let s = start_declining(who, &p).await;
        let r = s.call(in_dir(&warned, &p.ws)).await;
        assert_eq!(r["success"], false, "{who:?}: {r:#}");
        assert_eq!(
            r["error"]["details"]["setting"], "PM_TERM_APPROVAL_DEFAULT",
            "{who:?}: {r:#}"
        );
        let id = open_shell(&s).await;
        let r = s
            .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                "target": {"terminal_id": id}, "execution": {"command": warned},
                "runtime": {"wait_ms": 20000}}))
            .await;
        assert_eq!(r["success"], false, "{who:?}: {r:#}");
        assert_eq!(
            r["error"]["details"]["setting"], "PM_TERM_APPROVAL_DEFAULT",
            "{who:?}: {r:#}"
        );
        let r = s.call(in_dir("echo allowed", &p.ws)).await;
        assert_eq!(r["result"]["stdout"], "allowed\n", "{who:?}: {r:#}");
        assert!(
            !ran.exists(),
            "{who:?}: a warned command ran with nobody to ask"
        );
        s.stop().await;
    }
}

/// Lines near the request limit that once made judging exponential or quadratic — a chain
/// of `cd`s (each doubled the places a line was judged in), a pipeline of 20,000 `env`s
/// ending in an upload (every command scanned the rest of the pipeline), 60,000 unclosed
/// `$(` typed into a shell — are judged and answered, as root and as `nobody`, while a
/// `list` sent beside each is answered too. With nobody to ask, each is declined and
/// nothing it names runs. Before the fixes the first never finished; the limit below only
/// turns such a hang into a failure that names the line.
#[tokio::test(flavor = "multi_thread")]
async fn lines_near_the_request_limit_are_judged_and_other_calls_answered() {
    for who in identities() {
        let p = place(who);
        let ran = p.out.join("ran");
        let touch = format!("touch {}", ran.display());
        let mut cds = String::new();
        for i in 0.. {
            if cds.len() > 126_000 {
                break;
            }
            cds.push_str(&format!("cd d{i}; "));
        }
        let cds = format!("{cds}{touch}; rm -rf *");
        let envs = "env | ".repeat(20_000);
        let envs = format!("{envs}{touch} | curl -d @- http://127.0.0.1:9/");
        let typed = format!("{}{touch}\r", "$(".repeat(60_000));
        let s = start_declining(who, &p).await;
        let id = open_shell(&s).await;
        let requests = [
            ("a chain of cd", in_dir(&cds, &p.ws)),
            ("a pipeline of env", in_dir(&envs, &p.ws)),
            ("typed brackets", terminal_input(&id, &typed, None)),
        ];
        for (what, q) in requests {
            assert!(
                serde_json::to_string(&q).unwrap().len() < 131_072 + 1024,
                "{what}: within the request limit"
            );
            let both = async { tokio::join!(s.call(q), s.call(json!({"action": "list"}))) };
            let (r, listed) = tokio::time::timeout(std::time::Duration::from_secs(300), both)
                .await
                .unwrap_or_else(|_| panic!("{who:?}: {what} was not judged in 5 minutes"));
            assert_eq!(listed["success"], true, "{who:?}: {what}: {listed:#}");
            assert_eq!(r["success"], false, "{who:?}: {what}: {r:#}");
            assert_eq!(
                r["error"]["details"]["setting"], "PM_TERM_APPROVAL_DEFAULT",
                "{who:?}: {what}: {r:#}"
            );
        }
        let r = s.call(in_dir("echo still", &p.ws)).await;
        assert_eq!(r["result"]["stdout"], "still\n", "{who:?}: {r:#}");
        assert!(!ran.exists(), "{who:?}: a declined line ran");
        s.stop().await;
    }
}
