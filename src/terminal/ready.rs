//! Whether a shell is ready for a command line. With its integration, the first prompt says
//! so; before it, the user's rc files run. They may take seconds (a version manager's set-up),
//! or stop and ask something: zsh's `compinit` about insecure directories, a framework's
//! update offer, a key's passphrase. A line typed into such a question answers it with its
//! first letter and runs the rest as a command, so a shell whose rc files have not finished
//! (the integration reports when they have), whose output has gone quiet with the cursor
//! after text on its line, is asking: nothing is typed, and the agent is told the question.

use std::time::{Duration, Instant};

use super::core::Core;
use super::held;
use super::term::{TermState, Terminal};
use super::view::screen;
use super::waits::{PROMPT_END_GRACE, STARTUP_WAIT, quiet_after, wait_for};

/// How long the rc files' output must have been still before the screen is read for a
/// question.
pub const QUESTION_QUIET: Duration = Duration::from_millis(1500);

/// What the wait for a prompt found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ready {
    /// A prompt, or as much of one as the shell shows; or the wait ran out.
    Prompt,
    /// The rc files stopped at a question (its line on the screen).
    Asking(String),
}

/// Wait for the shell's prompt until `by`; a run's wait (`ticket`) also ends once its line
/// is withdrawn.
pub async fn wait_ready(core: &Core, t: &Terminal, by: Instant, ticket: Option<u64>) -> Ready {
    let integrated = {
        let st = t.state();
        t.nonce_file.is_some() && (st.detection || !st.first_wait_done)
    };
    let given_up = |st: &TermState| !st.running() || ticket.is_some_and(|k| held::withdrawn(st, k));
    if integrated {
        let mut seen = t.state().spool.len();
        loop {
            let step = by.min(Instant::now() + QUESTION_QUIET);
            if wait_for(t, step, |st| st.prompts > 0 || given_up(st)).await || Instant::now() >= by
            {
                break;
            }
            let now = t.state().spool.len();
            if now == seen
                && let Some(question) = asking(core, t)
            {
                return Ready::Asking(question);
            }
            seen = now;
        }
        // The prompt has started; its end mark follows once it is drawn (slow prompts run
        // programs). A theme that dropped the mark from its prompt is not waited for again.
        if t.state().prompt_end_missing == 0 && !given_up(&t.state()) {
            let drawn_by = by.min(Instant::now() + PROMPT_END_GRACE);
            wait_for(t, drawn_by, |st| st.prompt_drawn || given_up(st)).await;
        }
    } else {
        // Without integration the best sign of a prompt is output that has gone quiet.
        quiet_after(t, 0, by).await;
    }
    // A shell that showed no integration mark in its whole startup wait has none (its set-up
    // broke it) and is not waited for again; a caller's shorter wait is no such verdict.
    if t.created.elapsed() >= STARTUP_WAIT {
        t.state().first_wait_done = true;
    }
    match asking(core, t) {
        Some(question) => Ready::Asking(question),
        None => Ready::Prompt,
    }
}

/// The question the user's rc files stopped at, if they did: not finished, no prompt yet, the
/// shell still the program that was started (an rc that `exec`s another shell never
/// finishes, and that shell's prompt is no question), and the cursor after text.
pub fn asking(core: &Core, t: &Terminal) -> Option<String> {
    {
        let st = t.state();
        if t.nonce_file.is_none() || st.rc_done || st.prompts > 0 || !st.running() {
            return None;
        }
    }
    if replaced(t) {
        return None;
    }
    let s = screen(core, t);
    if s.cursor_col == 0 {
        return None;
    }
    let line = s.text.lines().nth(usize::from(s.cursor_row))?.trim();
    (!line.is_empty()).then(|| line.to_string())
}

/// Whether the terminal's process now runs another program than the shell it started as.
fn replaced(t: &Terminal) -> bool {
    let Some(now) = super::shell::program_of(t.pid) else {
        return false;
    };
    std::fs::canonicalize(&t.shell).is_ok_and(|started| started != now)
}

/// What an answer says of a question the rc files ask.
pub fn asking_note(question: &str) -> String {
    format!(
        "the shell's rc files stopped to ask {question:?}; answer with execution.input as a person would type it (\"y\" for a one-key question, \"yes\\r\" where it waits for Enter) or execution.keys, then run the command"
    )
}
