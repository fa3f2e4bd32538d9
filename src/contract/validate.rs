//! parse → resolve alias → validate (schema + coupling rules, docs/contract.md "The pipeline") → canonical [`Request`].
//!
//! Order matters for the error a caller sees: correlation ids are settled first so every
//! rejection carries them; an unknown action is `PM_TERM_INVALID_ACTION` before anything
//! else is looked at; an unsupported mode is `PM_TERM_INVALID_MODE` before the schema runs.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::alias::{self, Legacy, Phase, Resolved};
use super::coupling::{check_coupling, check_no_nul, check_runtime};
use super::error::{ErrorCode, TermError};
use super::request::{
    Action, Compat, Correlation, Execution, Intent, ListOptions, Mode, OutputOptions, Request,
    Resolution, Runtime, Target,
};
use super::response::Envelope;
use super::schema;
use crate::ids;

/// Legacy flat keys and where they live in the canonical request.
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
    pub envelope: Envelope,
    pub error: TermError,
}

type Outcome<T> = Result<T, Box<Rejected>>;

fn reject(env: &Envelope, error: TermError) -> Box<Rejected> {
    Box::new(Rejected {
        envelope: env.clone(),
        error,
    })
}

/// Parse and validate one raw tool-call argument object.
pub fn parse(raw: &Value, phase: Phase) -> Outcome<Request> {
    let mut env = Envelope::default();
    let Some(obj) = raw.as_object() else {
        env.correlation = fresh_correlation(None);
        return Err(reject(
            &env,
            TermError::payload("the request must be a JSON object"),
        ));
    };
    env.correlation = fresh_correlation(obj.get("correlation"));

    // 1. The action, and the alias behind it.
    let legacy = resolve_action(obj, phase, &mut env)?;
    let action = env.action.unwrap_or(Action::List);

    // 2. An unsupported mode is its own error class (PM_TERM_INVALID_MODE).
    if let Some(Value::String(m)) = obj.get("invocation").and_then(|i| i.get("mode"))
        && Mode::parse(m).is_none()
    {
        return Err(reject(
            &env,
            TermError::new(
                ErrorCode::InvalidMode,
                format!("invocation.mode {m:?} is not supported"),
            )
            .with("mode", json!(m))
            .with("supported", json!(["interactive", "headless"])),
        ));
    }

    // 2b. Fields only the operator sets: a request cannot choose a program to launch.
    if let Some(e) = operator_only(obj) {
        return Err(reject(&env, e));
    }

    // 3. Shape and types, against schemas/request.schema.json.
    check_shape(raw).map_err(|e| reject(&env, e))?;

    // 4. Legacy flat keys move to their canonical places.
    let nested = move_flat_keys(obj).map_err(|e| reject(&env, e))?;
    let group = |name: &str| nested.get(name);
    let de = |name: &str| TermError::payload(format!("{name} is malformed"));
    let mut runtime: Runtime =
        from_group(group("runtime")).map_err(|_| reject(&env, de("runtime")))?;
    let mut execution: Execution =
        from_group(group("execution")).map_err(|_| reject(&env, de("execution")))?;
    let target: Target = from_group(group("target")).map_err(|_| reject(&env, de("target")))?;
    let output: OutputOptions =
        from_group(group("output")).map_err(|_| reject(&env, de("output")))?;
    let compat: Compat = from_group(group("compat")).map_err(|_| reject(&env, de("compat")))?;
    let listing: ListOptions =
        from_group(group("listing")).map_err(|_| reject(&env, de("listing")))?;
    if action != Action::List && nested.contains_key("listing") {
        return Err(reject(
            &env,
            TermError::payload("listing is for list only").with("field", json!("listing")),
        ));
    }
    let invocation = nested.get("invocation");
    let mut mode = invocation
        .and_then(|i| i.get("mode"))
        .and_then(Value::as_str)
        .and_then(Mode::parse);
    let mut intent: Option<Intent> = invocation
        .and_then(|i| i.get("intent"))
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    env.identity = super::response::Identity {
        session_id: target.session_id.clone(),
        terminal_id: target.terminal_id.clone(),
        approval_id: target.approval_id.clone(),
    };

    // 5. The alias transform.
    if let Some(l) = legacy {
        apply_alias(l, &mut mode, &mut intent, &execution, &target).map_err(|e| reject(&env, e))?;
    }

    // 6. compat.legacy_action must name exactly one canonical action, this one.
    if let Some(la) = &compat.legacy_action {
        check_legacy_action(la, action).map_err(|e| reject(&env, e))?;
    }

    // 7. Runtime fields with rules of their own; no NUL in what becomes a C string.
    check_runtime(&mut runtime).map_err(|e| reject(&env, e))?;
    check_no_nul(&execution, &runtime).map_err(|e| reject(&env, e))?;

    // 8. Coupling and mode constraints, per action.
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
        let mut c = env.clone();
        c.resolution.mode = mode;
        reject(&c, e)
    })?;
    env.resolution.mode = resolved_mode;

    Ok(Request {
        listing,
        action,
        mode: resolved_mode,
        intent,
        correlation: env.correlation,
        resolution: env.resolution,
        runtime,
        execution,
        target,
        output,
        compat,
        runs_project_code: false,
    })
}

/// The request's action, canonical, and the legacy alias it was sent as (refused in phase
/// C); the envelope learns both, so every later refusal names them.
fn resolve_action(
    obj: &Map<String, Value>,
    phase: Phase,
    env: &mut Envelope,
) -> Outcome<Option<Legacy>> {
    let action_name = match obj.get("action") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(reject(
                env,
                TermError::payload("action must be a string").with("field", json!("action")),
            ));
        }
        None => {
            return Err(reject(
                env,
                TermError::payload("action is required").with("field", json!("action")),
            ));
        }
    };
    let legacy = match alias::resolve(&action_name) {
        None => return Err(reject(env, unknown_action(&action_name))),
        Some(Resolved::Canonical(a)) => {
            env.action = Some(a);
            None
        }
        Some(Resolved::Alias(l)) => {
            env.action = Some(l.canonical());
            if phase == Phase::C {
                return Err(reject(
                    env,
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
                    .with("migration", json!(l.migration_hint()))
                    .with_hint(
                        Some(l.canonical()),
                        format!(
                            "Legacy action {:?} is retired: send the same request as action {:?} ({}).",
                            l.as_str(),
                            l.canonical().as_str(),
                            l.migration_hint()
                        ),
                    ),
                ));
            }
            Some(l)
        }
    };
    let action = env.action.unwrap_or(Action::List);
    env.resolution = Resolution {
        canonical_action: Some(action),
        alias_applied: legacy.is_some(),
        legacy_action: legacy.map(|l| l.as_str().to_string()),
        mode: None,
        deprecation: match (legacy, phase) {
            (Some(l), Phase::B) => Some(l.deprecation_warning()),
            _ => None,
        },
    };
    Ok(legacy)
}

/// The request against schemas/request.schema.json: the first violation names the refusal,
/// all of them are in its details.
fn check_shape(raw: &Value) -> Result<(), TermError> {
    let violations = schema::check_request(raw).map_err(TermError::internal)?;
    if let Some(first) = violations.first() {
        let list: Vec<Value> = violations
            .iter()
            .map(|v| json!({"path": v.path, "message": v.message}))
            .collect();
        return Err(
            TermError::payload(format!("{}: {}", first.path, first.message))
                .with("violations", Value::Array(list)),
        );
    }
    Ok(())
}

/// `compat.legacy_action` must name exactly one canonical action: the request's own.
fn check_legacy_action(la: &str, action: Action) -> Result<(), TermError> {
    let maps_to = match alias::resolve(la) {
        Some(Resolved::Canonical(a)) => a,
        Some(Resolved::Alias(l)) => l.canonical(),
        None => return Err(unknown_action(la).with("field", json!("compat.legacy_action"))),
    };
    if maps_to != action {
        return Err(TermError::payload(format!(
            "compat.legacy_action {la:?} maps to {:?}, not to this request's action {:?}",
            maps_to.as_str(),
            action.as_str()
        ))
        .with("field", json!("compat.legacy_action")));
    }
    Ok(())
}

/// Correlation ids: the caller's when usable, generated otherwise. Malformed caller ids are
/// replaced here and reported by the schema check, so even that rejection is correlated.
/// The caller's correlation ids when acceptable, fresh ones otherwise (generated when
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

/// Settings that were once request fields and belong to the operator alone, with where the
/// operator sets them.
const OPERATOR_ONLY: &[(&str, &str, &str)] =
    &[("runtime", "binary_path", "PM_INTERACTIVE_TERMINAL_BINARY")];

fn operator_only(obj: &Map<String, Value>) -> Option<TermError> {
    OPERATOR_ONLY.iter().find_map(|(group, field, setting)| {
        let sent = obj
            .get(*group)
            .and_then(Value::as_object)
            .is_some_and(|g| g.contains_key(*field))
            || obj.contains_key(*field);
        sent.then(|| {
            TermError::payload(format!(
                "{group}.{field} is an operator setting ({setting}); a request cannot choose a program to launch"
            ))
            .with("field", json!(format!("{group}.{field}")))
        })
    })
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

/// One group of the request as its typed value, read from the request in place (every
/// request passes here: a copy of each group first was a share of its CPU).
fn from_group<T: serde::de::DeserializeOwned + Default>(
    v: Option<&Value>,
) -> Result<T, serde_json::Error> {
    match v {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => T::deserialize(v),
    }
}

/// The request with each legacy flat key moved into its nested group: the request itself
/// when it has none (the canonical form every current client sends), else a copy. A key
/// given both ways with different values is ambiguous and rejected.
fn move_flat_keys(obj: &Map<String, Value>) -> Result<Cow<'_, Map<String, Value>>, TermError> {
    if !FLAT_KEYS.iter().any(|(flat, _, _)| obj.contains_key(*flat)) {
        return Ok(Cow::Borrowed(obj));
    }
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
    Ok(Cow::Owned(out))
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
