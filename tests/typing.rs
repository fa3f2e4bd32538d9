//! What an agent types reaches the program as it was written: a command line's tabs are not
//! completion requests, its CRLF line ends are one Enter each, and a line the kernel would
//! cut is refused rather than run in part.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use common::*;
use serde_json::json;

/// No user rc files; warned lines (a line left open is `unparseable`) run unasked, so that
/// what is tested is the terminal's own handling of them.
fn env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("PM_TERM_NO_USER_RC", "1"),
        ("PM_TERM_APPROVAL_DEFAULT", "approve"),
    ]
}

/// A Makefile written with a here-document in a terminal, in bash and zsh with their user's
/// (empty) set-up: typed key by key, its tabs were completion requests — bash lost every
/// one, zsh those inside a line. Pasted as a terminal pastes, it is written whole. (fish's
/// line editor drops a tab even from a paste, and has no here-documents: see
/// docs/terminal-core.md.)
#[tokio::test]
async fn a_makefile_written_in_a_terminal_keeps_its_tabs() {
    let makefile = "all:\n\techo built\n\n\techo x\ty\n";
    for shell in ["bash", "zsh"] {
        let (s, home) = server_in_home(shell, &[]).await;
        let file = home.join("Makefile");
        let command = format!("cat > {} <<'EOF'\n{makefile}EOF", file.display());
        let r = s.call(open_running(&command)).await;
        assert_eq!(r["result"]["exit_code"], 0, "{shell}: {r:#}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), makefile, "{shell}");
        // And in a terminal it already used.
        let id = r["identity"]["terminal_id"].as_str().unwrap();
        let again = s
            .call(terminal_command(id, &command.replace("EOF", "END")))
            .await;
        assert_eq!(again["result"]["exit_code"], 0, "{shell}: {again:#}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), makefile, "{shell}");
        s.stop().await;
    }
}

/// A line longer than the kernel's line discipline keeps (4095 bytes) is cut without a word
/// wherever no line editor reads the keys: dash ran the start of such a command line, and
/// `read` got the start of such an answer. Such text is refused, with nothing typed; where a
/// line editor reads the keys (bash), the same line runs whole.
#[tokio::test]
async fn a_line_the_line_discipline_would_cut_is_refused_not_cut() {
    let long = format!("printf '%s' {} | wc -c", "y".repeat(5000));
    let s = server()
        .envs(&[
            ("PM_TERM_NO_USER_RC", "1"),
            ("PM_TERM_INTERACTIVE_SHELL", "dash"),
        ])
        .start()
        .await;
    let r = s.call(open_running(&long)).await;
    assert_eq!(code(&r), "PM_TERM_INVALID_PAYLOAD", "{r:#}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains("line discipline"), "{r:#}");
    let id = r["identity"]["terminal_id"].as_str().unwrap().to_string();
    let ok = s.call(terminal_command(&id, "echo still-fine")).await;
    assert!(
        ok["result"]["output"]
            .as_str()
            .unwrap()
            .contains("still-fine"),
        "{ok:#}"
    );
    s.stop().await;
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let r = s.call(terminal_command(&id, &long)).await;
    assert_eq!(r["result"]["output"], "5000\n", "{r:#}");
    // `read` takes its line through the line discipline.
    let mut q = terminal_command(&id, "read -r answer; echo got ${#answer}");
    q["runtime"] = json!({"wait_ms": 300});
    let r = s.call(q).await;
    assert_eq!(r["result"]["running"], true, "{r:#}");
    let r = s
        .call(terminal_input(
            &id,
            &format!("{}\r", "n".repeat(5000)),
            None,
        ))
        .await;
    assert_eq!(code(&r), "PM_TERM_INVALID_PAYLOAD", "{r:#}");
    let r = s.call(terminal_input(&id, "short\r", Some("got 5"))).await;
    assert!(
        r["result"]["output"].as_str().unwrap().contains("got 5"),
        "{r:#}"
    );
    s.stop().await;
}

/// A command line with CRLF line ends (a client on Windows): each is one Enter, so a
/// here-document writes its lines as they are, with no blank line after each.
#[tokio::test]
async fn a_here_document_with_crlf_line_ends_writes_its_lines() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let file = scratch_dir().join("crlf.txt");
    let command = format!("cat > {} <<'EOF'\r\none\r\ntwo\r\nEOF", file.display());
    let r = s.call(terminal_command(&id, &command)).await;
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\ntwo\n");
    s.stop().await;
}

/// A command line of several lines — a script an agent writes, a here-document and the
/// command that reads the file — answers when all of it has run, with all of its output
/// and the last line's status, as `$?` gives it. bash runs each line of a paste as a
/// command line of its own; the answer came after the first (its output alone, no exit
/// code), and the rest turned up in the next call's output.
#[tokio::test]
async fn a_script_of_several_lines_answers_with_all_of_it() {
    let bashrc = "HISTCONTROL=ignoreboth\nshopt -s histappend\nPROMPT_COMMAND='history -a'\n\
                  PS1='\\[\\e[32m\\]\\u@\\h\\[\\e[0m\\]:\\w\\$ '\nalias ll='ls -l'\n";
    let zshrc = "setopt prompt_subst\nautoload -Uz add-zsh-hook\nlast() { :; }\n\
                 add-zsh-hook precmd last\nPROMPT='%n@%m:%~%# '\n";
    for (shell, rc) in [("bash", (".bashrc", bashrc)), ("zsh", (".zshrc", zshrc))] {
        let (s, home) = server_in_home(shell, &[rc]).await;
        let id = open_shell(&s).await;
        let dir = home.join("work");
        let script = format!(
            "mkdir -p {0} && cd {0}\necho one\necho two >&2\nfalse",
            dir.display()
        );
        let r = s.call(terminal_command(&id, &script)).await;
        assert_eq!(r["result"]["running"], false, "{shell}: {r:#}");
        assert_eq!(r["result"]["exit_code"], 1, "{shell}: {r:#}");
        assert_eq!(r["result"]["output"], "one\ntwo\n", "{shell}: {r:#}");
        assert_eq!(r["result"]["command"]["command_line"], script, "{shell}");
        let heredoc = "cat > notes <<'EOF'\nfirst line\nEOF\ncat notes";
        let r = s.call(terminal_command(&id, heredoc)).await;
        assert_eq!(r["result"]["exit_code"], 0, "{shell}: {r:#}");
        assert_eq!(r["result"]["output"], "first line\n", "{shell}: {r:#}");
        // Nothing of either script is left for the next command's answer.
        let r = s.call(terminal_command(&id, "echo after")).await;
        assert_eq!(r["result"]["output"], "after\n", "{shell}: {r:#}");
        s.stop().await;
    }
}

/// A command line the shell cannot finish — an unclosed quote, a loop without its `done`, a
/// here-document without its end — left the shell at its continuation prompt, and every
/// later command line was typed into it: each call waited out its `wait_ms`, said "still
/// running", and the terminal was lost to the agent. Now such a line is refused once the
/// shell has waited a moment for the rest, what it held is dropped with Ctrl-C, and the
/// next command runs. A call that answers before that (a short `wait_ms`) says what the
/// shell is waiting for, and the next command line is refused rather than typed into it.
/// In bash with the user's own `PS2`, in zsh, and in dash.
#[tokio::test]
async fn a_command_line_left_open_is_refused_and_the_terminal_goes_on() {
    let bashrc = "PS2='... '\nPS1='\\u:\\w\\$ '\nHISTCONTROL=ignoreboth\n";
    let setups = [
        ("bash", vec![(".bashrc", bashrc)]),
        ("zsh", vec![(".zshrc", "PROMPT='%~%# '\n")]),
        ("dash", vec![]),
    ];
    for (shell, files) in setups {
        let (s, _home) = server_in_home(shell, &files).await;
        let id = open_shell(&s).await;
        for open in [
            "echo \"it's open",
            "echo ran-first\necho 'still open",
            "for f in a b; do\n  echo $f",
            "cat <<END\nno end here",
        ] {
            let r = s.call(terminal_command(&id, open)).await;
            assert_eq!(
                code(&r),
                "PM_TERM_INVALID_PAYLOAD",
                "{shell} {open:?}: {r:#}"
            );
            let message = r["error"]["message"].as_str().unwrap();
            assert!(message.contains("not complete"), "{shell}: {r:#}");
            let r = s.call(terminal_command(&id, "echo next-ran")).await;
            assert_eq!(
                r["result"]["output"], "next-ran\n",
                "{shell} after {open:?}: {r:#}"
            );
            assert_eq!(r["result"]["exit_code"], 0, "{shell}: {r:#}");
        }
        // Answered before the shell gave up on it: the answer says so, and the next line is
        // refused, not typed into the open one.
        let mut q = terminal_command(&id, "echo \"open again");
        q["runtime"] = json!({"wait_ms": 200});
        let r = s.call(q).await;
        assert_eq!(r["result"]["running"], true, "{shell}: {r:#}");
        let note = r["result"]["note"].as_str().unwrap_or_default();
        assert!(note.contains("continuation prompt"), "{shell}: {r:#}");
        let r = s.call(terminal_command(&id, "echo typed-into-it")).await;
        assert_eq!(r["error"]["details"]["busy"], true, "{shell}: {r:#}");
        let ctrl_c = json!({"action": "execute",
            "invocation": {"mode": "interactive", "intent": "execute_command"},
            "target": {"terminal_id": id}, "execution": {"keys": ["ctrl-c"]},
            "runtime": {"wait_ms": 500}});
        s.call(ctrl_c).await;
        let r = s.call(terminal_command(&id, "echo clean")).await;
        assert_eq!(r["result"]["output"], "clean\n", "{shell}: {r:#}");
        s.stop().await;
    }
}

/// dash reads what was typed a line at a time. When it had taken a script's last line, left
/// open, but had not yet drawn the continuation prompt that line brings, the terminal's
/// input was empty and the script was answered as finished: the next command line went into
/// the open one. A user's `PS2` that runs a command (a theme) holds that moment open.
#[tokio::test]
async fn dash_taking_its_last_line_slowly_still_has_it_left_open() {
    let (s, home) = server_in_home("dash", &[(".shinit", "PS2='$(sleep 0.5)> '\n")]).await;
    s.stop().await;
    let env_file = home.join(".shinit").display().to_string();
    let home_s = home.display().to_string();
    let s = server()
        .envs(&[
            ("HOME", home_s.as_str()),
            ("ENV", env_file.as_str()),
            ("PM_TERM_INTERACTIVE_SHELL", "dash"),
            ("PM_TERM_APPROVAL_DEFAULT", "approve"),
        ])
        .start()
        .await;
    let id = open_shell(&s).await;
    let r = s
        .call(terminal_command(&id, "echo ran-first\necho 'still open"))
        .await;
    assert_eq!(code(&r), "PM_TERM_INVALID_PAYLOAD", "{r:#}");
    let r = s.call(terminal_command(&id, "echo next-ran")).await;
    assert_eq!(r["result"]["output"], "next-ran\n", "{r:#}");
    s.stop().await;
}

/// fish keeps a line it cannot run in its line editor after Enter (it has no continuation
/// prompt), and every later command line was added to it: the terminal was lost. Such a
/// line is now refused before it is typed, with fish's own words, and the next one runs. In
/// fish with a user's own prompt and abbreviations.
#[tokio::test]
async fn a_line_fish_cannot_run_is_refused_before_it_is_typed() {
    let config = "function fish_prompt\n    printf '%s (fish) > ' (prompt_pwd)\nend\n\
                  abbr -a gs git status\nset -g fish_greeting\n";
    let (s, _home) = server_in_home("fish", &[(".config/fish/config.fish", config)]).await;
    let id = open_shell(&s).await;
    for (line, fish_says) in [
        ("cat <<END\nhere\nEND", "redirection"),
        ("echo (", "expecting ')'"),
        ("echo \"it's", "quotes are not balanced"),
        ("for f in a b\n  echo $f", "Missing end"),
        ("a=1", "set a 1"),
    ] {
        let r = s.call(terminal_command(&id, line)).await;
        assert_eq!(code(&r), "PM_TERM_INVALID_PAYLOAD", "{line:?}: {r:#}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains("nothing was typed"), "{line:?}: {r:#}");
        assert!(message.contains(fish_says), "{line:?}: {r:#}");
        let r = s.call(terminal_command(&id, "echo next-ran")).await;
        assert_eq!(r["result"]["output"], "next-ran\n", "after {line:?}: {r:#}");
        assert_eq!(r["result"]["exit_code"], 0, "after {line:?}: {r:#}");
    }
    // What fish does take still runs: a block over several lines, a command substitution.
    let r = s
        .call(terminal_command(
            &id,
            "for f in a b\n  echo $f\nend; echo (echo sub)",
        ))
        .await;
    assert_eq!(r["result"]["output"], "a\nb\nsub\n", "{r:#}");
    s.stop().await;
}
