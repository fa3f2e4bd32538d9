//! The environment a REPL's line changes for the programs it starts later, as the shell
//! assignment it amounts to: `os.environ["LD_PRELOAD"] = "/tmp/x.so"` at Python's prompt
//! is `export LD_PRELOAD=/tmp/x.so`, which the rules on variables judge (a loader's
//! library, options that load code, a command some program runs).

use crate::repl_tokens::{Piece, Token};

/// Where each language keeps the environment it hands on.
const ENVIRONMENTS: &[&str] = &["os.environ", "process.env", "ENV", "Deno.env"];

/// `export NAME=VALUE` for each variable `ps` sets (`$(…)` when the value is computed).
pub(crate) fn env_lines(ps: &[Piece]) -> Vec<String> {
    let t: Vec<&Token> = ps.iter().map(|p| &p.token).collect();
    let mut out = Vec::new();
    for k in 0..t.len() {
        let Token::Name { path, .. } = t[k] else {
            continue;
        };
        // `os.environ["NAME"] = v`, `ENV['NAME'] = v`, `process.env["NAME"] = v`.
        let set = if ENVIRONMENTS.contains(&path.as_str()) {
            match t.get(k + 1..k + 5) {
                Some(
                    [
                        Token::Punct('['),
                        Token::Literal { text, .. },
                        Token::Punct(']'),
                        Token::Punct('='),
                    ],
                ) => Some((text.clone(), k + 5)),
                _ => None,
            }
        // `process.env.NAME = v`.
        } else if let Some(name) = path.strip_prefix("process.env.") {
            matches!(t.get(k + 1), Some(Token::Punct('='))).then(|| (name.to_string(), k + 2))
        // `os.putenv("NAME", v)`, `Deno.env.set("NAME", v)`, `os.environ.setdefault(…)`.
        } else if matches!(
            path.as_str(),
            "os.putenv" | "putenv" | "Deno.env.set" | "os.environ.setdefault" | "setenv"
        ) {
            match t.get(k + 1..k + 4) {
                Some(
                    [
                        Token::Punct('('),
                        Token::Literal { text, .. },
                        Token::Punct(','),
                    ],
                ) => Some((text.clone(), k + 4)),
                // PHP's `putenv("NAME=v")`: name and value in one literal.
                Some(
                    [
                        Token::Punct('('),
                        Token::Literal { text, .. },
                        Token::Punct(')'),
                    ],
                ) => {
                    out.extend(text.split_once('=').map(|(n, v)| export(n, Some(v))));
                    None
                }
                _ => None,
            }
        } else {
            None
        };
        let Some((name, at)) = set else {
            continue;
        };
        // `==` compares.
        if matches!(t.get(at), Some(Token::Punct('='))) {
            continue;
        }
        let value = match t.get(at..at + 1) {
            Some(
                [
                    Token::Literal {
                        text,
                        computed: false,
                    },
                ],
            ) if !matches!(t.get(at + 1), Some(Token::Punct('+' | '.' | '%' | '['))) => {
                Some(text.as_str())
            }
            _ => None,
        };
        out.push(export(&name, value));
    }
    out
}

/// The shell's `export NAME=VALUE`, a value the line computes as a substitution.
fn export(name: &str, value: Option<&str>) -> String {
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !valid {
        return String::new();
    }
    match value {
        Some(v) => format!("export {name}={}", shell_words::quote(v)),
        None => format!("export {name}=\"$(value)\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(code: &str) -> Vec<String> {
        env_lines(&crate::repl_tokens::pieces(code, 4096))
    }

    #[test]
    fn each_languages_environment_set_is_an_export() {
        assert_eq!(
            lines("os.environ['LD_PRELOAD'] = '/tmp/x.so'"),
            ["export LD_PRELOAD=/tmp/x.so"]
        );
        assert_eq!(
            lines("process.env.NODE_OPTIONS = '--require /tmp/x.js'"),
            ["export NODE_OPTIONS='--require /tmp/x.js'"]
        );
        assert_eq!(lines("ENV['RUBYOPT'] = x"), ["export RUBYOPT=\"$(value)\""]);
        assert_eq!(lines("os.putenv('PAGER', 'sh')"), ["export PAGER=sh"]);
        assert_eq!(
            lines("putenv('BASH_ENV=/tmp/x')"),
            ["export BASH_ENV=/tmp/x"]
        );
        assert!(lines("if os.environ['CI'] == '1': pass").is_empty());
        assert!(lines("print(os.environ['HOME'])").is_empty());
    }
}
