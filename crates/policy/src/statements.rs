//! Statements that run over several lines. A REPL and a shell both go on reading when a line
//! leaves a statement open — a bracket or a quote not closed, a line continued with `\`,
//! a block begun with `:` — and run the lines together: `os.system(` Enter `"rm -rf ~")`
//! Enter at Python's prompt, or `rm -rf \` Enter `~` Enter at bash's, is one command, and
//! each line alone showed none. What is open is told here, for the server to keep such lines
//! with what follows them (`open_statement`) and for a terminal's text to be read a
//! statement at a time (`joined`).

/// Most lines kept together as one statement: a longer one is read from its last lines.
const MAX_LINES: usize = 64;

/// How a line's quotes are read: a shell's (no escape inside `'…'`, a `#` comment only at a
/// word's start) or a language's (escapes in every string, Python's triple quotes).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    Shell,
    Code,
}

/// Whether `text` (typed keys: `\r` ends a line) leaves a statement open in either reading:
/// what comes next is read with it.
pub fn open_statement(text: &str) -> bool {
    let text = plain(text);
    open_in(&text, Reading::Shell) || open_in(&text, Reading::Code)
}

/// Typed keys as the text of their lines: `\r` a line end, escape sequences (`ESC [ A`)
/// and other control keys left out — a key is not a bracket.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                chars.next_if_eq(&'\n');
                out.push('\n');
            }
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte.
                Some('[') => {
                    for p in chars.by_ref() {
                        if ('@'..='~').contains(&p) {
                            break;
                        }
                    }
                }
                // SS3 and other two- or three-key escapes: one more key.
                Some('O') => {
                    chars.next();
                }
                _ => {}
            },
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn open_in(text: &str, reading: Reading) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let mut depth = 0usize;
    // The open quote, and whether it is tripled.
    let mut quote: Option<(char, bool)> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some((q, triple)) = quote {
            if c == '\\' && !(reading == Reading::Shell && q == '\'') {
                i += 2;
                continue;
            }
            if c == q && (!triple || (chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q)))
            {
                quote = None;
                i += if triple { 3 } else { 1 };
                continue;
            }
            i += 1;
            continue;
        }
        match c {
            '\\' => i += 1,
            '#' if reading == Reading::Code
                || i == 0
                || chars[i - 1].is_whitespace()
                || matches!(chars[i - 1], ';' | '&' | '|') =>
            {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '\'' | '"' | '`' => {
                let triple = reading == Reading::Code
                    && chars.get(i + 1) == Some(&c)
                    && chars.get(i + 2) == Some(&c);
                quote = Some((c, triple));
                i += if triple { 2 } else { 0 };
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    if quote.is_some() || depth > 0 {
        return true;
    }
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.iter().rev().find(|l| !l.trim().is_empty());
    let Some(last) = last.map(|l| l.trim_end()) else {
        return false;
    };
    let backslashes = last.chars().rev().take_while(|&c| c == '\\').count();
    if backslashes % 2 == 1 {
        return true;
    }
    match reading {
        // A pipe or a list waiting for its next command.
        Reading::Shell => last.ends_with('|') || last.ends_with("&&"),
        // A block begun (`for f in x:`) goes on while its lines are indented, until a blank
        // line ends it.
        Reading::Code => {
            let ended_blank = text.trim_end_matches([' ', '\t']).ends_with("\n\n")
                || lines.last().is_some_and(|l| l.trim().is_empty()) && lines.len() > 1;
            !ended_blank
                && (last.ends_with(':')
                    || (lines.len() > 1
                        && last.starts_with([' ', '\t'])
                        && lines.iter().any(|l| l.trim_end().ends_with(':'))))
        }
    }
}

/// The statements of a terminal's text that run over several lines, each joined as the
/// program reads it (`os.system(\n"rm -rf ~")`): what a line-by-line reading cannot see.
pub(crate) fn joined(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut acc: Vec<&str> = Vec::new();
    for line in text.split(['\n', '\r']) {
        acc.push(line);
        if acc.len() > MAX_LINES {
            acc.remove(0);
        }
        let together = acc.join("\n");
        if !open_statement(&together) {
            if acc.len() > 1 {
                out.push(together);
            }
            acc.clear();
        }
    }
    if acc.len() > 1 {
        out.push(acc.join("\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_brackets_quotes_and_continuations_are_told() {
        for open in [
            "os.system(",
            "subprocess.run([\n\"rm\",",
            "x = \"\"\"\nrm -rf ~",
            "rm -rf \\",
            "echo \"",
            "find ~ |",
            "true &&",
            "for f in os.listdir('.'):",
            "for f in os.listdir('.'):\n    os.remove(f)",
        ] {
            assert!(open_statement(open), "{open:?}");
        }
        for closed in [
            "os.system('ls')",
            "print(\"(\")",
            "echo it\\'s",
            "grep -c '(' f",
            "echo $# ${#x}",
            "x = 1  # a comment (",
            "ls -la",
            "for f in x:\n    print(f)\n\n",
            "rm -rf \\\\",
        ] {
            assert!(!open_statement(closed), "{closed:?}");
        }
    }

    #[test]
    fn statements_over_several_lines_are_joined() {
        assert_eq!(
            joined("import os\nos.system(\n  \"rm -rf ~\"\n)\nprint(1)"),
            vec!["os.system(\n  \"rm -rf ~\"\n)".to_string()]
        );
        assert!(joined("ls\npwd\n").is_empty());
    }
}
