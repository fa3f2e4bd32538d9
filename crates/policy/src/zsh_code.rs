//! zsh's ways of running code from inside a word: a glob qualifier `e` (`ls *(e:'rm -rf ~':)`
//! runs its code for every file the glob matches) and the `(e)` flag of a parameter
//! expansion (`x='$(rm -rf ~)'; print ${(e)x}` expands the value again, substitutions and
//! all). Read as POSIX words they were an odd file name and a variable: allowed.

/// The code of each `e` glob qualifier outside quotes: `(e:CODE:)`, `(e'CODE')`,
/// `(e[CODE])`, `(e{CODE})`, `(e<CODE>)`, after other qualifiers too (`(.e:CODE:)`).
pub fn qualifier_code(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') => i += 1,
            (None, '(') => {
                // Other qualifiers may come first: `.`, `N`, `/`, `^`, digits, …
                let mut j = i;
                while j < chars.len()
                    && (chars[j].is_ascii_alphanumeric() || "./@=*%!-^,".contains(chars[j]))
                    && chars[j] != 'e'
                {
                    j += 1;
                }
                if chars.get(j) != Some(&'e') {
                    continue;
                }
                let Some(&open) = chars.get(j + 1) else {
                    continue;
                };
                let close = match open {
                    '[' => ']',
                    '{' => '}',
                    '<' => '>',
                    '(' => ')',
                    c if c.is_ascii_punctuation() => c,
                    _ => continue,
                };
                let start = j + 2;
                if let Some(len) = closing(&chars[start..], open, close) {
                    let code: String = chars[start..start + len].iter().collect();
                    // `e'CODE'`: the quotes are the delimiters; inside `e:'CODE':` they
                    // are the shell's, taken off as it takes them off.
                    out.push(unquoted(&code));
                    i = start + len + 1;
                }
            }
            _ => {}
        }
    }
    out
}

/// Where the delimiter closing the code is: the first `close` for a punctuation mark used
/// as both (`e:…:`), the balancing one for a bracket (`e[ … [ … ] … ]`).
fn closing(s: &[char], open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (at, &c) in s.iter().enumerate() {
        if c == close {
            if depth == 0 {
                return Some(at);
            }
            depth -= 1;
        } else if c == open && open != close {
            depth += 1;
        }
    }
    None
}

/// The code with one level of quoting taken off, as the shell takes it off the word.
fn unquoted(code: &str) -> String {
    shell_words::split(code).map_or_else(|_| code.to_string(), |w| w.join(" "))
}

/// Whether a parameter expansion carries zsh's `(e)` flag, which expands its value again as
/// the shell would (`${(e)x}`, `${(Qe)x}`): what it runs is in the value, not on the line.
pub fn expands_value(line: &str) -> bool {
    line.match_indices("${(").any(|(at, _)| {
        line[at + 3..]
            .split(')')
            .next()
            .is_some_and(|flags| flags.contains('e') && flags.len() < 16)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_qualifier_code_is_found() {
        assert_eq!(qualifier_code("ls *(e:'rm -rf ~':)"), ["rm -rf ~"]);
        assert_eq!(qualifier_code("echo *(e['rm -rf ~'])"), ["rm -rf ~"]);
        assert_eq!(qualifier_code("ls *(.e{touch x})"), ["touch x"]);
        assert!(qualifier_code("ls *(.)").is_empty());
        assert!(qualifier_code("echo '*(e:x:)'").is_empty());
        assert!(qualifier_code("print(len(x))").is_empty());
        assert_eq!(
            qualifier_code("ls *(e[ls *(e[rm -rf ~])])"),
            ["ls *(e[rm -rf ~])"]
        );
    }

    #[test]
    fn nested_qualifiers_are_bounded() {
        let line = format!("ls {}x{}", "*(e[".repeat(40), "]".repeat(40));
        let d = crate::Policy::default().evaluate(&line, None);
        assert_eq!(d.authorization, crate::Authorization::Blocked);
    }

    #[test]
    fn the_e_flag_is_seen() {
        assert!(expands_value("print ${(e)x}"));
        assert!(expands_value("echo ${(Qe)x}"));
        assert!(!expands_value("echo ${(U)x} ${x}"));
    }
}
