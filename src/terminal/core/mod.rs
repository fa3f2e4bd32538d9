//! The AHP terminal core: every terminal, the root list, and the one action log.
//!
//! State changes only by dispatching `StateAction`s: each gets the next server sequence
//! number, is applied by Microsoft's reducers (`apply_action_to_terminal`,
//! `apply_action_to_root`), kept in a bounded log and broadcast. A subscriber snapshots,
//! follows the broadcast, and after a gap replays from the log, or snapshots again when the
//! log no longer reaches back far enough.
//!
//! Locking: `inner` (sequence, log, root, terminal table) is taken before any terminal's
//! state lock, never after, so no two paths can wait on each other.
//!
//! Here: the log, the reducers, the terminal table and exit; nothing here starts I/O
//! (`lifecycle` spawns shells and tasks and kills them, and calls in). `integration`: turning trusted
//! shell-integration events into command actions. `subscriptions`: snapshots, replay and
//! the live feed for subscribers. `log`: the bounded log itself, small actions kept compact.

mod integration;
mod log;
mod root;
mod subscriptions;

/// For tests that wait out the settle on a paused clock.
#[cfg(test)]
pub(crate) use root::SETTLE as ROOT_SETTLE;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use ahp::reducers::{ReduceOutcome, apply_action_to_root, apply_action_to_terminal};
use ahp_types::actions::*;
use ahp_types::state::{
    RootState, Snapshot, SnapshotState, TerminalClaim, TerminalContentPart, TerminalInfo,
    TerminalState,
};
use ahp_types::{ActionEnvelope, ROOT_RESOURCE_URI};
use tokio::sync::broadcast;

use super::catch_up;
use super::file_uri::file_uri;
use super::osc::{Event, Item};
use super::term::{CommandRecord, ExitInfo, TermState, Terminal, decode_utf8, lock};
use super::{CoreConfig, CoreError, shell};
use crate::ids;

/// Capacity of the live action broadcast; a subscriber further behind replays from the log.
const BROADCAST_CAPACITY: usize = 4096;

/// When the content outgrows the scrollback limit it is cut back to this share of it
/// (numerator, denominator): cutting a quarter at a time moves the kept text once per
/// quarter of the limit appended, where cutting to the limit itself moved the whole
/// scrollback on every pty read.
const TRIM_TO: (usize, usize) = (3, 4);

/// Stream bytes rendered per step, so the stream lock is never held long.
const RENDER_STEP: usize = 256 * 1024;

/// Everything the core knows, under one lock: the terminals, the root list, the action log
/// and its sequence.
pub(super) struct Registry {
    pub seq: u64,
    log: log::ActionLog,
    /// The newest root list. Each one replaces the whole list, so it alone stands for every
    /// earlier one in a replay: keeping them all in the log cost memory quadratic in the
    /// number of terminals.
    root_action: Option<Arc<ActionEnvelope>>,
    root: RootState,
    /// A change of the root list waits to be published (see `root`).
    root_pending: bool,
    pub terminals: BTreeMap<String, Arc<Terminal>>,
    infos: BTreeMap<String, TerminalInfo>,
    /// Ids of terminals whose shell is starting.
    starting: BTreeSet<String>,
    /// The server-wide places live terminals (and starting ones) hold, by id.
    places: BTreeMap<String, crate::limits::places::RunningSlot>,
}

pub struct Core {
    pub cfg: CoreConfig,
    /// This core, for the task that publishes the root list once its changes settle.
    me: std::sync::Weak<Core>,
    inner: Mutex<Registry>,
    tx: broadcast::Sender<Arc<ActionEnvelope>>,
}

/// Bytes of output behind the screen that are parsed on the caller's worker; more are
/// parsed off the workers (`off_the_workers`).
const INLINE_CATCH_UP: u64 = 16 * 1024;

/// Run `f`, which may take a while, without holding up the runtime's other tasks: on a
/// multi-threaded runtime this worker hands its queue to another thread first.
pub(crate) fn off_the_workers<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

fn info_of(uri: &str, st: &TerminalState) -> TerminalInfo {
    TerminalInfo {
        resource: uri.to_string(),
        title: st.title.clone(),
        claim: st.claim.clone(),
        lifecycle: st.lifecycle.clone(),
    }
}

/// Bound the content parts: drop whole parts from the front while over `limit` (never the
/// last, which may still be growing), then cut the oldest remaining part's text from the
/// front at a character boundary. The full stream stays in the spool.
fn trim_content(content: &mut Vec<TerminalContentPart>, limit: usize) -> usize {
    let text_len = |p: &TerminalContentPart| match p {
        TerminalContentPart::Unclassified(u) => u.value.len(),
        TerminalContentPart::Command(c) => c.output.len(),
        TerminalContentPart::Unknown(_) => 0,
    };
    let mut total: usize = content.iter().map(text_len).sum();
    let mut whole = 0;
    while total > limit && whole + 1 < content.len() {
        total -= text_len(&content[whole]);
        whole += 1;
    }
    content.drain(..whole);
    if total > limit
        && let Some(first) = content.first_mut()
    {
        let s = match first {
            TerminalContentPart::Unclassified(u) => &mut u.value,
            TerminalContentPart::Command(c) => &mut c.output,
            TerminalContentPart::Unknown(_) => return total,
        };
        let mut cut = total - limit;
        while cut < s.len() && !s.is_char_boundary(cut) {
            cut += 1;
        }
        s.drain(..cut);
        total -= cut;
    }
    total
}

impl Core {
    pub fn new(cfg: CoreConfig) -> Arc<Core> {
        if let Some(spool) = cfg.runtime_dir.parent() {
            // Said once at start, to the operator: a spool directory the server cannot use
            // fails every terminal's start later, with only a trace id for the agent.
            match crate::private_dir::ensure(spool) {
                Ok(()) => shell::remove_stale_runtime_dirs(spool),
                Err(e) => tracing::error!(error = %e, "{}", crate::spool::UNUSABLE_DIR),
            }
        }
        let (tx, _) = broadcast::channel(BROADCAST_CAPACITY);
        let log = log::ActionLog::new(cfg.log_max_actions, cfg.log_max_bytes);
        Arc::new_cyclic(|me| Core {
            cfg,
            me: me.clone(),
            inner: Mutex::new(Registry {
                seq: 0,
                log,
                root_action: None,
                root: RootState {
                    agents: vec![],
                    active_sessions: None,
                    terminals: Some(vec![]),
                    config: None,
                    meta: None,
                },
                root_pending: false,
                terminals: BTreeMap::new(),
                infos: BTreeMap::new(),
                starting: BTreeSet::new(),
                places: BTreeMap::new(),
            }),
            tx,
        })
    }

    pub(super) fn inner(&self) -> MutexGuard<'_, Registry> {
        lock(&self.inner)
    }

    /// Give `action` the next sequence number, log it and broadcast it.
    fn record(
        &self,
        inner: &mut Registry,
        channel: &str,
        action: StateAction,
        origin: Option<ActionOrigin>,
    ) -> Arc<ActionEnvelope> {
        inner.seq += 1;
        let env = Arc::new(ActionEnvelope {
            channel: channel.to_string(),
            action,
            server_seq: inner.seq,
            origin,
            rejection_reason: None,
        });
        if matches!(env.action, StateAction::RootTerminalsChanged(_)) {
            inner.root_action = Some(env.clone());
        } else {
            inner.log.push(&env);
        }
        let _ = self.tx.send(env.clone());
        env
    }

    /// Apply a terminal action: reducer first, then the side effects the core owns.
    pub(super) fn apply(
        &self,
        inner: &mut Registry,
        term: &Terminal,
        st: &mut TermState,
        action: StateAction,
        origin: Option<ActionOrigin>,
    ) -> Arc<ActionEnvelope> {
        match apply_action_to_terminal(&mut st.state, &action) {
            ReduceOutcome::Applied => {}
            // Input changes no state, yet subscribers are told what was typed.
            ReduceOutcome::NoOp if matches!(action, StateAction::TerminalInput(_)) => {}
            refused => return refused_action(inner, &term.uri, action, origin, refused),
        }
        let mut root_may_change = matches!(
            action,
            StateAction::TerminalTitleChanged(_)
                | StateAction::TerminalClaimed(_)
                | StateAction::TerminalExited(_)
        );
        if let StateAction::TerminalData(d) = &action {
            st.spool.append(d.data.as_bytes());
            st.content_bytes += d.data.len();
            let limit = self.cfg.scrollback_bytes;
            if st.content_bytes > limit {
                let keep = limit / TRIM_TO.1 * TRIM_TO.0;
                st.content_bytes = trim_content(&mut st.state.content, keep);
            }
        }
        if let StateAction::TerminalCleared(_) = &action {
            st.content_bytes = 0;
        }
        let env = self.record(inner, &term.uri, action, origin);
        root_may_change |= !inner.infos.contains_key(&term.id);
        if root_may_change {
            let info = info_of(&term.uri, &st.state);
            if inner.infos.get(&term.id) != Some(&info) {
                inner.infos.insert(term.id.clone(), info);
                self.root_changed(inner);
            }
        }
        env
    }

    /// Feed what the pty printed into the terminal.
    pub(super) fn ingest(&self, term: &Terminal, bytes: &[u8]) {
        {
            let mut inner = self.inner();
            let mut st = term.state();
            let items = st.scanner.feed(bytes);
            for item in items {
                match item {
                    Item::Data(mut b) => {
                        if st.unannounced {
                            // Output of a command whose line never came: announce it as is.
                            self.announce(&mut inner, term, &mut st);
                        }
                        // A prompt-only shell: the echo of the entered line ends, its
                        // command starts (what bash's preexec would have said).
                        let echo_end = st
                            .echo_pending
                            .as_ref()
                            .and_then(|_| b.iter().position(|&c| c == b'\n'));
                        match echo_end {
                            Some(at) => {
                                let rest = b.split_off(at + 1);
                                self.data(&mut inner, term, &mut st, b);
                                if let Some(line) = st.echo_pending.take() {
                                    self.on_event(
                                        &mut inner,
                                        term,
                                        &mut st,
                                        Event::CommandLine(line),
                                    );
                                    self.on_event(&mut inner, term, &mut st, Event::Executed);
                                }
                                self.data(&mut inner, term, &mut st, rest);
                            }
                            None => self.data(&mut inner, term, &mut st, b),
                        }
                    }
                    Item::Event(e) => self.on_event(&mut inner, term, &mut st, e),
                    Item::Title(title) => {
                        if title != st.state.title {
                            let a = StateAction::TerminalTitleChanged(TerminalTitleChangedAction {
                                title,
                            });
                            self.apply(&mut inner, term, &mut st, a, None);
                        }
                    }
                }
            }
        }
        term.bump();
    }

    /// Text the pty printed (integration sequences already taken out).
    fn data(&self, inner: &mut Registry, term: &Terminal, st: &mut TermState, bytes: Vec<u8>) {
        let s = decode_utf8(&mut st.utf8_carry, bytes);
        if !s.is_empty() {
            let a = StateAction::TerminalData(TerminalDataAction { data: s });
            self.apply(inner, term, st, a, None);
        }
    }

    /// Catch the rendered screen up with the stream. Every reader of the screen calls this
    /// first: the screen is rendered when it is looked at, never on the pty's reading path,
    /// and a terminal nobody looks at never holds a screen at all. At most
    /// [`catch_up::MAX_REPLAY`] bytes are replayed whatever the backlog, and the work is
    /// moved off the runtime's workers, so a screen read never stalls other calls.
    pub fn sync_screen(&self, term: &Terminal) {
        // A few kilobytes behind (a REPL's answer, a prompt) are caught up here: handing
        // the worker's queue to another thread costs more than parsing them.
        let behind = {
            let len = term.state().spool.len();
            len.saturating_sub(lock(&term.vt).pos)
        };
        if behind <= INLINE_CATCH_UP {
            self.catch_up(term);
        } else {
            off_the_workers(|| self.catch_up(term));
        }
    }

    fn catch_up(&self, term: &Terminal) {
        let mut vt = lock(&term.vt);
        let len = term.state().spool.len();
        if len.saturating_sub(vt.pos) > catch_up::MAX_REPLAY {
            let cut = len - catch_up::MAX_REPLAY;
            let mut modes = catch_up::Modes::default();
            while vt.pos < cut {
                let Some((bytes, end)) = self.stream_step(term, vt.pos, cut) else {
                    return;
                };
                modes.scan(&bytes);
                vt.pos = end;
            }
            let replay = modes.replay();
            vt.process(&replay);
            if let Some((window, end)) = self.stream_step(term, cut, len) {
                let start = end - window.len() as u64;
                vt.pos = start + catch_up::line_start(&window) as u64;
            }
        }
        while let Some((bytes, end)) = self.stream_step(term, vt.pos, u64::MAX) {
            vt.process(&bytes);
            vt.pos = end;
        }
    }

    /// The stream's bytes from `from` (past any range dropped there), at most
    /// [`RENDER_STEP`] and not past `to`, with the offset they end at; `None` at the end. The
    /// stream lock is held for the read only.
    fn stream_step(&self, term: &Terminal, from: u64, to: u64) -> Option<(Vec<u8>, u64)> {
        let st = term.state();
        let end = st.spool.len().min(to);
        if from >= end {
            return None;
        }
        let max = (end - from).min(RENDER_STEP as u64) as usize;
        match st.spool.read(from, max) {
            Ok(s) if !s.bytes.is_empty() => Some((s.bytes, s.end)),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(terminal = %term.id, error = %e, "screen catch-up failed");
                None
            }
        }
    }

    /// The terminal's process is gone: settle its state once.
    pub(super) fn on_exit(&self, term: &Terminal, info: ExitInfo) {
        {
            let mut inner = self.inner();
            let mut st = term.state();
            if st.exit.is_some() {
                return;
            }
            if !st.utf8_carry.is_empty() {
                let s = crate::spool::into_text(std::mem::take(&mut st.utf8_carry)).0;
                let a = StateAction::TerminalData(TerminalDataAction { data: s });
                self.apply(&mut inner, term, &mut st, a, None);
            }
            if st.executing().is_some() {
                // The shell ended while the command ran (`exit 3`, or `set -e` after a
                // failure): a shell that exits on its own passes on the status it ended with.
                let code = info.exit_code.filter(|_| info.signal.is_none());
                self.finish_command(&mut inner, term, &mut st, code);
            }
            st.exit = Some(info.clone());
            st.spool.settle();
            let a = StateAction::TerminalExited(TerminalExitedAction {
                exit_code: info.exit_code,
            });
            self.apply(&mut inner, term, &mut st, a, None);
        }
        if let Some(f) = &term.nonce_file {
            let _ = std::fs::remove_file(f);
        }
        self.inner().places.remove(&term.id);
        tracing::debug!(terminal = %term.id, ?info, "terminal exited");
        term.bump();
    }

    /// Reserve `id` for a terminal whose shell is starting: the same id cannot be created
    /// twice, and starting terminals count against the limit.
    pub(super) fn reserve(&self, id: &str) -> Result<(), CoreError> {
        let mut inner = self.inner();
        if inner.terminals.contains_key(id) || inner.starting.contains(id) {
            return Err(CoreError::Exists(id.to_string()));
        }
        let live = inner
            .terminals
            .values()
            .filter(|t| t.state().running())
            .count();
        if live + inner.starting.len() >= self.cfg.max_terminals {
            return Err(CoreError::Limit(self.cfg.max_terminals));
        }
        if let Some(shared) = &self.cfg.shared_places {
            let Some(place) = shared.try_take() else {
                return Err(CoreError::Limit(shared.max()));
            };
            inner.places.insert(id.to_string(), place);
        }
        inner.starting.insert(id.to_string());
        Ok(())
    }

    /// Release a reservation (the terminal was added, or its start failed: then its place
    /// goes back too).
    pub(super) fn release(&self, id: &str) {
        let mut inner = self.inner();
        inner.starting.remove(id);
        if !inner.terminals.contains_key(id) {
            inner.places.remove(id);
        }
    }

    /// Add a started terminal to the table and the root list.
    pub(super) fn insert(&self, term: Arc<Terminal>) {
        let mut inner = self.inner();
        let info = info_of(&term.uri, &term.state().state);
        inner.infos.insert(term.id.clone(), info);
        inner.terminals.insert(term.id.clone(), term);
        self.root_changed(&mut inner);
        self.prune(&mut inner);
    }

    /// Take a terminal out of the table and the root list.
    pub(super) fn remove(&self, id: &str) {
        let mut inner = self.inner();
        inner.terminals.remove(id);
        inner.infos.remove(id);
        self.root_changed(&mut inner);
    }

    /// Forget the oldest exited terminals beyond the retention limit.
    fn prune(&self, inner: &mut Registry) {
        let exited: Vec<String> = inner
            .terminals
            .iter()
            .filter(|(_, t)| !t.state().running())
            .map(|(k, _)| k.clone())
            .collect();
        if exited.len() <= self.cfg.max_exited {
            return;
        }
        for id in &exited[..exited.len() - self.cfg.max_exited] {
            inner.terminals.remove(id);
            inner.infos.remove(id);
        }
        self.root_changed(inner);
    }

    pub fn get(&self, id: &str) -> Option<Arc<Terminal>> {
        self.inner().terminals.get(id).cloned()
    }

    pub fn list(&self) -> Vec<Arc<Terminal>> {
        self.inner().terminals.values().cloned().collect()
    }

    /// Dispatch a server-side action on a terminal (title, claim, clear, resize...).
    pub fn dispatch(
        &self,
        term: &Terminal,
        action: StateAction,
        origin: Option<ActionOrigin>,
    ) -> Arc<ActionEnvelope> {
        let env = {
            let mut inner = self.inner();
            let mut st = term.state();
            self.apply(&mut inner, term, &mut st, action, origin)
        };
        term.bump();
        env
    }

    /// The claim currently on a terminal.
    pub fn claim_of(&self, term: &Terminal) -> TerminalClaim {
        term.state().state.claim.clone()
    }

    /// Runtime directory for shell integration files.
    pub fn runtime_dir(&self) -> PathBuf {
        self.cfg.runtime_dir.clone()
    }
}

/// An action the reducer did not apply: neither logged nor broadcast (subscribers' mirrors,
/// applying it, would not change either), no side effect of the core's, no sequence number
/// taken; the caller gets it back with the reason. A refusal of the core's own action is its
/// bug, logged as such; a no-op (a command finished that the state never saw start) is not.
fn refused_action(
    inner: &Registry,
    channel: &str,
    action: StateAction,
    origin: Option<ActionOrigin>,
    outcome: ReduceOutcome,
) -> Arc<ActionEnvelope> {
    let reason = match &outcome {
        ReduceOutcome::NoOp => "the action changes nothing in this terminal's state".to_string(),
        ReduceOutcome::OutOfScope => "the action is not a terminal's".to_string(),
        ReduceOutcome::Invalid(e) => format!("the action is invalid: {e}"),
        ReduceOutcome::Applied => String::new(),
    };
    if matches!(outcome, ReduceOutcome::NoOp) {
        tracing::debug!(channel, %reason, "an action the reducer left alone was not recorded");
    } else {
        tracing::warn!(channel, %reason, "the reducer refused an action; not recorded");
    }
    Arc::new(ActionEnvelope {
        channel: channel.to_string(),
        action,
        server_seq: inner.seq,
        origin,
        rejection_reason: Some(reason),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ahp_types::state::{TerminalCommandPart, TerminalUnclassifiedPart};

    #[test]
    fn trimming_keeps_the_tail() {
        let mut c = vec![
            TerminalContentPart::Unclassified(TerminalUnclassifiedPart {
                value: "a".repeat(50),
            }),
            TerminalContentPart::Command(TerminalCommandPart {
                command_id: "c1".into(),
                command_line: "x".into(),
                output: "€".repeat(20),
                timestamp: 0,
                is_complete: false,
                exit_code: None,
                duration_ms: None,
            }),
        ];
        let total = trim_content(&mut c, 30);
        assert_eq!(c.len(), 1);
        assert!(total <= 30);
        if let TerminalContentPart::Command(cmd) = &c[0] {
            assert!(cmd.output.chars().all(|ch| ch == '€'));
        }
    }
}
