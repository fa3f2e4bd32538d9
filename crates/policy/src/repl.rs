//! A line typed into a terminal read as a REPL would read it: its foreground program is not
//! known when its input is judged, so what Python, Node, Ruby, Perl, PHP or Lua would hand
//! to the system is looked for. The calls with literal commands are read (`repl_calls`) and
//! judged as command lines; a call that would run what the line computes, or a runner taken
//! without being called (to call later under another name), is named (`unread`), so that
//! a person decides.

use crate::repl_tokens::{Piece, Token, pieces};

/// Longest line read.
pub(crate) const MAX_LINE: usize = 64 * 1024;

/// The commands a line typed into a terminal hands to the system if a REPL reads it
/// (`os.system("…")` at Python's prompt, `execSync('…')` at Node's, backticks at Ruby's):
/// a terminal's foreground program is not known when its input is judged, so the calls of
/// every REPL's language are looked for. Only the calls count: the rest of a shell line read
/// as code would be words no REPL knows.
pub fn repl_calls(line: &str) -> Vec<String> {
    repl_calls_within(line, 3)
}

fn repl_calls_within(line: &str, depth: usize) -> Vec<String> {
    let ps = pieces(line, MAX_LINE);
    if crate::repl_tokens::too_deep(&ps).is_some() {
        // Not read as code (`unread` warns about such a line).
        return Vec::new();
    }
    let mut found = crate::inline::Found::default();
    crate::inline::scan_code_as(&["python", "node", "ruby"], line, &mut found);
    let mut out = found.shell_lines;
    // The files it writes or reads (`open(os.path.expanduser("~/.bashrc"), "a")`).
    out.extend(crate::repl_files::file_lines(&ps));
    // The environment it hands on to what it starts later (`os.environ["LD_PRELOAD"] = …`).
    out.extend(
        crate::repl_env::env_lines(&ps)
            .into_iter()
            .filter(|l| !l.is_empty()),
    );
    out.extend(found.argvs.iter().map(shell_words::join));
    // Programs named as a module's attributes (`sh.rm("-rf", "/")`).
    out.extend(crate::repl_runners::attribute_commands(&ps));
    out.extend(crate::repl_runners::tcl_delete(line));
    out.extend(crate::repl_runners::environment_sent(&ps));
    // Code handed to the language itself as a string (`exec("import os; os.system(…)")`,
    // `eval(compile("…", …))`, `new Function("…")`): read as another line typed there.
    if depth > 0 {
        for code in code_strings(line) {
            out.extend(repl_calls_within(&code, depth - 1));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The string literals given first to a call that runs code: Python's `exec`, `eval` and
/// `compile`, JavaScript's `eval` and `Function`, Ruby's `eval` and `instance_eval`.
fn code_strings(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !line.contains('(') {
        return out;
    }
    let mut read: Option<(Vec<char>, Vec<usize>)> = None;
    // pdb's, profile's, timeit's, `code`'s and Node's `vm` runners take code as a string too.
    for call in [
        "exec(",
        "eval(",
        "compile(",
        "Function(",
        "run(",
        "runeval(",
        "runctx(",
        "timeit(",
        "repeat(",
        "Timer(",
        "runsource(",
        "runcode(",
        // Node's `vm`.
        "runInThisContext(",
        "runInNewContext(",
        "runInContext(",
        "Script(",
    ] {
        let mut from = 0;
        while let Some(at) = line[from..].find(call) {
            // The line's characters, read once and only when a call is found.
            let (chars, offsets) = read.get_or_insert_with(|| {
                (
                    line.chars().collect(),
                    line.char_indices().map(|(b, _)| b).collect(),
                )
            });
            let byte = from + at + call.len();
            from = byte;
            let mut j = offsets.partition_point(|&o| o < byte);
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            // A prefix glued to the quote (`exec(r"…")`), then the string, read as the
            // language builds it (escapes, triple quotes).
            let mut q = j;
            while q < chars.len() && q - j < 2 && chars[q].is_ascii_alphabetic() {
                q += 1;
            }
            if !chars.get(q).is_some_and(|c| matches!(c, '"' | '\'' | '`')) {
                continue;
            }
            let prefix = crate::string_escapes::prefix_before(chars, q);
            if q > j && prefix.is_none() {
                continue;
            }
            let raw = prefix.is_some_and(|p| p.contains('r'));
            let (text, end) = crate::string_escapes::literal_text(chars, q, raw);
            out.push(text);
            from = offsets.get(end).copied().unwrap_or(line.len());
        }
    }
    out
}

/// Calls that run a command whatever they are called on (lower-cased).
const RUNS_COMMANDS: &[&str] = &[
    "system",
    "popen",
    "popen2",
    "popen3",
    "execsync",
    "spawnsync",
    "execfilesync",
    "execfile",
    "shell_exec",
    "passthru",
    "proc_open",
    "check_output",
    "check_call",
    "getoutput",
    "getstatusoutput",
    "capture2",
    "capture2e",
    "capture3",
    "execv",
    "execve",
    "execvp",
    "execvpe",
    "execl",
    "execle",
    "execlp",
    "execlpe",
    "spawnl",
    "spawnle",
    "spawnlp",
    "spawnlpe",
    "spawnv",
    "spawnve",
    "spawnvp",
    "spawnvpe",
    "posix_spawn",
    "posix_spawnp",
];

/// Modules (or what they are commonly bound to) whose members below run commands.
const COMMAND_MODULES: &[&str] = &[
    "os",
    "subprocess",
    "child_process",
    "cp",
    "pty",
    "io",
    "kernel",
    "open3",
    "bun",
    "deno",
    "commands",
    "posix",
];

/// Members of those modules that run a command (`subprocess.run`, `os.execute`, `cp.exec`).
const COMMAND_MEMBERS: &[&str] = &[
    "run", "call", "exec", "spawn", "execute", "popen", "command", "fork",
];

/// Modules whose whole purpose is running commands: bound to another name, every later
/// call through that name is out of sight.
const COMMAND_ONLY_MODULES: &[&str] =
    &["subprocess", "child_process", "node:child_process", "open3"];

/// Calls that run code given to them (case as written: `Function` is JavaScript's
/// constructor, `function` its keyword).
const RUNS_CODE: &[&str] = &[
    "exec",
    "eval",
    "Function",
    "instance_eval",
    "class_eval",
    "module_eval",
    "instance_exec",
    "__import__",
    "import_module",
    "require",
    "execfile",
    "dofile",
    "loadstring",
];

/// Ways into native code, where no call can be read.
const NATIVE: &[&str] = &[
    "ctypes",
    "cffi",
    "process.binding",
    "process._linkedbinding",
    "process.dlopen",
    "fiddle",
    "ffi.load",
    "ffi.c",
];

/// Why the code of `line`, read as a REPL's, hands the system something the line does not
/// show: `None` when every way it has to the system is called with literals.
pub fn unread(line: &str) -> Option<String> {
    let ps = pieces(line, MAX_LINE);
    if let Some(why) = crate::repl_tokens::too_deep(&ps) {
        return Some(why);
    }
    // Read once for the line (asked of every name, it made a line of many names quadratic).
    let child_process = binds_child_process(&ps);
    for (k, p) in ps.iter().enumerate() {
        let why = match &p.token {
            Token::Name { path, after_call } => {
                name_unread(&ps, k, path, *after_call, child_process)
            }
            Token::Literal { text, .. } => literal_unread(&ps, k, text),
            Token::Punct(_) => None,
        };
        if why.is_some() {
            return why;
        }
    }
    None
}

/// What a name can do: run commands, run code, or neither.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    Commands,
    Code,
}

pub(crate) fn runs(path: &str, after_call: bool, line_binds_child_process: bool) -> Option<Runs> {
    let segments: Vec<&str> = path.split('.').collect();
    let last = segments.last().copied().unwrap_or_default();
    let lower = last.to_ascii_lowercase();
    let qualifier = match segments.len() {
        1 if after_call => Some(")".to_string()),
        1 => None,
        n => Some(segments[n - 2].to_ascii_lowercase()),
    };
    if RUNS_COMMANDS.contains(&lower.as_str())
        || crate::inline::OTHER_RUNNERS.contains(&lower.as_str())
    {
        return Some(Runs::Commands);
    }
    let module_member = COMMAND_MEMBERS.contains(&lower.as_str())
        && qualifier.as_deref().is_some_and(|q| {
            COMMAND_MODULES.contains(&q) || (q == ")" && line_binds_child_process)
        });
    if module_member {
        return Some(Runs::Commands);
    }
    (segments.len() == 1 && !after_call && RUNS_CODE.contains(&last)).then_some(Runs::Code)
}

fn name_unread(
    ps: &[Piece],
    k: usize,
    path: &str,
    after_call: bool,
    child_process: bool,
) -> Option<String> {
    let lower = path.to_ascii_lowercase();
    if matches!(lower.as_str(), "getattr" | "reflect.get")
        && let Some(why) = computed_member(ps, k)
    {
        return Some(why);
    }
    if let Some(why) = crate::repl_runners::unread(ps, k, path, after_call)
        && !only_looked_at(ps, k)
    {
        return Some(why);
    }
    let native = |n: &&str| {
        lower
            .strip_prefix(*n)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    };
    if NATIVE.iter().any(native) {
        return Some(format!(
            "{path} reaches native code, whose calls cannot be read"
        ));
    }
    if COMMAND_ONLY_MODULES.contains(&lower.as_str()) && !plain_import(ps, k) {
        return Some(format!(
            "the module {path} is bound to a name here: what is later run through it cannot \
             be read"
        ));
    }
    let kind = runs(path, after_call, child_process)?;
    let next = ps.get(k + 1).map(|p| &p.token);
    if next == Some(&Token::Punct('(')) {
        return call_unread(ps, k + 1, path, kind);
    }
    if kind == Runs::Code {
        return None;
    }
    // Not called here: taken as a value (`f = os.system`, `from os import system`), or
    // called in Ruby's and Perl's way without brackets (`system cmd`).
    let bare = !path.contains('.') && !after_call;
    let taken = !bare
        || matches!(
            k.checked_sub(1).map(|j| &ps[j].token),
            Some(Token::Name { path, .. }) if path == "import"
        )
        || matches!(
            k.checked_sub(1).map(|j| &ps[j].token),
            Some(Token::Punct('=' | ',' | '(' | '{' | '[' | ':'))
        );
    let called_bare = bare
        && ps.get(k + 1).is_some_and(|n| {
            n.blank_before
                && matches!(
                    &n.token,
                    Token::Name { .. } | Token::Literal { computed: true, .. }
                )
        });
    (taken || called_bare)
        .then(|| {
            format!(
                "{path} runs commands and is not called here with a literal command: what it will \
                 run cannot be read"
            )
        })
        .filter(|_| !only_looked_at(ps, k))
}

/// `getattr(os, 'sys' + 'tem')`: a member of a module that runs commands (or of a module
/// imported by a name), looked up by a name the line computes rather than writes.
fn computed_member(ps: &[Piece], k: usize) -> Option<String> {
    if ps.get(k + 1).map(|p| &p.token) != Some(&Token::Punct('(')) {
        return None;
    }
    let args = arguments(ps, k + 1);
    let (object, member) = (args.first()?, args.get(1)?);
    let of_a_runner_module = object.iter().any(|p| match &p.token {
        Token::Name { path, .. } => {
            let lower = path.to_ascii_lowercase();
            COMMAND_MODULES.contains(&lower.as_str())
                || lower == "__import__"
                || lower.starts_with("importlib")
        }
        Token::Literal { text, .. } => COMMAND_MODULES.contains(&text.as_str()),
        Token::Punct(_) => false,
    });
    let written = matches!(
        member.iter().map(|p| &p.token).collect::<Vec<_>>()[..],
        [Token::Literal {
            computed: false,
            ..
        }]
    );
    (of_a_runner_module && !written).then(|| {
        "a member of a module that runs commands is looked up by a name the line computes: \
         what it calls cannot be read"
            .to_string()
    })
}

/// Whether the name at `k` is the whole argument of a call that only looks at it
/// (`help(os.system)`, `dir(subprocess.run)`, `print(os.popen)`): nothing keeps it.
fn only_looked_at(ps: &[Piece], k: usize) -> bool {
    let (Some(before), Some(open), Some(close)) = (
        k.checked_sub(2).map(|j| &ps[j].token),
        k.checked_sub(1).map(|j| &ps[j].token),
        ps.get(k + 1).map(|p| &p.token),
    ) else {
        return false;
    };
    matches!(open, Token::Punct('('))
        && matches!(close, Token::Punct(')'))
        && matches!(before, Token::Name { path, after_call: false }
            if matches!(path.as_str(), "help" | "dir" | "type" | "repr" | "print" | "callable"
                | "inspect.signature" | "inspect.getdoc" | "inspect.getsource"))
}

/// `import subprocess` as a statement of its own: its calls stay `subprocess.run(…)`.
pub(crate) fn plain_import(ps: &[Piece], k: usize) -> bool {
    let before = k.checked_sub(1).map(|j| &ps[j].token);
    let after = ps.get(k + 1).map(|p| &p.token);
    matches!(before, Some(Token::Name { path, .. }) if path == "import")
        && matches!(after, None | Some(Token::Punct(';')))
}

/// Whether the line loads Node's `child_process` (then `.exec` after a call is its).
fn binds_child_process(ps: &[Piece]) -> bool {
    ps.iter().any(|p| match &p.token {
        Token::Literal { text, .. } => text.ends_with("child_process"),
        Token::Name { path, .. } => path.contains("child_process"),
        Token::Punct(_) => false,
    })
}

/// A literal that names a runner (`getattr(os, 'system')`, `os.__dict__['system']`,
/// `cp['execSync']`), or a `require('child_process')` not called at once.
fn literal_unread(ps: &[Piece], k: usize, text: &str) -> Option<String> {
    let lower = text.trim().to_ascii_lowercase();
    let in_brackets = matches!(
        k.checked_sub(1).map(|j| &ps[j].token),
        Some(Token::Punct('[' | ',' | '('))
    );
    if COMMAND_ONLY_MODULES.contains(&lower.as_str()) {
        // `require('child_process').execSync(…)`: the call that follows is read.
        let called_at_once = matches!(
            (
                ps.get(k + 1).map(|p| &p.token),
                ps.get(k + 2).map(|p| &p.token),
                ps.get(k + 3).map(|p| &p.token)
            ),
            (
                Some(Token::Punct(')')),
                Some(Token::Name {
                    after_call: true,
                    ..
                }),
                Some(Token::Punct('('))
            )
        );
        if !called_at_once {
            return Some(format!(
                "the module {text} is bound to a name here: what is later run through it \
                 cannot be read"
            ));
        }
    }
    let names_runner = RUNS_COMMANDS.contains(&lower.as_str())
        || crate::inline::OTHER_RUNNERS.contains(&lower.as_str())
        || matches!(
            lower.as_str(),
            "exec" | "spawn" | "execute" | "eval" | "__import__"
        );
    (in_brackets && names_runner).then(|| {
        format!(
            "{text:?} names a call that runs commands or code, looked up by name: what it \
             will run cannot be read"
        )
    })
}

/// The arguments of the call whose `(` is at `open`: each a run of pieces, split at the
/// commas of its own level.
pub(crate) fn arguments(ps: &[Piece], open: usize) -> Vec<&[Piece]> {
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut start = open + 1;
    for (j, p) in ps.iter().enumerate().skip(open) {
        match p.token {
            Token::Punct('(' | '[' | '{') => depth += 1,
            Token::Punct(')' | ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    args.push(&ps[start..j]);
                    return args;
                }
            }
            Token::Punct(',') if depth == 1 => {
                args.push(&ps[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    args.push(&ps[start.min(ps.len())..]);
    args
}

/// Whether an argument is written out: a literal, a list of literals, an options object,
/// a keyword argument, or the environment passed on.
fn written_out(arg: &[Piece], first: bool) -> bool {
    let tokens: Vec<&Token> = arg.iter().map(|p| &p.token).collect();
    match tokens.as_slice() {
        [] => true,
        [Token::Literal { computed, .. }] => !computed,
        [Token::Punct('['), inner @ .., Token::Punct(']')] => inner.iter().all(|t| {
            matches!(
                t,
                Token::Literal {
                    computed: false,
                    ..
                } | Token::Punct(',')
            )
        }),
        // An options object (`{shell: true}`, `{cwd: "x"}`) is not the command, unless it
        // holds the command's words (Deno's `new Deno.Command("rm", {args: [...]})`), which
        // are not read from there.
        [Token::Punct('{'), rest @ ..] => {
            !first
                && !rest.iter().any(|t| {
                    matches!(t, Token::Name { path, .. }
                        if matches!(path.as_str(), "args" | "cmd" | "argv" | "command"))
                })
        }
        [Token::Name { .. }, Token::Punct('=' | ':'), ..] => !first,
        [Token::Name { path, .. }] => {
            !first && matches!(path.as_str(), "os.environ" | "process.env" | "ENV" | "env")
        }
        _ => false,
    }
}

fn call_unread(ps: &[Piece], open: usize, path: &str, kind: Runs) -> Option<String> {
    let args = arguments(ps, open);
    let computed = match kind {
        // Code run from a string: the first argument is the code.
        Runs::Code => args.first().is_some_and(|a| !written_out(a, true)),
        Runs::Commands => args
            .iter()
            .enumerate()
            .any(|(i, a)| !written_out(a, i == 0)),
    };
    computed.then(|| {
        let what = if kind == Runs::Code {
            "code"
        } else {
            "a command"
        };
        format!(
            "{path}(…) is given {what} the line computes (a variable or an expression): what \
             it runs cannot be read before it runs"
        )
    })
}

#[cfg(test)]
#[path = "repl_tests.rs"]
mod tests;
