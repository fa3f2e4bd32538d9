//! The `PM_TERM_*` taxonomy and its deterministic fallback table (docs/contract.md,
//! "Answers").
//!
//! Every failure anywhere in the server becomes a [`TermError`]; the code alone decides the
//! category, retriability and fallback strategy, so the same code always answers the same
//! strategy. The request class (action, mode) only fills in the hints around it.

use serde_json::{Map, Value, json};

use super::request::{Action, Mode};

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    InvalidAction,
    InvalidPayload,
    InvalidMode,
    Declined,
    Timeout,
    Disconnected,
    GuiUnavailable,
    BlockedDestructive,
    NotFound,
    Internal,
}

/// Fallback strategies, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    RejectNoRetry,
    ReportDecline,
    SuggestRetryHeadlessOrInteractive,
    SuggestReconnectRetry,
    FallbackToHeadlessIfAllowed,
    RejectWithSafetyHint,
    RefreshListThenRetry,
    DeterministicInternalFallback,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::RejectNoRetry => "reject_no_retry",
            Strategy::ReportDecline => "report_decline",
            Strategy::SuggestRetryHeadlessOrInteractive => "suggest_retry_headless_or_interactive",
            Strategy::SuggestReconnectRetry => "suggest_reconnect_retry",
            Strategy::FallbackToHeadlessIfAllowed => "fallback_to_headless_if_allowed",
            Strategy::RejectWithSafetyHint => "reject_with_safety_hint",
            Strategy::RefreshListThenRetry => "refresh_list_then_retry",
            Strategy::DeterministicInternalFallback => "deterministic_internal_fallback",
        }
    }
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::InvalidAction,
        ErrorCode::InvalidPayload,
        ErrorCode::InvalidMode,
        ErrorCode::Declined,
        ErrorCode::Timeout,
        ErrorCode::Disconnected,
        ErrorCode::GuiUnavailable,
        ErrorCode::BlockedDestructive,
        ErrorCode::NotFound,
        ErrorCode::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidAction => "PM_TERM_INVALID_ACTION",
            ErrorCode::InvalidPayload => "PM_TERM_INVALID_PAYLOAD",
            ErrorCode::InvalidMode => "PM_TERM_INVALID_MODE",
            ErrorCode::Declined => "PM_TERM_DECLINED",
            ErrorCode::Timeout => "PM_TERM_TIMEOUT",
            ErrorCode::Disconnected => "PM_TERM_DISCONNECTED",
            ErrorCode::GuiUnavailable => "PM_TERM_GUI_UNAVAILABLE",
            ErrorCode::BlockedDestructive => "PM_TERM_BLOCKED_DESTRUCTIVE",
            ErrorCode::NotFound => "PM_TERM_NOT_FOUND",
            ErrorCode::Internal => "PM_TERM_INTERNAL",
        }
    }

    pub fn category(self) -> &'static str {
        match self {
            ErrorCode::InvalidAction | ErrorCode::InvalidPayload | ErrorCode::InvalidMode => {
                "validation"
            }
            ErrorCode::Declined => "user_decision",
            ErrorCode::Timeout => "runtime_timeout",
            ErrorCode::Disconnected => "transport",
            ErrorCode::GuiUnavailable => "runtime_unavailable",
            ErrorCode::BlockedDestructive => "authorization",
            ErrorCode::NotFound => "identity",
            ErrorCode::Internal => "internal",
        }
    }

    pub fn retriable(self) -> bool {
        matches!(
            self,
            ErrorCode::Timeout
                | ErrorCode::Disconnected
                | ErrorCode::GuiUnavailable
                | ErrorCode::Internal
        )
    }

    /// The default fallback; a function of the code alone.
    pub fn strategy(self) -> Strategy {
        match self {
            ErrorCode::InvalidAction | ErrorCode::InvalidPayload | ErrorCode::InvalidMode => {
                Strategy::RejectNoRetry
            }
            ErrorCode::Declined => Strategy::ReportDecline,
            ErrorCode::Timeout => Strategy::SuggestRetryHeadlessOrInteractive,
            ErrorCode::Disconnected => Strategy::SuggestReconnectRetry,
            ErrorCode::GuiUnavailable => Strategy::FallbackToHeadlessIfAllowed,
            ErrorCode::BlockedDestructive => Strategy::RejectWithSafetyHint,
            ErrorCode::NotFound => Strategy::RefreshListThenRetry,
            ErrorCode::Internal => Strategy::DeterministicInternalFallback,
        }
    }

    pub fn from_code_str(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// A failure on its way to becoming an error payload.
#[derive(Debug, Clone)]
pub struct TermError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Map<String, Value>,
    /// A request class of its own (a known legacy alias refused in phase C, a command off the
    /// strict allowlist) with its own next step; the strategy stays the code's.
    pub hint: Option<Hint>,
}

/// What to do next for one class of request, in place of the code's generic words.
#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    pub next_action: Option<Action>,
    pub user_message: String,
}

impl std::fmt::Display for TermError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for TermError {}

impl TermError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        TermError {
            code,
            message: message.into(),
            details: Map::new(),
            hint: None,
        }
    }

    pub fn payload(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidPayload, message)
    }

    pub fn not_found(kind: &str, id: &str) -> Self {
        Self::new(
            ErrorCode::NotFound,
            format!("no {kind} with id {id:?}; it never existed or was pruned"),
        )
        .with("target", json!(kind))
        .with("id", json!(id))
    }

    /// An unclassified failure. The cause goes to the log only, never to the caller.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(%cause, "internal error");
        Self::new(ErrorCode::Internal, "internal error")
    }

    pub fn with(mut self, key: &str, value: Value) -> Self {
        self.details.insert(key.to_string(), value);
        self
    }

    /// Say what to do next for this request class (see [`Hint`]).
    pub fn with_hint(
        mut self,
        next_action: Option<Action>,
        user_message: impl Into<String>,
    ) -> Self {
        self.hint = Some(Hint {
            next_action,
            user_message: user_message.into(),
        });
        self
    }
}

/// The fallback section of an error payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Fallback {
    pub strategy: Strategy,
    pub next_action: Option<Action>,
    pub recommended_mode: Option<Mode>,
    pub user_message: String,
    pub can_auto_retry: bool,
}

impl Fallback {
    /// Hints around the code's strategy, decided by the request class only.
    pub fn for_error(code: ErrorCode, action: Option<Action>, mode: Option<Mode>) -> Fallback {
        let other_mode = match mode {
            Some(Mode::Interactive) => Mode::Headless,
            Some(Mode::Headless) => Mode::Interactive,
            None => Mode::Headless,
        };
        let (next_action, recommended_mode, user_message) = match code {
            ErrorCode::InvalidAction => (
                None,
                None,
                "Unknown action. Use one of execute, read_output, terminate, list.".to_string(),
            ),
            ErrorCode::InvalidPayload => (
                action,
                mode,
                "The request is malformed; fix the fields named in error.details and send it again."
                    .to_string(),
            ),
            ErrorCode::InvalidMode => (
                action,
                Some(Mode::Headless),
                "That runtime mode is not available; use invocation.mode headless or interactive."
                    .to_string(),
            ),
            ErrorCode::Declined => (
                None,
                None,
                "The command was declined by the person approving commands. Do not retry it automatically."
                    .to_string(),
            ),
            ErrorCode::Timeout => (
                Some(Action::Execute),
                Some(other_mode),
                match mode {
                    Some(Mode::Interactive) => {
                        "The interactive path timed out. You can retry now or run in headless mode."
                    }
                    _ => {
                        "The command timed out and its process tree was stopped. Retry with a longer timeout_ms, or run it interactively."
                    }
                }
                .to_string(),
            ),
            ErrorCode::Disconnected => (
                action,
                mode,
                "The connection to the terminal host dropped. Reconnect and retry.".to_string(),
            ),
            ErrorCode::GuiUnavailable => (
                Some(Action::Execute),
                Some(Mode::Headless),
                "No interactive terminal host is available. Run the command in headless mode if that is acceptable."
                    .to_string(),
            ),
            ErrorCode::BlockedDestructive => (
                None,
                None,
                "The command was blocked as destructive. Do not retry it; choose a safer command."
                    .to_string(),
            ),
            ErrorCode::NotFound => (
                Some(Action::List),
                mode,
                "That session or terminal does not exist. List the identities and retry with a current id."
                    .to_string(),
            ),
            ErrorCode::Internal => (
                action,
                mode,
                "An internal error occurred. Retry once; if it persists, report the trace_id."
                    .to_string(),
            ),
        };
        let can_auto_retry = match code {
            ErrorCode::Disconnected | ErrorCode::Internal => {
                !matches!(action, Some(Action::Execute))
            }
            _ => false,
        };
        Fallback {
            strategy: code.strategy(),
            next_action,
            recommended_mode,
            user_message,
            can_auto_retry,
        }
    }

    /// The fallback for one error: the code's, with the error's own hint when it has one.
    pub fn for_term_error(err: &TermError, action: Option<Action>, mode: Option<Mode>) -> Fallback {
        let mut f = Fallback::for_error(err.code, action, mode);
        if let Some(h) = &err.hint {
            f.next_action = h.next_action;
            f.user_message = h.user_message.clone();
        }
        f
    }

    pub fn to_json(&self) -> Value {
        json!({
            "strategy": self.strategy.as_str(),
            "next_action": self.next_action.map(Action::as_str),
            "recommended_mode": self.recommended_mode.map(Mode::as_str),
            "user_message": self.user_message,
            "can_auto_retry": self.can_auto_retry,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table, row by row: code, category, retriable, default fallback.
    const TABLE: [(&str, &str, bool, &str); 10] = [
        (
            "PM_TERM_INVALID_ACTION",
            "validation",
            false,
            "reject_no_retry",
        ),
        (
            "PM_TERM_INVALID_PAYLOAD",
            "validation",
            false,
            "reject_no_retry",
        ),
        (
            "PM_TERM_INVALID_MODE",
            "validation",
            false,
            "reject_no_retry",
        ),
        ("PM_TERM_DECLINED", "user_decision", false, "report_decline"),
        (
            "PM_TERM_TIMEOUT",
            "runtime_timeout",
            true,
            "suggest_retry_headless_or_interactive",
        ),
        (
            "PM_TERM_DISCONNECTED",
            "transport",
            true,
            "suggest_reconnect_retry",
        ),
        (
            "PM_TERM_GUI_UNAVAILABLE",
            "runtime_unavailable",
            true,
            "fallback_to_headless_if_allowed",
        ),
        (
            "PM_TERM_BLOCKED_DESTRUCTIVE",
            "authorization",
            false,
            "reject_with_safety_hint",
        ),
        (
            "PM_TERM_NOT_FOUND",
            "identity",
            false,
            "refresh_list_then_retry",
        ),
        (
            "PM_TERM_INTERNAL",
            "internal",
            true,
            "deterministic_internal_fallback",
        ),
    ];

    #[test]
    fn every_code_maps_to_its_section_3_1_row() {
        for (code, category, retriable, strategy) in TABLE {
            let c = ErrorCode::from_code_str(code).expect(code);
            assert_eq!(c.as_str(), code);
            assert_eq!(c.category(), category, "{code}");
            assert_eq!(c.retriable(), retriable, "{code}");
            assert_eq!(c.strategy().as_str(), strategy, "{code}");
        }
        assert_eq!(TABLE.len(), ErrorCode::ALL.len());
    }

    #[test]
    fn same_code_same_strategy_for_every_request_class() {
        let actions = [
            None,
            Some(Action::Execute),
            Some(Action::ReadOutput),
            Some(Action::Terminate),
            Some(Action::List),
        ];
        let modes = [None, Some(Mode::Headless), Some(Mode::Interactive)];
        for code in ErrorCode::ALL {
            for a in actions {
                for m in modes {
                    let f = Fallback::for_error(code, a, m);
                    assert_eq!(f.strategy, code.strategy());
                    // Deterministic: the same class gives the same whole fallback.
                    assert_eq!(f, Fallback::for_error(code, a, m));
                }
            }
        }
    }

    #[test]
    fn decline_is_never_auto_retried() {
        for a in [None, Some(Action::Execute)] {
            for m in [None, Some(Mode::Interactive)] {
                assert!(!Fallback::for_error(ErrorCode::Declined, a, m).can_auto_retry);
            }
        }
    }
}
