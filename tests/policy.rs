//! The policy corpus (tests/data/policy_corpus.json): every command, its expected
//! authorization. Judged by the library directly, and a sample through the real binary.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use common::*;
use itmcp::policy::{Authorization, Policy};
use serde_json::{Value, json};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/policy_corpus.json");

/// A corpus line: the command, its expected authorization, and the rules that decide it
/// (every rule that found something, sorted; none for an allowed command).
struct Case {
    command: String,
    expect: String,
    rules: Vec<String>,
}

fn corpus() -> Vec<Case> {
    let text = std::fs::read_to_string(CORPUS).unwrap();
    let v: Vec<Value> = serde_json::from_str(&text).unwrap();
    v.into_iter()
        .map(|e| Case {
            command: e["command"].as_str().unwrap().to_string(),
            expect: e["expect"].as_str().unwrap().to_string(),
            rules: e["rules"]
                .as_array()
                .map(|r| r.iter().map(|x| x.as_str().unwrap().to_string()).collect())
                .unwrap_or_default(),
        })
        .collect()
}

/// The rules behind a decision, as the corpus lists them.
fn rules_of(d: &itmcp::policy::Decision) -> Vec<String> {
    let mut r: Vec<String> = d.findings.iter().map(|f| f.rule.to_string()).collect();
    r.sort();
    r.dedup();
    r
}

#[test]
fn corpus_decisions() {
    let policy = Policy::default();
    let cases = corpus();
    assert!(
        cases.len() >= 200,
        "the corpus has {} commands",
        cases.len()
    );
    let mut wrong = Vec::new();
    for Case {
        command: cmd,
        expect: want,
        rules,
    } in &cases
    {
        let d = policy.evaluate(cmd, None);
        // The server judges with its working directory: the verdict must not depend on it
        // for any corpus line (a `~alice` once read as relative to it).
        let in_dir = policy.evaluate(cmd, Some("/tmp/itmcp-scratch/work"));
        if in_dir.authorization != d.authorization {
            wrong.push(format!(
                "{cmd:?}: {} without a working directory, {} in one",
                d.authorization.as_str(),
                in_dir.authorization.as_str()
            ));
        }
        if d.authorization.as_str() != want {
            wrong.push(format!(
                "{cmd:?}: want {want}, got {} {:?}",
                d.authorization.as_str(),
                d.findings.iter().map(|f| f.rule).collect::<Vec<_>>()
            ));
        }
        // The right verdict for the wrong reason is wrong too: a line blocked as a fork
        // bomb that should have been blocked for its target says the rule that caught it
        // is gone.
        let got = rules_of(&d);
        if &got != rules {
            wrong.push(format!("{cmd:?}: rules {rules:?}, got {got:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

/// The corpus file is exactly what the policy gives now (each line's rules, the file's
/// format). After a deliberate change, `PM_WRITE_POLICY_CORPUS=1 cargo test --test policy
/// corpus_file` writes it instead; the diff is the review.
#[test]
fn corpus_file_is_what_the_policy_gives() {
    let policy = Policy::default();
    let text = std::fs::read_to_string(CORPUS).unwrap();
    let mut v: Vec<Value> = serde_json::from_str(&text).unwrap();
    for e in &mut v {
        let d = policy.evaluate(e["command"].as_str().unwrap(), None);
        let rules = rules_of(&d);
        if rules.is_empty() {
            e.as_object_mut().unwrap().remove("rules");
        } else {
            e["rules"] = json!(rules);
        }
    }
    // One space a level, as the file is kept.
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    serde::Serialize::serialize(
        &v,
        &mut serde_json::Serializer::with_formatter(&mut out, fmt),
    )
    .unwrap();
    out.push(b'\n');
    if std::env::var_os("PM_WRITE_POLICY_CORPUS").is_some() {
        std::fs::write(CORPUS, out).unwrap();
    } else {
        assert!(
            text.as_bytes() == out.as_slice(),
            "tests/data/policy_corpus.json differs from what the policy gives now; \
             PM_WRITE_POLICY_CORPUS=1 rewrites it"
        );
    }
}

#[test]
fn argv_requests_are_judged_the_same_way() {
    let p = Policy::default();
    assert_eq!(
        p.evaluate_argv("rm", &["-rf".into(), "/".into()], None)
            .authorization,
        Authorization::Blocked
    );
    assert_eq!(
        p.evaluate_argv("echo", &["rm -rf /".into()], None)
            .authorization,
        Authorization::Allowed
    );
    assert_eq!(
        p.evaluate_argv("bash", &["-c".into(), "mkfs.ext4 /dev/sdb".into()], None)
            .authorization,
        Authorization::Blocked
    );
    // A relative target is resolved against the request's directory.
    assert_eq!(
        p.evaluate("rm -rf *", Some("/")).authorization,
        Authorization::Blocked
    );
    assert_eq!(
        p.evaluate("rm -rf *", Some("/tmp/build")).authorization,
        Authorization::AllowedWithWarning
    );
    // A `cd` the line makes moves what follows it; one in a subshell does not, so every
    // place the line may be in is judged.
    for line in [
        "cd / && rm -rf *",
        "(cd /tmp); rm -rf *",
        "echo $(cd /tmp); rm -rf *",
    ] {
        let start = if line.starts_with("cd /") {
            "/tmp/build"
        } else {
            "/"
        };
        assert_eq!(
            p.evaluate(line, Some(start)).authorization,
            Authorization::Blocked,
            "{line} from {start}"
        );
    }
}

/// Blocked commands through the real binary. Only blocked ones: they never run. (Corpus
/// commands that are allowed or warned would really run, so they are judged above only.)
#[tokio::test]
async fn blocked_through_the_binary() {
    // Inert shells: even if the binary disagreed with the library, nothing could run.
    let inert = inert_shells();
    let s = server().envs(&env_refs(&inert)).start().await;
    let blocked: Vec<String> = corpus()
        .into_iter()
        .filter(|c| c.expect == "blocked")
        .map(|c| c.command)
        .collect();
    for cmd in blocked.iter().step_by(3) {
        for mode in ["headless", "interactive"] {
            let p = s
                .call(json!({"action": "execute", "invocation": {"mode": mode, "intent": "execute_command"},
                    "execution": {"command": cmd}}))
                .await;
            assert_eq!(
                code(&p),
                "PM_TERM_BLOCKED_DESTRUCTIVE",
                "{mode} {cmd}: {p:#}"
            );
            assert_eq!(p["fallback"]["strategy"], "reject_with_safety_hint");
            assert_eq!(p["error"]["details"]["authorization"], "blocked");
            assert!(p["error"]["details"]["rule"].is_string());
            assert!(p["error"]["details"]["safety_hint"].is_string());
        }
    }
    // Nothing was started for any of them.
    let l = s.call(json!({"action": "list"})).await;
    assert!(l["result"]["items"].as_array().unwrap().is_empty());
    s.stop().await;
}

#[tokio::test]
async fn operator_policy_from_env_and_file() {
    let dir = std::env::temp_dir().join(format!("itmcp-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("policy.json");
    std::fs::write(
        &file,
        json!({"blocked": ["terraform destroy"], "allowed": ["git push --force-with-lease"]})
            .to_string(),
    )
    .unwrap();
    let s = server()
        .envs(&[
            ("PM_TERM_POLICY_FILE", file.to_str().unwrap()),
            ("PM_TERM_POLICY_WARN", "echo danger"),
            ("PM_TERM_APPROVAL_DEFAULT", "approve"),
        ])
        .start()
        .await;
    let p = s.call(headless("terraform destroy -auto-approve")).await;
    assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE");
    assert_eq!(p["error"]["details"]["rule"], "operator_blocked");
    let p = s.call(headless("echo danger zone")).await;
    assert_eq!(p["result"]["authorization"], "allowed_with_warning");
    let p = s
        .call(headless(
            "git push --force-with-lease --dry-run 2>/dev/null; true",
        ))
        .await;
    assert_eq!(p["result"]["authorization"], "allowed");
    // The agent cannot change the policy: no request field does.
    let p = s.call(json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": "terraform destroy"}, "policy": {"allowed": ["terraform destroy"]}})).await;
    assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD");
    s.stop().await;
    // A broken policy file stops the server at start, with the reason.
    std::fs::write(&file, "{\"blocked\": [\"unterminated 'quote\"]}").unwrap();
    let out = server()
        .env("PM_TERM_POLICY_FILE", &file.display().to_string())
        .output();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("policy"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server whose terminals run `shell` in `home`, with `rm` blocked by the operator, and a
/// terminal of it.
async fn blocking_rm_in(home: &str, shell: &str) -> (Server, String) {
    let s = server()
        .envs(&[
            ("HOME", home),
            ("PM_TERM_INTERACTIVE_SHELL", shell),
            ("PM_TERM_POLICY_BLOCK", "rm"),
            // What is tested is the terminal's own refusal, past an approval.
            ("PM_TERM_APPROVAL_DEFAULT", "approve"),
        ])
        .start()
        .await;
    let id = open_shell(&s).await;
    (s, id)
}

/// A request that types `execution` (raw input or keys) into terminal `id`.
fn typed_into(id: &str, execution: Value) -> Value {
    json!({"action": "execute",
        "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": execution,
        "runtime": {"wait_ms": 500}})
}

/// An agent that hides a blocked command behind keys that erase what came before it: the
/// shell's line editor (bash with bracketed paste off, as readline before 8.1 has it) and
/// the line discipline (dash) apply Ctrl-U and DEL, so `echo x` + Ctrl-U + `rm FILE` ran the
/// `rm` the operator blocked, judged as an `echo`. A command line with a control key is now
/// refused, and raw input is judged as the line it enters, with what the agent left unentered
/// before it. A tab, which that line editor would take as a completion request, is refused
/// there too.
#[tokio::test]
async fn an_agent_cannot_erase_its_way_past_a_blocked_command() {
    let home = scratch_dir();
    std::fs::write(
        home.join(".bashrc"),
        "bind 'set enable-bracketed-paste off'\nPS1='\\w\\$ '\n",
    )
    .unwrap();
    let victim = home.join("keep-me");
    std::fs::write(&victim, "x").unwrap();
    let victim = victim.display().to_string();
    let home_s = home.display().to_string();
    for shell in ["bash", "dash"] {
        let (s, id) = blocking_rm_in(&home_s, shell).await;
        let raw = |data: String| typed_into(&id, json!({"input": data}));
        // Blocked, and the file still there.
        let blocked = |p: &Value, how: &str| {
            assert_eq!(
                code(p),
                "PM_TERM_BLOCKED_DESTRUCTIVE",
                "{shell} {how}: {p:#}"
            );
            assert!(
                std::path::Path::new(&victim).exists(),
                "{shell} {how}: it ran"
            );
        };
        for hidden in [
            format!("echo x\u{15}rm {victim}"),
            format!("rm {victim}x\u{7f}"),
            format!("echo \u{3}rm {victim}"),
        ] {
            let p = s.call(terminal_command(&id, &hidden)).await;
            assert_eq!(
                code(&p),
                "PM_TERM_INVALID_PAYLOAD",
                "{shell} {hidden:?}: {p:#}"
            );
            assert_eq!(p["error"]["details"]["field"], "execution.command", "{p:#}");
            let p = s.call(raw(format!("{hidden}\r"))).await;
            blocked(&p, &format!("input {hidden:?}"));
        }
        // A blocked command typed over two calls, each part harmless alone; and a command
        // line pasted after a part left unentered.
        let p = s.call(raw("r".into())).await;
        assert_eq!(p["success"], true, "{shell}: {p:#}");
        let p = s.call(raw(format!("m {victim}\r"))).await;
        blocked(&p, "in two calls");
        let p = s.call(terminal_command(&id, &format!("m {victim}"))).await;
        blocked(&p, "after a part");
        s.call(raw("\u{15}".into())).await;
        // Wrapped in bracketed paste's own markers: an escape sequence is one key, and the
        // pasted line is judged as it is.
        let p = s
            .call(raw(format!("\u{1b}[200~rm {victim}\u{1b}[201~\r")))
            .await;
        blocked(&p, "pasted");
        // A tab typed key by key into a line editor would ask it to complete the line: refused
        // there (dash has no line editor: a tab is text).
        let p = s.call(terminal_command(&id, "echo\tstill-here")).await;
        if shell == "bash" {
            assert_eq!(code(&p), "PM_TERM_INVALID_PAYLOAD", "{p:#}");
            assert!(
                p["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("completion")
            );
        } else {
            assert_eq!(p["result"]["output"], "still-here\n", "{shell}: {p:#}");
        }
        let p = s.call(terminal_command(&id, "echo still-here")).await;
        assert_eq!(p["result"]["output"], "still-here\n", "{shell}: {p:#}");
        s.stop().await;
    }
}

/// The operator blocks `rm`; the user's own history holds an `rm` they once ran. Keys that
/// have the shell's line editor enter a line other than the one they spell — the history
/// recalled (Up, Ctrl-R), the cursor moved to put a blocked word together (Ctrl-A, Home
/// sent in a call of its own) — were a warning, approved when nobody could be asked, and the
/// shell ran the `rm`, in bash, zsh and fish alike. At the shell's prompt they are now
/// refused, whichever call brings the Enter, and a command line refused that way leaves
/// what was typed before it counted. In a program with a line editor of its own (python's
/// REPL) the same keys still work.
#[tokio::test]
async fn an_agent_cannot_recall_or_rearrange_its_way_past_a_blocked_command() {
    let bash_rc =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rc/bash/debian-skel.bashrc");
    for shell in ["zsh", "fish", "bash"] {
        let home = scratch_dir();
        let victim = home.join("keep-me");
        std::fs::write(&victim, "x").unwrap();
        let victim = victim.display().to_string();
        // Each shell's own rc and history file, the `rm` in it as the shell writes it.
        match shell {
            "bash" => {
                std::fs::copy(&bash_rc, home.join(".bashrc")).unwrap();
                std::fs::write(home.join(".bash_history"), format!("ls\nrm {victim}\n")).unwrap();
            }
            "zsh" => {
                std::fs::write(
                    home.join(".zshrc"),
                    "HISTFILE=~/.zsh_history\nHISTSIZE=100\nSAVEHIST=100\nbindkey -e\n",
                )
                .unwrap();
                std::fs::write(home.join(".zsh_history"), format!("ls\nrm {victim}\n")).unwrap();
            }
            _ => {
                let data = home.join(".local/share/fish");
                std::fs::create_dir_all(&data).unwrap();
                std::fs::write(
                    data.join("fish_history"),
                    format!(
                        "- cmd: ls\n  when: 1700000000\n- cmd: rm {victim}\n  when: 1700000001\n"
                    ),
                )
                .unwrap();
            }
        }
        let home_s = home.display().to_string();
        let (s, id) = blocking_rm_in(&home_s, shell).await;
        let send = |execution: Value| typed_into(&id, execution);
        let refused = |p: &Value, how: &str| {
            assert_eq!(code(p), "PM_TERM_INVALID_PAYLOAD", "{shell} {how}: {p:#}");
            assert!(
                p["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("line editor"),
                "{shell} {how}: {p:#}"
            );
            assert!(
                std::path::Path::new(&victim).exists(),
                "{shell} {how}: it ran"
            );
        };
        let p = s.call(send(json!({"keys": ["up", "enter"]}))).await;
        refused(&p, "Up, Enter");
        let p = s.call(send(json!({"input": "\u{1b}[A\r"}))).await;
        refused(&p, "Up as raw input");
        let p = s.call(send(json!({"input": "\u{12}keep\r"}))).await;
        refused(&p, "Ctrl-R");
        // Ctrl-O enters the line as Enter does (bash's operate-and-get-next).
        let p = s.call(send(json!({"input": "\u{1b}[A\u{f}"}))).await;
        refused(&p, "Up, Ctrl-O");
        let p = s
            .call(send(json!({"input": format!("m {victim}\u{1}r\r")})))
            .await;
        refused(&p, "Ctrl-A");
        s.call(send(json!({"input": "\u{3}"}))).await;
        if shell == "bash" {
            // Ctrl-X Ctrl-E runs what $EDITOR saves, with no Enter among the keys.
            let p = s.call(send(json!({"input": "echo hi\u{18}\u{5}"}))).await;
            refused(&p, "Ctrl-X Ctrl-E");
            s.call(send(json!({"input": "\u{3}"}))).await;
            // Meta-1 Meta-# (insert-comment with an argument): readline takes the comment
            // sign off `#rm …` and enters the line, with no Enter among the keys.
            let p = s
                .call(send(
                    json!({"input": format!("#rm {victim}\u{1b}1\u{1b}#")}),
                ))
                .await;
            assert_eq!(p["success"], false, "Meta-1 Meta-#: {p:#}");
            s.call(send(json!({"input": "\u{3}"}))).await;
        }
        // The pieces in calls of their own: each harmless, the Enter last.
        let p = s.call(send(json!({"input": format!("m {victim}")}))).await;
        assert_eq!(p["success"], true, "{shell}: {p:#}");
        let p = s.call(send(json!({"keys": ["home"]}))).await;
        assert_eq!(p["success"], true, "{shell}: {p:#}");
        let p = s.call(send(json!({"input": "r\r"}))).await;
        refused(&p, "Home in a call of its own");
        // A command line pasted at the moved cursor, twice: the first refusal does not
        // forget what is still on the line.
        for round in ["first", "again"] {
            let p = s.call(terminal_command(&id, "r")).await;
            refused(&p, &format!("a command line after Home, {round}"));
        }
        // Ctrl-C drops the line; the terminal runs commands as before.
        s.call(send(json!({"input": "\u{3}"}))).await;
        let p = s.call(terminal_command(&id, "echo still-here")).await;
        assert_eq!(p["result"]["exit_code"], 0, "{shell}: {p:#}");
        assert!(std::path::Path::new(&victim).exists(), "{shell}");
        if shell == "bash" {
            // python's own line editor takes the same keys: its history, recalled and run.
            let p = s
                .call(terminal_input(&id, "python3 -q\r", Some(">>> $")))
                .await;
            assert_eq!(p["success"], true, "{p:#}");
            let p = s.call(terminal_input(&id, "6*7\r", Some(">>> $"))).await;
            assert!(
                p["result"]["output"].as_str().unwrap().contains("42"),
                "{p:#}"
            );
            let p = s
                .call(terminal_input(&id, "\u{1b}[A\r", Some("42\\s+>>> $")))
                .await;
            assert_eq!(p["success"], true, "{p:#}");
            assert!(
                p["result"]["output"].as_str().unwrap().contains("42"),
                "{p:#}"
            );
        }
        s.stop().await;
    }
}

/// The strict tool admits `git status`; an agent that can write files (an editing tool beside
/// this server) tried to have it run a program of its own under an allowlisted name: by a
/// path (`./git`, an absolute path), through `execution.env.PATH`, through git's
/// configuration in the environment (`core.fsmonitor`, a program `git status` starts), and
/// through a relative entry in the operator's own `PATH` (`.` first, as some users keep it).
/// Each ran the agent's program before; now each is refused or finds the real `git`, and
/// the environment a strict command may have is data the operator admits.
#[tokio::test]
async fn an_agent_cannot_run_its_own_program_under_an_allowlisted_name() {
    let proj = scratch_dir();
    let made = proj.join("agent-program-ran");
    let program = format!("#!/bin/sh\ntouch '{}'\necho fake\n", made.display());
    for name in ["git", "bin/git", "hook"] {
        let p = proj.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, &program).unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let git_init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&proj)
        .status()
        .unwrap();
    assert!(git_init.success());
    let operator_path = format!(".:{}", std::env::var("PATH").unwrap());
    let s = server()
        .env("PATH", &operator_path)
        .env("PM_TERM_STRICT_ENV", "DATABASE_URL")
        .start()
        .await;
    let cwd = proj.display().to_string();
    let strict = |args: Value| {
        let mut args = args;
        args["runtime"] = json!({"cwd": cwd});
        s.call_result_of("memory_terminal", args)
    };
    let hooked = |name: &str| {
        json!({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": name,
            "GIT_CONFIG_VALUE_0": proj.join("hook").display().to_string()})
    };
    let refused = [
        (json!({"command": "./git status"}), None),
        (
            json!({"command": format!("{}/bin/git --version", proj.display())}),
            None,
        ),
        (
            json!({"command": "bin/git", "execution": {"args": ["status"]}}),
            None,
        ),
        (
            json!({"command": "git --version", "execution": {"env": {"PATH": format!("{}/bin:/usr/bin:/bin", proj.display())}}}),
            Some("execution.env.PATH"),
        ),
        (
            json!({"execution": {"command": "git status", "env": hooked("core.fsmonitor")}}),
            Some("execution.env.GIT_CONFIG_COUNT"),
        ),
        (
            json!({"execution": {"command": "git diff", "env": {"GIT_EXTERNAL_DIFF": proj.join("hook").display().to_string()}}}),
            Some("execution.env.GIT_EXTERNAL_DIFF"),
        ),
    ];
    for (q, field) in refused {
        let p = check_result(&strict(q.clone()).await);
        assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{q}: {p:#}");
        assert_eq!(p["error"]["details"]["rule"], "strict_allowlist", "{p:#}");
        match field {
            Some(f) => {
                assert_eq!(p["error"]["details"]["field"], f, "{p:#}");
                let allowed = p["error"]["details"]["allowed_env"].as_array().unwrap();
                assert!(allowed.contains(&json!("DATABASE_URL")), "{p:#}");
            }
            None => {
                let why = p["error"]["details"]["reason"].as_str().unwrap();
                assert!(why.contains("by a path"), "{q}: {why}");
            }
        }
    }
    assert!(!made.exists(), "a refused request ran the agent's program");
    // The operator's `.` is not searched for a strict command: the real git answers.
    let p = check_result(&strict(json!({"command": "git --version"})).await);
    assert_eq!(p["success"], true, "{p:#}");
    assert!(
        p["result"]["stdout"]
            .as_str()
            .unwrap()
            .starts_with("git version"),
        "{p:#}"
    );
    assert!(!made.exists(), "the operator's `.` ran the agent's git");
    // Data passes, the operator's names too, and the search path is the operator's
    // absolute entries.
    let p = check_result(
        &strict(json!({"execution": {"command": "cat /proc/self/environ",
            "env": {"CI": "1", "LC_ALL": "C", "RUST_BACKTRACE": "1", "DATABASE_URL": "postgres://db"}}}))
        .await,
    );
    assert_eq!(p["success"], true, "{p:#}");
    let environ: Vec<String> = p["result"]["stdout"]
        .as_str()
        .unwrap()
        .split('\0')
        .map(str::to_string)
        .collect();
    for v in [
        "CI=1",
        "LC_ALL=C",
        "RUST_BACKTRACE=1",
        "DATABASE_URL=postgres://db",
    ] {
        assert!(environ.iter().any(|e| e == v), "{v} in {environ:?}");
    }
    let path = environ
        .iter()
        .find_map(|e| e.strip_prefix("PATH="))
        .unwrap();
    assert!(
        !path.is_empty() && path.split(':').all(|d| d.starts_with('/')),
        "{path}"
    );
    // The interactive tool takes the same names.
    let p = s
        .call(json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": "echo $DATABASE_URL", "env": {"DATABASE_URL": "interactive"}}}))
        .await;
    assert_eq!(p["result"]["stdout"], "interactive\n", "{p:#}");
    assert!(!made.exists());
    s.stop().await;
}

/// The strict tool's build and test commands run the project's own code; their options may
/// not name another program or a place to write. `cargo test --config` with a runner ran a
/// shell command of the agent's choosing, with no file of the agent's needed; `pytest
/// --basetemp DIR` empties DIR. Refused now, with the options that shape a run still taken.
#[tokio::test]
async fn a_build_or_test_command_cannot_be_given_a_program_or_a_place_to_write() {
    let proj = scratch_dir();
    std::fs::write(
        proj.join("Cargo.toml"),
        "[package]\nname = \"strictproj\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::write(
        proj.join("src/lib.rs"),
        "#[test]\nfn adds() {\n    assert_eq!(1 + 1, 2);\n}\n",
    )
    .unwrap();
    let keep = proj.join("keep");
    std::fs::create_dir_all(&keep).unwrap();
    std::fs::write(keep.join("notes.txt"), "the user's").unwrap();
    let made = proj.join("agent-command-ran");
    let runner = format!(
        "target.'cfg(all())'.runner=['sh','-c','touch {}']",
        made.display()
    );
    // The project's tests are code the agent may have written: with nobody to ask they are
    // declined by default, naming the setting, and nothing runs.
    let s = server().start().await;
    let cwd = proj.display().to_string();
    let p = check_result(
        &s.call_result_of(
            "memory_terminal",
            json!({"command": "cargo test -q --lib", "runtime": {"cwd": cwd, "wait_ms": 120000}}),
        )
        .await,
    );
    assert_eq!(code(&p), "PM_TERM_DECLINED", "{p:#}");
    assert_eq!(p["error"]["details"]["rule"], "project_code", "{p:#}");
    assert!(!proj.join("target").exists(), "a declined build ran");
    s.stop().await;
    let s = server()
        .env("PM_TERM_APPROVAL_DEFAULT", "approve")
        .start()
        .await;
    let strict = |command: Value| {
        s.call_result_of(
            "memory_terminal",
            json!({"execution": command, "runtime": {"cwd": cwd, "wait_ms": 120000}}),
        )
    };
    let refused = [
        json!({"command": format!("cargo build --manifest-path {}/../other/Cargo.toml", proj.display())}),
        json!({"command": "cargo", "args": ["test", "--config", runner]}),
        json!({"command": format!("cargo build --config build.rustc-wrapper={}", made.display())}),
        json!({"command": "cargo", "args": ["test", "-q", format!("--config={runner}")]}),
        json!({"command": format!("pytest --basetemp {}", keep.display())}),
        json!({"command": "python3 -m pytest -vp some_plugin"}),
        json!({"command": "npm test --node-options=--import=data:text/javascript,1"}),
        json!({"command": "go build -o /usr/local/bin/git ."}),
        json!({"command": "go test -exec 'sh -c true' ./..."}),
    ];
    for q in refused {
        let p = check_result(&strict(q.clone()).await);
        assert_eq!(code(&p), "PM_TERM_BLOCKED_DESTRUCTIVE", "{q}: {p:#}");
        assert_eq!(p["error"]["details"]["rule"], "strict_allowlist", "{p:#}");
    }
    assert!(!made.exists(), "a refused build ran the agent's command");
    assert!(
        keep.join("notes.txt").exists(),
        "a refused pytest emptied a directory"
    );
    // What shapes a run is still taken: the project's tests run, and report.
    let p =
        check_result(&strict(json!({"command": "cargo test -q --lib -- --test-threads 1"})).await);
    assert_eq!(p["success"], true, "{p:#}");
    assert_eq!(p["result"]["exit_code"], 0, "{p:#}");
    assert_eq!(
        p["result"]["authorization"], "allowed_with_warning",
        "{p:#}"
    );
    assert_eq!(
        p["result"]["approval"]["decided_by"], "operator_default",
        "{p:#}"
    );
    assert!(
        p["result"]["stdout"]
            .as_str()
            .unwrap()
            .contains("test result: ok. 1 passed"),
        "{p:#}"
    );
    let p = check_result(
        &strict(json!({"command": "cargo metadata --no-deps --format-version 1"})).await,
    );
    assert!(
        p["result"]["stdout"]
            .as_str()
            .unwrap()
            .contains("strictproj"),
        "{p:#}"
    );
    s.stop().await;
}

/// zsh runs code from inside a word: a glob qualifier's `e` runs its code for each file the
/// glob matches. `ls *(e:'rm FILE':)` ran the `rm` the operator blocked, read as a listing of
/// an odd name; it is now judged as the `rm` it runs, and the file stays.
#[tokio::test]
async fn zsh_glob_qualifier_code_is_judged() {
    let home = scratch_dir();
    let victim = home.join("keep-me");
    std::fs::write(&victim, "x").unwrap();
    std::fs::write(home.join(".zshrc"), "setopt nonomatch\n").unwrap();
    let home_s = home.display().to_string();
    let (s, id) = blocking_rm_in(&home_s, "zsh").await;
    let line = format!("cd {home_s} && ls *(e:'rm {}':)", victim.display());
    let p = s.call(terminal_command(&id, &line)).await;
    assert_eq!(p["success"], false, "{p:#}");
    assert_eq!(p["error"]["details"]["rule"], "operator_blocked", "{p:#}");
    // The terminal still runs what it may, and the file is there.
    let p = s.call(terminal_command(&id, "echo still-here")).await;
    assert_eq!(p["result"]["exit_code"], 0, "{p:#}");
    assert!(victim.exists(), "the qualifier's rm ran");
}
