//! Legacy action aliases and their staged deprecation (docs/contract.md, "The pipeline").
//!
//! Resolution is one-way and deterministic: each legacy action names exactly one canonical
//! action plus a fixed transform, and the response records that an alias was applied.

use std::str::FromStr;

use super::request::{Action, Intent, Mode};

/// The deprecation phase, chosen by the operator (`PM_TERM_DEPRECATION_PHASE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    /// Accept aliases and record the resolution.
    #[default]
    A,
    /// Accept aliases with a deterministic deprecation warning.
    B,
    /// Reject aliases with a canonical migration hint.
    C,
}

impl FromStr for Phase {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_uppercase().as_str() {
            "A" => Ok(Phase::A),
            "B" => Ok(Phase::B),
            "C" => Ok(Phase::C),
            other => Err(format!(
                "deprecation phase must be A, B or C, not {other:?}"
            )),
        }
    }
}

/// The legacy actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Legacy {
    Run,
    Kill,
    Send,
    Close,
    Create,
}

impl Legacy {
    pub const ALL: [Legacy; 5] = [
        Legacy::Run,
        Legacy::Kill,
        Legacy::Send,
        Legacy::Close,
        Legacy::Create,
    ];

    pub fn parse(s: &str) -> Option<Legacy> {
        Legacy::ALL.into_iter().find(|l| l.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Legacy::Run => "run",
            Legacy::Kill => "kill",
            Legacy::Send => "send",
            Legacy::Close => "close",
            Legacy::Create => "create",
        }
    }

    pub fn canonical(self) -> Action {
        match self {
            Legacy::Run | Legacy::Send | Legacy::Create => Action::Execute,
            Legacy::Kill | Legacy::Close => Action::Terminate,
        }
    }

    /// The mode the alias implies when the caller did not give one.
    pub fn default_mode(self) -> Option<Mode> {
        match self {
            Legacy::Run => Some(Mode::Headless),
            Legacy::Send | Legacy::Create => Some(Mode::Interactive),
            Legacy::Kill | Legacy::Close => None,
        }
    }

    /// The intent the alias implies; `create` opens only when no command comes with it.
    pub fn intent(self, has_command: bool) -> Option<Intent> {
        match self {
            Legacy::Run | Legacy::Send => Some(Intent::ExecuteCommand),
            Legacy::Create if has_command => Some(Intent::ExecuteCommand),
            Legacy::Create => Some(Intent::OpenOnly),
            Legacy::Kill | Legacy::Close => None,
        }
    }

    /// The migration hint, word for word the canonical replacement.
    pub fn migration_hint(self) -> &'static str {
        match self {
            Legacy::Run => {
                "use action \"execute\" with invocation.intent \"execute_command\"; command fields move under execution.*"
            }
            Legacy::Kill => "use action \"terminate\" with target.session_id",
            Legacy::Send => "use action \"execute\" with target.terminal_id",
            Legacy::Close => "use action \"terminate\" with target.terminal_id",
            Legacy::Create => {
                "use action \"execute\" with invocation.intent \"open_only\" and invocation.mode \"interactive\""
            }
        }
    }

    /// The deterministic Phase B warning.
    pub fn deprecation_warning(self) -> String {
        format!(
            "action {:?} is deprecated: {}",
            self.as_str(),
            self.migration_hint()
        )
    }
}

/// What the `action` field resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved {
    Canonical(Action),
    Alias(Legacy),
}

/// Resolve an action name; `None` for unknown names.
pub fn resolve(action: &str) -> Option<Resolved> {
    if let Some(a) = Action::parse(action) {
        return Some(Resolved::Canonical(a));
    }
    Legacy::parse(action).map(Resolved::Alias)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_table_matches_section_1() {
        let table = [
            ("run", Action::Execute),
            ("kill", Action::Terminate),
            ("send", Action::Execute),
            ("close", Action::Terminate),
            ("create", Action::Execute),
        ];
        for (name, canonical) in table {
            match resolve(name) {
                Some(Resolved::Alias(l)) => assert_eq!(l.canonical(), canonical, "{name}"),
                other => panic!("{name} resolved to {other:?}"),
            }
        }
        assert_eq!(resolve("list"), Some(Resolved::Canonical(Action::List)));
        assert_eq!(
            resolve("execute"),
            Some(Resolved::Canonical(Action::Execute))
        );
        assert_eq!(resolve("Execute"), None);
        assert_eq!(resolve("delete"), None);
    }

    #[test]
    fn create_opens_only_without_a_command() {
        assert_eq!(Legacy::Create.intent(false), Some(Intent::OpenOnly));
        assert_eq!(Legacy::Create.intent(true), Some(Intent::ExecuteCommand));
        assert_eq!(Legacy::Run.default_mode(), Some(Mode::Headless));
        assert_eq!(Legacy::Send.default_mode(), Some(Mode::Interactive));
    }

    #[test]
    fn phases_parse() {
        assert_eq!("a".parse::<Phase>(), Ok(Phase::A));
        assert_eq!(" C ".parse::<Phase>(), Ok(Phase::C));
        assert!("D".parse::<Phase>().is_err());
    }
}
