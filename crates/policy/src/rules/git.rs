//! Rules on git commands: what loses history or work (force pushes, hard resets, cleans,
//! discarded changes, deleted branches, stashes and reflogs).

use super::*;

pub fn git(argv: &[String], out: &mut Vec<Finding>) {
    use Severity::Warn;
    // Skip global options to the subcommand.
    let mut i = 1;
    while i < argv.len() {
        match argv[i].as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => i += 2,
            a if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = argv.get(i) else { return };
    let rest = &argv[i + 1..];
    let (flags, targets) = flags_and_targets(rest);
    match sub.as_str() {
        "apply" if flags.iter().any(|f| f.starts_with("--unsafe-p")) => out.push(finding(
            Warn,
            "system_file_write",
            "git apply --unsafe-paths writes wherever the patch names, outside the repository \
             too (a start-up file, a system file)",
            argv,
        )),
        "push" => {
            let force = flags.iter().any(|f| {
                matches!(
                    *f,
                    "--force" | "--force-with-lease" | "--force-if-includes" | "--mirror"
                ) || f.starts_with("--force-with-lease=")
                    || (!f.starts_with("--") && f.contains('f'))
            }) || targets.iter().any(|t| t.starts_with('+'));
            let delete = flags.iter().any(|f| *f == "--delete" || *f == "-d")
                || targets.iter().any(|t| t.starts_with(':'));
            if force {
                out.push(finding(
                    Warn,
                    "git_force_push",
                    "force-pushes (rewrites remote history)",
                    argv,
                ));
            } else if delete {
                out.push(finding(
                    Warn,
                    "git_delete_remote",
                    "deletes a remote branch",
                    argv,
                ));
            }
        }
        "reset" if flags.contains(&"--hard") => {
            out.push(finding(
                Warn,
                "git_reset_hard",
                "git reset --hard discards uncommitted work",
                argv,
            ));
        }
        "clean" if has_short(&flags, &['f']) || flags.contains(&"--force") => {
            out.push(finding(
                Warn,
                "git_clean",
                "git clean deletes untracked files",
                argv,
            ));
        }
        // `git checkout -- .`, `git checkout .`, `git restore .`: uncommitted edits dropped.
        "checkout" | "restore"
            if (sub == "restore" && !flags.contains(&"--staged") && !targets.is_empty())
                || (sub == "checkout"
                    && (rest.iter().any(|a| a == "--") || targets.contains(&"."))
                    && !targets.is_empty())
                || flags.contains(&"-f")
                || flags.contains(&"--force") =>
        {
            out.push(finding(
                Warn,
                "git_discard",
                "discards uncommitted changes",
                argv,
            ));
        }
        // `git rm -rf PATH`: the files go, local changes with them (`-f` drops what was
        // never committed); `--cached` leaves the files alone.
        "rm" if (has_short(&flags, &['f']) || flags.contains(&"--force"))
            && !flags.contains(&"--cached") =>
        {
            out.push(finding(
                Warn,
                "git_discard",
                "git rm -f removes files with their uncommitted changes",
                argv,
            ));
        }
        "worktree"
            if targets.first() == Some(&"remove")
                && (has_short(&flags, &['f']) || flags.contains(&"--force")) =>
        {
            out.push(finding(
                Warn,
                "git_discard",
                "removes a worktree with its uncommitted changes",
                argv,
            ));
        }
        "branch"
            if flags.contains(&"-D")
                || (flags.contains(&"--delete") && flags.contains(&"--force")) =>
        {
            out.push(finding(
                Warn,
                "git_branch_delete",
                "deletes a branch even if it is not merged",
                argv,
            ));
        }
        "reflog" if matches!(targets.first().copied(), Some("expire" | "delete")) => {
            out.push(finding(
                Warn,
                "git_history_loss",
                "deletes reflog entries, the record that recovers lost commits",
                argv,
            ));
        }
        "gc" | "prune"
            if flags
                .iter()
                .any(|f| f.starts_with("--prune") || f.starts_with("--expire"))
                || sub == "prune" =>
        {
            out.push(finding(
                Warn,
                "git_history_loss",
                "deletes unreachable commits at once",
                argv,
            ));
        }
        "update-ref" if flags.contains(&"-d") => {
            out.push(finding(Warn, "git_history_loss", "deletes a ref", argv));
        }
        "stash" if matches!(targets.first().copied(), Some("drop" | "clear")) => {
            out.push(finding(
                Warn,
                "git_stash_drop",
                "deletes stashed changes",
                argv,
            ));
        }
        _ => {}
    }
}
