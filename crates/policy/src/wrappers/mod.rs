//! Looking through wrappers to the commands they run: `sudo`, `doas`, `env`, `nice`,
//! `nohup`, `timeout`, `time`, `stdbuf`, `ionice`, `xargs`, `command`, `exec`, `eval`,
//! `watch`, `flock`, `chroot`, `setsid`, `busybox`, `ssh`, shells with `-c` or a script on
//! their input, `find -exec`, interpreters' inline code, PowerShell `-Command`.

use std::cell::Cell;
use std::rc::Rc;

use super::inline;
use super::lex::Simple;
use super::runners;
use crate::stdin::{Stdin, input_name, stream_name};

use crate::limits::{MAX_DEPTH, NESTED_BUDGET};

mod environments;
mod kinds;
mod prefixes;
use kinds::{privileged, runs_code, runs_lines, shell_state};
use prefixes::prefix;

/// What a simple command amounts to.
#[derive(Debug, Clone, Default)]
pub struct Effective {
    /// Every argv that will run, outermost first (the wrapper itself included).
    pub argvs: Vec<Vec<String>>,
    /// Command lines handed to a shell (`sh -c "..."`), to be parsed in turn.
    pub shell_lines: Vec<String>,
    /// Script text handed to PowerShell.
    pub powershell: Vec<String>,
    /// The command ran through a privilege wrapper.
    pub privileged: bool,
    /// A shell or interpreter reads code from a pipe whose text cannot be seen.
    pub opaque_script: Option<String>,
    /// The nesting budget ran out: some nested commands were not judged.
    pub exhausted: bool,
}

impl Effective {
    fn absorb(&mut self, sub: Effective) {
        self.argvs.extend(sub.argvs);
        self.shell_lines.extend(sub.shell_lines);
        self.powershell.extend(sub.powershell);
        self.privileged |= sub.privileged;
        if self.opaque_script.is_none() {
            self.opaque_script = sub.opaque_script;
        }
        self.exhausted |= sub.exhausted;
    }
}

/// The searchers: their arguments are patterns and files they read, never a command (their
/// options that run one, `rg --pre`, `ag --pager`, are the runners' rules).
pub(crate) const SEARCHERS: &[&str] = &["grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack"];

pub fn basename(word: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let name = word.rsplit(['/', '\\']).next().unwrap_or(word);
    // Most names are already plain: borrowed, not copied (judging a line asks for them
    // dozens of times).
    let name = if name.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    };
    // Windows runs `curl.exe` for `curl`: one program, one name to judge it by.
    match name.strip_suffix(".exe") {
        Some(stem) if !stem.is_empty() => Cow::Owned(stem.to_string()),
        _ => name,
    }
}

pub fn is_shell(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash"
            | "zsh"
            | "dash"
            | "ksh"
            | "mksh"
            | "ash"
            | "fish"
            | "yash"
            | "posh"
            | "osh"
            | "oksh"
            | "loksh"
            | "lksh"
            | "hush"
            | "bosh"
    )
}

/// Nested argv (find -exec, xargs with its input, ssh's remote command) unwrapped in turn.
fn nested(eff: &mut Effective, argv: Vec<String>, stdin: &Stdin, budget: &Cell<usize>) {
    if argv.is_empty() {
        return;
    }
    if budget.get() == 0 {
        eff.exhausted = true;
        return;
    }
    budget.set(budget.get() - 1);
    let inner = Simple {
        argv,
        ..Simple::default()
    };
    eff.absorb(look_through_budgeted(&inner, stdin, budget));
}

/// `{}` in find's command replaced by each starting point, so `find / -exec rm -rf {} +`
/// is judged as `rm -rf /`.
fn find_exec(eff: &mut Effective, rest: &[String], budget: &Cell<usize>) {
    let mut starts: Vec<&String> = rest
        .iter()
        .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
        .collect();
    let dot = ".".to_string();
    if starts.is_empty() {
        starts.push(&dot);
    }
    let mut i = 0;
    while i < rest.len() {
        if matches!(rest[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < rest.len() && rest[end] != ";" && rest[end] != "+" {
                end += 1;
            }
            for root in &starts {
                if budget.get() == 0 {
                    eff.exhausted = true;
                    break;
                }
                let argv = rest[start..end]
                    .iter()
                    .map(|w| w.replace("{}", root))
                    .collect();
                nested(eff, argv, &Stdin::None, budget);
            }
            i = end;
        }
        i += 1;
    }
}

/// fd's command (`-x`/`--exec` for each path found, `-X`/`--exec-batch` for all of them):
/// its placeholders (`{}`, `{/}`, `{//}`, `{.}`, `{/.}`) replaced by each search path, which
/// is appended when none is given, so `fd -x rm -rf ~` is judged as `rm -rf ~ .` and `fd .
/// / -X rm -rf` as `rm -rf /`.
fn fd_exec(eff: &mut Effective, rest: &[String], budget: &Cell<usize>) {
    /// fd's options that take a value (the next word when not glued).
    const VALUED: &[&str] = &[
        "-e",
        "--extension",
        "-t",
        "--type",
        "-d",
        "--max-depth",
        "--min-depth",
        "--exact-depth",
        "-E",
        "--exclude",
        "-S",
        "--size",
        "--changed-within",
        "--changed-before",
        "-o",
        "--owner",
        "--base-directory",
        "--search-path",
        "-j",
        "--threads",
        "--max-results",
        "-c",
        "--color",
        "--format",
        "--batch-size",
        "--ignore-file",
        "--path-separator",
    ];
    let Some(at) = rest
        .iter()
        .position(|a| matches!(a.as_str(), "-x" | "--exec" | "-X" | "--exec-batch"))
    else {
        return;
    };
    let end = rest[at + 1..]
        .iter()
        .position(|a| a == ";")
        .map_or(rest.len(), |j| at + 1 + j);
    // fd's operands may also follow the command's `;`.
    let options: Vec<&String> = rest[..at]
        .iter()
        .chain(rest.get(end + 1..).unwrap_or(&[]))
        .collect();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < options.len() {
        let a = options[i];
        if VALUED.contains(&a.as_str()) {
            if a == "--search-path" {
                positional.extend(options.get(i + 1).map(|p| (true, p.to_string())));
            }
            i += 2;
            continue;
        }
        if !a.starts_with('-') {
            positional.push((false, a.clone()));
        }
        i += 1;
    }
    // The first operand is the pattern, the rest are where to search.
    let mut roots: Vec<String> = positional
        .iter()
        .enumerate()
        .filter(|(n, (search_path, _))| *search_path || *n > 0)
        .map(|(_, (_, p))| p.clone())
        .collect();
    if roots.is_empty() {
        roots.push(".".into());
    }
    let command = &rest[at + 1..end];
    if command.is_empty() {
        return;
    }
    const PLACEHOLDERS: [&str; 5] = ["{//}", "{/.}", "{/}", "{.}", "{}"];
    let placed = command
        .iter()
        .any(|w| PLACEHOLDERS.iter().any(|p| w.contains(p)));
    for root in &roots {
        if budget.get() == 0 {
            eff.exhausted = true;
            break;
        }
        let mut argv: Vec<String> = command
            .iter()
            .map(|w| {
                PLACEHOLDERS
                    .iter()
                    .fold(w.clone(), |w, p| w.replace(p, root))
            })
            .collect();
        if !placed {
            argv.push(root.clone());
        }
        nested(eff, argv, &Stdin::None, budget);
    }
}

/// `xargs CMD` with literal input: CMD with the input's words appended (or put in place
/// of `-I`'s replace string).
fn xargs(eff: &mut Effective, rest: &[String], stdin: &Stdin, budget: &Cell<usize>) -> Vec<String> {
    let replace = rest.iter().enumerate().find_map(|(i, a)| match a.as_str() {
        "-I" => rest.get(i + 1).cloned(),
        "-i" | "--replace" => Some("{}".to_string()),
        _ => a
            .strip_prefix("--replace=")
            .or_else(|| a.strip_prefix("-I"))
            .or_else(|| a.strip_prefix("-i"))
            .map(str::to_string),
    });
    let cmd = skip_options(
        rest,
        &[
            "-d",
            "-I",
            "-L",
            "-n",
            "-P",
            "-a",
            "-E",
            "-s",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--arg-file",
            "--eof",
            "--max-chars",
        ],
    );
    let cmd = if cmd.is_empty() {
        vec!["echo".to_string()]
    } else {
        cmd.to_vec()
    };
    let from_file = rest
        .iter()
        .any(|a| a == "-a" || a.starts_with("--arg-file") || (a.starts_with("-a") && a.len() > 2));
    let literal = match stdin {
        Stdin::Literal(text) if !from_file => Some(text),
        _ => None,
    };
    let Some(text) = literal else {
        // A shell whose script is the first word xargs reads (`xargs -a FILE sh -c`): the
        // script is in the input, which the line does not show.
        let shell_takes_script = cmd.last().is_some_and(|w| w == "-c")
            && matches!(
                &*basename(&cmd[0]),
                "sh" | "bash" | "dash" | "zsh" | "ksh" | "fish"
            );
        // Or its replace string in the program's place or in a shell's script (`xargs -I{}
        // sh -c '{}' < cmds.txt`): the input becomes the command.
        let placed_in_script = replace.as_ref().is_some_and(|r| {
            cmd[0].contains(r.as_str())
                || (is_shell(&basename(&cmd[0])) && cmd[1..].iter().any(|w| w.contains(r.as_str())))
        });
        if shell_takes_script || placed_in_script {
            eff.opaque_script.get_or_insert_with(|| {
                "xargs hands a shell the script it reads from its input".into()
            });
        }
        return cmd;
    };
    match replace {
        Some(r) => {
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                if budget.get() == 0 {
                    eff.exhausted = true;
                    break;
                }
                let argv = cmd.iter().map(|w| w.replace(&r, line.trim())).collect();
                nested(eff, argv, &Stdin::None, budget);
            }
            Vec::new()
        }
        None => {
            let mut argv = cmd;
            match delimiter(rest) {
                // `-0`/`-d`: items end only at the delimiter, so `printf 'rm -rf ~' | xargs -0
                // sh -c` hands the shell the whole line as its script.
                Some(d) => argv.extend(
                    text.split(d)
                        .map(|item| item.strip_suffix('\n').unwrap_or(item))
                        .filter(|item| !item.is_empty())
                        .map(str::to_string),
                ),
                None => argv.extend(
                    shell_words::split(text)
                        .unwrap_or_else(|_| text.split_whitespace().map(str::to_string).collect()),
                ),
            }
            argv
        }
    }
}

/// The character that ends xargs's items when one is set (`-0`/`--null`, `-d C`,
/// `--delimiter=C`, with the escapes GNU xargs takes).
fn delimiter(rest: &[String]) -> Option<char> {
    let unescape = |d: &str| match d {
        "\\n" => Some('\n'),
        "\\t" => Some('\t'),
        "\\0" => Some('\0'),
        _ => {
            let mut chars = d.chars();
            let c = chars.next()?;
            chars.next().is_none().then_some(c)
        }
    };
    rest.iter().enumerate().find_map(|(i, a)| {
        let cluster = a.len() > 1
            && a.starts_with('-')
            && !a.starts_with("--")
            && a[1..].chars().all(|c| "0rtpx".contains(c));
        if a == "--null" || (cluster && a.contains('0')) {
            return Some('\0');
        }
        match a.as_str() {
            "-d" | "--delimiter" => rest.get(i + 1).and_then(|d| unescape(d)),
            _ => a
                .strip_prefix("--delimiter=")
                .or_else(|| a.strip_prefix("-d"))
                .filter(|d| !d.is_empty())
                .and_then(unescape),
        }
    })
}

/// The command string after a shell's `-c`: its first operand, past the options that may
/// still follow (`bash -c -e 'line'`, `-o errexit`) and a `--` (`sh -c -- 'line'`).
fn command_string(after_c: &[String]) -> Option<&String> {
    let mut j = 0;
    while let Some(a) = after_c.get(j) {
        match a.as_str() {
            "--" => return after_c.get(j + 1),
            "-o" | "+o" | "-O" | "+O" => j += 2,
            _ if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 => j += 1,
            _ => return Some(a),
        }
    }
    None
}

/// A shell's script: `-c LINE`, else its input when it names no script file.
fn shell_script(eff: &mut Effective, name: &str, rest: &[String], stdin: &Stdin) {
    // `-s`: the script is the input and every word after the options is an argument of it
    // (`curl … | sh -s -- --yes`); read as a script file, `which rm | sh -s -- -rf ~` and
    // `bash -s x` passed as running a file of the project's.
    let mut from_input = false;
    let mut i = 0;
    while i < rest.len() {
        let a = &rest[i];
        let cluster = a.starts_with('-') && !a.starts_with("--");
        if cluster && a.contains('c') {
            if let Some(l) = command_string(&rest[i + 1..]) {
                eff.shell_lines.push(l.clone());
            }
            return;
        }
        from_input |= cluster && a.contains('s');
        if a == "-o" || a == "-O" || a == "+O" || a == "+o" || a == "--rcfile" || a == "--init-file"
        {
            i += 2;
            continue;
        }
        let ends_options = a == "--" || (!a.starts_with('-') && !a.starts_with('+'));
        if ends_options && from_input {
            break;
        }
        if a == "--" {
            i += 1;
            if let Some(script) = rest.get(i) {
                script_stream(eff, name, script, stdin);
                return;
            }
            break;
        }
        if ends_options {
            // A script file: its text is not on the line (the project's code), unless the
            // "file" is the input or a stream the line makes.
            script_stream(eff, name, a, stdin);
            return;
        }
        i += 1;
    }
    match stdin {
        Stdin::Literal(text) => eff.shell_lines.push(text.clone()),
        Stdin::Pipe => {
            eff.opaque_script = Some(format!("{name} runs a script read from a pipe"));
        }
        Stdin::None => {}
    }
}

/// A script named by `word` (a shell's script, `source`'s file): the line's own text when it
/// is the input fed by the line; code that cannot be read when it is any other stream; the
/// project's file otherwise (not judged here).
fn script_stream(eff: &mut Effective, name: &str, word: &str, stdin: &Stdin) {
    if !stream_name(word) {
        return;
    }
    match stdin {
        Stdin::Literal(text) if input_name(word) => eff.shell_lines.push(text.clone()),
        _ => {
            eff.opaque_script.get_or_insert_with(|| {
                format!("{name} runs a script read from a stream or a substitution")
            });
        }
    }
}

/// Skip options; `with_value` lists options that take the next word as their value.
fn skip_options<'a>(args: &'a [String], with_value: &[&str]) -> &'a [String] {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            return &args[i + 1..];
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        let takes_value = with_value.contains(&a);
        i += if takes_value { 2 } else { 1 };
    }
    &args[i.min(args.len())..]
}

/// What a command runs, its input taken from its own heredoc or here-string.
///
/// Shared: several rules ask this of the same command of one line (the download-and-run
/// shapes, the kills of a listing, the environment sent), and what it runs is a pure
/// function of the command, so the commands looked through last on this thread are kept.
pub fn look_through(simple: &Simple) -> Rc<Effective> {
    thread_local! {
        static RECENT: crate::recent::Recent<Simple, Effective> =
            const { crate::recent::Recent::new() };
    }
    let compute = || {
        let stdin = if simple.input.is_empty() {
            Stdin::None
        } else {
            Stdin::Literal(simple.input.clone())
        };
        look_through_budgeted(simple, &stdin, &Cell::new(NESTED_BUDGET))
    };
    // A command carrying a script or a long heredoc is not copied to be kept.
    let size = simple.input.len() + simple.argv.iter().map(String::len).sum::<usize>();
    if size > 4096 || !simple.substitutions.is_empty() {
        return Rc::new(compute());
    }
    // What it runs does not depend on where in the line it stands (its pipeline); every
    // other part is compared (named one by one: a part added later must be added here).
    let same = |s: &Simple| {
        let Simple {
            argv,
            redirects,
            substitutions,
            pipeline: _,
            input,
            assignments,
            reads,
        } = s;
        *argv == simple.argv
            && *input == simple.input
            && *redirects == simple.redirects
            && *assignments == simple.assignments
            && *reads == simple.reads
            && *substitutions == simple.substitutions
    };
    RECENT.with(|recent| recent.get_or_compute(same, || simple.clone(), compute))
}

/// What a command runs, given what its standard input holds, sharing a nesting budget with
/// the rest of its line.
pub fn look_through_budgeted(simple: &Simple, stdin: &Stdin, budget: &Cell<usize>) -> Effective {
    let mut eff = Effective::default();
    let mut argv: Vec<String> = simple.argv.clone();
    for _ in 0..MAX_DEPTH {
        if argv.is_empty() {
            break;
        }
        // zsh's `=cmd` is the path of `cmd` (`=rm -rf ~` runs `/bin/rm`).
        if let Some(named) = argv[0].strip_prefix('=').filter(|n| !n.is_empty()) {
            argv[0] = named.to_string();
        }
        eff.argvs.push(argv.clone());
        let name = basename(&argv[0]);
        let rest = &argv[1..];
        let next = privileged(&mut eff, &name, rest)
            .or_else(|| shell_state(&mut eff, &name, rest, stdin))
            .or_else(|| prefix(&name, rest))
            .or_else(|| runs_lines(&mut eff, &name, rest, stdin, budget))
            .or_else(|| environments::run(&mut eff, &name, rest))
            .unwrap_or_else(|| runs_code(&mut eff, &name, rest, stdin, budget));
        if next.is_empty() {
            break;
        }
        argv = next;
    }
    eff
}

/// The value of option `-short` (in a cluster too) or `--long` (abbreviated too) given
/// anywhere among `args` — `su alice -c cmd` puts it after a word that is not an option.
fn option_anywhere(args: &[String], short: char, long: &str) -> Option<String> {
    (0..args.len()).find_map(|i| {
        crate::getopt::option_value(
            &args[i..i + 1]
                .iter()
                .chain(args.get(i + 1))
                .cloned()
                .collect::<Vec<_>>(),
            Some(short),
            Some(long),
        )
    })
}
