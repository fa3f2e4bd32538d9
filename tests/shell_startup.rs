//! Shells as users' rc files start them: slow (a version manager's or conda's set-up takes
//! seconds), stopping to ask something (zsh's `compinit` about insecure directories), or
//! handing over to another shell (`exec` at the end of a `.bashrc`). A command is typed only
//! into a shell ready for it, nothing of the server's cuts an rc short, and a question is put
//! to the agent instead of being answered with the first letter of a command line.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;

/// A shell whose rc takes its time (a version manager's or conda's set-up): a command sent
/// to it waits until the shell is ready, and a call cancelled in that wait must not leave the
/// command to be typed afterwards, running where nobody learns of it, nor cut the rc short
/// with a Ctrl-C (the terminal would lose the user's prompt and its shell integration).
#[tokio::test]
async fn a_call_cancelled_before_a_slow_shell_is_ready_runs_nothing() {
    let (s, _home) = server_in_home("bash", &[(".bashrc", "sleep 2\nPS1='slow-rc$ '\n")]).await;
    let mut q = open_terminal();
    q["runtime"] = json!({"wait_ms": 0});
    let p = s.call(q).await;
    assert_eq!(p["success"], true, "{p:#}");
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let n = unique_sleep();
    let mut q = terminal_command(&id, &format!("sleep {n}"));
    q["runtime"] = json!({"wait_ms": 60000});
    let call = send_call(s.client.peer(), "memory_terminal_interactive", q, None).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        pids_with_arg(&n),
        Vec::<i32>::new(),
        "typed before the shell was ready"
    );
    call.cancel(Some("the user pressed stop".into()))
        .await
        .unwrap();
    // Past the rc's wait, whatever the server did with the command is done.
    let found = wait_present(&n, 1, Duration::from_secs(4)).await;
    let left = wait_gone(&n, Duration::from_secs(5)).await;
    assert!(
        left.is_empty(),
        "the cancelled command ran on (seen {found}): {left:?}"
    );
    // The shell came up and works.
    let r = s.call(terminal_command(&id, "echo ready-after-all")).await;
    assert_eq!(r["result"]["output"], "ready-after-all\n", "{r:#}");
    // A call that waits less than the rc takes types its line early, and its timeout's
    // Ctrl-C waits for the prompt instead of cutting the user's rc short.
    let mut q = open_terminal();
    q["runtime"] = json!({"wait_ms": 0});
    let p = s.call(q).await;
    let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
    let n = unique_sleep();
    let mut q = terminal_command(&id, &format!("sleep {n}"));
    q["runtime"] = json!({"wait_ms": 500, "timeout_ms": 300});
    let r = s.call(q).await;
    assert_eq!(code(&r), "PM_TERM_TIMEOUT", "{r:#}");
    let left = wait_gone(&n, Duration::from_secs(5)).await;
    assert!(left.is_empty(), "the timed-out command ran on: {left:?}");
    let r = s.call(terminal_command(&id, "echo set-up-intact")).await;
    assert_eq!(r["result"]["output"], "set-up-intact\n", "{r:#}");
    assert_eq!(r["result"]["shell_integration"], "full", "{r:#}");
    s.stop().await;
}

/// zsh's `compinit` stops at "Ignore insecure directories and continue [y] or abort compinit
/// [n]?" when a completion directory is writable by others (a home mounted into a
/// container, a shared machine). Typed into it, `echo …` answered with its `e` and ran
/// `cho …`; now nothing is typed, the agent gets the question in that terminal, answers it,
/// and the shell then comes up whole.
#[tokio::test]
async fn a_question_from_the_rc_files_goes_to_the_agent() {
    let rc =
        "fpath=(~/shared-completions $fpath)\nautoload -Uz compinit\ncompinit\nPS1='asked%# '\n";
    let (s, home) = server_in_home("zsh", &[(".zshrc", rc)]).await;
    let shared = home.join("shared-completions");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let r = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": "echo typed-too-early"}, "runtime": {"wait_ms": 20000}}))
        .await;
    assert_eq!(r["error"]["details"]["busy"], true, "{r:#}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains("abort compinit [n]?"), "{r:#}");
    let id = r["identity"]["terminal_id"].as_str().unwrap().to_string();
    assert_eq!(r["error"]["details"]["terminal_id"], id.as_str(), "{r:#}");
    let output = r["error"]["details"]["output"].as_str().unwrap();
    assert!(output.contains("insecure directories"), "{r:#}");
    // Opening a terminal alone says so too.
    let mut q = open_terminal();
    q["runtime"] = json!({"wait_ms": 10000});
    let opened = s.call(q).await;
    assert_eq!(opened["success"], true, "{opened:#}");
    let note = opened["result"]["note"].as_str().unwrap_or_default();
    assert!(note.contains("abort compinit [n]?"), "{opened:#}");
    // Asked again, the same: still nothing typed.
    let again = s.call(terminal_command(&id, "echo typed-too-early")).await;
    assert_eq!(again["error"]["details"]["busy"], true, "{again:#}");
    // The agent answers as a person would (`compinit` reads one key); the shell finishes its
    // rc and runs commands with its integration.
    let answered = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"input": "y", "wait_for": "asked# $"},
            "runtime": {"wait_ms": 10000}}))
        .await;
    assert_eq!(answered["success"], true, "{answered:#}");
    let r = s.call(terminal_command(&id, "echo answered")).await;
    assert_eq!(r["result"]["output"], "answered\n", "{r:#}");
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    assert_eq!(r["result"]["shell_integration"], "full", "{r:#}");
    let screen = s
        .call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"view": "screen"}}))
        .await;
    let text = screen["result"]["screen"]["text"].as_str().unwrap();
    assert!(
        !text.contains("typed-too-early") && !text.contains("not found"),
        "{text}"
    );
    s.stop().await;
}

/// A `.bashrc` that ends in `exec` of another shell never finishes as far as the
/// integration knows, and the other shell's prompt is no question: commands are typed into
/// it, and answered without integration.
#[tokio::test]
async fn a_shell_the_rc_files_exec_takes_commands() {
    let (s, _home) = server_in_home("bash", &[(".bashrc", "PS1='$ ' exec /bin/sh\n")]).await;
    let r = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": "echo handed-over"}, "runtime": {"wait_ms": 20000}}))
        .await;
    assert_eq!(r["success"], true, "{r:#}");
    assert!(
        r["result"]["output"]
            .as_str()
            .unwrap()
            .contains("handed-over"),
        "{r:#}"
    );
    s.stop().await;
}

/// `git log` in a terminal, with a `core.pager` in the user's git config: printed whole and
/// finished, not left in a pager that waits for a key nobody presses.
#[tokio::test]
async fn git_log_in_a_terminal_is_not_left_in_a_pager() {
    let gitconfig = "[user]\n\tname = A User\n\temail = user@example.com\n[core]\n\tpager = less\n[init]\n\tdefaultBranch = main\n";
    let (s, home) = server_in_home("bash", &[(".gitconfig", gitconfig)]).await;
    let repo = home.join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("HOME", &home)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    for i in 0..80 {
        git(&[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            &format!("change {i}"),
        ]);
    }
    let r = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": format!("cd {} && git log --oneline", repo.display())},
            "runtime": {"wait_ms": 20000}}))
        .await;
    assert_eq!(r["result"]["running"], false, "{r:#}");
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    let output = r["result"]["output"].as_str().unwrap();
    assert!(
        output.contains("change 79") && output.contains("change 0"),
        "{r:#}"
    );
    s.stop().await;
}

/// A prompt that takes its time to draw (powerline, a git status in a big repository, a busy
/// machine) and a command whose `timeout_ms` passes before the prompt is ready. The line
/// was typed then and interrupted at once: fish's line editor took the Ctrl-C, dropped the
/// line and drew no new prompt, so the next command waited its whole wait for one, answered
/// `running` with no output, and the one after was typed with bracketed paste's marker in
/// front (`[200~echo …`, not found). Now nothing is typed once the timeout has passed, a
/// Ctrl-C waits for the line it interrupts to start, and every next command runs as sent.
#[tokio::test]
async fn a_timeout_that_passes_while_a_slow_prompt_draws_leaves_the_terminal_usable() {
    let setups: [(&str, &str, &str); 2] = [
        (
            "fish",
            ".config/fish/config.fish",
            "set -g fish_greeting\nfunction fish_prompt\n    sleep 0.5\n    printf 'slow> '\nend\n",
        ),
        (
            "bash",
            ".bashrc",
            "PROMPT_COMMAND='sleep 0.5'\nPS1='slow$ '\n",
        ),
    ];
    for (shell, rc, text) in setups {
        let (s, _home) = server_in_home(shell, &[(rc, text)]).await;
        let p = s.call(open_terminal()).await;
        let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
        for round in 0..3 {
            let mut q = terminal_command(&id, "sleep 30");
            q["runtime"] = json!({"timeout_ms": 300, "wait_ms": 15000});
            let p = s.call(q).await;
            assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{shell} {round}: {p:#}");
            let line = format!("echo after-{round}");
            let mut q = terminal_command(&id, &line);
            q["runtime"] = json!({"wait_ms": 15000});
            let p = s.call(q).await;
            assert_eq!(p["success"], true, "{shell} {round}: {p:#}");
            assert_eq!(
                p["result"]["output"],
                format!("after-{round}\n"),
                "{shell} {round}: {p:#}"
            );
            assert_eq!(p["result"]["exit_code"], 0, "{shell} {round}: {p:#}");
            assert_eq!(p["result"]["command"]["command_line"], line, "{p:#}");
        }
        s.stop().await;
    }
}
