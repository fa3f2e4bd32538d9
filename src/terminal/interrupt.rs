//! A terminal command past its timeout: Ctrl-C, as a person would type it, so the shell and
//! the terminal survive; then, for a command that did not stop at it, signals to its process
//! group. A command can turn the key off (`stty raw`, `-isig`: the terminal no longer turns
//! Ctrl-C into SIGINT) or ignore SIGINT, and a timeout the command can switch off is no
//! limit: the answer would say "interrupted" while it ran on and held the terminal.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::core::Core;
use super::held;
use super::pty::{Signalled, Stop};
use super::submission;
use super::term::Terminal;
use super::waits::wait_for;

/// After Ctrl-C on a timeout, how long to wait for the command to wind down.
const INTERRUPT_SETTLE: Duration = Duration::from_secs(2);

/// After each signal to a command that Ctrl-C did not stop, how long it has to end: SIGINT
/// (for a terminal whose Ctrl-C was turned off), then SIGTERM, then SIGKILL.
const SIGNAL_STEPS: [(Stop, Duration); 3] = [
    (Stop::Interrupt, Duration::from_millis(500)),
    (Stop::Terminate, Duration::from_millis(1_000)),
    (Stop::Kill, Duration::from_millis(1_000)),
];

/// How a command past its timeout was stopped, as the answer tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupted {
    /// Ctrl-C ended it (or it ended meanwhile).
    CtrlC,
    /// It did not stop at Ctrl-C; this signal to its process group ended it.
    Signal(Stop),
    /// It runs on: the signals could not reach it (a loop of the shell's own, which only
    /// SIGINT is sent to, or a terminal whose foreground the kernel does not say).
    Running,
}

impl Interrupted {
    /// The end of the timeout's message: what stopped the command, or what to do.
    pub fn told(self, terminal: &str) -> String {
        match self {
            Interrupted::CtrlC => "it was interrupted with Ctrl-C".to_string(),
            Interrupted::Signal(stop) => format!(
                "Ctrl-C did not stop it (the terminal's Ctrl-C was turned off, or the program \
                 ignores it), so its process group was sent {}, which ended it",
                stop.name()
            ),
            Interrupted::Running => format!(
                "Ctrl-C did not stop it and it still runs, holding terminal {terminal}; end it \
                 with action terminate on that terminal"
            ),
        }
    }
}

/// The command ran past its timeout: Ctrl-C, once a line typed a moment ago has started
/// (or the line editor takes the key and drops the line instead), then a moment for it to
/// end, then signals to its process group.
pub async fn now(core: &Arc<Core>, t: &Arc<Terminal>, base: u64) -> Interrupted {
    tracing::info!(terminal = %t.id, "timeout: interrupting the command");
    wait_for(t, Instant::now() + INTERRUPT_SETTLE, |st| {
        !st.line_entered || !submission::none_running(st, base) || !st.running()
    })
    .await;
    let _ = held::ctrl_c(core, t).await;
    if ended_by(t, base, Instant::now() + INTERRUPT_SETTLE).await {
        return Interrupted::CtrlC;
    }
    signal(t, base).await
}

/// The call answered before the command's hard timeout: interrupt it when the timeout
/// comes, if it is still the command running then.
pub fn at(core: &Arc<Core>, t: &Arc<Terminal>, base: u64, at: Instant) {
    let (core, t) = (core.clone(), t.clone());
    tokio::spawn(async move {
        if ended_by(&t, base, at).await {
            return;
        }
        tracing::info!(terminal = %t.id, "timeout: interrupting the command");
        let _ = held::ctrl_c(&core, &t).await;
        if !ended_by(&t, base, Instant::now() + INTERRUPT_SETTLE).await {
            let how = signal(&t, base).await;
            tracing::info!(terminal = %t.id, ?how, "timeout: after Ctrl-C");
        }
    });
}

/// Whether the commands of the line typed after `base` have ended (or the terminal has) by
/// `by`.
async fn ended_by(t: &Terminal, base: u64, by: Instant) -> bool {
    wait_for(t, by, |st| {
        submission::none_running(st, base) || !st.running()
    })
    .await
}

/// Signal the terminal's foreground process group, step by step, until the command ends.
async fn signal(t: &Terminal, base: u64) -> Interrupted {
    for (stop, grace) in SIGNAL_STEPS {
        match t.pty.signal_foreground(stop) {
            Signalled::Sent => {
                tracing::info!(terminal = %t.id, signal = stop.name(), "timeout: signalled the foreground");
                if ended_by(t, base, Instant::now() + grace).await {
                    return Interrupted::Signal(stop);
                }
            }
            // The shell itself is the foreground (a loop of its own): only SIGINT goes to
            // it, which it takes as Ctrl-C; ending it would end the terminal.
            Signalled::ShellItself => {}
            Signalled::Unknown => return Interrupted::Running,
        }
    }
    Interrupted::Running
}
