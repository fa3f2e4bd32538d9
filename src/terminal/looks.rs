//! Whether the terminal's program waits for input, looked at by the terminal's reader.
//!
//! The kernel says when the foreground program is blocked reading the terminal
//! (`Pty::input_wait`). Asked by a waiting call, its answer could race the output: the
//! program's last bytes read off the pty but not yet taken in, so the call had to let the
//! output go quiet (10 ms) and look twice (3 ms apart) before it believed it — a prompt was
//! reported ~15 ms after it was drawn. The reader asks instead, after it took in everything
//! it read and with no output left unread before and after the kernel's word, so what it
//! publishes (`TermState::input_look`: what it had taken in then, and the answer) holds for
//! exactly that output; a program blocked reading with input it has not read yet (keys just
//! typed, a query's answer held or on its way) is not waiting for a person. It looks only
//! while a call waits on it ([`Watch`]), at once when
//! the call starts, soon after output stops (at most every [`BETWEEN_READS`] while it
//! streams), and then again and again, backing off from [`FIRST`] to [`SLOWEST`].

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::pty::InputWait;
use super::term::{InputLook, TermState, Terminal};

/// The first look again after the program was busy (it printed its prompt and has not
/// reached its read yet); then doubled.
const FIRST: Duration = Duration::from_micros(250);
/// The slowest pace of looks while a call waits.
const SLOWEST: Duration = Duration::from_millis(25);
/// While output streams, a look at most this often (each costs a few reads of `/proc`).
const BETWEEN_READS: Duration = Duration::from_millis(1);

/// A call waiting on the reader's looks; the reader looks while one exists.
pub struct Watch<'a> {
    t: &'a Terminal,
}

impl<'a> Watch<'a> {
    pub fn new(t: &'a Terminal) -> Watch<'a> {
        t.input_watchers.fetch_add(1, Ordering::SeqCst);
        t.look_now.notify_one();
        Watch { t }
    }
}

impl Drop for Watch<'_> {
    fn drop(&mut self) {
        self.t.input_watchers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether the reader's last look says the program waits for input, for the output as it
/// stands and taken no earlier than `not_before`: the shell is not at its prompt (that is a
/// command's end, told by the shell) and the kernel said the program was blocked reading
/// the terminal with nothing printed since.
pub fn says_waiting(st: &TermState, not_before: Instant) -> bool {
    !st.at_prompt
        && st.running()
        && st.input_look.is_some_and(|l| {
            l.waiting == InputWait::Waiting && l.taken == st.taken_in && l.at >= not_before
        })
}

/// The reader's side: when it looks next.
#[derive(Debug)]
pub(super) struct Looker {
    due: Option<Instant>,
    last: Option<Instant>,
    step: Duration,
}

impl Default for Looker {
    fn default() -> Looker {
        Looker {
            due: None,
            last: None,
            step: FIRST,
        }
    }
}

impl Looker {
    /// A call started waiting: look now.
    pub fn asked(&mut self) {
        self.due = Some(Instant::now());
        self.step = FIRST;
    }

    /// The reader took output in: look soon (at once, unless it looked a moment ago).
    pub fn output_came(&mut self) {
        let now = Instant::now();
        self.due = Some(match self.last {
            Some(l) if now.duration_since(l) < BETWEEN_READS => l + BETWEEN_READS,
            _ => now,
        });
        self.step = FIRST;
    }

    /// How long the reader may wait for output before it should look.
    pub fn next_look(&self, t: &Terminal) -> Option<Duration> {
        if t.input_watchers.load(Ordering::SeqCst) == 0 {
            return None;
        }
        Some(self.due.map_or(Duration::ZERO, |d| {
            d.saturating_duration_since(Instant::now())
        }))
    }

    /// Whether a look is due: a call waits, and the time has come.
    pub fn due(&self, t: &Terminal) -> bool {
        t.input_watchers.load(Ordering::SeqCst) > 0 && self.due.is_none_or(|d| d <= Instant::now())
    }

    /// Publish the kernel's word (`quiet_look`), for the output taken in so far.
    /// `answer_held`: a query's answer waits for the program to read (`answers`).
    pub fn publish(&mut self, t: &Terminal, kernel: InputWait, answer_held: bool) {
        if t.input_watchers.load(Ordering::SeqCst) == 0 {
            self.due = None;
            return;
        }
        let now = Instant::now();
        self.last = Some(now);
        let mut waiting = kernel;
        // Blocked reading, but not for a person: input it has not read yet (keys just typed,
        // a line), or the terminal's answer to its query, held or on its way.
        if waiting == InputWait::Waiting
            && (answer_held
                || t.answers_in_flight.load(Ordering::SeqCst) > 0
                || t.pty.unread_input())
        {
            waiting = InputWait::Busy;
        }
        let taken = t.state().taken_in;
        {
            let mut st = t.state();
            st.input_look = Some(InputLook {
                taken,
                waiting,
                at: now,
            });
        }
        t.bump();
        let step = match waiting {
            InputWait::Waiting => SLOWEST,
            _ => self.step,
        };
        self.due = Some(now + step);
        self.step = (step * 2).min(SLOWEST);
    }
}

/// The kernel's word on the terminal's foreground program, taken with every byte the
/// program printed before it taken in and every byte written to it moved to its side: a read
/// that does not wait comes first and after (`Pty::try_read`: it waits for the kernel to
/// move output across the pty, which the unread count does not), and `Err(n)` says it found
/// `n` bytes in `buf` instead, to take in before looking again.
///
/// Input written to the pty reaches the program's side in a kernel worker of its own, so a
/// program can look blocked reading while keys just written are still on their way. The
/// look is taken with no write in progress (`Terminal::writes` against `writes_done`), after
/// asking the program's side whether input waits (`Pty::unread_input`: a poll there first
/// moves whatever is on its way), and with no write begun while it looked. A program then
/// blocked reading has read everything written to it and waits for more. Only the reader
/// calls it.
pub(super) fn quiet_look(t: &Terminal, buf: &mut [u8]) -> Result<InputWait, usize> {
    if let Ok(Some(n)) = t.pty.try_read(buf) {
        return Err(n);
    }
    let begun = t.writes.load(Ordering::SeqCst);
    if begun != t.writes_done.load(Ordering::SeqCst) || t.pty.unread_input() {
        return Ok(InputWait::Busy);
    }
    let kernel = t.pty.input_wait();
    if let Ok(Some(n)) = t.pty.try_read(buf) {
        return Err(n);
    }
    if t.writes.load(Ordering::SeqCst) != begun {
        return Ok(InputWait::Busy);
    }
    Ok(kernel)
}
