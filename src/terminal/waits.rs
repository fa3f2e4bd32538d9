//! Waiting on a terminal: for a condition on its state, for its output to go quiet, within
//! a deadline. The bottom of the terminal's drivers (`drive`, `ready`, `held` wait here).

use std::time::{Duration, Instant};

use super::looks::{Watch, says_waiting};
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

/// Wait until `cond` holds, the foreground program waits for input (the reader's look,
/// `looks`, taken no earlier than `not_before`), or `deadline` passes.
pub async fn wait_for_or_input(
    t: &Terminal,
    deadline: Instant,
    not_before: Instant,
    mut cond: impl FnMut(&TermState) -> bool,
) -> Ended {
    let mut rx = t.subscribe();
    let _watch = Watch::new(t);
    let mut nudged = false;
    loop {
        {
            let st = t.state();
            if cond(&st) {
                return Ended::Cond;
            }
            if says_waiting(&st, not_before) {
                return Ended::Input;
            }
        }
        let now = Instant::now();
        if now >= deadline {
            return Ended::Deadline;
        }
        // A look older than `not_before` does not count: the reader is asked for a new one
        // the moment it may.
        if !nudged && now >= not_before {
            nudged = true;
            t.look_now.notify_one();
        }
        let wake = if nudged {
            deadline
        } else {
            not_before.min(deadline)
        };
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
    let mut rx = t.subscribe();
    let _watch = Watch::new(t);
    let settled_at = started + settle;
    let mut nudged = false;
    loop {
        let (len, running, at_prompt, waiting, look) = {
            let st = t.state();
            // A look taken once output came after `from`, or once `settle` passed.
            let since = if st.spool.len() != from {
                started
            } else {
                started + settle
            };
            (
                st.spool.len(),
                st.running(),
                st.at_prompt,
                says_waiting(&st, since),
                st.input_look.filter(|l| l.taken == st.taken_in),
            )
        };
        let now = Instant::now();
        if len != last_len {
            last_len = len;
            last_change = now;
        }
        if !running || now >= deadline {
            return false;
        }
        if waiting {
            return true;
        }
        let quiet = now.duration_since(last_change) >= INPUT_QUIET;
        // At the prompt, or where the kernel does not say: output quiet ends the wait.
        let unknown = look.is_some_and(|l| l.waiting == InputWait::Unknown);
        if quiet && (at_prompt || unknown) {
            return false;
        }
        // Once `settle` passed with nothing printed, a look taken from then on counts: the
        // reader is asked for one at once.
        if !nudged && now >= settled_at {
            nudged = true;
            t.look_now.notify_one();
        }
        let mut wake = deadline.min(last_change + INPUT_QUIET);
        if wake <= now {
            wake = deadline;
        }
        if !nudged {
            wake = wake.min(settled_at);
        }
        let _ = tokio::time::timeout_at(wake.into(), rx.changed()).await;
    }
}
