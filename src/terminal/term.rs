//! One terminal: its pty, its AHP `TerminalState` (changed only through the ahp reducer, in
//! `core`), the raw stream by absolute offset, a rendered screen, and its detected commands.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::{Instant, SystemTime};

use ahp_types::state::TerminalState;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::osc::Scanner;
use super::pty::Pty;
use crate::spool::{Spool, incomplete_utf8_tail};

/// Lines that scrolled off the top of the screen kept in the screen model, for the page's
/// scrollback (memory is taken only as lines scroll off), at most: fewer on a wide terminal
/// (`scrollback_lines`).
pub const SCREEN_SCROLLBACK_LINES: usize = 500;

/// Cells of scrollback a screen model keeps (each cell is 32 bytes): 500 lines at up to 200
/// columns, fewer on a wider terminal. A line scrolled off keeps its width, so without a
/// bound in cells one request for a 1000-column terminal held 500,000 cells of scrollback
/// (16 MB, more with its allocations), and 64 such terminals took gigabytes.
pub const SCROLLBACK_CELLS: usize = 100_000;

/// Most columns or rows of a terminal (the request schema's bound, and AHP clients').
pub const MAX_DIMENSION: u16 = 1000;

/// Most cells on a terminal's screen: its columns times its rows (250 × 400, 1000 × 100).
/// The screen model holds every cell of it, so the product is what costs memory.
pub const MAX_SCREEN_CELLS: u32 = 100_000;

/// Why a terminal of `cols` × `rows` is not made or resized, naming the limit it meets.
pub fn size_refusal(cols: u16, rows: u16) -> Option<String> {
    if !(1..=MAX_DIMENSION).contains(&cols) || !(1..=MAX_DIMENSION).contains(&rows) {
        return Some(format!(
            "a terminal of {cols} columns × {rows} rows: columns and rows must be 1..={MAX_DIMENSION}"
        ));
    }
    let cells = u32::from(cols) * u32::from(rows);
    (cells > MAX_SCREEN_CELLS).then(|| {
        format!(
            "a terminal of {cols} columns × {rows} rows is {cells} cells; a terminal has at most \
             {MAX_SCREEN_CELLS} (for example 250 × 400 or 1000 × 100): ask for fewer rows or columns"
        )
    })
}

/// Lines of scrollback for a screen `cols` wide: [`SCREEN_SCROLLBACK_LINES`], or fewer so
/// that they hold at most [`SCROLLBACK_CELLS`].
pub fn scrollback_lines(cols: u16) -> usize {
    SCREEN_SCROLLBACK_LINES.min(SCROLLBACK_CELLS / usize::from(cols.max(1)))
}

/// Detected commands remembered per terminal (oldest forgotten first).
pub const MAX_COMMAND_RECORDS: usize = 1000;

pub use crate::text::views::CommandRecord;

/// A line typed at the prompt by this server, and where the stream stood then.
#[derive(Debug, Clone, PartialEq)]
pub struct Submitted {
    pub line: String,
    pub at: u64,
    /// The exit status a D reported after the line was typed, while no command had started.
    pub status: Option<Option<i32>>,
}

/// How much of the shell integration works in a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntegrationLevel {
    /// Commands are detected as they start and finish, with exit codes and command lines.
    Full,
    /// Prompts are seen (and exit codes where the shell reports them), but a command's start
    /// is inferred from the typed line or the prompt coming back.
    PromptOnly,
    /// Nothing is detected: output is returned once it goes quiet.
    None,
}

impl IntegrationLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            IntegrationLevel::Full => "full",
            IntegrationLevel::PromptOnly => "prompt_only",
            IntegrationLevel::None => "none",
        }
    }
}

/// How the terminal's process ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ExitInfo {
    pub exit_code: Option<i64>,
    pub signal: Option<String>,
}

/// A vt100 screen and how much of the stream it has seen. The parser (a grid of cells for
/// the screen, another for the alternate screen) is made the first time the screen is
/// rendered: an idle terminal nobody looks at holds none.
pub struct Screen {
    parser: Option<vt100::Parser>,
    /// What the parser does not draw by itself (see `emulate`).
    front: super::emulate::Front,
    rows: u16,
    cols: u16,
    pub pos: u64,
}

impl Screen {
    pub fn new(rows: u16, cols: u16) -> Screen {
        Screen {
            parser: None,
            front: super::emulate::Front::default(),
            rows,
            cols,
            pos: 0,
        }
    }

    /// The parser, made at the current size if there is none yet.
    pub fn parser(&mut self) -> &mut vt100::Parser {
        let (rows, cols) = (self.rows, self.cols);
        self.parser
            .get_or_insert_with(|| vt100::Parser::new(dim(rows), dim(cols), scrollback_lines(cols)))
    }

    /// Draw what the program printed.
    pub fn process(&mut self, bytes: &[u8]) {
        self.parser();
        if let Some(p) = self.parser.as_mut() {
            self.front.process(p, bytes);
        }
    }

    /// New size: output rendered from now on is drawn at it.
    ///
    /// Lines that scroll off from now on are `cols` wide. When that would put the scrollback
    /// over twice [`SCROLLBACK_CELLS`] (a terminal widened far past the width it was made
    /// at), the model is made again with fewer lines of scrollback, from what the screen
    /// shows (its cells, attributes, cursor and input modes): the lines scrolled off before
    /// are dropped from the model (the transcript keeps every byte).
    pub fn set_size(&mut self, rows: u16, cols: u16) {
        (self.rows, self.cols) = (rows, cols);
        let Some(p) = self.parser.as_mut() else {
            return;
        };
        if p.screen().scrollback_capacity() * usize::from(cols) > 2 * SCROLLBACK_CELLS {
            let (old_rows, old_cols) = p.screen().size();
            let mut again = vt100::Parser::new(old_rows, old_cols, scrollback_lines(cols));
            again.process(p.screen().state_formatted().as_bytes());
            again.screen_mut().set_size(dim(rows), dim(cols));
            *p = again;
        } else {
            p.screen_mut().set_size(dim(rows), dim(cols));
        }
    }
}

/// Where a command line a run holds until the shell is ready is (`held`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Waiting for the shell: not typed.
    Waiting,
    /// Its call was cancelled while it waited: it is never typed.
    Withdrawn,
    /// Being typed; `interrupt` once typed, if its call was cancelled meanwhile.
    Typing { interrupt: bool },
}

/// A command line a `run` holds until it types it; `call` is the tool call it belongs to.
#[derive(Debug)]
pub struct HeldRun {
    pub(super) ticket: u64,
    pub(super) call: Option<String>,
    pub(super) stage: Stage,
}

/// The kernel's answer, and the output it holds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLook {
    /// What the reader had taken from the pty when the kernel was asked
    /// (`TermState::taken_in`).
    pub taken: u64,
    pub waiting: super::pty::InputWait,
    pub at: std::time::Instant,
}

/// Mutable state of a terminal, behind one lock.
pub struct TermState {
    /// AHP state: changed only by `ahp::reducers::apply_action_to_terminal` (and trimming).
    pub state: TerminalState,
    /// The stream after integration sequences are stripped, every byte by offset.
    pub spool: Spool,
    pub scanner: Scanner,
    pub utf8_carry: Vec<u8>,
    pub commands: VecDeque<CommandRecord>,
    /// A command line (E) reported before its command started (zsh, fish, dash).
    pub pending_line: Option<String>,
    pub command_started: Option<Instant>,
    pub detection: bool,
    /// Prompts seen (a prompt start, or a prompt end without a start before it): the shell
    /// is ready for input after the first.
    pub prompts: u64,
    pub at_prompt: bool,
    /// The current prompt's end (B) was seen: it is drawn and input goes after it.
    pub prompt_drawn: bool,
    /// A line was entered at the prompt and has neither started a command nor brought the
    /// next prompt yet.
    pub line_entered: bool,
    /// The shell's continuation prompt is the last thing it drew: it holds part of a command
    /// line (an open quote, here-document or block) and reads the rest from the keyboard.
    pub continuation: bool,
    /// Continuation prompts drawn. A shell without a line editor (dash) reads typed text a
    /// line at a time and draws a prompt, first or continuation, before each line it reads:
    /// with `prompts` this says how much of a script it has taken.
    pub continuations: u64,
    /// This server's Ctrl-C went to a prompt or a continuation, and the fresh prompt it
    /// brings has not come yet: a continuation prompt redrawn meanwhile (a theme's clock) is
    /// the dropped line's, not a new one.
    pub dropping_line: bool,
    /// Prompt starts (A) come in this terminal: ends (B) then never count as new prompts.
    pub prompt_started: bool,
    /// Commands that started at a prompt whose end mark never came (a theme dropped it).
    pub prompt_end_missing: u64,
    /// The first wait for a prompt is over: a shell that showed no integration mark by then
    /// is treated as having none (its set-up broke it), not waited for again.
    pub first_wait_done: bool,
    /// A line this server typed at the prompt, not yet matched to a started command.
    pub submitted: Option<Submitted>,
    /// The command count when each command line a call typed went in, oldest first (at most
    /// [`MAX_COMMAND_RECORDS`]): a call's commands are those after its own count and up to
    /// the next call's, never another call's command that ran before its answer was made.
    pub typed_bases: VecDeque<u64>,
    /// The last command's `commandExecuted` is held back until its command line (E, which
    /// bash reports just after C) arrives, or anything else does.
    pub unannounced: bool,
    /// The typed line behind the unannounced command, to weigh against its E when it comes.
    pub typed_for_unannounced: Option<Submitted>,
    /// A command started (C) was seen at least once: the integration detects commands.
    pub saw_executed: bool,
    /// Commands recorded only when the prompt came back, because no C was seen for them.
    pub late_records: u64,
    /// A command finished with the exit status the shell reported (D) at least once.
    pub saw_finished: bool,
    /// Commands that ended only because the prompt came back (no D: no exit status).
    pub finished_unknown: u64,
    /// The script said it could not install all of itself (read-only prompt variables).
    pub installed_partially: bool,
    /// The script said the user's rc files have run (`ready` tells a question they stopped
    /// at from a slow prompt by it).
    pub rc_done: bool,
    pub exit: Option<ExitInfo>,
    pub reader_done: bool,
    /// Bytes of text in `state.content`, for the scrollback bound.
    pub content_bytes: usize,
    /// Where the last answer of `read_output` ended.
    pub delivered: u64,
    /// The AHP client that holds a session claim on this terminal, if it came from one.
    pub holder_client: Option<String>,
    pub next_command: u64,
    /// Prompt-only shells: the line typed at the prompt so far.
    pub typed: String,
    /// Prompt-only shells: a line entered at the prompt, executed when its echo ends.
    pub echo_pending: Option<String>,
    /// Command lines runs hold until the shell is ready (`held`).
    pub held: Vec<HeldRun>,
    /// The first command typed waited for the line editor's bracketed paste (`drive`).
    pub paste_awaited: bool,
    /// The line editor has asked for bracketed paste before: it turns it off while a command
    /// runs and on again with its next prompt, a moment after the prompt's end mark.
    pub paste_seen: bool,
    /// The reader's last look at whether the program waits for input (`looks`).
    pub input_look: Option<InputLook>,
    /// Bytes the reader has taken from the pty, counted before they go in: a look holds
    /// while this has not moved (integration marks move it without adding output).
    pub taken_in: u64,
}

impl TermState {
    pub fn executing(&self) -> Option<&CommandRecord> {
        self.commands.back().filter(|c| !c.complete)
    }

    /// What the integration has shown it can do so far (`prompt_only_kind`: the shell has
    /// no pre-command hook at all, so its commands are always inferred).
    pub fn integration(&self, prompt_only_kind: bool) -> IntegrationLevel {
        let partial = prompt_only_kind
            || self.installed_partially
            || (!self.saw_executed && self.late_records > 0)
            || (!self.saw_finished && self.finished_unknown > 0);
        if !self.detection {
            IntegrationLevel::None
        } else if partial {
            IntegrationLevel::PromptOnly
        } else {
            IntegrationLevel::Full
        }
    }

    pub fn running(&self) -> bool {
        self.exit.is_none()
    }
}

pub struct Terminal {
    pub id: String,
    pub uri: String,
    pub shell: String,
    pub cwd: String,
    pub workspace_id: Option<String>,
    pub created_at: SystemTime,
    pub created: Instant,
    /// The shell's pid.
    pub pid: i32,
    /// The terminal's device: its output, input and size, the shell's exit, and the kill
    /// of everything in the terminal.
    pub pty: Box<dyn Pty>,
    pub st: Mutex<TermState>,
    /// The rendered screen, caught up from the stream by whoever reads it.
    pub vt: Mutex<Screen>,
    pub changed: watch::Sender<u64>,
    /// Serialises writes to the pty: the agent's input, and the answers to the program's
    /// queries (shared, so the reader can hold it from the moment it finds a query until
    /// the answer is written, and input sent after that point comes after the answer).
    pub write_lock: std::sync::Arc<tokio::sync::Mutex<()>>,
    /// Held by a command line from the look at whether the terminal is free until it is
    /// typed: two calls at once into one terminal see each other (the second finds the
    /// first entered, and waits for it or is refused as busy) instead of both typing.
    pub entry_lock: tokio::sync::Mutex<()>,
    pub nonce_file: Option<PathBuf>,
    /// The shell reports prompts and exit codes but not when a command starts (dash).
    pub prompt_only: bool,
    /// Calls waiting on the reader's looks at whether the program waits for input
    /// (`looks::Watch`), and the nudge that has the reader look at once.
    pub input_watchers: std::sync::atomic::AtomicUsize,
    pub look_now: tokio::sync::Notify,
    /// Answers to queries on their way to the pty (`answers`): the program reading then
    /// waits for the terminal, not for a person.
    pub answers_in_flight: std::sync::atomic::AtomicUsize,
    /// Writes to the pty begun so far (input and answers), counted before each starts, and
    /// those finished, counted after: a look at whether the program waits holds only with
    /// none in progress and none begun while it looked (`looks`).
    pub writes: std::sync::atomic::AtomicU64,
    pub writes_done: std::sync::atomic::AtomicU64,
}

pub use crate::locks::lock;

/// A write to the pty in progress: counted in `Terminal::writes` when it begins, and in
/// `writes_done` when it ends — also when the write is given up half-way (its caller
/// cancelled), so the count never says a write is still under way when none is.
pub struct WriteInProgress<'a>(&'a Terminal);

impl Drop for WriteInProgress<'_> {
    fn drop(&mut self) {
        self.0
            .writes_done
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Terminal {
    /// Count a write to the pty as begun; it counts as done when the value is dropped.
    pub fn begin_write(&self) -> WriteInProgress<'_> {
        self.writes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        WriteInProgress(self)
    }

    pub fn state(&self) -> MutexGuard<'_, TermState> {
        lock(&self.st)
    }

    /// Whether the process runs; takes and releases the lock (safe inside expressions that
    /// lock again).
    pub fn is_running(&self) -> bool {
        self.state().running()
    }

    pub fn bump(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}

/// A screen dimension for vt100 (zero is treated as one).
pub fn dim(v: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(v).unwrap_or(std::num::NonZeroU16::MIN)
}

/// Decode `bytes` after `carry` as UTF-8. An incomplete character at the end waits in
/// `carry` for the next read; invalid bytes become U+FFFD.
/// Takes the bytes by value: on the pty's reading path they are a fresh buffer, which
/// becomes the text itself without another copy when no character was left waiting.
pub fn decode_utf8(carry: &mut Vec<u8>, bytes: Vec<u8>) -> String {
    let mut buf = if carry.is_empty() {
        bytes
    } else {
        let mut joined = std::mem::take(carry);
        joined.extend_from_slice(&bytes);
        joined
    };
    let keep = incomplete_utf8_tail(&buf);
    if keep > 0 {
        carry.extend_from_slice(&buf[buf.len() - keep..]);
        buf.truncate(buf.len() - keep);
    }
    crate::spool::into_text(buf).0
}

/// The stream as plain text, the way it reads on a terminal line by line: escape sequences
/// removed, a carriage return going back to the start of the line (so progress bars show
/// their last state), backspace and erase-to-end-of-line applied, trailing blanks trimmed.
pub fn strip_escapes(bytes: &[u8]) -> String {
    struct Text {
        out: String,
        line: Vec<char>,
        col: usize,
    }
    impl Text {
        /// End a line: complete lines lose trailing blanks; the last, unfinished line
        /// (a prompt waiting for input) keeps them, unless it is nothing but blanks.
        fn commit(&mut self, complete: bool) {
            let s: String = self.line.iter().collect();
            if complete {
                self.out.push_str(s.trim_end_matches(' '));
            } else if !s.trim().is_empty() {
                self.out.push_str(&s);
            }
            self.line.clear();
            self.col = 0;
        }
    }
    impl vte::Perform for Text {
        fn print(&mut self, c: char) {
            if self.col < self.line.len() {
                self.line[self.col] = c;
            } else {
                self.line.push(c);
            }
            self.col += 1;
        }
        fn execute(&mut self, byte: u8) {
            match byte {
                b'\n' => {
                    self.commit(true);
                    self.out.push('\n');
                }
                b'\r' => self.col = 0,
                b'\t' => self.print('\t'),
                0x08 => self.col = self.col.saturating_sub(1),
                _ => {}
            }
        }
        fn csi_dispatch(
            &mut self,
            params: &vte::Params,
            _intermediates: &[u8],
            _ignore: bool,
            action: char,
        ) {
            // Erase in line: 0 (default) to the end, 2 the whole line.
            if action == 'K' {
                let mode = params
                    .iter()
                    .next()
                    .and_then(|p| p.first().copied())
                    .unwrap_or(0);
                match mode {
                    0 => self.line.truncate(self.col),
                    2 => self.line.clear(),
                    _ => {}
                }
            }
        }
    }
    let mut t = Text {
        out: String::with_capacity(bytes.len()),
        line: Vec::new(),
        col: 0,
    };
    let mut p = vte::Parser::new();
    p.advance(&mut t, bytes);
    t.commit(false);
    t.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_carry_across_reads() {
        let mut carry = Vec::new();
        let euro = "€".as_bytes();
        assert_eq!(decode_utf8(&mut carry, vec![b'a', euro[0]]), "a");
        assert_eq!(carry.len(), 1);
        assert_eq!(decode_utf8(&mut carry, euro[1..].to_vec()), "€");
        assert!(carry.is_empty());
        assert_eq!(decode_utf8(&mut carry, vec![0xff, b'b']), "\u{fffd}b");
    }

    #[test]
    fn text_view_drops_escapes() {
        let raw = b"\x1b[1;31mred\x1b[0m\r\nab\x08c\x1b]0;t\x07\tz";
        assert_eq!(strip_escapes(raw), "red\nac\tz");
        // Progress bars keep their last state; erased tails vanish.
        assert_eq!(strip_escapes(b"10%\r50%\r100%\n"), "100%\n");
        assert_eq!(strip_escapes(b"loading...\r\x1b[Kdone\n"), "done\n");
        assert_eq!(strip_escapes(b"out\n       \r"), "out\n");
        assert_eq!(strip_escapes(b"x  \n>>> "), "x\n>>> ");
    }

    #[test]
    fn sizes_past_the_cell_limit_are_refused_and_named() {
        assert_eq!(size_refusal(80, 24), None);
        assert_eq!(size_refusal(1000, 100), None);
        assert_eq!(size_refusal(250, 400), None);
        let why = size_refusal(1000, 1000).expect("refused");
        assert!(
            why.contains("1000000 cells") && why.contains("100000"),
            "{why}"
        );
        assert!(
            size_refusal(1001, 10)
                .expect("refused")
                .contains("1..=1000")
        );
        assert!(size_refusal(0, 10).is_some());
    }

    #[test]
    fn a_wide_screen_keeps_fewer_lines_of_scrollback() {
        assert_eq!(scrollback_lines(80), SCREEN_SCROLLBACK_LINES);
        assert_eq!(scrollback_lines(200), 500);
        assert_eq!(scrollback_lines(1000), 100);
        let mut s = Screen::new(100, 1000);
        assert_eq!(s.parser().screen().scrollback_capacity(), 100);
    }

    #[test]
    fn widening_far_makes_the_model_again_with_what_it_shows() {
        let mut s = Screen::new(24, 80);
        for n in 0..600 {
            s.process(format!("line {n}\r\n").as_bytes());
        }
        s.process(b"\x1b[1mbold\x1b[0m $ ");
        assert_eq!(s.parser().screen().scrollback_capacity(), 500);
        s.set_size(24, 500);
        // 500 lines × 500 columns is past twice the cells: made again, at 200 lines.
        let screen = s.parser().screen();
        assert_eq!(screen.scrollback_capacity(), 200);
        assert_eq!(screen.size(), (dim(24), dim(500)));
        let rows: Vec<String> = screen.rows(0, 500).collect();
        assert_eq!(rows[22], "line 599");
        assert_eq!(rows[23], "bold $ ");
        assert!(screen.cell(23, 0).expect("cell").bold());
        assert_eq!(screen.cursor_position(), (23, 7));
        // A small widening keeps the model (and its scrollback).
        let mut s = Screen::new(24, 80);
        for n in 0..100 {
            s.process(format!("line {n}\r\n").as_bytes());
        }
        s.set_size(24, 100);
        assert_eq!(s.parser().screen().scrollback_len(), 77);
    }
}
