//! Patterns that span commands: fork bombs (a function piping itself into itself in the
//! background) and download-and-execute (a downloader feeding an interpreter).

use std::cell::Cell;
use std::sync::OnceLock;

use regex::Regex;

use super::*;
use crate::policy::lex::{self, Simple};
use crate::policy::unwrap::{MAX_NESTED, basename, unwrap};
use crate::policy::walk::NESTED_TEXT_UNIT;

/// Deepest nesting of shells inside shells followed (as the other rules do).
const MAX_SHELL_NESTING: usize = 16;

const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "https",
    "iwr",
    "irm",
    "invoke-webrequest",
    "invoke-restmethod",
];
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "php",
    "iex",
    "invoke-expression",
    "source",
    ".",
    "eval",
    "pwsh",
    "powershell",
];

/// Words and the one-character operators `|`, `&`, `;` of a function body, in order.
fn fork_tokens(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in body.char_indices() {
        let op = matches!(c, '|' | '&' | ';');
        if c.is_whitespace() || op {
            if let Some(s) = start.take() {
                out.push(&body[s..i]);
            }
            if op {
                out.push(&body[i..i + 1]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(&body[s..]);
    }
    out
}

/// Fork bombs: a function that calls itself into the background, twice.
pub fn check_fork_bomb(text: &str) -> Option<Finding> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    let re = R
        .get_or_init(|| {
            Regex::new(
                r"(?s)(?:\bfunction\s+([A-Za-z_:.][A-Za-z0-9_:.]*)\s*(?:\(\))?|([A-Za-z_:.][A-Za-z0-9_:.]*)\s*\(\))\s*\{(.*?)\}",
            )
            .ok()
        })
        .as_ref()?;
    for cap in re.captures_iter(text) {
        let Some(name) = cap.get(1).or(cap.get(2)).map(|m| m.as_str()) else {
            continue;
        };
        let body = cap.get(3).map_or("", |m| m.as_str());
        let tokens = fork_tokens(body);
        let calls_self_twice = tokens
            .windows(3)
            .any(|w| w[0] == name && w[1] == "|" && w[2] == name);
        let backgrounds = body.contains('&');
        if calls_self_twice && backgrounds {
            return Some(Finding {
                severity: Severity::Block,
                rule: "fork_bomb",
                message: "a fork bomb exhausts the machine's processes".into(),
                command: text.trim().chars().take(200).collect(),
            });
        }
    }
    let t = text.to_ascii_lowercase();
    if t.contains("fork while fork")
        || t.contains("os.fork() while")
        || t.contains("while true; do $0")
    {
        return Some(Finding {
            severity: Severity::Block,
            rule: "fork_bomb",
            message: "a fork bomb exhausts the machine's processes".into(),
            command: text.trim().chars().take(200).collect(),
        });
    }
    None
}

fn downloads(c: &Simple) -> bool {
    unwrap(c).argvs.iter().any(|a| {
        a.first()
            .is_some_and(|w| DOWNLOADERS.contains(&basename(w).as_str()))
    }) || c.substitutions.iter().any(downloads)
}

fn interprets(c: &Simple) -> bool {
    unwrap(c).argvs.iter().any(|a| {
        a.first()
            .is_some_and(|w| INTERPRETERS.contains(&basename(w).as_str()))
    })
}

/// `curl … | sh`, `sh -c "$(curl …)"`, `bash <(wget …)`, `eval "$(curl …)"`.
pub fn check_download_execute(line: &str) -> Option<Finding> {
    download_execute_at(line, 0, &Cell::new(MAX_NESTED))
}

fn download_execute_at(line: &str, depth: usize, budget: &Cell<usize>) -> Option<Finding> {
    if depth > MAX_SHELL_NESTING {
        return None;
    }
    if depth > 0 {
        let cost = 1 + line.len() / NESTED_TEXT_UNIT;
        if budget.get() < cost {
            budget.set(0);
            return None;
        }
        budget.set(budget.get() - cost);
    }
    let parsed = lex::parse(line);
    let cmds = &parsed.commands;
    for (i, c) in cmds.iter().enumerate() {
        for inner in unwrap(c).shell_lines {
            if let Some(f) = download_execute_at(&inner, depth + 1, budget) {
                return Some(f);
            }
        }
        // A pipeline's commands are consecutive.
        let piped = downloads(c)
            && cmds[i + 1..]
                .iter()
                .take_while(|d| d.pipeline == c.pipeline)
                .any(interprets);
        let substituted = interprets(c) && c.substitutions.iter().any(downloads);
        if piped || substituted {
            return Some(finding(
                Severity::Warn,
                "download_execute",
                "runs code downloaded from the network",
                &c.argv,
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_bombs() {
        assert!(check_fork_bomb(":(){ :|:& };:").is_some());
        assert!(check_fork_bomb("bomb() { bomb | bomb & }; bomb").is_some());
        assert!(check_fork_bomb("function f { f|f& }; f").is_some());
        assert!(check_fork_bomb("f() { echo hi; }; f").is_none());
    }
}
