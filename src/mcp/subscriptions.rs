//! Who hears that a terminal changed. Two protocols ask for it:
//!
//! - up to 2025-11-25, `resources/subscribe` and `resources/unsubscribe`: the session's set
//!   of URIs grows and shrinks, and `notifications/resources/updated` (and `list_changed`)
//!   go to the session;
//! - from 2026-07-28, `subscriptions/listen`: one request names its URIs (and whether it
//!   wants `list_changed`) and lives until the client cancels it; its notifications carry
//!   its id.
//!
//! Both are served by one relay: it follows the runtime's changes and reports each changed
//! terminal at most once per `UPDATE_COALESCE`, so a chatty terminal cannot flood the client.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use tokio::sync::broadcast::{self, error::RecvError};

use crate::adapters::Change;
use crate::ids;
use crate::locks::lock;
use crate::mcp::framing::InputEnd;
use crate::mcp::resources;
use crate::service::Service;

/// Updates to one resource are coalesced over this window.
const UPDATE_COALESCE: Duration = Duration::from_millis(100);

/// The `resources/subscribe` subscriptions of one session.
#[derive(Default)]
pub struct Subscriptions {
    uris: Mutex<HashSet<String>>,
    peer: Mutex<Option<Peer<RoleServer>>>,
    started: AtomicBool,
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
            tokio::spawn(relay(app.follow(), Audience::Session(self.clone())));
        }
        resources::state(app, &uri).await?;
        lock(&self.uris).insert(uri);
        Ok(())
    }

    pub fn unsubscribe(&self, uri: &str) {
        lock(&self.uris).remove(uri);
    }
}

/// What a `subscriptions/listen` request is granted, before the SDK acknowledges it: the
/// list's changes if asked, and every requested URI that is a terminal's. Whether such a
/// terminal exists is not known here (a bridged host is asked only in [`listen`]); one that
/// does not exist is acknowledged and never reported.
pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut f = SubscriptionFilter::new();
    f.resources_list_changed = requested.resources_list_changed;
    f.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
        uris.iter()
            .filter(|u| ids::terminal_id_from_uri(u).is_some())
            .cloned()
            .collect()
    });
    f
}

/// Serve one `subscriptions/listen` request until the client cancels it.
/// `input_end`: when the client's input ends, so does the request.
pub async fn listen(
    app: &Service,
    context: SubscriptionContext,
    input_end: Option<InputEnd>,
) -> Result<(), McpError> {
    let filter = context.accepted().clone();
    let uris: HashSet<String> = filter
        .resource_subscriptions
        .unwrap_or_default()
        .into_iter()
        .collect();
    // Followed before the terminals are looked up, as in `Subscriptions::subscribe`.
    let rx = app.follow();
    for uri in &uris {
        if let Err(e) = resources::state(app, uri).await {
            tracing::debug!(%uri, error = %e.message, "a listened-to URI names no terminal");
        }
    }
    let audience = Audience::Listen {
        sink: context.sink().clone(),
        uris,
        list: filter.resources_list_changed == Some(true),
    };
    let input_end = async move {
        match input_end {
            Some(end) => end.wait().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = context.cancelled() => {}
        () = input_end => {}
        () = relay(rx, audience) => {}
    }
    Ok(())
}

/// Where the relay's reports go.
enum Audience {
    /// A session's `resources/subscribe` set, which changes while the relay runs.
    Session(Arc<Subscriptions>),
    /// One `subscriptions/listen` request: its URIs are fixed when it is acknowledged.
    Listen {
        sink: SubscriptionSink,
        uris: HashSet<String>,
        list: bool,
    },
}

impl Audience {
    fn watches(&self, uri: &str) -> bool {
        match self {
            Audience::Session(s) => lock(&s.uris).contains(uri),
            Audience::Listen { uris, .. } => uris.contains(uri),
        }
    }

    fn everything(&self) -> Vec<String> {
        match self {
            Audience::Session(s) => lock(&s.uris).iter().cloned().collect(),
            Audience::Listen { uris, .. } => uris.iter().cloned().collect(),
        }
    }

    fn wants_list(&self) -> bool {
        match self {
            Audience::Session(_) => true,
            Audience::Listen { list, .. } => *list,
        }
    }

    /// Report `changed` terminals and, if `list`, a changed list. `false`: nobody is
    /// there to hear any more (the connection or the request ended).
    async fn report(&self, changed: Vec<String>, list: bool) -> bool {
        match self {
            Audience::Session(s) => {
                // Nobody connected yet (or any more): nothing to tell.
                let Some(peer) = lock(&s.peer).clone() else {
                    return true;
                };
                for uri in changed {
                    let p = ResourceUpdatedNotificationParam::new(uri);
                    if peer.notify_resource_updated(p).await.is_err() {
                        return false;
                    }
                }
                !list || peer.notify_resource_list_changed().await.is_ok()
            }
            Audience::Listen { sink, .. } => {
                for uri in changed {
                    if sink.notify_resource_updated(uri).await.is_err() {
                        return false;
                    }
                }
                !list || sink.notify_resource_list_changed().await.is_ok()
            }
        }
    }
}

/// Follow the runtime's changes and tell `audience` which of its terminals changed, and
/// whether the list did. Returns when the stream closes or nobody hears any more.
async fn relay(mut rx: broadcast::Receiver<Change>, audience: Audience) {
    let mut dirty: HashSet<String> = HashSet::new();
    let mut list_changed = false;
    let mut flush_at: Option<tokio::time::Instant> = None;
    loop {
        let event = match flush_at {
            None => Some(rx.recv().await),
            Some(at) => tokio::time::timeout_at(at, rx.recv()).await.ok(),
        };
        match event {
            Some(Ok(Change::List)) => list_changed |= audience.wants_list(),
            Some(Ok(Change::Terminal(uri))) => {
                if audience.watches(&uri) {
                    dirty.insert(uri);
                }
            }
            Some(Ok(Change::Missed) | Err(RecvError::Lagged(_))) => {
                // Missed some: every subscription may have changed.
                dirty.extend(audience.everything());
                list_changed = audience.wants_list();
            }
            Some(Err(RecvError::Closed)) => return,
            None => {
                flush_at = None;
                let changed = dirty.drain().collect();
                if !audience
                    .report(changed, std::mem::take(&mut list_changed))
                    .await
                {
                    return;
                }
                continue;
            }
        }
        if (list_changed || !dirty.is_empty()) && flush_at.is_none() {
            flush_at = Some(tokio::time::Instant::now() + UPDATE_COALESCE);
        }
    }
}
