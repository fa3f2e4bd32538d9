//! The I/O edges of a terminal: reading the pty into the core, noticing the shell's exit,
//! writing input, resizing, and killing the whole session.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ahp_types::actions::{ActionOrigin, StateAction, TerminalInputAction, TerminalResizedAction};
use portable_pty::PtySize;

use super::core::Core;
use super::term::{ExitInfo, Terminal, lock};
use crate::process::{self, Selector, reaper};

/// Read size from the pty master.
const PTY_READ_SIZE: usize = 64 * 1024;

/// After the shell exits, how long to wait for the pty to drain before reporting the exit.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// How often exit watchers look even without SIGCHLD.
const EXIT_POLL: Duration = Duration::from_secs(1);

/// How long kill waits for the exit to be recorded.
const KILL_SETTLE: Duration = Duration::from_secs(5);

/// Wake every exit watcher on SIGCHLD.
pub(super) fn watch_children(core: &Arc<Core>) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let weak = Arc::downgrade(core);
    handle.spawn(async move {
        let Ok(mut sig) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())
        else {
            return;
        };
        while sig.recv().await.is_some() {
            match weak.upgrade() {
                Some(core) => core.child_events.send_modify(|v| *v = v.wrapping_add(1)),
                None => return,
            }
        }
    });
}

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
        let mut events = c.child_events.subscribe();
        let status = loop {
            let polled = lock(&t.child).try_wait();
            match polled {
                Ok(Some(s)) => break Some(s),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(terminal = %t.id, error = %e, "cannot wait for the shell");
                    break None;
                }
            }
            let _ = tokio::time::timeout(EXIT_POLL, events.changed()).await;
        };
        t.reaped.store(true, Ordering::SeqCst);
        reaper::unregister(t.pid);
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
        let info = match status {
            Some(s) => match s.signal() {
                Some(sig) => ExitInfo {
                    exit_code: None,
                    signal: Some(process::signal_name_from_description(sig)),
                },
                None => ExitInfo {
                    exit_code: Some(i64::from(s.exit_code())),
                    signal: None,
                },
            },
            None => ExitInfo {
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
    let sel = if term.reaped.load(Ordering::SeqCst) {
        Selector {
            marker: Some(term.id.clone()),
            ..Selector::default()
        }
    } else {
        Selector {
            root: Some(term.pid),
            session: Some(term.pid),
            marker: Some(term.id.clone()),
            ..Selector::default()
        }
    };
    let killed = tokio::task::spawn_blocking(move || process::kill_tree(&sel))
        .await
        .unwrap_or_default();
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
        // Nothing reported the exit (no SIGCHLD seen): record it ourselves.
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
