//! The environment a `memory_terminal` request may set (`execution.env`).
//!
//! Why a list of names that pass, not of names refused: the strict tool admits a command by
//! its argv alone and refuses assignments in the line, yet the allowlisted programs read
//! their environment for which program to run and which configuration to load — `PATH`
//! picks the `git` that `git status` runs, `GIT_CONFIG_*` sets `core.fsmonitor` (a program
//! `git status` starts), `GIT_EXTERNAL_DIFF` one `git diff` starts, `RIPGREP_CONFIG_PATH`
//! gives `rg` the `--pre` the allowlist refuses, `RUSTC_WRAPPER` and `RUSTFLAGS` the
//! compiler and linker `cargo build` runs. No list of such names is ever complete, so only
//! names that carry data every tool reads as data pass, plus the ones the operator adds
//! (`--strict-env`, `"strict_env"` in the policy file).

/// Names that pass by default: colour and size of output, locale and time zone, CI
/// detection, and the test runners' own switches for backtraces, logs and buffering.
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
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "RUST_LOG",
    "RUST_LOG_STYLE",
    "RUST_TEST_THREADS",
    "RUST_TEST_NOCAPTURE",
    "CARGO_TERM_COLOR",
    "CARGO_TERM_VERBOSE",
    "CARGO_INCREMENTAL",
    "NODE_ENV",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "PYTHONIOENCODING",
];

/// A prefix whose names pass: the locale's categories (`LC_ALL`, `LC_CTYPE`, …), which name
/// a locale, never a file or a program.
const DATA_PREFIX: &str = "LC_";

/// The names a strict request may set.
#[derive(Debug, Clone, PartialEq)]
pub struct StrictEnv {
    names: Vec<String>,
}

impl Default for StrictEnv {
    fn default() -> Self {
        StrictEnv {
            names: DATA.iter().map(|n| n.to_string()).collect(),
        }
    }
}

impl StrictEnv {
    /// The defaults plus the operator's names.
    pub fn with_extra(extra: &[String]) -> StrictEnv {
        let mut e = StrictEnv::default();
        e.names.extend(
            extra
                .iter()
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty()),
        );
        e
    }

    fn admits(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
            || (name.len() > DATA_PREFIX.len() && name.starts_with(DATA_PREFIX))
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
    fn data_passes_and_whatever_picks_a_program_or_a_configuration_does_not() {
        let e = StrictEnv::default();
        assert_eq!(e.refused([]), None);
        assert_eq!(
            e.refused(["CI", "RUST_BACKTRACE", "LC_ALL", "NO_COLOR"]),
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
            "NODE_OPTIONS",
            "LC_",
            "LD_PRELOAD",
        ] {
            assert_eq!(e.refused(["CI", bad]), Some(bad), "{bad}");
        }
        let ext = StrictEnv::with_extra(&[" DATABASE_URL ".into(), String::new()]);
        assert_eq!(ext.refused(["DATABASE_URL"]), None);
        assert!(ext.describe().contains(&"DATABASE_URL".to_string()));
        assert!(!ext.describe().contains(&String::new()));
    }
}
