//! Driving a terminal for an agent: open a shell, run a command line and wait for its
//! `commandFinished`, send raw input and wait for the answer, all within bounded waits.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ahp_types::actions::{StateAction, TerminalClaimedAction};
use ahp_types::state::TerminalClaim;

use super::core::Core;
use super::interrupt::{self, Interrupted};
use super::protocol::{AgentClaim, InputArgs, OpError, OpErrorKind, OpenArgs, RanResult, RunArgs};
use super::ready::{self, Ready};
use super::submission::{self, PROMPT_GRACE, Waited};
use super::term::{ExitInfo, Submitted, TermState, Terminal, strip_escapes};
use super::view::{chunk, find, ran};
pub use super::waits::{
    INPUT_QUIET, PROMPT_END_GRACE, STARTUP_WAIT, quiet_after, quiet_or_input, wait_for,
};
use super::{CreateSpec, DEFAULT_COLS, DEFAULT_ROWS, fish_syntax, guard, held, lifecycle};

/// After keys are typed, how long a program that shows nothing may take to read them before
/// the kernel's word that it waits for input is taken (until then it may still be waiting
/// for the keys it has not read).
const TYPED_SETTLE: Duration = Duration::from_millis(150);

/// How much recent text `wait_for` patterns are matched against.
const WAIT_FOR_WINDOW: u64 = 64 * 1024;
/// What a terminal sends around pasted text when the program asked for bracketed paste.
const PASTE_START: &str = "\x1b[200~";
const PASTE_END: &str = "\x1b[201~";
/// How long the first command typed into a terminal with a line editor waits for it to turn
/// bracketed paste on, when the prompt came without it (once per terminal: an editor whose
/// user turned it off costs this once).
const FIRST_PASTE_GRACE: Duration = Duration::from_secs(1);
/// How much of the stream's end is searched for the program's last bracketed-paste switch.
const PASTE_MODE_WINDOW: u64 = 16 * 1024;

/// Take the claim for the agent (active during a call, backgrounded after), unless someone
/// else holds the terminal: a person's claim is never taken away by an agent.
pub fn set_claim(core: &Core, t: &Terminal, claim: &AgentClaim, active: bool) {
    let current = t.state().state.claim.clone();
    let ours = matches!(&current, TerminalClaim::Session(s) if s.session == claim.session);
    if !ours {
        return;
    }
    let want = if active {
        claim.active()
    } else {
        claim.background()
    };
    if current != want {
        core.dispatch(
            t,
            StateAction::TerminalClaimed(TerminalClaimedAction { claim: want }),
            None,
        );
    }
}

/// The terminal's working directory, checked as a command's is (`process::workdir`).
fn check_cwd(cwd: Option<&str>) -> Result<PathBuf, OpError> {
    crate::process::workdir::resolve(cwd)
        .map_err(|e| OpError::new(OpErrorKind::Invalid, e.to_string()))
}

pub async fn open(core: &Arc<Core>, a: OpenArgs, caller: Option<&str>) -> RanResult {
    let started = Instant::now();
    let cwd = check_cwd(a.cwd.as_deref())?;
    let spec = CreateSpec {
        id: None,
        name: a.name.clone(),
        cwd,
        env: a.env.clone(),
        shell: a.shell.clone(),
        cols: a.cols.unwrap_or(DEFAULT_COLS),
        rows: a.rows.unwrap_or(DEFAULT_ROWS),
        claim: a.claim.active(),
        holder_client: caller.map(String::from),
        workspace_id: a.workspace_id.clone(),
    };
    let t = core.create(spec).await?;
    if let Some(command) = a.command {
        let left = Duration::from_millis(a.wait_ms).saturating_sub(started.elapsed());
        return run(
            core,
            RunArgs {
                terminal_id: t.id.clone(),
                command,
                wait_ms: left.as_millis() as u64,
                timeout_ms: a.timeout_ms,
                claim: Some(a.claim),
                output: a.output,
                unseen_line: false,
                size: None,
            },
        )
        .await;
    }
    let ready_by = Instant::now() + STARTUP_WAIT.min(Duration::from_millis(a.wait_ms.max(1)));
    let ready = ready::wait_ready(core, &t, ready_by, None).await;
    set_claim(core, &t, &a.claim, false);
    let mut out_spec = a.output.clone();
    out_spec.cursor = Some(out_spec.cursor.unwrap_or(0));
    let out = chunk(&t, None, None, &out_spec)?;
    let mut r = ran(&t, out, t.is_running());
    if let Ready::Asking(question) = ready {
        r.note = Some(ready::asking_note(&question));
    } else if !t.state().detection {
        r.note = Some(no_detection_note(&t));
    }
    Ok(r)
}

fn no_detection_note(t: &Terminal) -> String {
    format!(
        "{} has no shell integration here, so commands are not detected: exit codes are unknown and output is returned once it goes quiet",
        t.shell
    )
}

/// The keys that enter `command` at the prompt: pasted as a terminal emulator pastes, when
/// the line editor asked for bracketed paste (bash, zsh, fish), then Enter. Typed key by key,
/// a tab in it was a completion request (a Makefile's recipe lines lost their tabs) and each
/// of its lines was entered on its own; pasted, the line editor takes the text as it is.
async fn keys_entering(t: &Terminal, command: &str) -> Result<String, OpError> {
    let mut bracketed = bracketed_paste(&t.state());
    // The line editor turns bracketed paste on just after drawing its prompt (and later still
    // on a loaded machine, behind plugins' hooks): a shell with a line editor is given a
    // moment for it at its first prompt, and at every prompt once it has used it — typed
    // before it, a script's lines ran one by one and a tab was a completion.
    let editor = t.nonce_file.is_some() && !t.prompt_only;
    if !bracketed && editor {
        let wait = {
            let mut st = t.state();
            !std::mem::replace(&mut st.paste_awaited, true) || st.paste_seen
        };
        if wait {
            bracketed = wait_for(t, Instant::now() + FIRST_PASTE_GRACE, bracketed_paste).await;
        }
    }
    if bracketed {
        t.state().paste_seen = true;
    }
    if bracketed && !command.is_empty() {
        return Ok(format!("{PASTE_START}{command}{PASTE_END}\r"));
    }
    // Typed key by key into a line editor, a tab asks it to complete: the shell would run a
    // line other than the one judged (and approved).
    if editor && command.contains('\t') {
        return Err(OpError::new(
            OpErrorKind::Invalid,
            format!(
                "the line editor in terminal {} has bracketed paste off, so the command line is \
                 typed key by key and its tab would be a completion request, not text; nothing \
                 was typed: write the tab as the shell's escape ($'\\t', printf '\\t'), or run \
                 it headless",
                t.id
            ),
        ));
    }
    Ok(format!("{command}\r"))
}

/// Whether the program on the terminal asked for bracketed paste, as its last word on it in
/// the recent output says (`ESC[?2004h` on, `ESC[?2004l` off). At a prompt that is the line
/// editor's, sent around its prompt. Read from the stream's end rather than the screen
/// model, which would first have to take in all the output since it was last read.
fn bracketed_paste(st: &TermState) -> bool {
    let len = st.spool.len();
    let from = len.saturating_sub(PASTE_MODE_WINDOW);
    let Ok(tail) = st.spool.read(from, (len - from) as usize) else {
        return false;
    };
    let on = memchr::memmem::rfind(&tail.bytes, b"\x1b[?2004h");
    let off = memchr::memmem::rfind(&tail.bytes, b"\x1b[?2004l");
    on.is_some_and(|on| off.is_none_or(|off| on > off))
}

/// A terminal that can still take input.
fn find_running(core: &Core, id: &str) -> Result<Arc<Terminal>, OpError> {
    let t = find(core, id)?;
    let exit = t.state().exit.clone();
    match exit {
        None => Ok(t),
        Some(e) => Err(OpError::new(OpErrorKind::Exited, exited(&t.id, &e))),
    }
}

/// What an agent is told of a terminal whose shell has ended: how it ended, that its output
/// is still there, and how to go on (it cannot be restarted: a new one is opened).
fn exited(id: &str, e: &ExitInfo) -> String {
    let how = match (&e.signal, e.exit_code) {
        (Some(sig), _) => format!("was killed by {sig}"),
        (None, Some(code)) => format!("exited with code {code}"),
        (None, None) => "has exited".to_string(),
    };
    format!(
        "terminal {id}'s shell {how}, so it takes no more input; its output stays readable \
         with read_output: open a new terminal (execute with intent open_only) to go on"
    )
}

pub async fn run(core: &Arc<Core>, mut a: RunArgs) -> RanResult {
    let started = Instant::now();
    // A line end typed is Enter, whichever bytes spell it: CRLF (a client on Windows, a
    // script pasted from one) would be Enter twice, and a here-document got a blank line
    // after each of its lines.
    if a.command.contains("\r\n") {
        a.command = a.command.replace("\r\n", "\n");
    }
    let t = find_running(core, &a.terminal_id)?;
    guard::unseen_by_the_policy(&t, a.unseen_line)?;
    lifecycle::resize_to(core, &t, a.size)
        .map_err(|why| OpError::new(OpErrorKind::Invalid, why))?;
    if let Some(why) = crate::text::typed::refusal("the command line", &a.command) {
        return Err(OpError::new(OpErrorKind::Invalid, why));
    }
    fish_syntax::check(&t, &a.command).await?;
    if let Some(c) = &a.claim {
        set_claim(core, &t, c, true);
    }
    let deadline = started + Duration::from_millis(a.wait_ms);
    let hard = a.timeout_ms.map(|ms| started + Duration::from_millis(ms));
    let line = held::hold(
        &t,
        a.claim.as_ref().and_then(AgentClaim::call_key).as_deref(),
    );
    let ticket = line.ticket();
    let ready =
        ready::wait_ready(core, &t, deadline.min(started + STARTUP_WAIT), Some(ticket)).await;
    // Nothing will be typed: the claim goes back to the background.
    let give_back_claim = || {
        if let Some(c) = &a.claim {
            set_claim(core, &t, c, false);
        }
    };
    // A refusal that names the terminal with what it shows: it may be one this call opened,
    // and the agent goes on in it.
    let showing = |mut e: OpError| -> RanResult {
        give_back_claim();
        e.partial = Some(Box::new(ran(&t, chunk(&t, None, None, &a.output)?, true)));
        Err(e)
    };
    if let Ready::Asking(question) = ready {
        // What the rc files printed, the question last: the agent answers it in this terminal.
        return showing(OpError::new(
            OpErrorKind::Busy,
            format!(
                "terminal {} has not finished the user's rc files: {}; nothing was typed",
                t.id,
                ready::asking_note(&question)
            ),
        ));
    }
    let entering = t.entry_lock.lock().await;
    // The shell moves on while this call looks (the reader takes its marks meanwhile): the
    // look that decides is made under the state's lock, and one that finds the shell
    // between a command's end and its prompt waits on rather than type into that gap.
    let settle_by = deadline.min(Instant::now() + PROMPT_GRACE);
    let (typed, before) = loop {
        settle_before_typing(&t, deadline, ticket).await;
        let st = t.state();
        if st.continuation {
            drop(st);
            return showing(submission::open_elsewhere(&t));
        }
        if let Some(busy) = st.executing() {
            let msg = format!(
                "terminal {} is busy running {:?}; send raw input with execution.input (e.g. to a REPL), or wait for it",
                t.id, busy.command_line
            );
            drop(st);
            give_back_claim();
            return Err(OpError::new(OpErrorKind::Busy, msg));
        }
        if free_to_type(&st) || held::withdrawn(&st, ticket) || Instant::now() >= settle_by {
            break (submission::Typed::new(&st, &a.command), st.spool.len());
        }
    };
    if let Err(e) = guard::fits_the_line_discipline(&t, &a.command) {
        return showing(e);
    }
    if let (Some(h), Some(ms)) = (hard, a.timeout_ms)
        && Instant::now() >= h
    {
        // The timeout passed while the shell got ready (a slow prompt, a busy machine): a
        // line typed now would only be interrupted at once — in fish's line editor, before
        // it runs, which drops it and draws no new prompt.
        let e = OpError::new(
            OpErrorKind::Timeout,
            format!(
                "timeout_ms {ms} passed while terminal {} was getting ready for the line (its \
                 prompt was still being drawn); nothing was typed",
                t.id
            ),
        );
        return showing(e);
    }
    if !line.start_typing() {
        give_back_claim();
        return Err(OpError::new(
            OpErrorKind::Invalid,
            format!(
                "the call was cancelled while terminal {} was getting ready; the command was never typed",
                t.id
            ),
        ));
    }
    record_typed(&t, &a.command, typed.base);
    let keys = match keys_entering(&t, &a.command).await {
        Ok(keys) => keys,
        Err(e) => return showing(e),
    };
    lifecycle::input(core, &t, &keys, None)
        .await
        .map_err(|e| unwritable(&t, e))?;
    drop(entering);
    line.typed(core).await;
    let integrated = t.state().detection;
    let limit = hard.map_or(deadline, |h| h.min(deadline));
    let mut waits_for_input = false;
    let finished = if integrated {
        match submission::wait(&t, typed, limit).await {
            Waited::Finished => true,
            Waited::Running => false,
            Waited::WaitsForInput => {
                waits_for_input = true;
                false
            }
            Waited::LeftOpen => {
                let _ = held::ctrl_c(core, &t).await;
                give_back_claim();
                let mut e = submission::left_open(&t);
                e.partial = Some(Box::new(ran(
                    &t,
                    chunk(&t, Some(before), None, &a.output)?,
                    false,
                )));
                return Err(e);
            }
        }
    } else {
        waits_for_input = quiet_or_input(&t, before, limit, TYPED_SETTLE).await;
        false
    };
    // Past the hard timeout: how the command was stopped.
    let timed_out = if !finished && hard.is_some_and(|h| Instant::now() >= h) {
        Some(interrupt::now(core, &t, typed.base).await)
    } else {
        None
    };
    answer(
        core,
        &t,
        &a,
        Outcome {
            base: typed.base,
            before,
            hard,
            timed_out,
            waits_for_input,
            integrated,
        },
    )
}

/// Where a typed line stands when the call answers.
struct Outcome {
    /// The terminal's command count before the line: its records come after.
    base: u64,
    /// The output's length before the line.
    before: u64,
    /// When the command's hard timeout ends it.
    hard: Option<Instant>,
    /// Past the hard timeout: how the command was stopped.
    timed_out: Option<Interrupted>,
    waits_for_input: bool,
    /// Whether the shell's integration reports each command.
    integrated: bool,
}

/// The answer for a typed line: its command's record and output, whether it still runs
/// or waits for input, the screen, and a timeout's refusal carrying all of that.
fn answer(core: &Arc<Core>, t: &Arc<Terminal>, a: &RunArgs, o: Outcome) -> RanResult {
    let (base, hard, timed_out) = (o.base, o.hard, o.timed_out);
    let rec = submission::record(&t.state(), base, &a.command);
    let (from, until) = match &rec {
        Some(r) => (r.output_start, r.output_end),
        None => (o.before, None),
    };
    let out = chunk(t, Some(from), until, &a.output)?;
    // No record yet means the line has not visibly started or ended: the prompt did not come
    // back, so it is running as far as anyone can tell — never reported done.
    let still = match &rec {
        Some(r) => !r.complete,
        None => true,
    } && t.is_running();
    let mut r = ran(t, out, still);
    if o.waits_for_input && still && timed_out.is_none() {
        r.waiting_for_input = Some(super::view::prompt_line(core, t));
    }
    r.screen = super::view::full_screen(core, t, &a.output);
    r.command = rec;
    if !o.integrated {
        r.note = Some(no_detection_note(t));
    } else if still && t.state().continuation {
        r.note = Some(submission::open_note(t));
    }
    if let Some(c) = &a.claim {
        set_claim(core, t, c, false);
        r.terminal = super::view::summary(t);
    }
    if still
        && timed_out.is_none()
        && let Some(h) = hard
    {
        interrupt::at(core, t, base, h);
    }
    if let Some(how) = timed_out {
        let limit_ms = a.timeout_ms.unwrap_or(0);
        return Err(OpError {
            kind: OpErrorKind::Timeout,
            message: format!(
                "the command ran past timeout_ms {limit_ms}; {}",
                how.told(&t.id)
            ),
            partial: Some(Box::new(r)),
            limit: None,
        });
    }
    Ok(r)
}

/// Before a line is typed: a command that has just ended brings its prompt a moment later,
/// and a line someone else entered is still on its way.
async fn settle_before_typing(t: &Arc<Terminal>, deadline: Instant, ticket: u64) {
    // A command that has just ended (a timeout's Ctrl-C) brings its prompt a moment later,
    // and fish's comes in a second hook after the end's: typed in between, the line was
    // taken as one that ran before the prompt, with no output, and its command as still
    // running.
    wait_for(t, deadline.min(Instant::now() + PROMPT_GRACE), |st| {
        st.at_prompt
            || st.executing().is_some()
            || !st.detection
            || !st.running()
            || held::withdrawn(st, ticket)
    })
    .await;
    // A line someone entered a moment ago is still on its way: let it start first.
    wait_for(t, deadline, |st| {
        !st.line_entered
            || st.executing().is_some()
            || st.continuation
            || !st.running()
            || held::withdrawn(st, ticket)
    })
    .await;
}

/// Whether a line typed now goes to the shell's prompt: it shows one and no line is on its
/// way to it. A shell whose marks are not read is not waited for.
fn free_to_type(st: &TermState) -> bool {
    !st.detection || !st.running() || (st.at_prompt && !st.line_entered)
}

/// What the terminal keeps of a line about to be typed: the line (so its command is known
/// by what was typed, not by what the screen echoed) and where its command's records begin.
fn record_typed(t: &Terminal, command: &str, base: u64) {
    let mut st = t.state();
    st.submitted = (!command.trim().is_empty()).then(|| Submitted {
        line: command.to_string(),
        at: st.spool.len(),
        status: None,
    });
    st.typed_bases.push_back(base);
    while st.typed_bases.len() > super::term::MAX_COMMAND_RECORDS {
        st.typed_bases.pop_front();
    }
}

pub async fn input(core: &Arc<Core>, a: InputArgs) -> RanResult {
    let started = Instant::now();
    let t = find_running(core, &a.terminal_id)?;
    let pattern = match &a.wait_for {
        Some(p) => Some(crate::text::wait_pattern::compile(p).map_err(|e| {
            OpError::new(
                OpErrorKind::Invalid,
                format!("wait_for is not a valid regular expression: {e}"),
            )
        })?),
        None => None,
    };
    guard::fits_the_line_discipline(&t, &a.data)?;
    guard::unseen_by_the_policy(&t, a.unseen_line)?;
    lifecycle::resize_to(core, &t, a.size)
        .map_err(|why| OpError::new(OpErrorKind::Invalid, why))?;
    if let Some(c) = &a.claim {
        set_claim(core, &t, c, true);
    }
    let (before, last_before) = {
        let st = t.state();
        (st.spool.len(), st.commands.back().cloned())
    };
    let to_editor = guard::reaches_line_editor(&t);
    lifecycle::input(core, &t, &a.data, None)
        .await
        .map_err(|e| unwritable(&t, e))?;
    let deadline = started + Duration::from_millis(a.wait_ms);
    let mut waits_for_input = false;
    match &pattern {
        Some(re) => {
            let mut seen = before;
            wait_for(&t, deadline, |st| {
                let len = st.spool.len();
                if len == seen {
                    return !st.running();
                }
                seen = len;
                let from = before.max(len.saturating_sub(WAIT_FOR_WINDOW));
                let text = st
                    .spool
                    .read(from, (len - from) as usize)
                    .map(|s| strip_escapes(&s.bytes))
                    .unwrap_or_default();
                re.is_match(&text) || !st.running()
            })
            .await;
        }
        None => {
            // Until it shows output, the program may not have read what was just typed.
            waits_for_input = quiet_or_input(&t, before, deadline, TYPED_SETTLE).await;
        }
    }
    let out = chunk(&t, Some(before), None, &a.output)?;
    let mut r = ran(&t, out, t.is_running());
    r.reached_line_editor = Some(to_editor);
    if waits_for_input {
        r.waiting_for_input = Some(super::view::prompt_line(core, &t));
    }
    r.screen = super::view::full_screen(core, &t, &a.output);
    let last_now = t.state().commands.back().cloned();
    if last_now != last_before {
        // The input ran (or finished) a command line at the prompt: answer for that command,
        // as execute_command does.
        if let Some(c) = &last_now {
            r.running = !c.complete && t.is_running();
        }
        r.command = last_now;
    }
    if let Some(c) = &a.claim {
        set_claim(core, &t, c, false);
        r.terminal = super::view::summary(&t);
    }
    Ok(r)
}

/// A write the terminal refused: its shell has ended (then the agent is told how, and to
/// open a new one), or the pty failed.
fn unwritable(t: &Terminal, e: std::io::Error) -> OpError {
    let exit = t.state().exit.clone();
    match exit {
        Some(x) => OpError::new(OpErrorKind::Exited, exited(&t.id, &x)),
        None => OpError::new(
            OpErrorKind::Invalid,
            format!("cannot write to terminal {}: {e}", t.id),
        ),
    }
}
