//! The strict tool (`memory_terminal`): what its allow-list admits, read as each program
//! reads it.

use super::*;

/// A `memory_terminal` call for `command` in `dir`.
async fn strict(s: &Server, dir: &Path, command: &str) -> Value {
    check_result(
        &s.call_result_of(
            "memory_terminal",
            json!({"command": command, "runtime": {"cwd": dir.display().to_string(), "wait_ms": 30000}}),
        )
        .await,
    )
}

/// `memory_terminal` runs what its allowlist admits, read as each program reads it, and
/// treats what a program reads from the repository as the agent's code: abbreviated options,
/// another project's build, a repository's hooks, fsmonitor, external diff and filters.
#[tokio::test(flavor = "multi_thread")]
async fn the_strict_tool_runs_nothing_of_the_agents() {
    for who in identities() {
        // Made as the test's user (git refuses another user's repository), handed over below.
        let p = place(Who::Me);
        let marker = p.out.join("ran");
        let m = marker.display().to_string();
        let repo = &p.ws;
        let git = |args: &[&str]| {
            let st = std::process::Command::new("git")
                .args(args)
                .current_dir(repo)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", &p.home)
                .output()
                .unwrap();
            assert!(st.status.success(), "git {args:?}: {st:?}");
        };
        std::fs::remove_dir_all(repo.join(".git")).unwrap();
        git(&["init", "-q", "."]);
        std::fs::write(repo.join("a.txt"), "one\n").unwrap();
        git(&["add", "a.txt"]);
        git(&[
            "-c",
            "user.email=a@b",
            "-c",
            "user.name=a",
            "commit",
            "-qm",
            "one",
        ]);
        std::fs::write(repo.join("a.txt"), "two\n").unwrap();
        // What the agent writes into the repository: a monitor and a hook that run on a
        // plain `git status`.
        git(&[
            "config",
            "core.fsmonitor",
            &format!("touch {m}.fsmonitor; false"),
        ]);
        let hook = repo.join(".git/hooks/post-index-change");
        std::fs::write(&hook, format!("#!/bin/sh\ntouch {m}.hook\n")).unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        std::fs::write(p.out.join("data.txt"), "b\na\n").unwrap();
        if who == Who::Nobody {
            chown_tree(&p.base, NOBODY);
        }
        let s = start(who, &p, &[], &[]).await;
        let out = p.out.display().to_string();
        for refused in [
            format!("sort --compress-prog=sh -S 16k {out}/data.txt"),
            format!("sort --outp={m} {out}/data.txt"),
            format!("sort --o={m} {out}/data.txt"),
            format!("sort -T {out} {out}/data.txt"),
            "date --se=2001-01-01".to_string(),
            format!("cargo build --manifest-path {out}/Cargo.toml"),
            format!("git diff --outp={m}"),
            format!("git stash list --output={m}"),
            "git log -p --ext-diff".to_string(),
            format!("find . -exec touch {m} ;"),
            format!("find . -fprint {m}"),
        ] {
            let r = strict(&s, repo, &refused).await;
            assert_eq!(
                code(&r),
                "PM_TERM_BLOCKED_DESTRUCTIVE",
                "{who:?} {refused}: {r:#}"
            );
        }
        // The repository's own programs do not run on a reading command.
        let r = strict(&s, repo, "git status --short").await;
        assert_eq!(r["result"]["exit_code"], 0, "{who:?}: {r:#}");
        assert!(
            r["result"]["stdout"].as_str().unwrap().contains("a.txt"),
            "{who:?}: {r:#}"
        );
        for suffix in ["fsmonitor", "hook"] {
            assert!(
                !Path::new(&format!("{m}.{suffix}")).exists(),
                "{who:?}: git status ran the repository's {suffix}"
            );
        }
        // Programs git cannot be told to skip (an external diff, a filter) are refused, named.
        if who == Who::Nobody {
            chown_tree(&p.base, 0);
        }
        git(&["config", "diff.external", &format!("touch {m}.diff; false")]);
        std::fs::write(repo.join(".gitattributes"), "* filter=x\n").unwrap();
        git(&[
            "config",
            "filter.x.clean",
            &format!("touch {m}.filter; cat"),
        ]);
        if who == Who::Nobody {
            chown_tree(&p.base, NOBODY);
        }
        for command in ["git diff", "git status"] {
            let r = strict(&s, repo, command).await;
            assert_eq!(
                code(&r),
                "PM_TERM_BLOCKED_DESTRUCTIVE",
                "{who:?} {command}: {r:#}"
            );
            let why = r["error"]["details"]["reason"].as_str().unwrap();
            assert!(
                why.contains("diff.external") && why.contains("filter.x.clean"),
                "{why}"
            );
        }
        for suffix in ["diff", "filter"] {
            assert!(
                !Path::new(&format!("{m}.{suffix}")).exists(),
                "{who:?}: git ran the repository's {suffix}"
            );
        }
        assert!(!marker.exists(), "{who:?}: a refused command ran");
        // Reading tools still read.
        let r = strict(&s, repo, &format!("sort -r {out}/data.txt")).await;
        assert_eq!(r["result"]["stdout"], "b\na\n", "{who:?}: {r:#}");
        s.stop().await;
    }
}
