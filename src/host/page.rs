//! The page a person opens, and how their browser signs in without a token in any URL.
//!
//! The host keeps one one-time login code at a time and prints a link with it on its stderr
//! (`/login?code=…`), at start and each time a code is used. Opening the link exchanges the
//! code for a session cookie (`HttpOnly; SameSite=Strict`) and redirects to the page; the
//! used code is worthless, so a link copied from a log cannot sign in a second browser.
//! A browser session is a person (`Role::Page`): it may approve, type into and terminate any
//! terminal; a program with the token is a client (`Role::Client`) and may not approve.

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

/// Shown at `/` to a browser without a session.
pub const SIGN_IN: &str = "<!doctype html><meta charset=utf-8><title>interactive-terminal</title><p>This page needs a sign-in: open the one-time link <code>http://…/login?code=…</code> that the service printed in its log (for an MCP server started with <code>--gui</code>, its log in your MCP client).</p>\n";
/// Shown for a used or unknown code.
pub const LINK_USED: &str = "<!doctype html><meta charset=utf-8><title>interactive-terminal</title><p>This sign-in link was already used or is not valid. Each link works once; the service printed a new one in its log when this one was used.</p>\n";

/// The session cookie's name.
pub const COOKIE: &str = "itmcp_page";

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

/// The session id in a `Cookie` header.
pub fn session_cookie(header: &str) -> Option<&str> {
    header
        .split(';')
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.trim())
}

/// How long a browser stays signed in.
const SESSION_LIFETIME_MS: u64 = 24 * 3600 * 1000;

/// The current one-time code.
struct Logins {
    code: String,
}

/// The current login code, and the key sessions are signed with.
///
/// A session is `<issued ms>-<random>.<HMAC-SHA256 of both under the host's token>`, so it
/// outlives a restart of the host with the same token (the page reconnects by itself) and
/// dies with a new token or after [`SESSION_LIFETIME_MS`]; the host keeps no session list.
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
    /// Sessions signed with `token` (the host's own secret).
    pub fn new(token: &str) -> PageLogin {
        PageLogin {
            inner: Mutex::new(Logins { code: secret() }),
            key: format!("page-session\u{0}{token}").into_bytes(),
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
        // The same token (a restarted host) knows the session; another token does not.
        assert!(PageLogin::new("tok").has_session(&s));
        assert!(!PageLogin::new("other").has_session(&s));
        // A forged or stale session is refused.
        let (id, _) = s.split_once('.').unwrap();
        assert!(!p.has_session(&format!("{id}.{}", "0".repeat(64))));
        let old = format!("1-{}", &id[id.find('-').unwrap() + 1..]);
        assert!(!p.has_session(&format!("{old}.{}", p.sign(&old))));
        assert_eq!(
            session_cookie(&format!("a=1; {COOKIE}={s}")),
            Some(s.as_str())
        );
    }
}
