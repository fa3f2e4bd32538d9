//! Shell integration events (OSC 633 with this terminal's nonce) become AHP command actions:
//! detection available, command executed, command finished with exit code and duration,
//! cwd changed — and the command records `execute_command` answers from.

use super::*;

impl Core {
    pub(super) fn on_event(
        &self,
        inner: &mut Inner,
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
        match e {
            Event::PromptStart => st.at_prompt = false,
            Event::PromptEnd => {
                st.prompts += 1;
                st.at_prompt = true;
                st.typed.clear();
            }
            Event::CommandLine(line) => st.pending_line = Some(line),
            Event::Executed => {
                st.at_prompt = false;
                if st.executing().is_some() {
                    self.finish_command(inner, term, st, None);
                }
                st.next_command += 1;
                let command_id = format!("cmd_{}", st.next_command);
                let command_line = st.pending_line.take().unwrap_or_default();
                let timestamp = now_ms();
                st.commands.push_back(CommandRecord {
                    command_id: command_id.clone(),
                    command_line: command_line.clone(),
                    complete: false,
                    exit_code: None,
                    duration_ms: None,
                    started_at_ms: timestamp,
                    output_start: st.spool.len(),
                    output_end: None,
                });
                while st.commands.len() > crate::terminal::term::MAX_COMMAND_RECORDS {
                    st.commands.pop_front();
                }
                st.command_started = Some(Instant::now());
                let a = StateAction::TerminalCommandExecuted(TerminalCommandExecutedAction {
                    command_id,
                    command_line,
                    timestamp,
                });
                self.apply(inner, term, st, a, None);
            }
            Event::Finished(code) => {
                if st.executing().is_some() {
                    self.finish_command(inner, term, st, code.map(i64::from));
                }
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

    pub(super) fn finish_command(
        &self,
        inner: &mut Inner,
        term: &Terminal,
        st: &mut TermState,
        code: Option<i64>,
    ) {
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
