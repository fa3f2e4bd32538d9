//! What git runs that the line does not show: settings that name programs (`git -c`, `git
//! config`, `git clone -c`), a repository named on the line (`--git-dir`), transports that
//! run commands (`ext::` URLs, `--upload-pack`), hooks installed from a template, and the
//! subcommands that run a command given on the line (`rebase -x`, `bisect run`).

use crate::getopt::{has_long_at_least, has_option};

/// Configuration and subcommands with which git runs a command of the line's.
pub fn git(rest: &[String]) -> Option<String> {
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i].as_str();
        let config = if a == "-c" {
            i += 1;
            rest.get(i).map(String::as_str)
        } else {
            a.strip_prefix("-c").filter(|v| !v.is_empty())
        };
        if let Some(kv) = config {
            let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
            if !super::git_settings::data_key(key, value) {
                return Some(format!(
                    "git -c {key}=… is not a setting known to be data: it may name a program \
                     git runs, which is not judged"
                ));
            }
        }
        // `ext::CMD` and `fd::` URLs make the transport run a command or use a descriptor.
        if runs_transport(a) {
            return Some(format!(
                "git {a}: the transport runs a command the URL names"
            ));
        }
        if a.starts_with("--config-env") || a.starts_with("--exec-path=") {
            return Some(format!("git {a} picks code git runs"));
        }
        // A repository named on the line is one whose configuration (`core.fsmonitor`,
        // hooks) nothing has judged, as with `GIT_DIR`.
        if a == "--git-dir" || a.starts_with("--git-dir=") {
            return Some(format!(
                "git {a} runs in a repository whose configuration names programs git runs"
            ));
        }
        // Global options whose value is the next word, not the subcommand (`git -C sub
        // config …`).
        if matches!(
            a,
            "-C" | "--work-tree" | "--namespace" | "--attr-source" | "--super-prefix"
        ) {
            i += 2;
            continue;
        }
        if !a.starts_with('-') {
            // The subcommand.
            let sub = a;
            let after = &rest[i + 1..];
            if sub == "config"
                && let Some(key) = super::git_settings::config_write(after)
            {
                return Some(format!(
                    "git config sets {key}, which is not a setting known to be data: later git \
                     commands may run what it names"
                ));
            }
            if let Some(url) = after.iter().find(|u| runs_transport(u)) {
                return Some(format!(
                    "git {sub} {url}: the transport runs a command the URL names"
                ));
            }
            if let Some(why) = git_subcommand_runs(sub, after) {
                return Some(why);
            }
            let runs = match sub {
                "submodule" => after.first().is_some_and(|s| s == "foreach"),
                "bisect" => after.first().is_some_and(|s| s == "run"),
                "rebase" => has_option(after, Some('x'), Some("exec")),
                "filter-branch" | "filter-repo" => true,
                "difftool" | "mergetool" => has_option(after, Some('x'), Some("extcmd")),
                _ => false,
            };
            return runs.then(|| format!("git {sub} runs a command given on the line"));
        }
        i += 1;
    }
    None
}

/// Mercurial's and Subversion's options that name programs they run: hg's `--config` (an
/// `alias.x=!CMD`, a hook, an extension's file, `ui.editor`: not told apart, so any setting)
/// and svn's editor and diff commands and its configuration.
pub fn other_vcs(name: &str, rest: &[String]) -> Option<String> {
    let options: &[&str] = if name == "hg" {
        &["--config", "--configfile"]
    } else {
        &[
            "--config-option",
            "--config-dir",
            "--editor-cmd",
            "--diff-cmd",
            "--diff3-cmd",
        ]
    };
    let named = rest.iter().find(|a| {
        options
            .iter()
            .any(|o| a.as_str() == *o || a.strip_prefix(o).is_some_and(|v| v.starts_with('=')))
    })?;
    Some(format!(
        "{name} {named}: a setting or option that may name a program {name} runs, which is not judged"
    ))
}

/// Whether a word is, or sets an option to (`--remote=ext::sh …`), a URL whose transport
/// runs a command (`ext::`) or uses a descriptor (`fd::`).
fn runs_transport(word: &str) -> bool {
    let url = |u: &str| u.starts_with("ext::") || u.starts_with("fd::");
    url(word) || word.split_once('=').is_some_and(|(_, v)| url(v))
}

/// A subcommand's options that name a program git runs, hooks it installs, or settings
/// (`git clone -c`) not known to be data. git takes a long option abbreviated.
fn git_subcommand_runs(sub: &str, after: &[String]) -> Option<String> {
    const RUNS: &[&str] = &[
        "upload-pack",
        "receive-pack",
        "exec",
        "template",
        "open-files-in-pager",
        "sendmail-cmd",
        "to-cmd",
        "cc-cmd",
        "header-cmd",
        "httpd",
        "browser",
    ];
    if let Some(opt) = RUNS.iter().find(|o| has_long_at_least(after, o, 3)) {
        return Some(format!(
            "git {sub} --{opt} names a program or hooks git runs, which are not judged"
        ));
    }
    let short = match sub {
        "clone" => Some('u'),
        "grep" => Some('O'),
        _ => None,
    };
    if short.is_some_and(|c| has_option(after, Some(c), None)) {
        return Some(format!("git {sub}: an option names a program git runs"));
    }
    // An SMTP "server" given as a path is a program run to send.
    if sub == "send-email"
        && after.iter().any(|a| {
            a.strip_prefix("--smtp-server=")
                .or_else(|| a.strip_prefix("--smtp-s="))
                .is_some_and(|v| v.starts_with('/'))
        })
    {
        return Some("git send-email runs the program given as its SMTP server".into());
    }
    if sub == "clone" {
        let mut i = 0;
        while i < after.len() {
            let a = after[i].as_str();
            let kv = if a == "-c" || a == "--config" {
                i += 1;
                after.get(i).map(String::as_str)
            } else {
                a.strip_prefix("--config=")
                    .or_else(|| a.strip_prefix("-c").filter(|v| !v.is_empty()))
            };
            if let Some(kv) = kv {
                let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
                if !super::git_settings::data_key(key, value) {
                    return Some(format!(
                        "git clone -c {key}=… is not a setting known to be data: it may name a \
                         program git runs"
                    ));
                }
            }
            i += 1;
        }
    }
    None
}
