//! What the agent has typed into each terminal since its last line end, and the entered
//! lines of a statement still open.
//!
//! Raw input is judged by the lines it enters, but a line can be typed over several calls:
//! `rm -rf` in one, ` /` and Enter in the next, each harmless alone. And a command line is
//! pasted after whatever the agent left unentered at the prompt. So the agent's unentered
//! text is kept per terminal and judged again with what follows it. A statement can also
//! run over lines entered in several calls — `os.system(` Enter at Python's prompt, then
//! `"rm -rf ~")` Enter; `rm -rf \` Enter at bash's, then `~` Enter — and the program runs
//! the lines together: lines that leave a statement open (`policy::open_statement`) are kept
//! too, until a later line closes it or Ctrl-C abandons it. A person's own typing on the
//! page is theirs and is not kept; a line they enter leaves this text stale, which can only
//! make a later verdict stricter.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::locks::lock;

/// How much unentered text is kept per terminal: the kernel's line discipline holds no
/// longer a line, and a line editor's line is judged by its tail alike.
const KEPT_CHARS: usize = 4096;

#[derive(Default)]
pub struct Unentered {
    tails: Mutex<HashMap<String, Kept>>,
}

/// One terminal's kept text.
#[derive(Default)]
struct Kept {
    /// Entered lines of a statement still open, with their line ends.
    open: String,
    /// What follows the last line end.
    tail: String,
}

impl Unentered {
    /// What the agent left in terminal `id`: the lines of a statement still open, then the
    /// unentered text.
    pub fn before(&self, id: &str) -> String {
        lock(&self.tails)
            .get(id)
            .map(|k| format!("{}{}", k.open, k.tail))
            .unwrap_or_default()
    }

    /// `text` was typed into terminal `id` after what was left there: into the shell's line
    /// editor (`to_editor`), or to a program reading the terminal itself (a REPL with its own
    /// editor, whose lines are statements too but leave nothing unentered at the prompt).
    /// `finished`: a command line ran to its end, so the shell is back at its prompt.
    pub fn typed(&self, id: &str, text: &str, to_editor: bool, finished: bool) {
        let mut tails = lock(&self.tails);
        let Kept { mut open, mut tail } = tails.remove(id).unwrap_or_default();
        // Keys a program takes leave the shell's unentered text as it was.
        let shell_tail = (!to_editor).then(|| std::mem::take(&mut tail));
        // Ctrl-C abandons the line and the statement (the line discipline flushes it, a line
        // editor starts afresh, a REPL drops what it was reading).
        let text = match text.rfind('\u{3}') {
            Some(at) => {
                open.clear();
                tail.clear();
                &text[at + 1..]
            }
            None => text,
        };
        // A line end enters the line.
        match text.rfind(['\r', '\n']) {
            Some(end) => {
                let entered = format!("{open}{tail}{}", &text[..=end]);
                open = if crate::policy::open_statement(&entered) {
                    // Too long, its start and its end are kept: where a call begins and
                    // what ends it.
                    ends(entered)
                } else {
                    String::new()
                };
                tail = text[end + 1..].to_string();
            }
            None if to_editor => tail.push_str(text),
            None => {}
        }
        if let Some(kept) = shell_tail {
            tail = kept;
        }
        if finished {
            open.clear();
        }
        let tail = last_chars(tail);
        if !tail.is_empty() || !open.is_empty() {
            tails.insert(id.to_string(), Kept { open, tail });
        }
    }

    /// Terminal `id` is gone.
    pub fn forget(&self, id: &str) {
        lock(&self.tails).remove(id);
    }
}

#[cfg(test)]
impl Unentered {
    fn typed_here(&self, id: &str, text: &str) {
        self.typed(id, text, true, false);
    }
}

/// The first and the last half of [`KEPT_CHARS`] characters of `text`, when it is longer.
fn ends(text: String) -> String {
    let count = text.chars().count();
    if count <= KEPT_CHARS {
        return text;
    }
    let half = KEPT_CHARS / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    format!("{head}\r{tail}")
}

/// The last [`KEPT_CHARS`] characters of `text`.
fn last_chars(text: String) -> String {
    let extra = text.chars().count().saturating_sub(KEPT_CHARS);
    if extra > 0 {
        text.chars().skip(extra).collect()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_follows_the_last_line_end_is_kept() {
        let u = Unentered::default();
        u.typed_here("t", "rm -rf");
        u.typed_here("t", " /x");
        assert_eq!(u.before("t"), "rm -rf /x");
        u.typed_here("t", "\rls\r");
        assert_eq!(u.before("t"), "");
        u.typed_here("t", "a\nb");
        assert_eq!(u.before("t"), "b");
        u.typed_here("t", "\u{1b}[H\u{3}c");
        assert_eq!(u.before("t"), "c", "Ctrl-C abandons the line");
        u.typed_here("t", &"y".repeat(KEPT_CHARS + 10));
        assert_eq!(u.before("t").len(), KEPT_CHARS);
        u.forget("t");
        assert_eq!(u.before("t"), "");
    }

    #[test]
    fn the_lines_of_a_statement_still_open_are_kept_until_it_closes() {
        let u = Unentered::default();
        u.typed_here("t", "os.system(\r");
        assert_eq!(u.before("t"), "os.system(\r");
        u.typed_here("t", "\"rm");
        assert_eq!(u.before("t"), "os.system(\r\"rm");
        u.typed_here("t", " -rf ~\")\r");
        assert_eq!(u.before("t"), "", "the statement closed");
        u.typed_here("t", "rm -rf \\\r");
        assert_eq!(u.before("t"), "rm -rf \\\r");
        u.typed_here("t", "\u{3}");
        assert_eq!(u.before("t"), "", "Ctrl-C abandons it");
        u.typed_here("t", "for f in x:\r    print(f)\r");
        assert!(!u.before("t").is_empty(), "a block goes on");
        u.typed_here("t", "\r");
        assert_eq!(u.before("t"), "", "a blank line ends it");
        u.typed_here("t", "\u{1b}[A\r");
        assert_eq!(u.before("t"), "", "keys are not brackets");
        let padded = format!("os.system(\r{}\r", " ".repeat(KEPT_CHARS * 2));
        u.typed_here("t", &padded);
        assert!(
            u.before("t").starts_with("os.system("),
            "a long statement keeps its start"
        );
    }
}
