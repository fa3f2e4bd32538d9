//! Reading an argv as its program will, before the rules look at it, and what a shell's own
//! state makes of later lines.
//!
//! Why: the rules matched words as written, and programs read more than that. GNU tools and
//! git take a long option abbreviated (`rm --recu -f ~` is `rm --recursive -f ~`); `kill`
//! reads `-01` as `-1`; the kernel resolves `/dev/./sda` and `/dev//sda` to `/dev/sda`; the
//! shell expands `rm -rf {/,}` to `rm -rf / ""` and `rm -rf /h*` to whatever `/h*` names. So
//! an argv is first put in the form the program will see, as far as the line shows it; what
//! only the running shell knows (its aliases, key bindings and history) is warned instead.

use std::borrow::Cow;

use super::{Finding, Severity, finding};

/// Long options the rules, and the wrappers the policy looks through, look at: an
/// abbreviation of one is read as it (even where the program's own list would make it
/// ambiguous, or resolve it to another: the stricter reading is taken).
const WATCHED_LONG: &[&str] = &[
    "recursive",
    "no-preserve-root",
    "force",
    "force-with-lease",
    "force-if-includes",
    "delete",
    "mirror",
    "hard",
    "output",
    "output-document",
    "remote-name",
    "split-string",
    "command",
    "signal",
    "kill-after",
    "user",
    "group",
    "chdir",
    "userspec",
    "zap-all",
    "purge",
    "remove",
    "install",
    "global",
    "all",
    "prune",
    "volumes",
];

/// The long option `word` stands for when it abbreviates a watched one (`--recu` →
/// `--recursive`, `--for=x` → `--force=x`); the word itself otherwise.
fn expand_long(word: &str) -> Cow<'_, str> {
    let Some(body) = word.strip_prefix("--") else {
        return Cow::Borrowed(word);
    };
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    if name.is_empty() || WATCHED_LONG.contains(&name) {
        return Cow::Borrowed(word);
    }
    match WATCHED_LONG.iter().find(|l| l.starts_with(name)) {
        Some(full) => Cow::Owned(match value {
            Some(v) => format!("--{full}={v}"),
            None => format!("--{full}"),
        }),
        None => Cow::Borrowed(word),
    }
}

/// An integer in another spelling (`-01`, `+1`, `007`) in its plain form, as `strtol`
/// reads it.
fn plain_number(word: &str) -> Option<String> {
    let (sign, digits) = match word.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", word.strip_prefix('+').unwrap_or(word)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let trimmed = digits.trim_start_matches('0');
    let n = if trimmed.is_empty() { "0" } else { trimmed };
    let plain = format!("{sign}{n}");
    (plain != word).then_some(plain)
}

/// A word's brace expansion as the shell makes it (`{/,}` → `/`, ``; `a{b,c}d` → `abd`,
/// `acd`), at most `MAX_EXPANSIONS` words; the word itself when it has none.
pub fn brace_expand(word: &str) -> Vec<String> {
    const MAX_EXPANSIONS: usize = 64;
    let mut out = vec![word.to_string()];
    for _ in 0..8 {
        let mut next = Vec::new();
        let mut changed = false;
        for w in &out {
            match one_brace(w) {
                Some(parts) => {
                    changed = true;
                    next.extend(parts);
                }
                None => next.push(w.clone()),
            }
            if next.len() > MAX_EXPANSIONS {
                return next;
            }
        }
        out = next;
        if !changed {
            break;
        }
    }
    out
}

/// The first `{a,b}` group of `word`, expanded; `None` when there is none.
fn one_brace(word: &str) -> Option<Vec<String>> {
    let open = word.find('{')?;
    let close = open + word[open..].find('}')?;
    let inner = &word[open + 1..close];
    if !inner.contains(',') {
        return None;
    }
    let (head, tail) = (&word[..open], &word[close + 1..]);
    Some(
        inner
            .split(',')
            .map(|alt| format!("{head}{alt}{tail}"))
            .collect(),
    )
}

/// `argv` as its program will read it: watched long options unabbreviated, numbers plain,
/// braces expanded.
pub fn as_read(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    for (i, w) in argv.iter().enumerate() {
        if i == 0 {
            out.push(w.clone());
            continue;
        }
        for e in brace_expand(w) {
            let e = expand_long(&e).into_owned();
            out.push(plain_number(&e).unwrap_or(e));
        }
    }
    out
}

/// Where a glob's matches lie: the directory part before its first wildcard (`/h*` → `/`,
/// `~/.*` → `~`), when the word has one.
pub fn glob_base(word: &str) -> Option<&str> {
    let at = word.find(['*', '?', '['])?;
    let base = &word[..at];
    Some(match base.rfind('/') {
        Some(0) => "/",
        Some(i) => &base[..i],
        None => ".",
    })
}

/// Builtins that change what later keys or lines run in this shell: aliases, key bindings
/// and macros, line-editing mode, history re-run, loadable builtins.
/// `set -k`, `set -o keyword`, or `k` in a cluster of `set`'s flags (`-ek`), before any
/// `--` (after it come positional parameters).
fn sets_keyword(args: &[String]) -> bool {
    let mut words = args
        .iter()
        .map(String::as_str)
        .take_while(|a| *a != "--" && *a != "-");
    let mut previous_o = false;
    words.any(|a| {
        let keyword = (previous_o && a == "keyword")
            || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('k'));
        previous_o = a == "-o";
        keyword
    })
}

pub fn shell_state(argv: &[String]) -> Option<Finding> {
    let name = argv.first()?.as_str();
    let args = &argv[1..];
    let what = match name {
        "bind" | "bindkey" | "zle" if !args.is_empty() => {
            "binds keys to commands or macros: \
                 later keys may type or run something else than they read"
        }
        "fc" => "re-runs or edits lines from the history",
        // zsh's global and suffix aliases replace any word, or run a program for a file's
        // name (`alias -s txt=vim`); fish's abbreviations expand as they are typed.
        "alias"
            if args
                .iter()
                .any(|a| a.starts_with('-') && a.contains(['g', 's'])) =>
        {
            "defines an alias that replaces words anywhere on later lines, or runs a program \
                 for a file's name"
        }
        "abbr"
            if !args.is_empty()
                && !args
                    .iter()
                    .all(|a| matches!(a.as_str(), "-l" | "--list" | "-s" | "--show")) =>
        {
            "defines an abbreviation that later keys expand into another line"
        }
        "r" => "re-runs a line from the history",
        "history" if args.iter().any(|a| a == "-s" || a == "-r") => {
            "puts lines into the history, for later keys to recall"
        }
        "set"
            if args
                .windows(2)
                .any(|w| w[0] == "-o" && matches!(w[1].as_str(), "vi" | "emacs")) =>
        {
            "changes the line editor's keys: later keys mean other edits"
        }
        // `set -k`: every `NAME=value` word of a later line, wherever it stands, is put in
        // the command's environment — words read here as arguments reach the program as
        // `LD_PRELOAD` or `BASH_ENV`.
        "set" if sets_keyword(args) => {
            "makes NAME=value words anywhere on later lines the command's environment \
                 (set -k): what reads as an argument may load code"
        }
        "enable" if args.iter().any(|a| a.starts_with("-f")) => "loads a builtin from a library",
        // `-n` turns a builtin off (the name then runs a program of that name found on the
        // search path), `-d` removes one; only the listing forms leave the shell as it was.
        "enable"
            if !args
                .iter()
                .all(|a| matches!(a.as_str(), "-a" | "-p" | "-s")) =>
        {
            "turns the shell's builtins on or off: a name may run another program"
        }
        // bash's `hash -p FILE NAME`, zsh's `hash NAME=FILE`.
        "hash"
            if args
                .iter()
                .any(|a| a.starts_with("-p") || (!a.starts_with('-') && a.contains('='))) =>
        {
            "makes a command name run another program's file"
        }
        "stty" if !super::stty::leaves_modes(args) => {
            "changes the terminal's modes (its interrupt key, echo, line editing): Ctrl-C, \
                 timeouts and what a person watching sees may stop working"
        }
        // An empty action ignores the signals, for the shell and all it starts after: Ctrl-C
        // and timeouts no longer stop them.
        "trap" if args.first().is_some_and(|a| a.is_empty()) && args.len() > 1 => {
            "makes the shell and what it starts ignore signals: Ctrl-C and timeouts may no \
                 longer stop them"
        }
        // `exec` with nothing to run only redirects the shell's own input or output.
        "exec" if args.is_empty() => {
            "redirects the shell's own input or output for every later line"
        }
        _ => return None,
    };
    Some(finding(Severity::Warn, "terminal_state", what, argv))
}

/// History expansion in a line (`!!`, `!-2`, `!rm`, `!?x?`, `!$`, `^old^new`): an
/// interactive bash or zsh replaces it with earlier lines before running, so what runs is
/// not what the line shows.
pub fn history_expansion(line: &str) -> Option<Finding> {
    let t = line.trim_start();
    let caret = t.starts_with('^') && t[1..].contains('^');
    let mut single = false;
    let mut prev = ' ';
    let mut found = caret;
    let chars: Vec<char> = line.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '\'' if prev != '\\' => single = !single,
            '!' if !single && prev != '\\' => {
                let next = chars.get(i + 1).copied().unwrap_or(' ');
                if next == '!'
                    || next == '$'
                    || next == '^'
                    || next == '*'
                    || next == '?'
                    || next == '#'
                    || next == '-'
                    || next.is_ascii_alphanumeric()
                {
                    found = true;
                }
            }
            _ => {}
        }
        prev = c;
    }
    found.then(|| Finding {
        severity: Severity::Warn,
        rule: "history_expansion",
        message: "history expansion (`!…`, `^…^`) runs earlier lines, which this one does not show"
            .into(),
        command: line.chars().take(200).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_words as w;

    #[test]
    fn argv_is_read_as_the_program_reads_it() {
        assert_eq!(as_read(&w("rm --recu -f ~")), w("rm --recursive -f ~"));
        assert_eq!(
            as_read(&w("rm --no-pres -r /")),
            w("rm --no-preserve-root -r /")
        );
        assert_eq!(
            as_read(&w("git push --for origin")),
            w("git push --force origin")
        );
        assert_eq!(
            as_read(&w("git push --force-w origin")),
            w("git push --force-with-lease origin")
        );
        assert_eq!(as_read(&w("kill -9 -01")), w("kill -9 -1"));
        assert_eq!(as_read(&w("kill -9 +1")), w("kill -9 1"));
        assert_eq!(as_read(&w("rm -rf {/,}")), vec!["rm", "-rf", "/", ""]);
        assert_eq!(as_read(&w("ls --color=auto")), w("ls --color=auto"));
        assert_eq!(
            as_read(&w("cargo build --release")),
            w("cargo build --release")
        );
        assert_eq!(glob_base("/h*"), Some("/"));
        assert_eq!(glob_base("~/.*"), Some("~"));
        assert_eq!(glob_base("/usr/l?b"), Some("/usr"));
        assert_eq!(glob_base("build/*"), Some("build"));
        assert_eq!(glob_base("x"), None);
    }

    #[test]
    fn history_and_shell_state_are_seen() {
        for line in ["!!", "sudo !!", "!-2", "!rm", "echo !$", "^ls^rm", "!?foo?"] {
            assert!(history_expansion(line).is_some(), "{line}");
        }
        for line in [
            "echo 'hi!'",
            "git commit -m \"fix!\"",
            "[ ! -f x ]",
            "a != b",
            "echo \\!x",
        ] {
            assert!(history_expansion(line).is_none(), "{line}");
        }
        for line in [
            "bind -x '\"\\C-t\": id'",
            "fc -s",
            "set -o vi",
            "hash -p /bin/rm ls",
            "enable -n echo",
            "stty intr undef",
            "stty -isig",
            "stty raw",
            "stty raw -echo",
            "stty -F /dev/pts/1 sane",
            "trap '' INT",
            "exec",
        ] {
            assert!(shell_state(&w(line)).is_some(), "{line}");
        }
        for line in [
            "alias",
            "alias ll='ls -la'",
            "set -e",
            "history",
            "bind",
            "hash",
            "hash -r",
            "enable -a",
            "stty -a",
            "stty size",
            "stty sane",
            "stty cols 120 rows 40",
            "stty -echo",
            "stty -g",
            "trap 'echo bye' EXIT",
            "trap -p",
        ] {
            assert!(shell_state(&w(line)).is_none(), "{line}");
        }
    }
}
