//! What `echo`, `printf` and `cat`/`tee` of a here-document write, when the line shows it:
//! the text a shell or an interpreter reading it then runs.
//!
//! Escapes are decoded as the programs decode them. Read as typed, `printf '\x72\x6d -rf ~'
//! | sh` was the text `\x72\x6d -rf ~`, an unknown program: allowed, and the shell ran
//! `rm -rf ~`. A printf conversion it does not work out (`%d`, `%.2s`) is a computed word
//! in the text, so what the rest shows is still judged; a computed argument makes no text
//! at all, so the reader of it is warned as one reading text it cannot see.

use crate::lex::ansi_c::escape;
use crate::lex::{COMPUTED, Simple};
use crate::wrappers::basename;

/// What a pipeline stage writes when the line shows it: `echo`/`printf` of literal words,
/// `cat`/`tee` of a here-document or here-string.
pub fn literal_output(c: &Simple) -> Option<String> {
    let name = basename(c.argv.first()?);
    let args = &c.argv[1..];
    if args.iter().any(|a| a.contains(COMPUTED)) {
        return None;
    }
    match &*name {
        // A heredoc or here-string passed through (`cat > x.sh <<'EOF'`, `tee x.sh <<< …`).
        "cat" | "tee" if !c.input.is_empty() && (name == "tee" || args.is_empty()) => {
            Some(c.input.clone())
        }
        "echo" => {
            let mut words = args.iter().map(String::as_str).peekable();
            let mut newline = true;
            while let Some(flags) = words.peek().and_then(|w| w.strip_prefix('-')) {
                if flags.is_empty() || !flags.chars().all(|f| matches!(f, 'n' | 'e' | 'E')) {
                    break;
                }
                newline &= !flags.contains('n');
                words.next();
            }
            // bash's echo decodes escapes with -e, dash's and zsh's always: the decoded text
            // is the one that may hide a command, so it is the one judged.
            let text = words.collect::<Vec<_>>().join(" ");
            let (mut out, stopped) = decode(&text, true);
            if newline && !stopped {
                out.push('\n');
            }
            Some(out)
        }
        "printf" => {
            let (format, words) = args.split_first()?;
            printf_output(format, words)
        }
        _ => None,
    }
}

/// What `printf FORMAT WORD…` writes: its format's escapes decoded, `%s` a word as it is,
/// `%b` a word with its escapes decoded, `%c` its first character, `%%` a `%`; the format
/// repeats for the words left, as printf does. Any other conversion (`%d`, `%.2s`, a width)
/// is text the line does not show: a computed word (`lex::COMPUTED`) in its place, so that
/// what the rest shows is still judged (`printf 'rm -rf ~ %d' 1 | sh` is `rm -rf ~ …`) and a
/// program named by it is a computed one (`printf '%.2s -rf ~' rmx | sh`). `None` for a
/// format cut off after its `%`.
pub fn printf_output(format: &str, words: &[String]) -> Option<String> {
    let (format, _) = decode(format, false);
    let mut words = words.iter();
    let mut out = String::new();
    loop {
        let mut converted = false;
        let mut chars = format.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some('s') => {
                    converted = true;
                    out.push_str(words.next().map_or("", String::as_str));
                }
                Some('b') => {
                    converted = true;
                    let (text, stopped) = decode(words.next().map_or("", String::as_str), true);
                    out.push_str(&text);
                    if stopped {
                        return Some(out);
                    }
                }
                Some('c') => {
                    converted = true;
                    out.extend(words.next().and_then(|w| w.chars().next()));
                }
                Some(mut spec) => {
                    // Flags, a width and a precision (`*` takes a word each), then the
                    // conversion's letter.
                    converted = true;
                    while !spec.is_ascii_alphabetic() {
                        if spec == '*' {
                            words.next();
                        }
                        spec = chars.next()?;
                    }
                    words.next();
                    out.push_str(COMPUTED);
                }
                None => return None,
            }
        }
        if !converted || words.len() == 0 {
            return Some(out);
        }
    }
}

/// What the characters after a backslash decode to.
pub(crate) enum Escaped {
    /// A character, and how many characters after the backslash it took.
    Char(char, usize),
    /// Output stops here (printf's and echo's `\c`).
    Stop,
    /// No escape: the backslash stays as written.
    Kept,
}

/// `text` with each backslash escape decoded by `escape`, and whether one stopped the output.
pub(crate) fn decode_escapes(text: &str, escape: impl Fn(&[char]) -> Escaped) -> (String, bool) {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        match escape(&chars[i..]) {
            Escaped::Char(decoded, used) => {
                out.push(decoded);
                i += used;
            }
            Escaped::Stop => return (out, true),
            Escaped::Kept => out.push('\\'),
        }
    }
    (out, false)
}

/// An octal number of up to `most` digits at `s[skip..]`: the character, and the characters
/// taken (with `skip`). No digit is NUL.
pub(crate) fn octal(s: &[char], skip: usize, most: usize) -> Escaped {
    let digits: String = s
        .iter()
        .skip(skip)
        .take(most)
        .take_while(|d| d.is_digit(8))
        .collect();
    let code = u32::from_str_radix(&digits, 8).unwrap_or(0);
    match char::from_u32(code) {
        Some(c) => Escaped::Char(c, skip + digits.len()),
        None => Escaped::Kept,
    }
}

/// `text` with its backslash escapes decoded, and whether a `\c` stopped the output there.
/// `echo`: octal is `\0NNN` (echo's and printf's `%b`); else `\NNN` (printf's format).
fn decode(text: &str, echo: bool) -> (String, bool) {
    decode_escapes(text, |rest| match rest.first() {
        Some('c') => Escaped::Stop,
        // echo's octal: a zero, then up to three digits.
        Some('0') if echo => octal(rest, 1, 3),
        Some('1'..='7') if echo => Escaped::Kept,
        _ => match escape(rest) {
            Some((decoded, used)) => Escaped::Char(decoded, used),
            // No escape the program knows (`\q`): kept as typed.
            None => Escaped::Kept,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn printf_writes_as_printf_does() {
        assert_eq!(
            printf_output("%s\\0", &w(&["a", "b"])).as_deref(),
            Some("a\0b\0")
        );
        assert_eq!(
            printf_output("%s %s\\n", &w(&["rm", "-rf", "x"])).as_deref(),
            Some("rm -rf\nx \n")
        );
        assert_eq!(printf_output("100%%\\n", &[]).as_deref(), Some("100%\n"));
        assert_eq!(printf_output("%d", &w(&["1"])).as_deref(), Some(COMPUTED));
        assert_eq!(
            printf_output("%c%c -rf ~", &w(&["r", "m"])).as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            printf_output("rm -rf ~ %5.2f\\n", &w(&["1"])),
            Some(format!("rm -rf ~ {COMPUTED}\n"))
        );
        assert_eq!(
            printf_output("%*.*s -rf ~", &w(&["2", "2", "rmx"])),
            Some(format!("{COMPUTED} -rf ~"))
        );
        assert_eq!(printf_output("100%", &[]), None);
        assert_eq!(
            printf_output("\\x72\\x6d -rf ~", &[]).as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            printf_output("\\162\\155 -rf ~", &[]).as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            printf_output("%b", &w(&["\\x72m -rf ~"])).as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            printf_output("%b", &w(&["\\0162m -rf ~\\c", "x"])).as_deref(),
            Some("rm -rf ~")
        );
    }

    #[test]
    fn echo_is_read_with_its_escapes_decoded() {
        let out = |line: &str| {
            let c = crate::lex::parse(line).commands;
            literal_output(&c[0])
        };
        assert_eq!(out("echo 'r\\x6d -rf ~'").as_deref(), Some("rm -rf ~\n"));
        assert_eq!(out("echo -ne '\\0162m -rf ~'").as_deref(), Some("rm -rf ~"));
        assert_eq!(out("echo -e 'a\\nb'").as_deref(), Some("a\nb\n"));
        assert_eq!(out("echo -n x").as_deref(), Some("x"));
        assert_eq!(out("echo -x y").as_deref(), Some("-x y\n"));
        assert_eq!(out("echo 'ab\\cd'").as_deref(), Some("ab"));
    }
}
