//! Deletions the policy reads through a listing: what `find`, `ls` or `locate` list under
//! the home, `/` or a system directory, handed to `rm` or `shred` by `xargs`, a loop or a
//! substitution, is deleted as surely as by `find ~ -exec rm {} +`, which was blocked.

use super::*;

/// With warned commands approved unasked, each line that hands the home's listing to a
/// deleter is blocked, headless and in a terminal, as root and as `nobody`, and the home's
/// files are all still there. Before, each was `allowed` and emptied the home.
#[tokio::test(flavor = "multi_thread")]
async fn a_listing_of_the_home_handed_to_a_deleter_deletes_nothing() {
    for who in identities() {
        let p = place(who);
        let notes = p.home.join("notes.txt");
        std::fs::write(&notes, "mine\n").unwrap();
        if who == Who::Nobody {
            chown_tree(&p.base, NOBODY);
        }
        let s = start(who, &p, &[], &[("PM_TERM_INTERACTIVE_SHELL", "bash")]).await;
        let id = open_shell(&s).await;
        let lines = [
            "find ~ -type f | xargs rm -f",
            "find ~ -type f -print0 | xargs -0 shred -u",
            "rm -f $(find ~ -type f)",
            "for f in $(find ~ -type f); do rm -f \"$f\"; done",
            "find ~ -type f | while read -r f; do rm -f \"$f\"; done",
            // The same shapes inside a line run by the line, and every file by a glob
            // however written: each was `allowed`.
            "sh -c 'find ~ -type f | xargs rm -f'",
            "echo $(find ~ -type f | xargs rm -f)",
            "find ~ -type f | grep -v nothing | xargs rm -f",
            "rm -f ~/?*",
            "X=~/*; rm -f $X",
            "cd ~ && find -delete",
            // A loop over a glob of the home: its variable holds every word of the header.
            "for f in ~/*; do rm -f \"$f\"; done",
            // An archiver told to delete what it archived.
            "tar -cf /dev/null --remove-files ~",
        ];
        for line in lines {
            let r = s.call(in_dir(line, &p.ws)).await;
            assert_eq!(
                code(&r),
                "PM_TERM_BLOCKED_DESTRUCTIVE",
                "{who:?}: {line}: {r:#}"
            );
            let r = s.call(terminal_command(&id, line)).await;
            assert_eq!(
                code(&r),
                "PM_TERM_BLOCKED_DESTRUCTIVE",
                "{who:?}: {line}: {r:#}"
            );
            assert!(notes.exists(), "{who:?}: {line} deleted the home's files");
        }
        // A listing of the project handed to `rm` is the project's business.
        std::fs::write(p.ws.join("a.o"), "").unwrap();
        let r = s
            .call(in_dir("find . -name '*.o' | xargs rm -f", &p.ws))
            .await;
        assert_eq!(r["success"], true, "{who:?}: {r:#}");
        assert!(!p.ws.join("a.o").exists(), "{who:?}: {r:#}");
        s.stop().await;
    }
}

/// With nobody to ask, paths the line does not show handed to a deleter are declined, and
/// the refusal names the setting: `du -a ~ | cut -f2 | xargs rm -f` was `allowed` (a
/// listing the policy did not read) and emptied the home; so did `xargs rm -f < list`
/// with a list the agent wrote.
#[tokio::test(flavor = "multi_thread")]
async fn paths_the_line_does_not_show_are_not_deleted_unasked() {
    for who in identities() {
        let p = place(who);
        let notes = p.home.join("notes.txt");
        std::fs::write(&notes, "mine\n").unwrap();
        std::fs::write(p.ws.join("list"), format!("{}\n", notes.display())).unwrap();
        if who == Who::Nobody {
            chown_tree(&p.base, NOBODY);
        }
        let s = start_declining(who, &p).await;
        for line in [
            "du -a ~ | cut -f2 | xargs rm -f",
            "xargs rm -f < list",
            "rm -f $(cat list)",
            "while read -r f; do rm -f \"$f\"; done < list",
        ] {
            let r = s.call(in_dir(line, &p.ws)).await;
            assert_eq!(r["success"], false, "{who:?}: {line} ran: {r:#}");
            assert_eq!(
                r["error"]["details"]["setting"], "PM_TERM_APPROVAL_DEFAULT",
                "{who:?}: {line}: {r:#}"
            );
            assert!(notes.exists(), "{who:?}: {line} deleted the home's files");
        }
        // A project's own list of literal names still runs.
        std::fs::write(p.ws.join("a.o"), "").unwrap();
        let r = s.call(in_dir("echo a.o | xargs rm -f", &p.ws)).await;
        assert_eq!(r["success"], true, "{who:?}: {r:#}");
        assert!(!p.ws.join("a.o").exists(), "{who:?}: {r:#}");
        s.stop().await;
    }
}
