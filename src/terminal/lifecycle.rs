//! The I/O edges of a terminal: reading the pty into the core, noticing the shell's exit,
//! writing input, resizing, and killing the whole session.

use std::sync::Arc;
use std::time::Duration;

use ahp_types::actions::{ActionOrigin, StateAction, TerminalInputAction, TerminalResizedAction};
use portable_pty::PtySize;

use super::core::Core;
use super::term::{ExitInfo, Terminal, lock};
use crate::process::{self, ChildExit};

/// Read size from the pty master.
const PTY_READ_SIZE: usize = 64 * 1024;

/// After the shell exits, how long to wait for the pty to drain before reporting the exit.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// How long kill waits for the exit to be recorded.
const KILL_SETTLE: Duration = Duration::from_secs(5);

/// Start the reader, the screen renderer and the exit watcher of a new terminal.
pub(super) fn start(core: &Arc<Core>, term: &Arc<Terminal>) {
    let (c, t) = (core.clone(), term.clone());
    tokio::spawn(async move {
        loop {
            let wake = t.vt_wake.notified();
            c.sync_screen(&t);
            if t.state().reader_done {
                c.sync_screen(&t);
                return;
            }
            wake.await;
        }
    });
    let (c, t) = (core.clone(), term.clone());
    tokio::spawn(async move {
        let mut buf = vec![0u8; PTY_READ_SIZE];
        loop {
            match t.io.read(&mut buf).await {
                Ok(0) => break,
                Ok(n) => c.ingest(&t, &buf[..n]),
                Err(e) => {
                    tracing::debug!(terminal = %t.id, error = %e, "pty read ended");
                    break;
                }
            }
        }
        t.state().reader_done = true;
        t.bump();
        t.vt_wake.notify_one();
    });
    let (c, t) = (core.clone(), term.clone());
    tokio::spawn(async move {
        let exit = t.supervised.wait().await;
        // Let the last output arrive before the exit is reported.
        let mut rx = t.subscribe();
        let _ = tokio::time::timeout(DRAIN_GRACE, async {
            while !t.state().reader_done {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
        let info = match exit {
            ChildExit::Code(code) => ExitInfo {
                exit_code: Some(i64::from(code)),
                signal: None,
            },
            ChildExit::Signal(sig) => ExitInfo {
                exit_code: None,
                signal: Some(process::signal_name(sig)),
            },
            ChildExit::Unknown => ExitInfo {
                exit_code: None,
                signal: None,
            },
        };
        c.on_exit(&t, info);
    });
}

/// Write keystrokes or text to the terminal, recorded as a `terminal/input` action.
pub async fn input(
    core: &Core,
    term: &Terminal,
    data: &str,
    origin: Option<ActionOrigin>,
) -> std::io::Result<()> {
    if !term.state().running() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "the terminal's process has exited",
        ));
    }
    let _serial = term.write_lock.lock().await;
    {
        let mut st = term.state();
        if term.prompt_only {
            track_typed(&mut st, data);
        }
        // A line entered at the prompt is on its way to the shell until its command starts
        // or the next prompt shows: nothing else may be typed as a command meanwhile.
        if st.at_prompt && st.executing().is_none() && data.contains(['\r', '\n']) {
            st.line_entered = true;
        }
    }
    core.dispatch(
        term,
        StateAction::TerminalInput(TerminalInputAction {
            data: data.to_string(),
        }),
        origin,
    );
    term.io.write_all(data.as_bytes()).await
}

/// A prompt-only shell reports no command line: keep what is typed at its prompt, so the
/// line entered becomes the command the core marks executed when its echo arrives.
fn track_typed(st: &mut super::term::TermState, data: &str) {
    if !st.at_prompt || st.echo_pending.is_some() {
        return;
    }
    for c in data.chars() {
        match c {
            '\r' | '\n' => {
                // An empty line runs nothing (the next prompt would repeat the last status).
                let line = std::mem::take(&mut st.typed);
                if !line.trim().is_empty() {
                    st.echo_pending = Some(line);
                }
                return;
            }
            '\x7f' | '\x08' => {
                st.typed.pop();
            }
            // Ctrl-C and Ctrl-U drop the line.
            '\x03' | '\x15' => st.typed.clear(),
            c if c.is_control() => {}
            c => st.typed.push(c),
        }
    }
}

/// Resize the pty (programs get SIGWINCH) and the rendered screen.
pub fn resize(core: &Core, term: &Terminal, cols: u16, rows: u16, origin: Option<ActionOrigin>) {
    let size = PtySize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
    };
    if let Err(e) = lock(&term.master).resize(size) {
        tracing::warn!(terminal = %term.id, error = %e, "resize failed");
    }
    // Earlier output was drawn at the old size: render it first, then resize.
    core.sync_screen(term);
    lock(&term.vt)
        .parser
        .screen_mut()
        .set_size(super::term::dim(rows), super::term::dim(cols));
    core.dispatch(
        term,
        StateAction::TerminalResized(TerminalResizedAction {
            cols: i64::from(cols),
            rows: i64::from(rows),
        }),
        origin,
    );
}

/// Kill the terminal's whole session and every descendant; returns the pids killed.
pub async fn kill(core: &Core, term: &Terminal) -> Vec<i32> {
    let killed = term.supervised.kill().await;
    let mut rx = term.subscribe();
    let settled = tokio::time::timeout(KILL_SETTLE, async {
        while term.state().running() {
            if rx.changed().await.is_err() {
                break;
            }
        }
    })
    .await;
    if settled.is_err() {
        // Nothing reported the exit: record it ourselves.
        core.on_exit(
            term,
            ExitInfo {
                exit_code: None,
                signal: Some("SIGKILL".into()),
            },
        );
    }
    killed
}
