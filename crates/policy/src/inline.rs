//! Code handed to a script interpreter on its command line (`python -c`, `perl -e`,
//! `node -e`, `ruby -e`, `php -r`, an awk program) or on its input: the commands it hands to
//! the system (`os.system("…")`, `subprocess.run([…])`, `execSync('…')`, perl/ruby
//! backticks) and the trees it deletes (`shutil.rmtree("/")`, `FileUtils.rm_rf`,
//! `fs.rmSync`), read off its string literals so the same rules judge them as commands.
//! A literal that is not an argument of such a call is data and judged by nothing.

use crate::inline_literals::{Literal, literals};
use crate::stdin::{Stdin, input_name, stream_name};

/// Longest inline program scanned (the rest is still run; a program this long is judged
/// on its first part).
const MAX_CODE: usize = 64 * 1024;

pub(crate) use crate::runner_names::{FILE_DELETES, OTHER_RUNNERS, SHELL_CALLS, TREE_DELETES};

/// Interpreters and the option that takes their inline program.
pub fn is_interpreter(name: &str) -> bool {
    code_flags(name).is_some() || is_awk(name)
}

fn language(name: &str) -> &str {
    let n = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match n {
        "python" | "pypy" | "ipython" => "python",
        "nodejs" | "bun" | "deno" => "node",
        other => other,
    }
}

fn code_flags(name: &str) -> Option<&'static [&'static str]> {
    match language(name) {
        "python" => Some(&["-c"]),
        "perl" => Some(&["-e", "-E"]),
        "ruby" | "lua" | "rscript" => Some(&["-e"]),
        "node" => Some(&["-e", "--eval", "-p", "--print", "eval"]),
        "php" => Some(&["-r"]),
        _ => None,
    }
}

fn is_awk(name: &str) -> bool {
    matches!(name, "awk" | "gawk" | "mawk" | "nawk")
}

/// What an interpreter's program hands to the system.
#[derive(Debug, Default)]
pub struct Found {
    pub shell_lines: Vec<String>,
    pub argvs: Vec<Vec<String>>,
    /// The program comes from a pipe and cannot be read.
    pub opaque: Option<String>,
}

/// The program of `name args…` (inline, or its literal input when it names no script).
pub fn scan(name: &str, args: &[String], stdin: &Stdin) -> Found {
    let mut found = Found::default();
    let lang = language(name);
    let code = if is_awk(name) {
        awk_program(args)
    } else {
        inline_code(name, args)
    };
    // Python modules that run statements or debugger commands given as arguments:
    // `python3 -m timeit -s SETUP STMT`, `python3 -m pdb -c CMD script.py`.
    if lang == "python" {
        let module = args
            .iter()
            .position(|a| a == "-m")
            .and_then(|i| args.get(i + 1))
            .map(String::as_str);
        let inline = match module {
            Some("timeit") => args.len() > 2,
            Some("pdb") => args.iter().any(|a| a == "-c" || a.starts_with("--command")),
            _ => false,
        };
        if inline {
            found.opaque = Some(format!(
                "{name} -m {} runs the statements or commands it is given, which are not read",
                module.unwrap_or_default()
            ));
        }
    }
    // gawk's extensions are shared libraries: `@load "x"` in the program, `-l x`/`--load x`.
    if is_awk(name)
        && (code.as_deref().is_some_and(|c| c.contains("@load"))
            || crate::getopt::has_option(args, Some('l'), Some("load")))
    {
        found.opaque = Some(format!(
            "{name} loads an extension (a shared library), whose code is not on the line"
        ));
    }
    if lang == "perl"
        && let Some(module) = perl_module(args)
    {
        found.opaque = Some(format!(
            "perl loads the module {module}, whose code is not on the line"
        ));
    }
    // A module given as a `data:` URL (`node --import data:text/javascript,…`, `deno run
    // data:…`): its text is code on the line, read as `-e`'s is; base64 is not read.
    if lang == "node" {
        for url in args
            .iter()
            .filter_map(|a| a.find("data:").map(|at| &a[at + 5..]))
        {
            match url.split_once(',') {
                Some((media, body)) if !media.contains(";base64") => {
                    let text = percent_encoding::percent_decode_str(body).decode_utf8_lossy();
                    read_code(name, lang, &text, &mut found);
                }
                _ => {
                    found.opaque = Some(format!(
                        "{name} runs a module given as an encoded data: URL, which is not read"
                    ));
                }
            }
        }
    }
    match code {
        // Code the line computes (`python3 -c "$CODE"`, `perl -e "$(cat x)"`): what runs is
        // not on the line.
        Some(code) if code.contains(super::lex::COMPUTED) || mentions_variable(&code) => {
            found.opaque = Some(format!(
                "{name} runs code from a variable or a substitution, which the line does not show"
            ));
        }
        Some(code) => read_code(name, lang, &code, &mut found),
        None if reads_program_from_stdin(args) => match stdin {
            Stdin::Literal(text) => read_code(name, lang, text, &mut found),
            Stdin::Pipe if !is_awk(name) => {
                found.opaque = Some(format!("{name} runs a program read from a pipe"));
            }
            _ => {}
        },
        // `python3 /dev/stdin <<< …`, `node <(curl …)`: the "script file" is a stream.
        None => match args.iter().find(|a| !a.starts_with('-')) {
            Some(file) if !is_awk(name) && stream_name(file) => match stdin {
                Stdin::Literal(text) if input_name(file) => read_code(name, lang, text, &mut found),
                _ => {
                    found.opaque = Some(format!(
                        "{name} runs a program read from a stream or a substitution"
                    ));
                }
            },
            _ => {}
        },
    }
    found
}

/// The commands `code` hands to the system, and whether it uses anything not known to be
/// harmless (then it cannot be read, and a person decides).
fn read_code(name: &str, lang: &str, code: &str, found: &mut Found) {
    scan_code(lang, code, found);
    if found.opaque.is_some() {
        return;
    }
    let word = if is_awk(name) {
        awk_unread(code)
    } else {
        let code: String = code.chars().take(MAX_CODE).collect();
        super::inline_words::unread_word(lang, &code)
    };
    if let Some(word) = word {
        found.opaque = Some(format!(
            "{name} runs code that uses {word:?}, which is not known to be harmless"
        ));
    } else if !is_awk(name)
        && let Some(why) = crate::repl::unread(code)
    {
        // Words known to be harmless, put together so that what runs is computed
        // (`system(@ARGV)`: the command is the program's own arguments).
        found.opaque = Some(format!("{name}: {why}"));
    }
}

/// What an awk program does beyond reading and printing: a command it pipes to or from
/// (`print | "sh"`, `"cmd" | getline`), or `system` with anything but a literal (the
/// literal ones are judged as commands).
fn awk_unread(code: &str) -> Option<String> {
    let outside_patterns: String = {
        // `/a|b/` is a pattern, not a pipe: patterns are taken out first.
        let mut out = String::new();
        let mut in_pattern = false;
        let mut in_string = false;
        let mut prev = ' ';
        for c in code.chars() {
            match c {
                '"' if !in_pattern && prev != '\\' => in_string = !in_string,
                '/' if !in_string && prev != '\\' => in_pattern = !in_pattern,
                _ => {}
            }
            if !in_pattern && !in_string {
                out.push(c);
            }
            prev = c;
        }
        out
    };
    let pipes = outside_patterns.replace("||", "");
    if pipes.contains('|') {
        return Some("a pipe to or from a command".into());
    }
    let system_with_literal = code.match_indices("system").all(|(at, _)| {
        code[at + "system".len()..]
            .trim_start()
            .strip_prefix('(')
            .is_some_and(|r| r.trim_start().starts_with('"'))
    });
    (!system_with_literal).then(|| "system".into())
}

/// A module `perl -M`/`-m` loads before the program that is not one of the everyday ones
/// (its `import` runs first, with whatever arguments the option gives it).
fn perl_module(args: &[String]) -> Option<String> {
    const EVERYDAY: &[&str] = &[
        "strict",
        "warnings",
        "utf8",
        "feature",
        "List::Util",
        "Scalar::Util",
        "Data::Dumper",
        "JSON::PP",
        "Time::HiRes",
        "Getopt::Long",
        "MIME::Base64",
        "Digest::MD5",
        "Digest::SHA",
        "POSIX",
    ];
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "-e" || a == "-E" || a == "--" || !a.starts_with('-') {
            return None;
        }
        let spec = match a.strip_prefix("-M").or_else(|| a.strip_prefix("-m")) {
            Some("") => {
                i += 1;
                args.get(i).map(String::as_str)
            }
            Some(rest) => Some(rest.trim_start_matches('-')),
            None => None,
        };
        if let Some(spec) = spec {
            let module = spec.split(['=', ' ']).next().unwrap_or("");
            if !EVERYDAY.contains(&module) {
                return Some(module.to_string());
            }
        }
        i += 1;
    }
    None
}

/// Whether inline code is (mostly) a shell variable: `$X`, `${X}` — the shell substitutes
/// it before the interpreter sees anything. (`$` inside real code — a Perl scalar, a regex —
/// is not a whole word.)
fn mentions_variable(code: &str) -> bool {
    let t = code.trim();
    let name = t
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| t.strip_prefix('$'));
    name.is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

fn inline_code(name: &str, args: &[String]) -> Option<String> {
    let flags = code_flags(name)?;
    // Options whose value is the next word (`python3 -W ignore -c …`, `node -r x -e …`),
    // and letters that take a value in a cluster (what follows them is that value).
    let (valued_words, valued_letters): (&[&str], &str) = match language(name) {
        "python" => (&["-W", "-X"], "WXm"),
        "node" => (
            &[
                "-r",
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "-C",
                "--conditions",
                "--input-type",
                "--env-file",
            ],
            "rC",
        ),
        _ => (&["-I", "-r", "-C", "-E", "-M", "-m"], "MmIxWXrC"),
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if flags.contains(&a) {
            return args.get(i + 1).cloned();
        }
        if valued_words.contains(&a) {
            i += 2;
            continue;
        }
        // Clustered short flags ending in the code flag: perl -le, python -Ic. Flags that
        // take a value (`-MFile::Path=x`, `-Idir`, `-W…`, `-r mod`) end a cluster: what
        // follows them is that value.
        if a.len() > 2
            && a.starts_with('-')
            && !a.starts_with("--")
            && a[1..]
                .chars()
                .all(|c| c.is_ascii_alphabetic() && !valued_letters.contains(c))
        {
            let last = a.chars().last();
            if flags
                .iter()
                .any(|f| f.len() == 2 && f.chars().nth(1) == last)
            {
                return args.get(i + 1).cloned();
            }
        }
        if !a.starts_with('-') {
            return None;
        }
        i += 1;
    }
    None
}

fn awk_program(args: &[String]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-f" | "--file" => return None,
            "-F" | "-v" | "--assign" | "--field-separator" => i += 2,
            _ if a.starts_with('-') && a.len() > 1 => i += 1,
            _ => return Some(args[i].clone()),
        }
    }
    None
}

fn reads_program_from_stdin(args: &[String]) -> bool {
    args.iter().all(|a| a.starts_with('-'))
}

pub(crate) fn scan_code(lang: &str, code: &str, found: &mut Found) {
    scan_code_as(&[lang], code, found);
}

/// `code` read as each of `langs` (a REPL line whose language is not known): its deletes and
/// literals found once, not once per language.
pub(crate) fn scan_code_as(langs: &[&str], code: &str, found: &mut Found) {
    found
        .shell_lines
        .extend(crate::repl_trees::home_deletes(code));
    let code: Vec<char> = code.chars().take(MAX_CODE).collect();
    let literals = literals(&code);
    for lang in langs {
        scan_literals(lang, &literals, found);
    }
}

fn scan_literals(lang: &str, literals: &[Literal], found: &mut Found) {
    let mut i = 0;
    while i < literals.len() {
        let lit = &literals[i];
        if lit.callee == "open"
            && let Some(command) = pipe_open(&lit.text, literals.get(i + 1))
        {
            found.shell_lines.push(command);
        }
        if lit.backtick && matches!(lang, "perl" | "ruby" | "php") {
            found.shell_lines.push(lit.text.clone());
        } else if SHELL_CALLS.contains(&lit.callee.as_str())
            || OTHER_RUNNERS.contains(&lit.callee.as_str())
        {
            // A list (`run(["rm", "-rf", "/"])`), or a program and its arguments' list
            // (`spawnSync('rm', ['-rf', '/'])`, `execFile`, `os.execvp`): an argv.
            let listed = literals
                .get(i + 1)
                .is_some_and(|next| next.in_list && next.callee == lit.callee);
            if lit.in_list || listed {
                let mut argv = vec![lit.text.clone()];
                while literals
                    .get(i + 1)
                    .is_some_and(|next| next.in_list && next.callee == lit.callee)
                {
                    i += 1;
                    argv.push(literals[i].text.clone());
                }
                // A program's path and then its whole argv (`os.execv("/bin/sh", ["sh",
                // "-c", …])`): the list alone is a reading too.
                if !lit.in_list && argv.len() > 1 {
                    found.argvs.push(argv[1..].to_vec());
                }
                found.argvs.push(argv);
            }
            // A program's word outside a list is also a line a shell may read (`spawn('rm
            // -rf ~', [], {shell: true})`).
            if !lit.in_list {
                found.shell_lines.push(lit.text.clone());
            }
        } else if TREE_DELETES.contains(&lit.callee.as_str()) {
            found
                .argvs
                .push(vec!["rm".into(), "-rf".into(), lit.text.clone()]);
        } else if FILE_DELETES.contains(&lit.callee.as_str()) && !lit.in_list {
            found.argvs.push(vec!["rm".into(), lit.text.clone()]);
        }
        i += 1;
    }
}

/// The command an `open` runs: Ruby's `open("|cmd")` (`Kernel.open`, `URI.open`), Perl's
/// two-argument `open(F, "cmd|")` and `open(F, "|cmd")`, and its three-argument
/// `open(F, "-|", "cmd")` whose command is the next literal.
fn pipe_open(text: &str, next: Option<&Literal>) -> Option<String> {
    let t = text.trim();
    if matches!(t, "-|" | "|-") {
        return next.map(|n| n.text.clone());
    }
    t.strip_prefix('|')
        .or_else(|| t.strip_suffix('|'))
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(name: &str, code: &str) -> Found {
        scan(name, &["-c".into(), code.into()], &Stdin::None)
    }

    #[test]
    fn system_calls_are_commands() {
        let f = found("python3", "import os; os.system('rm -rf /')");
        assert_eq!(f.shell_lines, vec!["rm -rf /"]);
        let f = found(
            "python3",
            "import subprocess; subprocess.run(['rm', '-rf', '/'])",
        );
        assert_eq!(f.argvs, vec![vec!["rm", "-rf", "/"]]);
        let f = found("python", "import shutil; shutil.rmtree(\"/etc\")");
        assert_eq!(f.argvs, vec![vec!["rm", "-rf", "/etc"]]);
        let f = scan(
            "perl",
            &["-e".into(), "system(\"mkfs /dev/sda\"); `halt`".into()],
            &Stdin::None,
        );
        assert_eq!(f.shell_lines, vec!["mkfs /dev/sda", "halt"]);
        let f = scan(
            "node",
            &[
                "-e".into(),
                "require('child_process').execSync('reboot')".into(),
            ],
            &Stdin::None,
        );
        assert_eq!(f.shell_lines, vec!["reboot"]);
        let f = scan(
            "awk",
            &["BEGIN { system(\"rm -rf ~\") }".into()],
            &Stdin::None,
        );
        assert_eq!(f.shell_lines, vec!["rm -rf ~"]);
    }

    #[test]
    fn data_literals_are_not_commands() {
        let f = found("python3", "print('rm -rf /')");
        assert!(f.shell_lines.is_empty() && f.argvs.is_empty());
        let f = scan(
            "node",
            &["-e".into(), "console.log(`rm -rf /`)".into()],
            &Stdin::None,
        );
        assert!(f.shell_lines.is_empty());
        let f = scan("python3", &["script.py".into()], &Stdin::Pipe);
        assert!(f.opaque.is_none());
    }

    #[test]
    fn multibyte_flags_do_not_panic() {
        // Found by the policy fuzzer: a flag cluster ending in a two-byte character.
        let f = scan(
            "node",
            &["-rfunctio-\u{1}\u{a0}".into(), "x".into()],
            &Stdin::None,
        );
        assert!(f.shell_lines.is_empty());
        let f = scan(
            "perl",
            &["-lé".into(), "system('halt')".into()],
            &Stdin::None,
        );
        assert!(f.shell_lines.is_empty());
    }

    #[test]
    fn programs_on_the_input() {
        let f = scan(
            "python3",
            &[],
            &Stdin::Literal("import os\nos.system('poweroff')\n".into()),
        );
        assert_eq!(f.shell_lines, vec!["poweroff"]);
        assert!(scan("python3", &[], &Stdin::Pipe).opaque.is_some());
    }
}
