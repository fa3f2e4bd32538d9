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

/// One escape fish decodes in an unquoted word (`\xHH`, `\XHH`, `\uHHHH`, `\UHHHHHHHH`,
/// `\ooo`, `\cX`, `\e`), read as bash's `$'…'` reads it (`lex::ansi_c`).
fn escape(s: &[char]) -> Option<(char, usize)> {
    match *s.first()? {
        'X' => {
            let mut as_x: Vec<char> = s.iter().take(3).copied().collect();
            as_x[0] = 'x';
            crate::lex::ansi_c::escape(&as_x)
        }
        'x' | 'u' | 'U' | '0'..='7' | 'c' | 'e' => crate::lex::ansi_c::escape(s),
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
