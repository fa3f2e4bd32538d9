//! The page a person opens, and how their browser signs in without a token in any URL.
//!
//! The host keeps one one-time login code at a time and prints a link with it on its stderr
//! (`/login?code=…`), at start and each time a code is used. Opening the link exchanges the
//! code for a session cookie (`HttpOnly; SameSite=Strict`) and redirects to the page; the
//! used code is worthless, so a link copied from a log cannot sign in a second browser.
//! A browser session is a person (`Role::Page`): it may approve, type into and terminate any
//! terminal; a program with the token is a client (`Role::Client`) and may not approve.

use crate::locks::lock;
use std::collections::HashSet;
use std::sync::Mutex;

pub const HTML: &str = include_str!("page/page.html");
pub const SCRIPT: &str = include_str!("page/page.js");
pub const STYLE: &str = include_str!("page/page.css");
pub const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><rect width=\"16\" height=\"16\" rx=\"3\" fill=\"#222\"/><path d=\"M3 4l4 4-4 4M8 12h5\" stroke=\"#8cf\" stroke-width=\"1.6\" fill=\"none\"/></svg>";

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

/// The current one-time code and the browser sessions signed in with it.
struct Logins {
    code: String,
    sessions: HashSet<String>,
}

/// The current login code and the sessions it has made.
pub struct PageLogin {
    inner: Mutex<Logins>,
}

fn secret() -> String {
    // A ULID's 80 random bits only when the kernel has no randomness.
    crate::ids::random_hex(SECRET_BYTES)
        .unwrap_or_else(|| ulid::Ulid::generate().to_string().to_lowercase())
}

impl Default for PageLogin {
    fn default() -> Self {
        PageLogin {
            inner: Mutex::new(Logins {
                code: secret(),
                sessions: HashSet::new(),
            }),
        }
    }
}

impl PageLogin {
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
        if code.is_empty() || !super::token::matches(code, &inner.code) {
            return None;
        }
        inner.code = secret();
        let session = secret();
        inner.sessions.insert(session.clone());
        Some(session)
    }

    pub fn has_session(&self, session: &str) -> bool {
        self.inner()
            .sessions
            .iter()
            .any(|s| super::token::matches(session, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_signs_in_once() {
        let p = PageLogin::default();
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
        assert_eq!(
            session_cookie(&format!("a=1; {COOKIE}={s}")),
            Some(s.as_str())
        );
    }
}
