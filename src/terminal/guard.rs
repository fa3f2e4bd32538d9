//! What the agent's keys may not do where they land: enter a line the policy never saw
//! through the shell's line editor, or a line longer than the line discipline keeps.

use super::protocol::{OpError, OpErrorKind};
use super::term::Terminal;

/// The longest line a terminal's line discipline takes while it collects lines (no line
/// editor reading the keys: dash, a shell still starting, `read`): Linux keeps 4096 bytes,
/// the line's end included, and drops the rest of a longer line without a word.
pub const CANONICAL_LINE_MAX: usize = 4095;

/// Refuse keys that would have the shell's line editor enter a line the policy never saw
/// (history recalled, the cursor moved, text yanked or completed before Enter: `unseen`,
/// judged by the service with what the agent left unentered), where they reach that editor:
/// at the shell's prompt, or while a program reads through the line discipline, whose unread
/// keys the editor takes once the prompt is back. A full-screen program or a REPL with a
/// line editor of its own takes them itself, and may.
pub(super) fn unseen_by_the_policy(t: &Terminal, unseen: bool) -> Result<(), OpError> {
    if !unseen || t.nonce_file.is_none() || t.prompt_only {
        return Ok(());
    }
    if !reaches_line_editor(t) {
        return Ok(());
    }
    Err(OpError::new(
        OpErrorKind::Invalid,
        format!(
            "these keys would reach the line editor of {} in terminal {} and recall history, \
             move the cursor, yank, complete or open the line in an editor before it runs, so the line it would run is one \
             the operator's policy never saw; nothing was typed: send the whole command line \
             as execution.command (a Ctrl-C first, as raw input, drops what was left typed)",
            t.shell, t.id
        ),
    ))
}

/// Whether keys typed now reach the shell's line editor: at its prompt, or through the line
/// discipline of a program reading lines (what it leaves unread, the editor takes once the
/// prompt is back). A program reading the terminal raw (a full-screen program, a REPL with
/// its own editor, `read -s -n1`) takes them itself.
pub(super) fn reaches_line_editor(t: &Terminal) -> bool {
    let at_prompt = {
        let st = t.state();
        st.at_prompt && st.executing().is_none()
    };
    at_prompt || t.pty.canonical()
}

/// Refuse text with a line the terminal's line discipline would cut: the program would get
/// (and a shell would run) the line's start alone.
pub(super) fn fits_the_line_discipline(t: &Terminal, text: &str) -> Result<(), OpError> {
    let longest = text.split(['\r', '\n']).map(str::len).max().unwrap_or(0);
    if longest <= CANONICAL_LINE_MAX || !t.pty.canonical() {
        return Ok(());
    }
    Err(OpError::new(
        OpErrorKind::Invalid,
        format!(
            "terminal {} reads lines through the kernel's line discipline (no line editor takes \
             the keys now), which keeps {CANONICAL_LINE_MAX} bytes of a line and drops the rest; \
             this text has a line of {longest} bytes, so nothing was typed: run it headless, \
             split it over lines, or write it to a file first",
            t.id
        ),
    ))
}
