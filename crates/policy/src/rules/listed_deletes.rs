//! Paths a listing hands to a program that deletes them: `find / -type f | xargs rm`,
//! `find ~ -print0 | xargs -0 shred -u`, `rm -f $(find ~ -type f)`. The same deletion written
//! `find / -type f -exec rm {} +` was blocked (`rm_recursive_critical`), while these were
//! allowed: the `rm` had no target of its own to judge, and the `find` deleted nothing. Here
//! the listing's places are the deleter's: under `/`, a home or a system directory, blocked.

use super::*;
use crate::lex::{self, Simple};
use crate::wrappers::{basename, look_through};

/// Programs that delete (or destroy) the paths they are given.
const DELETERS: &[&str] = &["rm", "unlink", "shred", "srm", "rmdir", "wipe"];

/// Programs that run another with the words they read (`xargs rm`, `parallel rm`).
const WORD_RUNNERS: &[&str] = &["xargs", "parallel"];

/// The places a listing command lists under, as written: `find`'s and `fd`'s starting
/// points (`.` when none), `ls`'s and `tree`'s directories, the whole file system for
/// `locate`. Empty when the command lists nothing.
fn listed_under(c: &Simple) -> Vec<String> {
    let eff = look_through(c);
    let Some(argv) = eff.argvs.last() else {
        return Vec::new();
    };
    let Some(program) = argv.first() else {
        return Vec::new();
    };
    let args = &argv[1..];
    let words = |skip_first: bool| -> Vec<String> {
        let w: Vec<String> = args
            .iter()
            .filter(|a| !a.starts_with('-'))
            .skip(usize::from(skip_first))
            .cloned()
            .collect();
        if w.is_empty() { vec![".".into()] } else { w }
    };
    match &*basename(program) {
        "find" | "gfind" => {
            let roots: Vec<String> = args
                .iter()
                .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
                .cloned()
                .collect();
            if roots.is_empty() {
                vec![".".into()]
            } else {
                roots
            }
        }
        "ls" | "tree" => words(false),
        // `fd PATTERN [PATH…]`.
        "fd" | "fdfind" => words(true),
        "locate" | "plocate" | "mlocate" => vec!["/".into()],
        _ => Vec::new(),
    }
}

/// Whether a command deletes the words it is given, run by a runner of its input's words
/// when `through_runner` (`xargs -0 rm -f`, `sudo xargs shred -u`), or directly.
fn deletes(c: &Simple, through_runner: bool) -> bool {
    let eff = look_through(c);
    let names: Vec<std::borrow::Cow<'_, str>> = eff
        .argvs
        .iter()
        .map(|a| a.first().map(|p| basename(p)).unwrap_or_default())
        .collect();
    let deleter = |n: &str| DELETERS.contains(&n);
    match names.iter().position(|n| WORD_RUNNERS.contains(&&**n)) {
        // What the runner runs: looked through (`xargs`), or its own words where it is not
        // (`parallel rm`, `parallel rm ::: …`).
        Some(runner) => {
            through_runner
                && (names[runner + 1..].iter().any(|n| deleter(n))
                    || eff.argvs[runner][1..]
                        .iter()
                        .take_while(|w| *w != ":::")
                        .any(|w| deleter(&basename(w))))
        }
        None => !through_runner && names.iter().any(|n| deleter(n)),
    }
}

/// A deletion of what a listing lists under `/`, a home or a system directory: the listing
/// piped into a runner of a deleter, or substituted into a deleter's words.
pub fn check_listed_deletes(line: &str, cwd: Option<&str>) -> Option<Finding> {
    let parsed = lex::parse_shared(line);
    let cmds = &parsed.commands;
    let critical = |c: &Simple| {
        listed_under(c)
            .into_iter()
            .map(|p| normalize(&p, cwd))
            .find(|p| is_critical(p))
    };
    // A deleter later in the line given a variable (a loop's): `for f in $(find ~); do rm
    // "$f"; done`, `find ~ | while read f; do rm "$f"; done`.
    // Read once from the end (asked from every command, a line of loops was quadratic).
    let mut from_here = vec![false; cmds.len() + 1];
    for (i, d) in cmds.iter().enumerate().rev() {
        from_here[i] = from_here[i + 1]
            || (deletes(d, false) && d.argv.iter().skip(1).any(|w| w.contains('$')));
    }
    let deletes_a_variable = |from: usize| from_here.get(from).copied().unwrap_or(false);
    cmds.iter().enumerate().find_map(|(i, c)| {
        let piped_into_next = |pred: &dyn Fn(&Simple) -> bool| {
            cmds.get(i + 1)
                .is_some_and(|n| n.pipeline == c.pipeline && pred(n))
        };
        let read_by_a_loop = |n: &Simple| n.argv.first().is_some_and(|p| p == "read");
        let under = if piped_into_next(&|n| deletes(n, true)) {
            critical(c)
        } else if deletes(c, false) {
            c.substitutions.iter().find_map(critical)
        } else if c.argv.is_empty() && deletes_a_variable(i + 1) {
            // A `for` loop's header: its words are its substitutions' output.
            c.substitutions.iter().find_map(critical)
        } else if piped_into_next(&read_by_a_loop) && deletes_a_variable(i + 2) {
            critical(c)
        } else {
            None
        }?;
        Some(finding(
            Severity::Block,
            "rm_recursive_critical",
            format!("deletes what a listing of {under} names, everything there"),
            &c.argv,
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_listing_hands_to_a_deleter_is_judged_as_deleted() {
        for line in [
            "find / -type f | xargs rm",
            "find ~ | xargs rm -f",
            "find ~ -type f -print0 | xargs -0 shred -u",
            "find /etc -type f | xargs rm",
            "sudo find / -name '*' | sudo xargs rm -f",
            "ls ~ | xargs rm -rf",
            "locate -r . | xargs rm",
            "rm -f $(find ~ -type f)",
            "find ~ | parallel rm",
            "for f in $(find ~); do rm -f $f; done",
            "find ~ -type f | while read f; do rm \"$f\"; done",
            "find / | while read -r f; do shred -u \"$f\"; done",
        ] {
            let f = check_listed_deletes(line, Some("/work/project"));
            assert!(
                f.as_ref().is_some_and(|f| f.severity == Severity::Block),
                "{line}: {f:?}"
            );
        }
        // Judged in every place the line moves to.
        let d = crate::Policy::default().evaluate("cd / && find | xargs rm", Some("/work/p"));
        assert_eq!(d.authorization, crate::Authorization::Blocked, "{d:?}");
        for line in [
            "find . -name '*.o' | xargs rm",
            "find /tmp/build -type f | xargs rm -f",
            "find ~ -name '*.log' | xargs ls -l",
            "find ~ -type f | wc -l",
            "rm -f $(find . -name '*.pyc')",
            "git ls-files | xargs rm",
            "for f in $(find ~ -name '*.md'); do wc -l $f; done",
            "find . | while read f; do rm \"$f\"; done",
        ] {
            assert_eq!(
                check_listed_deletes(line, Some("/work/project")),
                None,
                "{line}"
            );
        }
    }
}
