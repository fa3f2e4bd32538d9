//! Statements that run over several lines. A REPL and a shell both go on reading when a line
//! leaves a statement open — a bracket or a quote not closed, a line continued with `\`,
//! a block begun with `:` — and run the lines together: `os.system(` Enter `"rm -rf ~")`
//! Enter at Python's prompt, or `rm -rf \` Enter `~` Enter at bash's, is one command, and
//! each line alone showed none. What is open is told here, for the server to keep such lines
//! with what follows them (`open_statement`) and for a terminal's text to be read a
//! statement at a time (`joined`).

/// Most lines read together as one statement: a longer one is read in parts of this many.
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
    let mut scans = Scans::default();
    for line in plain(text).lines() {
        scans.feed(line);
    }
    scans.open()
}

/// Both readings of the lines fed so far.
#[derive(Default)]
struct Scans {
    shell: Scan,
    code: Scan,
}

impl Scans {
    fn feed(&mut self, line: &str) {
        let chars: Vec<char> = line.chars().collect();
        self.shell.feed(&chars, Reading::Shell);
        self.code.feed(&chars, Reading::Code);
    }

    fn open(&self) -> bool {
        self.shell.open(Reading::Shell) || self.code.open(Reading::Code)
    }
}

/// One reading's state after the lines fed so far: read a line at a time, so a text of many
/// lines is read once, not again for each line it gains.
#[derive(Default)]
struct Scan {
    depth: usize,
    /// The open quote, and whether it is tripled.
    quote: Option<(char, bool)>,
    lines: usize,
    /// The last line that was not blank, its end trimmed.
    last: String,
    /// A line ended with `:` (a block begun).
    block: bool,
    /// A blank line came after the last one that was not.
    ended_blank: bool,
}

impl Scan {
    fn feed(&mut self, chars: &[char], reading: Reading) {
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if let Some((q, triple)) = self.quote {
                if c == '\\' && !(reading == Reading::Shell && q == '\'') {
                    i += 2;
                    continue;
                }
                if c == q
                    && (!triple || (chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q)))
                {
                    self.quote = None;
                    i += if triple { 3 } else { 1 };
                    continue;
                }
                i += 1;
                continue;
            }
            match c {
                '\\' => i += 1,
                // A comment runs to the line's end.
                '#' if reading == Reading::Code
                    || i == 0
                    || chars[i - 1].is_whitespace()
                    || matches!(chars[i - 1], ';' | '&' | '|') =>
                {
                    break;
                }
                '\'' | '"' | '`' => {
                    let triple = reading == Reading::Code
                        && chars.get(i + 1) == Some(&c)
                        && chars.get(i + 2) == Some(&c);
                    self.quote = Some((c, triple));
                    i += if triple { 2 } else { 0 };
                }
                '(' | '[' | '{' => self.depth += 1,
                ')' | ']' | '}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        self.lines += 1;
        let line: String = chars.iter().collect();
        let trimmed = line.trim_end();
        if trimmed.trim_start().is_empty() {
            self.ended_blank = self.lines > 1;
        } else {
            self.ended_blank = false;
            self.block |= trimmed.ends_with(':');
            self.last = trimmed.to_string();
        }
    }

    fn open(&self, reading: Reading) -> bool {
        if self.quote.is_some() || self.depth > 0 {
            return true;
        }
        let last = self.last.as_str();
        if last.is_empty() {
            return false;
        }
        let backslashes = last.chars().rev().take_while(|&c| c == '\\').count();
        if backslashes % 2 == 1 {
            return true;
        }
        match reading {
            // A pipe or a list waiting for its next command.
            Reading::Shell => last.ends_with('|') || last.ends_with("&&"),
            // A block begun (`for f in x:`) goes on while its lines are indented, until a
            // blank line ends it.
            Reading::Code => {
                !self.ended_blank
                    && (last.ends_with(':')
                        || (self.lines > 1 && last.starts_with([' ', '\t']) && self.block))
            }
        }
    }
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

/// The statements of a terminal's text that run over several lines, each joined as the
/// program reads it (`os.system(\n"rm -rf ~")`): what a line-by-line reading cannot see.
/// `true` with them when a statement ran over more than [`MAX_LINES`] lines and was read in
/// parts (then what it runs may not be in any one part: the caller asks).
pub(crate) fn joined(text: &str) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut in_parts = false;
    // One line is a statement of one line: nothing to join (most typed input).
    if !text.trim_end_matches(['\r', '\n']).contains(['\r', '\n']) {
        return (out, in_parts);
    }
    let mut acc: Vec<&str> = Vec::new();
    let mut scans = Scans::default();
    for line in text.lines() {
        acc.push(line);
        scans.feed(&plain(line));
        let open = scans.open();
        if !open || acc.len() >= MAX_LINES {
            in_parts |= open;
            if acc.len() > 1 {
                out.push(acc.join("\n"));
            }
            acc.clear();
            scans = Scans::default();
        }
    }
    if acc.len() > 1 {
        out.push(acc.join("\n"));
    }
    (out, in_parts)
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
            (vec!["os.system(\n  \"rm -rf ~\"\n)".to_string()], false)
        );
        assert_eq!(joined("ls\npwd\n"), (vec![], false));
        let long = format!("os.system(\n{}\"rm -rf ~\")", " \n".repeat(MAX_LINES));
        assert!(joined(&long).1, "read in parts");
    }
}
