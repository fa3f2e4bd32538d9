//! The front door: one port for the WebSocket endpoint and the page. The request head is
//! peeked (not consumed) to route it; every route needs the token, from the
//! `Authorization: Bearer` header, an `X-Interactive-Terminal-Token` header, or a `token`
//! query parameter (so a browser page can connect too).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Shared, WS_PATH, token};

/// Largest request head accepted.
const MAX_HEAD: usize = 16 * 1024;
/// A client must send its request head within this time.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

const PAGE: &str = include_str!("page.html");

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

fn query_param<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// The token a request presents, however it presents it.
pub fn presented_token<'a>(
    authorization: Option<&'a str>,
    custom: Option<&'a str>,
    query: &'a str,
) -> Option<&'a str> {
    authorization
        .and_then(|a| a.strip_prefix("Bearer "))
        .or(custom)
        .or_else(|| query_param(query, "token"))
}

async fn peek_head(stream: &TcpStream) -> Option<Head> {
    let mut buf = vec![0u8; MAX_HEAD];
    let deadline = tokio::time::Instant::now() + HEAD_TIMEOUT;
    loop {
        let n = tokio::time::timeout_at(deadline, stream.peek(&mut buf))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            return None;
        }
        if let Some(end) = buf[..n].windows(4).position(|w| w == b"\r\n\r\n") {
            return parse_head(&buf[..end]);
        }
        if n == MAX_HEAD {
            return None;
        }
        // Wait for more of the head to arrive.
        tokio::time::timeout_at(deadline, stream.readable())
            .await
            .ok()?
            .ok()?;
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn parse_head(bytes: &[u8]) -> Option<Head> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let target = first.next()?;
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Some(Head {
        method,
        path: path.to_string(),
        query: query.to_string(),
        headers,
    })
}

async fn respond(mut stream: TcpStream, status: &str, content_type: &str, body: &str) {
    // Consume the request we only peeked at, then answer and close.
    let mut sink = vec![0u8; MAX_HEAD];
    let _ = tokio::time::timeout(Duration::from_millis(100), stream.read(&mut sink)).await;
    let resp = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(resp.as_bytes()).await;
    let _ = stream.shutdown().await;
}

pub async fn handle(stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>) {
    let Some(head) = peek_head(&stream).await else {
        return;
    };
    let authorized = presented_token(
        head.header("Authorization"),
        head.header("X-Interactive-Terminal-Token"),
        &head.query,
    )
    .is_some_and(|t| token::matches(t, &shared.token));
    let upgrade = head
        .header("Upgrade")
        .is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    if !authorized {
        tracing::info!(%peer, path = %head.path, "refused: missing or wrong token");
        let body = "401: this interactive-terminal service needs its token (Authorization: Bearer <token>, or ?token=<token>).\n";
        return respond(
            stream,
            "401 Unauthorized",
            "text/plain; charset=utf-8",
            body,
        )
        .await;
    }
    if upgrade && (head.path == WS_PATH || head.path == "/") {
        // Small JSON frames both ways: send them at once (no Nagle delay).
        let _ = stream.set_nodelay(true);
        // The token was checked on the peeked head; the upgrade itself needs no callback.
        match tokio_tungstenite::accept_async(stream).await {
            Ok(ws) => super::conn::serve(ws, peer, shared).await,
            Err(e) => tracing::info!(%peer, error = %e, "websocket handshake failed"),
        }
        return;
    }
    match (head.method.as_str(), head.path.as_str()) {
        ("GET", "/") | ("GET", "/index.html") => {
            respond(stream, "200 OK", "text/html; charset=utf-8", PAGE).await
        }
        ("GET", "/healthz") => respond(stream, "200 OK", "application/json", "{\"ok\":true}").await,
        _ => respond(stream, "404 Not Found", "text/plain", "404\n").await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_found_in_headers_or_query() {
        assert_eq!(presented_token(Some("Bearer abc"), None, ""), Some("abc"));
        assert_eq!(presented_token(None, Some("def"), ""), Some("def"));
        assert_eq!(presented_token(None, None, "a=1&token=xyz"), Some("xyz"));
        assert_eq!(presented_token(Some("Basic zzz"), None, "x=1"), None);
        let h = parse_head(b"GET /ahp?token=t HTTP/1.1\r\nUpgrade: websocket\r\nHost: x")
            .expect("head");
        assert_eq!(
            (h.method.as_str(), h.path.as_str(), h.query.as_str()),
            ("GET", "/ahp", "token=t")
        );
        assert_eq!(h.header("upgrade"), Some("websocket"));
    }
}
