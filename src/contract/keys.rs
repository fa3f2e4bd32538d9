//! Named keys for `execution.keys`: what a terminal receives when the key is pressed
//! (xterm sequences in normal cursor mode, as bash, zsh, python and vim expect).

/// Key names and the bytes they send.
const NAMED: [(&str, &str); 28] = [
    ("enter", "\r"),
    ("tab", "\t"),
    ("escape", "\x1b"),
    ("esc", "\x1b"),
    ("backspace", "\x7f"),
    ("up", "\x1b[A"),
    ("down", "\x1b[B"),
    ("right", "\x1b[C"),
    ("left", "\x1b[D"),
    ("home", "\x1b[H"),
    ("end", "\x1b[F"),
    ("pageup", "\x1b[5~"),
    ("pagedown", "\x1b[6~"),
    ("delete", "\x1b[3~"),
    ("insert", "\x1b[2~"),
    ("shift-tab", "\x1b[Z"),
    ("f1", "\x1bOP"),
    ("f2", "\x1bOQ"),
    ("f3", "\x1bOR"),
    ("f4", "\x1bOS"),
    ("f5", "\x1b[15~"),
    ("f6", "\x1b[17~"),
    ("f7", "\x1b[18~"),
    ("f8", "\x1b[19~"),
    ("f9", "\x1b[20~"),
    ("f10", "\x1b[21~"),
    ("f11", "\x1b[23~"),
    ("f12", "\x1b[24~"),
];

/// The bytes of one named key, or `None` for an unknown name. `ctrl-a` .. `ctrl-z` map to
/// the control characters 0x01 .. 0x1a; `space` is a space.
pub fn encode(name: &str) -> Option<String> {
    let lower = name.trim().to_ascii_lowercase();
    if let Some((_, seq)) = NAMED.iter().find(|(n, _)| *n == lower) {
        return Some((*seq).to_string());
    }
    if lower == "space" {
        return Some(" ".into());
    }
    let letter = lower
        .strip_prefix("ctrl-")
        .or_else(|| lower.strip_prefix("ctrl+"))
        .or_else(|| lower.strip_prefix("c-"))?;
    let mut chars = letter.chars();
    match (chars.next(), chars.next()) {
        (Some(c @ 'a'..='z'), None) => Some(char::from(c as u8 - b'a' + 1).to_string()),
        (Some('['), None) => Some("\x1b".into()),
        (Some('\\'), None) => Some("\x1c".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::encode;

    #[test]
    fn keys_encode() {
        assert_eq!(encode("ctrl-c").as_deref(), Some("\x03"));
        assert_eq!(encode("Ctrl-D").as_deref(), Some("\x04"));
        assert_eq!(encode("enter").as_deref(), Some("\r"));
        assert_eq!(encode("up").as_deref(), Some("\x1b[A"));
        assert_eq!(encode("F10").as_deref(), Some("\x1b[21~"));
        assert_eq!(encode("f1").as_deref(), Some("\x1bOP"));
        assert_eq!(encode("shift-tab").as_deref(), Some("\x1b[Z"));
        assert_eq!(encode("ctrl-1"), None);
        assert_eq!(encode("hyper"), None);
    }
}
