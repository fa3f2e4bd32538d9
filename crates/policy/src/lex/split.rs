//! A simple command's text split into words as the shell splits them (`shell_words`'s
//! rules), each word marked with whether any of it was quoted or escaped.
//!
//! The mark is what tells syntax from data: `>`, `2>` and `()` are a redirection and a
//! function header only as the shell's own words. Quoted (`rm '>' -rf ~`, `rm '()' -rf ~`)
//! they are arguments like any other, and the program reads the words after them: read as
//! syntax, they hid `-rf` (a redirection's target) or the program itself (a function's name).

/// One word, unquoted, and whether quoting or a backslash made any of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word {
    pub text: String,
    pub quoted: bool,
}

/// Where the splitter is, as in `shell_words::split`.
#[derive(Clone, Copy)]
enum State {
    Delimiter,
    Backslash,
    Unquoted,
    UnquotedBackslash,
    SingleQuoted,
    DoubleQuoted,
    DoubleQuotedBackslash,
    Comment,
}

/// Split `s` into marked words; `None` for an unterminated quote (as `shell_words` errs).
pub(super) fn split(s: &str) -> Option<Vec<Word>> {
    use State::*;
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut state = Delimiter;
    let mut push = |word: &mut String, quoted: &mut bool| {
        words.push(Word {
            text: std::mem::take(word),
            quoted: std::mem::take(quoted),
        });
    };
    let mut chars = s.chars();
    loop {
        let c = chars.next();
        state = match (state, c) {
            (Delimiter | Comment, None) => break,
            (Delimiter, Some('\'')) | (Unquoted, Some('\'')) => {
                quoted = true;
                SingleQuoted
            }
            (Delimiter, Some('"')) | (Unquoted, Some('"')) => {
                quoted = true;
                DoubleQuoted
            }
            (Delimiter, Some('\\')) => {
                quoted = true;
                Backslash
            }
            (Delimiter, Some(' ' | '\t' | '\n')) => Delimiter,
            (Delimiter, Some('#')) => Comment,
            (Unquoted, Some('\\')) => {
                quoted = true;
                UnquotedBackslash
            }
            (Unquoted, Some(' ' | '\t' | '\n')) => {
                push(&mut word, &mut quoted);
                Delimiter
            }
            (Delimiter | Unquoted, Some(c)) => {
                word.push(c);
                Unquoted
            }
            (Backslash | UnquotedBackslash | Unquoted, None) => {
                if !matches!(state, Unquoted) {
                    word.push('\\');
                }
                push(&mut word, &mut quoted);
                break;
            }
            (Backslash, Some('\n')) => Delimiter,
            (UnquotedBackslash, Some('\n')) => Unquoted,
            (Backslash | UnquotedBackslash, Some(c)) => {
                word.push(c);
                Unquoted
            }
            (SingleQuoted | DoubleQuoted | DoubleQuotedBackslash, None) => return None,
            (SingleQuoted, Some('\'')) => Unquoted,
            (SingleQuoted, Some(c)) => {
                word.push(c);
                SingleQuoted
            }
            (DoubleQuoted, Some('"')) => Unquoted,
            (DoubleQuoted, Some('\\')) => DoubleQuotedBackslash,
            (DoubleQuoted, Some(c)) => {
                word.push(c);
                DoubleQuoted
            }
            (DoubleQuotedBackslash, Some('\n')) => DoubleQuoted,
            (DoubleQuotedBackslash, Some(c)) => {
                if !matches!(c, '$' | '`' | '"' | '\\') {
                    word.push('\\');
                }
                word.push(c);
                DoubleQuoted
            }
            (Comment, Some('\n')) => Delimiter,
            (Comment, Some(_)) => Comment,
        };
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words are `shell_words`'s, whatever the line.
    #[test]
    fn the_words_are_the_shells() {
        for line in [
            r#"rm '>' -rf ~"#,
            r#"a\ b "c \"d\" \$e \x" 'f''g' h\"#,
            "x # comment\ny",
            "a\\\nb \"c\\\nd\" \\\ne",
            "'' \"\" x''",
            "  lead  trail  ",
            "'open",
            "\"open",
        ] {
            let ours = split(line).map(|w| w.into_iter().map(|w| w.text).collect::<Vec<_>>());
            assert_eq!(ours, shell_words::split(line).ok(), "{line:?}");
        }
    }

    #[test]
    fn quoting_anywhere_in_a_word_marks_it() {
        let marks = |line: &str| -> Vec<bool> {
            split(line).unwrap().into_iter().map(|w| w.quoted).collect()
        };
        assert_eq!(marks(r#"rm '>' -rf ~"#), [false, true, false, false]);
        assert_eq!(
            marks(r#"f "()" \> 2\> a'b' c"#),
            [false, true, true, true, true, false]
        );
    }
}
