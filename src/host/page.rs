//! The page a person opens, and how their browser signs in without a token in any URL.
//!
//! The host keeps one one-time login code at a time and prints a link with it on its stderr
//! (`/login?code=…`), at start and each time a code is used. The link's page trades the code
//! for a page session (`POST /session`, from this origin only) and keeps it in the browser's
//! `localStorage`, which belongs to this exact origin — scheme, address *and port* — and
//! sends it only on the page's own WebSocket, as a subprotocol (`itmcp-session.<session>`),
//! with an `Origin` that must be this service's own. A cookie was tried first: browsers send
//! a cookie to every port of the address, so a page the agent served on another loopback
//! port, opened once by the signed-in person, approved its own commands, and its server
//! received the cookie. The used code is worthless, so a link copied from a log cannot sign
//! in a second browser.
//!
//! A page session is a person (`Role::Page`): it may approve, type into and terminate any
//! terminal; a program with the token is a client (`Role::Client`) and may not approve.
//! Sessions are signed with a key of their own, random and kept beside the token file (mode
//! 0600), never derived from the token: a program holding the token cannot make one.

use crate::locks::lock;
use std::sync::Mutex;

pub const HTML: &str = include_str!("page/page.html");
const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><rect width=\"16\" height=\"16\" rx=\"3\" fill=\"#222\"/><path d=\"M3 4l4 4-4 4M8 12h5\" stroke=\"#8cf\" stroke-width=\"1.6\" fill=\"none\"/></svg>";

/// The page's own files, served to anyone (they hold no secret): path, type, contents.
pub const ASSETS: &[(&str, &str, &str)] = &[
    (
        "/page.js",
        "text/javascript; charset=utf-8",
        include_str!("page/page.js"),
    ),
    (
        "/login.js",
        "text/javascript; charset=utf-8",
        include_str!("page/login.js"),
    ),
    (
        "/term.js",
        "text/javascript; charset=utf-8",
        include_str!("page/term.js"),
    ),
    (
        "/page.css",
        "text/css; charset=utf-8",
        include_str!("page/page.css"),
    ),
    ("/favicon.ico", "image/svg+xml", ICON),
    ("/favicon.svg", "image/svg+xml", ICON),
];

/// The sign-in page the one-time link opens: its script trades the code for a session.
pub const LOGIN_HTML: &str = "<!doctype html><meta charset=utf-8><title>interactive-terminal: sign in</title><link rel=\"stylesheet\" href=\"/page.css\"><p id=\"msg\">Signing in…</p><script src=\"/login.js\"></script>\n";

/// The subprotocol the page's WebSocket asks for, which the host selects.
pub const PAGE_PROTOCOL: &str = "itmcp-page";

/// The subprotocol that carries the page session (`itmcp-session.<session>`).
const SESSION_PROTOCOL_PREFIX: &str = "itmcp-session.";

/// The header a page presents its session in when it asks whether it is still signed in.
pub const SESSION_HEADER: &str = "X-Itmcp-Session";

/// Random bytes in a login code or a session id (128 bits).
const SECRET_BYTES: usize = 16;

/// Who a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A person's browser, signed in with a one-time link.
    Page,
    /// A program that presented the token (an MCP server's adapter).
    Client,
}

/// The page session in a `Sec-WebSocket-Protocol` header.
pub fn session_protocol(header: &str) -> Option<&str> {
    header
        .split(',')
        .map(str::trim)
        .find_map(|p| p.strip_prefix(SESSION_PROTOCOL_PREFIX))
}

/// How long a browser stays signed in.
const SESSION_LIFETIME_MS: u64 = 24 * 3600 * 1000;

/// The key page sessions are signed with: kept in `page-key` beside the token file (mode
/// 0600, made at first start), so that a restarted host knows its sessions; a key of this run
/// only when it cannot be kept (sessions then end with the host). Never the token: whoever
/// holds the token (an MCP server, a container) must not be able to make a session.
pub fn page_key(token_file: &std::path::Path) -> String {
    let file = token_file.with_file_name("page-key");
    crate::token::kept_secret(&file).map(|(key, _)| key).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the page key cannot be kept; page sign-ins end with this host");
        secret()
    })
}

/// The current one-time code.
struct Logins {
    code: String,
}

/// The current login code, and the key sessions are signed with.
///
/// A session is `<issued ms>-<random>.<HMAC-SHA256 of both under the page key>`, so it
/// outlives a restart of the host with the same key (the page reconnects by itself) and dies
/// with a new key or after [`SESSION_LIFETIME_MS`]; the host keeps no session list.
pub struct PageLogin {
    inner: Mutex<Logins>,
    key: Vec<u8>,
}

type SessionMac = hmac::Hmac<sha2::Sha256>;

fn secret() -> String {
    // A ULID's 80 random bits only when the kernel has no randomness.
    crate::ids::random_hex(SECRET_BYTES)
        .unwrap_or_else(|| ulid::Ulid::generate().to_string().to_lowercase())
}

impl PageLogin {
    /// Sessions signed with `key` (the page key: never the token).
    pub fn new(key: &str) -> PageLogin {
        PageLogin {
            inner: Mutex::new(Logins { code: secret() }),
            key: format!("page-session\u{0}{key}").into_bytes(),
        }
    }

    fn sign(&self, id: &str) -> String {
        use hmac::{KeyInit, Mac};
        let Ok(mac) = SessionMac::new_from_slice(&self.key) else {
            return String::new();
        };
        let tag = mac.chain_update(id.as_bytes()).finalize().into_bytes();
        tag.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Logins> {
        lock(&self.inner)
    }

    /// The link that signs one browser in.
    pub fn link(&self, addr: &str) -> String {
        format!("http://{addr}/login?code={}", self.inner().code)
    }

    /// Print the current link where the person looks (the host's stderr: the terminal it
    /// runs in, or the log of the MCP server that launched it).
    pub fn announce(&self, addr: &str) {
        eprintln!(
            "interactive-terminal: page: {} (a one-time sign-in link; a new one is printed when it is used)",
            self.link(addr)
        );
    }

    /// Trade the current code for a new session; the code is then replaced.
    pub fn redeem(&self, code: &str) -> Option<String> {
        let mut inner = self.inner();
        if code.is_empty() || !crate::token::matches(code, &inner.code) {
            return None;
        }
        inner.code = secret();
        drop(inner);
        let id = format!("{}-{}", crate::clock::now_ms(), secret());
        Some(format!("{id}.{}", self.sign(&id)))
    }

    pub fn has_session(&self, session: &str) -> bool {
        let Some((id, tag)) = session.split_once('.') else {
            return false;
        };
        let fresh = id
            .split_once('-')
            .and_then(|(at, _)| at.parse::<u64>().ok())
            .is_some_and(|at| crate::clock::now_ms().saturating_sub(at) < SESSION_LIFETIME_MS);
        fresh && !tag.is_empty() && crate::token::matches(tag, &self.sign(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_signs_in_once() {
        let p = PageLogin::new("tok");
        let link = p.link("127.0.0.1:1");
        let code = link.rsplit('=').next().unwrap_or_default().to_string();
        assert_eq!(code.len(), SECRET_BYTES * 2);
        assert!(code.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(p.redeem("wrong").is_none());
        let s = p.redeem(&code).expect("first use");
        assert!(p.has_session(&s));
        assert!(p.redeem(&code).is_none(), "a used code is worthless");
        assert_ne!(p.link("127.0.0.1:1"), link);
        assert!(!p.has_session("nope"));
        // The same key (a restarted host) knows the session; another key does not.
        assert!(PageLogin::new("tok").has_session(&s));
        assert!(!PageLogin::new("other").has_session(&s));
        // A forged or stale session is refused.
        let (id, _) = s.split_once('.').unwrap();
        assert!(!p.has_session(&format!("{id}.{}", "0".repeat(64))));
        let old = format!("1-{}", &id[id.find('-').unwrap() + 1..]);
        assert!(!p.has_session(&format!("{old}.{}", p.sign(&old))));
        assert_eq!(
            session_protocol(&format!("{PAGE_PROTOCOL}, itmcp-session.{s}")),
            Some(s.as_str())
        );
        assert_eq!(session_protocol(PAGE_PROTOCOL), None);
    }
}
