//! Text shown to a person who decides on it (an approval on the host's page, in the MCP
//! client's elicitation), with every character that a display hides, reorders or acts on
//! written out as `\u{…}`.
//!
//! Why: the policy judges, and the shell runs, the characters as they are; a person reads
//! what their screen draws of them. Bidirectional controls reorder what follows them (the
//! "Trojan Source" trick: `echo done`, U+202E, `~ fr- mr` is drawn `echo done rm -rf ~`, and
//! the same trick draws a harmful line as a harmless one), zero-width characters hide a
//! word's difference from another, and a carriage return or an escape sequence in a value
//! redraws the line of a client that shows the question in a terminal.
//! Written out, what the person approves is what runs.

/// Characters that draw as nothing or change the order of what follows: the bidirectional
/// embeddings, overrides and isolates, the zero-width and invisible format characters, the
/// soft hyphen, the Mongolian vowel separator, the Hangul fillers, and the tag characters.
const HIDDEN: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{115F}', '\u{1160}'),
    ('\u{180E}', '\u{180E}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{2064}'),
    ('\u{2066}', '\u{206F}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{FE00}', '\u{FE0F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFA0}', '\u{FFA0}'),
    ('\u{FFF9}', '\u{FFFB}'),
    ('\u{E0000}', '\u{E007F}'),
];

fn hidden(c: char) -> bool {
    (c.is_control() && !matches!(c, '\n' | '\t'))
        || HIDDEN.iter().any(|&(a, b)| (a..=b).contains(&c))
}

/// `text` with every hidden or acting character written out as `\u{hex}`, and a backslash
/// before a `\u{` already in it, so that text reading like the notation is told apart from
/// a character written out.
pub fn for_a_person(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else if rest.starts_with("\\u{") {
            out.push('\\');
            out.push(c);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_screen_hides_or_reorders_is_written_out() {
        assert_eq!(for_a_person("echo ünï ✓\n\tok"), "echo ünï ✓\n\tok");
        assert_eq!(
            for_a_person("echo done \u{202e} ~ fr- mr"),
            "echo done \\u{202e} ~ fr- mr"
        );
        assert_eq!(for_a_person("r\u{200b}m"), "r\\u{200b}m");
        assert_eq!(for_a_person("a\rb\u{1b}[2K"), "a\\u{d}b\\u{1b}[2K");
        assert_eq!(for_a_person("x\u{2066}y\u{e0041}"), "x\\u{2066}y\\u{e0041}");
        // Text that already reads like the notation is told apart from it.
        assert_eq!(for_a_person("echo \\u{202e}"), "echo \\\\u{202e}");
    }
}
