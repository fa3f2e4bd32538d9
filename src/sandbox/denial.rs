//! Recognising a command that failed because of the sandbox, from what it printed, so the
//! answer can say which write or which connection was refused and the agent does not retry
//! blindly. Programs report these failures in a handful of standard wordings (the C
//! library's `strerror` texts and the resolver's), which is what is matched here.

use serde::Serialize;

use super::{Level, Network, Sandbox};

/// How much of the end of a stream is searched (the failure is usually the last thing said).
pub const TAIL_BYTES: usize = 16 * 1024;

/// `strerror(EROFS)`: what a write outside the writable roots meets.
const READ_ONLY: &str = "Read-only file system";

/// `strerror(EACCES)`: what Landlock answers a refused write (and seccomp a refused socket).
const DENIED_BY_LANDLOCK: &str = "Permission denied";

/// Failures of a network call inside a sandbox without network.
const NETWORK_SIGNS: [&str; 9] = [
    "Couldn't connect to server",
    "Failed to connect",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
    "No address associated with hostname",
    "Connection refused",
    "Cannot assign requested address",
];

/// How clients report the allow-list proxy's refusal (its own words, curl's with `-f` and
/// through a tunnel, Python's urllib).
const PROXY_SIGNS: [&str; 4] = [
    super::proxy::DENIED,
    "returned error: 403",
    "tunnel failed, response 403",
    "HTTP Error 403",
];

/// What the sandbox refused, as far as the output tells.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Denial {
    /// `write` or `network`.
    pub kind: &'static str,
    /// The path or host refused, when the program named it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// What happened and what to do instead.
    pub message: String,
}

/// The sandbox's likely part in a failed command whose output ends with `tail`.
pub fn diagnose(sandbox: &Sandbox, tail: &str) -> Option<Denial> {
    let mechanism = sandbox.mechanism()?;
    let s = sandbox.settings();
    // bubblewrap refuses writes with EROFS; Landlock with EACCES, which a refused socket
    // also gives, so there a line must name a path to count as a write.
    let landlock = matches!(mechanism, super::Mechanism::Landlock { .. });
    let write_refused = |l: &str| {
        l.contains(READ_ONLY)
            || (landlock && l.contains(DENIED_BY_LANDLOCK) && path_in(l).is_some())
    };
    if s.level != Level::Off
        && let Some(line) = tail.lines().rev().find(|l| write_refused(l))
    {
        let target = path_in(line);
        let what = target
            .as_deref()
            .unwrap_or("a path outside the writable roots");
        return Some(Denial {
            kind: "write",
            message: format!(
                "The sandbox ({}) refused a write to {what}: only {} are writable. Write there \
                 instead; retrying the same write fails the same way.",
                s.level.as_str(),
                sandbox.writable_description()
            ),
            target,
        });
    }
    let allow_list = matches!(s.network, Network::Allow(_));
    let refused = |l: &str| {
        NETWORK_SIGNS.iter().any(|sign| l.contains(sign))
            || (allow_list && PROXY_SIGNS.iter().any(|sign| l.contains(sign)))
            || (landlock && l.contains(DENIED_BY_LANDLOCK) && path_in(l).is_none())
    };
    if s.network != Network::On
        && let Some(line) = tail.lines().rev().find(|l| refused(l))
    {
        let message = match &s.network {
            Network::Allow(domains) => format!(
                "The sandbox's network reaches only {} (and their subdomains), through its \
                 proxy (HTTP_PROXY/HTTPS_PROXY are set): this connection is not among them, and \
                 no retry will change that.",
                domains.join(", ")
            ),
            _ => format!(
                "The sandbox's network is {}: this connection cannot be made from here (no \
                 retry will change that). Work offline, or ask the operator for the network.",
                s.network
            ),
        };
        return Some(Denial {
            kind: "network",
            target: host_in(line),
            message,
        });
    }
    None
}

/// The path a failure line names: the first quoted one, else the last word before the
/// error's text that starts with `/` or `~` (the program's own name comes first:
/// `/bin/sh: 1: cannot create /etc/motd: Read-only file system`).
fn path_in(line: &str) -> Option<String> {
    for q in ['\'', '"', '‘', '`'] {
        let close = if q == '‘' { '’' } else { q };
        if let Some(start) = line.find(q) {
            let rest = &line[start + q.len_utf8()..];
            if let Some(end) = rest.find(close) {
                let p = &rest[..end];
                if p.starts_with('/') || p.starts_with('~') || p.starts_with('.') {
                    return Some(p.to_string());
                }
            }
        }
    }
    let before = line.split(READ_ONLY).next().unwrap_or(line);
    before
        .split(|c: char| c.is_whitespace() || c == ',')
        .map(|w| w.trim_end_matches(':'))
        .rfind(|w| w.len() > 1 && (w.starts_with('/') || w.starts_with("~/")))
        .map(str::to_string)
}

/// The host a network failure line names (`curl: (6) Could not resolve host: example.com`).
fn host_in(line: &str) -> Option<String> {
    if let Some(before) = line
        .split(super::proxy::DENIED)
        .next()
        .filter(|b| b.len() < line.len())
    {
        return before.split_whitespace().last().map(str::to_string);
    }
    let after = line.split("host:").nth(1)?;
    let host = after
        .split_whitespace()
        .next()?
        .trim_matches(|c| c == '\'' || c == '"');
    (!host.is_empty()).then(|| host.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_hosts_are_found_in_the_usual_wordings() {
        for (line, want) in [
            (
                "touch: cannot touch '/root/x': Read-only file system",
                "/root/x",
            ),
            (
                "/bin/sh: 1: cannot create /etc/motd: Read-only file system",
                "/etc/motd",
            ),
            (
                "OSError: [Errno 30] Read-only file system: '/home/u/.bashrc'",
                "/home/u/.bashrc",
            ),
            (
                "bash: /w/.git/config: Read-only file system",
                "/w/.git/config",
            ),
            (
                "cp: cannot create regular file ‘/opt/f’: Read-only file system",
                "/opt/f",
            ),
        ] {
            assert_eq!(path_in(line).as_deref(), Some(want), "{line}");
        }
        assert_eq!(
            host_in("curl: (6) Could not resolve host: example.com").as_deref(),
            Some("example.com")
        );
        let proxy = format!(
            "interactive-terminal-mcp sandbox: evil.test {} (a)",
            super::super::proxy::DENIED
        );
        assert_eq!(host_in(&proxy).as_deref(), Some("evil.test"));
    }
}
