//! Terminals as MCP resources: each at its AHP channel URI (`ahp-terminal:/term_<ulid>`),
//! read as its `TerminalState` JSON, with `resources/updated` sent to subscribers when the
//! terminal's state changes (coalesced, so a chatty terminal cannot flood the client).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ahp_types::ROOT_RESOURCE_URI;
use ahp_types::state::TerminalState;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ResourceUpdatedNotificationParam,
};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use tokio::sync::broadcast::error::RecvError;

use crate::ids;
use crate::locks::lock;
use crate::service::Service;

/// The URI template of every terminal resource (RFC 6570), as `resources/templates/list`
/// advertises it: the ids come from `list` or from an `execute` answer.
pub const TERMINAL_TEMPLATE: &str = "ahp-terminal:/{terminal_id}";

/// Updates to one resource are coalesced over this window.
const UPDATE_COALESCE: Duration = Duration::from_millis(100);

/// Resource subscriptions of the connected client.
#[derive(Default)]
pub struct Subscriptions {
    uris: Mutex<HashSet<String>>,
    peer: Mutex<Option<Peer<RoleServer>>>,
    started: AtomicBool,
}

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
async fn state(app: &Service, uri: &str) -> Result<TerminalState, McpError> {
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

impl Subscriptions {
    /// Subscribe the client to the terminal at `uri`. The runtime is followed first, then
    /// the terminal is looked up (which makes a remote host's terminal followed), so no
    /// change after the answer goes unreported. A URI that names no terminal is refused
    /// as `resources/read` refuses it, instead of a subscription that never fires.
    pub async fn subscribe(
        self: &Arc<Self>,
        app: &Arc<Service>,
        uri: String,
        peer: Peer<RoleServer>,
    ) -> Result<(), McpError> {
        *lock(&self.peer) = Some(peer);
        if !self.started.swap(true, Ordering::SeqCst) {
            self.clone().notify_loop(app.clone());
        }
        state(app, &uri).await?;
        lock(&self.uris).insert(uri);
        Ok(())
    }

    pub fn unsubscribe(&self, uri: &str) {
        lock(&self.uris).remove(uri);
    }

    fn peer(&self) -> Option<Peer<RoleServer>> {
        lock(&self.peer).clone()
    }

    /// Follow the runtime's actions; tell the client which subscribed terminals changed.
    fn notify_loop(self: Arc<Self>, app: Arc<Service>) {
        let mut rx = app.follow();
        tokio::spawn(async move {
            let mut dirty: HashSet<String> = HashSet::new();
            let mut list_changed = false;
            let mut flush_at: Option<tokio::time::Instant> = None;
            loop {
                let event = match flush_at {
                    None => Some(rx.recv().await),
                    Some(at) => tokio::time::timeout_at(at, rx.recv()).await.ok(),
                };
                match event {
                    Some(Ok(env)) => {
                        if env.channel == ROOT_RESOURCE_URI {
                            list_changed = true;
                        } else if lock(&self.uris).contains(&env.channel) {
                            dirty.insert(env.channel.clone());
                        }
                        if (list_changed || !dirty.is_empty()) && flush_at.is_none() {
                            flush_at = Some(tokio::time::Instant::now() + UPDATE_COALESCE);
                        }
                        continue;
                    }
                    Some(Err(RecvError::Lagged(_))) => {
                        // Missed some: every subscription may have changed.
                        dirty.extend(lock(&self.uris).iter().cloned());
                        list_changed = true;
                        flush_at
                            .get_or_insert_with(|| tokio::time::Instant::now() + UPDATE_COALESCE);
                        continue;
                    }
                    Some(Err(RecvError::Closed)) => return,
                    None => flush_at = None,
                }
                let Some(peer) = self.peer() else {
                    dirty.clear();
                    list_changed = false;
                    continue;
                };
                for uri in dirty.drain() {
                    if peer
                        .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
                if std::mem::take(&mut list_changed)
                    && peer.notify_resource_list_changed().await.is_err()
                {
                    return;
                }
            }
        });
    }
}
