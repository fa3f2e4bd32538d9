//! What a listing of `/`, a home or a system directory is handed to: `find / -type f | xargs
//! rm`, `find ~ -print0 | xargs -0 shred -u`, `rm -f $(find ~ -type f)`, a loop over `find`,
//! `find ~ -type f -exec truncate -s0 {} +`. The same deletion written `find / -type f -exec rm
//! {} +` was blocked (`rm_recursive_critical`), while these were allowed: the `rm` had no
//! target of its own to judge, and the `find` changed nothing. Here the listing's places are
//! the program's: one that deletes or empties what it is given is blocked, `mv` too
//! (`move_critical`), and any other program but a reading one — an allow-list: `sed -i`,
//! `dd of=`, `cp /dev/null`, `sh -c` change every file there — is warned
//! (`every_file_changed`).

use super::*;
use crate::lex::{self, Simple};
use crate::wrappers::{basename, look_through};

/// Programs that delete, destroy or empty the paths they are given.
const DELETERS: &[&str] = &["rm", "unlink", "shred", "srm", "rmdir", "wipe", "truncate"];

/// Programs that only read or print the paths they are given (or their files): handed a
/// whole home, they change nothing there.
const READERS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ls",
    "stat",
    "file",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "du",
    "echo",
    "printf",
    "basename",
    "dirname",
    "readlink",
    "realpath",
    "test",
    "[",
    "true",
    "diff",
    "cmp",
    "less",
    "more",
    "strings",
    "xxd",
    "od",
    "hexdump",
    "nl",
    "sort",
    "uniq",
    "cut",
    "jq",
    "getfacl",
    "lsattr",
    "identify",
    "exiftool",
    "pwd",
    "cd",
    "pushd",
];

/// Programs that run another with the words they read (`xargs rm`, `parallel rm`).
const WORD_RUNNERS: &[&str] = &["xargs", "parallel"];

/// What a program does to the paths it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Does {
    Reads,
    Deletes,
    Moves,
    Changes,
}

fn does(program: &str) -> Does {
    match program {
        p if DELETERS.contains(&p) => Does::Deletes,
        "mv" => Does::Moves,
        p if READERS.contains(&p) => Does::Reads,
        _ => Does::Changes,
    }
}

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
        "find" | "gfind" => find_roots(args),
        "ls" | "tree" => words(false),
        // `fd PATTERN [PATH…]`.
        "fd" | "fdfind" => words(true),
        "locate" | "plocate" | "mlocate" => vec!["/".into()],
        _ => Vec::new(),
    }
}

/// `find`'s starting points: its words before the first expression (`.` when none).
fn find_roots(args: &[String]) -> Vec<String> {
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

/// The programs [`listed_under`] reads as listings.
const LISTERS: &[&str] = &[
    "find", "gfind", "ls", "tree", "fd", "fdfind", "locate", "plocate", "mlocate",
];

/// Whether a command, or one substituted into its words, names a listing program or a glob
/// anywhere in its words (behind a wrapper too: `sudo find`).
fn may_list(c: &Simple) -> bool {
    c.argv
        .iter()
        .any(|w| w.contains('*') || LISTERS.contains(&&*basename(w)))
        || c.substitutions.iter().any(may_list)
}

/// What `find` runs on what it finds (`-exec PROG …`, `-execdir`, `-ok`, `-okdir`).
fn find_runs(c: &Simple) -> Option<(Vec<String>, Vec<String>)> {
    let eff = look_through(c);
    let argv = eff.argvs.iter().find(|a| {
        a.first()
            .is_some_and(|p| matches!(&*basename(p), "find" | "gfind"))
    })?;
    let args = &argv[1..];
    // Each run read once, the scan going on after its end: a `find` nested in an `-exec` is
    // inside the outer run, not a run of its own (read from every `-exec`, twelve nested
    // finds were looked through 78 times).
    let mut programs: Vec<String> = Vec::new();
    let mut at = 0;
    while at < args.len() {
        if matches!(args[at].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let run: Vec<String> = args[at + 1..]
                .iter()
                .take_while(|w| *w != ";" && *w != "+")
                .cloned()
                .collect();
            at += run.len() + 1;
            programs.extend(innermost(run));
        }
        at += 1;
    }
    (!programs.is_empty()).then(|| (find_roots(args), programs))
}

/// The program an argv runs in the end, past the wrappers it starts with (`env rm`, `nice
/// -n 5 shred`, `sudo -u x rm`).
fn innermost(argv: Vec<String>) -> Option<String> {
    let simple = Simple {
        argv,
        ..Simple::default()
    };
    let eff = look_through(&simple);
    let last = eff.argvs.last()?.first()?;
    Some(basename(last).into_owned())
}

/// The program a command hands the words it is given to: through a runner of its input's
/// words when `through_runner` (`xargs -0 rm -f`, `sudo xargs shred -u`, `parallel rm`),
/// or itself (`rm $(find ~)`). `None` when it is not such a command.
fn handed_to(c: &Simple, through_runner: bool) -> Option<String> {
    let eff = look_through(c);
    let names: Vec<std::borrow::Cow<'_, str>> = eff
        .argvs
        .iter()
        .map(|a| a.first().map(|p| basename(p)).unwrap_or_default())
        .collect();
    match names.iter().position(|n| WORD_RUNNERS.contains(&&**n)) {
        // What the runner runs: looked through (`xargs`), or its own first word where it is
        // not (`parallel rm ::: …`). A runner with no command runs `echo`.
        Some(runner) if through_runner => names[runner + 1..]
            .last()
            .map(|n| n.to_string())
            .or_else(|| {
                eff.argvs[runner][1..]
                    .iter()
                    .take_while(|w| *w != ":::")
                    .find(|w| !w.starts_with('-'))
                    .map(|w| basename(w).into_owned())
            })
            .or_else(|| Some("echo".into())),
        None if !through_runner => names.last().map(|n| n.to_string()),
        _ => None,
    }
}

/// Every file directly in `/`, a home or a system directory, named by a glob (`rm ~/*`,
/// `truncate -s0 ~/*`, `sed -i d ~/*`) to a program that deletes, empties or edits in place
/// what it is given. (Other programs given such a glob read it, or write elsewhere.)
fn every_file_named(c: &Simple, cwd: Option<&str>) -> Option<(String, String)> {
    let program = handed_to(c, false)?;
    let edits_in_place = matches!(program.as_str(), "sed" | "perl")
        && c.argv
            .iter()
            .any(|w| w.starts_with("-i") || w.starts_with("--in-place"));
    if does(&program) != Does::Deletes && !edits_in_place {
        return None;
    }
    let eff = look_through(c);
    let args = eff.argvs.last()?.get(1..)?;
    let under = args
        .iter()
        .filter(|w| !w.starts_with('-'))
        .map(|w| normalize(w, cwd))
        .find(|n| n.ends_with("/*") && is_critical(n))?;
    Some((program, under))
}

/// The finding for `program` run on everything under `under`.
fn judged(program: &str, under: &str, argv: &[String]) -> Option<Finding> {
    let (severity, rule, what) = match does(program) {
        Does::Reads => return None,
        Does::Deletes => (
            Severity::Block,
            "rm_recursive_critical",
            "deletes or empties",
        ),
        Does::Moves => (Severity::Block, "move_critical", "moves away"),
        Does::Changes => (
            Severity::Warn,
            "every_file_changed",
            "runs a program that may change",
        ),
    };
    Some(finding(
        severity,
        rule,
        format!("{what} every file under {under} ({program} is handed what a listing of it names)"),
        argv,
    ))
}

/// A listing of `/`, a home or a system directory handed to a program that does more than
/// read: piped into a runner of it, substituted into its words, looped over, or `-exec`'d.
pub fn check_listed_deletes(line: &str, cwd: Option<&str>) -> Option<Finding> {
    let parsed = lex::parse_shared(line);
    let cmds = &parsed.commands;
    // Most lines name no listing and no glob: nothing to look through (this rule cost every
    // judgement 7 % before it looked first).
    if !cmds.iter().any(may_list) {
        return None;
    }
    let critical = |c: &Simple| {
        listed_under(c)
            .into_iter()
            .map(|p| normalize(&p, cwd))
            .find(|p| is_critical(p))
    };
    // For each command, the first program given a variable (a loop's) from there on, read
    // once from the end: `for f in $(find ~); do rm "$f"; done`, `find ~ | while read f; do
    // rm "$f"; done`.
    let mut given_a_variable: Vec<Option<String>> = vec![None; cmds.len() + 1];
    for (i, d) in cmds.iter().enumerate().rev() {
        let here = d
            .argv
            .iter()
            .skip(1)
            .any(|w| w.contains('$'))
            .then(|| handed_to(d, false))
            .flatten()
            .filter(|p| does(p) != Does::Reads);
        given_a_variable[i] = here.or_else(|| given_a_variable[i + 1].clone());
    }
    let mut found = None;
    for (i, c) in cmds.iter().enumerate() {
        let next = cmds.get(i + 1).filter(|n| n.pipeline == c.pipeline);
        let read_by_a_loop = next.is_some_and(|n| n.argv.first().is_some_and(|p| p == "read"));
        let handed = if let Some(program) = next.and_then(|n| handed_to(n, true)) {
            critical(c).map(|under| (program, under))
        } else if let Some((roots, programs)) = find_runs(c) {
            let under = roots
                .iter()
                .map(|r| normalize(r, cwd))
                .find(|r| is_critical(r));
            under.and_then(|u| {
                programs
                    .into_iter()
                    .find(|p| does(p) != Does::Reads)
                    .map(|p| (p, u))
            })
        } else if c.argv.is_empty() {
            // A `for` loop's header: its words are its substitutions' output.
            given_a_variable[i + 1]
                .clone()
                .and_then(|p| c.substitutions.iter().find_map(critical).map(|u| (p, u)))
        } else if read_by_a_loop {
            given_a_variable
                .get(i + 2)
                .cloned()
                .flatten()
                .and_then(|p| critical(c).map(|u| (p, u)))
        } else if let Some(glob) = every_file_named(c, cwd) {
            Some(glob)
        } else {
            handed_to(c, false)
                .and_then(|p| c.substitutions.iter().find_map(critical).map(|u| (p, u)))
        };
        if let Some(f) = handed.and_then(|(program, under)| judged(&program, &under, &c.argv)) {
            let block = f.severity == Severity::Block;
            found = Some(f);
            if block {
                break;
            }
        }
    }
    found
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
            "find ~ -type f -exec truncate -s0 {} +",
            "find ~ -type f | xargs truncate -s 0",
            "find ~ -type f | xargs mv -t /tmp",
            "find ~ | xargs -n1 env rm -f",
            "find ~ -exec env rm {} +",
            "find / -exec nice -n 5 shred -u {} ;",
            "rm ~/*",
            "truncate -s0 ~/*",
            "sudo rm -f /etc/*",
        ] {
            let f = check_listed_deletes(line, Some("/work/project"));
            assert!(
                f.as_ref().is_some_and(|f| f.severity == Severity::Block),
                "{line}: {f:?}"
            );
        }
        // Any other program than a reading one, handed every file there: asked about.
        for line in [
            "find ~ -type f | xargs sed -i d",
            "find / -type f -exec sed -i d {} +",
            "find ~ | xargs chmod 000",
            "find ~ -type f | xargs -I{} cp /dev/null {}",
            "find ~ -type f -exec sh -c ': > \"$1\"' _ {} ;",
            "find ~ -type f -exec dd if=/dev/zero of={} ;",
            "for f in $(find ~ -type f); do sed -i d \"$f\"; done",
            "sed -i d ~/*",
        ] {
            let f = check_listed_deletes(line, Some("/work/project"));
            assert!(
                f.as_ref().is_some_and(|f| f.severity == Severity::Warn),
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
            "find ~ -name '*.md' | xargs grep -l todo",
            "cp ~/* /backup/",
            "sed -n p ~/*",
            "rm ./build/*",
            "find ~ -type f -exec ls -l {} +",
            "find / -name core -exec file {} ;",
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
