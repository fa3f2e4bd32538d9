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
            '\\' => match escape(&s[i..]) {
                Some((decoded, used)) => {
                    out.push(decoded);
                    i += used;
                }
                // Not an escape bash knows (`\q`, `\x` with no digit): kept as typed.
                None => {
                    out.push('\\');
                    out.push(*s.get(i)?);
                    i += 1;
                }
            },
            c => out.push(c),
        }
    }
    None
}

/// One escape after a backslash (`s` starts after it), as bash's `$'…'` and fish's unquoted
/// words read it: the character, and how many characters it took. `None` for a character
/// that is no escape, a number with no digit, or a code that is no character.
pub(crate) fn escape(s: &[char]) -> Option<(char, usize)> {
    let number = |radix: u32, most: usize, skip: usize| {
        let digits: String = s
            .iter()
            .skip(skip)
            .take(most)
            .take_while(|c| c.is_digit(radix))
            .collect();
        let code = u32::from_str_radix(&digits, radix).ok()?;
        char::from_u32(code).map(|c| (c, skip + digits.len()))
    };
    let simple = |c: char| Some((c, 1));
    match *s.first()? {
        'a' => simple('\x07'),
        'b' => simple('\x08'),
        'e' | 'E' => simple('\x1b'),
        'f' => simple('\x0c'),
        'n' => simple('\n'),
        'r' => simple('\r'),
        't' => simple('\t'),
        'v' => simple('\x0b'),
        c @ ('\\' | '\'' | '"' | '?') => simple(c),
        '0'..='7' => number(8, 3, 0),
        'x' => number(16, 2, 1),
        'u' => number(16, 4, 1),
        'U' => number(16, 8, 1),
        // A control character: `\cA` is 0x01.
        'c' => s.get(1).map(|x| (char::from((*x as u32 & 0x1f) as u8), 2)),
        _ => None,
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
