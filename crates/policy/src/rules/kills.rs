//! Kills of every process, or of init: `kill -9 -1`, `kill 1`, `killall5`, `pkill -f .`, init
//! by its name (`pkill -x systemd`, `killall tini`), and the processes a listing prints
//! (`kill $(pgrep -f .)`, `pgrep -x init | xargs kill`).
//!
//! A `pkill`/`pgrep` pattern is read as the program reads it — a regular expression matched
//! against the process name (`-f`: the whole command line; `-x`: all of it; `-i`: either
//! case; `-v`: the processes it does *not* match) — and tried on a sample of names rather
//! than compared with a list of spellings of "everything" (`[a-z]`, `-v xyzzy` and `^.`
//! match every process as surely as `.` does).

use regex::RegexBuilder;

use super::argv::Cmd;
use super::*;
use crate::lex::{self, Simple};
use crate::wrappers::{basename, look_through};

/// The names pid 1 goes by: init systems, and the small inits containers start.
const INIT_NAMES: &[&str] = &[
    "systemd",
    "init",
    "tini",
    "dumb-init",
    "docker-init",
    "catatonit",
    "s6-svscan",
    "runit",
    "openrc-init",
];

/// Pid 1's command line as `-f` matches it, under the usual install paths.
const INIT_COMMAND_LINES: &[&str] = &[
    "/sbin/init",
    "/lib/systemd/systemd --system --deserialize 20",
    "/usr/lib/systemd/systemd --switched-root --system",
    "/sbin/tini -- app",
    "/usr/bin/dumb-init -- app",
    "/sbin/docker-init -- app",
    "/usr/bin/catatonit -- app",
];

/// Process names of every kind: a pattern matching all of them matches every process.
const SAMPLE_NAMES: &[&str] = &[
    "bash",
    "sshd",
    "Xorg",
    "interactive-terminal-mcp",
    "python3",
    "kworker/0:1",
    "node",
    "ps",
];

/// What a `pkill`/`pgrep`/`killall` command line selects.
struct Selection<'a> {
    patterns: Vec<&'a str>,
    /// `-u`/`-U` (`pkill`) or `-u` (`killall`): a user's processes.
    users: Vec<&'a str>,
    /// `-P`/`--parent` (`pkill`): the children of these processes (comma-separated lists).
    parents: Vec<&'a str>,
    /// `-s`, `-g`, `-G`, `-t` (`pkill`): a session's, process group's, group's or
    /// terminal's processes.
    grouped: bool,
    /// `-f`: matched against the whole command line.
    full: bool,
    /// `-x` (`pkill`), or `killall` without `-r` (an exact name).
    exact: bool,
    ignore_case: bool,
    /// `-v`: the processes the pattern does not match.
    invert: bool,
    /// `killall` without `-r`: the name compared as it is, not as a regular expression.
    literal: bool,
}

impl Selection<'_> {
    /// The pattern compiled as the program compiles it, or `None` when this reading cannot
    /// compile it: POSIX's back-references (`(.)\1`) and other forms Rust's regex lacks,
    /// which glibc accepts.
    fn compiled(&self, pattern: &str) -> Option<regex::Regex> {
        let pattern = if self.literal {
            regex::escape(pattern)
        } else {
            gnu_anchors(pattern)
        };
        let source = if self.exact {
            format!("^(?:{pattern})$")
        } else {
            pattern
        };
        RegexBuilder::new(&source)
            .case_insensitive(self.ignore_case)
            .size_limit(1 << 20)
            .build()
            .ok()
    }

    /// The pattern compiled once: whether it selects a name. A pattern this reading cannot
    /// compile selects nothing here, and [`Self::unreadable`] says so.
    fn matcher(&self, pattern: &str) -> impl Fn(&str) -> bool + '_ {
        let re = self.compiled(pattern);
        move |name| re.as_ref().is_some_and(|re| re.is_match(name)) != self.invert
    }

    /// A pattern this reading cannot compile: which processes it selects is not known, so the
    /// kill is asked about rather than passed (it may select every one).
    fn unreadable(&self) -> bool {
        self.patterns.iter().any(|p| self.compiled(p).is_none())
    }

    /// Every process (of the users named, if any): a pattern matching every sample name,
    /// or a user and no pattern at all.
    fn everyone(&self) -> bool {
        let every = |p: &&str| {
            let selects = self.matcher(p);
            matches!(*p, "" | "*") || SAMPLE_NAMES.iter().all(|n| selects(n))
        };
        self.patterns.iter().any(every) || (!self.users.is_empty() && self.patterns.is_empty())
    }

    /// No pattern, and init's children selected: every service, daemon and orphan.
    fn init_children(&self) -> bool {
        self.patterns.is_empty() && self.parents.iter().any(|p| kill_target_is_init(p))
    }

    /// No pattern, and a whole session, process group, group or terminal selected: the
    /// shell, and this session's supervisors with it.
    fn whole_group(&self) -> bool {
        self.patterns.is_empty() && self.grouped
    }

    /// Init among the processes selected: a pattern matching one of its names (or, with
    /// `-f`, its command lines), with no user named other than root.
    fn init(&self) -> bool {
        let root_too =
            self.users.is_empty() || self.users.iter().any(|u| matches!(*u, "root" | "0"));
        let names = if self.full {
            INIT_NAMES.iter().chain(INIT_COMMAND_LINES)
        } else {
            INIT_NAMES.iter().chain(&[][..])
        };
        root_too
            && self.patterns.iter().any(|p| {
                let selects = self.matcher(p);
                names.clone().any(|n| selects(n))
            })
    }
}

/// glibc's anchors of the whole string, a backslash before a backtick (its start) or before
/// a quote (its end), as Rust's regex spells them (`\A`, `\z`). To Rust's regex they are a
/// backtick and a quote, so the pattern that selects every process read as a name with a
/// backtick in it.
fn gnu_anchors(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('`') => out.push_str("\\A"),
            Some('\'') => out.push_str("\\z"),
            Some(n) => {
                out.push('\\');
                out.push(n);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Read `pkill`/`pgrep` (procps) or `killall` (psmisc) arguments as the program does.
fn selection<'a>(program: &str, args: &'a [String]) -> Selection<'a> {
    let killall = program == "killall";
    // Short options that take a value (attached, or the next word).
    let valued: &[char] = if killall {
        &['o', 'y', 'u', 's', 'n', 'Z']
    } else {
        &['s', 'g', 'G', 'P', 't', 'u', 'U', 'F', 'O', 'r', 'd']
    };
    let long_valued: &[&str] = &[
        "signal",
        "session",
        "pgroup",
        "group",
        "parent",
        "terminal",
        "euid",
        "uid",
        "pidfile",
        "older",
        "ns",
        "nslist",
        "runstates",
        "delimiter",
        "older-than",
        "younger-than",
        "user",
        "context",
        "env",
        "cgroup",
    ];
    let mut s = Selection {
        patterns: Vec::new(),
        users: Vec::new(),
        parents: Vec::new(),
        grouped: false,
        full: false,
        exact: killall,
        ignore_case: false,
        invert: false,
        literal: killall,
    };
    let mut regexp = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if a == "--" {
            s.patterns.extend(args[i..].iter().map(String::as_str));
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let value = match value {
                Some(v) => Some(v),
                None if long_valued.contains(&name) => {
                    i += 1;
                    args.get(i - 1).map(String::as_str)
                }
                None => None,
            };
            match name {
                "euid" | "uid" | "user" => s.users.extend(value),
                "parent" if !killall => s
                    .parents
                    .extend(value.into_iter().flat_map(|v| v.split(','))),
                "session" | "pgroup" | "group" | "terminal" if !killall => s.grouped = true,
                "full" => s.full = true,
                "exact" => s.exact = true,
                "ignore-case" => s.ignore_case = true,
                "inverse" => s.invert = true,
                "regexp" => regexp = true,
                _ => {}
            }
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            s.patterns.push(a);
            continue;
        };
        // `-9`, `-KILL`, `-SIGTERM`: a signal, not a cluster of flags.
        if cluster.starts_with(|c: char| c.is_ascii_digit() || c.is_ascii_uppercase())
            && cluster.len() > 1
            && !valued.iter().any(|v| cluster.starts_with(*v))
        {
            continue;
        }
        for (at, c) in cluster.char_indices() {
            if valued.contains(&c) {
                let rest = &cluster[at + c.len_utf8()..];
                let value = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).map(String::as_str)
                } else {
                    Some(rest)
                };
                match (c, killall) {
                    ('u', _) | ('U', false) => s.users.extend(value),
                    ('P', false) => s
                        .parents
                        .extend(value.into_iter().flat_map(|v| v.split(','))),
                    ('s' | 'g' | 'G' | 't', false) => s.grouped = true,
                    _ => {}
                }
                break;
            }
            match (c, killall) {
                ('f', false) => s.full = true,
                ('x', false) | ('e', true) => s.exact = true,
                ('i', false) | ('I', true) => s.ignore_case = true,
                ('v', false) => s.invert = true,
                ('r', true) => regexp = true,
                _ => {}
            }
        }
    }
    if killall && regexp {
        s.exact = false;
        s.literal = false;
    }
    s
}

/// Kills of every process, or of init.
pub(super) fn kills(c: &Cmd<'_>, out: &mut Vec<Finding>) {
    use Severity::*;
    let argv = c.argv;
    let args = c.args;
    let name = &c.name;
    match name.as_str() {
        "kill" if args.iter().skip(1).any(|a| a == "-1") => {
            out.push(finding(Block, "kill_all", "kills every process", argv));
        }
        "kill" if kills_init(args) => {
            out.push(finding(
                Block,
                "kill_all",
                "kills init (pid 1): the machine or container goes down",
                argv,
            ));
        }
        "killall5" => out.push(finding(Block, "kill_all", "kills every process", argv)),
        "pkill" | "killall" => {
            let s = selection(name, args);
            if s.everyone() {
                out.push(finding(
                    Block,
                    "kill_all",
                    format!("{name} with a pattern that matches every process kills them all"),
                    argv,
                ));
            } else if s.init() {
                out.push(finding(
                    Block,
                    "kill_all",
                    format!("{name} selects init (pid 1) by its name: the machine or container goes down"),
                    argv,
                ));
            } else if s.init_children() {
                out.push(finding(
                    Block,
                    "kill_all",
                    format!("{name} -P 1 selects every child of init: every service, daemon and orphaned process"),
                    argv,
                ));
            } else if s.whole_group() {
                out.push(finding(
                    Warn,
                    "kill_all",
                    format!(
                        "{name} with no pattern and a session, process group, group or terminal \
                         selects every process of it, the shell and its supervisors among them"
                    ),
                    argv,
                ));
            } else if s.unreadable() {
                out.push(finding(
                    Warn,
                    "kill_all",
                    format!(
                        "{name} with a pattern the policy cannot read (a back-reference or \
                         another form it does not compile): it may select every process"
                    ),
                    argv,
                ));
            }
        }
        _ => {}
    }
}

/// `kill [-SIG] 1`: pid 1 among the targets (not the value of `-s`/`-n`; `kill -l 1` only
/// names a signal).
fn kills_init(args: &[String]) -> bool {
    if args
        .first()
        .is_some_and(|a| matches!(a.as_str(), "-l" | "-L" | "--list" | "--table"))
    {
        return false;
    }
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-s" | "-n" | "--signal" => i += 2,
            a if kill_target_is_init(a) => return true,
            _ => i += 1,
        }
    }
    false
}

/// Pid 1 as a number: `1`, and the forms `kill` and `pkill -P` read as it (`01`, `+1`).
fn kill_target_is_init(word: &str) -> bool {
    let digits = word.strip_prefix('+').unwrap_or(word);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits.trim_start_matches('0') == "1"
}

/// What a listing command prints the ids of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Listed {
    /// Not a process listing, or one that picks processes by name.
    Some,
    /// Every process (of a user, group, terminal or session): `ps`, `pgrep -u me`,
    /// `pgrep -f .`.
    Everyone,
    /// Init: `pgrep -x systemd`, `pidof init`.
    Init,
}

fn listed(s: &Simple) -> Listed {
    let Some(p) = s.argv.first().map(|p| basename(p)) else {
        return Listed::Some;
    };
    let args = &s.argv[1..];
    match &*p {
        "ps" => Listed::Everyone,
        "pgrep" => {
            let sel = selection("pgrep", args);
            if sel.everyone() || sel.patterns.is_empty() || sel.unreadable() {
                Listed::Everyone
            } else if sel.init() {
                Listed::Init
            } else {
                Listed::Some
            }
        }
        "pidof" if args.iter().any(|a| INIT_NAMES.contains(&&*basename(a))) => Listed::Init,
        _ => Listed::Some,
    }
}

/// `kill -9 $(pgrep -u "$USER")`, `kill $(ps -o pid= -u me)`: the processes killed are
/// what a listing prints, and a listing by user, group, terminal or session alone (no name
/// to match) is every process of theirs — the shell, the server and this session's
/// supervisors among them. A listing of init (`kill $(pgrep -x systemd)`) is blocked as
/// `kill 1` is.
pub fn computed_kill_in(cmds: &[Simple]) -> Option<Finding> {
    let kills = |c: &Simple| {
        look_through(c).argvs.iter().any(|a| {
            a.first()
                .is_some_and(|p| matches!(&*basename(p), "kill" | "pkill" | "killall"))
        })
    };
    // Each command read once, and what follows it in its pipeline in one pass from the end
    // (scanned from every command, a 128 KiB line of `ps aux | ps aux | …` took 16 s).
    let killing: Vec<bool> = cmds.iter().map(kills).collect();
    if !killing.contains(&true) {
        return None;
    }
    let listing: Vec<Listed> = cmds.iter().map(listed).collect();
    // A `grep` between them picks the processes by name (`ps aux | grep node | awk … |
    // xargs kill`): not everyone's.
    let picks = |c: &Simple| {
        c.argv
            .first()
            .is_some_and(|p| matches!(&*basename(p), "grep" | "egrep" | "rg"))
    };
    let kill_after = super::pipeline::followed_by_before(cmds, kills, picks);
    let computed_target = |c: &Simple| {
        c.argv[1..]
            .iter()
            .any(|a| a.contains('$') || a.contains(lex::COMPUTED))
    };
    let everything: Vec<&Simple> = cmds
        .iter()
        .flat_map(|c| std::iter::once(c).chain(c.substitutions.iter()))
        .collect();
    let lists_init = std::cell::OnceCell::new();
    let lists_everyone = std::cell::OnceCell::new();
    cmds.iter().enumerate().find_map(|(i, c)| {
        if !killing[i] && listing[i] == Listed::Some {
            return None;
        }
        // `kill $(pgrep -u me)`, or `pgrep -u me | xargs kill`.
        let substituted =
            |what: Listed| killing[i] && c.substitutions.iter().any(|s| listed(s) == what);
        let piped = |what: Listed| listing[i] == what && kill_after[i];
        // `pid=$(pidof systemd); kill $pid`: a kill of a computed target in a line that lists
        // init.
        let carried = killing[i] && computed_target(c);
        let init_carried = carried
            && *lists_init.get_or_init(|| everything.iter().any(|s| listed(s) == Listed::Init));
        if substituted(Listed::Init) || piped(Listed::Init) || init_carried {
            return Some(finding(
                Severity::Block,
                "kill_all",
                "kills init (pid 1), which the listing selects by its name: the machine or container goes down",
                &c.argv,
            ));
        }
        // `pids=$(pgrep -u me); kill $pids`, `for p in $(ps -o pid= -u me); do kill $p;
        // done`, `pgrep -u me | while read p; do kill $p; done`: a kill of a computed
        // target in a line whose only listing is everyone's.
        let carried =
            carried && *lists_everyone.get_or_init(|| listed_everyone_unfiltered(&everything));
        (substituted(Listed::Everyone) || piped(Listed::Everyone) || carried).then(|| {
            finding(
                Severity::Warn,
                "kill_all",
                "kills every process a listing prints (by user or terminal, with no name to \
                 match): the shell and the server's own among them",
                &c.argv,
            )
        })
    })
}

/// Whether the line lists everyone's processes (as a command or inside a substitution) and
/// nothing in it picks some by name (`grep`, `pgrep NAME`, `awk '/node/'`).
fn listed_everyone_unfiltered(all: &[&Simple]) -> bool {
    let picks_by_name = |c: &&Simple| {
        let name = c.argv.first().map(|p| basename(p)).unwrap_or_default();
        matches!(&*name, "grep" | "egrep" | "fgrep" | "rg" | "awk" | "sed")
            || (name == "pgrep" && listed(c) != Listed::Everyone)
    };
    all.iter().any(|c| listed(c) == Listed::Everyone) && !all.iter().any(picks_by_name)
}

#[cfg(test)]
#[path = "kills_tests.rs"]
mod tests;
