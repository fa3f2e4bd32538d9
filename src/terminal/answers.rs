//! Answering the queries a program prints (`queries`), to that program only.
//!
//! A terminal answers at once, and its answer waits in the input queue for whoever reads
//! next. When the program that asked ends first (`printf '\e[>q'` at a prompt), the shell's
//! line editor reads the answer as keys: the `ESC P` of XTVERSION's is Meta-P, a history
//! search, and the next line typed ran a line nobody sent and the operator's policy never
//! saw. So an answer is held until the program that asked blocks reading the terminal — the
//! kernel says so (`Pty::input_wait`) with every byte it printed taken in
//! (`looks::quiet_look`) — and dropped when
//! the shell's prompt comes back or the command that asked ends first. The agent's input
//! waits behind a held answer for at most [`HOLD_INPUT`], so a program that asks and reads
//! at once always reads the answer before later keys; a held answer is given up after
//! [`GIVE_UP`] (a program that did not read in that time waits for no answer).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::OwnedMutexGuard;

use super::core::Core;
use super::pty::InputWait;
use super::queries::{Queries, Query, answer, private_mode};
use super::term::{Terminal, lock};

/// How long the agent's input waits behind a held answer.
const HOLD_INPUT: Duration = Duration::from_millis(500);
/// How long an answer waits for its program to read.
const GIVE_UP: Duration = Duration::from_secs(10);
/// The first look again after a query; later looks back off to [`SLOWEST_LOOK`].
const FIRST_LOOK: Duration = Duration::from_millis(1);
const SLOWEST_LOOK: Duration = Duration::from_millis(50);

/// Answers written for a program that has not read yet.
pub(super) struct Held {
    reply: Vec<u8>,
    /// The write lock, taken when the query was found (if no input was being written then):
    /// input sent later waits for the answer.
    serial: Option<OwnedMutexGuard<()>>,
    /// Prompts seen when the program asked: one more, and the shell reads the terminal.
    prompts: u64,
    /// The command running when the program asked: once it ends, nobody reads the answer.
    command: Option<String>,
    since: Instant,
    look: Duration,
}

impl Held {
    /// How long the reader may wait for output before looking again.
    pub(super) fn next_look(&self) -> Duration {
        self.look
    }
}

/// Take what the pty printed in, answering the queries in it. The screen each answer reads
/// is the one the program had when it asked: the bytes up to each query go in first (vim
/// moves the cursor away right after asking where it stands).
pub(super) fn take_in(
    core: &Core,
    term: &Arc<Terminal>,
    queries: &mut Queries,
    held: &mut Option<Held>,
    bytes: &[u8],
) {
    // Counted before the bytes go in: a look at whether the program waits for input no
    // longer holds from this moment (`looks`).
    term.state().taken_in += bytes.len() as u64;
    let asked = queries.scan(bytes);
    if asked.is_empty() {
        return core.ingest(term, bytes);
    }
    let mut from = 0;
    for (q, end) in asked {
        if end > from {
            core.ingest(term, &bytes[from..end]);
            from = end;
        }
        let mut screen = || {
            core.sync_screen(term);
            let mut vt = lock(&term.vt);
            let s = vt.parser().screen();
            let (row, col) = s.cursor_position();
            let set = match q {
                Query::PrivateMode(n) => private_mode(s, n),
                _ => None,
            };
            Some((row, col, set))
        };
        let reply = answer(q, &mut screen);
        match held {
            Some(h) => h.reply.extend(reply),
            None => *held = Some(hold(term, reply)),
        }
    }
    if from < bytes.len() {
        core.ingest(term, &bytes[from..]);
    }
}

/// A new held answer, with what the terminal looked like when it was asked for.
fn hold(term: &Terminal, reply: Vec<u8>) -> Held {
    let (prompts, command) = {
        let st = term.state();
        (st.prompts, st.executing().map(|c| c.command_id.clone()))
    };
    Held {
        reply,
        serial: term.write_lock.clone().try_lock_owned().ok(),
        prompts,
        command,
        since: Instant::now(),
        look: FIRST_LOOK,
    }
}

/// What became of a held answer.
pub(super) enum Settled {
    /// Still held: the program does not read yet.
    Held(Held),
    /// Written: the look it was sent on is older than the answer, and the program has
    /// input to read.
    Sent,
    /// Dropped: its asker is gone, or nothing read it in time.
    Dropped,
}

/// Look at a held answer again (called by the reader with the kernel's word on the
/// foreground program, taken with every byte it printed taken in: `looks::quiet_look`):
/// write it, drop it, or keep holding it. A kernel that does not say (a set-uid program, a
/// device in memory) is taken as reading, as a terminal answers at once.
pub(super) fn settle(term: &Arc<Terminal>, mut held: Held, kernel: InputWait) -> Settled {
    if !asker_still_there(term, &held) {
        tracing::debug!(terminal = %term.id, "a query's asker is gone; its answer is dropped");
        return Settled::Dropped;
    }
    if kernel != InputWait::Busy {
        send(term, held);
        return Settled::Sent;
    }
    if held.since.elapsed() >= GIVE_UP {
        tracing::debug!(terminal = %term.id, "nothing read a query's answer; dropped");
        return Settled::Dropped;
    }
    if held.since.elapsed() >= HOLD_INPUT {
        held.serial = None;
    }
    held.look = (held.look * 2).min(SLOWEST_LOOK);
    Settled::Held(held)
}

/// Whether the program that asked can still be the one to read the answer: its command has
/// not ended, and the shell has not drawn a prompt since.
fn asker_still_there(term: &Terminal, held: &Held) -> bool {
    let st = term.state();
    if !st.running() || st.prompts != held.prompts {
        return false;
    }
    match &held.command {
        Some(id) => st.executing().is_some_and(|c| &c.command_id == id),
        None => true,
    }
}

/// Write an answer to the pty as a terminal writes it: not as the agent's input (no action,
/// no line tracking), by a task of its own so the reader never waits on a program that does
/// not read, and under the write lock (held since the query when it was free then).
fn send(term: &Arc<Terminal>, held: Held) {
    use std::sync::atomic::Ordering;
    let (term, lock) = (term.clone(), term.write_lock.clone());
    term.answers_in_flight.fetch_add(1, Ordering::SeqCst);
    tokio::spawn(async move {
        let _serial = match held.serial {
            Some(g) => g,
            None => lock.lock_owned().await,
        };
        let writing = term.begin_write();
        if let Err(e) = term.pty.write_all(&held.reply).await {
            tracing::debug!(terminal = %term.id, error = %e, "a query's answer could not be written");
        }
        drop(writing);
        term.answers_in_flight.fetch_sub(1, Ordering::SeqCst);
    });
}
