//! The bounded action log that replays what a subscriber missed, kept compact.
//!
//! Why compact: an agent driving a REPL dispatches about five actions per round trip (the
//! claim, the input, the output, the claim given back), most of them a few bytes of text.
//! Kept as `ActionEnvelope`s, each cost its full size (536 bytes for `StateAction`'s largest
//! kind, with the envelope and its channel about 750 bytes): 4 KiB per round trip until
//! the log was full, 40 MB for a full log, and while it filled, the allocator extended its
//! heap a page at a time, about 5 % of the server's CPU per round trip. Small text and
//! claims are now kept as what they are, with the channel shared by consecutive entries of
//! the same terminal, and their envelopes are built again only when a replay asks for them.
//! Everything else, and large output, is kept as the envelope the broadcast already holds,
//! so the output of a flood is never copied.

use std::collections::{BTreeSet, VecDeque};
use std::mem::size_of;
use std::sync::Arc;

use ahp_types::ActionEnvelope;
use ahp_types::actions::{
    StateAction, TerminalClaimedAction, TerminalDataAction, TerminalInputAction,
};
use ahp_types::state::TerminalClaim;

/// Text up to this length is kept as text; longer text keeps its envelope, whose own size
/// is then small beside the text and whose copy would cost more than it saves.
const SMALL_TEXT: usize = 1024;

/// The size estimate of an entry kept whole, beyond its payload text: the envelope, its
/// `Arc` and allocator headers, and the channel.
const WHOLE_OVERHEAD: usize = size_of::<ActionEnvelope>() + 3 * size_of::<usize>() + 64;

/// What a small entry says.
enum Small {
    Data(Box<str>),
    Input(Box<str>),
    Claimed(Box<TerminalClaim>),
}

/// One logged action.
enum Entry {
    /// A small action of a terminal, without an origin: rebuilt on replay.
    Small {
        seq: u64,
        channel: Arc<str>,
        what: Small,
    },
    /// Anything else, as broadcast.
    Whole(Arc<ActionEnvelope>),
}

impl Entry {
    fn seq(&self) -> u64 {
        match self {
            Entry::Small { seq, .. } => *seq,
            Entry::Whole(e) => e.server_seq,
        }
    }

    fn channel(&self) -> &str {
        match self {
            Entry::Small { channel, .. } => channel,
            Entry::Whole(e) => &e.channel,
        }
    }

    /// What the entry costs in memory, for the log's byte budget.
    fn size(&self) -> usize {
        size_of::<Entry>()
            + match self {
                Entry::Small { what, .. } => match what {
                    Small::Data(t) | Small::Input(t) => t.len(),
                    Small::Claimed(_) => size_of::<TerminalClaim>(),
                },
                Entry::Whole(e) => WHOLE_OVERHEAD + e.channel.len() + payload_len(&e.action),
            }
    }

    /// The envelope as it was broadcast.
    fn envelope(&self) -> Arc<ActionEnvelope> {
        let (seq, channel, what) = match self {
            Entry::Whole(e) => return e.clone(),
            Entry::Small { seq, channel, what } => (*seq, channel, what),
        };
        let action = match what {
            Small::Data(t) => StateAction::TerminalData(TerminalDataAction {
                data: t.to_string(),
            }),
            Small::Input(t) => StateAction::TerminalInput(TerminalInputAction {
                data: t.to_string(),
            }),
            Small::Claimed(c) => StateAction::TerminalClaimed(TerminalClaimedAction {
                claim: (**c).clone(),
            }),
        };
        Arc::new(ActionEnvelope {
            channel: channel.to_string(),
            action,
            server_seq: seq,
            origin: None,
            rejection_reason: None,
        })
    }
}

/// The text an action carries that counts towards the byte budget.
fn payload_len(a: &StateAction) -> usize {
    match a {
        StateAction::TerminalData(d) => d.data.len(),
        StateAction::TerminalInput(d) => d.data.len(),
        StateAction::RootTerminalsChanged(r) => r.terminals.len() * 200,
        _ => 0,
    }
}

/// The log: the newest actions within a count and a byte budget.
pub(super) struct ActionLog {
    entries: VecDeque<Entry>,
    bytes: usize,
    /// The newest action dropped: a replay from before it has a gap.
    floor: u64,
    max_actions: usize,
    max_bytes: usize,
}

impl ActionLog {
    pub fn new(max_actions: usize, max_bytes: usize) -> ActionLog {
        ActionLog {
            entries: VecDeque::new(),
            bytes: 0,
            floor: 0,
            max_actions,
            max_bytes,
        }
    }

    /// Keep `env`, dropping the oldest entries beyond the budget.
    pub fn push(&mut self, env: &Arc<ActionEnvelope>) {
        let entry = self
            .compact(env)
            .unwrap_or_else(|| Entry::Whole(env.clone()));
        self.bytes += entry.size();
        self.entries.push_back(entry);
        while self.entries.len() > self.max_actions
            || (self.bytes > self.max_bytes && self.entries.len() > 1)
        {
            if let Some(old) = self.entries.pop_front() {
                self.bytes = self.bytes.saturating_sub(old.size());
                self.floor = old.seq();
            }
        }
    }

    /// `env` as a small entry, when it is one.
    fn compact(&self, env: &ActionEnvelope) -> Option<Entry> {
        if env.origin.is_some() || env.rejection_reason.is_some() {
            return None;
        }
        let what = match &env.action {
            StateAction::TerminalData(d) if d.data.len() <= SMALL_TEXT => {
                Small::Data(d.data.as_str().into())
            }
            StateAction::TerminalInput(d) if d.data.len() <= SMALL_TEXT => {
                Small::Input(d.data.as_str().into())
            }
            StateAction::TerminalClaimed(c) => Small::Claimed(Box::new(c.claim.clone())),
            _ => return None,
        };
        // Consecutive actions of one terminal share its channel.
        let channel = match self.entries.back() {
            Some(Entry::Small { channel, .. }) if **channel == *env.channel => channel.clone(),
            _ => Arc::from(env.channel.as_str()),
        };
        Some(Entry::Small {
            seq: env.server_seq,
            channel,
            what,
        })
    }

    /// The actions on `channels` after `seq`, in order, or `None` when the log no longer
    /// reaches back that far.
    pub fn after(&self, seq: u64, channels: &BTreeSet<String>) -> Option<Vec<Arc<ActionEnvelope>>> {
        if seq < self.floor {
            return None;
        }
        // Entries are in sequence order: skip the older ones without looking at them.
        let from = self.entries.partition_point(|e| e.seq() <= seq);
        Some(
            self.entries
                .range(from..)
                .filter(|e| channels.contains(e.channel()))
                .map(Entry::envelope)
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ahp_types::actions::{TerminalResizedAction, TerminalTitleChangedAction};
    use ahp_types::state::{TerminalClientClaim, TerminalSessionClaim};

    fn env(seq: u64, channel: &str, action: StateAction) -> Arc<ActionEnvelope> {
        Arc::new(ActionEnvelope {
            channel: channel.into(),
            action,
            server_seq: seq,
            origin: None,
            rejection_reason: None,
        })
    }

    fn data(s: &str) -> StateAction {
        StateAction::TerminalData(TerminalDataAction { data: s.into() })
    }

    fn every_kind() -> Vec<Arc<ActionEnvelope>> {
        let big = "x".repeat(SMALL_TEXT + 1);
        let mut with_origin = (*env(0, "t1", data("typed"))).clone();
        with_origin.origin = Some(ahp_types::actions::ActionOrigin {
            client_id: "c".into(),
            client_seq: 7,
        });
        let actions = vec![
            ("t1", data("2\r\n>>> ")),
            ("t1", data("")),
            ("t1", data("é ünïcödé")),
            ("t1", data(&big)),
            (
                "t1",
                StateAction::TerminalInput(TerminalInputAction {
                    data: "1+1\r".into(),
                }),
            ),
            (
                "t2",
                StateAction::TerminalInput(TerminalInputAction { data: big.clone() }),
            ),
            (
                "t2",
                StateAction::TerminalClaimed(TerminalClaimedAction {
                    claim: TerminalClaim::Client(TerminalClientClaim {
                        client_id: "agent".into(),
                    }),
                }),
            ),
            (
                "t1",
                StateAction::TerminalClaimed(TerminalClaimedAction {
                    claim: TerminalClaim::Session(TerminalSessionClaim {
                        session: "s".into(),
                        chat: "c".into(),
                        turn_id: Some("turn".into()),
                        tool_call_id: None,
                    }),
                }),
            ),
            (
                "t2",
                StateAction::TerminalTitleChanged(TerminalTitleChangedAction {
                    title: "vim".into(),
                }),
            ),
            (
                "t1",
                StateAction::TerminalResized(TerminalResizedAction { cols: 80, rows: 24 }),
            ),
        ];
        let mut out: Vec<_> = actions
            .into_iter()
            .enumerate()
            .map(|(i, (c, a))| env(i as u64 + 1, c, a))
            .collect();
        with_origin.server_seq = out.len() as u64 + 1;
        out.push(Arc::new(with_origin));
        out
    }

    #[test]
    fn a_replay_gives_back_every_action_as_it_was_broadcast() {
        let mut log = ActionLog::new(1000, 1 << 20);
        let all = every_kind();
        for e in &all {
            log.push(e);
        }
        let both: BTreeSet<String> = ["t1".to_string(), "t2".to_string()].into();
        let replay = log.after(0, &both).expect("the log reaches back");
        assert_eq!(replay, all);
        // Only the channels asked for, only after the sequence given.
        let t2: BTreeSet<String> = ["t2".to_string()].into();
        let replay = log.after(6, &t2).expect("the log reaches back");
        let want: Vec<_> = all
            .iter()
            .filter(|e| e.server_seq > 6 && e.channel == "t2")
            .cloned()
            .collect();
        assert_eq!(replay, want);
        assert!(!want.is_empty());
    }

    #[test]
    fn small_actions_are_kept_small_and_large_output_is_not_copied() {
        let mut log = ActionLog::new(1000, 1 << 20);
        let big = env(1, "t1", data(&"y".repeat(64 * 1024)));
        log.push(&big);
        let Some(Entry::Whole(kept)) = log.entries.back() else {
            panic!("large output is kept whole")
        };
        assert!(Arc::ptr_eq(kept, &big));
        log.push(&env(2, "t1", data("2\r\n")));
        log.push(&env(3, "t1", data(">>> ")));
        let [
            _,
            Entry::Small { channel: a, .. },
            Entry::Small { channel: b, .. },
        ] = log.entries.make_contiguous()
        else {
            panic!("small output is kept small")
        };
        assert!(
            Arc::ptr_eq(a, b),
            "one terminal's entries share its channel"
        );
        assert!(size_of::<Entry>() <= 48, "{}", size_of::<Entry>());
    }

    #[test]
    fn the_log_keeps_its_bounds_and_says_when_it_no_longer_reaches_back() {
        let t1: BTreeSet<String> = ["t1".to_string()].into();
        let mut log = ActionLog::new(3, 1 << 20);
        for seq in 1..=5 {
            log.push(&env(seq, "t1", data("a")));
        }
        assert!(log.after(1, &t1).is_none());
        let seqs: Vec<u64> = log
            .after(2, &t1)
            .unwrap()
            .iter()
            .map(|e| e.server_seq)
            .collect();
        assert_eq!(seqs, [3, 4, 5]);
        // The byte budget: one large entry pushes out the rest, and stays itself.
        let mut log = ActionLog::new(1000, 4096);
        for seq in 1..=3 {
            log.push(&env(seq, "t1", data("a")));
        }
        log.push(&env(4, "t1", data(&"z".repeat(8192))));
        assert_eq!(log.entries.len(), 1);
        assert!(log.after(2, &t1).is_none());
        assert_eq!(log.after(3, &t1).unwrap().len(), 1);
    }
}
