//! Finishing a simple command's words: redirections taken out (which operator is one, which
//! target is a descriptor), shell keywords and function headers dropped, leading
//! assignments taken off (`A=1 cmd`, `a[1]=x`).

use super::split::Word;
use super::*;

/// Whether a word is a redirection operator: any run of `<`, `>`, `&`, `|` the lexer made of
/// one (`>`, `>>`, `&>`, `>&`, `2>&`, `>|`, `<>`, and zsh's `>>&`, `&>|`, `>&|`), after
/// an optional descriptor number. Not a list of the forms one shell takes: a form left out
/// would hide the file it writes.
fn is_redirect_op(w: &str) -> bool {
    let op = w.trim_start_matches(|c: char| c.is_ascii_digit());
    let heredoc = matches!(op, "<<" | "<<-" | "<<<");
    heredoc
        || ((op.starts_with('<') || op.starts_with('>') || op.starts_with("&>"))
            && op.chars().all(|c| matches!(c, '<' | '>' | '&' | '|')))
}

/// Whether a `>&`/`<&` target names a descriptor (`2>&1`, `>&-`, `3>&1-`) rather than a
/// file (`>& FILE` writes the file, stdout and stderr both).
fn is_descriptor(target: &str) -> bool {
    target
        .strip_suffix('-')
        .unwrap_or(target)
        .chars()
        .all(|c| c.is_ascii_digit())
}

/// Shell words that open or continue a compound command: the command follows them.
const LEADING_KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "(",
];
/// Shell words that close a compound command (nothing runs).
const CLOSING_KEYWORDS: &[&str] = &["fi", "done", "esac", "}", ")"];
/// Loop headers whose own words run nothing (`for x in …; do`).
const LOOP_HEADERS: &[&str] = &["for", "select"];

fn assignment(w: &str) -> Option<(String, String)> {
    let (k, v) = w.split_once('=')?;
    let k = k.strip_suffix('+').unwrap_or(k);
    // An array's element too (`a[1]=x`, zsh's `functions[ls]=…`).
    let base = match k.split_once('[') {
        Some((base, rest)) if rest.ends_with(']') => base,
        _ => k,
    };
    let valid = !base.is_empty()
        && base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !base.starts_with(|c: char| c.is_ascii_digit());
    valid.then(|| (k.to_string(), v.to_string()))
}

/// An array's `NAME=(a 'b c' d)`, split into words by the shell's quoting: its elements
/// (the first word's after the `(`, then the words up to the one that ends in `)`) kept
/// apart as `(a 'b c' d)`, quoted again, so that each can be read as the shell reads it.
fn array_value(first: &str, rest: &mut impl Iterator<Item = String>) -> String {
    let mut items = Vec::new();
    let mut word = first.to_string();
    loop {
        if let Some(last) = word.strip_suffix(')') {
            items.push(last.to_string());
            break;
        }
        items.push(word);
        match rest.next() {
            Some(next) => word = next,
            None => break,
        }
    }
    items.retain(|i| !i.is_empty());
    format!("({})", shell_words::join(&items))
}

/// The elements of an array value as [`array_value`] keeps it (`None`: not an array).
pub fn array_items(value: &str) -> Option<Vec<String>> {
    let inner = value.strip_prefix('(')?.strip_suffix(')')?;
    shell_words::split(inner).ok()
}

/// Words of one simple command: shell keywords, function headers (`f()`, `function f`) and
/// leading assignments taken off, `{`/`}` group words dropped, redirections taken out with
/// their targets, here-strings kept as the command's input.
///
/// Only the shell's own words are syntax: a quoted `>` or `()` is an argument (`split`).
pub(super) fn words_to_simple(words: Vec<Word>) -> Simple {
    let mut s = Simple::default();
    if words
        .first()
        .is_some_and(|w| LOOP_HEADERS.contains(&w.text.as_str()))
    {
        // `for NAME in WORDS…`: NAME takes each word in turn, and keeps the last after the
        // loop. Read as NAME holding them all, so that the body's `rm -f $NAME` is judged as
        // `rm -f WORDS…`, every word at once (`for f in ~/*; do rm -f "$f"; done`).
        if let [_, name, keyword, values @ ..] = &words[..]
            && keyword.text == "in"
            && assignment(&format!("{}=", name.text)).is_some()
        {
            let values: Vec<&str> = values.iter().map(|w| w.text.as_str()).collect();
            s.assignments.push((name.text.clone(), values.join(" ")));
        }
        return s;
    }
    let mut it = words.into_iter().peekable();
    // `case WORD in PATTERN) cmd`: the command starts after the pattern.
    if it.peek().is_some_and(|w| w.text == "case") {
        for w in it.by_ref() {
            if w.text == "in" {
                break;
            }
        }
    }
    let mut leading = true;
    while let Some(Word { text: w, quoted }) = it.next() {
        if !quoted && is_redirect_op(&w) {
            let target = it.next().map(|t| t.text).unwrap_or_default();
            let op = w.trim_start_matches(|c: char| c.is_ascii_digit());
            if op == "<<<" {
                s.input.push_str(&target);
                s.input.push('\n');
                continue;
            }
            let dup = (op.ends_with('&') && is_descriptor(&target))
                || op.starts_with('<') && !op.starts_with("<>");
            if op == "<" && !target.is_empty() {
                s.reads.push(target.clone());
            }
            if !dup && !target.is_empty() {
                s.redirects.push(target);
            }
            continue;
        }
        if leading {
            if let Some((name, value)) = assignment(&w) {
                let value = match value.strip_prefix('(') {
                    Some(first) => array_value(first, &mut it.by_ref().map(|w| w.text)),
                    None => value,
                };
                s.assignments.push((name, value));
                continue;
            }
            if LEADING_KEYWORDS.contains(&w.as_str()) {
                continue;
            }
            // bash's `time [-p]` times the pipeline after it, a group too (`time { …; }`).
            if !quoted && w == "time" && it.peek().is_some_and(|n| n.text == "{" || n.text == "-p")
            {
                if it.peek().is_some_and(|n| n.text == "-p") {
                    it.next();
                }
                continue;
            }
            // Function headers: `f()`, `f ()`, `function f`; case patterns `x)`.
            if w == "function" {
                it.next();
                continue;
            }
            // `f(){ body; }`: the header and the group's brace as one word.
            if !quoted && (w.ends_with("()") || w.ends_with("(){")) {
                continue;
            }
            if it.peek().is_some_and(|n| n.text == "()" && !n.quoted) {
                it.next();
                continue;
            }
            if w.ends_with(')') && !w.contains('(') && s.argv.is_empty() {
                continue;
            }
            if CLOSING_KEYWORDS.contains(&w.as_str()) && it.peek().is_none() {
                continue;
            }
            leading = false;
        }
        if w == "}" && it.peek().is_none() {
            continue;
        }
        s.argv.push(w);
    }
    s
}
