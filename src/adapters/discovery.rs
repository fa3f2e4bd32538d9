//! Finding and launching the `interactive-terminal` host for the bundled adapter
//! (docs/operator-troubleshooting.md, section 1): candidates in strict order (configured absolute path, the binary beside
//! this server, PATH), first valid one wins, a readiness handshake with a bounded timer,
//! one retry for transient failures only, and never anything destructive.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::error::{AdapterError, Failure};
use crate::process::reaper;
use crate::terminal::shell::is_executable;

/// The host binary's name.
pub const HOST_BINARY: &str = "interactive-terminal";
/// Launch attempts per candidate: one retry for transient failures.
const ATTEMPTS_PER_CANDIDATE: usize = 2;

pub use super::error::{Candidate, SpawnError};

/// A host this server launched.
pub struct Launched {
    pub child: Child,
    pub address: String,
    pub token: String,
    pub candidate: Candidate,
    pub ready: Value,
}

/// The candidates, in order. A relative configured path is refused.
pub fn candidates(configured: Option<&str>) -> Result<Vec<Candidate>, AdapterError> {
    let mut out: Vec<Candidate> = Vec::new();
    if let Some(c) = configured {
        if !Path::new(c).is_absolute() {
            return Err(AdapterError::new(
                Failure::Refused,
                format!("configured host binary {c:?} is relative; it must be an absolute path"),
            )
            .with(|f| {
                f.field = Some("PM_INTERACTIVE_TERMINAL_BINARY / runtime.binary_path".into())
            }));
        }
        out.push(Candidate {
            source: "configured",
            path: c.to_string(),
        });
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
    {
        out.push(Candidate {
            source: "bundled",
            path: dir.join(HOST_BINARY).display().to_string(),
        });
    }
    if let Some(p) = crate::terminal::shell::which(HOST_BINARY) {
        out.push(Candidate {
            source: "path",
            path: p.display().to_string(),
        });
    }
    let mut seen = Vec::new();
    out.retain(|c| {
        let key = std::fs::canonicalize(&c.path).unwrap_or_else(|_| PathBuf::from(&c.path));
        if seen.contains(&key) {
            false
        } else {
            seen.push(key);
            true
        }
    });
    Ok(out)
}

pub struct LaunchSpec {
    pub port: u16,
    pub spawn_timeout: Duration,
    pub trace_id: String,
    pub runtime_session_id: String,
    pub token: String,
}

enum LaunchFailure {
    /// Missing executable, bad permissions: move on, no retry.
    Validation(String),
    /// Address in use, startup race, no ready line in time: retry once.
    Transient(String),
}

async fn launch_once(c: &Candidate, spec: &LaunchSpec) -> Result<Launched, LaunchFailure> {
    let path = Path::new(&c.path);
    if !path.exists() {
        return Err(LaunchFailure::Validation("no such file".into()));
    }
    if !is_executable(path) {
        return Err(LaunchFailure::Validation("not an executable file".into()));
    }
    let mut cmd = Command::new(path);
    cmd.args([
        "--bind",
        "127.0.0.1",
        "--port",
        &spec.port.to_string(),
        "--trace-id",
        &spec.trace_id,
        "--runtime-session-id",
        &spec.runtime_session_id,
        // The host ends when this pipe closes: with this server, even when it is killed.
        "--lifeline",
    ])
    .env(crate::token::HOST_TOKEN_VARIABLE, &spec.token)
    // The host this server launches confines its terminals as this server was told to.
    .envs(crate::sandbox::current().settings().to_env())
    // And contains them as this server contains its own sessions.
    .env(
        "PM_TERM_CONTAINMENT",
        if crate::process::namespace::subreaper_only() {
            "subreaper"
        } else {
            "auto"
        },
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit())
    .kill_on_drop(true);
    // The host raises its own open-file limit, and gives its terminals the one it was
    // given: the user's, not this server's raised one.
    crate::process::open_files::give_back(&mut cmd);
    let mut child = {
        let mut guard = reaper::spawn_guard();
        let child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => {
                LaunchFailure::Validation(e.to_string())
            }
            _ => LaunchFailure::Transient(e.to_string()),
        })?;
        if let Some(pid) = child.id() {
            guard.register(pid as i32);
        }
        child
    };
    let Some(stdout) = child.stdout.take() else {
        return Err(LaunchFailure::Transient("no stdout from the host".into()));
    };
    let mut lines = BufReader::new(stdout).lines();
    let first = tokio::time::timeout(spec.spawn_timeout, lines.next_line()).await;
    let line = match first {
        Ok(Ok(Some(l))) => l,
        Ok(_) => {
            let status = child.wait().await.ok();
            return Err(LaunchFailure::Transient(format!(
                "the host exited before it was ready ({status:?})"
            )));
        }
        Err(_) => {
            // Only our own child is ever killed: discovery never ends another process.
            let _ = child.kill().await;
            return Err(LaunchFailure::Transient(format!(
                "no ready line within {} ms",
                spec.spawn_timeout.as_millis()
            )));
        }
    };
    let ready: Value = serde_json::from_str(&line).map_err(|_| {
        LaunchFailure::Validation(format!(
            "not an interactive-terminal host (first line {line:?})"
        ))
    })?;
    if ready["event"] == "error" {
        let err = ready["error"].as_str().unwrap_or("").to_string();
        let _ = child.wait().await;
        return Err(if err.contains("in use") || err.contains("AddrInUse") {
            LaunchFailure::Transient(err)
        } else {
            LaunchFailure::Validation(err)
        });
    }
    let version = ready["protocol_version"].as_str().unwrap_or("").to_string();
    if !matches!(
        ahp_types::negotiate_protocol_version(std::slice::from_ref(&version)),
        Ok(Some(_))
    ) {
        let _ = child.kill().await;
        return Err(LaunchFailure::Validation(format!(
            "incompatible protocol version {version:?}"
        )));
    }
    let Some(address) = ready["address"].as_str().map(String::from) else {
        let _ = child.kill().await;
        return Err(LaunchFailure::Validation(
            "the ready line has no address".into(),
        ));
    };
    // Keep draining stdout so the host never writes into a closed pipe.
    tokio::spawn(async move {
        while let Ok(Some(l)) = lines.next_line().await {
            tracing::debug!(line = %l, "host stdout");
        }
    });
    Ok(Launched {
        child,
        address,
        token: spec.token.clone(),
        candidate: c.clone(),
        ready,
    })
}

/// Launch the first candidate that comes up; every failure is kept for the answer.
pub async fn launch(configured: Option<&str>, spec: &LaunchSpec) -> Result<Launched, AdapterError> {
    let cands = candidates(configured)?;
    let mut errors: Vec<SpawnError> = Vec::new();
    for c in &cands {
        for attempt in 1..=ATTEMPTS_PER_CANDIDATE {
            match launch_once(c, spec).await {
                Ok(l) => {
                    tracing::info!(source = c.source, path = %c.path, address = %l.address, "launched the interactive-terminal host");
                    return Ok(l);
                }
                Err(LaunchFailure::Validation(e)) => {
                    errors.push(SpawnError {
                        source: c.source,
                        path: c.path.clone(),
                        attempt,
                        transient: false,
                        error: e,
                    });
                    break;
                }
                Err(LaunchFailure::Transient(e)) => {
                    errors.push(SpawnError {
                        source: c.source,
                        path: c.path.clone(),
                        attempt,
                        transient: true,
                        error: e,
                    });
                }
            }
        }
    }
    if !cands.iter().any(|c| c.source == "path") {
        // Say that PATH was searched too, so the operator does not wonder.
        errors.push(SpawnError {
            source: "path",
            path: HOST_BINARY.to_string(),
            attempt: 1,
            transient: false,
            error: format!(
                "not found on PATH ({})",
                std::env::var("PATH").unwrap_or_default()
            ),
        });
    }
    let tried = cands.len();
    Err(AdapterError::new(
        Failure::Unavailable,
        format!("no interactive-terminal host could be started ({tried} candidates tried)"),
    )
    .with(|f| {
        f.attempted_candidates = Some(cands);
        f.spawn_errors = Some(errors);
        f.next_action = Some("install interactive-terminal beside this server or on PATH, set PM_INTERACTIVE_TERMINAL_BINARY to its absolute path, or run in headless mode".into());
    }))
}
