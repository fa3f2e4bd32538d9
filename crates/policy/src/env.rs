//! The environment a request may set (`execution.env`), for both tools: names that carry
//! data, plus the ones the operator adds.
//!
//! Why a list of names that pass, not of names refused: the environment is neither judged
//! by the policy nor read by a person approving, yet programs read it for which program to
//! run, which configuration to load and which code to run first — `PATH` picks the `git`
//! that `git status` runs, `HOME` the `.bashrc` a new shell sources, `GIT_CONFIG_*` a
//! `core.fsmonitor` program, `INPUTRC` key bindings that run commands, `PERL5OPT`,
//! `NODE_OPTIONS`, `PYTHONSTARTUP` and `RUBYOPT` code loaded before the program's own,
//! `RUSTC_WRAPPER` the compiler cargo runs. Each list of such names that was tried missed
//! some, so only names that every program reads as data pass. A name a request may not set
//! can still go in the command line (`NAME=… command`), where it is judged and shown.
//!
//! The server's own variables (`PM_*`) never pass, whatever the operator lists: the server
//! and its shell integration read them, and they are set after the request's in any case.

/// Names that pass by default: colour and size of output, locale and time zone, CI
/// detection, the usual "which environment" switches, and the test runners' own switches for
/// backtraces, logs and buffering.
const DATA: &[&str] = &[
    "CI",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "TERM",
    "TZ",
    "LANG",
    "LANGUAGE",
    "DEBUG",
    "LOG_LEVEL",
    "NODE_ENV",
    "RAILS_ENV",
    "RACK_ENV",
    "APP_ENV",
    "NODE_NO_WARNINGS",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "RUST_LOG",
    "RUST_LOG_STYLE",
    "RUST_TEST_THREADS",
    "RUST_TEST_NOCAPTURE",
    "CARGO_TERM_COLOR",
    "CARGO_TERM_VERBOSE",
    "CARGO_INCREMENTAL",
    "CARGO_BUILD_JOBS",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
];

/// A prefix whose names pass: the locale's categories (`LC_ALL`, `LC_CTYPE`, …), which name
/// a locale, never a file or a program.
const DATA_PREFIX: &str = "LC_";

/// The server's own variables: never set by a request.
const RESERVED_PREFIX: &str = "PM_";

/// The variable the operator adds names with (the flag is `--allow-env`).
pub const OPERATOR_SETTING: &str = "PM_TERM_ALLOW_ENV";

/// A variable a request may not set, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused<'a> {
    pub name: &'a str,
    /// `None`: the name is not on the list; else why its value is not what the name carries.
    pub value: Option<&'static str>,
}

/// Names that carry a name the C library or gettext looks up as a file when the value is a
/// path: a locale or message catalogue (`LANG=/dir` loads `/dir/LC_CTYPE`, `LANGUAGE=../x`
/// a catalogue whose translations are printf formats), a time-zone file, a terminfo entry.
/// Their values must be names.
fn value_refused(name: &str, value: &str) -> Option<&'static str> {
    let plain = |extra: &str| {
        value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
    };
    match name {
        "LANG" | "LANGUAGE" => (!plain("_.@:+-=,")).then_some(LOCALE),
        n if n.starts_with(DATA_PREFIX) => (!plain("_.@:+-=,;")).then_some(LOCALE),
        "TERM" => (!plain("_.+-")).then_some(
            "a terminal type is a name (xterm-256color), never a path to a terminfo entry",
        ),
        "TZ" => {
            let zone = value.strip_prefix(':').unwrap_or(value);
            (zone.starts_with('/')
                || zone.split('/').any(|part| part == "..")
                || !plain("_/+-:.,<>"))
            .then_some(
                "a time zone is a name (Europe/Paris, UTC, EST5EDT), never a path: a value \
                     starting with / or holding .. is read as a time-zone file from there",
            )
        }
        "COLUMNS" | "LINES" => (value.is_empty() || !plain(""))
            .then_some("a terminal size is a number of columns or lines"),
        _ => None,
    }
}

const LOCALE: &str = "a locale is a name (en_US.UTF-8, C.UTF-8), never a path: a value with / \
    is loaded as a locale or message catalogue from that directory";

/// The names a request may set.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvAllowlist {
    names: Vec<String>,
}

impl Default for EnvAllowlist {
    fn default() -> Self {
        EnvAllowlist {
            names: DATA.iter().map(|n| n.to_string()).collect(),
        }
    }
}

impl EnvAllowlist {
    /// The defaults plus the operator's names.
    pub fn with_extra(extra: &[String]) -> EnvAllowlist {
        let mut e = EnvAllowlist::default();
        e.names.extend(
            extra
                .iter()
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty() && !n.starts_with(RESERVED_PREFIX)),
        );
        e
    }

    fn admits(&self, name: &str) -> bool {
        !name.starts_with(RESERVED_PREFIX)
            && (self.names.iter().any(|n| n == name)
                || (name.len() > DATA_PREFIX.len() && name.starts_with(DATA_PREFIX)))
    }

    /// The first of the variables a request sets that may not be set, if any: a name off
    /// the list, or a value that is not what the name carries.
    pub fn refused<'a>(
        &self,
        vars: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Option<Refused<'a>> {
        vars.into_iter().find_map(|(name, value)| {
            if !self.admits(name) {
                return Some(Refused { name, value: None });
            }
            value_refused(name, value).map(|why| Refused {
                name,
                value: Some(why),
            })
        })
    }

    /// What passes, for error messages.
    pub fn describe(&self) -> Vec<String> {
        let mut v = self.names.clone();
        v.push(format!("{DATA_PREFIX}*"));
        v
    }
}

/// Whether a variable's name says it holds a credential: one of its `_`-separated parts is
/// a token, secret, password or key of access (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
/// `DB_PASSWORD`, `OPENAI_API_KEY`, `NPM_AUTH_TOKEN`), whatever its case. The policy warns a
/// line that prints one, and the server keeps such variables of its own environment from
/// the commands and terminals it starts (`cli::withhold_credentials`).
pub fn credential_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let parts: Vec<&str> = upper.split('_').collect();
    let single = |p: &&str| {
        matches!(
            *p,
            "TOKEN" | "SECRET" | "PASSWORD" | "PASSWD" | "APIKEY" | "CREDENTIALS" | "PAT"
        )
    };
    let pair = parts
        .windows(2)
        .any(|w| matches!(w[1], "KEY") && matches!(w[0], "API" | "ACCESS" | "PRIVATE" | "SECRET"));
    parts.iter().any(single) || pair
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_passes_and_whatever_picks_a_program_a_configuration_or_code_does_not() {
        let e = EnvAllowlist::default();
        let names = |e: &EnvAllowlist, names: &[&'static str]| {
            e.refused(names.iter().map(|n| (*n, "1"))).map(|r| r.name)
        };
        assert_eq!(e.refused([]), None);
        assert_eq!(
            names(
                &e,
                &["CI", "RUST_BACKTRACE", "LC_ALL", "NO_COLOR", "NODE_ENV"]
            ),
            None
        );
        for bad in [
            "PATH",
            "HOME",
            "GIT_CONFIG_COUNT",
            "GIT_EXTERNAL_DIFF",
            "RIPGREP_CONFIG_PATH",
            "RUSTC_WRAPPER",
            "RUSTFLAGS",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "PYTHONWARNINGS",
            "NODE_OPTIONS",
            "PERL5OPT",
            "RUBYOPT",
            "INPUTRC",
            "BASH_ENV",
            "PROMPT_COMMAND",
            "LC_",
            "LD_PRELOAD",
            "PM_TERM_NO_USER_RC",
            "PM_TERM_NONCE_FILE",
            "MY_VAR",
        ] {
            assert_eq!(names(&e, &["CI", bad]), Some(bad), "{bad}");
        }
        let ext = EnvAllowlist::with_extra(&[
            " DATABASE_URL ".into(),
            String::new(),
            "PM_TERM_NO_USER_RC".into(),
        ]);
        assert_eq!(names(&ext, &["DATABASE_URL"]), None);
        assert!(ext.describe().contains(&"DATABASE_URL".to_string()));
        assert!(!ext.describe().contains(&String::new()));
        // The operator cannot hand the server's own variables to requests.
        assert_eq!(
            names(&ext, &["PM_TERM_NO_USER_RC"]),
            Some("PM_TERM_NO_USER_RC")
        );
    }

    #[test]
    fn a_locale_a_time_zone_and_a_terminal_type_are_names_never_paths() {
        let e = EnvAllowlist::default();
        for (name, value) in [
            ("LANG", "en_US.UTF-8"),
            ("LANG", "C"),
            ("LANGUAGE", "de_DE:en"),
            ("LC_ALL", "sr_RS.UTF-8@latin"),
            ("TZ", "Europe/Paris"),
            ("TZ", ":America/Argentina/Buenos_Aires"),
            ("TZ", "EST5EDT,M3.2.0,M11.1.0"),
            ("TZ", "<+0330>-3:30"),
            ("TERM", "xterm-256color"),
            ("COLUMNS", "120"),
        ] {
            assert_eq!(e.refused([(name, value)]), None, "{name}={value}");
        }
        for (name, value) in [
            ("LANG", "/tmp/x"),
            ("LANGUAGE", "../../../../tmp/evil"),
            ("LC_MESSAGES", "./x"),
            ("LC_ALL", "en US"),
            ("TZ", "/tmp/zone"),
            ("TZ", ":/tmp/zone"),
            ("TZ", "../../../tmp/zone"),
            ("TERM", "../../tmp/x"),
            ("COLUMNS", "80;rm"),
            ("LINES", ""),
        ] {
            let r = e.refused([("CI", "1"), (name, value)]);
            assert!(
                matches!(r, Some(Refused { name: n, value: Some(_) }) if n == name),
                "{name}={value}: {r:?}"
            );
        }
    }
}
