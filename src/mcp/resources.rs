//! Terminals as MCP resources: each at its AHP channel URI (`ahp-terminal:/term_<ulid>`),
//! listed, and read as its `TerminalState` JSON. Who hears of their changes is
//! `mcp::subscriptions`.

use ahp_types::state::TerminalState;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};

use crate::ids;
use crate::service::Service;

/// The URI template of every terminal resource (RFC 6570), as `resources/templates/list`
/// advertises it: the ids come from `list` or from an `execute` answer.
pub const TERMINAL_TEMPLATE: &str = "ahp-terminal:/{terminal_id}";

pub async fn list(app: &Service) -> ListResourcesResult {
    let resources = app
        .terminals()
        .await
        .into_iter()
        .map(|(adapter, t)| {
            let state = if t.running { "running" } else { "exited" };
            Resource::new(t.resource.clone(), t.terminal_id.clone())
                .with_title(t.title.clone())
                .with_description(format!(
                    "AHP TerminalState of a {} terminal ({state}, {} adapter)",
                    t.shell,
                    adapter.as_str()
                ))
                .with_mime_type("application/json")
        })
        .collect();
    ListResourcesResult::with_all_items(resources)
}

/// The one resource template: a terminal by its id.
pub fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(TERMINAL_TEMPLATE, "terminal")
            .with_title("Terminal")
            .with_description(
                "The AHP TerminalState of a terminal (term_<ulid> from execute or list): title, cwd, content, exit code. Subscribe for updates.",
            )
            .with_mime_type("application/json"),
    ])
}

/// The state of the terminal at `uri`; "not found" when there is none, as both
/// `resources/read` and `resources/subscribe` answer it. Asking is also what makes a
/// bridged or bundled host's terminal followed: the remote adapter subscribes to the
/// terminal's channel on the host and mirrors it from then on.
pub async fn state(app: &Service, uri: &str) -> Result<TerminalState, McpError> {
    let not_found = || McpError::resource_not_found(format!("no terminal at {uri}"), None);
    let id = ids::terminal_id_from_uri(uri).ok_or_else(not_found)?;
    app.terminal_state(id)
        .await
        .map_err(|e| McpError::internal_error(e.to_string(), None))?
        .ok_or_else(not_found)
}

pub async fn read(app: &Service, uri: &str) -> Result<ReadResourceResult, McpError> {
    let state = state(app, uri).await?;
    let text =
        serde_json::to_string(&state).map_err(|e| McpError::internal_error(e.to_string(), None))?;
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("application/json"),
    ]))
}
