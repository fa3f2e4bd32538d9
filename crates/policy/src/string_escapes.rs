//! A string literal's text as the language builds it: escapes decoded (`"\x72m"` is `rm`
//! in Python, JavaScript, Ruby, Perl and PHP alike), a prefix glued to the quote read
//! (`b"…"`, `r"…"`, `rb"…"`), adjacent literals joined (`"rm -rf" " ~"` is one string in
//! Python and Ruby). Read any other way, `os.system("\x72m -rf ~")` named a program `x72m`
//! and ran `rm -rf ~` unasked.
//!
//! The language at a REPL's prompt is not known, so each escape takes the reading that
//! shows the most: decoded as a double-quoted string is (a single-quoted Perl or Ruby string
//! keeps `\x72` as it is, but a line that reads as `rm` in one language is judged as `rm`).
//! An escape whose character cannot be worked out here (`\N{NAME}`, Perl's `\c?`) puts
//! [`crate::lex::COMPUTED`] in its place: what it spells is not on the line.

/// Characters that may prefix a string literal, glued to its quote (`f`, `b`, `r`, `u` and
/// their pairs, either case).
const PREFIX: &str = "fFrRbBuU";

/// The prefix glued before the quote at `at` (`rb` of `rb"…"`), if the letters there are
/// one: at most two of [`PREFIX`], not the end of a longer name.
pub(crate) fn prefix_before(code: &[char], at: usize) -> Option<String> {
    let mut start = at;
    while start > 0 && at - start < 3 && code[start - 1].is_alphanumeric() {
        start -= 1;
    }
    let glued = &code[start..at];
    let before_is_name = start > 0 && (code[start - 1].is_alphanumeric() || code[start - 1] == '_');
    (!glued.is_empty()
        && glued.len() <= 2
        && !before_is_name
        && glued.iter().all(|c| PREFIX.contains(*c)))
    .then(|| glued.iter().collect::<String>().to_ascii_lowercase())
}

/// The text of the literal whose opening quote is at `at`, and the index after its closing
/// quote. `raw` (an `r` prefix) keeps every backslash, as Python does.
pub(crate) fn literal_text(code: &[char], at: usize, raw: bool) -> (String, usize) {
    let quote = code[at];
    // Python's triple quotes: the text runs to the next three.
    let triple = code.get(at + 1) == Some(&quote) && code.get(at + 2) == Some(&quote);
    let mut j = if triple { at + 3 } else { at + 1 };
    let mut text = String::new();
    while j < code.len() {
        if code[j] == quote
            && (!triple || (code.get(j + 1) == Some(&quote) && code.get(j + 2) == Some(&quote)))
        {
            return (text, j + if triple { 3 } else { 1 });
        }
        if code[j] == '\\' && j + 1 < code.len() {
            if raw {
                text.push('\\');
                text.push(code[j + 1]);
                j += 2;
            } else {
                j = escape(code, j, &mut text);
            }
            continue;
        }
        text.push(code[j]);
        j += 1;
    }
    (text, code.len())
}

/// The escape whose backslash is at `at`, decoded onto `out`; the index after it.
fn escape(code: &[char], at: usize, out: &mut String) -> usize {
    let c = code[at + 1];
    let mut j = at + 2;
    let simple = match c {
        'n' => Some('\n'),
        't' => Some('\t'),
        'r' => Some('\r'),
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'v' => Some('\u{b}'),
        'e' => Some('\u{1b}'),
        // A line continued inside the string: nothing.
        '\n' => return j,
        _ => None,
    };
    if let Some(s) = simple {
        out.push(s);
        return j;
    }
    let decoded = match c {
        'x' | 'u' | 'U' if code.get(j) == Some(&'{') => {
            // `\x{72}` (Perl), `\u{72}` (JavaScript, Ruby, PHP).
            let end = code[j..].iter().position(|&d| d == '}').map(|p| j + p);
            end.and_then(|e| {
                let v = hex(&code[j + 1..e]);
                j = e + 1;
                v
            })
        }
        'x' => digits(code, &mut j, 2, 16),
        'u' => digits(code, &mut j, 4, 16),
        'U' => digits(code, &mut j, 8, 16),
        '0'..='7' => {
            j = at + 1;
            digits(code, &mut j, 3, 8)
        }
        // Perl's control character: `\cA` is Ctrl-A.
        'c' => code.get(j).filter(|n| n.is_ascii()).map(|n| {
            j += 1;
            char::from(n.to_ascii_uppercase() as u8 ^ 0x40)
        }),
        'N' => {
            out.push_str(crate::lex::COMPUTED);
            return skip_braced(code, j);
        }
        // Any other character stands for itself (JavaScript's reading; Python keeps the
        // backslash, which a shell reading the text then drops).
        other => Some(other),
    };
    match decoded {
        Some(ch) => out.push(ch),
        None => out.push_str(crate::lex::COMPUTED),
    }
    j
}

/// Up to `max` digits of `radix` from `*j`, as a character; `*j` moved past them.
fn digits(code: &[char], j: &mut usize, max: usize, radix: u32) -> Option<char> {
    let start = *j;
    while *j < code.len() && *j - start < max && code[*j].is_digit(radix) {
        *j += 1;
    }
    if *j == start {
        return None;
    }
    let text: String = code[start..*j].iter().collect();
    u32::from_str_radix(&text, radix)
        .ok()
        .and_then(char::from_u32)
}

fn hex(digits: &[char]) -> Option<char> {
    let text: String = digits.iter().collect();
    u32::from_str_radix(text.trim(), 16)
        .ok()
        .and_then(char::from_u32)
}

/// Past a `{…}` right at `j`, if there is one (`\N{LATIN SMALL LETTER R}`).
fn skip_braced(code: &[char], j: usize) -> usize {
    if code.get(j) == Some(&'{') {
        code[j..]
            .iter()
            .position(|&d| d == '}')
            .map_or(code.len(), |p| j + p + 1)
    } else {
        j
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(code: &str) -> String {
        let chars: Vec<char> = code.chars().collect();
        let raw = prefix_before(&chars, 0).is_some_and(|p| p.contains('r'));
        literal_text(&chars, 0, raw).0
    }

    #[test]
    fn escapes_spell_what_the_language_builds() {
        assert_eq!(text(r#""\x72m -rf ~""#), "rm -rf ~");
        assert_eq!(text(r#""\162m""#), "rm");
        assert_eq!(text(r#""\u0072m""#), "rm");
        assert_eq!(text(r#""\u{72}m""#), "rm");
        assert_eq!(text(r#""\x{72}m""#), "rm");
        assert_eq!(text(r#""\U00000072m""#), "rm");
        assert_eq!(text(r#""a\"b""#), "a\"b");
        assert_eq!(text(r#""a\nb""#), "a\nb");
        assert_eq!(text("'''rm -rf ~'''"), "rm -rf ~");
        assert!(text(r#""\N{LATIN SMALL LETTER R}m""#).contains(crate::lex::COMPUTED));
        assert!(text(r#""\xZZ""#).contains(crate::lex::COMPUTED));
    }

    #[test]
    fn prefixes_are_read_and_names_are_not() {
        let code: Vec<char> = r#"os.system(rb"x")"#.chars().collect();
        assert_eq!(prefix_before(&code, 12).as_deref(), Some("rb"));
        let code: Vec<char> = r#"sub("x")"#.chars().collect();
        assert_eq!(prefix_before(&code, 4), None);
        let code: Vec<char> = r#"rub"x""#.chars().collect();
        assert_eq!(prefix_before(&code, 3), None);
        let code: Vec<char> = r#"x(fb"x")"#.chars().collect();
        assert_eq!(prefix_before(&code, 4).as_deref(), Some("fb"));
    }
}
