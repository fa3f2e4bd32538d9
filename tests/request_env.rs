//! A request's environment (`execution.env`): data only, for both tools. Names off the list
//! are refused, and so are values that are paths where the name carries a name (a locale,
//! a time zone, a terminal type), which the C library would load from the agent's files.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use common::*;
use serde_json::{Value, json};

/// The environment of a request is neither judged nor shown to a person approving: a
/// `PROMPT_COMMAND` in it ran `touch` at every prompt of a new bash terminal with `touch`
/// blocked; `HOME` pointed a new shell at the agent's own `.bashrc`, with the server's
/// `PM_TERM_NO_USER_RC` emptied by the same request; `PM_TERM_NONCE_FILE` made the
/// integration delete a file it named. Only data names pass (and the operator's), for both
/// tools; the server's own variables never do.
#[tokio::test]
async fn a_request_environment_carries_data_only() {
    let home = scratch_dir();
    let made = home.join("made");
    let touch = format!("touch {}", made.display());
    let home_s = home.display().to_string();
    // A home of the agent's with an rc that runs the blocked command, and a file the nonce
    // variable would name.
    let agent_home = scratch_dir();
    std::fs::write(agent_home.join(".bashrc"), format!("{touch}\n")).unwrap();
    let precious = home.join("precious");
    std::fs::write(&precious, "keep").unwrap();
    let s = server()
        .envs(&[
            ("HOME", home_s.as_str()),
            ("PM_TERM_INTERACTIVE_SHELL", "bash"),
            ("PM_TERM_POLICY_BLOCK", "touch"),
            ("PM_TERM_ALLOW_ENV", "DATABASE_URL;PM_TERM_NO_USER_RC"),
        ])
        .start()
        .await;
    let interactive = |env: Value| {
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": "echo hi", "env": env}})
    };
    let open = |env: Value| {
        json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
            "execution": {"env": env}})
    };
    let headless = |command: &str, env: Value| {
        json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": command, "env": env}})
    };
    let requests = [
        interactive(json!({"PROMPT_COMMAND": touch})),
        open(json!({"PS1": format!("$({touch}) $ ")})),
        open(json!({"PM_TERM_NO_USER_RC": "", "HOME": agent_home.display().to_string()})),
        open(json!({"PM_TERM_NONCE_FILE": precious.display().to_string()})),
        open(json!({"INPUTRC": agent_home.join(".inputrc").display().to_string()})),
        headless(
            "echo hi",
            json!({"BASH_FUNC_echo%%": format!("() {{ {touch}; }}")}),
        ),
        headless(
            "bash -c 'echo hi'",
            json!({"BASH_ENV": home.join("rc").display().to_string()}),
        ),
        headless(
            "git status",
            json!({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor"}),
        ),
        headless(
            "perl -e 1",
            json!({"PERL5OPT": format!("-Mstrict;system(q({touch}))")}),
        ),
        headless("node -e 1", json!({"NODE_OPTIONS": "--require ./x.js"})),
        headless("echo $MY_VAR", json!({"MY_VAR": "unlisted"})),
    ];
    for q in requests {
        let p = s.call(q.clone()).await;
        assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{q}: {p:#}");
        let field = p["error"]["details"]["field"].as_str().unwrap();
        assert!(field.starts_with("execution.env."), "{p:#}");
        let message = p["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("PM_TERM_ALLOW_ENV") && message.contains("command line"),
            "the refusal says what to do instead: {message}"
        );
        let allowed = p["error"]["details"]["allowed_env"].as_array().unwrap();
        assert!(allowed.contains(&json!("DATABASE_URL")), "{p:#}");
        assert!(
            !allowed.contains(&json!("PM_TERM_NO_USER_RC")),
            "the operator cannot hand requests the server's own variables: {p:#}"
        );
    }
    // Data passes, and so do the operator's names.
    let p = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": "echo $NODE_ENV", "env": {"NODE_ENV": "data-passes"}}}))
        .await;
    assert_eq!(p["result"]["output"], "data-passes\n", "{p:#}");
    let p = s
        .call(headless(
            "echo $DATABASE_URL",
            json!({"DATABASE_URL": "postgres://db"}),
        ))
        .await;
    assert_eq!(p["result"]["stdout"], "postgres://db\n", "{p:#}");
    assert!(
        !made.exists(),
        "a request's environment ran a blocked command"
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep");
    s.stop().await;
}

/// `LANGUAGE` names message catalogues; a value that climbs out of the system's locale
/// directory (`../../../..WORKSPACE/evil`) had every program load the agent's catalogue,
/// whose translations are printf formats: `ls` printed the agent's words (and a `%n` in a
/// translation writes memory). A locale, time zone or terminal type that is a path is now
/// refused, naming the variable; the same names with plain values pass.
#[tokio::test]
async fn a_locale_from_the_agents_files_is_refused() {
    let ws = scratch_dir();
    let catalogue = ws.join("evil/LC_MESSAGES");
    std::fs::create_dir_all(&catalogue).unwrap();
    std::fs::write(
        catalogue.join("coreutils.mo"),
        mo_file("cannot access %s", "PWNED %s"),
    )
    .unwrap();
    let climb = format!("../../../../../../..{}/evil", ws.display());
    let s = server().start().await;
    let headless = |env: Value| {
        json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": "ls /nonexistent-itmcp", "env": env},
            "runtime": {"cwd": ws.display().to_string()}})
    };
    for (env, name) in [
        (json!({"LANG": "C.UTF-8", "LANGUAGE": climb}), "LANGUAGE"),
        (json!({"LC_ALL": ws.display().to_string()}), "LC_ALL"),
        (json!({"TZ": ws.join("zone").display().to_string()}), "TZ"),
        (json!({"TERM": "../../x"}), "TERM"),
    ] {
        let p = s.call(headless(env.clone())).await;
        assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{env}: {p:#}");
        assert_eq!(
            p["error"]["details"]["field"],
            format!("execution.env.{name}"),
            "{p:#}"
        );
        let message = p["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("never a path") && message.contains("nothing was run"),
            "{message}"
        );
        assert!(!p.to_string().contains("PWNED"), "{p:#}");
    }
    // Plain names pass, and the program runs in that locale.
    let p = s
        .call(headless(
            json!({"LANG": "C.UTF-8", "LANGUAGE": "de:en", "TZ": "Europe/Paris", "TERM": "xterm-256color"}),
        ))
        .await;
    assert_eq!(p["result"]["exit_code"], 2, "{p:#}");
    let stderr = p["result"]["stderr"].as_str().unwrap();
    assert!(
        stderr.contains("/nonexistent-itmcp") && !stderr.contains("PWNED"),
        "{p:#}"
    );
    s.stop().await;
}

/// A GNU message catalogue (`.mo`) with one translation.
fn mo_file(msgid: &str, msgstr: &str) -> Vec<u8> {
    let header = 28u32;
    let ids = header + 8;
    let strs = ids + 8;
    let data = strs + 8;
    let mut out = Vec::new();
    for word in [0x9504_12de_u32, 0, 1, header, ids, 0, 0] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(&(msgid.len() as u32).to_le_bytes());
    out.extend_from_slice(&data.to_le_bytes());
    out.extend_from_slice(&(msgstr.len() as u32).to_le_bytes());
    out.extend_from_slice(&(data + msgid.len() as u32 + 1).to_le_bytes());
    for s in [msgid, msgstr] {
        out.extend_from_slice(s.as_bytes());
        out.push(0);
    }
    out
}

/// Credentials in the server's own environment (the client's configuration, or the shell
/// that started it) are the operator's, not the agent's: a line printing one by name was
/// warned, but `env`, `jq -n env`, `awk`'s `ENVIRON` or `/proc/self/environ` printed them all
/// unasked. No command or terminal inherits a variable whose name says it holds a
/// credential, but those the operator keeps (`PM_TERM_KEEP_ENV`), and the server's own
/// environment block no longer shows them either.
#[tokio::test]
async fn credentials_of_the_servers_environment_are_withheld_from_commands() {
    let withheld = [
        ("GITHUB_TOKEN", "ghp_withheld_one"),
        ("MY_SERVICE_API_KEY", "withheld_two"),
        ("DB_PASSWORD", "withheld_three"),
        ("AWS_SECRET_ACCESS_KEY", "withheld_four"),
    ];
    let mut envs = withheld.to_vec();
    envs.extend([
        ("GH_TOKEN", "kept_by_the_operator"),
        ("PLAIN_SETTING", "plain_data"),
        ("PM_TERM_KEEP_ENV", "GH_TOKEN"),
        ("PM_TERM_INTERACTIVE_SHELL", "bash"),
        ("PM_TERM_NO_USER_RC", "1"),
    ]);
    let s = server().envs(&envs).start().await;
    let headless = json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": "env; tr '\\0' '\\n' < /proc/self/environ"}});
    let terminal = json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "execution": {"command": "env"}, "runtime": {"wait_ms": 15000}});
    let from_headless = s.call(headless).await["result"]["stdout"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let from_terminal = s.call(terminal).await["result"]["output"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let server_block = std::fs::read(format!("/proc/{}/environ", s.pid)).unwrap();
    let server_block = String::from_utf8_lossy(&server_block).to_string();
    for (what, seen) in [
        ("a headless command", &from_headless),
        ("a terminal", &from_terminal),
    ] {
        assert!(
            seen.contains("GH_TOKEN=kept_by_the_operator"),
            "{what}: {seen}"
        );
        assert!(seen.contains("PLAIN_SETTING=plain_data"), "{what}: {seen}");
        for (name, value) in withheld {
            assert!(!seen.contains(value), "{what} saw {name}: {seen}");
        }
    }
    for (name, value) in withheld {
        assert!(
            !server_block.contains(value),
            "the server's block shows {name}"
        );
    }
    s.stop().await;
    // The operator's check names them, and `*` keeps them all.
    let said = server().envs(&withheld).args(&["--check-config"]).output();
    let said = String::from_utf8_lossy(&said.stderr).to_string();
    assert!(
        said.contains(
            "do not inherit AWS_SECRET_ACCESS_KEY, DB_PASSWORD, GITHUB_TOKEN, MY_SERVICE_API_KEY"
        ),
        "{said}"
    );
    let mut all = withheld.to_vec();
    all.push(("PM_TERM_KEEP_ENV", "*"));
    let s = server().envs(&all).start().await;
    let r = s
        .call(json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": "env"}}))
        .await;
    assert!(
        r["result"]["stdout"]
            .as_str()
            .unwrap_or_default()
            .contains("GITHUB_TOKEN=ghp_withheld_one"),
        "{r:#}"
    );
    s.stop().await;
}
