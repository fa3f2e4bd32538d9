//! Waiting on a terminal: for a condition on its state, for its output to go quiet, within
//! a deadline. The bottom of the terminal's drivers (`drive`, `ready`, `held` wait here).

use std::time::{Duration, Instant};

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
