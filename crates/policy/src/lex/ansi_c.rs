//! bash's and zsh's ANSI-C quoting, `$'…'`, decoded as the shell decodes it.
//!
//! Read as a `$` and a single-quoted string, `rm $'\x2drf' ~` was `rm` of a file named
//! `$\x2drf` and of `~`: allowed. The shell hands `rm` the word `-rf`.

/// The text of a `$'…'` whose body starts at `s[i]` (just after its opening quote), and the
/// index after its closing quote; `None` when it is not closed. As in bash, a NUL ends the
/// text (`$'a\0b'` is `a`).
pub(super) fn read(s: &[char], mut i: usize) -> Option<(String, usize)> {
    let mut out = String::new();
    while let Some(&c) = s.get(i) {
        i += 1;
        match c {
            '\'' => {
                if let Some(nul) = out.find('\0') {
                    out.truncate(nul);
                }
                return Some((out, i));
            }
            '\\' => {
                let e = *s.get(i)?;
                i += 1;
                match e {
                    'a' => out.push('\x07'),
                    'b' => out.push('\x08'),
                    'e' | 'E' => out.push('\x1b'),
                    'f' => out.push('\x0c'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'v' => out.push('\x0b'),
                    '\\' | '\'' | '"' | '?' => out.push(e),
                    '0'..='7' => {
                        let more = digits(s, i, 8, 2);
                        push_code(&mut out, &s[i - 1..i + more], 8);
                        i += more;
                    }
                    'x' | 'u' | 'U' => {
                        let most = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let n = digits(s, i, 16, most);
                        if n == 0 {
                            out.push('\\');
                            out.push(e);
                        } else {
                            push_code(&mut out, &s[i..i + n], 16);
                        }
                        i += n;
                    }
                    // A control character: `\cA` is 0x01.
                    'c' => {
                        let x = *s.get(i)?;
                        i += 1;
                        out.push(char::from((x as u32 & 0x1f) as u8));
                    }
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            c => out.push(c),
        }
    }
    None
}

/// How many digits of `radix` (at most `most`) start at `s[i]`.
fn digits(s: &[char], i: usize, radix: u32, most: usize) -> usize {
    s.iter()
        .skip(i)
        .take(most)
        .take_while(|c| c.is_digit(radix))
        .count()
}

/// The character `digits` code for (a code that is no character is left out, as bash does
/// with an invalid one).
fn push_code(out: &mut String, digits: &[char], radix: u32) {
    let text: String = digits.iter().collect();
    if let Some(c) = u32::from_str_radix(&text, radix)
        .ok()
        .and_then(char::from_u32)
    {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(body: &str) -> Option<String> {
        let chars: Vec<char> = body.chars().collect();
        read(&chars, 0).map(|(t, _)| t)
    }

    #[test]
    fn escapes_are_decoded_as_bash_decodes_them() {
        assert_eq!(decode(r"\x2drf'").as_deref(), Some("-rf"));
        assert_eq!(decode(r"\055rf'").as_deref(), Some("-rf"));
        assert_eq!(decode(r"\u002drf'").as_deref(), Some("-rf"));
        assert_eq!(decode(r"\U0000007e'").as_deref(), Some("~"));
        assert_eq!(decode(r"a\'b\\c\n'").as_deref(), Some("a'b\\c\n"));
        assert_eq!(decode(r"\cA\e\q'").as_deref(), Some("\x01\x1b\\q"));
        assert_eq!(decode(r"\xzz'").as_deref(), Some("\\xzz"));
        assert_eq!(decode(r"r\0m'").as_deref(), Some("r"));
        assert_eq!(decode(r"open"), None);
        assert_eq!(decode(r"open\'"), None);
    }
}
