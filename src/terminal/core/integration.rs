//! Shell integration events (OSC 633 with this terminal's nonce) become AHP command actions:
//! detection available, command executed, command finished with exit code and duration,
//! cwd changed — and the command records `execute_command` answers from.
//!
//! Real set-ups bend the order of events, so none of it is assumed:
//! - bash reports a command's line (E) just after its start (C): the `commandExecuted`
//!   action waits for E, or for anything else that shows the command is under way;
//! - a line this server typed is the command line when the shell cannot say (history off or
//!   ignoring the line) or says it differently (a multi-line command history re-joined);
//! - a typed line that never got a C (a user set-up that broke the hook) becomes a command
//!   when the prompt comes back, with the exit status the prompt reported.

use super::*;
use crate::terminal::term::Submitted;

/// The command line to record: what the shell reported, unless this server typed the line
/// and the shell could not report it (empty) or reported it re-written. When several lines
/// were typed at once, each is its own command and the shell names each one.
fn resolve_line(reported: Option<String>, typed: Option<&Submitted>) -> String {
    let reported = reported.filter(|l| !l.is_empty());
    match (reported, typed) {
        (Some(r), Some(t)) => {
            if r != t.line && t.line.starts_with(&format!("{r}\n")) {
                r
            } else {
                t.line.clone()
            }
        }
        (Some(r), None) => r,
        (None, Some(t)) => t.line.clone(),
        (None, None) => String::new(),
    }
}

impl Core {
    pub(super) fn on_event(
        &self,
        inner: &mut Registry,
        term: &Terminal,
        st: &mut TermState,
        e: Event,
    ) {
        if !st.detection {
            st.detection = true;
            let a = StateAction::TerminalCommandDetectionAvailable(
                TerminalCommandDetectionAvailableAction {},
            );
            self.apply(inner, term, st, a, None);
        }
        if st.unannounced && !matches!(e, Event::CommandLine(_)) {
            self.announce(inner, term, st);
        }
        match e {
            Event::PromptStart => {
                st.continuation = false;
                st.prompt_drawn = false;
                st.prompt_started = true;
                self.prompt_back(inner, term, st);
            }
            Event::PromptEnd => {
                // Only where prompt starts never come is an end a new prompt: a redrawn
                // prompt (a clock, a vi-mode indicator) repeats its end mark.
                if !st.prompt_started {
                    self.prompt_back(inner, term, st);
                }
                st.prompt_drawn = true;
                st.typed.clear();
            }
            Event::CommandLine(line) => {
                if st.unannounced {
                    let typed = st.typed_for_unannounced.take();
                    if let Some(rec) = st.commands.back_mut() {
                        rec.command_line = resolve_line(Some(line), typed.as_ref());
                    }
                    self.announce(inner, term, st);
                } else {
                    st.pending_line = Some(line);
                }
            }
            Event::Executed => {
                if st.at_prompt && !st.prompt_drawn {
                    // This prompt never showed its end: do not wait for it next time.
                    st.prompt_end_missing += 1;
                }
                st.at_prompt = false;
                st.prompt_drawn = false;
                st.line_entered = false;
                st.continuation = false;
                st.saw_executed = true;
                if st.executing().is_some() {
                    self.finish_command(inner, term, st, None);
                }
                let reported = st.pending_line.take();
                let waits_for_line = reported.is_none();
                let typed = st.submitted.take();
                let line = resolve_line(reported, typed.as_ref());
                let start = st.spool.len();
                self.start_command(st, line, start);
                if waits_for_line {
                    st.unannounced = true;
                    st.typed_for_unannounced = typed;
                } else {
                    self.announce(inner, term, st);
                }
            }
            Event::Finished(code) => {
                if st.executing().is_some() {
                    st.saw_finished = true;
                    self.finish_command(inner, term, st, code.map(i64::from));
                } else if let Some(s) = st.submitted.as_mut() {
                    // A typed line that never started a command (as far as C goes): keep
                    // its status for when the prompt comes back.
                    s.status = Some(code);
                }
            }
            Event::Installed(level) => st.installed_partially = level != "full",
            Event::RcDone => st.rc_done = true,
            Event::Continuation => {
                st.continuation = !st.dropping_line;
                st.continuations += 1;
            }
            Event::Cwd(path) => {
                let uri = file_uri(&path);
                if st.state.cwd.as_deref() != Some(uri.as_str()) {
                    let a = StateAction::TerminalCwdChanged(TerminalCwdChangedAction { cwd: uri });
                    self.apply(inner, term, st, a, None);
                }
            }
        }
    }

    /// The shell is at a prompt again. A line typed since the last prompt that no C ever
    /// started ran all the same (or failed to parse): record it now, finished.
    fn prompt_back(&self, inner: &mut Registry, term: &Terminal, st: &mut TermState) {
        st.prompts += 1;
        st.at_prompt = true;
        st.line_entered = false;
        st.continuation = false;
        st.dropping_line = false;
        if st.executing().is_some() {
            // The prompt is back and no D said how the command ended (a set-up without the
            // exit-status hook): it ended, status unknown.
            st.finished_unknown += 1;
            self.finish_command(inner, term, st, None);
        }
        let Some(sub) = st.submitted.take() else {
            return;
        };
        st.late_records += 1;
        self.start_command(st, sub.line, sub.at);
        self.announce(inner, term, st);
        self.finish_command(inner, term, st, sub.status.flatten().map(i64::from));
    }

    /// Add a command record (not yet announced as an AHP action).
    fn start_command(&self, st: &mut TermState, command_line: String, output_start: u64) {
        st.next_command += 1;
        st.commands.push_back(CommandRecord {
            command_id: format!("cmd_{}", st.next_command),
            command_line,
            complete: false,
            exit_code: None,
            duration_ms: None,
            started_at_ms: crate::clock::now_ms() as i64,
            output_start,
            output_end: None,
        });
        while st.commands.len() > crate::terminal::term::MAX_COMMAND_RECORDS {
            st.commands.pop_front();
        }
        st.command_started = Some(Instant::now());
    }

    /// Dispatch `commandExecuted` for the newest command.
    pub(super) fn announce(&self, inner: &mut Registry, term: &Terminal, st: &mut TermState) {
        st.unannounced = false;
        st.typed_for_unannounced = None;
        let Some(rec) = st.commands.back() else {
            return;
        };
        let a = StateAction::TerminalCommandExecuted(TerminalCommandExecutedAction {
            command_id: rec.command_id.clone(),
            command_line: rec.command_line.clone(),
            timestamp: rec.started_at_ms,
        });
        self.apply(inner, term, st, a, None);
    }

    pub(super) fn finish_command(
        &self,
        inner: &mut Registry,
        term: &Terminal,
        st: &mut TermState,
        code: Option<i64>,
    ) {
        if st.unannounced {
            self.announce(inner, term, st);
        }
        let end = st.spool.len();
        let duration = st
            .command_started
            .take()
            .map(|t| t.elapsed().as_millis() as i64);
        let Some(rec) = st.commands.back_mut().filter(|c| !c.complete) else {
            return;
        };
        rec.complete = true;
        rec.exit_code = code;
        rec.duration_ms = duration;
        rec.output_end = Some(end);
        let a = StateAction::TerminalCommandFinished(TerminalCommandFinishedAction {
            command_id: rec.command_id.clone(),
            exit_code: code,
            duration_ms: duration,
        });
        self.apply(inner, term, st, a, None);
    }
}

#[cfg(test)]
mod tests {
    use super::resolve_line;
    use crate::terminal::term::Submitted;

    fn typed(line: &str) -> Submitted {
        Submitted {
            line: line.into(),
            at: 0,
            status: None,
        }
    }

    #[test]
    fn typed_lines_win_unless_they_hold_several_commands() {
        assert_eq!(resolve_line(Some("ls".into()), None), "ls");
        assert_eq!(resolve_line(None, Some(&typed(" ls"))), " ls");
        assert_eq!(resolve_line(Some(String::new()), Some(&typed("x"))), "x");
        // History re-joined a multi-line loop: the typed text is the exact one.
        assert_eq!(
            resolve_line(
                Some("for i in 1; do echo $i; done".into()),
                Some(&typed("for i in 1\ndo echo $i\ndone"))
            ),
            "for i in 1\ndo echo $i\ndone"
        );
        // Two commands typed at once: the first is its own line.
        assert_eq!(
            resolve_line(Some("echo a".into()), Some(&typed("echo a\necho b"))),
            "echo a"
        );
        assert_eq!(resolve_line(None, None), "");
    }
}
