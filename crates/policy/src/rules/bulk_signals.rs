//! Signals sent in bulk by programs other than `kill`/`pkill`/`killall` (`kills.rs`):
//! psmisc's `fuser -k`, which kills the processes using a file, and procps's `skill`, which
//! signals every process of a user or terminal.
//!
//! `fuser -k /` is `kill -9 -1` in other words: every process has `/` as its root
//! directory, so every one "uses" it; `fuser -km PATH` kills every process with a file open
//! on that file system. `skill -KILL -u root` kills every process of root. Inside a
//! session's pid namespace these reach the session alone; where the namespace is not
//! available (docs/containment.md) they reach the machine.

use super::argv::Cmd;
use super::*;

/// `fuser -k` and `skill` read as each reads its arguments.
pub(super) fn bulk_signals(c: &Cmd<'_>, out: &mut Vec<Finding>) {
    match c.name.as_str() {
        "fuser" => fuser(c, out),
        "skill" => skill(c, out),
        _ => {}
    }
}

/// What an `fuser` command line asks for.
#[derive(Default)]
struct Fuser<'a> {
    kill: bool,
    /// `-m`/`--mount`: every process using a file on the file system holding the name.
    mount: bool,
    names: Vec<&'a str>,
}

fn read_fuser(args: &[String]) -> Fuser<'_> {
    let mut f = Fuser::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if a == "--" {
            f.names.extend(args[i..].iter().map(String::as_str));
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long.split_once('=').map_or(long, |(n, _)| n) {
                // `--kill` as the rules read it: expanded as an abbreviation of `timeout`'s
                // watched `--kill-after` (`reading::as_read` does not know the program).
                "kill" | "kill-after" => f.kill = true,
                "mount" => f.mount = true,
                "namespace" if !long.contains('=') => i += 1,
                _ => {}
            }
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            f.names.push(a);
            continue;
        };
        // `-9`, `-KILL`, `-HUP`: the signal to send, not a cluster of flags.
        if cluster.len() > 1
            && cluster.starts_with(|c: char| c.is_ascii_digit() || c.is_ascii_uppercase())
        {
            continue;
        }
        for (at, ch) in cluster.char_indices() {
            match ch {
                'k' => f.kill = true,
                'm' => f.mount = true,
                'n' => {
                    if at + 1 == cluster.len() {
                        i += 1;
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    f
}

fn fuser(c: &Cmd<'_>, out: &mut Vec<Finding>) {
    let f = read_fuser(c.args);
    if !f.kill {
        return;
    }
    if f.names.iter().any(|n| normalize(n, c.cwd) == "/") {
        out.push(finding(
            Severity::Block,
            "kill_all",
            "fuser -k / kills every process: each one has / as its root directory",
            c.argv,
        ));
    } else if f.mount {
        out.push(finding(
            Severity::Warn,
            "kill_all",
            "fuser -km kills every process with a file open on that file system",
            c.argv,
        ));
    }
}

/// `skill [SIGNAL] [OPTIONS] EXPRESSION`: each `-u`/`-t`/`-c`/`-p` names what the word after
/// it is; a word with none before it is guessed (a terminal, a user, a pid or a command).
fn skill(c: &Cmd<'_>, out: &mut Vec<Finding>) {
    let mut users_or_terminals: Vec<&str> = Vec::new();
    let mut i = 0;
    let args = c.args;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        match a {
            "-l" | "-L" | "-n" | "--list" | "--table" | "--no-action" => return,
            "-u" | "-t" | "--user" | "--tty" => {
                users_or_terminals.extend(args.get(i).map(String::as_str));
                i += 1;
            }
            "-c" | "-p" | "--command" | "--pid" | "-s" | "--signal" => i += 1,
            a if a.starts_with('-') => {}
            a => users_or_terminals.push(a),
        }
    }
    if users_or_terminals
        .iter()
        .any(|u| matches!(*u, "root" | "0"))
    {
        out.push(finding(
            Severity::Block,
            "kill_all",
            "skill of root's processes signals nearly every process of the machine",
            c.argv,
        ));
    } else if !users_or_terminals.is_empty() {
        out.push(finding(
            Severity::Warn,
            "kill_all",
            "skill signals every process of a user or terminal (a bare word may be either), \
             the shell and its supervisors among them",
            c.argv,
        ));
    }
}
