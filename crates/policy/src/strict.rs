//! The strict allowlist of `memory_terminal` (docs/policy.md, "`memory_terminal`"): one simple command, matched on
//! its argv — `ls` does not admit `lsof`, `git branch` does not admit `git branch -D` — with
//! no shell operators, redirections, substitutions or variable assignments.
//!
//! A program is named as the entry names it: `git`, found on the operator's `PATH`, not a
//! path to a file called `git`. Matched on its last component, `./git status` and
//! `/tmp/x/git status` passed and ran whatever the agent had written there (an editing tool
//! beside this server writes files); and a path checked, then run, may be swapped between
//! the two.

use super::{lex, strict_build, strict_options};

/// What may follow an entry's prefix.
#[derive(Debug, Clone, PartialEq)]
pub enum Rest {
    /// Any arguments: a program with no option that writes or runs anything (`echo`), or an
    /// operator's entry.
    Any,
    /// Only these flags, no other words.
    Flags(Vec<String>),
    /// The admitted options of a program whose parser is `getopt_long`'s (GNU tools, git):
    /// read as it reads them; an option not listed, or abbreviated, is refused.
    Getopt(&'static strict_options::Spec),
    /// `find`'s reading tests and actions.
    Find,
    /// Words that are not options, and only these options (`strict_build`): a build or test
    /// command, which runs the project's own code.
    Options(strict_build::Options),
}

/// What the allowlist found a command to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admitted {
    /// A build or test command: it runs the project's own code (build scripts, tests, the
    /// tools' project configuration), which the agent may have written.
    pub runs_project_code: bool,
    /// A `git` command: it reads the repository's configuration (`strict_git`).
    pub git: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub prefix: Vec<String>,
    pub rest: Rest,
}

#[derive(Debug, Clone)]
pub struct Allowlist {
    pub entries: Vec<Entry>,
}

/// Reading tools. Those with options are checked against `strict_options` (GNU's
/// `getopt_long` reads abbreviations); the rest — `echo`, `pwd`, `whoami`, `true`,
/// `false`, `ps`, `which`, `jq` — have no option that writes a file or runs a program.
const READ_ONLY: &[&str] = &[
    "ls",
    "pwd",
    "whoami",
    "id",
    "uname",
    "uptime",
    "echo",
    "cat",
    "head",
    "tail",
    "wc",
    "nl",
    "cut",
    "tr",
    "diff",
    "cmp",
    "stat",
    "du",
    "df",
    "which",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "grep",
    "egrep",
    "fgrep",
    "jq",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "ps",
    "free",
    "true",
    "false",
    "date",
    "sort",
    "file",
    "tree",
    "rg",
];

/// `hostname` prints; with a name it renames the machine.
const HOSTNAME_FLAGS: &[&str] = &[
    "-f",
    "-s",
    "-d",
    "-i",
    "-I",
    "-A",
    "--fqdn",
    "--short",
    "--domain",
    "--ip-address",
    "--all-ip-addresses",
    "--all-fqdns",
];

/// `git` subcommands that only read (their options: `strict_options::git_spec`).
const GIT_READ: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "rev-parse",
    "ls-files",
    "describe",
    "shortlog",
    "ls-tree",
    "cat-file",
];

fn words(s: &[&str]) -> Vec<String> {
    s.iter().map(|w| w.to_string()).collect()
}

impl Default for Allowlist {
    fn default() -> Self {
        let mut e: Vec<Entry> = READ_ONLY
            .iter()
            .map(|c| Entry {
                prefix: words(&[c]),
                rest: strict_options::spec(c).map_or(Rest::Any, Rest::Getopt),
            })
            .collect();
        e.push(Entry {
            prefix: words(&["hostname"]),
            rest: Rest::Flags(words(HOSTNAME_FLAGS)),
        });
        e.push(Entry {
            prefix: words(&["find"]),
            rest: Rest::Find,
        });
        for sub in GIT_READ {
            if let Some(spec) = strict_options::git_spec(sub) {
                e.push(Entry {
                    prefix: words(&["git", sub]),
                    rest: Rest::Getopt(spec),
                });
            }
        }
        e.push(Entry {
            prefix: words(&["git", "branch"]),
            rest: Rest::Flags(words(&[
                "-a",
                "-r",
                "-v",
                "-vv",
                "--list",
                "--all",
                "--remotes",
                "--verbose",
                "--show-current",
                "--merged",
                "--no-merged",
            ])),
        });
        e.push(Entry {
            prefix: words(&["git", "remote"]),
            rest: Rest::Flags(words(&["-v", "--verbose"])),
        });
        e.push(Entry {
            prefix: words(&["git", "tag"]),
            rest: Rest::Flags(words(&["-l", "--list"])),
        });
        // `git stash list` takes `git log`'s options (`--output=FILE` among them, which
        // writes anywhere): read as `git log` is.
        if let Some(spec) = strict_options::git_spec("log") {
            e.push(Entry {
                prefix: words(&["git", "stash", "list"]),
                rest: Rest::Getopt(spec),
            });
        }
        e.extend(
            strict_build::entries()
                .into_iter()
                .map(|(prefix, options)| Entry {
                    prefix,
                    rest: Rest::Options(options),
                }),
        );
        for tool in [
            "python3", "python", "node", "rustc", "go", "npm", "git", "cargo",
        ] {
            e.push(Entry {
                prefix: words(&[tool, "--version"]),
                rest: Rest::Flags(vec![]),
            });
        }
        Allowlist { entries: e }
    }
}

impl Allowlist {
    /// The defaults plus operator patterns (each admits any arguments after it).
    pub fn with_extra(extra: &[Vec<String>]) -> Allowlist {
        let mut a = Allowlist::default();
        a.entries
            .extend(extra.iter().filter(|p| !p.is_empty()).map(|p| Entry {
                prefix: p.clone(),
                rest: Rest::Any,
            }));
        a
    }

    /// What the list admits, for error messages.
    pub fn describe(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| {
                let head = e.prefix.join(" ");
                match &e.rest {
                    Rest::Any => format!("{head} …"),
                    Rest::Flags(f) if f.is_empty() => head,
                    Rest::Flags(f) => format!("{head} [{}]", f.join("|")),
                    Rest::Getopt(spec) => format!("{head} [{}] …", spec.describe()),
                    Rest::Find => format!("{head} … (reading tests and actions only)"),
                    Rest::Options(o) => format!("{head} {}", o.describe()),
                }
            })
            .collect()
    }

    /// The entry that admits `argv`; else why an entry with its prefix refused its
    /// options (`None` when no entry has its prefix).
    fn admits(&self, argv: &[String]) -> Result<Admitted, Option<String>> {
        let mut why = None;
        for e in &self.entries {
            let n = e.prefix.len();
            if argv.len() < n || argv[..n] != e.prefix[..] {
                continue;
            }
            let rest = &argv[n..];
            let program = e.prefix.join(" ");
            let verdict = match &e.rest {
                Rest::Any => Ok(()),
                Rest::Flags(allowed) => match rest.iter().find(|a| !allowed.contains(a)) {
                    None => Ok(()),
                    Some(a) => Err(format!("{program}: {a:?} is not admitted here")),
                },
                Rest::Getopt(spec) => spec.check(&program, rest),
                Rest::Find => strict_options::check_find(rest),
                Rest::Options(o) => {
                    if o.admit(rest) {
                        Ok(())
                    } else {
                        Err(format!("{program} takes only {}", o.describe()))
                    }
                }
            };
            match verdict {
                Ok(()) => {
                    return Ok(Admitted {
                        runs_project_code: matches!(&e.rest, Rest::Options(o) if o.runs_project_code),
                        git: argv[0] == "git",
                    });
                }
                Err(w) => why = why.or(Some(w)),
            }
        }
        Err(why)
    }

    /// Check a command line (without `args`) or a program with argv. `Err` says why not.
    pub fn check(&self, command: &str, args: Option<&[String]>) -> Result<Admitted, String> {
        let argv: Vec<String> = match args {
            Some(a) => {
                let mut v = vec![command.to_string()];
                v.extend(a.iter().cloned());
                v
            }
            None => {
                let parsed = lex::parse(command);
                if !parsed.errors.is_empty() {
                    return Err(format!(
                        "the command line cannot be parsed: {}",
                        parsed.errors.join("; ")
                    ));
                }
                if parsed.compound || parsed.commands.len() != 1 {
                    return Err("shell operators, redirections and substitutions are not allowed here (one simple command only)".into());
                }
                let words = shell_words::split(command).map_err(|e| e.to_string())?;
                let argv = parsed.commands[0].argv.clone();
                if words.len() != argv.len() {
                    return Err(
                        "variable assignments and command groups are not allowed here".into(),
                    );
                }
                argv
            }
        };
        if argv.is_empty() {
            return Err("empty command".into());
        }
        let refused = match self.admits(&argv) {
            Ok(admitted) => return Ok(admitted),
            Err(why) => why,
        };
        if let Some(why) = refused {
            Err(why)
        } else if argv[0].contains('/') {
            Err(format!(
                "{:?} names a program by a path: memory_terminal runs the allowlisted programs \
                 by name, as the operator's PATH finds them (`git status`, not `./git status` \
                 or `/usr/bin/git status`)",
                argv[0]
            ))
        } else {
            Err(format!(
                "{:?} is not on the strict allowlist",
                shell_words::join(&argv)
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_matching_not_prefixes() {
        let a = Allowlist::default();
        assert!(a.check("ls -la /tmp", None).is_ok());
        assert!(a.check("lsof", None).is_err());
        assert!(a.check("git branch", None).is_ok());
        assert!(a.check("git branch -a", None).is_ok());
        assert!(a.check("git branch -D main", None).is_err());
        assert!(a.check("git branch newbranch", None).is_err());
        assert!(a.check("git status", None).is_ok());
        assert!(a.check("git push", None).is_err());
        assert!(a.check("find . -name '*.rs'", None).is_ok());
        assert!(a.check("find . -delete", None).is_err());
        assert!(a.check("find . -exec rm {} ;", None).is_err());
        assert!(a.check("cargo fmt --check", None).is_ok());
        assert!(a.check("cargo fmt", None).is_err());
        // A path picks a file the allowlist never saw; only the name is matched.
        for path in [
            "/bin/ls",
            "./git status",
            "/tmp/x/git --version",
            "bin/cat x",
        ] {
            let why = a.check(path, None).unwrap_err();
            assert!(why.contains("by a path"), "{path}: {why}");
        }
        assert!(a.check("/bin/ls", Some(&["-la".to_string()])).is_err());
        assert!(a.check("tree -L 2", None).is_ok());
        assert!(a.check("tree -R -H . -L 1", None).is_err());
        // Options that would make a reading tool write or run something.
        assert!(a.check("sort -r names.txt", None).is_ok());
        assert!(a.check("sort -o /etc/passwd x", None).is_err());
        assert!(a.check("sort -uo out x", None).is_err());
        assert!(a.check("sort --output=out x", None).is_err());
        assert!(a.check("rg foo src", None).is_ok());
        assert!(a.check("rg --pre=./evil foo", None).is_err());
        assert!(a.check("rg --hostname-bin ./evil foo", None).is_err());
        // rg's options are an allow-list too: searching options pass, what runs a program
        // (`--pre-glob` with `--pre`, `-z` running the decompressors) or an unknown one does not.
        assert!(
            a.check("rg -n -i -g '*.rs' -t rust --hidden -C2 foo src", None)
                .is_ok()
        );
        assert!(
            a.check("rg -e --pre foo", None).is_ok(),
            "a pattern, not an option"
        );
        for bad in [
            "rg -z foo",
            "rg -nz foo",
            "rg --search-zip foo",
            "rg --pre-glob '*' --pre=sh x",
            "rg --no-such x",
            "rg --generate man",
        ] {
            assert!(a.check(bad, None).is_err(), "{bad}");
        }
        assert!(a.check("git diff --stat", None).is_ok());
        assert!(a.check("git diff --output=/tmp/x", None).is_err());
        assert!(a.check("npm ls --depth=0", None).is_ok());
        assert!(a.check("npm ls --logs-dir=/tmp/x", None).is_err());
        assert!(a.check("npm ls --userconfig x", None).is_err());
        assert!(a.check("git stash list", None).is_ok());
        assert!(a.check("git stash list --oneline", None).is_ok());
        assert!(a.check("git stash list --output=/tmp/x", None).is_err());
        assert!(a.check("git stash list --outp=/tmp/x", None).is_err());
        assert!(a.check("hostname", None).is_ok());
        assert!(a.check("hostname -f", None).is_ok());
        assert!(a.check("hostname pwned", None).is_err());
        assert!(a.check("date", None).is_ok());
        assert!(a.check("date -s 2020-01-01", None).is_err());
        assert!(a.check("find . -execdir ls ;", None).is_err());
        assert!(a.check("find . -name x -print", None).is_ok());
    }

    #[test]
    fn operators_and_tricks_are_refused() {
        let a = Allowlist::default();
        for bad in [
            "ls; rm -rf /",
            "ls && id",
            "ls | sh",
            "ls > x",
            "echo $(id)",
            "cat `id`",
            "PATH=/tmp ls",
            "(ls)",
            "ls &",
        ] {
            assert!(a.check(bad, None).is_err(), "{bad}");
        }
        assert!(a.check("ls", Some(&["-la".to_string()])).is_ok());
        assert!(a.check("rm", Some(&["-rf".to_string()])).is_err());
        let ext = Allowlist::with_extra(&[vec!["make".into(), "test".into()]]);
        assert!(ext.check("make test", None).is_ok());
        assert!(ext.check("make install", None).is_err());
        // An operator's entry may be a path: then that path, exactly, is admitted.
        let ext = Allowlist::with_extra(&[vec!["/opt/ci/lint".into()]]);
        assert!(ext.check("/opt/ci/lint src", None).is_ok());
        assert!(ext.check("lint src", None).is_err());
        assert!(ext.check("/tmp/opt/ci/lint", None).is_err());
    }
}
