//! The network allow-list (`--network allow:DOMAIN,…`): an HTTP proxy on a Unix socket, run
//! by the server outside every sandbox. A sandboxed program has no network of its own; its
//! only way out is this socket (reached through [`super::netbridge`]), and the proxy opens a
//! connection only to a listed domain or one of its subdomains: `CONNECT host:port` (HTTPS
//! and any TLS protocol) and plain `http://` requests in absolute form. Anything else is
//! answered 403 with the reason, before any name is resolved.

#[cfg(unix)]
use std::path::PathBuf;
#[cfg(unix)]
use std::sync::Arc;
#[cfg(unix)]
use std::time::Duration;

#[cfg(unix)]
use tokio::io::{AsyncReadExt, AsyncWriteExt};
#[cfg(unix)]
use tokio::net::{TcpStream, UnixListener, UnixStream};

#[cfg(unix)]
/// Longest request head the proxy reads (request line and headers).
const MAX_HEAD_BYTES: usize = 32 * 1024;
#[cfg(unix)]
/// Most headers in a request head.
const MAX_HEADERS: usize = 100;
#[cfg(unix)]
/// How long the proxy tries to reach an allowed host.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
#[cfg(unix)]
/// Headers meant for the proxy, not passed on.
const HOP_HEADERS: [&str; 4] = [
    "proxy-connection",
    "proxy-authorization",
    "connection",
    "keep-alive",
];

#[cfg(unix)]
/// A proxy socket's name: this prefix, the server's pid, `.sock`.
const SOCKET_PREFIX: &str = "proxy-";

/// What the 403 answer says, so that a failed command's output can be recognised.
pub const DENIED: &str = "is not on the sandbox's network allow-list";

#[cfg(unix)]
/// The running proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proxy {
    pub socket: PathBuf,
}

#[cfg(unix)]
/// Start the proxy for `allow` on a socket of its own, in a thread of its own (the sandbox is
/// prepared before the server's runtime exists, and must not depend on it).
pub fn start(allow: Vec<String>) -> Result<Proxy, String> {
    let dir = crate::private_dir::per_user("interactive-terminal-net");
    crate::private_dir::ensure(&dir)
        .map_err(|e| format!("cannot prepare the proxy's directory: {e}"))?;
    remove_stale_sockets(&dir);
    let socket = dir.join(format!("{SOCKET_PREFIX}{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&socket);
    let listener = std::os::unix::net::UnixListener::bind(&socket)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| format!("cannot listen on {}: {e}", socket.display()))?;
    let allow = Arc::new(allow);
    std::thread::Builder::new()
        .name("itmcp-net-proxy".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::error!(error = %e, "the network proxy cannot run");
                    return;
                }
            };
            rt.block_on(serve(listener, allow));
        })
        .map_err(|e| format!("cannot start the network proxy: {e}"))?;
    Ok(Proxy { socket })
}

#[cfg(unix)]
/// Remove the sockets of servers that are gone (killed before they could clean up).
fn remove_stale_sockets(dir: &std::path::Path) {
    crate::stale::remove_left_by_dead(dir, SOCKET_PREFIX, ".sock", |p| {
        let _ = std::fs::remove_file(p);
    });
}

#[cfg(unix)]
async fn serve(listener: std::os::unix::net::UnixListener, allow: Arc<Vec<String>>) {
    let listener = match UnixListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(error = %e, "the network proxy cannot listen");
            return;
        }
    };
    loop {
        match listener.accept().await {
            Ok((conn, _)) => {
                let allow = allow.clone();
                tokio::spawn(async move {
                    if let Err(e) = handle(conn, &allow).await {
                        tracing::debug!(error = %e, "proxy connection ended");
                    }
                });
            }
            Err(e) => {
                tracing::warn!(error = %e, "the network proxy cannot accept");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

#[cfg(unix)]
/// Whether `host` is a listed domain or under one.
pub fn allowed(host: &str, allow: &[String]) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    allow.iter().any(|d| {
        h == *d
            || (h.len() > d.len()
                && h.ends_with(d.as_str())
                && h[..h.len() - d.len()].ends_with('.'))
    })
}

#[cfg(unix)]
/// Where a request wants to go, and what to send there first.
struct Route {
    host: String,
    port: u16,
    tunnel: bool,
    /// For plain HTTP: the request head rewritten for the origin server.
    head: Vec<u8>,
}

#[cfg(unix)]
async fn handle(mut conn: UnixStream, allow: &[String]) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(4096);
    let head_len = loop {
        let mut chunk = [0u8; 4096];
        let n = conn.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD_BYTES {
            return answer(&mut conn, 431, "request head too large").await;
        }
    };
    let route = match route(&buf[..head_len]) {
        Ok(r) => r,
        Err(why) => return answer(&mut conn, 400, &why).await,
    };
    if !allowed(&route.host, allow) {
        tracing::info!(host = %route.host, "sandbox network: denied");
        let why = format!(
            "{} {DENIED} ({}); the operator decides what it holds",
            route.host,
            allow.join(", ")
        );
        return answer(&mut conn, 403, &why).await;
    }
    let upstream = tokio::time::timeout(
        CONNECT_TIMEOUT,
        TcpStream::connect((route.host.as_str(), route.port)),
    )
    .await;
    let mut upstream = match upstream {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            let why = format!("cannot reach {}:{}: {e}", route.host, route.port);
            return answer(&mut conn, 502, &why).await;
        }
        Err(_) => {
            let why = format!("{}:{} did not answer in time", route.host, route.port);
            return answer(&mut conn, 504, &why).await;
        }
    };
    tracing::debug!(host = %route.host, port = route.port, "sandbox network: allowed");
    if route.tunnel {
        conn.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await?;
    } else {
        upstream.write_all(&route.head).await?;
    }
    upstream.write_all(&buf[head_len..]).await?;
    tokio::io::copy_bidirectional(&mut conn, &mut upstream).await?;
    Ok(())
}

#[cfg(unix)]
fn route(head: &[u8]) -> Result<Route, String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err("incomplete request head".into()),
        Err(e) => return Err(format!("malformed request: {e}")),
    }
    let (Some(method), Some(target)) = (req.method, req.path) else {
        return Err("no request line".into());
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(target, 443)?;
        return Ok(Route {
            host,
            port,
            tunnel: true,
            head: Vec::new(),
        });
    }
    let Some(rest) = target.strip_prefix("http://") else {
        return Err(format!(
            "{target:?}: this proxy takes CONNECT host:port or an absolute http:// URL"
        ));
    };
    let (auth, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let auth = auth.rsplit('@').next().unwrap_or(auth);
    let (host, port) = authority(auth, 80)?;
    let mut out = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
    for h in req.headers.iter() {
        if HOP_HEADERS.iter().any(|n| h.name.eq_ignore_ascii_case(n)) {
            continue;
        }
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(h.value);
        out.extend_from_slice(b"\r\n");
    }
    // One request per connection: a second one could name another host.
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Route {
        host,
        port,
        tunnel: false,
        head: out,
    })
}

#[cfg(unix)]
/// `host[:port]` or `[v6]:port`.
fn authority(a: &str, default_port: u16) -> Result<(String, u16), String> {
    let bad = || format!("{a:?} is not host:port");
    let (host, port) = if let Some(v6) = a.strip_prefix('[') {
        let (h, rest) = v6.split_once(']').ok_or_else(bad)?;
        (h, rest.strip_prefix(':'))
    } else {
        match a.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (a, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().map_err(|_| bad())?,
        None => default_port,
    };
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host.to_string(), port))
}

#[cfg(unix)]
async fn answer(conn: &mut UnixStream, status: u16, why: &str) -> std::io::Result<()> {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        431 => "Request Header Fields Too Large",
        502 => "Bad Gateway",
        _ => "Gateway Timeout",
    };
    let body = format!("interactive-terminal-mcp sandbox: {why}\n");
    let msg = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(msg.as_bytes()).await
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn domains_and_subdomains_only() {
        let allow = vec!["example.com".to_string(), "localhost".to_string()];
        for ok in [
            "example.com",
            "api.example.com",
            "EXAMPLE.com.",
            "localhost",
        ] {
            assert!(allowed(ok, &allow), "{ok}");
        }
        for no in [
            "badexample.com",
            "example.com.evil.net",
            "127.0.0.1",
            "com",
            "",
        ] {
            assert!(!allowed(no, &allow), "{no}");
        }
    }

    #[test]
    fn routes_are_read_from_the_request_head() {
        let r = route(b"CONNECT api.example.com:8443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            (r.host.as_str(), r.port, r.tunnel),
            ("api.example.com", 8443, true)
        );
        let r = route(
            b"GET http://u@example.com/a?b HTTP/1.1\r\nHost: example.com\r\nProxy-Connection: keep-alive\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            (r.host.as_str(), r.port, r.tunnel),
            ("example.com", 80, false)
        );
        let head = String::from_utf8(r.head).unwrap();
        assert!(
            head.starts_with("GET /a?b HTTP/1.1\r\nHost: example.com\r\n"),
            "{head}"
        );
        assert!(!head.contains("Proxy-Connection") && head.ends_with("Connection: close\r\n\r\n"));
        let r = route(b"CONNECT [::1]:443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(r.host, "::1");
        for bad in [
            &b"GET /relative HTTP/1.1\r\n\r\n"[..],
            b"CONNECT host:notaport HTTP/1.1\r\n\r\n",
            b"\x00\x01garbage\r\n\r\n",
        ] {
            assert!(route(bad).is_err());
        }
    }
}
