//! PowerShell and cmd.exe: statements read as those shells read them (no POSIX quoting,
//! backslashes literal), since no POSIX parser can judge them.

use std::sync::OnceLock;

use regex::Regex;

use super::*;

/// Words of a PowerShell / cmd.exe statement: whitespace-separated, quotes removed,
/// backslashes literal (as those shells read them), lower-cased.
fn windows_words(stmt: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in stmt.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'') | (None, '"') => quote = Some(c),
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur).to_ascii_lowercase());
                }
            }
            (_, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur.to_ascii_lowercase());
    }
    if words.first().is_some_and(|w| w == "&") {
        words.remove(0);
    }
    words
}

/// Processes whose end stops Windows (a blue screen or a log-off of everyone).
const CRITICAL_PROCESSES: &[&str] = &[
    "csrss", "wininit", "winlogon", "lsass", "smss", "services", "svchost",
];

/// Windows directories whose recursive deletion breaks the machine (lower-case).
const WINDOWS_SYSTEM_DIRS: &[&str] = &[
    "windows",
    "windows\\system32",
    "program files",
    "program files (x86)",
    "programdata",
    "users",
];

/// A drive root, the Windows system directories on a drive, or the user profile.
fn is_drive_root(w: &str) -> bool {
    let w = w.strip_suffix("*.*").unwrap_or(w).trim_end_matches('*');
    let b = w.as_bytes();
    if b.len() > 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/')
    {
        let dir = w[3..].trim_end_matches(['\\', '/']).replace('/', "\\");
        if WINDOWS_SYSTEM_DIRS.contains(&dir.as_str()) {
            return true;
        }
    }
    if matches!(
        w.trim_end_matches(['\\', '/']),
        "$env:programfiles" | "$env:programdata" | "${env:programfiles(x86)}" | "$env:appdata"
    ) {
        return true;
    }
    let b = w.as_bytes();
    (b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[1] == b':'
        && (b.len() == 2 || (b.len() == 3 && (b[2] == b'\\' || b[2] == b'/'))))
        || w == "\\"
        || w == "/"
        || matches!(
            w.trim_end_matches(['\\', '/']),
            "$env:systemdrive"
                | "$env:systemroot"
                | "$env:windir"
                | "$env:userprofile"
                | "$env:homedrive"
                | "$home"
                | "~"
                | "%systemdrive%"
                | "%systemroot%"
                | "%windir%"
                | "%userprofile%"
                | "%homedrive%"
                | "%programfiles%"
                | "%programdata%"
        )
}

/// `Get-ChildItem ROOT -Recurse | Remove-Item`: a listing of a drive root fed to deletion.
fn lists_root_recursively(words: &[String]) -> bool {
    matches!(
        words.first().map(String::as_str),
        Some("get-childitem" | "gci" | "ls" | "dir")
    ) && words.iter().any(|a| a == "-recurse" || a == "-r")
        && words[1..].iter().any(|a| is_drive_root(a))
}

/// PowerShell / cmd.exe commands, one statement at a time.
pub fn check_windows(text: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    fn push(
        out: &mut Vec<Finding>,
        severity: Severity,
        rule: &'static str,
        message: &str,
        stmt: &str,
    ) {
        out.push(Finding {
            severity,
            rule,
            message: message.into(),
            command: stmt.to_string(),
        });
    }
    let mut previous_lists_root = false;
    let mut nested = Vec::new();
    for (stmt, piped) in text
        // cmd.exe's `&`, `&&` and `||` separate statements as `;` does (the empty pieces
        // between doubled ones are dropped below).
        .split(['\n', ';', '&'])
        .flat_map(|s| s.split('|').enumerate().map(|(i, p)| (p, i > 0)))
        .map(|(s, piped)| (s.trim(), piped))
        .filter(|(s, _)| !s.is_empty())
    {
        let w = windows_words(stmt);
        let Some(cmd) = w.first() else { continue };
        let said = out.len();
        let rest = &w[1..];
        let fed_root = piped && previous_lists_root;
        previous_lists_root = lists_root_recursively(&w);
        match cmd.as_str() {
            "remove-item" | "ri" | "del" | "erase" if fed_root => push(
                &mut out,
                Severity::Block,
                "windows_remove_root",
                "deletes everything listed under a drive root",
                stmt,
            ),
            "taskkill" | "taskkill.exe"
                if rest
                    .windows(2)
                    .any(|p| p[0] == "/im" && p[1].trim_matches('*').is_empty()) =>
            {
                push(
                    &mut out,
                    Severity::Block,
                    "kill_all",
                    "taskkill /im * kills every process",
                    stmt,
                )
            }
            // A process Windows cannot run without (ending one stops the machine), or every
            // process a filter matches (`/fi "username eq me"`: all of the user's).
            "taskkill" | "taskkill.exe"
                if rest.windows(2).any(|p| {
                    p[0] == "/im" && CRITICAL_PROCESSES.contains(&p[1].trim_end_matches(".exe"))
                }) =>
            {
                push(
                    &mut out,
                    Severity::Block,
                    "kill_all",
                    "taskkill ends a process Windows cannot run without",
                    stmt,
                )
            }
            "taskkill" | "taskkill.exe" if rest.iter().any(|a| a == "/fi") => push(
                &mut out,
                Severity::Warn,
                "kill_all",
                "taskkill /fi ends every process its filter matches",
                stmt,
            ),
            "stop-computer" | "restart-computer" => push(
                &mut out,
                Severity::Block,
                "power",
                "stops the machine",
                stmt,
            ),
            "format-volume" | "clear-disk" | "initialize-disk" => push(
                &mut out,
                Severity::Block,
                "powershell_format",
                "erases a disk or volume",
                stmt,
            ),
            "format" | "format.com" | "format.exe"
                if rest.first().is_some_and(|d| is_drive_root(d)) =>
            {
                push(
                    &mut out,
                    Severity::Block,
                    "cmd_format",
                    "format erases a drive",
                    stmt,
                )
            }
            "remove-item" | "ri" | "rm" | "rmdir" | "rd" | "del" | "erase" => {
                let recursive = rest
                    .iter()
                    .any(|a| matches!(a.as_str(), "-r" | "-recurse" | "-recurse:$true" | "/s"));
                let targets: Vec<&String> = rest
                    .iter()
                    .enumerate()
                    .filter(|(i, a)| {
                        !a.starts_with('-') && !a.starts_with('/')
                            || (*i > 0 && matches!(rest[i - 1].as_str(), "-path" | "-literalpath"))
                            || a.as_str() == "/"
                    })
                    .map(|(_, a)| a)
                    .collect();
                let powershell =
                    cmd.contains('-') || rest.iter().any(|a| a.starts_with("-r") && a.len() > 2);
                if recursive && targets.iter().any(|t| is_drive_root(t)) {
                    push(
                        &mut out,
                        Severity::Block,
                        "windows_remove_root",
                        "recursive deletion of a drive root, the Windows directory or a profile",
                        stmt,
                    );
                } else if recursive && (powershell || rest.iter().any(|a| a == "/s")) {
                    push(
                        &mut out,
                        Severity::Warn,
                        "recursive_delete",
                        "deletes recursively",
                        stmt,
                    );
                }
            }
            _ => {}
        }
        // Only where no rule of its own spoke about the statement.
        if out.len() == said
            && let Some(why) = super::windows_unread::unread(&w)
        {
            push(&mut out, Severity::Warn, "windows_unread", &why, stmt);
        }
        if let Some(path) = super::windows_unread::startup_written(stmt) {
            push(
                &mut out,
                Severity::Warn,
                "startup_file_write",
                &format!("writes {path}, which runs when the user logs on or starts a shell"),
                stmt,
            );
        }
        if let Some(path) = super::windows_unread::secret_named(&w, cmd) {
            push(
                &mut out,
                Severity::Warn,
                "secret_read",
                &format!("reads {path}, which holds credentials"),
                stmt,
            );
        }
        // A script block's statements (`Where-Object { … }`, `ForEach-Object { … }`, `& { … }`)
        // are statements too.
        if let (Some(open), Some(close)) = (stmt.find('{'), stmt.rfind('}'))
            && open < close
        {
            nested.extend(check_windows(&stmt[open + 1..close]));
        }
    }
    out.extend(nested);
    out
}

/// The script of `powershell -Command "..."` / `pwsh -c '...'`, read without POSIX quoting.
pub fn powershell_script(line: &str) -> Option<String> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    let re = R
        .get_or_init(|| Regex::new(r"(?i)^\s*(?:powershell|pwsh)(?:\.exe)?\b.*?\s[-/](?:c|co|com|comm|comma|comman|command|commandwithargs|cwa)\s+(.*)$").ok())
        .as_ref()?;
    let script = match re.captures(line.trim()) {
        Some(cap) => cap.get(1)?.as_str().trim().to_string(),
        None => positional_command(line)?,
    };
    let script = script.as_str();
    let unquoted = script
        .strip_prefix('"')
        .map(|s| s.strip_suffix('"').unwrap_or(s))
        .or_else(|| {
            script
                .strip_prefix('\'')
                .map(|s| s.strip_suffix('\'').unwrap_or(s))
        })
        .unwrap_or(script);
    Some(unquoted.to_string())
}

/// Windows PowerShell's command given without `-Command`, in a line: see
/// [`powershell_operands`].
fn positional_command(line: &str) -> Option<String> {
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    let first = words.first()?.to_ascii_lowercase();
    let program = first.rsplit(['\\', '/']).next().unwrap_or(&first);
    if !matches!(program, "powershell" | "powershell.exe") {
        return None;
    }
    let start = powershell_operands(&words[1..])?;
    let at = line.find(words[1 + start].as_str())?;
    Some(line[at..].trim().to_string())
}

/// Where Windows PowerShell's command starts among its arguments when it is given without
/// `-Command`: `powershell.exe` reads its first operand and what follows as the command
/// (`powershell "iex (iwr …)"`; pwsh reads it as a script file, the file's to answer for).
/// `None` when there is none, or a script file or an encoded command is given instead.
pub fn powershell_operands(args: &[String]) -> Option<usize> {
    /// Options that take a value, by the prefixes PowerShell accepts.
    const VALUED: &[&str] = &[
        "executionpolicy",
        "windowstyle",
        "inputformat",
        "outputformat",
        "version",
        "psconsolefile",
        "configurationname",
        "workingdirectory",
        "settingsfile",
        "ep",
        "ex",
        "exec",
        "w",
        "win",
        "if",
        "of",
        "v",
        "wd",
    ];
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let Some(option) = w.strip_prefix(['-', '/']) else {
            return Some(i);
        };
        let option = option.to_ascii_lowercase();
        if [
            "f",
            "fi",
            "fil",
            "file",
            "e",
            "ec",
            "en",
            "enc",
            "encodedcommand",
        ]
        .contains(&option.as_str())
        {
            return None;
        }
        i += if VALUED.contains(&option.as_str()) {
            2
        } else {
            1
        };
    }
    None
}

/// A line that starts with a PowerShell cmdlet (`Verb-Noun`).
pub fn looks_like_powershell(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or("");
    let mut parts = first.splitn(2, '-');
    matches!((parts.next(), parts.next()), (Some(v), Some(n)) if !v.is_empty() && !n.is_empty()
        && v.chars().all(|c| c.is_ascii_alphabetic()) && v.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && n.chars().all(|c| c.is_ascii_alphanumeric()))
}
