//! Streamable HTTP: `--http ADDR` serves MCP at `/mcp` besides (instead of) stdio, with
//! rmcp's server doing the protocol (sessions with `Mcp-Session-Id`, SSE streams for progress
//! and resource updates, resumption with `Last-Event-ID`, `Host` and `Origin` checks) and this
//! module doing what a local server owes on top: a bearer token on every request, a service of
//! its own per session (its own commands and terminals), and, when the server stops, every
//! process each session started killed.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, Weak};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::McpServer;
use crate::locks::lock;
use crate::service::Service;

/// Where the MCP endpoint is.
pub const MCP_PATH: &str = "/mcp";

/// Browser origins a local server answers: pages served from this machine only (the MCP
/// specification asks local servers to refuse others, against DNS rebinding).
const LOCAL_ORIGINS: [&str; 3] = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"];

type Body = BoxBody<Bytes, Infallible>;

/// The sessions' services, to stop what each started when the server stops.
type Sessions = Arc<Mutex<Vec<Weak<Service>>>>;

/// The bearer token: the operator's, or one generated once and kept (mode 0600) in the token
/// file, whose place (never the token) is said on stderr. A non-loopback address needs a
/// strong one.
pub fn token(inputs: &crate::config::HttpInputs) -> Result<String, String> {
    let token = match inputs.token.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => {
            let file = inputs.token_file.clone().unwrap_or_else(|| {
                crate::token::config_file("interactive-terminal-mcp", "http-token")
            });
            let t = crate::token::load_or_create(&file)?;
            eprintln!(
                "interactive-terminal-mcp: the HTTP token is in {} ({})",
                file.display(),
                crate::token::KEPT_PRIVATE
            );
            t
        }
    };
    if !inputs.addr.ip().is_loopback() && !crate::token::strong_enough(&token) {
        return Err(format!(
            "{} is not a loopback address: PM_TERM_HTTP_TOKEN must be at least {} characters with some variety",
            inputs.addr,
            crate::token::MIN_PUBLIC_TOKEN_CHARS
        ));
    }
    Ok(token)
}

/// Serve MCP over HTTP on `addr` until `stop` resolves. `new_app` makes each session's service.
pub async fn serve(
    addr: SocketAddr,
    token: String,
    new_app: impl Fn() -> Arc<Service> + Send + Sync + 'static,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    let sessions: Sessions = Arc::default();
    let mut config = StreamableHttpServerConfig::default();
    config.allowed_origins = LOCAL_ORIGINS.map(String::from).to_vec();
    let ct = config.cancellation_token.clone();
    let made = sessions.clone();
    let service = StreamableHttpService::new(
        move || {
            let app = new_app();
            let mut apps = lock(&made);
            apps.retain(|w| w.strong_count() > 0); // sessions that ended
            apps.push(Arc::downgrade(&app));
            drop(apps);
            McpServer::new(app)
                .map(McpServer::ending_with_its_session)
                .map_err(std::io::Error::other)
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    // The address clients use, on stderr (stdout is nobody's channel here, but stays quiet).
    eprintln!(
        "interactive-terminal-mcp: serving MCP on http://{local}{MCP_PATH} (Authorization: Bearer <token>)"
    );
    tracing::info!(%local, "serving MCP over streamable HTTP");
    let token = Arc::new(token);
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let (service, token, live) = (service.clone(), token.clone(), sessions.clone());
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (service, token, live) = (service.clone(), token.clone(), live.clone());
                async move {
                    let mut r = answer(&service, &token, &live, req).await;
                    // A refusal is sent before the request's body is read, and hyper then
                    // closes the connection: said in the answer, so that a client does not
                    // send its next request on it in the meantime (and get no answer).
                    if r.status().is_client_error() {
                        r.headers_mut().insert(
                            hyper::header::CONNECTION,
                            hyper::header::HeaderValue::from_static("close"),
                        );
                    }
                    Ok::<_, Infallible>(r)
                }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler)
                .await
            {
                tracing::debug!(%peer, error = %e, "HTTP connection ended");
            }
        });
    }
    ct.cancel();
    let apps: Vec<Arc<Service>> = lock(&sessions).iter().filter_map(Weak::upgrade).collect();
    for app in apps {
        app.close_session().await;
    }
    Ok(())
}

/// One request: the token first, then the MCP endpoint.
async fn answer(
    service: &StreamableHttpService<McpServer, LocalSessionManager>,
    token: &str,
    live: &Sessions,
    req: Request<Incoming>,
) -> Response<Body> {
    if req.uri().path() != MCP_PATH {
        return plain(StatusCode::NOT_FOUND, "404: MCP is served at /mcp\n");
    }
    let authorization = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let presented = crate::token::presented(authorization, None);
    if !presented.is_some_and(|t| crate::token::matches(t.trim(), token)) {
        let mut r = plain(
            StatusCode::UNAUTHORIZED,
            "401: this MCP server needs its token (Authorization: Bearer <token>)\n",
        );
        r.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Bearer"),
        );
        return r;
    }
    let opening =
        req.method() == hyper::Method::POST && !req.headers().contains_key("mcp-session-id");
    if opening && live_sessions(live) >= MAX_SESSIONS {
        return sessions_full();
    }
    let ending = req.method() == hyper::Method::DELETE;
    let mut r = service.handle(req).await;
    if ending && r.status() == StatusCode::ACCEPTED {
        // The session is gone when this answers; clients (the Python SDK among them) read
        // 202 to a DELETE as a failed termination and say so in their logs.
        *r.status_mut() = StatusCode::OK;
    }
    r
}

/// Most MCP sessions at once over HTTP. Each holds its own terminals and commands (within the
/// server-wide caps), so a client that opens sessions without end is refused past this.
pub const MAX_SESSIONS: usize = 64;

/// Sessions whose service is alive.
fn live_sessions(live: &Sessions) -> usize {
    let mut apps = lock(live);
    apps.retain(|w| w.strong_count() > 0);
    apps.len()
}

/// A new session past [`MAX_SESSIONS`]: 503 with Retry-After, and a JSON-RPC error that
/// names the limit, for clients that show the body.
fn sessions_full() -> Response<Body> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": format!("the server's limit of {MAX_SESSIONS} MCP sessions at once is reached: end a session (HTTP DELETE) or retry later"),
            "data": {"limit": "http_sessions", "max": MAX_SESSIONS, "retry_after_ms": 5000}
        }
    });
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let h = r.headers_mut();
    h.insert(
        hyper::header::RETRY_AFTER,
        hyper::header::HeaderValue::from_static("5"),
    );
    h.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *r.status_mut() = status;
    r
}
