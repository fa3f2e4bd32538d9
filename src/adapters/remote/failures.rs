//! What the remote adapter says when the host cannot serve: nothing listens where it was,
//! or it refused a working directory (a container's path is not the host's).

use super::super::error::{AdapterError, Failure};

/// A working directory the host refused, said as what it is: a path looked up on the host,
/// and how the operator makes container paths work there.
pub(super) fn where_on_the_host(
    message: &str,
    asked: Option<&str>,
    sent: Option<&str>,
    map: &crate::adapters::paths::PathMap,
) -> String {
    let translated = match (asked, sent) {
        (Some(a), Some(s)) if a != s => format!(" (the container's {a:?} is {s:?} there)"),
        _ => String::new(),
    };
    let hint = if map.is_empty() {
        "; container paths are not host paths: the operator maps them with PM_TERM_PATH_MAP (e.g. /workspace=/home/you/project)"
    } else {
        ""
    };
    format!("{message} on the terminal host{translated}{hint}")
}

/// The answer when nothing listens where the host was: a new terminal is unavailable (ask
/// for it again later, or run headless); an existing one is cut off and, if the host
/// restarts, gone.
pub(super) fn host_is_down(opens: bool, request_id: &str, cause: &AdapterError) -> AdapterError {
    let e = match opens {
        true => AdapterError::new(
            Failure::Unavailable,
            "the terminal host is down (nothing listens at its address)",
        ),
        false => AdapterError::new(
            Failure::Disconnected,
            "the terminal host is down (nothing listens at its address); its terminals are gone if it restarts",
        ),
    };
    e.with(|f| {
        f.request_id = Some(request_id.to_string());
        f.host_down = Some(true);
        f.last_error = Some(cause.to_string());
    })
}
