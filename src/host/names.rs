//! The names this service answers to, for the `Host` and `Origin` checks.
//!
//! A page on another site can make a browser resolve its own name to 127.0.0.1 (DNS
//! rebinding) and talk to a loopback service as if it were its own origin; the `Host`
//! header then still carries the attacker's name. So `Host` must be an IP address, or a
//! name the operator lists (`localhost`, and the container aliases the bridge connects with,
//! by default). The port is not judged: tunnels and port mappings change it, and a rebinding
//! attacker cannot change the name. A browser's `Origin` must be `http://` and one of those:
//! a script from any other origin cannot open the WebSocket. (A page session is further bound
//! to this service's exact origin, port included: `http::same_origin`.)

use std::net::IpAddr;

/// Names allowed by default besides IP addresses: loopback, and the container aliases a
/// bridged MCP server connects with (docs/bridge-protocol.md).
pub const DEFAULT_NAMES: &[&str] = &[
    "localhost",
    "host.containers.internal",
    "host.docker.internal",
];

#[derive(Debug, Clone)]
pub struct Names {
    names: Vec<String>,
}

impl Names {
    pub fn new(extra: &[String]) -> Names {
        let mut names: Vec<String> = DEFAULT_NAMES.iter().map(|s| s.to_string()).collect();
        names.extend(
            extra
                .iter()
                .map(|n| n.trim().to_ascii_lowercase())
                .filter(|n| !n.is_empty()),
        );
        Names { names }
    }

    /// A `Host` header value: `host[:port]`.
    pub fn allows_host(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        let (name, port) = split_authority(&host);
        let port_ok = port.is_none_or(|p| p.parse::<u16>().is_ok());
        let name_ok = name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok()
            || self.names.iter().any(|n| *n == name);
        port_ok && name_ok
    }

    /// An `Origin` header value: `http://` and an allowed host.
    pub fn allows_origin(&self, origin: &str) -> bool {
        origin
            .trim()
            .strip_prefix("http://")
            .is_some_and(|authority| self.allows_host(authority))
    }
}

/// `name` and `port` of an authority (IPv6 literals keep their brackets).
fn split_authority(a: &str) -> (&str, Option<&str>) {
    if a.starts_with('[') {
        return match a.find(']') {
            Some(end) => (&a[..=end], a[end + 1..].strip_prefix(':')),
            None => (a, None),
        };
    }
    match a.rsplit_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (a, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_names_and_addresses() {
        let n = Names::new(&["gateway.local".into()]);
        for ok in [
            "127.0.0.1:45459",
            "localhost:45459",
            "localhost",
            "[::1]:45459",
            "LOCALHOST:8080",
            "host.docker.internal:45459",
            "192.168.1.7:45459",
            "gateway.local:45459",
        ] {
            assert!(n.allows_host(ok), "{ok}");
        }
        for bad in [
            "rebind.evil.example:45459",
            "127.0.0.1:notaport",
            "evil.localhost.example:45459",
            "",
        ] {
            assert!(!n.allows_host(bad), "{bad}");
        }
        assert!(n.allows_origin("http://127.0.0.1:45459"));
        assert!(!n.allows_origin("http://evil.example"));
        assert!(!n.allows_origin("https://127.0.0.1:45459"));
        assert!(!n.allows_origin("null"));
    }
}
