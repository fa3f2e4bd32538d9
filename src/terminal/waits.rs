//! Waiting on a terminal: for a condition on its state, for its output to go quiet, within
//! a deadline. The bottom of the terminal's drivers (`drive`, `ready`, `held` wait here).

use std::time::{Duration, Instant};

use super::pty::InputWait;
use super::term::{TermState, Terminal};

/// Longest wait for a new shell's first prompt.
pub const STARTUP_WAIT: Duration = Duration::from_secs(10);
/// Raw input answers once the output has been quiet this long.
pub const INPUT_QUIET: Duration = Duration::from_millis(300);
/// After a prompt starts, how long to wait for its end mark before typing anyway (a line
/// typed early still runs; it only shows up inside the prompt).
pub const PROMPT_END_GRACE: Duration = Duration::from_secs(2);

/// Wait until `cond` holds on the terminal's state or `deadline` passes.
pub async fn wait_for(
    t: &Terminal,
    deadline: Instant,
    mut cond: impl FnMut(&TermState) -> bool,
) -> bool {
    let mut rx = t.subscribe();
    loop {
        if cond(&t.state()) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        match tokio::time::timeout_at(deadline.into(), rx.changed()).await {
            Ok(Ok(())) => {}
            _ => return cond(&t.state()),
        }
    }
}

/// Wait until output after `from` has stopped changing for [`INPUT_QUIET`].
pub async fn quiet_after(t: &Terminal, from: u64, deadline: Instant) {
    let mut last_len = from;
    let mut last_change = Instant::now();
    let mut rx = t.subscribe();
    loop {
        let (len, running) = {
            let st = t.state();
            (st.spool.len(), st.running())
        };
        let now = Instant::now();
        if len != last_len {
            last_len = len;
            last_change = now;
        } else if now.duration_since(last_change) >= INPUT_QUIET || !running {
            return;
        }
        if now >= deadline {
            return;
        }
        let wake = deadline.min(last_change + INPUT_QUIET);
        let _ = tokio::time::timeout_at(wake.into(), rx.changed()).await;
    }
}

/// Output quiet this long before the kernel is asked whether the foreground program waits
/// for input: a program that draws its prompt in several writes is let finish it. (While it
/// draws it is not blocked reading the terminal, so the kernel's answer is what decides;
/// this only spares asking during a stream of output.)
pub const INPUT_SETTLE: Duration = Duration::from_millis(10);
/// How often the kernel is asked while output stays quiet.
const INPUT_POLL: Duration = Duration::from_millis(25);
/// After the kernel first says the program waits, the second look that confirms it with no
/// new output (the first may race the output's last bytes, read but not yet taken in). The
/// prompt is reported this long after it settles, not a whole poll later: an agent answering
/// a prompt waits for this.
const INPUT_CONFIRM: Duration = Duration::from_millis(3);

/// When to look again: soon after a first sight of waiting, else at the next poll.
fn next_look(now: Instant, seen_waiting: bool) -> Instant {
    now + if seen_waiting {
        INPUT_CONFIRM
    } else {
        INPUT_POLL
    }
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The condition held.
    Cond,
    /// The foreground program waits for input (the kernel says so): nothing more comes
    /// until someone types.
    Input,
    /// The deadline passed.
    Deadline,
}

/// What the terminal's foreground is doing, as far as the shell and the kernel say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foreground {
    /// The shell is at its prompt, or the terminal ended: nothing runs.
    Idle,
    /// A program is blocked reading the terminal.
    Waiting,
    /// A program runs, or sleeps in something else than reading the terminal.
    Busy,
    /// The kernel would not say.
    Unknown,
}

/// What the terminal's foreground is doing now.
pub fn foreground(t: &Terminal) -> Foreground {
    {
        let st = t.state();
        if st.at_prompt || !st.running() {
            return Foreground::Idle;
        }
    }
    match t.pty.input_wait() {
        InputWait::Waiting => Foreground::Waiting,
        InputWait::Busy => Foreground::Busy,
        InputWait::Unknown => Foreground::Unknown,
    }
}

/// Whether the terminal's foreground program waits for input now: the shell is not at its
/// prompt (that is a command's end, told by the shell), and the kernel says the program is
/// blocked reading the terminal.
pub fn waits_for_input(t: &Terminal) -> bool {
    foreground(t) == Foreground::Waiting
}

/// Wait until `cond` holds, the foreground program waits for input (asked once output has
/// been quiet for [`INPUT_SETTLE`], and not before `not_before`), or `deadline` passes.
pub async fn wait_for_or_input(
    t: &Terminal,
    deadline: Instant,
    not_before: Instant,
    mut cond: impl FnMut(&TermState) -> bool,
) -> Ended {
    let mut rx = t.subscribe();
    let mut last_len = t.state().spool.len();
    let mut last_change = Instant::now();
    // Seen waiting once, at this length of output: a second look, a poll later with nothing
    // new, confirms it (the first may race the output's last bytes).
    let mut seen_waiting: Option<u64> = None;
    loop {
        let len = {
            let st = t.state();
            if cond(&st) {
                return Ended::Cond;
            }
            st.spool.len()
        };
        let now = Instant::now();
        if len != last_len {
            last_len = len;
            last_change = now;
            seen_waiting = None;
        }
        if now >= deadline {
            return Ended::Deadline;
        }
        let quiet = now.duration_since(last_change) >= INPUT_SETTLE;
        if quiet && now >= not_before {
            if waits_for_input(t) {
                if seen_waiting == Some(len) {
                    return Ended::Input;
                }
                seen_waiting = Some(len);
            } else {
                seen_waiting = None;
            }
        }
        let wake = if quiet {
            next_look(now, seen_waiting.is_some())
        } else {
            last_change + INPUT_SETTLE
        }
        .max(not_before.min(deadline))
        .min(deadline);
        let _ = tokio::time::timeout_at(wake.into(), rx.changed()).await;
    }
}

/// Wait after typed input for the program's answer: until the foreground program waits for
/// input again (asked once output came after `from`, or `settle` passed: until then it may
/// not have read what was just typed), the shell is back at its prompt, or `deadline`. A
/// program the kernel says is busy (computing, sleeping in a timer) is waited for, however
/// long it is quiet; where the kernel does not say, output quiet for [`INPUT_QUIET`] ends
/// the wait, as before. Whether it ended waiting for input.
pub async fn quiet_or_input(t: &Terminal, from: u64, deadline: Instant, settle: Duration) -> bool {
    let started = Instant::now();
    let mut last_len = from;
    let mut last_change = started;
    let mut seen_waiting: Option<u64> = None;
    let mut rx = t.subscribe();
    loop {
        let (len, running) = {
            let st = t.state();
            (st.spool.len(), st.running())
        };
        let now = Instant::now();
        if len != last_len {
            last_len = len;
            last_change = now;
            seen_waiting = None;
        }
        if !running || now >= deadline {
            return false;
        }
        let settled = len != from || now.duration_since(started) >= settle;
        let quiet_for = now.duration_since(last_change);
        if settled && quiet_for >= INPUT_SETTLE {
            match foreground(t) {
                // Seen twice a poll apart with nothing new (the first may race the output).
                Foreground::Waiting if seen_waiting == Some(len) => return true,
                Foreground::Waiting => seen_waiting = Some(len),
                Foreground::Idle if quiet_for >= INPUT_QUIET => return false,
                Foreground::Unknown if quiet_for >= INPUT_QUIET => return false,
                _ => seen_waiting = None,
            }
        }
        let wake = deadline.min(if quiet_for >= INPUT_SETTLE {
            next_look(now, seen_waiting.is_some())
        } else {
            last_change + INPUT_SETTLE
        });
        let _ = tokio::time::timeout_at(wake.into(), rx.changed()).await;
    }
}
