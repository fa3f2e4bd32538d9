//! The host service (`interactive-terminal`) as tests start and reach it: its launcher,
//! an AHP client, raw HTTP, a signed-in page, and a loopback proxy that can cut or stall it.

use super::*;

/// An `interactive-terminal` host started for a test.
pub struct HostProc {
    pub child: std::process::Child,
    pub addr: String,
    pub port: u16,
    pub token: String,
    /// The one-time sign-in link of the ready line.
    pub login: String,
}

impl Drop for HostProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a test starts a host service: `host(token).port(p).start()`. The defaults are any
/// free port, no extra flags, and a `warn` log on stderr.
pub struct HostLaunch {
    /// `None`: the token variable removed from its environment (a `--token-file` test).
    token: Option<String>,
    port: u16,
    log: Option<std::path::PathBuf>,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

/// A host launch with `token` and the defaults.
pub fn host(token: &str) -> HostLaunch {
    HostLaunch {
        token: Some(token.to_string()),
        port: 0,
        log: None,
        args: Vec::new(),
        env: Vec::new(),
    }
}

impl HostLaunch {
    pub fn port(mut self, port: u16) -> HostLaunch {
        self.port = port;
        self
    }

    /// Its debug log goes to this file.
    pub fn log_to(mut self, path: &std::path::Path) -> HostLaunch {
        self.log = Some(path.to_path_buf());
        self
    }

    pub fn args(mut self, args: &[&str]) -> HostLaunch {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// This variable set in its environment.
    pub fn env(mut self, key: &str, value: &str) -> HostLaunch {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// No token in its environment: it reads (or writes) the `--token-file` its arguments
    /// name.
    pub fn no_token(mut self) -> HostLaunch {
        self.token = None;
        self
    }

    /// The command, for a test that reads its output itself; the one place a test host's
    /// process is set up.
    pub fn std_command(&self) -> std::process::Command {
        let level = if self.log.is_some() { "debug" } else { "warn" };
        let mut cmd = std::process::Command::new(HOST_BIN);
        cmd.current_dir(scratch_dir()).args([
            "--port",
            &self.port.to_string(),
            "--no-user-rc",
            "--log",
            level,
        ]);
        // A token goes in the environment, never on a command line.
        match &self.token {
            Some(token) => cmd.env("PM_INTERACTIVE_TERMINAL_TOKEN", token),
            None => cmd.env_remove("PM_INTERACTIVE_TERMINAL_TOKEN"),
        };
        cmd.args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(path) = &self.log {
            cmd.stderr(std::fs::File::create(path).unwrap());
        }
        cmd
    }

    /// Run it to its end with nothing on its input (a start it refuses).
    pub fn output(&self) -> std::process::Output {
        self.std_command().stdin(Stdio::null()).output().unwrap()
    }

    /// Start it and wait for its ready line.
    pub fn start(self) -> HostProc {
        use std::io::BufRead;
        let mut child = self.std_command().stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready: Value =
            serde_json::from_str(&line).unwrap_or_else(|_| panic!("ready line: {line:?}"));
        assert_eq!(ready["event"], "ready", "{ready}");
        let addr = ready["address"].as_str().unwrap().to_string();
        let port = addr.rsplit(':').next().unwrap().parse().unwrap();
        HostProc {
            child,
            addr,
            port,
            token: self.token.unwrap_or_default(),
            login: ready["login"].as_str().unwrap_or_default().to_string(),
        }
    }
}

/// An `ahp` client connected to `h` over its WebSocket and initialized as `client_id`.
pub async fn ahp_client(h: &HostProc, client_id: &str) -> ahp::Client {
    use ahp_types::{PROTOCOL_VERSION, ROOT_RESOURCE_URI};
    let url = format!("ws://{}/ahp?token={}", h.addr, h.token);
    let transport = ahp_ws::WebSocketTransport::connect(&url).await.unwrap();
    let client = ahp::Client::connect(transport, ahp::ClientConfig::default())
        .await
        .unwrap();
    let init = client
        .initialize(
            client_id.into(),
            vec![PROTOCOL_VERSION.into()],
            vec![ROOT_RESOURCE_URI.into()],
        )
        .await
        .unwrap();
    assert_eq!(init.protocol_version, PROTOCOL_VERSION);
    client
}

/// `createTerminal` of `uri` in `/tmp`, 100×30, claimed by the client `holder`; its answer.
pub async fn create_terminal(
    client: &ahp::Client,
    uri: &str,
    holder: &str,
) -> Result<Value, ahp::ClientError> {
    use ahp_types::commands::CreateTerminalParams;
    use ahp_types::state::{TerminalClaim, TerminalClientClaim};
    let params = CreateTerminalParams {
        channel: uri.into(),
        meta: None,
        claim: TerminalClaim::Client(TerminalClientClaim {
            client_id: holder.into(),
        }),
        name: Some("from-ahp".into()),
        cwd: Some("file:///tmp".into()),
        cols: Some(100),
        rows: Some(30),
    };
    client.request("createTerminal", params).await
}

/// A raw HTTP/1.1 request to `addr` (with `Host: addr` unless `headers` gives one); the
/// whole answer as text.
pub async fn http_get(addr: &str, path: &str, headers: &[(&str, &str)]) -> String {
    http_request(addr, "GET", path, headers, "").await
}

/// A raw HTTP/1.1 request of any method, with `body`.
pub async fn http_request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// Trade a one-time login link's code for a page session, as the link's page does in the
/// browser (a `POST /session` from the service's own origin); the raw answer.
pub async fn redeem(addr: &str, login_link: &str, origin: &str) -> String {
    let code = login_link
        .split_once("code=")
        .map(|(_, c)| c.trim().to_string())
        .unwrap_or_else(|| panic!("{login_link} has no code"));
    http_request(addr, "POST", "/session", &[("Origin", origin)], &code).await
}

/// Sign in as a person with a one-time link; the page session it earns.
pub async fn sign_in(addr: &str, login_link: &str) -> String {
    assert!(login_link.contains(addr), "{login_link} is not on {addr}");
    let answer = redeem(addr, login_link, &format!("http://{addr}")).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    let v: Value = serde_json::from_str(body).unwrap();
    v["session"].as_str().unwrap().to_string()
}

/// The subprotocols a signed-in page asks for on its WebSocket.
pub fn page_protocols(session: &str) -> String {
    format!("itmcp-page, itmcp-session.{session}")
}

/// A WebSocket to the host's AHP endpoint as a signed-in page.
pub async fn page_socket(
    addr: &str,
    session: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut req = format!("ws://{addr}/ahp").into_client_request().unwrap();
    req.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        page_protocols(session).parse().unwrap(),
    );
    req.headers_mut()
        .insert("Origin", format!("http://{addr}").parse().unwrap());
    tokio_tungstenite::connect_async(req).await.unwrap().0
}

/// A TCP proxy on loopback whose live connections can be cut, or whose replies can be held
/// back (a stalled link), at will.
pub struct Proxy {
    pub port: u16,
    cut: tokio::sync::watch::Sender<u64>,
    stall: tokio::sync::watch::Sender<bool>,
}

/// Copy `from` to `to`, holding bytes back while `stall` is set.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut stall: Option<tokio::sync::watch::Receiver<bool>>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if let Some(s) = stall.as_mut()
            && s.wait_for(|held| !*held).await.is_err()
        {
            return;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

impl Proxy {
    pub async fn start(target: String) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (cut, _) = tokio::sync::watch::channel(0u64);
        let (stall, _) = tokio::sync::watch::channel(false);
        let (cuts, stalls) = (cut.clone(), stall.clone());
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let target = target.clone();
                let mut rx = cuts.subscribe();
                let held = stalls.subscribe();
                tokio::spawn(async move {
                    let Ok(outbound) = tokio::net::TcpStream::connect(&target).await else {
                        return;
                    };
                    let (ir, iw) = inbound.into_split();
                    let (or, ow) = outbound.into_split();
                    tokio::select! {
                        _ = pump(ir, ow, None) => {}
                        _ = pump(or, iw, Some(held)) => {}
                        _ = rx.changed() => {}
                    }
                });
            }
        });
        Proxy { port, cut, stall }
    }

    /// Drop every connection currently through the proxy.
    pub fn cut(&self) {
        self.cut.send_modify(|v| *v += 1);
    }

    /// Hold back (or again pass) what the target sends: requests arrive, answers do not.
    pub fn stall_replies(&self, held: bool) {
        self.stall.send_replace(held);
    }
}
