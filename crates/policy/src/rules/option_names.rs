//! Wildcard injection: a file named like an option (`-rf`, `--checkpoint-action=exec=…`)
//! is handed to a program as an option by a glob that matches it — `rm * ~` in a directory
//! holding a file named `-rf` is `rm -rf … ~`. What a glob will match is not on the line,
//! so the two halves that are are asked about: a file made with such a name (`touch -- -rf`,
//! `> ./-rf`), and `rm` of a critical path beside a glob that may match one.

use super::argv::Cmd;
use super::*;
use crate::wrappers::basename;

/// Whether a name, once a file's, reads as an option when a glob hands it to a program.
fn option_like(path: &str) -> bool {
    let name = basename(path);
    name.starts_with('-') && name.len() > 1
}

/// Whether a word (before `--`) is a glob that may match a file named like an option: one
/// that starts with a glob character (`*`, `?*`, `[-]*`), or an option with one in it
/// (`-?f` matches a file named `-rf`).
fn may_match_options(word: &str) -> bool {
    let glob = |c: char| matches!(c, '*' | '?' | '[');
    word.starts_with(glob) || (word.starts_with('-') && word.contains(glob))
}

/// The files a command makes with option-like names, and `rm` beside such a glob.
pub(super) fn option_names(c: &Cmd<'_>, redirects: &[String], out: &mut Vec<Finding>) {
    let made_by_name: &[&str] = match c.name.as_str() {
        "touch" | "mkdir" | "mkfifo" | "mknod" => &c.targets,
        _ => &[],
    };
    let written = super::files::written_by(c.argv);
    let made = made_by_name
        .iter()
        .copied()
        .chain(written)
        .chain(redirects.iter().map(String::as_str))
        .find(|p| option_like(p));
    if let Some(p) = made {
        out.push(finding(
            Severity::Warn,
            "option_named_file",
            format!(
                "makes a file named like an option ({}): a glob such as `*` later hands it to \
                 a program as one (`rm *` beside a file named -rf is `rm -rf`)",
                basename(p)
            ),
            c.argv,
        ));
    }
    if c.name == "rm" && !c.recursive {
        let globbed = c
            .args
            .iter()
            .take_while(|a| *a != "--")
            .any(|a| may_match_options(a));
        let critical: Vec<String> = c
            .targets
            .iter()
            .map(|t| normalize(t, c.cwd))
            .filter(|t| is_critical(t))
            .collect();
        if globbed && !critical.is_empty() {
            out.push(finding(
                Severity::Warn,
                "option_named_file",
                format!(
                    "a glob among rm's words may match a file named like an option (-rf), \
                     which rm reads as one: {} may be deleted recursively",
                    critical.join(", ")
                ),
                c.argv,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_that_may_match_options() {
        for w in ["*", "?*", "[-]*", "-?f", "-*"] {
            assert!(may_match_options(w), "{w}");
        }
        for w in ["./*", "src/*", "-rf", "file?", "build"] {
            assert!(!may_match_options(w), "{w}");
        }
        assert!(option_like("./-rf") && option_like("--checkpoint=1"));
        assert!(!option_like("-") && !option_like("a-b"));
    }
}
