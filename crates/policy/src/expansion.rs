//! Variables the line itself assigned, expanded where it uses them (`c=rm; $c -rf ~` is
//! `rm -rf ~`), as the shell expands them: split on blanks when unquoted, one word when
//! quoted.

use std::borrow::Cow;
use std::collections::HashMap;

/// What `$NAME` expands to when the line assigned NAME `value`: an array's (`c=(rm -rf)`,
/// kept as the lexer keeps it) is its first element, as bash expands `$c` and `${c}`;
/// read as the whole `(rm -rf)`, `cmd=(rm); ${cmd} -rf ~` ran `rm -rf ~` as `allowed`.
fn scalar(value: &str) -> Cow<'_, str> {
    match crate::lex::array_items(value) {
        Some(items) => Cow::Owned(items.into_iter().next().unwrap_or_default()),
        None => Cow::Borrowed(value),
    }
}

/// `$NAME` / `${NAME}` replaced by what the line assigned; a whole word that is only a
/// variable is split on blanks as the shell splits an unquoted expansion.
pub(crate) fn expand(argv: &[String], vars: &HashMap<String, String>) -> Vec<String> {
    if vars.is_empty() {
        return argv.to_vec();
    }
    let mut out = Vec::new();
    for w in argv {
        let name = w
            .strip_prefix("${")
            .and_then(|r| r.strip_suffix('}'))
            .or_else(|| w.strip_prefix('$'));
        if let Some(v) = name.and_then(|n| vars.get(n)) {
            out.extend(scalar(v).split_whitespace().map(str::to_string));
        } else {
            out.push(expand_in_word(w, vars));
        }
    }
    out
}

/// The reading of `argv` in which a word that is only a variable stays one word (it was
/// quoted), when such a value would split: `None` when it reads the same as [`expand`].
pub(crate) fn expand_unsplit(
    argv: &[String],
    vars: &HashMap<String, String>,
) -> Option<Vec<String>> {
    let mut splits = false;
    let out = argv
        .iter()
        .map(|w| {
            let name = w
                .strip_prefix("${")
                .and_then(|r| r.strip_suffix('}'))
                .or_else(|| w.strip_prefix('$'));
            match name.and_then(|n| vars.get(n)) {
                Some(v) => {
                    let v = scalar(v);
                    splits |= v.split_whitespace().count() != 1;
                    v.into_owned()
                }
                None => expand_in_word(w, vars),
            }
        })
        .collect();
    splits.then_some(out)
}

/// Each `$NAME` / `${NAME}` inside a word that the line assigned, in one pass.
pub(crate) fn expand_in_word(word: &str, vars: &HashMap<String, String>) -> String {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, consumed) = match after.strip_prefix('{') {
            Some(braced) => match braced.find('}') {
                Some(end) => (&braced[..end], end + 2),
                None => ("", 0),
            },
            None => {
                let end = after.find(|c: char| !is_name(c)).unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        match vars.get(name) {
            Some(v) if !name.is_empty() => out.push_str(&scalar(v)),
            _ => {
                out.push('$');
                out.push_str(&after[..consumed]);
            }
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}
