//! Whether an interpreter's inline program (`python3 -c`, `node -e`, `perl -e`, an input it
//! reads as its program) uses only words known to be harmless.
//!
//! Why an allow-list of words: the calls that run a command or delete a tree are read off
//! the program's string literals (`inline`), but a program reaches them in more ways than a
//! list of calls can name — a command in a variable (`c="rm -rf ~"; os.system(c)`), a
//! module looked up by a computed name, a builtin reached through an object's attributes.
//! So a program passes only when every name it uses is a keyword, a builtin or a method
//! known to read, print or compute, or a name the program binds itself; an attribute
//! (`x.name`) must be a known one whatever the program binds. Anything else is reported, and
//! the line is warned: a person reads the code.

/// Words known elsewhere that run code in one language: Lua's `load` (a string as code),
/// `dofile`; Perl's `do FILE`; Ruby's `load`; PHP's `assert` (a string as code before 8).
fn runs_code_in(lang: &str, word: &str) -> bool {
    match lang {
        "lua" => matches!(word, "load" | "loadstring" | "dofile"),
        "perl" => word == "do",
        "ruby" => word == "load",
        "php" => word == "assert",
        _ => false,
    }
}

/// The environment's mappings: their members are variable names, data.
const ENVIRONMENTS: &[&str] = &["env", "ENV", "environ"];

/// The first name `code` (in `lang`) uses that is not known to be harmless, if any.
pub fn unread_word(lang: &str, code: &str) -> Option<String> {
    let chars: Vec<char> = code.chars().collect();
    let code: Vec<char> = if lang == "perl" {
        match perl_without_patterns(&chars) {
            Ok(c) => c,
            Err(why) => return Some(why),
        }
    } else {
        chars
    };
    let tokens = tokens(lang, &code);
    let bound = bound_names(&tokens);
    let mut prev: Option<&Token> = None;
    for (i, t) in tokens.iter().enumerate() {
        match t {
            // An object's key with a literal value (`{stdio: 'inherit'}`, Ruby's `key: 1`) is
            // data; with a name after it (`const {execSync: e} = …`) it may be a binding.
            Token::Word(_)
                if matches!(lang, "node" | "ruby")
                    && matches!(prev, Some(Token::Punct('{' | ',')))
                    && matches!(tokens.get(i + 1), Some(Token::Punct(':')))
                    && literal_value(tokens.get(i + 2)) => {}
            Token::Word(w) => {
                let attribute = matches!(prev, Some(Token::Punct('.')) | Some(Token::Arrow));
                let of_environment = attribute
                    && i >= 2
                    && matches!(&tokens[i - 2], Token::Word(e) if ENVIRONMENTS.contains(&e.as_str()));
                if of_environment {
                    // A variable's name is data; changing the environment (`os.environ.update`,
                    // `process.env.X = …`) sets what later programs load.
                    if changes_environment(&tokens, i) {
                        return Some("a change to the environment".into());
                    }
                    prev = Some(t);
                    continue;
                }
                if ENVIRONMENTS.contains(&w.as_str()) && subscript_assigned(&tokens, i) {
                    return Some("a change to the environment".into());
                }
                if let Some(members) = guarded(w)
                    && !attribute
                {
                    if !guarded_use(&tokens, i, members) {
                        return Some(w.clone());
                    }
                } else if attribute
                    && i >= 2
                    && matches!(&tokens[i - 2], Token::Word(m) if guarded(m).is_some())
                {
                    // Checked with its module.
                } else {
                    let known = KNOWN.contains(&w.as_str()) && !runs_code_in(lang, w);
                    let runs = RUNS.contains(&w.as_str())
                        && (attribute || w == "system")
                        && literal_call(&tokens, i);
                    if !(known || runs || (!attribute && bound.contains(w))) {
                        return Some(w.clone());
                    }
                }
                if w == "require" {
                    let module = match (tokens.get(i + 1), tokens.get(i + 2)) {
                        (Some(Token::Text(m)), _) => Some(m),
                        (Some(Token::Punct('(')), Some(Token::Text(m))) => Some(m),
                        _ => None,
                    };
                    match module {
                        Some(m) if KNOWN_MODULES.contains(&m.as_str()) || json_file(m) => {}
                        _ => return Some("require".into()),
                    }
                }
            }
            // A call through a variable (`$f(…)` in PHP) or a reference (`&$f` in Perl).
            Token::CalledVariable => return Some("a call through a variable".into()),
            _ => {}
        }
        prev = Some(t);
    }
    None
}

fn guarded(word: &str) -> Option<&'static [&'static str]> {
    GUARDED
        .iter()
        .find(|(m, _)| *m == word)
        .map(|(_, members)| *members)
}

/// Whether a guarded module at `i` is used only through its allowed members, or imported
/// (`import os`, `import json, os`): never renamed (`import os as o`, `o = os`), passed on
/// (`f(os)`, `[os]`), or taken apart (`from os import remove`).
fn guarded_use(tokens: &[Token], i: usize, members: &[&str]) -> bool {
    let before = i.checked_sub(1).and_then(|k| tokens.get(k));
    match tokens.get(i + 1) {
        Some(Token::Punct('.')) => match tokens.get(i + 2) {
            Some(Token::Word(m)) => {
                members.contains(&m.as_str())
                    || (RUNS.contains(&m.as_str()) && literal_call(tokens, i + 2))
            }
            _ => false,
        },
        None | Some(Token::Punct(';' | ',')) => {
            matches!(before, Some(Token::Word(w)) if w == "import")
                || matches!(before, Some(Token::Punct(',')))
        }
        _ => false,
    }
}

/// Whether the call at `i` (its name) takes only literals: strings, lists of them,
/// `name=` options with literal values (`shell=True`), `{key: literal}` objects.
fn literal_call(tokens: &[Token], i: usize) -> bool {
    match tokens.get(i + 1) {
        Some(Token::Punct('(')) => {}
        // Perl and Ruby call without parentheses: `system "ls"`.
        Some(Token::Text(_)) => return matches!(tokens.get(i + 2), None | Some(Token::Punct(';'))),
        _ => return false,
    }
    let mut depth = 0usize;
    for (k, t) in tokens.iter().enumerate().skip(i + 1) {
        match t {
            Token::Punct('(' | '[' | '{') => depth += 1,
            Token::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return true;
                }
            }
            Token::Text(_) | Token::Assign | Token::Punct(',' | ':') => {}
            Token::Word(w)
                if matches!(
                    w.as_str(),
                    "True" | "False" | "None" | "true" | "false" | "nil"
                ) || matches!(tokens.get(k + 1), Some(Token::Assign | Token::Punct(':'))) => {}
            _ => return false,
        }
    }
    false
}

/// Whether an object key's value is a literal: a string, `true`/`false`/`null`/`nil`, or a
/// number (which leaves no token, so the key's list goes on or ends).
fn literal_value(t: Option<&Token>) -> bool {
    match t {
        Some(Token::Text(_)) | Some(Token::Punct(',' | '}' | '-')) | None => true,
        Some(Token::Word(w)) => matches!(w.as_str(), "true" | "false" | "null" | "nil"),
        _ => false,
    }
}

/// Whether the environment's member at `i` is assigned or changed by a method other than
/// `get` (`os.environ.update(…)`, `process.env.X = …`).
fn changes_environment(tokens: &[Token], i: usize) -> bool {
    match tokens.get(i + 1) {
        Some(Token::Assign) => true,
        Some(Token::Punct('(')) => !matches!(&tokens[i], Token::Word(w) if w == "get"),
        _ => false,
    }
}

/// Whether the environment at `i` is assigned through a subscript (`os.environ["X"] = …`).
fn subscript_assigned(tokens: &[Token], i: usize) -> bool {
    matches!(
        (
            tokens.get(i + 1),
            tokens.get(i + 2),
            tokens.get(i + 3),
            tokens.get(i + 4)
        ),
        (
            Some(Token::Punct('[')),
            Some(_),
            Some(Token::Punct(']')),
            Some(Token::Assign)
        )
    )
}

fn json_file(m: &str) -> bool {
    m.starts_with("./") && m.ends_with(".json") && !m.contains("..")
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    /// A string literal's text.
    Text(String),
    Punct(char),
    /// `->` or `::` (an attribute or method follows).
    Arrow,
    /// `=` that binds (not `==`, `=>`, `=~`).
    Assign,
    CalledVariable,
}

fn is_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The program's tokens: names, literals (their interpolated parts tokenised as code),
/// punctuation. Sigil variables (`$x`, `@a`, `%h` in Perl and PHP, `$x` in Ruby's globals)
/// are the program's own names and are left out.
fn tokens(lang: &str, code: &[char]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        if c == '\'' || c == '"' || c == '`' {
            let mut j = i + 1;
            let mut text = String::new();
            while j < code.len() && code[j] != c {
                if code[j] == '\\' && j + 1 < code.len() {
                    j += 1;
                }
                text.push(code[j]);
                j += 1;
            }
            let prefix = i > 0 && matches!(code[i - 1], 'f' | 'F') && lang == "python";
            if text.contains("${") || text.contains("#{") || (prefix && text.contains('{')) {
                // Interpolated code: its parts between braces are code.
                for part in text.split('{').skip(1) {
                    let inner: Vec<char> = part.split('}').next().unwrap_or("").chars().collect();
                    out.extend(tokens(lang, &inner));
                }
            }
            let subscripted = match out.len().checked_sub(2).and_then(|k| out.get(k)) {
                Some(Token::Word(w)) => {
                    KNOWN.contains(&w.as_str()) && !ENVIRONMENTS.contains(&w.as_str())
                }
                _ => false,
            };
            if matches!(out.last(), Some(Token::Punct('[')))
                && subscripted
                && text.chars().all(is_word)
            {
                // `process["kill"]`, `sys.modules["os"]`: a member of a module or global
                // looked up by name is an attribute. (A key of the program's own data —
                // `json.load(f)["name"]`, `d["k"]` — is data.)
                out.push(Token::Punct('.'));
                out.push(Token::Word(text.clone()));
            }
            out.push(Token::Text(text));
            i = j + 1;
        } else if matches!(c, '$' | '@' | '%')
            && matches!(lang, "perl" | "php" | "ruby")
            && code
                .get(i + 1)
                .is_some_and(|&n| is_start(n) || n == '_' || n == '{')
        {
            let mut j = i + 1;
            while j < code.len() && is_word(code[j]) {
                j += 1;
            }
            let mut k = j;
            while k < code.len() && code[k] == ' ' {
                k += 1;
            }
            if lang == "php" && code.get(k) == Some(&'(') {
                out.push(Token::CalledVariable);
            }
            i = j.max(i + 1);
        } else if c == '&' && lang == "perl" && matches!(code.get(i + 1), Some('$' | '{')) {
            out.push(Token::CalledVariable);
            i += 1;
        } else if is_start(c) {
            let mut j = i;
            while j < code.len() && is_word(code[j]) {
                j += 1;
            }
            let word: String = code[i..j].iter().collect();
            // A string's prefix (`f'…'`, `rb"…"`) is part of the literal.
            let prefix = matches!(code.get(j), Some('\'' | '"'))
                && word.len() <= 2
                && word
                    .chars()
                    .all(|c| matches!(c.to_ascii_lowercase(), 'f' | 'r' | 'b' | 'u'));
            if !prefix {
                out.push(Token::Word(word));
            }
            // Ruby's `include?`, `map!`: the mark is part of the name's spelling only.
            if lang == "ruby" && matches!(code.get(j), Some('?' | '!')) {
                j += 1;
            }
            i = j;
        } else if c.is_ascii_digit() {
            while i < code.len() && (is_word(code[i]) || code[i] == '.') {
                i += 1;
            }
        } else if (c == '-' && code.get(i + 1) == Some(&'>'))
            || (c == ':' && code.get(i + 1) == Some(&':'))
        {
            out.push(Token::Arrow);
            i += 2;
        } else if c == '=' {
            let next = code.get(i + 1).copied();
            let before = if i > 0 { code[i - 1] } else { ' ' };
            if !matches!(next, Some('=' | '>' | '~')) && !matches!(before, '=' | '!' | '<' | '>') {
                out.push(Token::Assign);
            } else {
                out.push(Token::Punct('='));
            }
            i += 1;
        } else {
            if !c.is_whitespace() {
                out.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    out
}

/// Names the program binds itself: assigned (`x = …`, `a, b = …`, `x := …`, `f(key=…)`),
/// declared (`let`/`const`/`var`/`local`/`my` NAME), looped over (`for x in`), parameters
/// (`def f(a, b)`, `lambda x:`, `function f(a)`, `|x|`, `x =>`), imported as (`as x`).
fn bound_names(tokens: &[Token]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match t {
            Token::Assign => {
                // Back over `a, b` / `a: int` to the start of the target list.
                let mut k = i;
                while k > 0 {
                    match &tokens[k - 1] {
                        Token::Word(w)
                            if !matches!(
                                tokens.get(k.wrapping_sub(2)),
                                Some(Token::Punct('.'))
                            ) =>
                        {
                            out.push(w.clone());
                            k -= 1;
                        }
                        Token::Punct(',' | ':' | '(' | ')') => k -= 1,
                        _ => break,
                    }
                    if matches!(tokens.get(k), Some(Token::Punct('('))) {
                        break;
                    }
                }
            }
            Token::Word(w)
                if matches!(
                    w.as_str(),
                    "let"
                        | "const"
                        | "var"
                        | "local"
                        | "my"
                        | "our"
                        | "for"
                        | "foreach"
                        | "as"
                        | "def"
                        | "function"
                        | "lambda"
                        | "sub"
                ) =>
            {
                // The names up to what ends the binding list.
                let mut k = i + 1;
                while let Some(t) = tokens.get(k) {
                    match t {
                        Token::Word(n) if !matches!(n.as_str(), "in" | "of") => out.push(n.clone()),
                        Token::Punct(',' | '(' | '[' | ')' | ']') => {}
                        _ => break,
                    }
                    k += 1;
                }
            }
            Token::Punct('|') => {
                // Ruby block parameters: `|x, y|`.
                let mut k = i + 1;
                let mut names = Vec::new();
                while let Some(t) = tokens.get(k) {
                    match t {
                        Token::Word(n) => names.push(n.clone()),
                        Token::Punct(',') => {}
                        Token::Punct('|') => {
                            out.append(&mut names);
                            break;
                        }
                        _ => break,
                    }
                    k += 1;
                }
            }
            Token::Punct('>') if i > 0 && tokens[i - 1] == Token::Punct('=') => {
                // An arrow function's parameters: `x =>`, `(a, b) =>`.
                let mut k = i - 1;
                while k > 0 {
                    match &tokens[k - 1] {
                        Token::Word(n) => out.push(n.clone()),
                        Token::Punct(',' | ')') => {}
                        Token::Punct('(') => break,
                        _ => break,
                    }
                    k -= 1;
                }
            }
            _ => {}
        }
    }
    out
}

/// Perl code with its pattern operators (`s/…/…/`, `m{…}`, `/…/`, `tr/…/…/`, `qr/…/`)
/// taken out, or why it cannot be read: a substitution whose replacement is code (`e`) or a
/// pattern that runs code (`(?{…})`).
fn perl_without_patterns(code: &[char]) -> Result<Vec<char>, String> {
    let mut out = Vec::with_capacity(code.len());
    let mut i = 0;
    let mut operand_expected = true;
    while i < code.len() {
        let c = code[i];
        if is_start(c) {
            let mut j = i;
            while j < code.len() && is_word(code[j]) {
                j += 1;
            }
            let word: String = code[i..j].iter().collect();
            let parts = match word.as_str() {
                "s" | "tr" | "y" => 2,
                "m" | "qr" => 1,
                _ => 0,
            };
            let delimiter = code.get(j).copied();
            if parts > 0
                && delimiter.is_some_and(|d| {
                    !is_word(d) && !d.is_whitespace() && !matches!(d, ';' | ',' | '=' | ')')
                })
            {
                let (end, pattern) = pattern_parts(code, j, parts);
                let mut k = end;
                let mut flags = String::new();
                while k < code.len() && code[k].is_ascii_alphabetic() {
                    flags.push(code[k]);
                    k += 1;
                }
                if word == "s" && flags.contains('e') {
                    return Err("a substitution whose replacement is code (s///e)".into());
                }
                if pattern.contains("(?{") || pattern.contains("(??{") {
                    return Err("a pattern that runs code ((?{…}))".into());
                }
                out.push(' ');
                i = k;
                operand_expected = false;
                continue;
            }
            out.extend(&code[i..j]);
            operand_expected = matches!(
                word.as_str(),
                "if" | "unless"
                    | "and"
                    | "or"
                    | "not"
                    | "split"
                    | "grep"
                    | "while"
                    | "until"
                    | "return"
            );
            i = j;
        } else if c == '/' && operand_expected {
            let (end, pattern) = pattern_parts(code, i, 1);
            if pattern.contains("(?{") || pattern.contains("(??{") {
                return Err("a pattern that runs code ((?{…}))".into());
            }
            let mut k = end;
            while k < code.len() && code[k].is_ascii_alphabetic() {
                k += 1;
            }
            out.push(' ');
            i = k;
            operand_expected = false;
        } else {
            out.push(c);
            if !c.is_whitespace() {
                operand_expected =
                    !(c.is_ascii_digit() || matches!(c, ')' | ']' | '}' | '_' | '$' | '@'));
            }
            i += 1;
        }
    }
    Ok(out)
}

/// The end of `parts` delimited parts starting at the delimiter at `at`, and their text.
fn pattern_parts(code: &[char], at: usize, parts: usize) -> (usize, String) {
    let open = code[at];
    let close = match open {
        '{' => '}',
        '(' => ')',
        '[' => ']',
        '<' => '>',
        d => d,
    };
    let mut text = String::new();
    let mut i = at + 1;
    let mut done = 0;
    while i < code.len() && done < parts {
        let c = code[i];
        if c == '\\' && i + 1 < code.len() {
            text.push(c);
            text.push(code[i + 1]);
            i += 2;
            continue;
        }
        if c == close {
            done += 1;
            i += 1;
            if done < parts && open != close {
                // `s{…}{…}`: the second part has delimiters of its own.
                while i < code.len() && code[i].is_whitespace() {
                    i += 1;
                }
                i += 1;
            }
            continue;
        }
        text.push(c);
        i += 1;
    }
    (i, text)
}

#[cfg(test)]
mod tests;
mod vocabulary;

use vocabulary::{GUARDED, KNOWN, KNOWN_MODULES, RUNS};
