//! A line of some REPL's code cut into the pieces `repl` weighs: dotted names (`os.system`,
//! `require('child_process').exec` as `.exec` after a call), string literals, and the
//! punctuation between them. The language is not known, so only what Python, JavaScript,
//! Ruby, Perl, PHP and Lua share is read: quotes with backslash escapes, identifiers,
//! brackets.

/// One piece of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// A dotted name; `after_call` when it starts with `.` right after a `)` or `]`
    /// (`require('x').exec`, `getattr(os, 'system')`).
    Name { path: String, after_call: bool },
    /// A string literal; `computed` when it interpolates (`f"{x}"`, `` `${x}` ``, `"#{x}"`,
    /// perl's `"$x"`).
    Literal { text: String, computed: bool },
    /// Any other character but blanks.
    Punct(char),
}

/// Whether blanks came before the piece: Ruby's and Perl's calls take their argument after
/// a blank (`system cmd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) token: Token,
    pub(crate) blank_before: bool,
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Brackets nested deeper than this are not read as a REPL's code: each call's arguments
/// are found by a scan to its closing bracket, so a line of thousands of unclosed `(` or
/// `[` (`$($($(…`, a paste of arrow keys' `ESC [ D`) cost seconds per line. Such a line is
/// warned instead (`repl::unread`).
pub(crate) const MAX_NESTING: usize = 64;

/// Why `ps` is not read as code: its brackets nest past [`MAX_NESTING`].
pub(crate) fn too_deep(ps: &[Piece]) -> Option<String> {
    let depth = nesting(ps);
    (depth > MAX_NESTING).then(|| {
        format!(
            "its brackets nest {depth} deep, deeper than the policy reads a REPL's code \
             ({MAX_NESTING} levels)"
        )
    })
}

/// How deep the brackets of `ps` nest, unclosed ones counted.
fn nesting(ps: &[Piece]) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0;
    for p in ps {
        match p.token {
            Token::Punct('(' | '[' | '{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            Token::Punct(')' | ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The pieces of `code`, at most `limit` characters of it.
pub(crate) fn pieces(code: &str, limit: usize) -> Vec<Piece> {
    let code: Vec<char> = code.chars().take(limit).collect();
    let mut out: Vec<Piece> = Vec::new();
    let mut i = 0;
    let mut blank = false;
    while i < code.len() {
        let c = code[i];
        if c.is_whitespace() {
            blank = true;
            i += 1;
            continue;
        }
        let token = if matches!(c, '\'' | '"' | '`') {
            // A string prefix glued to it (`f"…"`, `b'…'`, `r"…"`) was read as a name:
            // an `f` prefix makes it a format.
            let prefix = match out.last() {
                Some(Piece {
                    token: Token::Name { path, .. },
                    ..
                }) if !blank && path.len() <= 2 && path.chars().all(|p| "fFrRbBuU".contains(p)) => {
                    Some(path.to_ascii_lowercase())
                }
                _ => None,
            };
            if prefix.is_some() {
                out.pop();
            }
            let raw = prefix.as_deref().is_some_and(|p| p.contains('r'));
            let (text, end) = crate::string_escapes::literal_text(&code, i, raw);
            let computed = prefix.is_some_and(|p| p.contains('f'))
                || text.contains(crate::lex::COMPUTED)
                || (c == '`' && text.contains("${"))
                || (c != '\'' && (text.contains("#{") || perl_interpolates(&text)));
            i = end;
            // Adjacent literals are one string (`"sys" "tem"` in Python and Ruby).
            if let Some(Piece {
                token:
                    Token::Literal {
                        text: last,
                        computed: last_computed,
                    },
                ..
            }) = out.last_mut()
            {
                last.push_str(&text);
                *last_computed |= computed;
                blank = false;
                continue;
            }
            Token::Literal { text, computed }
        } else if ident_char(c) || (c == '.' && code.get(i + 1).is_some_and(|&n| ident_char(n))) {
            let after_call = c == '.'
                && !blank
                && matches!(
                    out.last(),
                    Some(Piece {
                        token: Token::Punct(')' | ']'),
                        ..
                    })
                );
            let start = i;
            while i < code.len() && (ident_char(code[i]) || code[i] == '.') {
                i += 1;
            }
            let path: String = code[start..i].iter().collect();
            Token::Name {
                path: path.trim_matches('.').to_string(),
                after_call,
            }
        } else {
            i += 1;
            Token::Punct(c)
        };
        out.push(Piece {
            token,
            blank_before: blank,
        });
        blank = false;
    }
    out
}

/// A `$name` or `@name` in a double-quoted string: Perl and PHP put the variable's value
/// there (a price like `$5` is not one).
fn perl_interpolates(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    chars
        .windows(2)
        .any(|w| matches!(w[0], '$' | '@') && (w[1].is_alphabetic() || w[1] == '_' || w[1] == '{'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(code: &str) -> Vec<Token> {
        pieces(code, 1000).into_iter().map(|p| p.token).collect()
    }

    fn name(p: &str) -> Token {
        Token::Name {
            path: p.into(),
            after_call: false,
        }
    }

    #[test]
    fn names_literals_and_punctuation() {
        assert_eq!(
            tokens("os.system(f\"rm {x}\")"),
            vec![
                name("os.system"),
                Token::Punct('('),
                Token::Literal {
                    text: "rm {x}".into(),
                    computed: true
                },
                Token::Punct(')'),
            ]
        );
        assert_eq!(
            tokens("require('cp').exec(c)")[4],
            Token::Name {
                path: "exec".into(),
                after_call: true
            }
        );
        assert!(matches!(
            &tokens("`rm ${d}`")[0],
            Token::Literal { computed: true, .. }
        ));
        assert!(matches!(
            &tokens("'$HOME'")[0],
            Token::Literal {
                computed: false,
                ..
            }
        ));
        assert!(matches!(
            &tokens("\"costs $5\"")[0],
            Token::Literal {
                computed: false,
                ..
            }
        ));
    }
}
