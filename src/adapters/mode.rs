//! Runtime mode resolution (docs/contract.md, "Interactive") and the operator's adapter settings.
//!
//! Precedence is fixed: the request's `runtime.adapter_override` (when the operator allows
//! the adapter it names), then `PM_TERM_ADAPTER_MODE`, then `PM_RUNNING_IN_CONTAINER=true`,
//! then the default. `auto` — from the request or the environment — means "not said here":
//! the next source decides. The default in a container is `container_bridge`; outside one it
//! is `bundled` when the operator asked for the GUI (or configured a host binary) and `local`
//! otherwise: an embedded default that always works, on CI and servers without a display.

use std::str::FromStr;
use std::time::Duration;

use super::AdapterType;
use super::error::{AdapterError, Failure};
use super::paths::PathMap;

/// Default host alias tried first from a container (docs/bridge-protocol.md, "The container bridge").
pub const PRIMARY_ALIAS: &str = "host.containers.internal";
/// Default fallback alias (docs/bridge-protocol.md, "The container bridge").
pub const FALLBACK_ALIAS: &str = "host.docker.internal";
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 3_000;
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 30_000;
/// Bundled launch readiness timer (docs/operator-troubleshooting.md, section 1).
pub const DEFAULT_SPAWN_TIMEOUT_MS: u64 = 8_000;
pub const MAX_SPAWN_TIMEOUT_MS: u64 = 30_000;

/// The operator's adapter settings, parsed at start.
#[derive(Debug, Clone)]
pub struct AdapterInputs {
    /// `--adapter`; `None` is auto.
    pub adapter_mode: Option<AdapterType>,
    /// Adapters a request may name in `runtime.adapter_override`; unset: none with the GUI
    /// (the page must see every terminal), all without.
    pub adapter_overrides: Option<Vec<AdapterType>>,
    pub in_container: bool,
    pub gui: bool,
    pub binary: Option<String>,
    /// How long a launched host has to print its ready line.
    pub spawn_timeout: Duration,
    /// Port of a launched host (0: any).
    pub bundled_port: u16,
    pub keep_host: bool,
    /// The container bridge, checked at start; a request that needs a bridge answers its
    /// problems as `PM_TERM_INVALID_MODE` (the server itself keeps serving headless work).
    pub bridge: Result<BridgeSpec, AdapterError>,
    pub trace_bridge: bool,
}

impl Default for AdapterInputs {
    fn default() -> Self {
        AdapterInputs {
            adapter_mode: None,
            adapter_overrides: None,
            in_container: false,
            gui: false,
            binary: None,
            spawn_timeout: Duration::from_millis(DEFAULT_SPAWN_TIMEOUT_MS),
            bundled_port: 0,
            keep_host: false,
            bridge: bridge_spec(&BridgeInputs::default()),
            trace_bridge: false,
        }
    }
}

/// The container-bridge settings as the operator wrote them.
#[derive(Debug, Clone, Default)]
pub struct BridgeInputs {
    pub alias: Option<String>,
    pub fallback_alias: Option<String>,
    pub port: Option<String>,
    pub connect_timeout_ms: Option<String>,
    pub request_timeout_ms: Option<String>,
    pub token: Option<String>,
    /// `PM_TERM_PATH_MAP`: container directories and the host directories they mount.
    pub path_map: Option<String>,
}

/// `--adapter`: one of the adapters, or auto (`None`: the next source decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdapterChoice(pub Option<AdapterType>);

impl FromStr for AdapterChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_mode(s.trim(), "adapter")
            .map(AdapterChoice)
            .map_err(|e| e.to_string())
    }
}

/// `--adapter-overrides`: a comma-separated list of adapters, or `none`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterList(pub Vec<AdapterType>);

impl FromStr for AdapterList {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name == "none" {
                continue;
            }
            match parse_mode(name, "adapter override").map_err(|e| e.to_string())? {
                Some(a) if !out.contains(&a) => out.push(a),
                _ => {}
            }
        }
        Ok(AdapterList(out))
    }
}

fn parse_mode(value: &str, source: &str) -> Result<Option<AdapterType>, AdapterError> {
    match value {
        "local" => Ok(Some(AdapterType::Local)),
        "bundled" => Ok(Some(AdapterType::Bundled)),
        "container_bridge" => Ok(Some(AdapterType::ContainerBridge)),
        "auto" | "" => Ok(None),
        other => Err(AdapterError::new(
            Failure::Refused,
            format!("{source} {other:?} is not one of auto, local, bundled, container_bridge"),
        )
        .with(|f| {
            f.field = Some(source.to_string());
            f.supported = Some(
                ["auto", "local", "bundled", "container_bridge"]
                    .map(String::from)
                    .to_vec(),
            );
        })),
    }
}

/// The adapters a request may name, as the operator configured them.
pub fn allowed_overrides(inputs: &AdapterInputs) -> Vec<AdapterType> {
    match &inputs.adapter_overrides {
        Some(list) => list.clone(),
        None if inputs.gui => Vec::new(),
        None => vec![
            AdapterType::Local,
            AdapterType::Bundled,
            AdapterType::ContainerBridge,
        ],
    }
}

/// Which adapter serves a new interactive request.
pub fn resolve(
    request_override: Option<&str>,
    inputs: &AdapterInputs,
) -> Result<AdapterType, AdapterError> {
    let wanted = match request_override {
        Some(v) => parse_mode(v, "runtime.adapter_override")?,
        None => None,
    };
    if let Some(a) = wanted {
        let allowed = allowed_overrides(inputs);
        if !allowed.contains(&a) {
            let names = allowed.iter().map(|a| a.as_str().to_string()).collect();
            return Err(AdapterError::new(Failure::Refused, format!(
                "runtime.adapter_override {:?} is not allowed here: the operator decides where terminals run (PM_TERM_ADAPTER_OVERRIDES); leave it out",
                a.as_str()
            ))
            .with(|f| {
                f.field = Some("runtime.adapter_override".into());
                f.allowed = Some(names);
            }));
        }
        return Ok(a);
    }
    if let Some(a) = inputs.adapter_mode {
        return Ok(a);
    }
    if inputs.in_container {
        return Ok(AdapterType::ContainerBridge);
    }
    if inputs.gui || inputs.binary.is_some() {
        return Ok(AdapterType::Bundled);
    }
    Ok(AdapterType::Local)
}

/// Validated container-bridge inputs (docs/bridge-protocol.md, "The container bridge").
#[derive(Debug, Clone, PartialEq)]
pub struct BridgeSpec {
    pub aliases: Vec<String>,
    pub port: u16,
    pub connect_timeout_ms: u64,
    pub request_timeout_ms: u64,
    pub token: String,
    pub path_map: PathMap,
}

fn valid_host(h: &str) -> bool {
    !h.is_empty()
        && h.len() <= 253
        && h.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':' | b'[' | b']')
        })
}

/// Check the bridge inputs; anything missing or malformed is `PM_TERM_INVALID_MODE`.
pub fn bridge_spec(inputs: &BridgeInputs) -> Result<BridgeSpec, AdapterError> {
    let mut problems = Vec::new();
    let number =
        |name: &str, raw: &Option<String>, default: u64, problems: &mut Vec<String>| -> u64 {
            match raw.as_deref().map(str::trim) {
                None | Some("") => default,
                Some(v) => match v.parse::<u64>() {
                    Ok(n) if n > 0 => n,
                    Err(_) if v.bytes().all(|b| b.is_ascii_digit()) => {
                        problems.push(format!("{name} {v} is out of range"));
                        default
                    }
                    _ => {
                        problems.push(format!("{name} must be a positive integer, not {v:?}"));
                        default
                    }
                },
            }
        };
    let port = number(
        "PM_INTERACTIVE_TERMINAL_HOST_PORT",
        &inputs.port,
        u64::from(crate::host::DEFAULT_PORT),
        &mut problems,
    );
    if port > u64::from(u16::MAX) {
        problems.push(format!(
            "PM_INTERACTIVE_TERMINAL_HOST_PORT {port} is not a TCP port (1-65535)"
        ));
    }
    let connect = number(
        "PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS",
        &inputs.connect_timeout_ms,
        DEFAULT_CONNECT_TIMEOUT_MS,
        &mut problems,
    );
    let request = number(
        "PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS",
        &inputs.request_timeout_ms,
        DEFAULT_REQUEST_TIMEOUT_MS,
        &mut problems,
    );
    let mut aliases = Vec::new();
    for (name, value, default) in [
        ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", &inputs.alias, None),
        ("(primary alias)", &None, Some(PRIMARY_ALIAS)),
        (
            "PM_INTERACTIVE_TERMINAL_HOST_FALLBACK_ALIAS",
            &inputs.fallback_alias,
            Some(FALLBACK_ALIAS),
        ),
    ] {
        let v = value
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .or(default);
        if let Some(v) = v {
            if !valid_host(v) {
                problems.push(format!("{name} {v:?} is not a host name or address"));
            } else if !aliases.iter().any(|a| a == v) {
                aliases.push(v.to_string());
            }
        }
    }
    let token = inputs
        .token
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    if token.is_none() {
        problems.push("PM_INTERACTIVE_TERMINAL_TOKEN is required: the host service accepts no connection without its token".into());
    }
    let path_map = match PathMap::parse(inputs.path_map.as_deref().unwrap_or_default()) {
        Ok(m) => m,
        Err(p) => {
            problems.extend(p);
            PathMap::default()
        }
    };
    if !problems.is_empty() {
        return Err(AdapterError::new(
            Failure::NotConfigured,
            format!(
                "container_bridge is not configured: {}",
                problems.join("; ")
            ),
        )
        .with(|f| {
            f.problems = Some(problems);
            f.mode = Some("container_bridge");
        }));
    }
    Ok(BridgeSpec {
        aliases,
        port: port as u16,
        connect_timeout_ms: connect,
        request_timeout_ms: request,
        token: token.unwrap_or_default().to_string(),
        path_map,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> AdapterInputs {
        AdapterInputs::default()
    }

    #[test]
    fn precedence_is_request_then_env_then_container_then_default() {
        let mut i = inputs();
        assert_eq!(resolve(None, &i).ok(), Some(AdapterType::Local));
        i.in_container = true;
        assert_eq!(resolve(None, &i).ok(), Some(AdapterType::ContainerBridge));
        i.adapter_mode = Some(AdapterType::Bundled);
        assert_eq!(resolve(None, &i).ok(), Some(AdapterType::Bundled));
        assert_eq!(resolve(Some("local"), &i).ok(), Some(AdapterType::Local));
        // An explicit auto is the same as none: the environment decides.
        assert_eq!(resolve(Some("auto"), &i).ok(), Some(AdapterType::Bundled));
        i.adapter_mode = None;
        assert_eq!(
            resolve(Some("auto"), &i).ok(),
            Some(AdapterType::ContainerBridge)
        );
        let mut j = inputs();
        j.gui = true;
        assert_eq!(resolve(None, &j).ok(), Some(AdapterType::Bundled));
        j.gui = false;
        j.binary = Some("/x".into());
        assert_eq!(resolve(None, &j).ok(), Some(AdapterType::Bundled));
    }

    #[test]
    fn the_operator_limits_what_a_request_may_pick() {
        let mut i = inputs();
        i.gui = true;
        // With the GUI a request picks nothing but auto.
        assert_eq!(
            resolve(Some("local"), &i).map_err(|e| e.failure()).err(),
            Some(Some(Failure::Refused))
        );
        assert_eq!(resolve(Some("auto"), &i).ok(), Some(AdapterType::Bundled));
        i.adapter_overrides = "local, bundled".parse::<AdapterList>().ok().map(|l| l.0);
        assert_eq!(resolve(Some("local"), &i).ok(), Some(AdapterType::Local));
        assert!(resolve(Some("container_bridge"), &i).is_err());
        i.adapter_overrides = "none".parse::<AdapterList>().ok().map(|l| l.0);
        assert!(resolve(Some("local"), &i).is_err());
        assert!("bogus".parse::<AdapterList>().is_err());
        assert!("fancy".parse::<AdapterChoice>().is_err());
        assert_eq!("auto".parse::<AdapterChoice>(), Ok(AdapterChoice(None)));
    }

    #[test]
    fn unknown_modes_are_payload_errors() {
        let mut i = inputs();
        assert_eq!(
            resolve(Some("gui"), &i).map_err(|e| e.failure()).err(),
            Some(Some(Failure::Refused))
        );
        i.in_container = true;
        assert_eq!(
            resolve(Some("fancy"), &i).map_err(|e| e.failure()).err(),
            Some(Some(Failure::Refused))
        );
    }

    #[test]
    fn bridge_inputs_are_checked() {
        let mut i = BridgeInputs::default();
        assert_eq!(
            bridge_spec(&i).map_err(|e| e.failure()).err(),
            Some(Some(Failure::NotConfigured))
        );
        i.token = Some("t".into());
        let s = bridge_spec(&i).expect("defaults");
        assert_eq!(s.aliases, vec![PRIMARY_ALIAS, FALLBACK_ALIAS]);
        assert_eq!(
            (s.port, s.connect_timeout_ms, s.request_timeout_ms),
            (45459, 3000, 30000)
        );
        i.alias = Some("gateway.local".into());
        i.port = Some("4000".into());
        assert_eq!(bridge_spec(&i).map(|s| s.aliases.len()).ok(), Some(3));
        i.port = Some("70000".into());
        assert!(bridge_spec(&i).is_err());
        i.port = Some("abc".into());
        assert!(bridge_spec(&i).is_err());
        i.port = None;
        i.alias = Some("bad host".into());
        assert!(bridge_spec(&i).is_err());
    }
}
