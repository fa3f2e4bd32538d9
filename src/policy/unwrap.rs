//! Looking through wrappers to the commands they run: `sudo`, `doas`, `env`, `nice`,
//! `nohup`, `timeout`, `time`, `stdbuf`, `ionice`, `xargs`, `command`, `exec`, `watch`,
//! `flock`, shells with `-c`, `find -exec`, PowerShell `-Command`.

use super::lex::{self, Simple};

/// Deepest wrapper nesting followed (sudo env nice sh -c ...).
const MAX_UNWRAP: usize = 16;

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
}

pub fn basename(word: &str) -> String {
    word.rsplit(['/', '\\'])
        .next()
        .unwrap_or(word)
        .to_ascii_lowercase()
}

fn is_shell(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "busybox"
    )
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

pub fn unwrap(simple: &Simple) -> Effective {
    let mut eff = Effective::default();
    let mut argv: Vec<String> = simple.argv.clone();
    for _ in 0..MAX_UNWRAP {
        if argv.is_empty() {
            break;
        }
        eff.argvs.push(argv.clone());
        let name = basename(&argv[0]);
        let rest = &argv[1..];
        let next: Vec<String> = match name.as_str() {
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
                // su [-] [user] -c "cmd"
                if let Some(p) = rest.iter().position(|a| a == "-c" || a == "--command") {
                    if let Some(line) = rest.get(p + 1) {
                        eff.shell_lines.push(line.clone());
                    }
                }
                Vec::new()
            }
            "env" => {
                let mut r = rest;
                loop {
                    match r.first().map(String::as_str) {
                        Some("-S") | Some("--split-string") => {
                            if let Some(s) = r.get(1) {
                                eff.shell_lines.push(s.clone());
                            }
                            r = &[];
                        }
                        Some(a) if a.starts_with("--split-string=") => {
                            eff.shell_lines
                                .push(a["--split-string=".len()..].to_string());
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
            "nice" => skip_options(rest, &["-n", "--adjustment"]).to_vec(),
            "nohup" | "time" | "builtin" | "unbuffer" | "catchsegv" => {
                skip_options(rest, &["-o", "-f"]).to_vec()
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
                let r = skip_options(rest, &[]);
                r.get(1..).unwrap_or(&[]).to_vec()
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
            "xargs" => skip_options(
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
                    "-i",
                ],
            )
            .to_vec(),
            "watch" => {
                let r = skip_options(rest, &["-n", "--interval", "-q", "--equexit"]);
                if !r.is_empty() {
                    eff.shell_lines.push(shell_words::join(r));
                }
                Vec::new()
            }
            "find" => {
                let mut i = 0;
                while i < rest.len() {
                    if matches!(rest[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                        let start = i + 1;
                        let mut end = start;
                        while end < rest.len() && rest[end] != ";" && rest[end] != "+" {
                            end += 1;
                        }
                        if start < end {
                            let inner = Simple {
                                argv: rest[start..end].to_vec(),
                                ..Simple::default()
                            };
                            let sub = unwrap(&inner);
                            eff.argvs.extend(sub.argvs);
                            eff.shell_lines.extend(sub.shell_lines);
                            eff.powershell.extend(sub.powershell);
                            eff.privileged |= sub.privileged;
                        }
                        i = end;
                    }
                    i += 1;
                }
                Vec::new()
            }
            n if is_shell(n) => {
                // sh -c 'line' (also combined flags such as -lc, -ec, -xc)
                let mut i = 0;
                let mut line = None;
                while i < rest.len() {
                    let a = &rest[i];
                    if a.starts_with('-') && !a.starts_with("--") && a.contains('c') {
                        line = rest.get(i + 1).cloned();
                        break;
                    }
                    if !a.starts_with('-') {
                        break;
                    }
                    i += 1;
                }
                if let Some(l) = line {
                    eff.shell_lines.push(l);
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
            _ => Vec::new(),
        };
        if next.is_empty() {
            break;
        }
        argv = next;
    }
    eff
}

/// One argv a line will run, with the simple command it came from.
pub type Run = (Vec<String>, Simple);

/// Every argv a command line will run, wrappers and nested shells included;
/// also the parse errors met and the PowerShell scripts found on the way.
pub fn all_commands(line: &str, depth: usize) -> (Vec<Run>, Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut powershell = Vec::new();
    if depth > MAX_UNWRAP {
        errors.push("shell commands nested too deeply".into());
        return (out, errors, powershell);
    }
    let parsed = lex::parse(line);
    errors.extend(parsed.errors);
    fn visit(
        c: &Simple,
        depth: usize,
        out: &mut Vec<Run>,
        errors: &mut Vec<String>,
        powershell: &mut Vec<String>,
    ) {
        let eff = unwrap(c);
        for argv in &eff.argvs {
            out.push((argv.clone(), c.clone()));
        }
        powershell.extend(eff.powershell);
        for l in eff.shell_lines {
            let (o, e, p) = all_commands(&l, depth + 1);
            out.extend(o);
            errors.extend(e);
            powershell.extend(p);
        }
        for s in &c.substitutions {
            visit(s, depth + 1, out, errors, powershell);
        }
    }
    for c in &parsed.commands {
        visit(c, depth, &mut out, &mut errors, &mut powershell);
    }
    (out, errors, powershell)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(line: &str) -> Vec<Vec<String>> {
        all_commands(line, 0)
            .0
            .into_iter()
            .map(|(a, _)| a)
            .collect()
    }

    fn has(line: &str, argv: &[&str]) -> bool {
        runs(line)
            .iter()
            .any(|a| a == &argv.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn wrappers_are_seen_through() {
        assert!(has(
            "sudo -u root env FOO=1 nice -n 5 nohup rm -rf /",
            &["rm", "-rf", "/"]
        ));
        assert!(has(
            "timeout -s KILL 10 dd if=/dev/zero of=/dev/sda",
            &["dd", "if=/dev/zero", "of=/dev/sda"]
        ));
        assert!(has("bash -lc 'cd / && rm -rf *'", &["rm", "-rf", "*"]));
        assert!(has(
            "find . -name x -exec rm -rf {} \\;",
            &["rm", "-rf", "{}"]
        ));
        assert!(has("xargs -0 -n 1 rm -rf", &["rm", "-rf"]));
        assert!(has("command rm -rf /", &["rm", "-rf", "/"]));
        assert!(has("exec shutdown now", &["shutdown", "now"]));
        assert!(has("env -S 'rm -rf /'", &["rm", "-rf", "/"]));
        assert!(has(
            "sh -c \"sh -c 'mkfs.ext4 /dev/sdb'\"",
            &["mkfs.ext4", "/dev/sdb"]
        ));
        assert!(!has("command -v rm", &["rm"]));
    }
}
