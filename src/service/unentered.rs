//! What the agent has typed into each terminal since its last line end.
//!
//! Raw input is judged by the lines it enters, but a line can be typed over several calls:
//! `rm -rf` in one, ` /` and Enter in the next, each harmless alone. And a command line is
//! pasted after whatever the agent left unentered at the prompt. So the agent's unentered
//! text is kept per terminal and judged again with what follows it. A person's own typing on
//! the page is theirs and is not kept; a line they enter leaves this text stale, which can
//! only make a later verdict stricter.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::locks::lock;

/// How much unentered text is kept per terminal: the kernel's line discipline holds no
/// longer a line, and a line editor's line is judged by its tail alike.
const KEPT_CHARS: usize = 4096;

#[derive(Default)]
pub struct Unentered {
    tails: Mutex<HashMap<String, String>>,
}

impl Unentered {
    /// What the agent left unentered in terminal `id`.
    pub fn before(&self, id: &str) -> String {
        lock(&self.tails).get(id).cloned().unwrap_or_default()
    }

    /// `text` was typed into terminal `id` after what was left there.
    pub fn typed(&self, id: &str, text: &str) {
        let mut tails = lock(&self.tails);
        let mut tail = tails.remove(id).unwrap_or_default();
        // A line end enters the line; Ctrl-C abandons it (the line discipline flushes it, a
        // line editor starts afresh).
        match text.rfind(['\r', '\n', '\u{3}']) {
            Some(end) => tail = text[end + 1..].to_string(),
            None => tail.push_str(text),
        }
        let extra = tail.chars().count().saturating_sub(KEPT_CHARS);
        if extra > 0 {
            tail = tail.chars().skip(extra).collect();
        }
        if !tail.is_empty() {
            tails.insert(id.to_string(), tail);
        }
    }

    /// Terminal `id` is gone.
    pub fn forget(&self, id: &str) {
        lock(&self.tails).remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_follows_the_last_line_end_is_kept() {
        let u = Unentered::default();
        u.typed("t", "rm -rf");
        u.typed("t", " /x");
        assert_eq!(u.before("t"), "rm -rf /x");
        u.typed("t", "\rls\r");
        assert_eq!(u.before("t"), "");
        u.typed("t", "a\nb");
        assert_eq!(u.before("t"), "b");
        u.typed("t", "\u{1b}[H\u{3}c");
        assert_eq!(u.before("t"), "c", "Ctrl-C abandons the line");
        u.typed("t", &"y".repeat(KEPT_CHARS + 10));
        assert_eq!(u.before("t").len(), KEPT_CHARS);
        u.forget("t");
        assert_eq!(u.before("t"), "");
    }
}
