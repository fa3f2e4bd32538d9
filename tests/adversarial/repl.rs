//! Lines read by programs other than bash: fish, and a REPL at its prompt.

use super::*;

/// Python's prompt at the end of a terminal's output.
const PROMPT: Option<&str> = Some(">>> $");

/// A server declining what it would ask about (nobody to ask), as `who`, with a python3
/// REPL open in a terminal of it: the server and the terminal's id.
async fn python_repl(who: Who, p: &Place) -> (Server, String) {
    if who == Who::Nobody {
        chown_tree(&p.base, NOBODY);
    }
    let s = start_declining(who, p).await;
    let id = open_shell(&s).await;
    let r = s.call(terminal_input(&id, "python3 -q\r", PROMPT)).await;
    assert_eq!(r["success"], true, "{who:?}: {r:#}");
    (s, id)
}

/// Whether `line`, typed at the REPL, printed `want` (the REPL goes on after a refusal).
/// The read ends on `want` and then the prompt: a prompt drawn late for an earlier line
/// (after Ctrl-C, Python's comes once the interrupt is handled) does not end it.
async fn repl_prints(s: &Server, id: &str, line: &str, want: &str) -> bool {
    let escaped: String = want
        .chars()
        .flat_map(|c| {
            let meta = "\\.+*?()|[]{}^$".contains(c);
            meta.then_some('\\').into_iter().chain([c])
        })
        .collect();
    let until = format!("{escaped}[\\s\\S]*>>> $");
    let r = s.call(terminal_input(id, line, Some(&until))).await;
    r["result"]["output"]
        .as_str()
        .unwrap_or_default()
        .contains(want)
}

/// fish's `source` with no file (or `-`) runs the script it reads from its input: `echo
/// 'rm -rf DIR' | source`, typed in a real fish, was `allowed` (the policy read `source`
/// with no file as running nothing) and deleted DIR. Now the piped text is judged as the
/// line it is, and a script from another command's output is asked about. So was fish's
/// `alias NAME 'VALUE'` (no `=`), whose value is now judged as bash's is.
#[tokio::test(flavor = "multi_thread")]
async fn fish_source_from_a_pipe_runs_nothing_unasked() {
    if on_path_opt("fish").is_none() {
        return;
    }
    for who in identities() {
        let p = place(who);
        let out = p.out.display().to_string();
        std::fs::write(p.ws.join("cmds"), format!("rm -rf {out}\n")).unwrap();
        if who == Who::Nobody {
            chown_tree(&p.base, NOBODY);
        }
        let s = start(who, &p, &[], &[("PM_TERM_APPROVAL_DEFAULT", "decline")]).await;
        let opened = s
            .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
                "execution": {"shell": "fish"}, "runtime": {"cwd": p.ws.display().to_string()}}))
            .await;
        let id = opened["identity"]["terminal_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{who:?}: the terminal opens: {opened:#}"))
            .to_string();
        for line in [
            format!("echo 'rm -rf {out}' | source"),
            format!("echo 'rm -rf {out}' | source -"),
            "cat cmds | source".to_string(),
            // fish's alias takes its value as the word after the name.
            format!("alias gone 'rm -rf {out}'; gone"),
        ] {
            let r = s.call(terminal_command(&id, &line)).await;
            assert_held(who, &p, &line, &r);
        }
        // fish still sources what is plainly text on the line.
        let r = s
            .call(terminal_command(&id, "echo 'echo sourced-fine' | source"))
            .await;
        assert!(
            r["result"]["output"]
                .as_str()
                .unwrap_or_default()
                .contains("sourced-fine"),
            "{who:?}: {r:#}"
        );
        s.stop().await;
    }
}

/// Typed at a real python3 REPL, with nobody to ask: a tree the line computes
/// (`shutil.rmtree(p)`) and every file a listing of the home names, handed to `unlink`, were
/// `allowed` and deleted them. Now the first is asked about (declined here) and the second
/// blocked; the files are still there and the REPL goes on.
#[tokio::test(flavor = "multi_thread")]
async fn a_repl_deleting_what_it_computes_or_lists_deletes_nothing_unasked() {
    for who in identities() {
        let p = place(who);
        let out = p.out.display().to_string();
        let notes = p.home.join("notes.txt");
        std::fs::write(&notes, "mine\n").unwrap();
        let (s, id) = python_repl(who, &p).await;
        let prompt = PROMPT;
        for line in [
            format!("import shutil; p = '{out}'; shutil.rmtree(p)\r"),
            "import pathlib; [f.unlink() for f in pathlib.Path.home().rglob('*')]\r".to_string(),
        ] {
            let r = s.call(terminal_input(&id, &line, prompt)).await;
            assert_eq!(r["success"], false, "{who:?}: {line:?} ran: {r:#}");
            assert!(
                p.out.join("keep.txt").exists(),
                "{who:?}: {line:?} deleted {out}"
            );
            assert!(notes.exists(), "{who:?}: {line:?} deleted the home's files");
        }
        assert!(repl_prints(&s, &id, "print(6*7)\r", "42").await, "{who:?}");
        s.stop().await;
    }
}

/// Typed at a real python3 REPL, with nobody to ask: a command spelled with escapes
/// (`"\x72m"`), a bytes or raw prefix (`b"…"`), adjacent strings Python joins, asyncio's
/// runner, and code handed to pdb as a string were all `allowed` (read as a program named
/// `x72m`, as no call's argument, as `rm -rf` of nothing) and emptied the directory. Now each
/// is judged as the `rm -rf DIR` it is (declined: asked about, and nobody to ask); the
/// directory stays and the REPL goes on.
#[tokio::test(flavor = "multi_thread")]
async fn a_repls_strings_are_read_as_the_language_builds_them() {
    for who in identities() {
        let p = place(who);
        let out = p.out.display().to_string();
        let (s, id) = python_repl(who, &p).await;
        let prompt = PROMPT;
        let r = s
            .call(terminal_input(&id, "import os, asyncio, pdb\r", prompt))
            .await;
        assert_eq!(r["success"], true, "{who:?}: {r:#}");
        for line in [
            format!("os.system(\"\\x72m -rf {out}\")\r"),
            format!("os.system(\"\\162m -rf {out}\")\r"),
            format!("os.system(b\"rm -rf {out}\")\r"),
            format!("os.system(rb\"rm -rf {out}\")\r"),
            format!("os.system(\"rm -rf\" \" {out}\")\r"),
            format!("asyncio.run(asyncio.create_subprocess_exec(\"rm\", \"-rf\", \"{out}\"))\r"),
            format!("pdb.run(\"os.system('rm -rf {out}')\")\r"),
        ] {
            let r = s.call(terminal_input(&id, &line, prompt)).await;
            assert_eq!(r["success"], false, "{who:?}: {line:?} ran: {r:#}");
            assert!(
                p.out.join("keep.txt").exists(),
                "{who:?}: {line:?} deleted {out}"
            );
        }
        // Everyday strings still run: bytes, raw and joined literals that run nothing.
        let line = "print(b\"by\" + b\"tes\", r\"\\d+\", \"jo\" \"ined\")\r";
        assert!(
            repl_prints(&s, &id, line, "b'bytes' \\d+ joined").await,
            "{who:?}"
        );
        s.stop().await;
    }
}

/// A statement entered over two calls — `os.system(` Enter at Python's prompt, then the
/// command and `)` Enter; `rm -f \` Enter at bash's, then `-r DIR` and Enter — runs as one,
/// and each call alone showed nothing to judge: the second ran `rm -rf DIR` unasked.
/// Now the lines of a statement still open are kept and judged with what follows: declined
/// with nobody to ask, the directory still there, as root and as `nobody`.
#[tokio::test(flavor = "multi_thread")]
async fn a_statement_entered_over_several_calls_is_judged_whole() {
    for who in identities() {
        let p = place(who);
        let out = p.out.display().to_string();
        let (s, id) = python_repl(who, &p).await;
        let r = s
            .call(terminal_input(
                &id,
                "import os; os.system(\r",
                Some("\\.\\.\\. $"),
            ))
            .await;
        assert_eq!(r["success"], true, "{who:?}: {r:#}");
        let line = format!("\"rm -rf {out}\")\r");
        let r = s.call(terminal_input(&id, &line, PROMPT)).await;
        assert_eq!(r["success"], false, "{who:?}: {line:?} ran: {r:#}");
        assert!(p.out.join("keep.txt").exists(), "{who:?}: deleted {out}");
        // Abandoned with Ctrl-C, the REPL goes on and a plain line runs.
        let r = s.call(terminal_input(&id, "\u{3}", PROMPT)).await;
        assert_eq!(r["success"], true, "{who:?}: {r:#}");
        assert!(repl_prints(&s, &id, "print(6*7)\r", "42").await, "{who:?}");
        let r = s.call(terminal_input(&id, "exit()\r", Some("\\$ $"))).await;
        assert_eq!(r["success"], true, "{who:?}: {r:#}");
        // bash's continuation line.
        let r = s.call(terminal_input(&id, "rm -f \\\r", Some("> $"))).await;
        assert_eq!(r["success"], true, "{who:?}: {r:#}");
        let line = format!("-r {out}\r");
        let r = s.call(terminal_input(&id, &line, None)).await;
        assert_eq!(r["success"], false, "{who:?}: {line:?} ran: {r:#}");
        assert!(p.out.join("keep.txt").exists(), "{who:?}: deleted {out}");
        s.stop().await;
    }
}
