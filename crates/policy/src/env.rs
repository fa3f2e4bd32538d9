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

    /// The first of the variable `names` a request sets that may not be set, if any.
    pub fn refused<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
        names.into_iter().find(|k| !self.admits(k))
    }

    /// What passes, for error messages.
    pub fn describe(&self) -> Vec<String> {
        let mut v = self.names.clone();
        v.push(format!("{DATA_PREFIX}*"));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_passes_and_whatever_picks_a_program_a_configuration_or_code_does_not() {
        let e = EnvAllowlist::default();
        assert_eq!(e.refused([]), None);
        assert_eq!(
            e.refused(["CI", "RUST_BACKTRACE", "LC_ALL", "NO_COLOR", "NODE_ENV"]),
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
            assert_eq!(e.refused(["CI", bad]), Some(bad), "{bad}");
        }
        let ext = EnvAllowlist::with_extra(&[
            " DATABASE_URL ".into(),
            String::new(),
            "PM_TERM_NO_USER_RC".into(),
        ]);
        assert_eq!(ext.refused(["DATABASE_URL"]), None);
        assert!(ext.describe().contains(&"DATABASE_URL".to_string()));
        assert!(!ext.describe().contains(&String::new()));
        // The operator cannot hand the server's own variables to requests.
        assert_eq!(
            ext.refused(["PM_TERM_NO_USER_RC"]),
            Some("PM_TERM_NO_USER_RC")
        );
    }
}
