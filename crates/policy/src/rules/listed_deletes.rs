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
use crate::lex::Simple;
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

/// `find`'s starting points: its words before the first expression (`.` when none: `cd /
/// && find -delete` deletes everything under `/`).
pub(super) fn find_roots(args: &[String]) -> Vec<String> {
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

/// Every file directly in `/`, a home or a system directory, named by a glob (`sed -i d
/// ~/*`) to a program that edits in place what it is given. (A deleter given one, `rm ~/*`,
/// is judged on its argv, variables expanded; other programs read it, or write elsewhere.)
fn every_file_named(c: &Simple, cwd: Option<&str>) -> Option<(String, String)> {
    let program = handed_to(c, false)?;
    let edits_in_place = matches!(program.as_str(), "sed" | "perl")
        && c.argv
            .iter()
            .any(|w| w.starts_with("-i") || w.starts_with("--in-place"));
    if !edits_in_place {
        return None;
    }
    let eff = look_through(c);
    let args = eff.argvs.last()?.get(1..)?;
    let under = args
        .iter()
        .filter(|w| !w.starts_with('-'))
        .find_map(|w| super::argv::every_file_under(w, cwd))?;
    Some((program, under))
}

/// Programs whose output, given only literal words, is what the line shows: their words,
/// or a path worked out from them (`rm "$(pwd)/a.o"`, `rm $(mktemp)`).
const SHOWS_ITS_OUTPUT: &[&str] = &[
    "echo", "printf", "pwd", "dirname", "basename", "realpath", "readlink", "mktemp", "date",
    "whoami", "id", "hostname", "uname", "seq",
];

/// Programs that pass on some of the lines they read, unchanged (`find . | grep x | head`):
/// what they print is what their input listed.
fn selects(c: &Simple) -> bool {
    let Some(p) = c.argv.first() else {
        return false;
    };
    match &*basename(p) {
        "head" | "tail" | "sort" | "uniq" | "tac" | "shuf" => true,
        // (`grep -o` prints parts of lines: paths made from pieces.)
        "grep" | "egrep" | "fgrep" | "rg" => !c.argv[1..].iter().any(|a| {
            a == "--only-matching"
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('o'))
        }),
        _ => false,
    }
}

/// Where the words a deleter is handed come from, as far as the line shows.
#[derive(Debug, Clone, PartialEq)]
enum From {
    /// A listing of `/`, a home or a system directory.
    Critical(String),
    /// What the line shows: a listing elsewhere (the project), or literal words.
    Shown,
    /// The output of a program the line does not show (`cat list`, `du -a /`), a file,
    /// or the terminal: the paths may be any.
    Unread(String),
}

/// What the pipeline ending at `cmds[end]` prints, read back past the commands that only
/// select lines (`find ~ | grep . | xargs rm` is `find ~`'s listing).
fn from_pipeline(cmds: &[Simple], end: usize, cwd: Option<&str>) -> From {
    let mut at = end;
    while at > 0 && cmds[at - 1].pipeline == cmds[at].pipeline && selects(&cmds[at]) {
        at -= 1;
    }
    let c = &cmds[at];
    let places = listed_under(c);
    if !places.is_empty() {
        return places
            .into_iter()
            .map(|p| normalize(&p, cwd))
            .find(|p| is_critical(p))
            .map_or(From::Shown, From::Critical);
    }
    let name = c.argv.first().map(|p| basename(p)).unwrap_or_default();
    let literal = c.substitutions.is_empty()
        && c.argv
            .iter()
            .all(|w| !w.contains('$') && !w.contains(crate::lex::COMPUTED));
    if literal && SHOWS_ITS_OUTPUT.contains(&&*name) {
        From::Shown
    } else if name.is_empty() {
        From::Unread("a command".into())
    } else {
        From::Unread(name.into_owned())
    }
}

/// What a command's substitutions print, all together: the worst of their pipelines.
fn from_substitutions(subs: &[Simple], cwd: Option<&str>) -> From {
    let mut worst = From::Shown;
    for (i, s) in subs.iter().enumerate() {
        let ends_pipeline = subs.get(i + 1).is_none_or(|n| n.pipeline != s.pipeline);
        if !ends_pipeline {
            continue;
        }
        match from_pipeline(subs, i, cwd) {
            From::Critical(u) => return From::Critical(u),
            From::Unread(u) if worst == From::Shown => worst = From::Unread(u),
            _ => {}
        }
    }
    worst
}

/// The finding for `program` handed the words `from` gives it.
fn judged(program: &str, from: &From, argv: &[String]) -> Option<Finding> {
    let under = match from {
        From::Shown => return None,
        From::Unread(source) => {
            return (does(program) == Does::Deletes).then(|| {
                finding(
                    Severity::Warn,
                    "deletes_unread_paths",
                    format!(
                        "{program} deletes or empties the paths {source} gives it when it runs, \
                         which the line does not show: they may be any files"
                    ),
                    argv,
                )
            });
        }
        From::Critical(under) => under,
    };
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

/// Whether a command names a program that deletes, in its words or its substitutions'.
fn names_a_deleter(c: &Simple) -> bool {
    c.argv.iter().any(|w| DELETERS.contains(&&*basename(w)))
        || c.substitutions.iter().any(names_a_deleter)
}

/// A listing of `/`, a home or a system directory handed to a program that does more than
/// read — piped into a runner of it, substituted into its words, looped over, or `-exec`'d —
/// and paths the line does not show handed to a deleter (`du -a / | cut -f2 | xargs rm`,
/// `rm $(cat list)`, `xargs rm < list`).
pub fn listed_deletes_in(cmds: &[Simple], cwd: Option<&str>) -> Option<Finding> {
    // Most lines name no listing, no glob and no deleter: nothing to look through (this rule
    // cost every judgement 7 % before it looked first).
    if !cmds.iter().any(|c| may_list(c) || names_a_deleter(c)) {
        return None;
    }
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
        let first_of_pipeline = i == 0 || cmds[i - 1].pipeline != c.pipeline;
        let read_by_a_loop = next.is_some_and(|n| n.argv.first().is_some_and(|p| p == "read"));
        let handed = if let Some(program) = next.and_then(|n| handed_to(n, true)) {
            Some((program, from_pipeline(cmds, i, cwd)))
        } else if let Some(program) = handed_to(c, true).filter(|_| first_of_pipeline) {
            // A runner fed by no command of the line: a file (`xargs rm < list`, `xargs -a
            // list rm`) or the terminal; or by its own literal text (a here-string), which
            // is read where it runs, or by `parallel`'s `:::` words.
            let literal = !c.input.is_empty() || c.argv.iter().any(|w| w == ":::");
            let source = c
                .reads
                .first()
                .map_or_else(|| "its input".to_string(), |f| format!("the file {f}"));
            (!literal).then_some((program, From::Unread(source)))
        } else if let Some((roots, programs)) = find_runs(c) {
            let under = roots
                .iter()
                .map(|r| normalize(r, cwd))
                .find(|r| is_critical(r));
            under.and_then(|u| {
                programs
                    .into_iter()
                    .find(|p| does(p) != Does::Reads)
                    .map(|p| (p, From::Critical(u)))
            })
        } else if c.argv.is_empty() {
            // A `for` loop's header, or an assignment: its words are its substitutions'
            // output.
            given_a_variable[i + 1]
                .clone()
                .map(|p| (p, from_substitutions(&c.substitutions, cwd)))
        } else if read_by_a_loop {
            given_a_variable
                .get(i + 2)
                .cloned()
                .flatten()
                .map(|p| (p, from_pipeline(cmds, i, cwd)))
        } else if first_of_pipeline && c.argv.first().is_some_and(|p| p == "read") {
            // `while read f; do rm "$f"; done < list`: what it reads is not on the line.
            given_a_variable[i + 1]
                .clone()
                .map(|p| (p, From::Unread("read".into())))
        } else if let Some((program, under)) = every_file_named(c, cwd) {
            Some((program, From::Critical(under)))
        } else {
            handed_to(c, false)
                .filter(|_| !c.substitutions.is_empty())
                .map(|p| (p, from_substitutions(&c.substitutions, cwd)))
        };
        if let Some(f) = handed.and_then(|(program, from)| judged(&program, &from, &c.argv)) {
            let block = f.severity == Severity::Block;
            if found.is_none() || block {
                found = Some(f);
            }
            if block {
                break;
            }
        }
    }
    found
}

#[cfg(test)]
#[path = "listed_deletes_tests.rs"]
mod tests;
