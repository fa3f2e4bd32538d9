//! A command line held back until its shell is ready, and the interrupt a cancelled call
//! sends. A `run` waits for the shell's first prompt before it types (a slow rc file takes
//! seconds); a call cancelled in that wait must not have its command typed afterwards, and
//! a Ctrl-C sent into a shell still reading its rc would abort the user's set-up half-way.
//! So the interrupt withholds a command that is still waiting, interrupts one once it is
//! typed, and only then, with nothing of the call's in the terminal's way, sends Ctrl-C.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::core::Core;
use super::fish_syntax::fish_of;
use super::lifecycle;
use super::protocol::CTRL_C;
use super::term::{HeldRun, Stage, TermState, Terminal};
use super::waits::{PROMPT_END_GRACE, STARTUP_WAIT, wait_for};

/// Tickets of held command lines, unique in this process.
static NEXT_TICKET: AtomicU64 = AtomicU64::new(1);

/// A run's hold on its command line; given up when dropped, whatever happened.
pub struct Hold<'a> {
    t: &'a Terminal,
    ticket: u64,
}

/// Hold `call`'s command line in `t` until [`Hold::start_typing`].
pub fn hold<'a>(t: &'a Terminal, call: Option<&str>) -> Hold<'a> {
    let ticket = NEXT_TICKET.fetch_add(1, Ordering::Relaxed);
    t.state().held.push(HeldRun {
        ticket,
        call: call.map(str::to_string),
        stage: Stage::Waiting,
    });
    Hold { t, ticket }
}

fn find(st: &mut TermState, ticket: u64) -> Option<&mut HeldRun> {
    st.held.iter_mut().find(|h| h.ticket == ticket)
}

impl Hold<'_> {
    /// This hold's ticket, for [`withdrawn`].
    pub fn ticket(&self) -> u64 {
        self.ticket
    }

    /// The line may be typed now: `false` if its call was cancelled while it waited.
    pub fn start_typing(&self) -> bool {
        let mut st = self.t.state();
        match find(&mut st, self.ticket) {
            Some(h) if h.stage == Stage::Waiting => {
                h.stage = Stage::Typing { interrupt: false };
                true
            }
            _ => false,
        }
    }

    /// The line is typed: interrupt it at once if its call was cancelled while it was typed.
    pub async fn typed(self, core: &Core) {
        let interrupt = {
            let mut st = self.t.state();
            let stage = find(&mut st, self.ticket).map(|h| h.stage);
            st.held.retain(|h| h.ticket != self.ticket);
            stage == Some(Stage::Typing { interrupt: true })
        };
        if interrupt {
            let _ = ctrl_c(core, self.t).await;
        }
    }
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        self.t.state().held.retain(|h| h.ticket != self.ticket);
    }
}

/// Stop what tool call `call` started in `t`: a command line still waiting is withheld (then
/// `Ok(true)`), one being typed is interrupted once typed, anything else gets Ctrl-C.
pub async fn interrupt(core: &Core, t: &Terminal, call: Option<&str>) -> std::io::Result<bool> {
    {
        let mut st = t.state();
        let mut withheld = false;
        let mut typing = false;
        for h in st
            .held
            .iter_mut()
            .filter(|h| call.is_some() && h.call.as_deref() == call)
        {
            match h.stage {
                Stage::Waiting | Stage::Withdrawn => {
                    h.stage = Stage::Withdrawn;
                    withheld = true;
                }
                Stage::Typing { .. } => {
                    h.stage = Stage::Typing { interrupt: true };
                    typing = true;
                }
            }
        }
        if withheld || typing {
            drop(st);
            // Wake the run: it stops waiting for the shell.
            t.bump();
            return Ok(withheld && !typing);
        }
    }
    ctrl_c(core, t).await?;
    Ok(false)
}

/// Send Ctrl-C to a terminal's foreground command. A shell still reading its rc files (no
/// first prompt drawn yet, where its integration will mark one) would abort them half-way
/// and lose the user's set-up; one still running its prompt commands would keep the
/// interrupt for the line editor, which then drops the first key typed next. So Ctrl-C
/// waits while the shell itself would take it: for the first prompt, within the shell's
/// startup wait, and for a prompt being drawn, within [`PROMPT_END_GRACE`]; a line typed
/// meanwhile is then discarded by the line editor or its command interrupted. A command
/// that is running gets it at once: that is whom it is for.
pub async fn ctrl_c(core: &Core, t: &Terminal) -> std::io::Result<()> {
    let settle_by = {
        let st = t.state();
        let integrated = t.nonce_file.is_some() && st.running();
        match shell_takes_ctrl_c(&st).filter(|_| integrated) {
            Some(Settling::Starting) => Some(t.created + STARTUP_WAIT),
            Some(Settling::DrawingPrompt) => Some(Instant::now() + PROMPT_END_GRACE),
            None => None,
        }
    };
    if let Some(by) = settle_by {
        wait_for(t, by, |st| {
            shell_takes_ctrl_c(st).is_none() || !st.running()
        })
        .await;
    }
    {
        // At a prompt, Ctrl-C brings a fresh prompt (and drops a line typed ahead): the next
        // command waits for it, rather than be typed into the old one and taken for the
        // interrupted line. Said before the key goes, so the new prompt cannot come first.
        // A continuation prompt is given up with it: the line it held is dropped. Fish
        // clears its line and draws no new prompt (no prompt event, no mark): there the next
        // command would wait for a prompt that never comes, its whole wait, and is typed
        // after the Ctrl-C as it is.
        let fish = fish_of(t).is_some();
        let mut st = t.state();
        let fresh_prompt = st.continuation || (st.at_prompt && st.executing().is_none());
        if fresh_prompt && !fish {
            st.line_entered = true;
            st.dropping_line = true;
        }
        st.continuation = false;
    }
    lifecycle::input(core, t, CTRL_C, None).await
}

/// Why a Ctrl-C now would be taken by the shell rather than by a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settling {
    /// No prompt yet: the shell is reading its rc files.
    Starting,
    /// A prompt has started and its end mark is still to come.
    DrawingPrompt,
}

fn shell_takes_ctrl_c(st: &TermState) -> Option<Settling> {
    if st.executing().is_some() {
        None
    } else if st.prompts == 0 {
        Some(Settling::Starting)
    } else if st.at_prompt && !st.prompt_drawn && st.prompt_end_missing == 0 {
        Some(Settling::DrawingPrompt)
    } else {
        None
    }
}

/// Whether the line held by `ticket`'s run was withdrawn (for its waits to end early).
pub fn withdrawn(st: &TermState, ticket: u64) -> bool {
    st.held
        .iter()
        .any(|h| h.ticket == ticket && h.stage == Stage::Withdrawn)
}
