//! The canonical interactive-terminal contract (docs/contract.md): request parsing, alias
//! resolution, validation, responses and the `PM_TERM_*` error taxonomy. Nothing here
//! knows about MCP or about how commands run.

pub mod advertise;
pub mod alias;
pub mod coupling;
pub mod error;
pub mod keys;
pub mod request;
pub mod response;
pub mod result;
pub mod schema;
mod suggest;
pub mod validate;

#[cfg(test)]
mod tests;

pub use alias::Phase;
pub use error::{ErrorCode, Fallback, TermError};
pub use request::{Action, Encoding, Intent, ListOptions, ListState, Mode, Request, View};
pub use response::{Envelope, Identity};
pub use result::Outcome;
pub use validate::{Rejected, parse};
