//! The coupling rules (docs/contract.md, "The pipeline"), after the schema: which fields each action and mode takes,
//! requires or forbids, and the checks the schema cannot express (absolute paths, known
//! adapter names, key names). Each failure says which field and why.

use serde_json::json;

use super::error::TermError;
use super::keys;
use super::request::{Action, Execution, Intent, Mode, OutputOptions, Runtime, Target};

/// Adapter names accepted in `runtime.adapter_override`.
pub const ADAPTER_OVERRIDES: [&str; 4] = ["auto", "local", "bundled", "container_bridge"];

/// Shells a new terminal may name (found on the server's PATH); a request never gives a
/// path: which programs run is the operator's choice.
pub const SHELL_NAMES: [&str; 4] = ["bash", "zsh", "sh", "fish"];

pub(super) fn check_runtime(runtime: &mut Runtime) -> Result<(), TermError> {
    if let Some(o) = &runtime.adapter_override
        && !ADAPTER_OVERRIDES.contains(&o.as_str())
    {
        return Err(TermError::payload(format!(
            "runtime.adapter_override {o:?} is not one of auto, local, bundled, container_bridge"
        ))
        .with("field", json!("runtime.adapter_override"))
        .with("supported", json!(ADAPTER_OVERRIDES)));
    }
    Ok(())
}

/// Command lines, argv, environment and paths become C strings for `execve` and `chdir`,
/// where a NUL byte would cut them short (or fail the spawn): refuse it, naming the field.
/// Raw terminal input (`execution.input`, `keys`) may carry NUL (Ctrl-@) and is not checked.
pub(super) fn check_no_nul(execution: &Execution, runtime: &Runtime) -> Result<(), TermError> {
    let nul = |field: String| {
        Err(TermError::payload(format!("{field} contains a NUL byte")).with("field", json!(field)))
    };
    let singles = [
        ("execution.command", &execution.command),
        ("execution.name", &execution.name),
        ("execution.shell", &execution.shell),
        ("runtime.cwd", &runtime.cwd),
        ("runtime.workspace_id", &runtime.workspace_id),
    ];
    for (field, v) in singles {
        if v.as_deref().is_some_and(|s| s.contains('\0')) {
            return nul(field.to_string());
        }
    }
    for (i, a) in execution.args.iter().flatten().enumerate() {
        if a.contains('\0') {
            return nul(format!("execution.args[{i}]"));
        }
    }
    for (k, v) in execution.env.iter().flatten() {
        if k.contains('\0') || v.contains('\0') {
            return nul(format!("execution.env.{}", k.replace('\0', "\\0")));
        }
    }
    Ok(())
}

fn forbid(cond: bool, msg: &str, field: &str) -> Result<(), TermError> {
    if cond {
        Err(TermError::payload(msg.to_string()).with("field", json!(field)))
    } else {
        Ok(())
    }
}

/// Refuse a control character in text typed at a shell's prompt (`typed_text`).
fn typed_text(text: Option<&str>, field: &str) -> Result<(), TermError> {
    match text.and_then(|t| crate::text::typed::refusal(field, t)) {
        None => Ok(()),
        Some(why) => Err(TermError::payload(why).with("field", json!(field))),
    }
}

/// The coupling rules. Returns the request's resolved mode.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_coupling(
    action: Action,
    mode: &mut Option<Mode>,
    intent: Option<Intent>,
    has_invocation: bool,
    execution: &mut Execution,
    target: &Target,
    output: &OutputOptions,
    has_output: bool,
    has_execution: bool,
    has_target: bool,
) -> Result<Option<Mode>, TermError> {
    match action {
        Action::List => {
            forbid(has_execution, "list forbids execution", "execution")?;
            forbid(has_target, "list forbids target", "target")?;
            forbid(has_output, "list takes no output options", "output")?;
            forbid(
                intent.is_some(),
                "list takes no invocation.intent",
                "invocation.intent",
            )?;
            Ok(*mode)
        }
        Action::ReadOutput | Action::Terminate => {
            let name = action.as_str();
            forbid(
                target.is_empty(),
                &format!(
                    "{name} requires target.session_id, target.terminal_id or target.approval_id"
                ),
                "target",
            )?;
            forbid(
                has_execution && !execution.is_empty(),
                &format!("{name} takes no execution fields"),
                "execution",
            )?;
            forbid(
                intent.is_some(),
                &format!("{name} takes no invocation.intent"),
                "invocation.intent",
            )?;
            if action == Action::Terminate {
                forbid(has_output, "terminate takes no output options", "output")?;
            }
            if target.approval_id.is_some() {
                forbid(
                    target.session_id.is_some() || target.terminal_id.is_some(),
                    "target.approval_id stands alone: it names a command not started yet",
                    "target.approval_id",
                )?;
                forbid(
                    has_output,
                    "a held command's answer is shaped by the output options of its execute; \
                     read_output on target.approval_id takes none",
                    "output",
                )?;
                return Ok(*mode);
            }
            match *mode {
                Some(Mode::Headless) if target.terminal_id.is_some() => {
                    return Err(TermError::payload(
                        "mode headless has no terminals; target.terminal_id needs mode interactive",
                    )
                    .with("field", json!("target.terminal_id")));
                }
                Some(Mode::Interactive) if target.session_id.is_some() => {
                    return Err(TermError::payload(
                        "target.session_id names a headless session; it needs mode headless",
                    )
                    .with("field", json!("target.session_id")));
                }
                _ => {}
            }
            if target.terminal_id.is_none() {
                forbid(
                    output.cursor.is_some() || output.view.is_some(),
                    "output.cursor and output.view apply to terminals; headless sessions use stdout_cursor / stderr_cursor",
                    "output",
                )?;
            }
            if target.session_id.is_none() {
                forbid(
                    output.stdout_cursor.is_some() || output.stderr_cursor.is_some(),
                    "output.stdout_cursor / stderr_cursor apply to headless sessions; terminals use output.cursor",
                    "output",
                )?;
            }
            let derived = match (&target.session_id, &target.terminal_id) {
                (Some(_), None) => Some(Mode::Headless),
                (None, Some(_)) => Some(Mode::Interactive),
                _ => *mode,
            };
            Ok(mode.or(derived))
        }
        Action::Execute => {
            let Some(m) = *mode else {
                return Err(TermError::payload(if has_invocation {
                    "execute requires invocation.mode (interactive or headless)"
                } else {
                    "execute requires invocation.mode and invocation.intent"
                })
                .with("field", json!("invocation.mode")));
            };
            let Some(intent) = intent else {
                return Err(TermError::payload(
                    "execute requires invocation.intent (open_only or execute_command)",
                )
                .with("field", json!("invocation.intent")));
            };
            forbid(
                target.session_id.is_some(),
                "execute starts something new; use read_output or terminate with target.session_id",
                "target.session_id",
            )?;
            forbid(
                target.approval_id.is_some(),
                "execute starts something new; a held command is followed with read_output \
                 (or withdrawn with terminate) on target.approval_id",
                "target.approval_id",
            )?;
            match m {
                Mode::Headless => check_headless_execute(intent, execution, target, output)?,
                Mode::Interactive => check_interactive_execute(intent, execution, target)?,
            }
            Ok(Some(m))
        }
    }
}

fn check_headless_execute(
    intent: Intent,
    execution: &Execution,
    target: &Target,
    output: &OutputOptions,
) -> Result<(), TermError> {
    forbid(
        target.terminal_id.is_some(),
        "mode headless forbids target.terminal_id for new execute requests",
        "target.terminal_id",
    )?;
    forbid(
        intent == Intent::OpenOnly,
        "intent open_only opens a terminal; it needs mode interactive",
        "invocation.intent",
    )?;
    forbid(
        execution.command.is_none(),
        "intent execute_command requires execution.command",
        "execution.command",
    )?;
    let interactive_only = [
        (execution.input.is_some(), "execution.input"),
        (execution.keys.is_some(), "execution.keys"),
        (execution.wait_for.is_some(), "execution.wait_for"),
        (execution.shell.is_some(), "execution.shell"),
        (execution.cols.is_some(), "execution.cols"),
        (execution.rows.is_some(), "execution.rows"),
        (execution.name.is_some(), "execution.name"),
        (output.cursor.is_some(), "output.cursor"),
        (output.view.is_some(), "output.view"),
    ];
    for (present, field) in interactive_only {
        forbid(
            present,
            &format!("{field} applies to interactive terminals, not headless execution"),
            field,
        )?;
    }
    Ok(())
}

fn check_interactive_execute(
    intent: Intent,
    execution: &mut Execution,
    target: &Target,
) -> Result<(), TermError> {
    let existing = target.terminal_id.is_some();
    match intent {
        Intent::OpenOnly => {
            forbid(
                execution.command.is_some(),
                "intent open_only requires execution.command to be absent",
                "execution.command",
            )?;
            forbid(
                execution.args.is_some(),
                "intent open_only takes no execution.args",
                "execution.args",
            )?;
            forbid(
                execution.has_raw_input(),
                "execution.input / keys are sent with intent execute_command",
                "execution.input",
            )?;
        }
        Intent::ExecuteCommand => {
            let has_input = execution.has_raw_input();
            if !existing {
                forbid(
                    has_input,
                    "execution.input / keys go to an existing terminal (target.terminal_id); a new terminal runs execution.command",
                    "execution.input",
                )?;
            }
            forbid(
                execution.command.is_none() && !has_input,
                if existing {
                    "intent execute_command requires execution.command (a command line) or execution.input / keys (raw input)"
                } else {
                    "intent execute_command requires execution.command"
                },
                "execution.command",
            )?;
            forbid(
                execution.command.is_some() && has_input,
                "send either execution.command (a command line) or execution.input / keys (raw input), not both",
                "execution.input",
            )?;
            typed_text(execution.command.as_deref(), "execution.command")?;
            for arg in execution.args.iter().flatten() {
                typed_text(Some(arg), "execution.args")?;
            }
        }
    }
    if existing {
        let new_terminal_only = [
            (execution.shell.is_some(), "execution.shell"),
            (execution.env.is_some(), "execution.env"),
            (execution.name.is_some(), "execution.name"),
        ];
        for (present, field) in new_terminal_only {
            forbid(
                present,
                &format!("{field} applies when opening a new terminal, not to target.terminal_id"),
                field,
            )?;
        }
    }
    forbid(
        execution.wait_for.is_some() && !execution.has_raw_input(),
        "execution.wait_for applies to execution.input / keys",
        "execution.wait_for",
    )?;
    if let Some(pattern) = &execution.wait_for {
        crate::text::wait_pattern::compile(pattern).map_err(|e| {
            TermError::payload(format!(
                "execution.wait_for is not a valid regular expression: {e}"
            ))
            .with("field", json!("execution.wait_for"))
        })?;
    }
    if let Some(shell) = &execution.shell {
        forbid(
            !SHELL_NAMES.contains(&shell.as_str()),
            "execution.shell must be bash, zsh, fish or sh: a request names a shell, the operator sets paths (PM_TERM_INTERACTIVE_SHELL)",
            "execution.shell",
        )?;
    }
    // Keys become bytes here, once: the layers below see only execution.input.
    if let Some(names) = execution.keys.take() {
        let mut data = execution.input.take().unwrap_or_default();
        let mut unknown = Vec::new();
        for n in &names {
            match keys::encode(n) {
                Some(seq) => data.push_str(&seq),
                None => unknown.push(n.clone()),
            }
        }
        if !unknown.is_empty() {
            return Err(
                TermError::payload(format!("unknown key names: {}", unknown.join(", ")))
                    .with("field", json!("execution.keys"))
                    .with("unknown", json!(unknown)),
            );
        }
        execution.input = Some(data);
    }
    // A program with argv runs in the shell as one safely quoted command line.
    if let (Some(cmd), Some(args)) = (&execution.command, execution.args.take()) {
        let mut words = vec![cmd.clone()];
        words.extend(args);
        execution.command = Some(shell_words::join(words));
    }
    Ok(())
}
