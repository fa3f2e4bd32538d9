//! The options the strict allowlist admits for each reading tool, and how those tools'
//! parsers read a command line.
//!
//! Why options are listed, not refused by name: the programs accept more than the names a
//! deny-list holds. GNU tools (and git) resolve an abbreviated long option to the one it
//! begins — `sort --compress-prog=sh` ran `sh` for every temporary file, `sort --outp=FILE`
//! wrote anywhere, `date --se=…` set the clock — so a list of refused names matched literally
//! let all of them through. Here each program lists the options it is admitted with, and a
//! word is read as its own parser reads it (`getopt_long`: short options clustered, a
//! required value taken from the rest of the word or the next word, `--name=value`, options
//! anywhere before `--`); an option not listed, or abbreviated, is refused. An abbreviation
//! is never admitted, not even of an admitted option: it resolves against the program's own
//! list, which may hold longer names this one does not know.

/// How an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    No,
    Required,
    Optional,
}

/// A program's admitted options, in `getopt_long`'s terms: `short` as getopt's option string
/// (`k:` takes a value, `k::` may take one attached), `long` as names, `name=` taking a value,
/// `name=?` taking one only as `--name=value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub short: &'static str,
    pub long: &'static [&'static str],
}

impl Spec {
    fn short_value(&self, c: char) -> Option<Value> {
        for (i, ch) in self.short.char_indices() {
            if ch == ':' {
                continue;
            }
            let rest = &self.short[i + ch.len_utf8()..];
            let value = if rest.starts_with("::") {
                Value::Optional
            } else if rest.starts_with(':') {
                Value::Required
            } else {
                Value::No
            };
            if ch == c {
                return Some(value);
            }
        }
        None
    }

    fn long_value(&self, name: &str) -> Option<Value> {
        self.long.iter().find_map(|l| {
            if let Some(n) = l.strip_suffix("=?") {
                (n == name).then_some(Value::Optional)
            } else if let Some(n) = l.strip_suffix('=') {
                (n == name).then_some(Value::Required)
            } else {
                (*l == name).then_some(Value::No)
            }
        })
    }

    /// Check `words` (the arguments after the program's name) as `getopt_long` reads them.
    pub fn check(&self, program: &str, words: &[String]) -> Result<(), String> {
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            i += 1;
            if w == "--" {
                // Everything after is an operand.
                return Ok(());
            }
            if let Some(long) = w.strip_prefix("--") {
                let (name, attached) = match long.split_once('=') {
                    Some((n, _)) => (n, true),
                    None => (long, false),
                };
                match self.long_value(name) {
                    None => return Err(refused_long(program, name, self)),
                    Some(Value::No) if attached => {
                        return Err(format!("{program}: --{name} takes no value"));
                    }
                    // The next word is the value, whatever it looks like.
                    Some(Value::Required) if !attached => i += 1,
                    Some(_) => {}
                }
                continue;
            }
            let Some(cluster) = w.strip_prefix('-').filter(|c| !c.is_empty()) else {
                // An operand (`-` alone is standard input): getopt_long reads on past it.
                continue;
            };
            for (at, c) in cluster.char_indices() {
                match self.short_value(c) {
                    None => {
                        return Err(format!(
                            "{program}: the option -{c} is not admitted here (admitted: {})",
                            self.describe()
                        ));
                    }
                    Some(Value::No) => {}
                    Some(Value::Optional) => break,
                    Some(Value::Required) => {
                        // The rest of the word is the value; else the next word is.
                        if at + c.len_utf8() == cluster.len() {
                            i += 1;
                        }
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// What is admitted, for messages.
    pub fn describe(&self) -> String {
        let shorts: String = self.short.chars().filter(|c| *c != ':').collect();
        let mut parts = Vec::new();
        if !shorts.is_empty() {
            parts.push(format!("-[{shorts}]"));
        }
        parts.extend(
            self.long
                .iter()
                .map(|l| format!("--{}", l.trim_end_matches("=?").trim_end_matches('='))),
        );
        parts.join(" ")
    }
}

fn refused_long(program: &str, name: &str, spec: &Spec) -> String {
    let abbreviates: Vec<&str> = spec
        .long
        .iter()
        .map(|l| l.trim_end_matches("=?").trim_end_matches('='))
        .filter(|l| l.starts_with(name) && !name.is_empty())
        .collect();
    if abbreviates.is_empty() {
        format!("{program}: the option --{name} is not admitted here")
    } else {
        format!(
            "{program}: --{name} abbreviates an option (the program resolves it against its \
             own list, which may hold more than --{}); write the option in full",
            abbreviates.join(", --")
        )
    }
}

/// The reading tools and their admitted options. Left out on purpose: `sort -o/--output`,
/// `--compress-program` (runs a program), `-T/--temporary-directory` (writes there);
/// `date -s/--set`; `file -C/--compile` (writes a magic file), `-p/--preserve-date` (sets
/// times); `tail`'s `--pid` is harmless and kept.
pub const SPECS: &[(&str, Spec)] = &[
    (
        "ls",
        Spec {
            short: "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1I:T:w:",
            long: &[
                "all",
                "almost-all",
                "author",
                "escape",
                "block-size=",
                "ignore-backups",
                "color=?",
                "directory",
                "dired",
                "classify=?",
                "file-type",
                "format=",
                "full-time",
                "group-directories-first",
                "no-group",
                "human-readable",
                "si",
                "dereference-command-line",
                "dereference-command-line-symlink-to-dir",
                "hide=",
                "hyperlink=?",
                "indicator-style=",
                "inode",
                "ignore=",
                "kibibytes",
                "dereference",
                "numeric-uid-gid",
                "literal",
                "hide-control-chars",
                "show-control-chars",
                "quote-name",
                "quoting-style=",
                "reverse",
                "recursive",
                "size",
                "sort=",
                "time=",
                "time-style=",
                "tabsize=",
                "width=",
                "context",
                "zero",
                "help",
                "version",
            ],
        },
    ),
    (
        "cat",
        Spec {
            short: "AbeEnstTuv",
            long: &[
                "show-all",
                "number-nonblank",
                "show-ends",
                "number",
                "squeeze-blank",
                "show-tabs",
                "show-nonprinting",
                "help",
                "version",
            ],
        },
    ),
    (
        "head",
        Spec {
            short: "c:n:qvz0123456789",
            long: &[
                "bytes=",
                "lines=",
                "quiet",
                "silent",
                "verbose",
                "zero-terminated",
                "help",
                "version",
            ],
        },
    ),
    (
        "tail",
        Spec {
            short: "c:fFn:qs:vz0123456789",
            long: &[
                "bytes=",
                "follow=?",
                "lines=",
                "max-unchanged-stats=",
                "pid=",
                "quiet",
                "silent",
                "retry",
                "sleep-interval=",
                "verbose",
                "zero-terminated",
                "help",
                "version",
            ],
        },
    ),
    (
        "wc",
        Spec {
            short: "cmlLw",
            long: &[
                "bytes",
                "chars",
                "lines",
                "files0-from=",
                "max-line-length",
                "words",
                "total=",
                "help",
                "version",
            ],
        },
    ),
    (
        "nl",
        Spec {
            short: "b:d:f:h:i:l:n:ps:v:w:",
            long: &[
                "body-numbering=",
                "section-delimiter=",
                "footer-numbering=",
                "header-numbering=",
                "line-increment=",
                "join-blank-lines=",
                "number-format=",
                "no-renumber",
                "number-separator=",
                "starting-line-number=",
                "number-width=",
                "help",
                "version",
            ],
        },
    ),
    (
        "cut",
        Spec {
            short: "b:c:d:f:nsz",
            long: &[
                "bytes=",
                "characters=",
                "delimiter=",
                "fields=",
                "complement",
                "only-delimited",
                "output-delimiter=",
                "zero-terminated",
                "help",
                "version",
            ],
        },
    ),
    (
        "tr",
        Spec {
            short: "cCdst",
            long: &[
                "complement",
                "delete",
                "squeeze-repeats",
                "truncate-set1",
                "help",
                "version",
            ],
        },
    ),
    (
        "diff",
        Spec {
            short: "abBcC:dD:eEfF:hHiI:lL:nNpPqrsS:tTu:U:vwW:x:X:yZ",
            long: &[
                "normal",
                "brief",
                "report-identical-files",
                "context=?",
                "unified=?",
                "ed",
                "rcs",
                "side-by-side",
                "width=",
                "left-column",
                "suppress-common-lines",
                "show-c-function",
                "show-function-line=",
                "label=",
                "expand-tabs",
                "initial-tab",
                "tabsize=",
                "suppress-blank-empty",
                "paginate",
                "recursive",
                "no-dereference",
                "new-file",
                "unidirectional-new-file",
                "ignore-file-name-case",
                "no-ignore-file-name-case",
                "exclude=",
                "exclude-from=",
                "starting-file=",
                "from-file=",
                "to-file=",
                "ignore-case",
                "ignore-tab-expansion",
                "ignore-trailing-space",
                "ignore-space-change",
                "ignore-all-space",
                "ignore-blank-lines",
                "ignore-matching-lines=",
                "text",
                "strip-trailing-cr",
                "ifdef=",
                "line-format=",
                "old-line-format=",
                "new-line-format=",
                "unchanged-line-format=",
                "old-group-format=",
                "new-group-format=",
                "changed-group-format=",
                "unchanged-group-format=",
                "minimal",
                "horizon-lines=",
                "speed-large-files",
                "color=?",
                "palette=",
                "help",
                "version",
            ],
        },
    ),
    (
        "cmp",
        Spec {
            short: "bi:ln:sv",
            long: &[
                "print-bytes",
                "ignore-initial=",
                "verbose",
                "bytes=",
                "quiet",
                "silent",
                "help",
                "version",
            ],
        },
    ),
    (
        "stat",
        Spec {
            short: "Lfc:t",
            long: &[
                "dereference",
                "file-system",
                "cached=",
                "format=",
                "printf=",
                "terse",
                "help",
                "version",
            ],
        },
    ),
    (
        "du",
        Spec {
            short: "0abB:cd:DhHklLmPsSt:xX:",
            long: &[
                "null",
                "all",
                "apparent-size",
                "block-size=",
                "bytes",
                "total",
                "dereference-args",
                "max-depth=",
                "files0-from=",
                "human-readable",
                "inodes",
                "dereference",
                "count-links",
                "no-dereference",
                "separate-dirs",
                "si",
                "summarize",
                "threshold=",
                "time=?",
                "time-style=",
                "exclude-from=",
                "exclude=",
                "one-file-system",
                "help",
                "version",
            ],
        },
    ),
    (
        "df",
        Spec {
            short: "aB:hHiklPt:Tx:v",
            long: &[
                "all",
                "block-size=",
                "human-readable",
                "si",
                "inodes",
                "local",
                "no-sync",
                "output=?",
                "portability",
                "sync",
                "total",
                "type=",
                "print-type",
                "exclude-type=",
                "help",
                "version",
            ],
        },
    ),
    (
        "basename",
        Spec {
            short: "as:z",
            long: &["multiple", "suffix=", "zero", "help", "version"],
        },
    ),
    (
        "dirname",
        Spec {
            short: "z",
            long: &["zero", "help", "version"],
        },
    ),
    (
        "realpath",
        Spec {
            short: "emLPqsz",
            long: &[
                "canonicalize-existing",
                "canonicalize-missing",
                "logical",
                "physical",
                "quiet",
                "relative-to=",
                "relative-base=",
                "strip",
                "no-symlinks",
                "zero",
                "help",
                "version",
            ],
        },
    ),
    (
        "readlink",
        Spec {
            short: "femnqsvz",
            long: &[
                "canonicalize",
                "canonicalize-existing",
                "canonicalize-missing",
                "no-newline",
                "quiet",
                "silent",
                "verbose",
                "zero",
                "help",
                "version",
            ],
        },
    ),
    ("grep", GREP),
    ("egrep", GREP),
    ("fgrep", GREP),
    ("md5sum", SUMS),
    ("sha1sum", SUMS),
    ("sha256sum", SUMS),
    (
        "sort",
        Spec {
            short: "bcCdfghik:mMnrRsS:t:uVz",
            long: &[
                "ignore-leading-blanks",
                "dictionary-order",
                "ignore-case",
                "general-numeric-sort",
                "ignore-nonprinting",
                "month-sort",
                "human-numeric-sort",
                "numeric-sort",
                "random-sort",
                "random-source=",
                "reverse",
                "sort=",
                "version-sort",
                "batch-size=",
                "check=?",
                "debug",
                "files0-from=",
                "key=",
                "merge",
                "stable",
                "buffer-size=",
                "field-separator=",
                "parallel=",
                "unique",
                "zero-terminated",
                "help",
                "version",
            ],
        },
    ),
    (
        "date",
        Spec {
            short: "d:f:I::r:R:uU",
            long: &[
                "date=",
                "debug",
                "file=",
                "iso-8601=?",
                "resolution",
                "rfc-email",
                "rfc-822",
                "rfc-2822",
                "rfc-3339=",
                "reference=",
                "universal",
                "utc",
                "help",
                "version",
            ],
        },
    ),
    (
        "uname",
        Spec {
            short: "asnrvmpio",
            long: &[
                "all",
                "kernel-name",
                "nodename",
                "kernel-release",
                "kernel-version",
                "machine",
                "processor",
                "hardware-platform",
                "operating-system",
                "sysname",
                "release",
                "help",
                "version",
            ],
        },
    ),
    (
        "id",
        Spec {
            short: "aZgGnruz",
            long: &[
                "context", "group", "groups", "name", "real", "user", "zero", "help", "version",
            ],
        },
    ),
    (
        "free",
        Spec {
            short: "bkmghltvwc:s:L",
            long: &[
                "bytes",
                "kilo",
                "mega",
                "giga",
                "tera",
                "peta",
                "kibi",
                "mebi",
                "gibi",
                "tebi",
                "pebi",
                "human",
                "si",
                "lohi",
                "total",
                "committed",
                "wide",
                "count=",
                "seconds=",
                "line",
                "help",
                "version",
            ],
        },
    ),
    (
        "uptime",
        Spec {
            short: "phsV",
            long: &["pretty", "help", "since", "version"],
        },
    ),
    (
        "file",
        Spec {
            short: "0bcdEhiIkLlm:NrsSvzZe:F:f:P:",
            long: &[
                "apple",
                "extension",
                "mime-encoding",
                "mime-type",
                "brief",
                "checking-printout",
                "exclude=",
                "exclude-quiet=",
                "files-from=",
                "separator=",
                "keep-going",
                "list",
                "magic-file=",
                "mime",
                "no-buffer",
                "no-dereference",
                "no-pad",
                "no-sandbox",
                "print0",
                "dereference",
                "parameter=",
                "raw",
                "special-files",
                "uncompress",
                "uncompress-noreport",
                "debug",
                "help",
                "version",
            ],
        },
    ),
];

const GREP: Spec = Spec {
    short: "0123456789A:B:C:D:EFGHIJLPTUVZabcd:e:f:hilm:noqrRsuvwxyz",
    long: &[
        "extended-regexp",
        "fixed-strings",
        "basic-regexp",
        "perl-regexp",
        "regexp=",
        "file=",
        "ignore-case",
        "no-ignore-case",
        "word-regexp",
        "line-regexp",
        "null-data",
        "no-messages",
        "invert-match",
        "version",
        "help",
        "max-count=",
        "byte-offset",
        "line-number",
        "no-line-number",
        "line-buffered",
        "with-filename",
        "no-filename",
        "label=",
        "only-matching",
        "quiet",
        "silent",
        "binary-files=",
        "text",
        "directories=",
        "devices=",
        "recursive",
        "dereference-recursive",
        "include=",
        "exclude=",
        "exclude-from=",
        "exclude-dir=",
        "files-without-match",
        "files-with-matches",
        "count",
        "initial-tab",
        "null",
        "before-context=",
        "after-context=",
        "context=",
        "group-separator=",
        "no-group-separator",
        "color=?",
        "colour=?",
        "binary",
    ],
};

const SUMS: Spec = Spec {
    short: "bctzw",
    long: &[
        "binary",
        "check",
        "tag",
        "text",
        "zero",
        "ignore-missing",
        "quiet",
        "status",
        "strict",
        "warn",
        "help",
        "version",
    ],
};

/// The admitted options of `program`, when it is one of the reading tools listed here.
pub fn spec(program: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|(p, _)| *p == program).map(|(_, s)| s)
}

/// Options of git's diff machinery that `diff`, `log` and `show` take. Not admitted:
/// `--output` (writes a file), `--ext-diff` and `--textconv` (run programs the
/// configuration names).
const GIT_DIFF_LONG: &[&str] = &[
    "patch",
    "no-patch",
    "unified=",
    "raw",
    "patch-with-raw",
    "patch-with-stat",
    "stat=?",
    "numstat",
    "shortstat",
    "dirstat=?",
    "cumulative",
    "summary",
    "compact-summary",
    "name-only",
    "name-status",
    "submodule=?",
    "color=?",
    "no-color",
    "color-moved=?",
    "no-color-moved",
    "word-diff=?",
    "word-diff-regex=",
    "color-words=?",
    "no-renames",
    "rename-empty",
    "no-rename-empty",
    "check",
    "full-index",
    "binary",
    "abbrev=?",
    "break-rewrites=?",
    "find-renames=?",
    "find-copies=?",
    "find-copies-harder",
    "irreversible-delete",
    "diff-filter=",
    "pickaxe-all",
    "pickaxe-regex",
    "text",
    "ignore-cr-at-eol",
    "ignore-space-at-eol",
    "ignore-space-change",
    "ignore-all-space",
    "ignore-blank-lines",
    "ignore-matching-lines=",
    "inter-hunk-context=",
    "function-context",
    "exit-code",
    "quiet",
    "no-ext-diff",
    "no-textconv",
    "ignore-submodules=?",
    "src-prefix=",
    "dst-prefix=",
    "no-prefix",
    "default-prefix",
    "line-prefix=",
    "minimal",
    "patience",
    "histogram",
    "anchored=",
    "diff-algorithm=",
    "indent-heuristic",
    "no-indent-heuristic",
    "relative=?",
    "no-relative",
    "stat-width=",
    "stat-name-width=",
    "stat-count=",
    "stat-graph-width=",
];

/// Options of git's revision walk that `log`, `show` and `shortlog` take. Not admitted:
/// `--show-signature` (runs the configured gpg).
const GIT_LOG_LONG: &[&str] = &[
    "max-count=",
    "skip=",
    "since=",
    "after=",
    "until=",
    "before=",
    "author=",
    "committer=",
    "grep=",
    "all-match",
    "invert-grep",
    "regexp-ignore-case",
    "extended-regexp",
    "fixed-strings",
    "perl-regexp",
    "merges",
    "no-merges",
    "min-parents=",
    "max-parents=",
    "first-parent",
    "all",
    "branches=?",
    "tags=?",
    "remotes=?",
    "glob=",
    "exclude=",
    "reflog",
    "walk-reflogs",
    "oneline",
    "pretty=?",
    "format=",
    "abbrev-commit",
    "no-abbrev-commit",
    "encoding=",
    "notes=?",
    "no-notes",
    "relative-date",
    "date=",
    "parents",
    "children",
    "left-right",
    "graph",
    "decorate=?",
    "no-decorate",
    "source",
    "follow",
    "full-history",
    "simplify-merges",
    "simplify-by-decoration",
    "ancestry-path",
    "topo-order",
    "date-order",
    "author-date-order",
    "reverse",
    "no-walk=?",
    "do-walk",
    "cherry-pick",
    "cherry-mark",
    "boundary",
    "mailmap",
    "use-mailmap",
    "no-mailmap",
    "log-size",
    "full-diff",
    "diff-merges=",
    "cc",
    "dense",
    "sparse",
];

/// The reading git subcommands and their admitted options (git's parse-options reads a
/// command line as `getopt_long` does, abbreviations included).
const GIT_SPECS: &[(&str, &str, &[&[&str]])] = &[
    (
        "diff",
        "pusU:zM::C::B::DRabwWS:G:O:",
        &[
            GIT_DIFF_LONG,
            &["cached", "staged", "merge-base", "no-index"],
        ],
    ),
    (
        "log",
        "pusU:zM::C::B::DRabwWS:G:O:n:iEFPL:cm",
        &[GIT_DIFF_LONG, GIT_LOG_LONG],
    ),
    (
        "show",
        "pusU:zM::C::B::DRabwWS:G:O:n:iEFPcm",
        &[GIT_DIFF_LONG, GIT_LOG_LONG],
    ),
    (
        "shortlog",
        "nsecw::",
        &[GIT_LOG_LONG, &["numbered", "summary", "email", "group="]],
    ),
    (
        "status",
        "sbu::zv",
        &[&[
            "short",
            "branch",
            "show-stash",
            "porcelain=?",
            "long",
            "verbose",
            "untracked-files=?",
            "ignored=?",
            "ignore-submodules=?",
            "column=?",
            "no-column",
            "ahead-behind",
            "no-ahead-behind",
            "renames",
            "no-renames",
            "find-renames=?",
            "null",
        ]],
    ),
    (
        "blame",
        "L:ltS:seswM::C::cpnfb",
        &[&[
            "porcelain",
            "line-porcelain",
            "incremental",
            "root",
            "show-stats",
            "score-debug",
            "show-name",
            "show-number",
            "show-email",
            "date=",
            "progress",
            "no-progress",
            "abbrev=?",
            "reverse",
            "first-parent",
            "ignore-rev=",
            "ignore-revs-file=",
            "color-lines",
            "color-by-age",
            "contents=",
        ]],
    ),
    (
        "rev-parse",
        "q",
        &[&[
            "abbrev-ref=?",
            "symbolic",
            "symbolic-full-name",
            "short=?",
            "verify",
            "quiet",
            "sq",
            "sq-quote",
            "show-toplevel",
            "show-prefix",
            "show-cdup",
            "git-dir",
            "git-common-dir",
            "absolute-git-dir",
            "is-inside-work-tree",
            "is-inside-git-dir",
            "is-bare-repository",
            "is-shallow-repository",
            "show-superproject-working-tree",
            "shared-index-path",
            "all",
            "branches=?",
            "tags=?",
            "remotes=?",
            "glob=",
            "since=",
            "until=",
            "local-env-vars",
            "path-format=",
            "git-path=",
            "default=",
            "revs-only",
            "no-revs",
            "flags",
            "no-flags",
        ]],
    ),
    (
        "ls-files",
        "cdoisukmtvfzx:X:",
        &[&[
            "cached",
            "deleted",
            "others",
            "ignored",
            "stage",
            "unmerged",
            "killed",
            "modified",
            "directory",
            "no-empty-directory",
            "eol",
            "exclude=",
            "exclude-from=",
            "exclude-per-directory=",
            "exclude-standard",
            "error-unmatch",
            "full-name",
            "recurse-submodules",
            "abbrev=?",
            "debug",
            "deduplicate",
            "format=",
            "sparse",
            "with-tree=",
        ]],
    ),
    (
        "describe",
        "",
        &[&[
            "all",
            "tags",
            "contains",
            "abbrev=",
            "candidates=",
            "exact-match",
            "debug",
            "long",
            "match=",
            "exclude=",
            "always",
            "first-parent",
            "dirty=?",
            "broken=?",
        ]],
    ),
    (
        "ls-tree",
        "drtlz",
        &[&[
            "long",
            "name-only",
            "name-status",
            "object-only",
            "full-name",
            "full-tree",
            "abbrev=?",
            "format=",
        ]],
    ),
    (
        "cat-file",
        "tsepZ",
        &[&[
            "batch=?",
            "batch-check=?",
            "batch-command=?",
            "batch-all-objects",
            "buffer",
            "unordered",
            "follow-symlinks",
            "allow-unknown-type",
            "mailmap",
            "use-mailmap",
        ]],
    ),
];

/// The admitted options of `git <sub>`, when it is a reading subcommand listed here. Built
/// once: git's long lists are shared between subcommands.
pub fn git_spec(sub: &str) -> Option<&'static Spec> {
    static BUILT: std::sync::OnceLock<Vec<(&'static str, Spec)>> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            GIT_SPECS
                .iter()
                .map(|(name, short, groups)| {
                    let long: Vec<&'static str> =
                        groups.iter().flat_map(|g| g.iter().copied()).collect();
                    (
                        *name,
                        Spec {
                            short,
                            long: Box::leak(long.into_boxed_slice()),
                        },
                    )
                })
                .collect()
        })
        .iter()
        .find(|(n, _)| *n == sub)
        .map(|(_, s)| s)
}

/// `find`'s words: its own grammar (tests, actions and operators are single-dash words, never
/// abbreviated), admitted word by word, with how many values each takes. Not admitted:
/// `-exec`, `-execdir`, `-ok`, `-okdir` (run programs), `-delete`, `-fprint`, `-fprint0`,
/// `-fprintf`, `-fls` (write files), `-D` (debug options) and `-O`.
const FIND_WORDS: &[(&str, usize)] = &[
    ("-H", 0),
    ("-L", 0),
    ("-P", 0),
    ("-name", 1),
    ("-iname", 1),
    ("-path", 1),
    ("-ipath", 1),
    ("-wholename", 1),
    ("-iwholename", 1),
    ("-regex", 1),
    ("-iregex", 1),
    ("-regextype", 1),
    ("-lname", 1),
    ("-ilname", 1),
    ("-type", 1),
    ("-xtype", 1),
    ("-size", 1),
    ("-mtime", 1),
    ("-mmin", 1),
    ("-atime", 1),
    ("-amin", 1),
    ("-ctime", 1),
    ("-cmin", 1),
    ("-used", 1),
    ("-newer", 1),
    ("-anewer", 1),
    ("-cnewer", 1),
    ("-samefile", 1),
    ("-user", 1),
    ("-group", 1),
    ("-uid", 1),
    ("-gid", 1),
    ("-perm", 1),
    ("-links", 1),
    ("-inum", 1),
    ("-fstype", 1),
    ("-context", 1),
    ("-maxdepth", 1),
    ("-mindepth", 1),
    ("-printf", 1),
    ("-nouser", 0),
    ("-nogroup", 0),
    ("-empty", 0),
    ("-readable", 0),
    ("-writable", 0),
    ("-executable", 0),
    ("-true", 0),
    ("-false", 0),
    ("-print", 0),
    ("-print0", 0),
    ("-ls", 0),
    ("-prune", 0),
    ("-quit", 0),
    ("-depth", 0),
    ("-d", 0),
    ("-daystart", 0),
    ("-follow", 0),
    ("-ignore_readdir_race", 0),
    ("-noignore_readdir_race", 0),
    ("-mount", 0),
    ("-xdev", 0),
    ("-noleaf", 0),
    ("-warn", 0),
    ("-nowarn", 0),
    ("-not", 0),
    ("-and", 0),
    ("-a", 0),
    ("-or", 0),
    ("-o", 0),
    ("-help", 0),
    ("--help", 0),
    ("-version", 0),
    ("--version", 0),
];

/// Check `find`'s words against [`FIND_WORDS`]. `-newerXY` takes one value.
pub fn check_find(words: &[String]) -> Result<(), String> {
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if !w.starts_with('-') || w == "-" {
            // A starting point, `(`, `)`, `!` or `,`.
            continue;
        }
        if let Some((_, values)) = FIND_WORDS.iter().find(|(n, _)| n == w) {
            i += values;
            continue;
        }
        if w.strip_prefix("-newer").is_some_and(|xy| xy.len() == 2) {
            i += 1;
            continue;
        }
        return Err(format!(
            "find: {w} is not admitted here (it runs, deletes or writes, or is not a find \
             word this tool knows)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(program: &str, line: &str) -> Result<(), String> {
        let words: Vec<String> = shell_words::split(line).unwrap_or_default();
        match program {
            "find" => check_find(&words),
            _ => spec(program).expect("listed").check(program, &words),
        }
    }

    #[test]
    fn options_are_read_as_getopt_long_reads_them() {
        assert!(check("sort", "-r -k 2 -t , names.txt").is_ok());
        assert!(check("sort", "-k2,2n -- -o").is_ok(), "after --, operands");
        assert!(
            check("sort", "names.txt --reverse --key=2").is_ok(),
            "options anywhere"
        );
        for bad in [
            "-o out x",
            "-uo out x",
            "--output=out x",
            "--outp=out x",
            "--o=out x",
            "--compress-program=sh x",
            "--compress-prog=sh x",
            "-T /etc x",
            "--temporary-directory=/etc x",
        ] {
            let why = check("sort", bad).unwrap_err();
            assert!(!why.is_empty(), "{bad}");
        }
        // An abbreviation of an admitted option is refused too, and said so.
        let why = check("sort", "--rev x").unwrap_err();
        assert!(why.contains("abbreviates"), "{why}");
        // A value is the next word whatever it looks like.
        assert!(check("grep", "-e --output x").is_ok());
        assert!(check("grep", "-e-x file").is_ok());
        assert!(check("head", "-20 file").is_ok());
        assert!(check("tail", "-n +5 -f log").is_ok());
        assert!(check("date", "+%s").is_ok());
        assert!(check("date", "-u -d yesterday").is_ok());
        for bad in ["-s 2020-01-01", "--set=2020-01-01", "--se=2020", "--s=2020"] {
            assert!(check("date", bad).is_err(), "{bad}");
        }
        assert!(check("file", "-b x").is_ok());
        assert!(check("file", "-C").is_err());
        assert!(check("file", "--comp").is_err());
        assert!(check("ls", "--color=auto -la").is_ok());
        assert!(check("ls", "--all=x").is_err(), "a flag takes no value");
    }

    #[test]
    fn git_reads_with_its_reading_options_only() {
        let git = |sub: &str, line: &str| {
            let words: Vec<String> = shell_words::split(line).unwrap_or_default();
            git_spec(sub)
                .expect("listed")
                .check(&format!("git {sub}"), &words)
        };
        assert!(git("log", "--oneline -n 5 --graph").is_ok());
        assert!(git("log", "-p -- src").is_ok());
        assert!(git("diff", "--stat HEAD~1").is_ok());
        assert!(git("status", "-sb --porcelain=v2").is_ok());
        for (sub, bad) in [
            ("diff", "--output=/tmp/x"),
            ("diff", "--outp=/tmp/x"),
            ("diff", "--ext-diff"),
            ("log", "--textconv -p"),
            ("log", "--show-signature"),
            ("show", "--output /tmp/x"),
            ("cat-file", "--filters HEAD:x"),
            ("cat-file", "--textconv HEAD:x"),
        ] {
            assert!(git(sub, bad).is_err(), "git {sub} {bad}");
        }
        assert!(git_spec("push").is_none());
    }

    #[test]
    fn find_admits_its_reading_words_only() {
        assert!(check("find", ". -name '*.rs' -type f -print").is_ok());
        assert!(check("find", ". ( -name a -o -name b ) -newermt 2020-01-01").is_ok());
        assert!(
            check("find", ". -name -exec").is_ok(),
            "a value, not an action"
        );
        for bad in [
            ". -exec rm {} ;",
            ". -execdir ls ;",
            ". -ok rm {} ;",
            ". -delete",
            ". -fprint /tmp/x",
            ". -fls /tmp/x",
            "-D exec .",
            ". -unknown",
        ] {
            assert!(check("find", bad).is_err(), "{bad}");
        }
    }
}
