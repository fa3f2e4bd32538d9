//! Which git settings are data and which name something git runs: `git -c KEY=VALUE` and
//! `git config KEY VALUE` pass only keys known to be data. Why an allow-list: the keys that
//! name a program, a file of configuration or a transport's command are many and grow with
//! each release (`core.fsmonitor`, `include.path`, `protocol.ext.allow`, per-driver
//! `filter.*.clean`), and a list of them missed some.

/// Whether a git setting is data (a name, a colour, a switch) rather than something that
/// names a program, a file of configuration or code, or lets a transport run one. An
/// allow-list: keys not named here are not known to be data.
pub fn data_key(key: &str, value: &str) -> bool {
    const SECTIONS: &[&str] = &["user", "color", "advice", "column", "i18n", "versionsort"];
    const KEYS: &[&str] = &[
        "core.quotepath",
        "core.autocrlf",
        "core.safecrlf",
        "core.filemode",
        "core.ignorecase",
        "core.longpaths",
        "core.symlinks",
        "core.whitespace",
        "core.abbrev",
        "core.eol",
        "core.precomposeunicode",
        "core.untrackedcache",
        "core.preloadindex",
        "core.commentchar",
        "core.compression",
        "core.logallrefupdates",
        "init.defaultbranch",
        "pull.rebase",
        "pull.ff",
        "push.default",
        "push.autosetupremote",
        "push.followtags",
        "merge.conflictstyle",
        "merge.ff",
        "merge.log",
        "rebase.autosquash",
        "rebase.autostash",
        "rebase.updaterefs",
        "fetch.prune",
        "fetch.parallel",
        "diff.renames",
        "diff.algorithm",
        "diff.colormoved",
        "diff.mnemonicprefix",
        "diff.noprefix",
        "diff.context",
        "diff.indentheuristic",
        "status.short",
        "status.branch",
        "status.showuntrackedfiles",
        "log.date",
        "log.decorate",
        "log.abbrevcommit",
        "log.follow",
        "commit.verbose",
        "commit.cleanup",
        "commit.gpgsign",
        "tag.sort",
        "tag.gpgsign",
        "help.autocorrect",
        "gc.auto",
        "safe.directory",
        "http.sslverify",
        "http.postbuffer",
        "format.pretty",
        "grep.linenumber",
        "grep.patterntype",
        "blame.coloring",
    ];
    let key = key.to_ascii_lowercase();
    if value.starts_with('!') {
        return false;
    }
    // Data, but not every value: `safe.directory=*` trusts every repository's configuration
    // whoever owns it, `http.sslVerify=false` takes any server's word for who it is.
    match key.as_str() {
        "safe.directory" => return value.trim_matches(['\'', '"']) != "*",
        "http.sslverify" => {
            return matches!(
                value.to_ascii_lowercase().as_str(),
                "true" | "yes" | "on" | "1"
            );
        }
        _ => {}
    }
    let section = key.split('.').next().unwrap_or("");
    if SECTIONS.contains(&section) || KEYS.contains(&key.as_str()) {
        return true;
    }
    // `branch.<name>.remote|merge|rebase` and `remote.<name>.url|fetch|…`: where things go.
    if let Some((sub, name)) = key.rsplit_once('.') {
        let per = |sec: &str| sub.starts_with(sec) && sub.len() > sec.len();
        return (per("branch.") && matches!(name, "remote" | "merge" | "rebase" | "description"))
            || (per("remote.")
                && matches!(
                    name,
                    "url" | "pushurl" | "fetch" | "push" | "tagopt" | "prune"
                ));
    }
    false
}

/// The key `git config ARGS` sets, when it sets one: `git config [scope] KEY VALUE`,
/// `git config set KEY VALUE`, `--add`/`--replace-all` forms; none for reading, listing
/// and removing (`--get…`, `-l`, `--unset…`, `get`, `list`, `unset`, one word alone).
pub fn config_write(args: &[String]) -> Option<String> {
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "-l",
        "--list",
        "--unset",
        "--unset-all",
        "--remove-section",
        "--rename-section",
        "-e",
        "--edit",
        "get",
        "list",
        "unset",
        "remove-section",
        "rename-section",
    ];
    if args.iter().any(|a| READS.contains(&a.as_str())) {
        return None;
    }
    let mut words = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-f" | "--file" | "--blob" | "--type" | "--default" | "--comment" | "--value" => {
                i += 2;
                continue;
            }
            _ if a.starts_with('-') => {}
            _ => words.push(a),
        }
        i += 1;
    }
    let words: &[&str] = match words.first() {
        Some(&"set") => &words[1..],
        _ => &words,
    };
    match words {
        [key, value, ..] if !data_key(key, value) => Some((*key).to_string()),
        _ => None,
    }
}
