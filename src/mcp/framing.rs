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
//! none. What passes is handed to rmcp as its typed message (one object, duplicate keys
//! resolved), parsed here once.
//!
//! This layer is rmcp's transport itself ([`Framed`]), not a filter in front of rmcp's own
//! stdio transport: a request is parsed once instead of three times (here, re-serialised,
//! parsed again by rmcp), and an answer is serialised once into a buffer kept from answer to
//! answer and written straight to the client — no in-process pipes, whose copies and fresh
//! megabyte buffers were most of the server's CPU for a page of output.
//!
//! A client that stops reading its answers stops the server reading its requests: rmcp
//! starts a task for every request it takes and another for every answer, without bound, so
//! a client that kept sending `read_output` calls for megabyte pages while reading none of
//! the answers made the server hold every answer — gigabytes within seconds. Once
//! [`UNWRITTEN_MAX`] messages wait to be written, the reader takes no more lines until the
//! client has read some; the pipe fills and the client's own writes wait, as a pipe is meant
//! to make them.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::service::TxJsonRpcMessage;
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, mpsc, watch};

use super::line_check::{ID_SEARCH_BYTES, LineAction, MAX_LINE_BYTES, classify, oversized};

/// Read size from stdin.
const CHUNK: usize = 64 * 1024;
/// Messages parsed ahead of rmcp before the reader waits for it.
const INBOX: usize = 64;
/// Messages for the client (answers, notifications, requests) handed to the writer and not
/// yet written, beyond which the reader waits before passing on another line: at most this
/// many pages of output (1 MiB each, a few once escaped) are held for a client that does not
/// read.
const UNWRITTEN_MAX: usize = 16;
/// Capacity the answer buffer keeps between answers; beyond it (an answer of several pages)
/// the buffer is given back after the answer.
const KEPT_CAPACITY: usize = 4 * 1024 * 1024;

/// rmcp's transport over stdio through this layer.
pub fn stdio() -> Framed {
    frame(super::stdio::input(), super::stdio::output())
}

/// The layer over any byte streams: stdio in the server, in-memory pipes in tests.
pub fn frame<R, W>(input: R, output: W) -> Framed
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let writer = Arc::new(Mutex::new(Writer {
        out: Box::new(output),
        buf: Vec::new(),
    }));
    let (tx, inbox) = mpsc::channel(INBOX);
    let (unwritten, unwritten_seen) = watch::channel(0usize);
    tokio::spawn(read_lines(input, tx, writer.clone(), unwritten_seen));
    let (ended, _) = watch::channel(false);
    Framed {
        inbox,
        writer,
        ended,
        unwritten: Arc::new(unwritten),
    }
}

/// Resolves once the client's input has ended and rmcp has taken its last message. What
/// lives as long as the client wants it (a `subscriptions/listen` request) ends with it:
/// rmcp waits for every request in flight before it closes, and would wait its drain
/// timeout for one that never ends.
#[derive(Clone)]
pub struct InputEnd(watch::Receiver<bool>);

impl InputEnd {
    pub async fn wait(mut self) {
        // An error: the transport is gone, which is an end too.
        let _ = self.0.wait_for(|ended| *ended).await;
    }
}

/// The transport rmcp serves: messages from the reader task, answers written in place.
pub struct Framed {
    inbox: mpsc::Receiver<ClientJsonRpcMessage>,
    writer: Arc<Mutex<Writer>>,
    ended: watch::Sender<bool>,
    /// Messages handed to the writer and not yet written (see [`UNWRITTEN_MAX`]).
    unwritten: Arc<watch::Sender<usize>>,
}

/// One message counted as unwritten from its hand-over until it is written, failed, or
/// dropped unwritten (rmcp aborts its send tasks when it stops).
struct Unwritten(Arc<watch::Sender<usize>>);

impl Unwritten {
    fn count(counter: &Arc<watch::Sender<usize>>) -> Unwritten {
        counter.send_modify(|n| *n += 1);
        Unwritten(counter.clone())
    }
}

impl Drop for Unwritten {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Framed {
    /// The end of the client's input, for what must not outlive it.
    pub fn input_end(&self) -> InputEnd {
        InputEnd(self.ended.subscribe())
    }
}

/// The one writer to the client: rmcp's messages and this layer's answers, each a whole
/// line under the lock, never interleaved.
struct Writer {
    out: Box<dyn AsyncWrite + Send + Unpin>,
    buf: Vec<u8>,
}

impl Writer {
    /// Write one line (`line` without its newline) and flush it.
    async fn line(
        &mut self,
        line: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.buf.clear();
        line(&mut self.buf)?;
        self.buf.push(b'\n');
        let written = self.out.write_all(&self.buf).await;
        if self.buf.capacity() > KEPT_CAPACITY {
            self.buf = Vec::new();
        }
        written?;
        self.out.flush().await
    }
}

impl Transport<RoleServer> for Framed {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        let unwritten = Unwritten::count(&self.unwritten);
        async move {
            let _unwritten = unwritten;
            writer
                .lock()
                .await
                .line(|buf| super::shared_text::write(buf, item))
                .await
        }
    }

    /// Cancel-safe, as rmcp needs (it polls this in a `select!`): a message is either still
    /// in the channel or returned.
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        let m = self.inbox.recv().await;
        if m.is_none() {
            self.ended.send_replace(true);
        }
        m
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Split the client's stream into lines (bounded), check each, pass it on or answer it.
async fn read_lines<R: AsyncRead + Unpin>(
    mut input: R,
    to_rmcp: mpsc::Sender<ClientJsonRpcMessage>,
    writer: Arc<Mutex<Writer>>,
    mut unwritten: watch::Receiver<usize>,
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
                    LineAction::Forward(msg) => {
                        // A client that does not read its answers gets no more taken from
                        // it until it does. An error: the transport is gone.
                        if unwritten.wait_for(|n| *n < UNWRITTEN_MAX).await.is_err()
                            || to_rmcp.send(*msg).await.is_err()
                        {
                            return;
                        }
                    }
                    LineAction::Answer(msg) => {
                        tracing::info!(answer = %String::from_utf8_lossy(&msg), "malformed message answered");
                        let wrote = writer
                            .lock()
                            .await
                            .line(|buf| {
                                buf.extend_from_slice(&msg);
                                Ok(())
                            })
                            .await;
                        if wrote.is_err() {
                            return;
                        }
                    }
                    LineAction::Drop(why) => {
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
            // The client closed its side: dropping the sender ends rmcp's input.
            return;
        }
    }
}
