//! Terminals opened for one command are closed once idle.
//!
//! Why: an `execute` without `target.terminal_id` opens a terminal for its command, and an
//! agent that ran one command there and moved on left it open — 64 of them at most, each a
//! shell and a pty, none of them in anybody's mind. The rule (the operator's, `--idle-close-ms`,
//! 10 minutes by default, 0 for never): such a terminal is closed once no request has named
//! it, nothing has been printed in it and no command has run there for that long. One that
//! still holds background jobs (a dev server started with `&`) is not idle and stays; `list`
//! shows those jobs. Terminals opened on purpose (`open_only`) stay until terminated.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::Service;
use crate::adapters::ops::TermRequest;

/// The most often the rule is applied.
const MIN_PACE: Duration = Duration::from_millis(200);
/// The least often.
const MAX_PACE: Duration = Duration::from_secs(30);

/// What was last seen of one terminal opened for a command.
struct Seen {
    used: Instant,
    /// `None` until first looked at.
    output_bytes: Option<u64>,
}

/// The terminals opened for one command, and when each was last used.
#[derive(Default)]
pub(crate) struct Implicit {
    seen: Mutex<HashMap<String, Seen>>,
    watching: AtomicBool,
}

impl Implicit {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Seen>> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `id` was opened for one command (and is still watched).
    pub fn contains(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// A request named `id`: it is in use.
    pub fn used(&self, id: &str) {
        if let Some(s) = self.lock().get_mut(id) {
            s.used = Instant::now();
        }
    }

    pub fn forget(&self, id: &str) {
        self.lock().remove(id);
    }
}

impl Service {
    /// The idle time after which a terminal opened for one command is closed (`None`: never).
    pub(crate) fn idle_close(&self) -> Option<Duration> {
        (self.cfg.idle_close_ms > 0).then(|| Duration::from_millis(self.cfg.idle_close_ms))
    }

    /// Terminal `id` was opened for one command: watch it (and start watching, once).
    pub(crate) fn opened_for_one_command(&self, id: &str) {
        let Some(idle) = self.idle_close() else {
            return;
        };
        self.implicit.lock().insert(
            id.to_string(),
            Seen {
                used: Instant::now(),
                output_bytes: None,
            },
        );
        if self.implicit.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = self.me.clone();
        let pace = (idle / 4).clamp(MIN_PACE, MAX_PACE);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(pace).await;
                let Some(app) = me.upgrade() else {
                    return;
                };
                app.close_idle(idle).await;
            }
        });
    }

    /// Close every watched terminal idle for `idle`.
    async fn close_idle(self: &Arc<Self>, idle: Duration) {
        if self.implicit.lock().is_empty() {
            return;
        }
        let listed = self.adapters.list().await;
        let mut closing = Vec::new();
        {
            let mut seen = self.implicit.lock();
            seen.retain(|id, s| {
                let Some((_, t)) = listed.iter().find(|(_, t)| &t.terminal_id == id) else {
                    // Gone from every host: nothing to close.
                    return false;
                };
                if !t.running {
                    return false;
                }
                let printed = s.output_bytes.is_some_and(|n| n != t.output_bytes);
                s.output_bytes = Some(t.output_bytes);
                if printed || t.executing.is_some() || !t.background_jobs.is_empty() {
                    s.used = Instant::now();
                    return true;
                }
                if s.used.elapsed() < idle {
                    return true;
                }
                closing.push(id.clone());
                false
            });
        }
        for id in closing {
            self.unentered.forget(&id);
            let Ok(adapter) = self.adapters.adapter_for_terminal(&id).await else {
                continue;
            };
            let kill = TermRequest::Kill {
                terminal_id: id.clone(),
            };
            match self
                .adapters
                .call(&adapter, kill, "", None, Duration::ZERO)
                .await
            {
                Ok(_) => {
                    tracing::info!(terminal = %id, idle_ms = idle.as_millis() as u64, "closed a terminal opened for one command, idle since")
                }
                Err(e) => {
                    tracing::warn!(terminal = %id, error = %e, "could not close an idle terminal")
                }
            }
        }
    }
}
