//! What changed in any adapter, merged, for its followers (MCP resource
//! updates). Followers need to know which terminal to read again and whether the list
//! changed, not the terminal protocol's actions, so the merged stream carries [`Change`]s.
//!
//! Besides its actions, a remote adapter reports its host's terminals as changed all at
//! once when the connection to the host ends: a subscriber to one of them hears about it
//! and its next read says what happened (cut off, or gone with a restarted host) instead of
//! waiting for an update that can no longer come.

use std::sync::{Arc, Mutex};

use ahp_types::{ActionEnvelope, ROOT_RESOURCE_URI};
use tokio::sync::broadcast::{self, error::RecvError};

use super::Adapter;
use crate::locks::lock;

/// Buffer of the merged stream.
const CHANGES_BUFFER: usize = 4096;

/// One change, as a follower needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The list of terminals changed.
    List,
    /// The terminal at this URI changed.
    Terminal(String),
    /// Changes were missed (a follower fell behind): any terminal may have changed.
    Missed,
}

impl Change {
    fn of(action: &ActionEnvelope) -> Change {
        if action.channel == ROOT_RESOURCE_URI {
            Change::List
        } else {
            Change::Terminal(action.channel.clone())
        }
    }
}

/// The merged stream and its sources. Nothing is passed on until somebody follows it (an
/// MCP client's resource subscription): a task that passed every action into a stream
/// nobody read woke with every keystroke an agent sent, and kept the core's broadcast
/// holding its last few thousand actions for it.
pub struct Changes {
    tx: broadcast::Sender<Change>,
    merge: Mutex<Merge>,
}

#[derive(Default)]
struct Merge {
    followed: bool,
    /// Adapters waiting for the first follower.
    waiting: Vec<Arc<dyn Adapter>>,
}

impl Default for Changes {
    fn default() -> Changes {
        Changes {
            tx: broadcast::channel(CHANGES_BUFFER).0,
            merge: Mutex::new(Merge::default()),
        }
    }
}

impl Changes {
    /// Pass an adapter's changes into the merged stream once somebody follows it.
    pub fn forward(&self, adapter: Arc<dyn Adapter>) {
        let mut merge = lock(&self.merge);
        if merge.followed {
            self.pass_on(adapter.as_ref());
        } else {
            merge.waiting.push(adapter);
        }
    }

    /// Every adapter's changes from now on.
    pub fn follow(&self) -> broadcast::Receiver<Change> {
        let mut merge = lock(&self.merge);
        // Subscribed before anything is passed on, so the first follower misses nothing.
        let rx = self.tx.subscribe();
        if !std::mem::replace(&mut merge.followed, true) {
            for adapter in std::mem::take(&mut merge.waiting) {
                self.pass_on(adapter.as_ref());
            }
        }
        rx
    }

    /// A task passing `adapter`'s actions and cut-offs from now on into the merged stream.
    fn pass_on(&self, adapter: &dyn Adapter) {
        let mut actions = adapter.follow();
        let mut cut_off = adapter.cut_off();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            loop {
                let cut = async {
                    match cut_off.as_mut() {
                        Some(rx) => rx.recv().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    action = actions.recv() => match action {
                        Ok(a) => {
                            let _ = tx.send(Change::of(&a));
                        }
                        Err(RecvError::Lagged(_)) => {
                            let _ = tx.send(Change::Missed);
                        }
                        Err(RecvError::Closed) => return,
                    },
                    uris = cut => match uris {
                        Ok(uris) => {
                            for uri in uris {
                                let _ = tx.send(Change::Terminal(uri));
                            }
                            let _ = tx.send(Change::List);
                        }
                        Err(RecvError::Lagged(_)) => {
                            let _ = tx.send(Change::Missed);
                        }
                        Err(RecvError::Closed) => cut_off = None,
                    },
                }
            }
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::adapters::{AdapterError, AdapterType, BoxFut, Failure};
    use crate::terminal::ops::{ApprovalAnswer, ApprovalArgs, TermRequest, TermResponse};
    use ahp_types::actions::{StateAction, TerminalTitleChangedAction};
    use ahp_types::state::TerminalState;

    /// An adapter with no terminals, whose actions and cut-offs the test sends itself: it
    /// connects, answers every operation that it has no host, and nobody watches it.
    struct Fake {
        actions: broadcast::Sender<Arc<ActionEnvelope>>,
        cuts: broadcast::Sender<Vec<String>>,
    }

    fn fake() -> Arc<Fake> {
        Arc::new(Fake {
            actions: broadcast::channel(16).0,
            cuts: broadcast::channel(16).0,
        })
    }

    const NO_HOST: &str = "a test adapter has no host";

    impl Adapter for Fake {
        fn adapter_type(&self) -> AdapterType {
            AdapterType::ContainerBridge
        }
        fn connect(&self) -> BoxFut<'_, Result<(), AdapterError>> {
            Box::pin(async { Ok(()) })
        }
        fn call<'a>(
            &'a self,
            _: TermRequest,
            _: &'a str,
            _: Option<&'a str>,
            _: Duration,
        ) -> BoxFut<'a, Result<TermResponse, AdapterError>> {
            Box::pin(async { Err(AdapterError::new(Failure::Unavailable, NO_HOST)) })
        }
        fn ask(
            &self,
            _: ApprovalArgs,
            _: Duration,
        ) -> BoxFut<'_, Result<ApprovalAnswer, AdapterError>> {
            Box::pin(async { Ok(ApprovalAnswer::unavailable()) })
        }
        fn close(&self) -> BoxFut<'_, ()> {
            Box::pin(async {})
        }
        fn terminal_state(&self, _: &str) -> BoxFut<'_, Option<TerminalState>> {
            Box::pin(async { None })
        }
        fn follow(&self) -> broadcast::Receiver<Arc<ActionEnvelope>> {
            self.actions.subscribe()
        }
        fn cut_off(&self) -> Option<broadcast::Receiver<Vec<String>>> {
            Some(self.cuts.subscribe())
        }
    }

    fn action(terminal: &str) -> Arc<ActionEnvelope> {
        Arc::new(ActionEnvelope {
            channel: format!("ahp-terminal:/{terminal}"),
            action: StateAction::TerminalTitleChanged(TerminalTitleChangedAction {
                title: "t".into(),
            }),
            server_seq: 1,
            origin: None,
            rejection_reason: None,
        })
    }

    fn terminal(id: &str) -> Change {
        Change::Terminal(format!("ahp-terminal:/{id}"))
    }

    async fn next(rx: &mut broadcast::Receiver<Change>) -> Change {
        tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap()
    }

    #[tokio::test]
    async fn the_merged_stream_starts_with_its_first_follower_and_takes_later_adapters() {
        let rt = Changes::default();
        let early = fake();
        rt.forward(early.clone());
        // Nobody follows the merged stream: nobody listens to the adapters either.
        assert_eq!(early.actions.receiver_count(), 0);
        let mut first = rt.follow();
        assert_eq!(early.actions.receiver_count(), 1);
        early.actions.send(action("early")).unwrap();
        assert_eq!(next(&mut first).await, terminal("early"));
        // An adapter that comes later is passed on at once; a second follower adds no
        // second copy of anything.
        let late = fake();
        rt.forward(late.clone());
        let mut second = rt.follow();
        assert_eq!(
            (
                early.actions.receiver_count(),
                late.actions.receiver_count()
            ),
            (1, 1)
        );
        late.actions.send(action("late")).unwrap();
        early.actions.send(action("again")).unwrap();
        for rx in [&mut first, &mut second] {
            let mut got = [next(rx).await, next(rx).await];
            got.sort_by_key(|c| format!("{c:?}"));
            assert_eq!(got, [terminal("again"), terminal("late")]);
            assert!(rx.try_recv().is_err(), "each change once");
        }
    }

    #[tokio::test]
    async fn a_cut_off_reports_each_of_its_terminals_and_the_list() {
        let rt = Changes::default();
        let remote = fake();
        rt.forward(remote.clone());
        let mut rx = rt.follow();
        remote
            .cuts
            .send(vec![
                "ahp-terminal:/term_a".into(),
                "ahp-terminal:/term_b".into(),
            ])
            .unwrap();
        assert_eq!(next(&mut rx).await, terminal("term_a"));
        assert_eq!(next(&mut rx).await, terminal("term_b"));
        assert_eq!(next(&mut rx).await, Change::List);
        // The root channel's actions are the list's changes.
        let mut root = (*action("x")).clone();
        root.channel = ROOT_RESOURCE_URI.into();
        remote.actions.send(Arc::new(root)).unwrap();
        assert_eq!(next(&mut rx).await, Change::List);
    }
}
