//! The terminal's own answers to queries, which must reach only the program that asked.

use super::*;

/// A terminal's answers to queries reach only the program that asked: a query printed just
/// before its command ends (the answer would wait in the input queue for the shell's line
/// editor, where XTVERSION's `ESC P` is Meta-P, a history search) is not answered, so the
/// next line runs as sent and no line from history runs in its place; a program that asks
/// and reads gets its answer.
#[tokio::test(flavor = "multi_thread")]
async fn the_terminals_answers_never_reach_the_line_editor() {
    for who in identities() {
        let p = place(who);
        let s = start(who, &p, &[], &[("PM_TERM_INTERACTIVE_SHELL", "bash")]).await;
        let id = open_shell(&s).await;
        let term = |command: &str| {
            json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
                "target": {"terminal_id": id}, "execution": {"command": command},
                "runtime": {"cwd": p.ws.display().to_string(), "wait_ms": 8000}})
        };
        let canary = p.ws.join("recalled");
        let version = env!("CARGO_PKG_VERSION");
        // A history line the answer's search text would find.
        let planted = format!(
            ": '>|interactive-terminal-mcp({version})'; touch {}",
            canary.display()
        );
        let r = s.call(term(&planted)).await;
        assert_eq!(r["result"]["exit_code"], 0, "{who:?}: {r:#}");
        std::fs::remove_file(&canary).unwrap();
        let marker = p.ws.join("marker");
        for asker in [
            "printf '\\033[>q'",
            "printf '\\033[c\\033[6n\\033[>c'",
            "printf '\\033[>q'; sleep 0.3",
        ] {
            let r = s.call(term(asker)).await;
            assert_eq!(r["result"]["exit_code"], 0, "{who:?} {asker}: {r:#}");
            let line = format!("echo sent > {}", marker.display());
            let r = s.call(term(&line)).await;
            assert_eq!(r["result"]["exit_code"], 0, "{who:?} after {asker}: {r:#}");
            assert_eq!(
                r["result"]["command"]["command_line"], line,
                "{who:?} after {asker}: the shell ran another line: {r:#}"
            );
            assert_eq!(
                std::fs::read_to_string(&marker).unwrap_or_default(),
                "sent\n",
                "{who:?} after {asker}: {r:#}"
            );
            assert!(
                !canary.exists(),
                "{who:?} after {asker}: a line from history ran"
            );
            std::fs::remove_file(&marker).unwrap();
        }
        // A program that asks and reads gets the answer.
        let r = s
            .call(term(
                "old=$(stty -g); stty raw -echo; printf '\\033[>q'; IFS= read -rs -t 5 -d '\\' a; \
                 stty \"$old\"; printf '[%s]\\n' \"${a#?}\"",
            ))
            .await;
        assert!(
            r["result"]["output"]
                .as_str()
                .unwrap_or_default()
                .contains(&format!("interactive-terminal-mcp({version})")),
            "{who:?}: {r:#}"
        );
        s.stop().await;
    }
}
