//! The front door: one port for the WebSocket endpoint and the page, hardened like a local
//! web service people trust.
//!
//! - The request head is read with async reads (no polling) and parsed by `httparse`, within
//!   [`HEAD_TIMEOUT`] and [`MAX_HEAD`]; connections that have not authenticated yet are
//!   capped in number by the listener (`Host::serve`).
//! - `Host` must name this service (loopback names, the bound address, the operator's
//!   aliases): a DNS-rebinding page cannot reach it. A browser's `Origin`, when sent, must be
//!   one of those too: another site's script cannot open the WebSocket.
//! - Programs present the token (`Authorization: Bearer`, `X-Interactive-Terminal-Token`, or
//!   `?token=` on the WebSocket only). A person's browser presents the page session a
//!   one-time login link gave it (`page`), as a WebSocket subprotocol, from this service's
//!   own origin only (`Origin` equal to `http://` + `Host`, port included): the token never
//!   appears in a page URL, and no other origin — another port of the same address included
//!   — can use or receive a page session.
//! - Every answer carries a strict Content-Security-Policy (no inline code), `frame-ancestors
//!   'none'`, `Referrer-Policy: no-referrer` and `nosniff`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role as WsRole;

use super::page::{self, Role};
use super::stream::Prefixed;
use super::waiting::{Leave, Waiting};
use super::{HostState, WS_PATH};
use crate::token;

/// Largest request head accepted.
const MAX_HEAD: usize = 16 * 1024;
/// A client must send its request head within this time.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Headers read from one request.
const MAX_HEADERS: usize = 64;

/// What every answer says about how a browser may use it.
const SECURITY_HEADERS: &str = "Cache-Control: no-store\r\n\
X-Content-Type-Options: nosniff\r\n\
Referrer-Policy: no-referrer\r\n\
X-Frame-Options: DENY\r\n\
Cross-Origin-Opener-Policy: same-origin\r\n\
Cross-Origin-Resource-Policy: same-origin\r\n\
Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'\r\n";

/// A parsed request head.
struct Head {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub fn query_param<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// Read the request head; returns it and whatever came after it.
async fn read_head(stream: &mut TcpStream) -> Result<(Head, Vec<u8>), &'static str> {
    let mut buf: Vec<u8> = Vec::with_capacity(2048);
    let mut chunk = [0u8; 2048];
    let deadline = tokio::time::Instant::now() + HEAD_TIMEOUT;
    loop {
        let n = tokio::time::timeout_at(deadline, stream.read(&mut chunk))
            .await
            .map_err(|_| "timeout")?
            .map_err(|_| "read error")?;
        if n == 0 {
            return Err("closed");
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => {
                let target = req.path.unwrap_or("/");
                let (path, query) = target.split_once('?').unwrap_or((target, ""));
                let head = Head {
                    method: req.method.unwrap_or("").to_string(),
                    path: path.to_string(),
                    query: query.to_string(),
                    headers: req
                        .headers
                        .iter()
                        .map(|h| {
                            (
                                h.name.to_string(),
                                String::from_utf8_lossy(h.value).trim().to_string(),
                            )
                        })
                        .collect(),
                };
                return Ok((head, buf[len..].to_vec()));
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => continue,
            Ok(httparse::Status::Partial) => return Err("head too large"),
            Err(_) => return Err("malformed head"),
        }
    }
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    extra: &str,
    content_type: &str,
    body: &[u8],
) {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{SECURITY_HEADERS}{extra}Connection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body).await;
    let _ = stream.shutdown().await;
}

async fn text(stream: &mut TcpStream, status: &str, body: &str) {
    respond(
        stream,
        status,
        "",
        "text/plain; charset=utf-8",
        body.as_bytes(),
    )
    .await;
}

/// Serve one connection; `place` is its place among connections still reading their head,
/// given up once the head is judged.
pub async fn handle(
    mut stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<HostState>,
    place: (Arc<Waiting>, u64),
) {
    let permit = Leave::new(place.0, place.1);
    let (head, leftover) = match read_head(&mut stream).await {
        Ok(h) => h,
        Err("head too large") => {
            drop(permit);
            return text(&mut stream, "431 Request Header Fields Too Large", "431\n").await;
        }
        Err(why) => {
            tracing::debug!(%peer, why, "connection dropped before a request");
            return;
        }
    };
    drop(permit);
    // Who is asking, and from where: a foreign Host or Origin is refused before anything.
    let host_ok = head
        .header("Host")
        .is_some_and(|h| shared.names.allows_host(h));
    if !host_ok {
        tracing::info!(%peer, host = ?head.header("Host"), "refused: unexpected Host (DNS rebinding?)");
        return text(
            &mut stream,
            "421 Misdirected Request",
            "421: this service answers only to its own names (Host header).\n",
        )
        .await;
    }
    if let Some(origin) = head.header("Origin")
        && !shared.names.allows_origin(origin)
    {
        tracing::info!(%peer, %origin, "refused: cross-origin request");
        return text(
            &mut stream,
            "403 Forbidden",
            "403: cross-origin requests are refused.\n",
        )
        .await;
    }
    let upgrade = head
        .header("Upgrade")
        .is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    // Routes that need no credentials: the sign-in page, the page itself (it holds no
    // secret: it connects with the session its browser keeps), and static assets.
    match (head.method.as_str(), head.path.as_str()) {
        ("GET", "/login") => {
            return respond(&mut stream, "200 OK", "", HTML, page::LOGIN_HTML.as_bytes()).await;
        }
        ("POST", "/session") => return login(&mut stream, &shared, &head, leftover).await,
        ("GET", "/session") => return session_check(&mut stream, &shared, &head).await,
        ("GET", "/") | ("GET", "/index.html") if !upgrade => {
            return respond(&mut stream, "200 OK", "", HTML, page::HTML.as_bytes()).await;
        }
        ("GET", path) => {
            if let Some((_, kind, body)) = page::ASSETS.iter().find(|(p, _, _)| *p == path) {
                return respond(&mut stream, "200 OK", "", kind, body.as_bytes()).await;
            }
        }
        _ => {}
    }
    let token = token::presented(
        head.header("Authorization"),
        head.header("X-Interactive-Terminal-Token"),
    )
    // A program's WebSocket may carry the token in the query (no browser, no Referer).
    .or_else(|| upgrade.then(|| query_param(&head.query, "token")).flatten());
    let page_session = head
        .header("Sec-WebSocket-Protocol")
        .and_then(page::session_protocol);
    let role = if token.is_some_and(|t| token::matches(t, &shared.token)) {
        Some(Role::Client)
    } else if upgrade
        && same_origin(&head)
        && page_session.is_some_and(|s| shared.page.has_session(s))
    {
        Some(Role::Page)
    } else {
        None
    };
    let Some(role) = role else {
        tracing::info!(%peer, path = %head.path, "refused: no valid token or page session");
        return text(&mut stream, "401 Unauthorized", "401: this interactive-terminal service needs its token (Authorization: Bearer <token>) or a page session (open the one-time link in the log).\n").await;
    };
    if upgrade && (head.path == WS_PATH || head.path == "/") {
        return websocket(stream, leftover, &head, peer, shared, role).await;
    }
    match (head.method.as_str(), head.path.as_str()) {
        ("GET", "/healthz") => {
            respond(
                &mut stream,
                "200 OK",
                "",
                "application/json",
                b"{\"ok\":true}",
            )
            .await
        }
        _ => text(&mut stream, "404 Not Found", "404\n").await,
    }
}

const HTML: &str = "text/html; charset=utf-8";

/// Whether a browser sent this request from this service's own page: an `Origin` that is
/// `http://` and exactly the `Host` it addressed, port included. Browsers send `Origin` on
/// every WebSocket handshake and every `POST`; a page of another origin — another port of
/// the same address included — cannot set it.
fn same_origin(head: &Head) -> bool {
    match (head.header("Origin"), head.header("Host")) {
        (Some(origin), Some(host)) => origin
            .trim()
            .strip_prefix("http://")
            .is_some_and(|o| o.eq_ignore_ascii_case(host.trim())),
        _ => false,
    }
}

/// Largest body of a `POST /session` (a login code).
const MAX_CODE_BODY: usize = 256;

/// Exchange a one-time login code (the request's body) for a page session, answered as
/// JSON to the sign-in page, which keeps it in this origin's `localStorage`. Only from this
/// service's own origin.
async fn login(stream: &mut TcpStream, shared: &Arc<HostState>, head: &Head, leftover: Vec<u8>) {
    if !same_origin(head) {
        tracing::info!(origin = ?head.header("Origin"), "refused: a sign-in from another origin");
        return text(
            stream,
            "403 Forbidden",
            "403: sign in from this service's own page.\n",
        )
        .await;
    }
    let len = head
        .header("Content-Length")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_CODE_BODY);
    let mut body = leftover;
    while body.len() < len {
        let mut chunk = [0u8; MAX_CODE_BODY];
        match tokio::time::timeout(HEAD_TIMEOUT, stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => body.extend_from_slice(&chunk[..n]),
            _ => break,
        }
    }
    body.truncate(len);
    let code = String::from_utf8_lossy(&body);
    match shared.page.redeem(code.trim()) {
        Some(session) => {
            tracing::info!("a browser signed in to the page with a one-time link");
            shared.page.announce(&shared.public_addr);
            let answer = serde_json::json!({ "session": session }).to_string();
            respond(stream, "200 OK", "", "application/json", answer.as_bytes()).await;
        }
        None => {
            respond(
                stream,
                "403 Forbidden",
                "",
                "application/json",
                b"{\"error\":\"this sign-in link was already used or is not valid\"}",
            )
            .await;
        }
    }
}

/// Whether the page session the page presents is (still) good: `204`, or `401` — the page
/// then asks its person for a new link rather than reconnecting in vain.
async fn session_check(stream: &mut TcpStream, shared: &Arc<HostState>, head: &Head) {
    let good = same_origin(head)
        && head
            .header(page::SESSION_HEADER)
            .is_some_and(|s| shared.page.has_session(s));
    let status = if good {
        "204 No Content"
    } else {
        "401 Unauthorized"
    };
    respond(stream, status, "", "text/plain; charset=utf-8", b"").await;
}

/// Complete the WebSocket handshake on the head already read, then serve AHP.
async fn websocket(
    mut stream: TcpStream,
    leftover: Vec<u8>,
    head: &Head,
    peer: SocketAddr,
    shared: Arc<HostState>,
    role: Role,
) {
    let (Some(key), Some("13")) = (
        head.header("Sec-WebSocket-Key"),
        head.header("Sec-WebSocket-Version"),
    ) else {
        return text(
            &mut stream,
            "400 Bad Request",
            "400: not a WebSocket version 13 handshake\n",
        )
        .await;
    };
    let accept = derive_accept_key(key.as_bytes());
    // The page asked for its subprotocol (beside the one carrying its session): a browser
    // drops a connection whose answer names none of those it asked for.
    let protocol = if role == Role::Page {
        format!("Sec-WebSocket-Protocol: {}\r\n", page::PAGE_PROTOCOL)
    } else {
        String::new()
    };
    let answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n{protocol}\r\n"
    );
    if stream.write_all(answer.as_bytes()).await.is_err() {
        return;
    }
    // Small JSON frames both ways: send them at once (no Nagle delay).
    let _ = stream.set_nodelay(true);
    let io = Prefixed::new(leftover, stream);
    let ws = tokio_tungstenite::WebSocketStream::from_raw_socket(io, WsRole::Server, None).await;
    super::socket::serve(ws, peer, shared, role).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_found_in_the_query() {
        assert_eq!(query_param("a=1&token=xyz", "token"), Some("xyz"));
    }
}
