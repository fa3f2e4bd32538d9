//! What subscribers see: snapshots with the sequence they reflect, the live feed, and replay
//! from the bounded log after a gap (or `None`, so the caller snapshots again).

use super::*;

impl Core {
    /// State snapshots for `uris` and a receiver for everything after them, taken together
    /// so nothing falls between. Unknown URIs are returned apart.
    pub fn subscribe(
        &self,
        uris: &[String],
    ) -> (
        Vec<Snapshot>,
        Vec<String>,
        broadcast::Receiver<Arc<ActionEnvelope>>,
    ) {
        let inner = self.settled();
        let mut snaps = Vec::new();
        let mut missing = Vec::new();
        for uri in uris {
            match self.snapshot_locked(&inner, uri) {
                Some(s) => snaps.push(s),
                None => missing.push(uri.clone()),
            }
        }
        (snaps, missing, self.tx.subscribe())
    }

    pub(in crate::terminal) fn snapshot_locked(
        &self,
        inner: &Registry,
        uri: &str,
    ) -> Option<Snapshot> {
        let state = if uri == ROOT_RESOURCE_URI {
            SnapshotState::Root(Box::new(inner.root.clone()))
        } else {
            let id = ids::terminal_id_from_uri(uri)?;
            let t = inner.terminals.get(id)?;
            SnapshotState::Terminal(Box::new(t.state().state.clone()))
        };
        Some(Snapshot {
            resource: uri.to_string(),
            state,
            from_seq: inner.seq as i64,
        })
    }

    pub fn snapshot(&self, uri: &str) -> Option<Snapshot> {
        let inner = self.settled();
        self.snapshot_locked(&inner, uri)
    }

    pub fn current_seq(&self) -> u64 {
        self.settled().seq
    }

    /// Actions on `channels` after `seq`, or `None` when the log no longer reaches back.
    pub fn replay_after(
        &self,
        seq: u64,
        channels: &BTreeSet<String>,
    ) -> Option<Vec<Arc<ActionEnvelope>>> {
        let inner = self.settled();
        self.replay_locked(&inner, seq, channels)
    }

    pub(in crate::terminal) fn replay_locked(
        &self,
        inner: &Registry,
        seq: u64,
        channels: &BTreeSet<String>,
    ) -> Option<Vec<Arc<ActionEnvelope>>> {
        if seq > inner.seq {
            // A sequence this core never issued (a client of an earlier host life).
            return None;
        }
        let mut out = inner.log.after(seq, channels)?;
        if let Some(root) = inner
            .root_action
            .as_ref()
            .filter(|r| r.server_seq > seq && channels.contains(&r.channel))
        {
            let at = out.partition_point(|e| e.server_seq < root.server_seq);
            out.insert(at, root.clone());
        }
        Some(out)
    }

    /// A live receiver of every action from now on.
    pub fn follow(&self) -> broadcast::Receiver<Arc<ActionEnvelope>> {
        self.tx.subscribe()
    }
}
