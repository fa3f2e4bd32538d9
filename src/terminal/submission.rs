//! What one command line typed at a prompt started, and the wait for all of it to run.
//!
//! A line may start several commands: bash runs each line of a pasted script as a command
//! line of its own, each with its own record. A line may also start none yet: the shell
//! drew its continuation prompt and reads the rest of an unfinished line (an open quote, a
//! here-document, a loop). The answer to a `run` is about the whole line either way.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::protocol::{OpError, OpErrorKind};
use super::term::{CommandRecord, TermState, Terminal};
use super::waits::wait_for;

/// After a command finishes, how long to wait for the prompt (and its cwd report). The
/// user's own prompt commands run in between (a powerline prompt starts Python), and on a
/// loaded machine they take more than a second; the wait ends as soon as the prompt comes.
pub const PROMPT_GRACE: Duration = Duration::from_millis(3_000);
/// How long a shell may stay at its continuation prompt before our command line counts as
/// left open (an unclosed quote): the further lines of a script are pasted with it and read
/// at once, so a continuation that lasts this long waits for keys nobody will type.
const OPEN_LINE_QUIET: Duration = Duration::from_secs(1);

/// How the wait for a command line ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// Everything it started has finished (or the terminal ended).
    Finished,
    /// Something it started still runs when the wait is over.
    Running,
    /// The shell holds it unfinished at its continuation prompt, and nothing more comes.
    LeftOpen,
    /// What it started runs, blocked reading the terminal: it waits for input.
    WaitsForInput,
}

fn command_number(r: &CommandRecord) -> u64 {
    r.command_id
        .strip_prefix("cmd_")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A command line as it went in: the command count before it (`base`), the prompts the
/// shell had drawn by then, and how many lines the terminal passes on for it.
#[derive(Debug, Clone, Copy)]
pub struct Typed {
    pub base: u64,
    prompts: u64,
    lines: u64,
}

impl Typed {
    /// `line` about to be typed (with its Enter) into the terminal whose state is `st`.
    pub fn new(st: &TermState, line: &str) -> Self {
        // The line discipline ends a line at each carriage return as at each newline.
        let ends = line.chars().filter(|&c| c == '\n' || c == '\r').count() as u64;
        Typed {
            base: st.next_command,
            prompts: drawn(st),
            lines: ends + 1,
        }
    }

    /// A shell that reads typed text a line at a time draws a prompt after each line it has
    /// taken: while fewer have come than the line holds, some of it is still to be read.
    /// (Its kernel buffer is no witness: the shell may have read the last line and not yet
    /// drawn the continuation prompt that line brings.)
    fn lines_left(&self, st: &TermState) -> bool {
        drawn(st).saturating_sub(self.prompts) < self.lines
    }
}

fn drawn(st: &TermState) -> u64 {
    st.prompts + st.continuations
}

/// The commands detected after `base` (the terminal's counter before we typed): those our
/// command line started.
fn ours(
    commands: &VecDeque<CommandRecord>,
    base: u64,
    next_base: Option<u64>,
) -> impl DoubleEndedIterator<Item = &CommandRecord> {
    commands.iter().filter(move |c| {
        let n = command_number(c);
        n > base && next_base.is_none_or(|next| n <= next)
    })
}

/// The count at which the next call after ours typed its line, if one has: what started
/// after it is that call's. Two calls for one terminal run one after the other, and the
/// first may be answered only after the second's command ran (its task woke late); its
/// answer then took in the second's command, output and status, and its timeout could
/// interrupt the second's command.
fn next_base(st: &TermState, base: u64) -> Option<u64> {
    st.typed_bases.iter().copied().find(|&b| b > base)
}

/// Whether the last command our line started has finished.
fn finished(st: &TermState, base: u64) -> bool {
    ours(&st.commands, base, next_base(st, base))
        .next_back()
        .is_some_and(|c| c.complete)
}

/// Whether nothing of ours is running: none started, or the last has finished.
pub fn none_running(st: &TermState, base: u64) -> bool {
    ours(&st.commands, base, next_base(st, base))
        .next_back()
        .is_none_or(|c| c.complete)
}

/// Wait, until `limit`, for everything the line typed after `base` started to finish, and
/// for the prompt after it to be drawn (the shell reports its cwd as it draws the prompt).
pub async fn wait(t: &Terminal, typed: Typed, limit: Instant) -> Waited {
    let base = typed.base;
    loop {
        // What the line started reading from the terminal is known once it started.
        let ended = super::waits::wait_for_or_input(t, limit, Instant::now(), |st| {
            finished(st, base) || st.continuation || !st.running()
        })
        .await;
        match ended {
            super::waits::Ended::Cond => {}
            super::waits::Ended::Deadline => return Waited::Running,
            super::waits::Ended::Input if none_running(&t.state(), base) => {
                // Nothing of ours runs yet: the shell itself reads (a line not entered).
                return Waited::Running;
            }
            super::waits::Ended::Input => return Waited::WaitsForInput,
        }
        if t.state().continuation {
            // The shell reads on: a script's further lines are there already and it is done
            // with them at once; a line left open gets nothing more, however often a theme
            // redraws the continuation prompt meanwhile.
            let by = limit.min(Instant::now() + OPEN_LINE_QUIET);
            if wait_for(t, by, |st| !st.continuation || !st.running()).await {
                continue;
            }
            if Instant::now() >= limit {
                return Waited::Running;
            }
            return Waited::LeftOpen;
        }
        // A script's next line may start instead of the prompt (a shell that reports each
        // line's end), and is waited for too. The prompt counts once it is drawn (its end
        // mark; a prompt that never shows one is not waited for): the answer's screen shows
        // it, and a screen read next finds it there.
        let by = limit.min(Instant::now() + PROMPT_GRACE);
        wait_for(t, by, |st| {
            (st.at_prompt && (st.prompt_drawn || st.prompt_end_missing > 0))
                || !none_running(st, base)
                || !st.running()
        })
        .await;
        if none_running(&t.state(), base) {
            // A shell without a line editor (dash) reads what was typed a line at a time:
            // while part of it is still unread (in the kernel's buffer, or taken without the
            // prompt it brings drawn yet), the shell has more of our text to take —
            // a script's next line, or the rest of a line left open, whose continuation
            // prompt comes only after this prompt.
            if t.pty.unread_input() || (t.prompt_only && typed.lines_left(&t.state())) {
                let by = limit.min(Instant::now() + PROMPT_GRACE);
                let more = wait_for(t, by, |st| {
                    st.continuation || !none_running(st, base) || !st.running()
                })
                .await;
                if more {
                    continue;
                }
            }
            return Waited::Finished;
        }
    }
}

/// What our command line ran, as one record: its first command's id and start, the whole
/// line, and the last command's end and exit status (a script's status is its last
/// command's, as the shell's `$?` says). `None` while nothing has started.
pub fn record(st: &TermState, base: u64, line: &str) -> Option<CommandRecord> {
    record_of(&st.commands, base, next_base(st, base), line)
}

fn record_of(
    commands: &VecDeque<CommandRecord>,
    base: u64,
    next_base: Option<u64>,
    line: &str,
) -> Option<CommandRecord> {
    let mut ran = ours(commands, base, next_base);
    let first = ran.next()?;
    let Some(last) = ran.next_back() else {
        return Some(first.clone());
    };
    let ended_at = last
        .duration_ms
        .map(|d| last.started_at_ms + d)
        .filter(|_| last.complete);
    Some(CommandRecord {
        command_id: first.command_id.clone(),
        command_line: line.to_string(),
        complete: last.complete,
        exit_code: last.exit_code,
        duration_ms: ended_at.map(|end| end - first.started_at_ms),
        started_at_ms: first.started_at_ms,
        output_start: first.output_start,
        output_end: last.output_end,
    })
}

/// How an agent goes on from a line the shell holds open.
const GO_ON: &str = "finish it with execution.input, or drop it with execution.keys [\"ctrl-c\"]";

/// What a `run` answered before the shell gave up on its line says about it.
pub fn open_note(t: &Terminal) -> String {
    format!(
        "the shell in terminal {} shows its continuation prompt: it holds an unfinished \
         command line and reads the rest; {GO_ON}",
        t.id
    )
}

/// The refusal for a command line sent while the shell holds another one open.
pub fn open_elsewhere(t: &Terminal) -> OpError {
    OpError::new(
        OpErrorKind::Busy,
        format!(
            "terminal {} is in the middle of a command line: its shell shows the continuation \
             prompt and reads the rest of the line; {GO_ON}",
            t.id
        ),
    )
}

/// The refusal for a command line that stayed open, once what the shell kept is dropped.
pub fn left_open(t: &Terminal) -> OpError {
    OpError::new(
        OpErrorKind::Invalid,
        format!(
            "the command line is not complete: the shell in terminal {} showed its continuation \
             prompt and waited for the rest (an unclosed quote, bracket, here-document or \
             if/for/while/case block); what was left open was cancelled with Ctrl-C, so the \
             terminal is ready for the next command line — send the whole of it at once",
            t.id
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        n: u64,
        complete: bool,
        code: Option<i64>,
        start: u64,
        end: Option<u64>,
    ) -> CommandRecord {
        CommandRecord {
            command_id: format!("cmd_{n}"),
            command_line: format!("line {n}"),
            complete,
            exit_code: code,
            duration_ms: complete.then_some(5),
            started_at_ms: 1000 + n as i64 * 10,
            output_start: start,
            output_end: end,
        }
    }

    #[test]
    fn a_script_is_one_record_from_its_first_start_to_its_last_end() {
        let recs = [
            rec(3, true, Some(0), 0, Some(10)),
            rec(4, true, None, 10, Some(20)),
            rec(5, true, Some(1), 20, Some(30)),
        ];
        let line = "a\nb\nc";
        let merged = merge_for_test(&recs[1..], line).unwrap();
        assert_eq!(merged.command_id, "cmd_4");
        assert_eq!(merged.command_line, line);
        assert_eq!((merged.output_start, merged.output_end), (10, Some(30)));
        assert_eq!(merged.exit_code, Some(1));
        assert_eq!(merged.duration_ms, Some(10 + 5));
        // One command keeps the shell's own record.
        assert_eq!(merge_for_test(&recs[2..], line).unwrap(), recs[2]);
        assert!(merge_for_test(&[], line).is_none());
        // A last command still running makes the whole line running.
        let running = [
            rec(4, true, None, 10, Some(20)),
            rec(5, false, None, 20, None),
        ];
        let merged = merge_for_test(&running, line).unwrap();
        assert!(!merged.complete);
        assert_eq!((merged.exit_code, merged.duration_ms), (None, None));
    }

    #[test]
    fn a_later_calls_commands_are_not_ours() {
        let mut records = std::collections::VecDeque::new();
        records.extend([
            rec(1, true, Some(0), 0, Some(10)),
            rec(2, true, Some(0), 20, Some(30)),
        ]);
        // The next call typed its line when one command had started: the second is its own.
        let ours = record_of(&records, 0, Some(1), "sleep 0.5; echo first").unwrap();
        assert_eq!(ours.command_id, "cmd_1");
        assert_eq!(ours.output_end, Some(10));
        let theirs = record_of(&records, 1, None, "echo second").unwrap();
        assert_eq!(theirs.command_id, "cmd_2");
        // Without a later call, everything after ours is ours (a script's several lines).
        assert_eq!(
            record_of(&records, 0, None, "a\nb").unwrap().output_end,
            Some(30)
        );
    }

    /// `record` over exactly `recs`, as commands after the counter before the first of them.
    fn merge_for_test(recs: &[CommandRecord], line: &str) -> Option<CommandRecord> {
        let base = recs.first().map_or(u64::MAX, |r| command_number(r) - 1);
        let mut records = std::collections::VecDeque::new();
        records.extend(recs.iter().cloned());
        record_of(&records, base, None, line)
    }
}
