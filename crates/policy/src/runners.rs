//! Programs that run a command, a script or code given in their arguments, beyond the
//! wrappers `wrappers` looks through: what the policy cannot read is said, never allowed.
//!
//! Why a list of its own: a wrapper the policy did not model ran its command unjudged —
//! `unshare rm -rf ~`, `setarch x86_64 rm -rf ~`, `sed 1e`, `git -c alias.x='!…' x`, `tar
//! --checkpoint-action=exec=…`, `vim -c '!…'` were all `allowed`. Each program here either
//! always runs what its arguments name (`unshare`, `nsenter`, `systemd-run`, …), or does so
//! with some options or script commands (`sed`'s `e`, `tar`'s `--to-command`, `ssh`'s
//! `ProxyCommand`, …); either way the command it runs is not judged, so the line is warned
//! (`opaque_script`) and a person decides.
//!
//! Options are matched as their programs' parsers match them: short ones inside clusters
//! (`script -qc`), long ones abbreviated (`env --split=…`), values attached or in the next
//! word.

use crate::getopt::{has_long_at_least, has_option, option_value_anywhere};

/// Programs that run the command their arguments name, always.
const ALWAYS: &[&str] = &[
    "unshare",
    "nsenter",
    "setarch",
    "linux32",
    "linux64",
    "i386",
    "x86_64",
    "systemd-run",
    "systemd-nspawn",
    "machinectl",
    "at",
    "batch",
    "expect",
    "tmux",
    "screen",
    "parallel",
    "sshpass",
    "entr",
    "rlwrap",
    "fakeroot",
    "fakechroot",
    "firejail",
    "bwrap",
    "proot",
    "capsh",
    "numactl",
    "cgexec",
    "sg",
    "dbus-run-session",
    "dbus-launch",
    "xvfb-run",
    "faketime",
    "valgrind",
    "chronic",
    "daemonize",
    "start-stop-daemon",
    "setpriv",
    "socat",
    "coproc",
    // Terminal multiplexers and detachers: the command runs in a session of their own.
    "byobu",
    "dtach",
    "abduco",
    "zellij",
    // Queues and benchmarks that run the command lines they are given, later or many times.
    "nq",
    "tsp",
    "sem",
    "hyperfine",
    // File watchers that run a command on every change.
    "watchexec",
    "nodemon",
    "reflex",
    // Outside the flatpak sandbox, on the host.
    "flatpak-spawn",
    "lxc-attach",
    "schedtool",
];

/// Why `name` (its basename) with `rest` runs something the policy does not read, if it
/// does.
pub fn unread(name: &str, rest: &[String]) -> Option<String> {
    if ALWAYS.contains(&name) {
        return Some(format!(
            "{name} runs the command its arguments name, which is not judged"
        ));
    }
    match name {
        "sed" | "gsed" => sed(rest),
        // perf's profiling verbs run the command after their options.
        "perf"
            if rest.first().is_some_and(|v| {
                matches!(
                    v.as_str(),
                    "stat"
                        | "record"
                        | "trace"
                        | "sched"
                        | "mem"
                        | "c2c"
                        | "lock"
                        | "kmem"
                        | "kwork"
                        | "ftrace"
                        | "timechart"
                        | "kvm"
                )
            }) =>
        {
            Some("perf runs the command its arguments name, which is not judged".into())
        }
        // A queue's `add`, a container's `run`/`enter`: the command runs there, unjudged.
        "pueue" if rest.iter().any(|a| a == "add") => {
            Some("pueue add queues a command, which is not judged".into())
        }
        "toolbox" | "distrobox" | "distrobox-enter"
            if rest
                .iter()
                .any(|a| matches!(a.as_str(), "run" | "enter" | "--" | "-e" | "--exec"))
                || name == "distrobox-enter" =>
        {
            Some(format!(
                "{name} runs the command in a container that shares the home, unjudged"
            ))
        }
        // A PKCS#11 or security-key provider is a library loaded and run.
        "ssh-add" if has_option(rest, Some('s'), None) || has_option(rest, Some('S'), None) => {
            Some("ssh-add -s/-S loads the library it names".into())
        }
        "ssh-keygen" if has_option(rest, Some('D'), None) || has_option(rest, Some('w'), None) => {
            Some("ssh-keygen -D/-w loads the library it names".into())
        }
        // The dynamic loader run as a program runs the program it is given.
        _ if name.starts_with("ld-linux")
            || name.starts_with("ld.so")
            || name.starts_with("ld-musl") =>
        {
            Some(format!(
                "{name} runs the program its arguments name, which is not judged"
            ))
        }
        // `less +CMD` runs a less command at start (`+!…` runs a shell); `nano -s PROG`
        // names the spell checker it runs.
        "less" | "more" | "most" if rest.iter().any(|a| a.starts_with('+') && a.contains('!')) => {
            Some(format!("{name} +!… runs a shell command"))
        }
        "nano" | "pico" if has_option(rest, Some('s'), Some("speller")) => {
            Some(format!("{name} -s names a program it runs"))
        }
        "tar" | "gtar" | "bsdtar" => tar(rest),
        // sort pipes its temporary files through the program (`sh` then runs the data).
        "sort" | "gsort" if has_option(rest, None, Some("compress-program")) => Some(format!(
            "{name} --compress-program runs the program it names on its data"
        )),
        "git" => super::git_runs::git(rest),
        "hg" | "svn" => super::git_runs::other_vcs(name, rest),
        "ssh" | "scp" | "sftp" => ssh(name, rest),
        "rsync" => (has_option(rest, Some('e'), Some("rsh"))
            || has_option(rest, None, Some("rsync-path")))
        .then(|| "rsync runs the remote shell or program its options name".into()),
        "vi" | "vim" | "nvim" | "view" | "ex" | "gvim" | "vimdiff" => {
            let runs = rest.iter().any(|a| a.starts_with('+') && a.len() > 1)
                || has_option(rest, Some('c'), Some("cmd"))
                || has_option(rest, Some('S'), None);
            runs.then(|| {
                format!("{name} runs the editor commands its options give (`!…` runs a shell)")
            })
        }
        // A preprocessor run on every file searched (`rg --pre sh` runs each as a script).
        "rg" if crate::getopt::has_long_at_least(rest, "pre", 3) => {
            Some("rg --pre runs the program it names on every file it searches".into())
        }
        // ripgrep's parser takes no abbreviations; the program gives its hyperlinks' host.
        "rg" if rest
            .iter()
            .any(|a| a == "--hostname-bin" || a.starts_with("--hostname-bin=")) =>
        {
            Some("rg --hostname-bin runs the program it names".into())
        }
        // The pager its results go through, run by a shell (getopt_long's and Perl's
        // Getopt::Long read `--pag`: no other option of theirs starts so).
        "ag" | "ack" | "ack-grep" if crate::getopt::has_long_at_least(rest, "pager", 3) => {
            Some(format!("{name} --pager runs the command it names"))
        }
        // Options read from a file (or the input) the line does not show: an output file,
        // an upload, a proxy command.
        "curl" if has_option(rest, Some('K'), Some("config")) => {
            Some("curl -K reads its options from a file the line does not show".into())
        }
        "wget" if crate::getopt::has_long_at_least(rest, "config", 4) => {
            Some("wget --config reads its settings from a file the line does not show".into())
        }
        "man" => (has_option(rest, Some('P'), Some("pager"))
            || has_option(rest, Some('H'), Some("html")))
        .then(|| "man runs the pager or browser its options name".into()),
        "emacs" | "emacsclient" | "xemacs" => {
            let lisp = rest.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "-eval"
                        | "--eval"
                        | "-e"
                        | "-f"
                        | "-funcall"
                        | "--funcall"
                        | "-l"
                        | "-load"
                        | "--load"
                        | "-batch"
                        | "--batch"
                        | "--script"
                        | "-script"
                        | "-x"
                ) || a.starts_with("--eval=")
                    || a.starts_with("--funcall=")
                    || a.starts_with("--load=")
            });
            lisp.then(|| format!("{name} runs the Lisp its options give"))
        }
        "gdb" | "lldb" => Some(format!(
            "{name} runs and changes other programs, and the commands its options give"
        )),
        "zip" => has_option(rest, None, Some("unzip-command"))
            .then(|| "zip runs the program --unzip-command names".into())
            .or_else(|| {
                rest.iter()
                    .any(|a| a == "-TT")
                    .then(|| "zip -TT runs a program".into())
            }),
        // prlimit [options] [command]: with --pid and no command it starts nothing.
        "prlimit" => {
            let mut i = 0;
            let mut command = false;
            while i < rest.len() {
                match rest[i].as_str() {
                    "-p" | "--pid" | "-o" | "--output" => i += 2,
                    a if a.starts_with('-') => i += 1,
                    _ => {
                        command = true;
                        break;
                    }
                }
            }
            command
                .then(|| "prlimit runs the command its arguments name, which is not judged".into())
        }
        // What is installed runs later, every time, unjudged; `-l` lists, `-r` is judged
        // as a deletion.
        "crontab" => (!has_option(rest, Some('l'), None) && !has_option(rest, Some('r'), None))
            .then(|| "crontab installs commands that run later, unjudged".into()),
        // A makefile from a stream, or `--eval`, is recipes on the line that are not read.
        "make" | "gmake" => {
            let stream = |f: String| from_a_stream(&f);
            (option_value_anywhere(rest, 'f', "file").is_some_and(stream)
                || option_value_anywhere(rest, 'f', "makefile").is_some_and(stream)
                || has_option(rest, Some('E'), Some("eval")))
            .then(|| "make runs recipes given on its input or --eval, which are not read".into())
        }
        // The same of the other build runners: just's justfile, ninja's build file, a
        // cmake script (`-P`), read from a stream.
        "just" | "ninja" | "samu" | "cmake" => {
            let short_only = |short: char| {
                (0..rest.len())
                    .find_map(|i| crate::getopt::option_value(&rest[i..], Some(short), None))
            };
            let file = match name {
                "just" => option_value_anywhere(rest, 'f', "justfile"),
                "cmake" => short_only('P'),
                _ => short_only('f'),
            };
            file.is_some_and(|f| from_a_stream(&f))
                .then(|| format!("{name} runs a build file read from a stream, which is not read"))
        }
        "cargo" => crate::tool_settings::cargo(rest),
        "apt" | "apt-get" | "apt-cache" | "aptitude" => crate::tool_settings::apt(name, rest),
        "complete" | "compgen" => has_option(rest, Some('C'), None)
            .then(|| format!("{name} -C runs a command on every completion")),
        "mapfile" | "readarray" => has_option(rest, Some('C'), None)
            .then(|| format!("{name} -C runs a callback for the lines it reads")),
        "ncat" | "nc" | "netcat" => (has_option(rest, Some('e'), Some("exec"))
            || has_option(rest, Some('c'), Some("sh-exec")))
        .then(|| format!("{name} -e/-c runs a program for each connection")),
        _ => super::consoles::inline(name, rest),
    }
}

/// GNU sed's `e` command and the `e` flag of `s` run their text as a shell command; a
/// script from a file (`-f`) cannot be read here.
fn sed(rest: &[String]) -> Option<String> {
    if has_option(rest, Some('f'), Some("file")) {
        return Some("sed runs a script from a file the policy does not read".into());
    }
    let mut scripts: Vec<String> = Vec::new();
    let mut i = 0;
    let mut explicit = false;
    while i < rest.len() {
        let a = &rest[i];
        if a == "-e" || a == "--expression" {
            if let Some(s) = rest.get(i + 1) {
                scripts.push(s.clone());
            }
            explicit = true;
            i += 2;
            continue;
        }
        if let Some(s) = a.strip_prefix("--expression=") {
            scripts.push(s.to_string());
            explicit = true;
        } else if let Some(s) = a.strip_prefix("-e").filter(|_| !a.starts_with("--")) {
            scripts.push(s.to_string());
            explicit = true;
        } else if !a.starts_with('-') && !explicit && scripts.is_empty() {
            scripts.push(a.clone());
        }
        i += 1;
    }
    scripts
        .iter()
        .find_map(|s| sed_reaches(s))
        .map(String::from)
}

/// What in a sed script reaches past the text it edits: an `e` command or `s///e` (runs
/// text as a shell command), `w`/`W` or `s///w` (writes the file it names, unseen by the
/// rules on writes), `r`/`R` (reads the file it names, unseen by the rules on
/// credentials). A `;` inside a pattern may make this see a command that is not there:
/// that only asks.
fn sed_reaches(script: &str) -> Option<&'static str> {
    for cmd in script.split(['\n', ';']) {
        let c = cmd.trim_start();
        // An address (a line number, `$`, `/re/`, a range) before the command letter.
        let body = c.trim_start_matches(|ch: char| {
            ch.is_ascii_digit() || matches!(ch, '$' | ',' | '~' | '!' | ' ' | '+')
        });
        let body = if let Some(rest) = body.strip_prefix('/') {
            rest.split_once('/')
                .map_or("", |(_, after)| after.trim_start())
        } else {
            body
        };
        let body = body.trim_start_matches(['{', ' ', '!']);
        match body.chars().next() {
            Some('e') => return Some(SED_RUNS),
            Some('w' | 'W') => return Some(SED_WRITES),
            Some('r' | 'R') => return Some(SED_READS),
            _ => {}
        }
        if let Some(s) = body.strip_prefix('s')
            && let Some(delim) = s.chars().next()
        {
            let parts: Vec<&str> = s[delim.len_utf8()..].splitn(3, delim).collect();
            if parts.len() == 3 {
                let flags: String = parts[2]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                if flags.contains('e') {
                    return Some(SED_RUNS);
                }
                if flags.contains('w') {
                    return Some(SED_WRITES);
                }
            }
        }
    }
    None
}

const SED_RUNS: &str = "sed's e command (or the e flag of s) runs text as a shell command";
const SED_WRITES: &str = "sed's w command (or the w flag of s) writes the file it names";
const SED_READS: &str = "sed's r command reads the file it names into its output";

/// tar's options that run a program or a script.
fn tar(rest: &[String]) -> Option<String> {
    for long in [
        "checkpoint-action",
        "to-command",
        "use-compress-program",
        "rsh-command",
        "info-script",
        "new-volume-script",
    ] {
        if has_long_at_least(rest, long, 4) {
            return Some(format!("tar --{long} runs a program its value names"));
        }
    }
    // -I PROG (compress program), -F SCRIPT, in a cluster or alone (not in old-style
    // bundled first words, which take no such letters).
    let first_is_bundle = rest.first().is_some_and(|a| !a.starts_with('-'));
    let runs = rest.iter().enumerate().any(|(i, a)| {
        !(i == 0 && first_is_bundle)
            && a.starts_with('-')
            && !a.starts_with("--")
            && (a.contains('I') || a.contains('F'))
    });
    runs.then(|| "tar -I/-F runs the program or script its value names".into())
}

/// ssh's options that run a command on this machine (`ProxyCommand`, `LocalCommand`, a
/// `-S`-named program for scp).
fn ssh(name: &str, rest: &[String]) -> Option<String> {
    let (valued, _) = crate::getopt::short_options(rest, ssh_valued(name));
    valued
        .into_iter()
        .find_map(|(letter, value)| ssh_option(name, letter, value))
}

/// The options of ssh (scp, sftp) that take a value: OpenSSH's getopt strings. The options
/// end at the first operand (the host, or scp's first file).
pub(crate) fn ssh_valued(name: &str) -> &'static str {
    match name {
        "scp" => "cDFiJloPSX",
        "sftp" => "BbcDFiJloPRSs",
        _ => "BbcDEeFIiJLlmOoPpQRSWw",
    }
}

/// Why one of ssh's (scp's, sftp's) valued options reaches past the connection.
fn ssh_option(name: &str, letter: char, value: &str) -> Option<String> {
    match letter {
        'o' => {
            let key = value
                .split(['=', ' ', '\t'])
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            (!SSH_DATA_OPTIONS.contains(&key.as_str())).then(|| {
                format!(
                    "{name} -o {key} is not one of the settings known to be data (some run a \
                     command or load a library on this machine)"
                )
            })
        }
        'F' => Some(format!(
            "{name} -F reads a configuration the policy does not (it can run commands)"
        )),
        'I' if name == "ssh" => Some("ssh -I loads the library it names".into()),
        'S' if name != "ssh" => Some(format!("{name} -S runs the program it names")),
        's' if name == "sftp" => Some("sftp -s runs the subsystem or program it names".into()),
        _ => None,
    }
}

/// ssh's `-o` settings that are data: where to connect, as whom, how to authenticate with
/// files, and timeouts. Every other one (`ProxyCommand`, `LocalCommand`,
/// `KnownHostsCommand`, `PKCS11Provider`, `SecurityKeyProvider`, `Include`, `Match exec`,
/// and those not thought of) may run a command or load a library, and is asked about.
const SSH_DATA_OPTIONS: &[&str] = &[
    "addressfamily",
    "batchmode",
    "bindaddress",
    "checkhostip",
    "ciphers",
    "compression",
    "connectionattempts",
    "connecttimeout",
    "controlmaster",
    "controlpath",
    "controlpersist",
    "exitonforwardfailure",
    "forwardagent",
    "globalknownhostsfile",
    "hashknownhosts",
    "hostkeyalgorithms",
    "hostkeyalias",
    "hostname",
    "identitiesonly",
    "identityfile",
    "kbdinteractiveauthentication",
    "kexalgorithms",
    "loglevel",
    "macs",
    "numberofpasswordprompts",
    "passwordauthentication",
    "port",
    "preferredauthentications",
    "pubkeyacceptedalgorithms",
    "pubkeyacceptedkeytypes",
    "pubkeyauthentication",
    "requesttty",
    "sendenv",
    "serveralivecountmax",
    "serveraliveinterval",
    "setenv",
    "stricthostkeychecking",
    "tcpkeepalive",
    "updatehostkeys",
    "user",
    "userknownhostsfile",
    "verifyhostkeydns",
];

/// Whether a build file named so is read from a stream (`stdin::stream_name`: the input, a
/// descriptor, a computed name) or anything under `/proc`: its recipes are on the line, or
/// nowhere the policy can read them.
fn from_a_stream(f: &str) -> bool {
    crate::stdin::stream_name(f) || f.starts_with("/proc/")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_words as words;

    #[test]
    fn programs_that_run_what_they_are_given_are_found() {
        for (name, rest) in [
            ("unshare", "rm -rf /"),
            ("setarch", "x86_64 rm -rf ~"),
            ("sed", "1e id file"),
            ("sed", "-n 's/x/id/e' f"),
            ("sed", "-e 'p;e id' f"),
            ("sed", "-f script.sed f"),
            ("sed", "-n 'w /root/.bashrc' x"),
            ("sed", "'s/a/b/w out' x"),
            ("sed", "-e '/x/{W log' -e '}' f"),
            ("sed", "'r /etc/shadow' x"),
            (
                "tar",
                "cf x.tar --checkpoint=1 --checkpoint-action=exec=id .",
            ),
            ("tar", "xf x.tar --to-command=sh"),
            ("tar", "-I 'sh -c id' -cf x.tar ."),
            ("tar", "--use-comp=sh -cf x ."),
            ("git", "-c alias.x='!rm -rf ~' x"),
            ("git", "-c core.pager=id log"),
            ("git", "submodule foreach 'rm -rf .'"),
            ("git", "rebase -x 'id' main"),
            (
                "git",
                "-c protocol.ext.allow=always clone 'ext::sh -c id' x",
            ),
            ("git", "clone 'ext::sh -c id' x"),
            ("git", "-c include.path=/tmp/x status"),
            ("git", "config alias.x '!rm -rf ~'"),
            ("git", "config --global core.fsmonitor 'rm -rf ~'"),
            ("git", "config set core.pager 'id'"),
            ("git", "config filter.x.clean id"),
            ("man", "-P 'rm -rf ~' ls"),
            ("man", "--pager=id ls"),
            ("emacs", "--batch --eval '(shell-command \"id\")'"),
            ("vim", "-c '!rm -rf ~' x"),
            ("vim", "+'!id' x"),
            ("ssh", "-oProxyCommand=id host"),
            ("ssh", "-o 'LocalCommand id' host"),
            ("ssh", "-o PKCS11Provider=/tmp/x.so host"),
            ("ssh", "-oInclude=/tmp/cfg host"),
            ("ssh", "-F ./cfg host"),
            ("ssh", "-I /tmp/x.so host"),
            ("ssh-add", "-s /tmp/x.so"),
            ("ssh-keygen", "-D /tmp/x.so"),
            ("ld-linux-x86-64.so.2", "/bin/rm -rf ~"),
            ("rsync", "-e 'sh -c id' a b:"),
            ("ncat", "-lc 'id' 4444"),
        ] {
            assert!(unread(name, &words(rest)).is_some(), "{name} {rest}");
        }
        for (name, rest) in [
            ("sed", "-n 's/a/b/g' file"),
            ("sed", "'s/x/y/2' file"),
            ("sed", "-n '/start/,/end/p' file"),
            ("sed", "-i 's/echo/print/' x.py"),
            ("tar", "xzf archive.tar.gz"),
            ("tar", "-czf out.tgz dir"),
            ("git", "status"),
            ("git", "-c color.ui=always log"),
            ("git", "commit -m 'run e'"),
            ("git", "config user.email me@example.com"),
            ("git", "config --global init.defaultBranch main"),
            ("git", "config branch.main.remote origin"),
            ("git", "config --get core.pager"),
            ("git", "config -l"),
            ("git", "config alias.st"),
            ("git", "clone https://example.com/x.git"),
            ("man", "ls"),
            ("emacs", "notes.txt"),
            ("vim", "file.txt"),
            ("ssh", "host uptime"),
            (
                "ssh",
                "-p 2222 -i ~/.ssh/id_ed25519 host sort -o out -F x file",
            ),
            ("ssh", "-o StrictHostKeyChecking=no -oPort=22 host"),
            ("scp", "-P 2222 a host:b"),
        ] {
            assert!(unread(name, &words(rest)).is_none(), "{name} {rest}");
        }
    }
}
