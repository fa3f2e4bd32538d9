//! What may be typed at a shell's prompt as a command line: text, not keys.
//!
//! At a prompt a control character is an editing key: Ctrl-U or DEL erases what was typed
//! before it (in the kernel's line discipline and in a line editor alike), an escape starts
//! a key sequence, Ctrl-C abandons the line. A command line holding one would make the shell
//! run another line than the one the policy judged and a person approved. The contract
//! refuses such a line in a request; the terminal core refuses it again for lines that reach
//! it by another route (the host's bridge).

/// The first control character in `text` that is not a tab or a line end, with its position
/// in characters.
pub fn control_key(text: &str) -> Option<(usize, char)> {
    text.chars()
        .enumerate()
        .find(|(_, c)| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
}

/// Why `text` cannot be typed as a command line, for a refusal naming `what` it is.
pub fn refusal(what: &str, text: &str) -> Option<String> {
    let (at, c) = control_key(text)?;
    Some(format!(
        "{what} has the control character U+{:04X} at character {at}: a command line is typed \
         at the shell's prompt, where a control character is an editing key rather than text, \
         so nothing was typed; send keys with execution.keys (e.g. [\"ctrl-c\"]) or raw input \
         with execution.input",
        c as u32
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tabs_and_line_ends_pass_among_controls() {
        assert_eq!(control_key("printf 'a\tb'\r\necho ünï ✓"), None);
        assert_eq!(control_key("echo x\u{15}rm"), Some((6, '\u{15}')));
        assert_eq!(control_key("a\u{7f}"), Some((1, '\u{7f}')));
        assert_eq!(control_key("\u{1b}[201~"), Some((0, '\u{1b}')));
        assert_eq!(control_key("c\u{9b}"), Some((1, '\u{9b}')));
        assert!(refusal("execution.command", "a\u{3}").is_some_and(|m| m.contains("U+0003")));
    }
}
