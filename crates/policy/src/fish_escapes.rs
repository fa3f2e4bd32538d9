//! fish decodes backslash escapes in unquoted words (`\x2d` is `-`, `\u0072` is `r`, `\055`
//! is `-`): in a fish terminal `rm \x2drf ~` is `rm -rf ~`. POSIX shells read the same
//! word as `x2drf`. A line with such escapes is judged a second time as fish reads it.

/// The line with fish's unquoted escapes decoded, each character single-quoted so that it
/// stays part of its word; `None` when there is none.
pub fn decoded(line: &str) -> Option<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut changed = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (Some(_), '\\') | (None, '\\') if i < chars.len() => {
                if quote.is_none()
                    && let Some((decoded, used)) = escape(&chars[i..])
                {
                    let quoted = if decoded == '\'' {
                        "\"'\"".to_string()
                    } else {
                        format!("'{decoded}'")
                    };
                    out.push_str(&quoted);
                    i += used;
                    changed = true;
                    continue;
                }
                out.push(c);
                out.push(chars[i]);
                i += 1;
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    changed.then_some(out)
}

/// One escape after a backslash: the character, and how many characters it took.
fn escape(s: &[char]) -> Option<(char, usize)> {
    let number = |radix: u32, most: usize, skip: usize| {
        let digits: String = s
            .iter()
            .skip(skip)
            .take(most)
            .take_while(|c| c.is_digit(radix))
            .collect();
        let n = digits.len();
        (n > 0)
            .then(|| {
                u32::from_str_radix(&digits, radix)
                    .ok()
                    .and_then(char::from_u32)
            })
            .flatten()
            .map(|c| (c, skip + n))
    };
    match *s.first()? {
        'x' | 'X' => number(16, 2, 1),
        'u' => number(16, 4, 1),
        'U' => number(16, 8, 1),
        '0'..='7' => number(8, 3, 0),
        'c' => s.get(1).map(|x| (char::from((*x as u32 & 0x1f) as u8), 2)),
        'e' => Some(('\u{1b}', 1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::decoded;

    #[test]
    fn unquoted_escapes_are_decoded_as_fish_decodes_them() {
        assert_eq!(decoded(r"rm \x2drf ~").as_deref(), Some("rm '-'rf ~"));
        assert_eq!(decoded(r"\x72m -rf ~").as_deref(), Some("'r'm -rf ~"));
        assert_eq!(
            decoded(r"rm \055rf \u007e").as_deref(),
            Some("rm '-'rf '~'")
        );
        assert_eq!(decoded(r"echo \x27").as_deref(), Some("echo \"'\""));
        // Quoted, or no escape fish decodes: nothing to read again.
        assert_eq!(decoded(r"printf '\x2d'"), None);
        assert_eq!(decoded(r#"echo "a\x2d""#), None);
        assert_eq!(decoded(r"echo a\ b \$x"), None);
    }
}
