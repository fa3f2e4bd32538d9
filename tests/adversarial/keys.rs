//! Keys a line editor reads as commands, typed where only the policy's reading of them
//! stands between the agent and the line they enter: a bash the agent started inside the
//! terminal, whose prompt the server's integration does not watch (at the integration's own
//! prompt such keys are refused outright, before any verdict).

use super::*;

/// A key whose edit the policy does not model is taken to rearrange the line (fail closed),
/// so the input is warned, and with nobody to ask declined: Alt-Ctrl-Y (readline yanks the
/// last line's first argument, `rm`, in front of ` -rf DIR`) and Home spelled `ESC [ 1 ~`
/// (Debian's inputrc moves to the line's start, where `rm ` is typed), and a tab after text
/// (completion: `shre` Tab is `shred`). Read as text, they were lines whose program is
/// `-rf` or `shre`: allowed, and DIR was gone. DIR is still there, and
/// plain typing still runs, as root and as `nobody`.
#[tokio::test(flavor = "multi_thread")]
async fn keys_a_line_editor_reads_as_commands_are_not_read_as_text() {
    for who in identities() {
        let p = place(who);
        let out = p.out.display().to_string();
        let s = start_declining(who, &p).await;
        let id = open_shell(&s).await;
        let prompt = Some(r"bash-[0-9.]+[#$] $");
        let r = s
            .call(terminal_input(&id, "bash --norc --noprofile\r", prompt))
            .await;
        assert_eq!(r["success"], true, "{who:?}: {r:#}");
        let r = s.call(terminal_input(&id, "echo rm\r", prompt)).await;
        assert_eq!(r["success"], true, "{who:?}: {r:#}");
        for keys in [
            format!("\u{1b}\u{19} -rf {out}\r"),
            format!("-rf {out}\u{1b}[1~rm \r"),
            format!("shre\t -u {out}/keep.txt\r"),
        ] {
            let r = s.call(terminal_input(&id, &keys, prompt)).await;
            assert_eq!(r["success"], false, "{who:?}: {keys:?} ran: {r:#}");
            assert_eq!(
                r["error"]["details"]["setting"], "PM_TERM_APPROVAL_DEFAULT",
                "{who:?}: {keys:?}: {r:#}"
            );
            assert!(
                p.out.join("keep.txt").exists(),
                "{who:?}: {keys:?} deleted {out}"
            );
        }
        let r = s
            .call(terminal_input(&id, "echo typed-$((6*7))\r", prompt))
            .await;
        assert!(
            r["result"]["output"]
                .as_str()
                .unwrap_or_default()
                .contains("typed-42"),
            "{who:?}: {r:#}"
        );
        s.stop().await;
    }
}
