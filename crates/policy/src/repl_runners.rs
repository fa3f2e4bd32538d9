//! Runners a REPL's line reaches by shapes other than a call of a known name: a program
//! named by an attribute (Python's `sh.rm("-rf", "/")`, `from plumbum.cmd import rm`), a
//! runner reached through the object a call returns (Java's `Runtime.getRuntime().exec(…)`),
//! a command built call by call (Rust's `Command::new("rm").arg(…)`), and a tree deleter
//! handed on to be called later (`Thread(target=shutil.rmtree, …)`). Each was `allowed`
//! at a REPL's prompt and ran unasked.

use crate::repl_tokens::{Piece, Token};

/// Modules whose attributes are programs: `sh.rm(…)` runs `rm`, `plumbum.cmd.rm` is `rm`.
const PROGRAM_MODULES: &[&str] = &["sh", "plumbum", "plumbum.cmd"];

/// The command lines a line runs through a module whose attributes are programs, called
/// with literals (`sh.rm("-rf", "/root")` is `rm -rf /root`).
pub(crate) fn attribute_commands(ps: &[Piece]) -> Vec<String> {
    let mut out = Vec::new();
    for (k, p) in ps.iter().enumerate() {
        let Token::Name {
            path,
            after_call: false,
        } = &p.token
        else {
            continue;
        };
        let Some((module, program)) = path.rsplit_once('.') else {
            continue;
        };
        if !PROGRAM_MODULES.contains(&module)
            || ps.get(k + 1).map(|p| &p.token) != Some(&Token::Punct('('))
        {
            continue;
        }
        let mut argv = vec![program.to_string()];
        for arg in crate::repl::arguments(ps, k + 1) {
            if let [
                Piece {
                    token:
                        Token::Literal {
                            text,
                            computed: false,
                        },
                    ..
                },
            ] = arg
            {
                argv.push(text.clone());
            }
        }
        out.push(shell_words::join(argv));
    }
    out
}

/// Why the name at `k` reaches a runner the line does not show, by one of the shapes above.
pub(crate) fn unread(ps: &[Piece], k: usize, path: &str, after_call: bool) -> Option<String> {
    let lower = path.to_ascii_lowercase();
    let prev = k.checked_sub(1).map(|j| &ps[j].token);
    let next = ps.get(k + 1).map(|p| &p.token);
    // `from sh import rm`, `import sh as s`, `local["rm"]`: programs named as attributes
    // or looked up by name, to be run later (a plain `import sh` keeps them `sh.rm(…)`).
    let imported =
        matches!(prev, Some(Token::Name { path, .. }) if path == "from" || path == "import");
    if imported
        && (PROGRAM_MODULES.contains(&lower.as_str()) || lower.starts_with("plumbum"))
        && !crate::repl::plain_import(ps, k)
    {
        return Some(format!(
            "the module {path} runs the programs its attributes name: what is later run \
             through it cannot be read"
        ));
    }
    if lower == "local" && next == Some(&Token::Punct('[')) {
        return Some(
            "plumbum's `local[…]` names a program to run: what runs cannot be read".into(),
        );
    }
    // A runner called through one of its own members (`os.system.__call__(…)`,
    // `execSync.apply(null, […])`): what it is given is not read as its arguments.
    if let Some((runner, via)) = path.rsplit_once('.')
        && matches!(
            via,
            "__call__" | "call" | "apply" | "bind" | "__func__" | "__wrapped__"
        )
        && crate::repl::runs(runner, after_call, true).is_some()
    {
        return Some(format!(
            "{path} calls a runner through one of its members: what it runs is not read"
        ));
    }
    // A program's arguments given by a non-literal to `sh.X(…)`.
    if let Some((module, _)) = path.rsplit_once('.')
        && PROGRAM_MODULES.contains(&module)
        && next == Some(&Token::Punct('('))
        && crate::repl::arguments(ps, k + 1).iter().any(|a| {
            !matches!(
                a,
                [Piece {
                    token: Token::Literal {
                        computed: false,
                        ..
                    },
                    ..
                }] | []
            )
        })
    {
        return Some(format!(
            "{path} runs a program with arguments the line computes: what runs cannot be read"
        ));
    }
    // Java's `Runtime.getRuntime().exec(…)`: the runner is a member of what a call returned.
    if after_call
        && lower == "exec"
        && called_before(ps, k).is_some_and(|n| n.ends_with("getruntime"))
    {
        return Some(
            "Runtime.exec runs a command whose words the line builds: what runs cannot be \
             read"
                .into(),
        );
    }
    // Rust's `Command::new("rm").arg("-rf")`: the words are given by later calls.
    if lower == "new"
        && matches!(
            (k.checked_sub(3).map(|j| &ps[j].token), prev, k.checked_sub(2).map(|j| &ps[j].token)),
            (Some(Token::Name { path, .. }), Some(Token::Punct(':')), Some(Token::Punct(':')))
                if path.to_ascii_lowercase().ends_with("command")
        )
    {
        return Some(
            "a command built call by call (`Command::new(…).arg(…)`): what runs cannot be read"
                .into(),
        );
    }
    // A tree deleter handed on, not called (`Thread(target=shutil.rmtree, args=(…))`).
    let last = lower.rsplit('.').next().unwrap_or_default();
    let handed_on = matches!(prev, Some(Token::Punct('=' | ',' | '(' | '[' | ':')))
        && next != Some(&Token::Punct('('));
    (crate::inline::TREE_DELETES.contains(&last) && handed_on).then(|| {
        format!("{path} deletes a tree and is handed on to be called later: what it deletes cannot be read")
    })
}

/// The name of the call whose `)` is right before `k` (`getRuntime` of
/// `Runtime.getRuntime().exec`), lower-cased.
fn called_before(ps: &[Piece], k: usize) -> Option<String> {
    let close = k.checked_sub(1)?;
    if ps[close].token != Token::Punct(')') {
        return None;
    }
    let mut depth = 0usize;
    for j in (0..=close).rev() {
        match ps[j].token {
            Token::Punct(')') => depth += 1,
            Token::Punct('(') => {
                depth -= 1;
                if depth == 0 {
                    return match j.checked_sub(1).map(|i| &ps[i].token) {
                        Some(Token::Name { path, .. }) => Some(path.to_ascii_lowercase()),
                        _ => None,
                    };
                }
            }
            _ => {}
        }
    }
    None
}

/// Tcl's `file delete [-force] PATH…` (at `tclsh`'s prompt): `rm` of each path, `rm -rf`
/// with `-force`, which deletes directories and what they hold.
pub(crate) fn tcl_delete(line: &str) -> Option<String> {
    if !line.trim_start().starts_with("file") {
        return None;
    }
    let words = shell_words::split(line.trim()).ok()?;
    let [file, delete, rest @ ..] = words.as_slice() else {
        return None;
    };
    if file != "file" || delete != "delete" {
        return None;
    }
    let force = rest.iter().any(|w| w == "-force");
    let mut argv = vec!["rm".to_string()];
    if force {
        argv.push("-rf".into());
    }
    argv.push("--".into());
    argv.extend(rest.iter().filter(|w| !w.starts_with('-')).cloned());
    Some(shell_words::join(argv))
}

/// Modules and calls that send over the network.
const SENDERS: &[&str] = &[
    "requests",
    "httpx",
    "urllib",
    "http",
    "https",
    "axios",
    "aiohttp",
    "socket",
    "net",
    "got",
    "fetch",
    "urlopen",
    "curl_exec",
    "xmlhttprequest",
    "websocket",
    "smtplib",
    "ftplib",
    "telnetlib",
    "tcpsocket",
    "io.socket",
];

/// A line that takes the whole environment (`os.environ`, `process.env`, `ENV.to_h`,
/// Perl's `%ENV`, `Deno.env.toObject()`) and sends something over the network
/// (`urlopen`, `requests.post`, `fetch`): the `env | curl -d @- URL` it may be, for the
/// rules on environments sent (`str(os.environ)` posted was `allowed`).
pub(crate) fn environment_sent(ps: &[Piece]) -> Option<String> {
    let whole_env = ps.iter().enumerate().any(|(k, p)| {
        let next = ps.get(k + 1).map(|p| &p.token);
        match &p.token {
            Token::Name { path, .. } => {
                let subscripted = next == Some(&Token::Punct('['));
                (matches!(
                    path.as_str(),
                    "os.environ" | "process.env" | "Bun.env" | "ENV" | "$_ENV"
                ) && !subscripted)
                    || matches!(
                        path.as_str(),
                        "ENV.to_h"
                            | "ENV.to_a"
                            | "ENV.inspect"
                            | "Deno.env.toObject"
                            | "os.environ.copy"
                    )
                    || (path == "ENV" && k > 0 && ps[k - 1].token == Token::Punct('%'))
            }
            _ => false,
        }
    });
    let sends = ps.iter().any(|p| match &p.token {
        Token::Name { path, .. } => {
            let lower = path.to_ascii_lowercase();
            let first = lower.split('.').next().unwrap_or_default();
            let last = lower.rsplit('.').next().unwrap_or_default();
            SENDERS.contains(&first) || SENDERS.contains(&last)
        }
        _ => false,
    });
    (whole_env && sends).then(|| "env | curl -d @- URL".to_string())
}
