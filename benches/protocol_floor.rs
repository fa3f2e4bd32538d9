//! The protocol's floor: an MCP server over stdio that does no work at all. It answers
//! `initialize` and every `tools/call` at once with bytes prepared ahead of time, so a client
//! timing it pays only for what any MCP server costs it — writing and parsing JSON-RPC, the
//! pipe, the wake-ups. `benches/composite.py` times it beside the real server and the work's
//! own floor, in the same run, with answers of the same size as the real server's.
//!
//! Usage: `protocol_floor --answer-bytes N`: every `tools/call` answer is one line of N
//! bytes (a text content padded to the size, escaped ahead of time), the id put in front.
//! Built with `cargo build --release --example protocol_floor`.

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
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--answer-bytes", Some(n)) => answer_bytes = n.parse().unwrap_or(answer_bytes),
            _ => {
                eprintln!("usage: protocol_floor --answer-bytes N");
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
    let mut call_tail = body_start.to_vec();
    call_tail.resize(body_start.len() + answer_bytes.saturating_sub(fixed), b'x');
    call_tail.extend_from_slice(body_end);
    let init_tail = br#","result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"protocol-floor","version":"1"}}}
"#;

    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut line = Vec::with_capacity(1 << 16);
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
            _ => &call_tail,
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
