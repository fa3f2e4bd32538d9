//! Reading a terminal: its summary, its screen, and a slice of its output stream in the view
//! asked for.

use std::sync::Arc;

use ahp_types::state::TerminalLifecycleState;

use super::core::Core;
use super::protocol::{
    Chunk, DEFAULT_MAX_BYTES, OpError, OpErrorKind, OutputSpec, Ran, ScreenView, TermSummary, View,
};
use super::term::{Terminal, strip_escapes};

pub fn find(core: &Core, id: &str) -> Result<Arc<Terminal>, OpError> {
    core.get(id)
        .ok_or_else(|| OpError::new(OpErrorKind::NotFound, format!("no terminal with id {id:?}")))
}

pub fn summary(t: &Terminal) -> TermSummary {
    let st = t.state();
    let (exit_code, signal) = match (&st.exit, &st.state.lifecycle) {
        (Some(e), _) => (e.exit_code, e.signal.clone()),
        (None, TerminalLifecycleState::Exited(x)) => (x.exit_code, None),
        _ => (None, None),
    };
    TermSummary {
        terminal_id: t.id.clone(),
        resource: t.uri.clone(),
        title: st.state.title.clone(),
        shell: t.shell.clone(),
        cwd: st.state.cwd.as_deref().map(super::file_uri::file_uri_path),
        running: st.running(),
        exit_code,
        signal,
        claim: serde_json::to_value(&st.state.claim).unwrap_or_default(),
        supports_command_detection: st.detection,
        shell_integration: st.integration(t.prompt_only),
        executing: st.executing().map(|c| c.command_line.clone()),
        output_bytes: st.spool.len(),
        age_ms: t.created.elapsed().as_millis() as u64,
        started_at_ms: crate::clock::unix_ms(t.created_at),
        workspace_id: t.workspace_id.clone(),
        background_jobs: Vec::new(),
    }
}

pub fn screen(core: &Core, t: &Terminal) -> ScreenView {
    core.sync_screen(t);
    let mut vt = super::term::lock(&t.vt);
    let s = vt.parser().screen();
    let (rows, cols) = s.size();
    let (cursor_row, cursor_col) = s.cursor_position();
    ScreenView {
        rows: rows.get(),
        cols: cols.get(),
        cursor_row,
        cursor_col,
        alternate_screen: s.alternate_screen(),
        cursor_hidden: s.hide_cursor(),
        // One text row per screen row (a wrapped line stays on its rows), so the cursor's
        // row indexes the text.
        text: trimmed(&s.rows(0, cols.get()).collect::<Vec<_>>().join("\n")),
    }
}

/// A screen's text as a model reads it: no blanks at the ends of rows (full-screen programs
/// paint whole rows with spaces), no empty rows after the last that holds something. Rows
/// keep their places: the first line is the top row.
fn trimmed(contents: &str) -> String {
    let mut rows: Vec<&str> = contents.split('\n').map(str::trim_end).collect();
    while rows.last().is_some_and(|r| r.is_empty()) {
        rows.pop();
    }
    rows.join("\n")
}

/// The stream from `from` (or the last delivered offset) in the requested view; never
/// stops inside a UTF-8 character.
pub fn chunk(
    t: &Terminal,
    from: Option<u64>,
    until: Option<u64>,
    spec: &OutputSpec,
) -> Result<Chunk, OpError> {
    let max = spec.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
    let mut st = t.state();
    let from = from.or(spec.cursor).unwrap_or(st.delivered);
    let end_limit = until.unwrap_or(u64::MAX).min(st.spool.len());
    let io =
        |e: std::io::Error| OpError::new(OpErrorKind::Internal, format!("reading output: {e}"));
    // What the server did not keep of what this read covers.
    let dropped = st
        .spool
        .dropped()
        .filter(|d| from < d.to)
        .map(|d| crate::contract::result::Dropped::of(&d));
    let render = |bytes: Vec<u8>| match spec.view {
        View::Raw => crate::spool::into_text(bytes).0,
        _ => strip_escapes(&bytes),
    };
    if let Some(budget) = spec.excerpt.filter(|_| !spec.tail) {
        let e = st
            .spool
            .read_excerpt(from, end_limit, budget, true)
            .map_err(io)?;
        let total = st.spool.len();
        let delivered_before = st.delivered;
        st.delivered = st.delivered.max(e.end());
        drop(st);
        let gap = e.gap();
        let (start, end) = (e.head.start, e.end());
        return Ok(Chunk {
            text: render(e.head.bytes),
            view: if spec.view == View::Raw {
                View::Raw
            } else {
                View::Text
            },
            start,
            end,
            total,
            omitted_before: 0,
            omitted_after: end_limit.saturating_sub(end),
            delivered_before: Some(delivered_before),
            gap,
            tail: e.tail.map(|t| render(t.bytes)),
            dropped,
        });
    }
    // The spool holds whole characters only (the scanner carries a split one over), so what
    // is in it is final: nothing there waits for the rest of a character.
    let mut slice = st.spool.read_text(from, max, spec.tail, true).map_err(io)?;
    if slice.end > end_limit && end_limit >= slice.start {
        // A tail read ends at the stream's end; `until` (a command's end, a character
        // boundary) cuts it back.
        let cut = (slice.end - end_limit) as usize;
        slice.bytes.truncate(slice.bytes.len() - cut);
        slice.end = end_limit;
    }
    let total = st.spool.len();
    let delivered_before = st.delivered;
    st.delivered = st.delivered.max(slice.end);
    drop(st);
    let text = match spec.view {
        View::Raw => crate::spool::into_text(slice.bytes).0,
        _ => strip_escapes(&slice.bytes),
    };
    Ok(Chunk {
        text,
        view: if spec.view == View::Raw {
            View::Raw
        } else {
            View::Text
        },
        start: slice.start,
        end: slice.end,
        total,
        omitted_before: slice.omitted_before,
        omitted_after: end_limit.saturating_sub(slice.end),
        delivered_before: Some(delivered_before),
        gap: None,
        tail: None,
        dropped,
    })
}

/// The answer of a command or keystrokes: the terminal's summary and the output they made.
pub fn ran(t: &Terminal, output: Chunk, running: bool) -> Ran {
    Ran {
        terminal: summary(t),
        output,
        command: None,
        running,
        note: None,
        waiting_for_input: None,
        screen: None,
        reached_line_editor: None,
    }
}

/// The screen, when a full-screen program holds the terminal (the alternate screen is on)
/// and `spec` is a default read: the escape-stripped bytes such a program draws with are
/// cursor moves and padding, not text a model can read, while its screen is.
pub fn full_screen(core: &Core, t: &Terminal, spec: &OutputSpec) -> Option<ScreenView> {
    let default = spec.view == View::Text && spec.excerpt.is_some() && spec.cursor.is_none();
    if !default {
        return None;
    }
    // Asked on every interactive answer: the whole screen's text is built only for a
    // full-screen program (building it for a REPL's `1+1` was 6 % of the round trip).
    core.sync_screen(t);
    if !super::term::lock(&t.vt)
        .parser()
        .screen()
        .alternate_screen()
    {
        return None;
    }
    Some(screen(core, t))
}

/// The line a program waiting for input prompts on: the cursor's row of the screen, up to
/// the cursor (`>>> `, `Password: `, `Continue? `); empty for a full-screen program (its
/// screen is the prompt).
pub fn prompt_line(core: &Core, t: &Terminal) -> String {
    core.sync_screen(t);
    let mut vt = super::term::lock(&t.vt);
    let s = vt.parser().screen();
    if s.alternate_screen() {
        return String::new();
    }
    let (row, col) = s.cursor_position();
    let (_, cols) = s.size();
    let line = s.contents_between(row, 0, row, col.min(cols.get()));
    line.chars()
        .rev()
        .take(200)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect()
}
