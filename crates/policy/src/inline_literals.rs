//! The string literals of a program's code, each with the call it is an argument of
//! (`os.system("…")`, `spawnSync('rm', ['-rf', '/'])`, perl's `system "…"`): what
//! `inline` reads the commands code hands to the system from.

/// A string literal of the program and the call it is an argument of.
pub(crate) struct Literal {
    pub(crate) text: String,
    pub(crate) callee: String,
    /// Position of the literal inside a list argument (`run(["rm", "-rf", "/"])`).
    pub(crate) in_list: bool,
    pub(crate) backtick: bool,
}

/// The identifier that ends just before `end` (skipping blanks), lower-cased.
fn identifier_before(code: &[char], mut end: usize) -> String {
    while end > 0 && code[end - 1].is_whitespace() {
        end -= 1;
    }
    // Ruby's and Elixir's `rm_rf!(…)`, `exists?(…)`: the mark is part of the name.
    if end > 1 && matches!(code[end - 1], '!' | '?') && code[end - 2].is_alphanumeric() {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && (code[start - 1].is_alphanumeric() || code[start - 1] == '_') {
        start -= 1;
    }
    code[start..end]
        .iter()
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Calls whose arguments, one each, are a command's words.
const ARGV_PARAMETERS: &[&str] = &[
    "processbuilder",
    "command",
    "create_subprocess_exec",
    "subprocess_exec",
];

/// The call a literal starting at `at` is an argument of: `f("…")`, `f "…"` (perl, ruby),
/// `f(["…", …])` (in a list).
fn callee(
    code: &[char],
    at: usize,
    list_callee: &Option<String>,
    call: &Option<String>,
    enclosing: Option<usize>,
) -> (String, bool) {
    let mut j = at;
    while j > 0 && code[j - 1].is_whitespace() {
        j -= 1;
    }
    match j.checked_sub(1).map(|k| code[k]) {
        Some('(') => (identifier_before(code, j - 1), false),
        Some('[') => {
            let mut k = j - 1;
            while k > 0 && code[k - 1].is_whitespace() {
                k -= 1;
            }
            if k > 0 && code[k - 1] == '(' {
                (identifier_before(code, k - 1), true)
            } else if k > 0
                && code[k - 1] == ','
                && let Some(c) = call
            {
                // The call's later argument: `spawnSync('rm', ['-rf', '/'])`.
                (c.clone(), true)
            } else {
                (String::new(), false)
            }
        }
        Some(',') => match (list_callee, call) {
            (Some(c), _) => (c.clone(), true),
            // The words of a command given one argument each (`ProcessBuilder("rm", "-rf",
            // "/")`, `exec.Command("rm", "-rf", "/")`): read as a list's.
            (None, Some(c)) if ARGV_PARAMETERS.contains(&c.as_str()) => (c.clone(), true),
            // A later argument of `open` (Perl's `open(F, "cmd|")`, `open(F, "-|", "cmd")`):
            // its mode or its command.
            _ if enclosing.is_some_and(|open| identifier_before(code, open) == "open") => {
                ("open".into(), false)
            }
            _ => (String::new(), false),
        },
        Some(c) if c.is_alphanumeric() || c == '_' => (identifier_before(code, j), false),
        _ => (String::new(), false),
    }
}

/// Whether the string that ends at `end` is run by what follows it (`.!`, `.!!`,
/// `.execute()`; after Scala's `Process("cmd")`, its `)` skipped by the caller).
fn runs_after(code: &[char], end: usize) -> bool {
    let rest: String = code[end.min(code.len())..].iter().take(10).collect();
    rest.starts_with(".!") || rest.starts_with(".execute(")
}

/// Perl's `qx{…}` (any delimiter): a command, read as a backticked string is. Returns the
/// text and the index after the closing delimiter, when `at` starts one.
fn perl_qx(code: &[char], at: usize) -> Option<(String, usize)> {
    let starts_word = at == 0 || !(code[at - 1].is_alphanumeric() || code[at - 1] == '_');
    if !starts_word || code.get(at) != Some(&'q') || code.get(at + 1) != Some(&'x') {
        return None;
    }
    let open = *code.get(at + 2)?;
    let close = match open {
        '{' => '}',
        '(' => ')',
        '[' => ']',
        '<' => '>',
        c if c.is_ascii_punctuation() && !matches!(c, '\'' | '"' | '`' | '_') => c,
        _ => return None,
    };
    let start = at + 3;
    // Unclosed, it runs to the end (read once, not again from each later `qx`).
    let len = code[start..]
        .iter()
        .position(|&c| c == close)
        .unwrap_or(code.len() - start);
    Some((
        code[start..start + len].iter().collect(),
        (start + len + 1).min(code.len()),
    ))
}

/// Whether only blanks (or a line continued with a backslash) lie between `from` and `to`.
fn blank_between(code: &[char], from: usize, to: usize) -> bool {
    from <= to
        && code[from..to]
            .iter()
            .all(|c| c.is_whitespace() || *c == '\\')
}

pub(crate) fn literals(code: &[char]) -> Vec<Literal> {
    let mut out = Vec::new();
    let mut list_callee: Option<String> = None;
    // The call whose first argument was the last literal (`spawnSync('rm', …`).
    let mut call: Option<String> = None;
    // Where the last literal ended.
    let mut last_end: Option<usize> = None;
    // The `(` of each call whose arguments are being read, innermost last.
    let mut opens: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        if let Some((text, end)) = perl_qx(code, i) {
            out.push(Literal {
                text,
                callee: "qx".into(),
                in_list: false,
                backtick: true,
            });
            last_end = None;
            i = end;
            continue;
        }
        match c {
            '\'' | '"' | '`' => {
                let prefix = crate::string_escapes::prefix_before(code, i);
                let raw = prefix.as_deref().is_some_and(|p| p.contains('r'));
                let opening = i - prefix.as_ref().map_or(0, String::len);
                let (text, end) = crate::string_escapes::literal_text(code, i, raw);
                // Adjacent literals are one string (`"rm -rf" " ~"` in Python and Ruby).
                if let Some(last) = out.last_mut()
                    && last_end.is_some_and(|e| blank_between(code, e, opening))
                {
                    let last: &mut Literal = last;
                    last.text.push_str(&text);
                    last_end = Some(end);
                    i = end;
                    continue;
                }
                let (mut callee, in_list) =
                    callee(code, opening, &list_callee, &call, opens.last().copied());
                // Scala's `"cmd".!` and `.!!`, Groovy's `"cmd".execute()`: the string runs.
                if runs_after(code, end) || (callee == "process" && runs_after(code, end + 1)) {
                    callee = "system".into();
                }
                if !in_list {
                    call = (!callee.is_empty()).then(|| callee.clone());
                }
                list_callee = in_list.then(|| callee.clone());
                out.push(Literal {
                    text,
                    callee,
                    in_list,
                    backtick: c == '`',
                });
                last_end = Some(end);
                i = end;
            }
            ']' => {
                list_callee = None;
                i += 1;
            }
            '(' => {
                opens.push(i);
                i += 1;
            }
            ')' => {
                call = None;
                opens.pop();
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}
