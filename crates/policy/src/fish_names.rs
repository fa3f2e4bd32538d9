//! A command name fish computes: in fish a `(…)` anywhere in a word is a command
//! substitution, so `r(echo m) -rf ~` runs `rm -rf ~` and `(echo rm) -rf ~` too. Typed at a
//! REPL's prompt the same shape is a call (`print(1+1)`), which the REPL reading judges; a
//! call is followed by nothing or by an operator, never by a command's arguments, so a
//! glued `(…)` in the first word followed by such arguments is a name computed at run time.

use crate::{Finding, Severity};

/// Words a call may be followed by in Python or JavaScript: keywords and operators.
const AFTER_A_CALL: &[&str] = &["if", "else", "and", "or", "not", "in", "is", "instanceof"];

fn operator(word: &str) -> bool {
    word.len() <= 3 && word.chars().all(|c| "+-*/%=<>!&|^?:.,".contains(c))
}

/// The first word of `segment` when it holds a `(…)` (balanced), and what follows it.
fn glued_call(segment: &str) -> Option<(&str, &str)> {
    let s = segment.trim_start();
    let open = s.find('(')?;
    let name = &s[..open];
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c))
    {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    let end = open + i + 1;
                    // The word goes on to the next space outside quotes and brackets
                    // (`r(echo m)x`, `require('x').f('a b')`).
                    let word_end = end + word_len(&s[end..]);
                    return Some((&s[..word_end], &s[word_end..]));
                }
            }
            _ => {}
        }
    }
    None
}

/// How long the word that starts `s` is: up to a blank outside quotes and brackets.
fn word_len(s: &str) -> usize {
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            (None, c) if c.is_whitespace() && depth == 0 => return i,
            _ => {}
        }
    }
    s.len()
}

/// The text inside each `(…)` glued to a word (`x=(rm -rf ~)`, `r(echo m)`), outside quotes:
/// fish runs it as a command. Where a word begins the lexer already reads it so, and `$(`,
/// `<(`, `>(`, zsh's `=(` and the extended globs' `@(`, `*(`, `+(`, `?(`, `!(` are other
/// syntax; a group holding one quoted string (`print('rm -rf /')`) names no command.
pub fn glued_substitutions(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), '\\') => i += 1,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') => i += 1,
            (None, '(') if glued(&chars, i) => {
                let mut depth = 0usize;
                let mut end = None;
                for (j, d) in chars.iter().enumerate().skip(i) {
                    match d {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(j);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let Some(end) = end else { break };
                let inner: String = chars[i + 1..end].iter().collect();
                let t = inner.trim();
                let one_string = t.len() >= 2
                    && (t.starts_with('\'') || t.starts_with('"'))
                    && t.ends_with(t.chars().next().unwrap_or(' '))
                    && !t[1..t.len() - 1].contains(t.chars().next().unwrap_or(' '));
                if !t.is_empty() && !one_string {
                    out.push(inner);
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether the `(` at `i` is glued to a word of its own (not another syntax's).
fn glued(chars: &[char], i: usize) -> bool {
    let Some(before) = i.checked_sub(1).map(|b| chars[b]) else {
        return false;
    };
    // zsh's `=(…)` where a word begins; `NAME=(…)` is bash's array and fish's substitution.
    let zsh_file = before == '=' && (i < 2 || chars[i - 2].is_whitespace());
    !before.is_whitespace() && !"$<>@*+?!(|&;".contains(before) && !zsh_file
}

/// The finding for a line of a terminal whose command name fish would compute, if any.
pub fn computed_name(line: &str) -> Option<Finding> {
    for segment in line.split(['\n', ';', '|', '&']) {
        let Some((word, rest)) = glued_call(segment) else {
            continue;
        };
        // What comes right after a call is an operator or a keyword; a command's first
        // argument is anything else.
        // The word cut from a call by a space inside its own brackets (`f(a, 1)`) ends
        // them: what is left of it is the expression's.
        let args = rest.split_whitespace().next().is_some_and(|w| {
            let w = w.trim_end_matches([')', ']', '}', ',']);
            !w.is_empty()
                && !operator(w)
                && !AFTER_A_CALL.contains(&w)
                && w.trim_start_matches(['-', '+']).parse::<f64>().is_err()
        });
        if args {
            return Some(Finding {
                severity: Severity::Warn,
                rule: "computed_command",
                message: format!(
                    "{word} names the program by a command substitution (fish runs the \
                     `(…)` in a word and uses its output): the program to run is computed \
                     at run time and cannot be judged first"
                ),
                command: segment.trim().chars().take(200).collect(),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_fish_computes_is_found_and_a_call_is_not() {
        for warned in [
            "r(echo m) -rf ~",
            "(echo rm) -rf ~",
            "ls; (echo rm) -rf ~",
            "r(echo m)x foo",
            "/bin/r(echo m) -rf /",
        ] {
            assert!(computed_name(warned).is_some(), "{warned}");
        }
        for passed in [
            "print(1+1)",
            "os.system('ls')",
            "print(x) if y else print(z)",
            "foo(1) + bar(2)",
            "foo(1) -2",
            "np.array([1,2,3]).reshape(3, 1)",
            "f(g(a, b))",
            "f(a) == g(b)",
            "console.log(x) || process.exit(1)",
            "ls (pwd)",
            "echo hi",
        ] {
            assert!(computed_name(passed).is_none(), "{passed}");
        }
        assert_eq!(glued_substitutions("x=(rm -rf ~)"), ["rm -rf ~"]);
        assert_eq!(glued_substitutions("r(echo m) -rf ~"), ["echo m"]);
        assert_eq!(
            glued_substitutions("f(g(rm -rf ~))"),
            ["g(rm -rf ~)", "rm -rf ~"]
        );
        for none in [
            "print('rm -rf /')",
            "echo 'x=(rm -rf ~)'",
            "echo $(id) <(ls) =(ls) @(a|b)",
            "ls (pwd)",
            "print()",
        ] {
            assert!(glued_substitutions(none).is_empty(), "{none}");
        }
    }
}
