//! parse → resolve alias → validate (schema + §2.3 coupling rules) → canonical [`Request`].
//!
//! Order matters for the error a caller sees: correlation ids are settled first so every
//! rejection carries them; an unknown action is `PM_TERM_INVALID_ACTION` before anything
//! else is looked at; an unsupported mode is `PM_TERM_INVALID_MODE` before the schema runs.

use serde_json::{Map, Value, json};

use super::alias::{self, Legacy, Phase, Resolved};
use super::error::{ErrorCode, TermError};
use super::keys;
use super::request::{
    Action, Compat, Correlation, Execution, Intent, Mode, OutputOptions, Request, Resolution,
    Runtime, Target,
};
use super::response::Ctx;
use super::schema;
use crate::ids;

/// Adapter names accepted in `runtime.adapter_override` (§5.2).
pub const ADAPTER_OVERRIDES: [&str; 4] = ["auto", "local", "bundled", "container_bridge"];

/// Shells a new terminal may name without a path.
pub const SHELL_NAMES: [&str; 4] = ["bash", "zsh", "sh", "fish"];

/// Legacy flat keys of the §1 table and where they live in the canonical request.
const FLAT_KEYS: [(&str, &str, &str); 9] = [
    ("command", "execution", "command"),
    ("args", "execution", "args"),
    ("env", "execution", "env"),
    ("name", "execution", "name"),
    ("cwd", "runtime", "cwd"),
    ("timeout", "runtime", "timeout_ms"),
    ("workspace_id", "runtime", "workspace_id"),
    ("session_id", "target", "session_id"),
    ("terminal_id", "target", "terminal_id"),
];

/// A rejected request: the context known so far, and why.
#[derive(Debug)]
pub struct Rejected {
    pub ctx: Ctx,
    pub error: TermError,
}

type Outcome<T> = Result<T, Box<Rejected>>;

fn reject(ctx: &Ctx, error: TermError) -> Box<Rejected> {
    Box::new(Rejected {
        ctx: ctx.clone(),
        error,
    })
}

/// Parse and validate one raw tool-call argument object.
pub fn parse(raw: &Value, phase: Phase) -> Outcome<Request> {
    let mut ctx = Ctx::default();
    let Some(obj) = raw.as_object() else {
        ctx.correlation = fresh_correlation(None);
        return Err(reject(
            &ctx,
            TermError::payload("the request must be a JSON object"),
        ));
    };
    ctx.correlation = fresh_correlation(obj.get("correlation"));

    // 1. The action, and the alias behind it.
    let action_name = match obj.get("action") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(reject(
                &ctx,
                TermError::payload("action must be a string").with("field", json!("action")),
            ));
        }
        None => {
            return Err(reject(
                &ctx,
                TermError::payload("action is required").with("field", json!("action")),
            ));
        }
    };
    let legacy = match alias::resolve(&action_name) {
        None => return Err(reject(&ctx, unknown_action(&action_name))),
        Some(Resolved::Canonical(a)) => {
            ctx.action = Some(a);
            None
        }
        Some(Resolved::Alias(l)) => {
            ctx.action = Some(l.canonical());
            if phase == Phase::C {
                return Err(reject(
                    &ctx,
                    TermError::new(
                        ErrorCode::InvalidAction,
                        format!(
                            "legacy action {:?} is no longer accepted: {}",
                            l.as_str(),
                            l.migration_hint()
                        ),
                    )
                    .with("action", json!(l.as_str()))
                    .with("canonical_action", json!(l.canonical().as_str()))
                    .with("migration", json!(l.migration_hint())),
                ));
            }
            Some(l)
        }
    };
    let action = ctx.action.unwrap_or(Action::List);
    ctx.resolution = Resolution {
        canonical_action: Some(action),
        alias_applied: legacy.is_some(),
        legacy_action: legacy.map(|l| l.as_str().to_string()),
        mode: None,
        deprecation: match (legacy, phase) {
            (Some(l), Phase::B) => Some(l.deprecation_warning()),
            _ => None,
        },
    };

    // 2. An unsupported mode is its own error class (§3.1 PM_TERM_INVALID_MODE).
    if let Some(Value::String(m)) = obj.get("invocation").and_then(|i| i.get("mode")) {
        if Mode::parse(m).is_none() {
            return Err(reject(
                &ctx,
                TermError::new(
                    ErrorCode::InvalidMode,
                    format!("invocation.mode {m:?} is not supported"),
                )
                .with("mode", json!(m))
                .with("supported", json!(["interactive", "headless"])),
            ));
        }
    }

    // 3. Shape and types, against schemas/request.schema.json.
    let violations =
        schema::check_request(raw).map_err(|e| reject(&ctx, TermError::internal(e)))?;
    if !violations.is_empty() {
        let first = &violations[0];
        let list: Vec<Value> = violations
            .iter()
            .map(|v| json!({"path": v.path, "message": v.message}))
            .collect();
        return Err(reject(
            &ctx,
            TermError::payload(format!("{}: {}", first.path, first.message))
                .with("violations", Value::Array(list)),
        ));
    }

    // 4. Legacy flat keys move to their canonical places.
    let nested = move_flat_keys(obj).map_err(|e| reject(&ctx, e))?;
    let group = |name: &str| nested.get(name).cloned().unwrap_or(Value::Null);
    let de = |name: &str| TermError::payload(format!("{name} is malformed"));
    let mut runtime: Runtime =
        from_group(group("runtime")).map_err(|_| reject(&ctx, de("runtime")))?;
    let mut execution: Execution =
        from_group(group("execution")).map_err(|_| reject(&ctx, de("execution")))?;
    let target: Target = from_group(group("target")).map_err(|_| reject(&ctx, de("target")))?;
    let output: OutputOptions =
        from_group(group("output")).map_err(|_| reject(&ctx, de("output")))?;
    let compat: Compat = from_group(group("compat")).map_err(|_| reject(&ctx, de("compat")))?;
    let invocation = nested.get("invocation");
    let mut mode = invocation
        .and_then(|i| i.get("mode"))
        .and_then(Value::as_str)
        .and_then(Mode::parse);
    let mut intent: Option<Intent> = invocation
        .and_then(|i| i.get("intent"))
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    ctx.session_id = target.session_id.clone();
    ctx.terminal_id = target.terminal_id.clone();

    // 5. The alias transform (§1 "Required Transform").
    if let Some(l) = legacy {
        apply_alias(l, &mut mode, &mut intent, &execution, &target).map_err(|e| reject(&ctx, e))?;
    }

    // 6. compat.legacy_action must name exactly one canonical action, this one.
    if let Some(la) = &compat.legacy_action {
        let maps_to = match alias::resolve(la) {
            Some(Resolved::Canonical(a)) => a,
            Some(Resolved::Alias(l)) => l.canonical(),
            None => {
                return Err(reject(
                    &ctx,
                    unknown_action(la).with("field", json!("compat.legacy_action")),
                ));
            }
        };
        if maps_to != action {
            return Err(reject(
                &ctx,
                TermError::payload(format!(
                    "compat.legacy_action {la:?} maps to {:?}, not to this request's action {:?}",
                    maps_to.as_str(),
                    action.as_str()
                ))
                .with("field", json!("compat.legacy_action")),
            ));
        }
    }

    // 7. Runtime fields with rules of their own.
    check_runtime(&mut runtime).map_err(|e| reject(&ctx, e))?;

    // 8. §2.3 coupling and mode constraints, per action.
    let has_invocation = invocation.is_some_and(|i| i.as_object().is_some_and(|o| !o.is_empty()));
    let resolved_mode = check_coupling(
        action,
        &mut mode,
        intent,
        has_invocation,
        &mut execution,
        &target,
        &output,
        nested.contains_key("output"),
        nested.contains_key("execution"),
        nested.contains_key("target"),
    )
    .map_err(|e| {
        let mut c = ctx.clone();
        c.resolution.mode = mode;
        reject(&c, e)
    })?;
    ctx.resolution.mode = resolved_mode;

    Ok(Request {
        action,
        mode: resolved_mode,
        intent,
        correlation: ctx.correlation,
        resolution: ctx.resolution,
        runtime,
        execution,
        target,
        output,
        compat,
    })
}

/// Correlation ids: the caller's when usable, generated otherwise. Malformed caller ids are
/// replaced here and reported by the schema check, so even that rejection is correlated.
/// The caller's correlation ids when acceptable, fresh ones otherwise (§2.3: generated when
/// absent, trace_id propagated unchanged).
pub fn fresh_correlation(raw: Option<&Value>) -> Correlation {
    let get = |k: &str| {
        raw.and_then(|c| c.get(k))
            .and_then(Value::as_str)
            .filter(|s| ids::is_acceptable_external_id(s))
            .map(str::to_string)
    };
    Correlation {
        request_id: get("request_id").unwrap_or_else(|| ids::new_id(ids::REQUEST)),
        trace_id: get("trace_id").unwrap_or_else(|| ids::new_id(ids::TRACE)),
        client_request_id: get("client_request_id"),
    }
}

fn unknown_action(name: &str) -> TermError {
    TermError::new(
        ErrorCode::InvalidAction,
        format!(
            "unknown action {name:?}; canonical actions are execute, read_output, terminate, list"
        ),
    )
    .with("action", json!(name))
    .with(
        "canonical_actions",
        json!(["execute", "read_output", "terminate", "list"]),
    )
    .with(
        "migration",
        json!("use one of the canonical actions; legacy run, kill, send, close and create are aliases of execute and terminate"),
    )
}

fn from_group<T: serde::de::DeserializeOwned + Default>(v: Value) -> Result<T, serde_json::Error> {
    if v.is_null() {
        Ok(T::default())
    } else {
        serde_json::from_value(v)
    }
}

/// Copy the request, moving each legacy flat key into its nested group. A key given both
/// ways with different values is ambiguous and rejected.
fn move_flat_keys(obj: &Map<String, Value>) -> Result<Map<String, Value>, TermError> {
    let mut out = obj.clone();
    for (flat, group, field) in FLAT_KEYS {
        let Some(v) = out.remove(flat) else { continue };
        let g = out
            .entry(group.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(gm) = g else {
            return Err(TermError::payload(format!("{group} must be an object")));
        };
        match gm.get(field) {
            Some(existing) if existing != &v => {
                return Err(TermError::payload(format!(
                    "{flat} and {group}.{field} disagree; send one of them"
                ))
                .with("field", json!(flat)));
            }
            _ => {
                gm.insert(field.to_string(), v);
            }
        }
    }
    Ok(out)
}

fn apply_alias(
    l: Legacy,
    mode: &mut Option<Mode>,
    intent: &mut Option<Intent>,
    execution: &Execution,
    target: &Target,
) -> Result<(), TermError> {
    let want_intent = l.intent(execution.command.is_some());
    match (*intent, want_intent) {
        (None, w) => *intent = w,
        (Some(have), Some(w)) if have != w => {
            return Err(TermError::payload(format!(
                "legacy action {:?} implies invocation.intent {:?}; it cannot be combined with another intent",
                l.as_str(),
                match w {
                    Intent::OpenOnly => "open_only",
                    Intent::ExecuteCommand => "execute_command",
                }
            )));
        }
        _ => {}
    }
    if mode.is_none() {
        *mode = l.default_mode();
    }
    match l {
        Legacy::Send | Legacy::Close if target.terminal_id.is_none() => Err(TermError::payload(
            format!("legacy action {:?} needs terminal_id", l.as_str()),
        )
        .with("field", json!("target.terminal_id"))),
        Legacy::Create if target.terminal_id.is_some() => Err(TermError::payload(
            "legacy action \"create\" opens a new terminal; it takes no terminal_id (use send)",
        )
        .with("field", json!("target.terminal_id"))),
        _ => Ok(()),
    }
}

fn check_runtime(runtime: &mut Runtime) -> Result<(), TermError> {
    if let Some(o) = &runtime.adapter_override {
        if !ADAPTER_OVERRIDES.contains(&o.as_str()) {
            return Err(TermError::payload(format!(
                "runtime.adapter_override {o:?} is not one of auto, local, bundled, container_bridge"
            ))
            .with("field", json!("runtime.adapter_override"))
            .with("supported", json!(ADAPTER_OVERRIDES)));
        }
    }
    if let Some(p) = &runtime.binary_path {
        if !std::path::Path::new(p).is_absolute() {
            return Err(TermError::payload(format!(
                "runtime.binary_path {p:?} is relative; configured binary paths must be absolute"
            ))
            .with("field", json!("runtime.binary_path")));
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

/// The §2.3 rules. Returns the request's resolved mode.
#[allow(clippy::too_many_arguments)]
fn check_coupling(
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
                &format!("{name} requires target.session_id or target.terminal_id"),
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
        regex::Regex::new(pattern).map_err(|e| {
            TermError::payload(format!(
                "execution.wait_for is not a valid regular expression: {e}"
            ))
            .with("field", json!("execution.wait_for"))
        })?;
    }
    if let Some(shell) = &execution.shell {
        forbid(
            !(SHELL_NAMES.contains(&shell.as_str()) || std::path::Path::new(shell).is_absolute()),
            "execution.shell must be bash, zsh, sh, fish or an absolute path",
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
