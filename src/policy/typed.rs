//! What raw keystrokes would enter at a line editor or at the kernel's line discipline.
//!
//! Raw input is judged by the lines it enters, but control keys edit a line before Enter:
//! Ctrl-U and Ctrl-C drop what came before them, DEL and Ctrl-H erase a character, Ctrl-W a
//! word. Judged with those keys merely removed, `echo x` + Ctrl-U + a blocked command
//! passed as an `echo`, and the shell ran the blocked command. So input is judged in each
//! reading a program may give it — the erasing keys applied, each run of text between
//! control keys on a line of its own, the keys removed — and the most severe verdict stands.
//! Keys that move the cursor, recall history or yank killed text (Ctrl-A, Ctrl-R, Ctrl-Y,
//! the arrows, Alt-b) can turn the typed text into any line at all: input that uses one and
//! then enters a line is flagged as input whose line cannot be judged.

/// Line discipline and line editor keys that erase: a character, a word, the line.
const ERASE_CHAR: [char; 2] = ['\u{7f}', '\u{8}'];
const ERASE_WORD: char = '\u{17}';
/// Ctrl-U kills the line; Ctrl-C abandons it (the line discipline flushes it with SIGINT, a
/// line editor starts a fresh one).
const ERASE_LINE: [char; 2] = ['\u{15}', '\u{3}'];
/// Emacs-style editing keys that move within the line, recall history or reinsert text:
/// Ctrl-A, B, F, N, O, P, R, S, T, Y and Ctrl-].
const REARRANGING_KEYS: [char; 11] = [
    '\u{1}', '\u{2}', '\u{6}', '\u{e}', '\u{f}', '\u{10}', '\u{12}', '\u{13}', '\u{14}', '\u{19}',
    '\u{1d}',
];
/// After ESC: Alt-b, f, t, y, `.`, `_`, `<`, `>`, p, n, r (word moves, transposes, yanks,
/// history).
const REARRANGING_ALT: &str = "bfty._<>pnr";
/// After ESC [ or ESC O: the arrows, Home and End.
const CURSOR_FINALS: &str = "ABCDHF";

/// The readings of `text` to judge, each a text of lines (without duplicates).
pub fn readings(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(3);
    for r in [erased(text), split(text), removed(text)] {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// Whether a key that rearranges the line comes before a line end.
pub fn rearranges(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let Some(last_enter) = chars.iter().rposition(|c| matches!(c, '\r' | '\n')) else {
        return false;
    };
    (0..last_enter).any(|i| {
        let c = chars[i];
        if REARRANGING_KEYS.contains(&c) {
            return true;
        }
        if c != '\u{1b}' {
            return false;
        }
        match chars.get(i + 1) {
            Some('[' | 'O') => chars.get(i + 2).is_some_and(|f| CURSOR_FINALS.contains(*f)),
            Some(a) => REARRANGING_ALT.contains(*a),
            None => false,
        }
    })
}

/// The line discipline's (and a line editor's) reading: the erasing keys applied, the
/// other control keys dropped.
fn erased(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for c in text.chars() {
        match c {
            '\r' | '\n' => {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            c if ERASE_CHAR.contains(&c) => {
                line.pop();
            }
            c if ERASE_LINE.contains(&c) => line.clear(),
            ERASE_WORD => {
                let kept = line
                    .trim_end()
                    .trim_end_matches(|c: char| !c.is_whitespace());
                line.truncate(kept.len());
            }
            '\t' => line.push(c),
            c if c.is_control() => {}
            c => line.push(c),
        }
    }
    out.push_str(&line);
    out
}

/// Each run of text between control keys on a line of its own.
fn split(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() && c != '\t' { '\n' } else { c })
        .collect()
}

/// The keys removed, as the text reads without them.
fn removed(text: &str) -> String {
    text.chars()
        .map(|c| if c == '\r' { '\n' } else { c })
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erasing_keys_are_applied_as_the_line_discipline_applies_them() {
        assert_eq!(erased("echo x\u{15}rm v\r"), "rm v\n");
        assert_eq!(erased("rmx\u{7f} v\r"), "rm v\n");
        assert_eq!(erased("echo a b\u{17}\u{17}rm v\r"), "echo rm v\n");
        assert_eq!(erased("ls\u{3}rm v\r"), "rm v\n");
        assert_eq!(erased("1+1\r"), "1+1\n");
    }

    #[test]
    fn every_reading_is_kept_once() {
        assert_eq!(readings("1+1\r"), vec!["1+1\n".to_string()]);
        let r = readings("echo x\u{15}rm v\r");
        assert!(r.contains(&"rm v\n".to_string()), "{r:?}");
        assert!(r.contains(&"echo xrm v\n".to_string()), "{r:?}");
    }

    #[test]
    fn keys_that_rearrange_a_line_before_enter_are_seen() {
        assert!(rearranges("v\u{1}rm \r"));
        assert!(rearranges("v\u{15}rm \u{19}\r"));
        assert!(rearranges("\u{1b}[A\r"));
        assert!(rearranges("\u{12}rm\r"));
        assert!(rearranges("x\u{1b}b\r"));
        // Not before a line end, or not rearranging: vim's Escape, a lone arrow, Ctrl-C.
        assert!(!rearranges("\u{1b}:wq\r"));
        assert!(!rearranges("\u{1b}[A"));
        assert!(!rearranges("\u{3}"));
        assert!(!rearranges("1+1\r"));
    }
}
