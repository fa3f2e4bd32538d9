//! The root list (every terminal with its title, claim and lifecycle), published after its
//! changes settle.
//!
//! Why not at once: each publication is the whole list (`root/terminalsChanged` carries
//! every terminal), so it costs in proportion to the terminals open. An agent's every call
//! into a terminal takes the claim and gives it back (active during the call, backgrounded
//! after): two publications per keystroke sent to a REPL, which with 500 terminals open
//! made a round trip three times slower. Changes are now gathered for [`SETTLE`] and
//! published once, and not at all when the list is back where it was published — a call
//! shorter than that shows nothing a person could have seen anyway.
//!
//! Nothing reads a stale list: a snapshot, a replay or a resume publishes what is pending
//! first (see `subscriptions`), so a client that asks gets the list as it is now, and the
//! same list arrives in sequence for clients following the feed.

use std::sync::Weak;
use std::time::Duration;

use super::*;

/// How long root list changes gather before they are published together.
pub const SETTLE: Duration = Duration::from_millis(20);

impl Core {
    /// The registry as a reader must see it: with a pending root list published first.
    pub(in crate::terminal) fn settled(&self) -> MutexGuard<'_, Registry> {
        let mut inner = self.inner();
        self.publish_pending_root(&mut inner);
        inner
    }

    /// The root list changed (or may have): publish it once the changes settle. Without a
    /// runtime to wait in (tests that drive the core directly), it is published now.
    pub(super) fn root_changed(&self, inner: &mut Registry) {
        if inner.root_pending {
            return;
        }
        inner.root_pending = true;
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(settle_then_publish(self.me.clone()));
            }
            Err(_) => self.publish_pending_root(inner),
        }
    }

    /// Publish the root list if a change is pending and it differs from the last one
    /// published.
    pub(super) fn publish_pending_root(&self, inner: &mut Registry) {
        if !std::mem::take(&mut inner.root_pending) {
            return;
        }
        let unchanged = inner
            .root
            .terminals
            .as_deref()
            .is_some_and(|shown| shown.iter().eq(inner.infos.values()));
        if unchanged {
            return;
        }
        let action = StateAction::RootTerminalsChanged(RootTerminalsChangedAction {
            terminals: inner.infos.values().cloned().collect(),
        });
        // Only a list the reducer took is told: one it refused would show subscribers a
        // list the root state does not hold.
        match apply_action_to_root(&mut inner.root, &action) {
            ReduceOutcome::Applied => {
                self.record(inner, ROOT_RESOURCE_URI, action, None);
            }
            refused => {
                tracing::warn!(outcome = ?refused, "the root reducer refused the terminal list")
            }
        }
    }
}

/// Wait for the changes to settle, then publish (unless the core is gone meanwhile).
async fn settle_then_publish(core: Weak<Core>) {
    tokio::time::sleep(SETTLE).await;
    if let Some(core) = core.upgrade() {
        let mut inner = core.inner();
        core.publish_pending_root(&mut inner);
    }
}
