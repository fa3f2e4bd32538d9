//! What a terminal operation's answer becomes in the contract: the canonical result, its
//! output within the answer's budget, and a full-screen program's screen in place of the
//! bytes that drew it.

use base64::Engine;

use crate::adapters::ops::{Chunk, OutputSpec, Shown, TermResponse, TermSummary};
use crate::contract::result::{Cursors, LeftOut, StreamInfo, Streams, TerminalOutput};
use crate::contract::{Encoding, Request, View};
use crate::text::views::ScreenView;

/// What to read of a terminal's stream: exactly what the request names, or, for a default
/// answer, an excerpt within `budget` bytes.
pub(super) fn output_spec(req: &Request, budget: usize) -> OutputSpec {
    OutputSpec {
        view: req.output.view.unwrap_or_default(),
        max_bytes: req.output.max_bytes,
        tail: req.output.tail.unwrap_or(false),
        cursor: req.output.cursor,
        excerpt: super::output::default_read(&req.output).then_some(budget),
    }
}

/// The terminal's state as every answer about it carries it: running, how it ended, what
/// its shell integration can tell.
fn terminal_state(t: &TermSummary, running: bool) -> TerminalOutput {
    TerminalOutput {
        running,
        exit_code: (!t.running).then_some(t.exit_code).flatten(),
        signal: (!t.running).then(|| t.signal.clone()),
        supports_command_detection: Some(t.supports_command_detection),
        shell_integration: Some(t.shell_integration.as_str().to_string()),
        ..TerminalOutput::default()
    }
}

/// A piece of the stream: its text in the requested encoding, its cursor and what was left
/// out. A chunk is raw or text (`view::chunk` never answers another view).
fn with_chunk(mut out: TerminalOutput, o: &Chunk, encoding: Encoding) -> TerminalOutput {
    let truncated = o.omitted_after > 0 || o.omitted_before > 0;
    let text = match (&o.tail, o.gap) {
        (Some(tail), Some((from, to))) => format!(
            "{}{}{tail}",
            o.text,
            super::output::left_out_line("cursor", from, to)
        ),
        (Some(tail), None) => format!("{}{tail}", o.text),
        _ => o.text.clone(),
    };
    out.output = Some(match encoding {
        Encoding::Utf8 => text,
        Encoding::Base64 => base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
    });
    out.encoding = (encoding == Encoding::Base64).then_some(encoding);
    // The default view goes unsaid: every byte of an answer is read by a model.
    out.view = (o.view != View::Text).then_some(o.view);
    out.cursor = Some(Cursors {
        output: Some(o.end),
        ..Cursors::default()
    });
    out.streams = Some(Streams {
        output: Some(StreamInfo {
            start: o.start,
            end: o.end,
            total: o.total,
            truncated,
            bytes_omitted: o.omitted_after + o.omitted_before,
            lossy: false,
            left_out: o.gap.map(|(from, to)| LeftOut { from, to }),
            dropped: o.dropped.clone(),
        }),
        ..Streams::default()
    });
    out.truncated = truncated.then_some(true);
    out
}

/// An answer over bytes the server did not keep says so in its note.
fn with_dropped_note(mut out: TerminalOutput) -> TerminalOutput {
    let dropped = out
        .streams
        .as_ref()
        .and_then(|s| s.output.as_ref())
        .and_then(|o| o.dropped.as_ref())
        .map(crate::contract::result::Dropped::note);
    if let Some(d) = dropped {
        out.note = Some(match out.note.take() {
            Some(n) => format!("{n}; {d}"),
            None => d,
        });
    }
    out
}

/// A full-screen program's answer shows its screen in place of the bytes that drew it
/// (cursor moves and padding once escapes are stripped), and says where those bytes are.
fn shown_as_screen(mut out: TerminalOutput, screen: Option<&ScreenView>) -> TerminalOutput {
    let Some(screen) = screen else {
        return out;
    };
    let drawn = out
        .streams
        .as_ref()
        .and_then(|s| s.output.as_ref())
        .map(|o| (o.start, o.end));
    let mut note = String::from("a full-screen program holds the terminal: its screen is shown");
    if let Some((from, to)) = drawn.filter(|(a, b)| b > a) {
        note.push_str(&format!(
            "; the {} bytes that drew it are read with output.cursor={from}, output.view=raw",
            to - from
        ));
    }
    out.note = Some(match out.note.take() {
        Some(n) => format!("{n}; {note}"),
        None => note,
    });
    out.output = None;
    out.view = Some(View::Screen);
    out.screen = Some(screen.clone());
    out
}

/// The contract's result for a terminal operation's answer.
pub(super) fn terminal_output(r: &TermResponse, encoding: Encoding) -> TerminalOutput {
    with_dropped_note(answer(r, encoding))
}

fn answer(r: &TermResponse, encoding: Encoding) -> TerminalOutput {
    match r {
        TermResponse::Ran(r) => {
            let mut out = with_chunk(terminal_state(&r.terminal, r.running), &r.output, encoding);
            if let Some(c) = &r.command {
                out.exit_code = c.exit_code;
                out.command = Some(c.clone());
                out.duration_ms = c.duration_ms.map(|d| d.max(0));
            }
            out.note = r.note.clone();
            out.reached_line_editor = r.reached_line_editor;
            if let Some(prompt) = &r.waiting_for_input {
                out.waiting_for_input = true;
                out.prompt = Some(prompt.clone());
            }
            shown_as_screen(out, r.screen.as_ref())
        }
        TermResponse::Read(r) => {
            let mut out = terminal_state(&r.terminal, r.running);
            if let Some(prompt) = &r.waiting_for_input {
                out.waiting_for_input = true;
                out.prompt = Some(prompt.clone());
            }
            match &r.shown {
                Shown::Output(o) => {
                    shown_as_screen(with_chunk(out, o, encoding), r.screen.as_ref())
                }
                Shown::Screen(s) => TerminalOutput {
                    view: Some(View::Screen),
                    screen: Some(s.clone()),
                    ..out
                },
                Shown::Commands { commands } => TerminalOutput {
                    view: Some(View::Commands),
                    commands: Some(commands.clone()),
                    ..out
                },
            }
        }
        TermResponse::Attached(r) => TerminalOutput {
            view: Some(View::Screen),
            screen: Some(r.screen.clone()),
            commands: Some(r.commands.clone()),
            ..terminal_state(&r.terminal, r.running)
        },
        TermResponse::Killed(k) => {
            let mut out = match &k.terminal {
                Some(t) => terminal_state(t, false),
                None => TerminalOutput::default(),
            };
            out.running = false;
            out.terminated = Some(k.killed.clone());
            out.note = k.note.clone();
            out
        }
        TermResponse::List { .. }
        | TermResponse::Rewound { .. }
        | TermResponse::Interrupted { .. } => TerminalOutput::default(),
    }
}
