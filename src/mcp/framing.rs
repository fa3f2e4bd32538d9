//! The framing layer in front of rmcp's stdio transport: every line a client sends either
//! reaches rmcp as a message rmcp can parse, or gets the JSON-RPC error it deserves right
//! here — never silence, which leaves a client waiting for its own timeout.
//!
//! rmcp skips a line it cannot decode (invalid UTF-8 or JSON, a wrong `jsonrpc`, an id that
//! is not a string or an `i64`, a batch, a line over its limit) and answers a malformed
//! `tools/call` as an unknown method. Here each line is checked first:
//!
//! | what | answer |
//! | --- | --- |
//! | not UTF-8, not JSON, nested too deep, trailing garbage | -32700 parse error |
//! | not an object, `jsonrpc` not `"2.0"`, `method` not a string, `id` not a string or an integer in range, a batch | -32600 invalid request |
//! | `params` not an object, params a known method cannot take (`tools/call` without a `name`, `arguments` not an object) | -32602 invalid params |
//! | longer than [`MAX_LINE_BYTES`] | -32600, the rest of the line discarded unread |
//!
//! The id is echoed whenever it can be recovered: from the parsed object, or — for a line
//! that does not parse or is too long — from a top-level `"id"` found in its first bytes.
//! Notifications (no id) that are malformed are dropped with a log line: JSON-RPC answers
//! none. What passes is handed to rmcp re-serialised (one object, duplicate keys resolved).

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::verdict::{ID_SEARCH_BYTES, MAX_LINE_BYTES, Verdict, classify, oversized};

/// Read size from stdin and buffer size of the in-process pipes to rmcp.
const CHUNK: usize = 64 * 1024;
/// Buffer of the pipe from rmcp and of each write to the client: an answer of a page of
/// output (about a megabyte of JSON) goes out in one or two writes, not sixteen task hops.
const OUT_CHUNK: usize = 1024 * 1024;
/// Errors queued for the writer before the reader waits for it.
const ERROR_QUEUE: usize = 256;

/// Serve rmcp over stdio through this layer: returns rmcp's ends of two in-process pipes.
pub fn stdio() -> (
    impl AsyncRead + Send + Unpin,
    impl AsyncWrite + Send + Unpin,
) {
    frame(super::stdio::input(), super::stdio::output())
}

/// The layer over any byte streams (stdio in the server; in-memory pipes in tests).
pub fn frame<R, W>(input: R, output: W) -> (tokio::io::DuplexStream, tokio::io::DuplexStream)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(CHUNK);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(OUT_CHUNK);
    let (errors_tx, errors_rx) = mpsc::channel::<Vec<u8>>(ERROR_QUEUE);
    tokio::spawn(read_lines(input, to_rmcp, errors_tx));
    tokio::spawn(write_lines(from_rmcp, errors_rx, output));
    (rmcp_reads, rmcp_writes)
}

/// Split the client's stream into lines (bounded), check each, pass it on or answer it.
async fn read_lines<R: AsyncRead + Unpin>(
    mut input: R,
    mut to_rmcp: tokio::io::DuplexStream,
    errors: mpsc::Sender<Vec<u8>>,
) {
    let mut buf = vec![0u8; CHUNK];
    let mut line: Vec<u8> = Vec::new();
    // Bytes of the current line beyond what is kept (an over-long line).
    let mut dropped = 0usize;
    loop {
        let n = match input.read(&mut buf).await {
            Ok(0) | Err(_) => 0,
            Ok(n) => n,
        };
        let mut rest = &buf[..n];
        let at_end = n == 0;
        loop {
            let (part, done) = match rest.iter().position(|b| *b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, at_end),
            };
            let keep = if dropped > 0 || line.len() + part.len() > MAX_LINE_BYTES {
                ID_SEARCH_BYTES.saturating_sub(line.len()).min(part.len())
            } else {
                part.len()
            };
            if keep < part.len() || dropped > 0 {
                dropped += part.len() - keep;
            }
            line.extend_from_slice(&part[..keep]);
            if done && (!line.is_empty() || dropped > 0) {
                let verdict = if dropped > 0 {
                    oversized(&line, line.len() + dropped)
                } else {
                    classify(&line)
                };
                match verdict {
                    Verdict::Forward(mut msg) => {
                        msg.push(b'\n');
                        if to_rmcp.write_all(&msg).await.is_err() {
                            return;
                        }
                    }
                    Verdict::Answer(mut msg) => {
                        tracing::info!(answer = %String::from_utf8_lossy(&msg), "malformed message answered");
                        msg.push(b'\n');
                        if errors.send(msg).await.is_err() {
                            return;
                        }
                    }
                    Verdict::Drop(why) => {
                        if why != "blank line" {
                            tracing::info!(why, "malformed message dropped (no id to answer)");
                        }
                    }
                }
                line.clear();
                dropped = 0;
            }
            match rest.iter().position(|b| *b == b'\n') {
                Some(i) => rest = &rest[i + 1..],
                None => break,
            }
        }
        if at_end {
            // The client closed its side: rmcp sees the end of its input and stops.
            let _ = to_rmcp.shutdown().await;
            return;
        }
    }
}

/// One writer for the client: rmcp's lines and this layer's answers, never interleaved.
/// rmcp's bytes are passed on as they come (a large answer is not gathered into a line
/// first); this layer's answers go out only between rmcp's lines.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut from_rmcp: tokio::io::DuplexStream,
    mut errors: mpsc::Receiver<Vec<u8>>,
    mut output: W,
) {
    // Spare capacity, not zeroed: pages are touched only as answers fill them.
    let mut buf = Vec::with_capacity(OUT_CHUNK);
    let mut rmcp_open = true;
    let mut mid_line = false;
    loop {
        buf.clear();
        let wrote = tokio::select! {
            r = from_rmcp.read_buf(&mut buf), if rmcp_open => match r {
                Ok(0) | Err(_) => {
                    rmcp_open = false;
                    continue;
                }
                Ok(_) => {
                    mid_line = buf.last() != Some(&b'\n');
                    output.write_all(&buf).await
                }
            },
            e = errors.recv(), if !mid_line => match e {
                Some(e) => output.write_all(&e).await,
                None if rmcp_open => continue,
                None => return,
            },
        };
        if wrote.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}
