//! The protocol's floor: an MCP server over stdio that does no work at all. It answers
//! `initialize` and every `tools/call` at once with bytes prepared ahead of time, so a client
//! timing it pays only for what any MCP server costs it — writing and parsing JSON-RPC, the
//! pipe, the wake-ups. `benches/composite.py` times it beside the real server and the work's
//! own floor, in the same run, with answers of the same size as the real server's.
//!
//! Usage: `protocol_floor (--answer-bytes N | --replay FILE) [--http PORT]`: with
//! `--answer-bytes`, every `tools/call` answer is one line of N bytes (a text content padded
//! with `x` to the size). With `--replay`, FILE holds answer lines the real server sent (one
//! JSON-RPC line each, as `{"jsonrpc":"2.0","id":N,…`), and the k-th call is answered with
//! the k-th line (round and round), its id put in: the same bytes, escapes and nesting the
//! client parses from ours, so the floor charges the client's own parsing of them too — what
//! a server that took no time would still cost it. With `--http`, it serves streamable HTTP on 127.0.0.1:PORT instead of stdio, as
//! the real server frames it: a POST's answer is an event stream (a priming event, then the
//! answer's event, in chunks), `initialize` gives a session id, a notification `202`; each
//! connection kept alive on a thread of its own. Built with `cargo build --release
//! --example protocol_floor`.

use std::io::{BufRead, BufWriter, Write};

/// The parts of a request the floor looks at.
#[derive(serde::Deserialize)]
struct Request<'a> {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut answer_bytes = 200usize;
    let mut replay = None;
    let mut http = None;
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--answer-bytes", Some(n)) => answer_bytes = n.parse().unwrap_or(answer_bytes),
            ("--replay", Some(f)) => replay = Some(f),
            ("--http", Some(p)) => http = p.parse::<u16>().ok(),
            _ => {
                eprintln!("usage: protocol_floor (--answer-bytes N | --replay FILE) [--http PORT]");
                std::process::exit(2);
            }
        }
    }
    // Everything after the id, prepared once: a text content of the size that makes the
    // whole line `answer_bytes` long (the id itself is a few bytes of it).
    let head = br#"{"jsonrpc":"2.0","id":"#;
    let body_start = br#","result":{"content":[{"type":"text","text":""#;
    let body_end = b"\"}]}}\n";
    let fixed = head.len() + body_start.len() + body_end.len() + 4;
    let calls = match replay {
        Some(file) => replayed(&file),
        None => {
            let mut call_tail = body_start.to_vec();
            call_tail.resize(body_start.len() + answer_bytes.saturating_sub(fixed), b'x');
            call_tail.extend_from_slice(body_end);
            vec![call_tail]
        }
    };
    let init_tail = br#","result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"protocol-floor","version":"1"}}}
"#;

    if let Some(port) = http {
        let tails = Tails {
            init: init_tail.to_vec(),
            calls,
            next: std::sync::atomic::AtomicUsize::new(0),
        };
        serve_http(port, std::sync::Arc::new(tails));
        return;
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut line = Vec::with_capacity(1 << 16);
    let mut next = 0usize;
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Ok(req) = serde_json::from_slice::<Request>(&line) else {
            continue;
        };
        let Some(id) = req.id else { continue };
        let tail: &[u8] = match req.method.as_ref() {
            "initialize" => init_tail,
            _ => {
                next += 1;
                &calls[(next - 1) % calls.len()]
            }
        };
        let written = out
            .write_all(head)
            .and_then(|()| out.write_all(id.to_string().as_bytes()))
            .and_then(|()| out.write_all(tail))
            .and_then(|()| out.flush());
        if written.is_err() {
            return;
        }
    }
}

/// Everything after the id of the answers: `initialize`'s, and the calls' in turn.
struct Tails {
    init: Vec<u8>,
    calls: Vec<Vec<u8>>,
    next: std::sync::atomic::AtomicUsize,
}

/// The answer lines of `file`, each cut after its id: what follows `{"jsonrpc":"2.0","id":N`.
fn replayed(file: &str) -> Vec<Vec<u8>> {
    let Ok(text) = std::fs::read(file) else {
        eprintln!("protocol_floor: cannot read {file}");
        std::process::exit(1);
    };
    let head = br#"{"jsonrpc":"2.0","id":"#;
    let mut calls = Vec::new();
    for line in text.split_inclusive(|&b| b == b'\n') {
        let Some(rest) = line.strip_prefix(head.as_slice()) else {
            eprintln!(
                "protocol_floor: a line of {file} does not start as {{\"jsonrpc\":\"2.0\",\"id\":"
            );
            std::process::exit(1);
        };
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        calls.push(rest[digits..].to_vec());
    }
    if calls.is_empty() {
        eprintln!("protocol_floor: {file} holds no answers");
        std::process::exit(1);
    }
    calls
}

/// Serve streamable HTTP on 127.0.0.1:`port`, a thread per connection.
fn serve_http(port: u16, tails: std::sync::Arc<Tails>) {
    let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", port)) else {
        eprintln!("protocol_floor: cannot listen on 127.0.0.1:{port}");
        std::process::exit(1);
    };
    for stream in listener.incoming().flatten() {
        let tails = tails.clone();
        let _ = stream.set_nodelay(true);
        std::thread::spawn(move || connection(stream, &tails));
    }
}

/// Answer the requests of one kept-alive connection until it closes.
fn connection(stream: std::net::TcpStream, tails: &Tails) {
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let mut input = std::io::BufReader::with_capacity(1 << 16, stream);
    let mut out = BufWriter::with_capacity(1 << 16, write_half);
    let mut head = Vec::with_capacity(4096);
    let mut body = Vec::with_capacity(4096);
    loop {
        // The request's head, up to the blank line.
        head.clear();
        loop {
            let before = head.len();
            match input.read_until(b'\n', &mut head) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if &head[before..] == b"\r\n" {
                break;
            }
        }
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut req = httparse::Request::new(&mut headers);
        if !matches!(req.parse(&head), Ok(httparse::Status::Complete(_))) {
            return;
        }
        let length = req
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-length"))
            .and_then(|h| {
                std::str::from_utf8(h.value)
                    .ok()?
                    .trim()
                    .parse::<usize>()
                    .ok()
            })
            .unwrap_or(0);
        body.resize(length, 0);
        if std::io::Read::read_exact(&mut input, &mut body).is_err() {
            return;
        }
        let parsed = serde_json::from_slice::<Request>(&body).ok();
        let written = match parsed.as_ref().and_then(|r| r.id.as_ref().map(|id| (id, r))) {
            None => out.write_all(
                b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\ndate: Thu, 01 Jan 2026 00:00:00 GMT\r\n\r\n",
            ),
            Some((id, r)) => {
                let (tail, session): (&[u8], &[u8]) = if r.method == "initialize" {
                    (&tails.init, b"mcp-session-id: 00000000-0000-0000-0000-000000000000\r\n")
                } else {
                    let k = tails.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    (&tails.calls[k % tails.calls.len()], b"")
                };
                let prime = b"data: \nid: 0/0\nretry: 3000\n\n";
                let id = id.to_string();
                let event_len = b"data: ".len()
                    + br#"{"jsonrpc":"2.0","id":"#.len()
                    + id.len()
                    + tail.len()
                    + b"id: 1/0\n\n".len();
                // The answer line ends in a newline already (`tail`).
                out.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                      x-accel-buffering: no\r\ntransfer-encoding: chunked\r\n\
                      date: Thu, 01 Jan 2026 00:00:00 GMT\r\n",
                )
                .and_then(|()| out.write_all(session))
                .and_then(|()| out.write_all(b"\r\n"))
                .and_then(|()| write!(out, "{:x}\r\n", prime.len()))
                .and_then(|()| out.write_all(prime))
                .and_then(|()| write!(out, "\r\n{event_len:x}\r\ndata: "))
                .and_then(|()| out.write_all(br#"{"jsonrpc":"2.0","id":"#))
                .and_then(|()| out.write_all(id.as_bytes()))
                .and_then(|()| out.write_all(tail))
                .and_then(|()| out.write_all(b"id: 1/0\n\n\r\n0\r\n\r\n"))
            }
        };
        if written.and_then(|()| out.flush()).is_err() {
            return;
        }
    }
}
