//! Credentials of the server's own environment, which the agent's commands must not print.

use super::*;

/// The server's environment holds credentials (the client's configuration, the shell that
/// started it). A line printing one by name is warned, but `env`, `jq -n env`, `awk`'s
/// `ENVIRON`, python's `os.environ` and `/proc/*/environ` printed them all, unasked, from
/// both tools and from a terminal. None of them sees one now, as root and as `nobody`,
/// warned commands approved; the variables the operator keeps, and plain data, still pass.
#[tokio::test(flavor = "multi_thread")]
async fn the_agent_prints_no_credential_of_the_servers_environment() {
    const SECRETS: [(&str, &str); 4] = [
        ("GITHUB_TOKEN", "ghp_adversarial_0123456789"),
        ("OPENAI_API_KEY", "sk-adversarial-0123456789"),
        ("DB_PASSWORD", "pw-adversarial-0123456789"),
        ("AWS_SECRET_ACCESS_KEY", "aws-adversarial-0123456789"),
    ];
    for who in identities() {
        let p = place(who);
        let mut env = SECRETS.to_vec();
        env.extend([
            ("NPM_TOKEN", "kept-by-the-operator"),
            ("PM_TERM_KEEP_ENV", "NPM_TOKEN"),
            ("PLAIN_SETTING", "plain-data"),
            ("PM_TERM_INTERACTIVE_SHELL", "bash"),
        ]);
        let s = start(who, &p, &[], &env).await;
        let cwd = p.ws.display().to_string();
        let printers = [
            "env",
            "printenv",
            "export -p",
            "jq -n env",
            "jq -n '$ENV'",
            "awk 'BEGIN{for (k in ENVIRON) print k \"=\" ENVIRON[k]}'",
            "python3 -c 'import os; print(dict(os.environ))'",
            "cat /proc/self/environ",
            "cat /proc/*/environ",
            "printenv GITHUB_TOKEN OPENAI_API_KEY DB_PASSWORD AWS_SECRET_ACCESS_KEY",
        ];
        let mut seen = String::new();
        for line in printers {
            let r = s
                .call(json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
                    "execution": {"command": line}, "runtime": {"cwd": cwd, "wait_ms": 20000}}))
                .await;
            seen.push_str(r["result"]["stdout"].as_str().unwrap_or_default());
        }
        let strict = ["jq -n env", "cat /proc/self/environ", "ps eww"];
        for line in strict {
            let r = check_result(
                &s.call_result_of(
                    "memory_terminal",
                    json!({"command": line, "runtime": {"cwd": cwd, "wait_ms": 20000}}),
                )
                .await,
            );
            seen.push_str(r["result"]["stdout"].as_str().unwrap_or_default());
        }
        let r = s
            .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                "execution": {"command": "env; jq -n env"}, "runtime": {"cwd": cwd, "wait_ms": 20000}}))
            .await;
        seen.push_str(r["result"]["output"].as_str().unwrap_or_default());
        for (name, value) in SECRETS {
            assert!(!seen.contains(value), "{who:?}: {name} was printed");
        }
        // What is not a credential, and what the operator keeps, still reach commands.
        assert!(seen.contains("PLAIN_SETTING=plain-data"), "{who:?}: {seen}");
        assert!(seen.contains("kept-by-the-operator"), "{who:?}: {seen}");
        s.stop().await;
    }
}
