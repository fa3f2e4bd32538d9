//! What can go wrong below the contract: the terminal operation itself failed (as the core
//! said), or reaching or setting up the adapter did. The adapters know nothing of `PM_TERM_*`
//! codes; the contract service maps these to them in one place (`app::failures`).

use serde::Serialize;

use crate::terminal::ops::OpError;

/// Why the adapter could not serve a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The request asked for something the operator does not allow, or that does not parse.
    Refused,
    /// The operator's set-up is incomplete (the container bridge without its settings).
    NotConfigured,
    /// No host could be started or reached.
    Unavailable,
    /// The connection to the host dropped and did not come back.
    Disconnected,
    /// No answer within the time allowed.
    Timeout,
    /// A fault of this server.
    Internal,
}

/// A host binary tried at launch, and where it was found (`configured`, `sibling`, `path`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Candidate {
    pub source: &'static str,
    pub path: String,
}

/// Why one launch attempt of a candidate failed.
#[derive(Debug, Clone, Serialize)]
pub struct SpawnError {
    pub source: &'static str,
    pub path: String,
    pub attempt: usize,
    pub transient: bool,
    pub error: String,
}

/// One endpoint tried while connecting to a host, and what happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attempt {
    pub endpoint: String,
    pub error: String,
}

impl Attempt {
    pub fn new(endpoint: &str, error: impl Into<String>) -> Attempt {
        Attempt {
            endpoint: endpoint.to_string(),
            error: error.into(),
        }
    }
}

/// What the caller can act on, passed through as the answer's `details`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Facts {
    /// The request field (or setting) at fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supported: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problems: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<Vec<Attempt>>,
    /// Nothing listens where the host should be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_down: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// An unanswered operation that runs something may have run it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub may_have_run: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempted_candidates: Option<Vec<Candidate>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spawn_errors: Option<Vec<SpawnError>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_action: Option<String>,
    /// The host alias and port a failed handshake was with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Protocol versions this server offered, and those the host answered with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_versions: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_versions: Option<Vec<String>>,
}

impl Facts {
    /// Alias and port from an `alias:port` endpoint.
    pub fn set_endpoint(&mut self, endpoint: &str) {
        match endpoint.rsplit_once(':') {
            Some((alias, port)) => {
                self.alias = Some(alias.to_string());
                self.port = port.parse().ok();
            }
            None => self.alias = Some(endpoint.to_string()),
        }
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum AdapterError {
    /// The operation reached the terminal core and failed there (not found, busy, timed
    /// out with the output so far…).
    #[error("{}", .0.message)]
    Op(OpError),
    /// Reaching or setting up the adapter failed.
    #[error("{message}")]
    Runtime {
        failure: Failure,
        message: String,
        facts: Box<Facts>,
    },
}

impl AdapterError {
    pub fn new(failure: Failure, message: impl Into<String>) -> AdapterError {
        AdapterError::Runtime {
            failure,
            message: message.into(),
            facts: Box::default(),
        }
    }

    /// With what the caller can act on.
    pub fn with(mut self, add: impl FnOnce(&mut Facts)) -> AdapterError {
        if let AdapterError::Runtime { facts, .. } = &mut self {
            add(facts);
        }
        self
    }

    pub fn internal(cause: impl std::fmt::Display) -> AdapterError {
        AdapterError::new(Failure::Internal, cause.to_string())
    }

    pub fn failure(&self) -> Option<Failure> {
        match self {
            AdapterError::Op(_) => None,
            AdapterError::Runtime { failure, .. } => Some(*failure),
        }
    }

    pub fn facts(&self) -> Option<&Facts> {
        match self {
            AdapterError::Op(_) => None,
            AdapterError::Runtime { facts, .. } => Some(facts),
        }
    }
}

impl From<OpError> for AdapterError {
    fn from(e: OpError) -> Self {
        AdapterError::Op(e)
    }
}
