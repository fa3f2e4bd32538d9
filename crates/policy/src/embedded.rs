//! Commands in the arguments of a program the policy does not model: fail closed on them.
//!
//! Why: the wrappers the policy looks through and the runners it warns about are lists, and
//! every list missed some — `tsocks rm -rf ~`, `eatmydata rm -rf ~`, `pyenv exec rm -rf ~`,
//! `xterm -e rm -rf ~`, `flock -c 'rm -rf ~' f`, `vagrant ssh -c 'rm -rf ~'` were `allowed`.
//! So the other way round: for a program not known to take its arguments as data, an
//! argument list that holds a command the policy would not allow — from a word that names a
//! program to the end, or one word that is a line of its own (`-c 'CMD'`, `--command=CMD`,
//! `KEY=CMD`) — is warned: the program may run it, and only a person can say it does not.
//!
//! Only an otherwise allowed line is looked at, and each piece is judged once, without this
//! look again (so a crafted line costs at most a bounded number of short judgements).

use std::cell::Cell;

use crate::walk::Run;
use crate::wrappers::basename;
use crate::{Decision, Finding, Policy, Severity, consoles, inline, matches_rule};

thread_local! {
    /// Set while a piece of an argument list is judged: its own arguments are not looked at.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// The rule's name: what a person is asked about. Any other finding on the same line is more
/// telling, and decides (`Decision::deciding`).
pub const RULE: &str = "command_in_arguments";

/// Most pieces judged per command, and per line: a wrapper names its command within its
/// first few words (`chroot DIR CMD`, `flock FILE CMD`, `nvm exec VERSION CMD`).
const MAX_PER_COMMAND: usize = 24;
const MAX_PER_LINE: usize = 64;
/// Longest piece judged; a longer word is code of its own, which the rules on the program
/// that takes it read (or a file's text, not a command).
const MAX_PIECE: usize = 4096;
/// Most words of a command judged from one that may name a program (a command and its
/// arguments; a longer list is data, and is judged in its first words all the same).
const MAX_WORDS: usize = 64;

/// Programs whose arguments are data to them, or which the policy models itself (what they
/// run is judged by their own rules): a message, a pattern, a name to look up.
const DATA: &[&str] = &[
    "echo",
    "printf",
    "print",
    "git",
    "man",
    "info",
    "whatis",
    "apropos",
    "tldr",
    "help",
    "which",
    "whereis",
    "type",
    "command",
    "hash",
    "sed",
    "jq",
    "yq",
    "logger",
    "notify-send",
    "wall",
    "cowsay",
    "figlet",
    "toilet",
    "banner",
    "test",
    "[",
    "[[",
    "expr",
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "alias",
    "unalias",
    "set",
    "unset",
    "read",
    "trap",
    "complete",
    "compgen",
    "cd",
    "pushd",
    "kill",
    "pkill",
    "pgrep",
    "killall",
    "find",
    "xargs",
    "ssh",
    "sh",
    "bash",
    "dash",
    "zsh",
    "fish",
    "ksh",
    "eval",
    "source",
    ".",
];

impl Policy {
    /// Warnings for commands held in the arguments of programs the policy does not model.
    pub(crate) fn embedded_commands(&self, runs: &[Run], cwd: Option<&str>) -> Vec<Finding> {
        if INSIDE.with(Cell::get) {
            return Vec::new();
        }
        INSIDE.with(|i| i.set(true));
        let mut out = Vec::new();
        let mut left = MAX_PER_LINE;
        for Run { argv, .. } in runs {
            if left == 0 || !out.is_empty() {
                break;
            }
            let Some(program) = argv.first() else {
                continue;
            };
            let name = basename(program).to_ascii_lowercase();
            if DATA.contains(&name.as_str())
                || crate::wrappers::SEARCHERS.contains(&name.as_str())
                || self.allowed.iter().any(|p| matches_rule(argv, p))
            {
                continue;
            }
            let code_words = inline::is_interpreter(&name) || consoles::is_console(&name);
            for piece in pieces(argv, code_words, cwd)
                .into_iter()
                .take(MAX_PER_COMMAND)
            {
                if left == 0 {
                    break;
                }
                left -= 1;
                let inner = self.evaluate(&piece, cwd);
                let Some(why) = telling(&inner) else {
                    continue;
                };
                out.push(Finding {
                    severity: Severity::Warn,
                    rule: RULE,
                    message: format!(
                        "{name} is not a program the policy knows, and its arguments hold a \
                         command it may run, `{}` ({}: {}): what it runs is not judged",
                        short(&piece),
                        why.rule,
                        why.message
                    ),
                    command: shell_words::join(argv),
                });
                break;
            }
        }
        INSIDE.with(|i| i.set(false));
        out
    }
}

/// The finding that makes a piece a command not to run unasked: a block, or a warning but
/// those that say only how the words read elsewhere (a piece need not parse as a whole
/// line, and any word may be a PowerShell alias).
fn telling(inner: &Decision) -> Option<&Finding> {
    const ONLY_READING: &[&str] = &["unparseable", "windows_unread"];
    inner
        .findings
        .iter()
        .find(|f| f.severity == Severity::Block)
        .or_else(|| {
            inner
                .findings
                .iter()
                .find(|f| !ONLY_READING.contains(&f.rule))
        })
}

/// The pieces of `argv` that may be a command its program runs: from each word that may
/// name a program to the end, and each word that holds a line of its own (whole, and its
/// value after `=`). `code_words`: the program takes code in a language of its own, whose
/// words are not shell lines (its own rules read them).
fn pieces(argv: &[String], code_words: bool, cwd: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, word) in argv.iter().enumerate().skip(1) {
        if word.len() > MAX_PIECE {
            continue;
        }
        if names_a_program(word) && !data_file(word, cwd) {
            out.push(shell_words::join(argv.iter().skip(i).take(MAX_WORDS)));
        }
        if code_words {
            continue;
        }
        let mut texts = vec![word.as_str()];
        if let Some((_, value)) = word.split_once('=') {
            texts.push(value);
        }
        for text in texts {
            let text = text.trim_start_matches('!');
            if text.contains(char::is_whitespace) && !out.iter().any(|p| p == text) {
                out.push(text.to_string());
            }
        }
    }
    out
}

/// Whether `word` may be a program's name or path: no option, no number, no spaces.
fn names_a_program(word: &str) -> bool {
    !word.starts_with('-')
        && !word.starts_with('+')
        && word.chars().any(|c| c.is_ascii_alphabetic())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-' | '+' | '~'))
}

/// Whether a path word names a directory or a file no one may run (`awk … /etc/passwd`
/// reads the file; it is not `passwd`).
fn data_file(word: &str, cwd: Option<&str>) -> bool {
    if !word.contains('/') || word.starts_with('~') {
        return false;
    }
    let path = match cwd {
        Some(dir) if !word.starts_with('/') => std::path::Path::new(dir).join(word),
        None if !word.starts_with('/') => return false,
        _ => std::path::PathBuf::from(word),
    };
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    let runnable = {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    };
    #[cfg(not(unix))]
    let runnable = true;
    meta.is_dir() || !runnable
}

/// A piece as it is quoted in a message: its first 120 characters.
fn short(piece: &str) -> String {
    let mut s: String = piece.chars().take(120).collect();
    if s.len() < piece.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        shell_words::split(s).expect("test line splits")
    }

    #[test]
    fn suffixes_start_at_words_that_may_name_programs() {
        let p = pieces(&w("tsocks rm -rf ~"), false, None);
        assert_eq!(p[0], "rm -rf '~'");
        assert!(!p.iter().any(|x| x.starts_with("-rf")));
    }

    #[test]
    fn words_holding_lines_and_values_are_pieces() {
        let p = pieces(&w("flock --command='rm -rf ~' /tmp/l"), false, None);
        assert!(p.contains(&"rm -rf ~".to_string()), "{p:?}");
        let p = pieces(&w("hg --config alias.x='!rm -rf ~' x"), false, None);
        assert!(p.contains(&"rm -rf ~".to_string()), "{p:?}");
    }

    #[test]
    fn code_for_an_interpreter_is_not_read_as_a_shell_line() {
        let p = pieces(&w("python3 -c 'import os; print(1)'"), true, None);
        assert!(p.is_empty(), "{p:?}");
    }

    /// Unix paths of the machine the tests run on (under Wine they name nothing).
    #[cfg(unix)]
    #[test]
    fn a_file_that_is_read_is_not_a_program() {
        assert!(data_file("/etc/passwd", None));
        assert!(data_file("/etc", None));
        assert!(!data_file("/bin/sh", None));
        assert!(!data_file("passwd", None));
        assert!(pieces(&w("awk -F: '{print $1}' /etc/passwd"), true, None).is_empty());
    }
}
