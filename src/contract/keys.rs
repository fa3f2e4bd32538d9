//! Named keys for `execution.keys`: what a terminal receives when the key is pressed
//! (xterm sequences in normal cursor mode, as bash, zsh, python and vim expect).

/// Key names and the bytes they send.
const NAMED: [(&str, &str); 14] = [
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
        assert_eq!(encode("ctrl-1"), None);
        assert_eq!(encode("hyper"), None);
    }
}
