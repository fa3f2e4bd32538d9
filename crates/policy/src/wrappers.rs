//! Looking through wrappers to the commands they run: `sudo`, `doas`, `env`, `nice`,
//! `nohup`, `timeout`, `time`, `stdbuf`, `ionice`, `xargs`, `command`, `exec`, `eval`,
//! `watch`, `flock`, `chroot`, `setsid`, `busybox`, `ssh`, shells with `-c` or a script on
//! their input, `find -exec`, interpreters' inline code, PowerShell `-Command`.

use std::cell::Cell;

use super::inline::{self, Stdin};
use super::lex::{COMPUTED, Simple};
use super::runners;

use crate::limits::{MAX_DEPTH, NESTED_BUDGET};

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

pub fn basename(word: &str) -> String {
    word.rsplit(['/', '\\'])
        .next()
        .unwrap_or(word)
        .to_ascii_lowercase()
}

pub fn is_shell(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "yash" | "posh"
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
    eff.absorb(unwrap_budgeted(&inner, stdin, budget));
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
    let Stdin::Literal(text) = stdin else {
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
            argv.extend(
                shell_words::split(text)
                    .unwrap_or_else(|_| text.split_whitespace().map(str::to_string).collect()),
            );
            argv
        }
    }
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
    let mut i = 0;
    while i < rest.len() {
        let a = &rest[i];
        if a.starts_with('-') && !a.starts_with("--") && a.contains('c') {
            if let Some(l) = command_string(&rest[i + 1..]) {
                eff.shell_lines.push(l.clone());
            }
            return;
        }
        if a == "-o" || a == "-O" || a == "+O" || a == "+o" {
            i += 2;
            continue;
        }
        if !a.starts_with('-') && !a.starts_with('+') {
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

/// Whether a script "file" is a stream rather than a file of the project: the input
/// (`-`, `/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`), another descriptor, or a process
/// substitution (`<(curl …)`), whose text is made as it runs.
pub fn stream_name(word: &str) -> bool {
    word == "-"
        || word.contains(COMPUTED)
        || word.starts_with("/dev/stdin")
        || word.starts_with("/dev/fd/")
        || (word.starts_with("/proc/") && word.contains("/fd/"))
}

/// Whether a stream name is the input itself.
pub fn input_name(word: &str) -> bool {
    matches!(
        word,
        "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0"
    )
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
pub fn unwrap(simple: &Simple) -> Effective {
    let stdin = if simple.input.is_empty() {
        Stdin::None
    } else {
        Stdin::Literal(simple.input.clone())
    };
    unwrap_budgeted(simple, &stdin, &Cell::new(NESTED_BUDGET))
}

/// What a command runs, given what its standard input holds, sharing a nesting budget with
/// the rest of its line.
pub fn unwrap_budgeted(simple: &Simple, stdin: &Stdin, budget: &Cell<usize>) -> Effective {
    let mut eff = Effective::default();
    let mut argv: Vec<String> = simple.argv.clone();
    for _ in 0..MAX_DEPTH {
        if argv.is_empty() {
            break;
        }
        eff.argvs.push(argv.clone());
        let name = basename(&argv[0]);
        let rest = &argv[1..];
        let next = privileged(&mut eff, &name, rest)
            .or_else(|| shell_state(&mut eff, &name, rest, stdin))
            .or_else(|| prefix(&name, rest))
            .or_else(|| runs_lines(&mut eff, &name, rest, stdin, budget))
            .unwrap_or_else(|| runs_code(&mut eff, &name, rest, stdin, budget));
        if next.is_empty() {
            break;
        }
        argv = next;
    }
    eff
}

/// Programs that run a command as another user: `sudo`, `su -c`, `runuser`.
fn privileged(eff: &mut Effective, name: &str, rest: &[String]) -> Option<Vec<String>> {
    Some(match name {
        "sudo" | "doas" | "pkexec" | "run0" => {
            eff.privileged = true;
            skip_options(
                rest,
                &[
                    "-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D", "-T", "--user",
                    "--group", "--chdir",
                ],
            )
            .to_vec()
        }
        "su" => {
            eff.privileged = true;
            // su [-] [user] -c "cmd" (also -lc "cmd", --command=cmd, --comm cmd)
            if let Some(line) = option_anywhere(rest, 'c', "command") {
                eff.shell_lines.push(line);
            }
            Vec::new()
        }
        "runuser" => {
            eff.privileged = true;
            if let Some(line) = option_anywhere(rest, 'c', "command") {
                eff.shell_lines.push(line);
                Vec::new()
            } else {
                skip_options(rest, &["-u", "-g", "-G", "--user", "--group"]).to_vec()
            }
        }
        _ => return None,
    })
}

/// Lines the shell itself runs, now or later: an alias's value, a trap's action, a sourced
/// file, `eval`'s words.
fn shell_state(
    eff: &mut Effective,
    name: &str,
    rest: &[String],
    stdin: &Stdin,
) -> Option<Vec<String>> {
    Some(match name {
        "alias" => {
            // alias NAME=VALUE: a later line's NAME runs VALUE, so VALUE is judged now.
            for def in rest.iter().filter_map(|a| a.split_once('=')) {
                eff.shell_lines.push(def.1.to_string());
            }
            Vec::new()
        }
        "trap" => {
            // trap ACTION SIGNAL…: the action is a command line this shell runs later.
            if let Some(action) = rest.iter().find(|a| !a.starts_with('-'))
                && !action.is_empty()
            {
                eff.shell_lines.push(action.clone());
            }
            Vec::new()
        }
        "source" | "." => {
            if let Some(file) = rest.iter().find(|a| !a.starts_with('-')) {
                script_stream(eff, name, file, stdin);
            }
            Vec::new()
        }
        "eval" => {
            if !rest.is_empty() {
                eff.shell_lines.push(rest.join(" "));
            }
            Vec::new()
        }
        _ => return None,
    })
}

/// Wrappers that only change how the command after their options runs (`nice`, `timeout`,
/// `chroot DIR`, `command`): that command.
fn prefix(name: &str, rest: &[String]) -> Option<Vec<String>> {
    Some(match name {
        "nice" => skip_options(rest, &["-n", "--adjustment"]).to_vec(),
        "nohup" | "time" | "builtin" | "unbuffer" | "catchsegv" | "setsid" | "noglob"
        | "nocorrect" | "busybox" | "toybox" => skip_options(rest, &["-o", "-f"]).to_vec(),
        "strace" | "ltrace" | "proxychains" | "proxychains4" | "torsocks" => skip_options(
            rest,
            &[
                "-o", "-e", "-p", "-s", "-E", "-u", "-a", "-b", "-P", "-S", "-X",
            ],
        )
        .to_vec(),
        "chroot" => {
            let r = skip_options(rest, &["--userspec", "--groups"]);
            r.get(1..).unwrap_or(&[]).to_vec()
        }
        "command" => {
            if rest.first().is_some_and(|a| a == "-v" || a == "-V") {
                Vec::new()
            } else {
                skip_options(rest, &[]).to_vec()
            }
        }
        "exec" => skip_options(rest, &["-a"]).to_vec(),
        "timeout" => {
            let r = skip_options(rest, &["-s", "--signal", "-k", "--kill-after"]);
            r.get(1..).unwrap_or(&[]).to_vec()
        }
        "stdbuf" => skip_options(rest, &["-i", "-o", "-e"]).to_vec(),
        "ionice" => skip_options(
            rest,
            &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
        )
        .to_vec(),
        "chrt" | "taskset" => {
            // With -p they change a running process and start none.
            let on_pid = rest.iter().any(|a| {
                a == "--pid" || (a.starts_with('-') && !a.starts_with("--") && a.contains('p'))
            });
            if on_pid {
                Vec::new()
            } else {
                let r = skip_options(rest, &[]);
                r.get(1..).unwrap_or(&[]).to_vec()
            }
        }
        _ => return None,
    })
}

/// Programs that run a command line or argv they are given: `env`, `npx`, `script -c`,
/// `ssh HOST CMD`, `flock -c`, `xargs`, `watch`, `find -exec`, `ed` on its input.
fn runs_lines(
    eff: &mut Effective,
    name: &str,
    rest: &[String],
    stdin: &Stdin,
    budget: &Cell<usize>,
) -> Option<Vec<String>> {
    Some(match name {
        "env" => {
            // -S STRING splits STRING into the command (also attached, `-S'…'`, in a
            // cluster, `-iS…`, or abbreviated, `--split=…`).
            if let Some(split) = runners::option_value(rest, Some('S'), Some("split-string")) {
                eff.shell_lines.push(split);
            }
            // An exported function's body runs in the bash it starts, unjudged.
            if rest.iter().any(|a| a.starts_with("BASH_FUNC_")) {
                eff.opaque_script.get_or_insert_with(|| {
                    "env exports a shell function, whose body is not judged".into()
                });
            }
            let mut r = rest;
            loop {
                match r.first().map(String::as_str) {
                    Some(a)
                        if a.starts_with("--s")
                            || (a.starts_with('-') && !a.starts_with("--") && a.contains('S')) =>
                    {
                        r = &[];
                    }
                    Some("-u") | Some("--unset") | Some("-C") | Some("--chdir") => {
                        r = r.get(2..).unwrap_or(&[])
                    }
                    Some(a) if a.starts_with('-') => r = &r[1..],
                    Some(a) if a.contains('=') => r = &r[1..],
                    _ => break,
                }
            }
            r.to_vec()
        }
        // npx PACKAGE ARGS runs the package's program with ARGS; `-c LINE` runs a line.
        "npx" | "pnpx" | "bunx" => {
            if let Some(line) = option_anywhere(rest, 'c', "call") {
                eff.shell_lines.push(line);
                Vec::new()
            } else {
                skip_options(rest, &["-p", "--package"]).to_vec()
            }
        }
        // ed reads its commands from its input, and `!…` among them runs a shell.
        "ed" | "ex" if !matches!(stdin, Stdin::None) => {
            eff.opaque_script.get_or_insert_with(|| {
                format!("{name} runs the commands on its input (`!…` runs a shell)")
            });
            Vec::new()
        }
        "script" => {
            // -c LINE, also in a cluster (`-qc`) or abbreviated (`--comm=…`).
            if let Some(line) = option_anywhere(rest, 'c', "command") {
                eff.shell_lines.push(line);
            }
            Vec::new()
        }
        "ssh" => {
            // -o ProxyCommand=… and the like run a command here.
            if let Some(why) = runners::unread("ssh", rest) {
                eff.opaque_script.get_or_insert(why);
            }
            // ssh [options] HOST [command…]: the command runs in the remote shell.
            let r = skip_options(
                rest,
                &[
                    "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O",
                    "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B",
                ],
            );
            if r.len() > 1 {
                eff.shell_lines.push(r[1..].join(" "));
            }
            Vec::new()
        }
        "flock" => {
            let r = skip_options(rest, &["-w", "--timeout", "-E", "--conflict-exit-code"]);
            match r.get(1).map(String::as_str) {
                Some("-c") | Some("--command") => {
                    if let Some(l) = r.get(2) {
                        eff.shell_lines.push(l.clone());
                    }
                    Vec::new()
                }
                _ => r.get(1..).unwrap_or(&[]).to_vec(),
            }
        }
        "xargs" => xargs(eff, rest, stdin, budget),
        "watch" => {
            // watch joins its words with spaces and hands them to `sh -c`, so
            // `watch 'rm -rf ~'` is the line `rm -rf ~`; with `-x` it runs them as argv.
            let exec = rest.iter().any(|a| {
                a == "--exec" || (a.starts_with('-') && !a.starts_with("--") && a.contains('x'))
            });
            let r = skip_options(rest, &["-n", "--interval", "-q", "--equexit"]);
            if exec {
                r.to_vec()
            } else {
                if !r.is_empty() {
                    eff.shell_lines.push(r.join(" "));
                }
                Vec::new()
            }
        }
        "find" => {
            find_exec(eff, rest, budget);
            Vec::new()
        }
        _ => return None,
    })
}

/// Shells, interpreters and consoles given code, and everything else: what it runs that
/// the policy does not read.
fn runs_code(
    eff: &mut Effective,
    name: &str,
    rest: &[String],
    stdin: &Stdin,
    budget: &Cell<usize>,
) -> Vec<String> {
    match name {
        n if is_shell(n) => {
            shell_script(eff, n, rest, stdin);
            Vec::new()
        }
        n if inline::is_interpreter(n) => {
            let found = inline::scan(n, rest, stdin);
            if let Some(what) = found.opaque {
                eff.opaque_script = Some(what);
            }
            eff.shell_lines.extend(found.shell_lines);
            for argv in found.argvs {
                nested(eff, argv, &Stdin::None, budget);
            }
            Vec::new()
        }
        "powershell" | "powershell.exe" | "pwsh" | "pwsh.exe" => {
            if let Some(p) = rest.iter().position(|a| {
                let a = a.to_ascii_lowercase();
                a == "-command" || a == "-c" || a == "/c" || a == "-commandwithargs"
            }) {
                eff.powershell.push(rest[p + 1..].join(" "));
            }
            Vec::new()
        }
        "cmd" | "cmd.exe" => {
            if let Some(p) = rest
                .iter()
                .position(|a| a.eq_ignore_ascii_case("/c") || a.eq_ignore_ascii_case("/k"))
            {
                eff.powershell.push(rest[p + 1..].join(" "));
            }
            Vec::new()
        }
        n => {
            if let Some(why) =
                runners::unread(n, rest).or_else(|| super::consoles::input(n, rest, stdin))
            {
                eff.opaque_script.get_or_insert(why);
            }
            Vec::new()
        }
    }
}

/// The value of option `-short` (in a cluster too) or `--long` (abbreviated too) given
/// anywhere among `args` — `su alice -c cmd` puts it after a word that is not an option.
fn option_anywhere(args: &[String], short: char, long: &str) -> Option<String> {
    (0..args.len()).find_map(|i| {
        runners::option_value(
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
