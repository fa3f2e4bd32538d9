//! What the page reads beside AHP: live screens (`pm/screen/watch`) — the host's own
//! `vt100` screen of a terminal, pushed as `pm/screen/frame` notifications of the rows that
//! changed, at most [`FRAME_INTERVAL`] apart; a viewer costs nothing on the agent's path, as
//! frames are made off the pty reader from the screen the agent's `screen` view reads —
//! and the terminal list with what a person needs to tell terminals apart (`pm/terminals`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::conn::{Conn, RpcResult, invalid_params};
use crate::terminal::frame::Framer;
use crate::terminal::term::lock;

/// Shortest time between two frames to one viewer (about what a person can follow).
pub(super) const FRAME_INTERVAL: Duration = Duration::from_millis(40);
/// Screens one connection may watch at once.
pub(super) const MAX_WATCHED: usize = 8;

fn channel_of(params: &Value) -> Result<String, (i32, String, Option<Value>)> {
    params
        .get("channel")
        .and_then(Value::as_str)
        .map(String::from)
        .ok_or_else(|| invalid_params("channel is required"))
}

/// The terminal at `channel`, if this connection may read it.
fn terminal_at(
    conn: &Conn,
    channel: &str,
) -> Result<Arc<crate::terminal::Terminal>, (i32, String, Option<Value>)> {
    conn.check_channel(channel)?;
    crate::ids::terminal_id_from_uri(channel)
        .and_then(|id| conn.shared.core.get(id))
        .ok_or_else(|| {
            (
                ahp_types::errors::ahp_error_codes::NOT_FOUND,
                format!("no terminal at {channel}"),
                None,
            )
        })
}

/// `pm/screen/watch {channel}`: start pushing the terminal's screen (a full frame first).
pub(super) fn watch(conn: &Arc<Conn>, params: Value) -> RpcResult {
    let channel = channel_of(&params)?;
    let term = terminal_at(conn, &channel)?;
    let mut st = conn.state();
    if let Some(old) = st.watches.remove(&channel) {
        old.abort();
    }
    if st.watches.len() >= MAX_WATCHED {
        return Err(invalid_params(format!(
            "at most {MAX_WATCHED} screens are watched at once; unwatch one first"
        )));
    }
    let (c, core) = (conn.clone(), conn.shared.core.clone());
    let ch = channel.clone();
    let task = tokio::spawn(async move {
        let mut framer = Framer::default();
        let mut changes = term.subscribe();
        loop {
            core.sync_screen(&term);
            let frame = framer.next(lock(&term.vt).parser().screen());
            if let Some(frame) = frame {
                c.send(&json!({"jsonrpc": "2.0", "method": "pm/screen/frame",
                    "params": {"channel": ch, "frame": frame}}));
            }
            let ended = {
                let st = term.state();
                !st.running() && st.reader_done
            };
            if ended || c.state().closed || changes.changed().await.is_err() {
                return;
            }
            // Let a burst of output land: one frame for all of it.
            tokio::time::sleep(FRAME_INTERVAL).await;
            changes.borrow_and_update();
        }
    });
    st.watches.insert(channel, task.abort_handle());
    Ok(json!({"ok": true}))
}

/// `pm/screen/history {channel}`: the lines above the screen, oldest first, as styled runs.
pub(super) fn history(conn: &Conn, params: Value) -> RpcResult {
    let channel = channel_of(&params)?;
    let term = terminal_at(conn, &channel)?;
    conn.shared.core.sync_screen(&term);
    let lines = crate::terminal::frame::history(lock(&term.vt).parser().screen_mut());
    Ok(json!({ "lines": lines }))
}

/// `pm/screen/unwatch {channel}`.
pub(super) fn unwatch(conn: &Conn, params: Value) -> RpcResult {
    let channel = channel_of(&params)?;
    if let Some(task) = conn.state().watches.remove(&channel) {
        task.abort();
    }
    Ok(json!({"ok": true}))
}

/// One terminal as the page lists it: its summary (id, title, cwd, the running command,
/// state) and the client that opened it.
#[derive(serde::Serialize)]
struct Listed {
    #[serde(flatten)]
    summary: crate::terminal::ops::TermSummary,
    holder: Option<String>,
}

/// `pm/terminals`: every terminal this connection may use.
pub(super) fn list(conn: &Conn) -> RpcResult {
    let terminals: Vec<Listed> = conn
        .shared
        .core
        .list()
        .iter()
        .filter(|t| conn.may_use(&t.id))
        .map(|t| Listed {
            summary: crate::terminal::ops::summary(t),
            holder: t.state().holder_client.clone(),
        })
        .collect();
    Ok(json!({ "terminals": terminals }))
}

/// Stop every watch of a closing connection.
pub(super) fn stop_all(conn: &Conn) {
    for (_, task) in std::mem::take(&mut conn.state().watches) {
        task.abort();
    }
}
