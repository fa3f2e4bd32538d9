//! Windows' pseudo console (ConPTY), opened through portable-pty. Its pipes are anonymous
//! pipes, which cannot be polled: one thread of the blocking pool reads each terminal's
//! output and hands it over in chunks (a bounded channel, so a program printing faster than
//! the terminal is read waits, as it would on a full pty), and writes go to the blocking pool
//! one at a time. The shell is put in a Job Object of its own as soon as ConPTY has started
//! it, so everything it starts is contained (`process`).

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use tokio::sync::{mpsc, watch};

use super::Pty;
use crate::locks::lock;
use crate::os::job::Job;
use crate::process::{ChildExit, Supervised};
use crate::terminal::shell::ShellLaunch;

/// Size of each read of the console's output.
const READ_SIZE: usize = 64 * 1024;

/// Chunks of output held between the reading thread and the terminal.
const CHUNKS_HELD: usize = 16;

/// A ConPTY with its shell in a job.
pub struct ConPty {
    master: Mutex<Box<dyn MasterPty + Send>>,
    output: tokio::sync::Mutex<Output>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    supervised: Supervised,
}

/// What the reading thread handed over and the terminal has not taken yet.
struct Output {
    chunks: mpsc::Receiver<Vec<u8>>,
    /// The rest of a chunk larger than the last read's buffer.
    left: Vec<u8>,
}

impl Output {
    /// Move what is waiting into `buf`; `None` when nothing is.
    fn take_left(&mut self, buf: &mut [u8]) -> Option<usize> {
        if self.left.is_empty() {
            return None;
        }
        let n = self.left.len().min(buf.len());
        buf[..n].copy_from_slice(&self.left[..n]);
        self.left.drain(..n);
        Some(n)
    }

    fn hand_over(&mut self, chunk: Vec<u8>, buf: &mut [u8]) -> usize {
        self.left = chunk;
        self.take_left(buf).unwrap_or(0)
    }
}

impl Pty for ConPty {
    fn pid(&self) -> i32 {
        self.supervised.pid
    }

    fn read<'a>(&'a self, buf: &'a mut [u8]) -> BoxFuture<'a, io::Result<usize>> {
        Box::pin(async move {
            let mut out = self.output.lock().await;
            if let Some(n) = out.take_left(buf) {
                return Ok(n);
            }
            match out.chunks.recv().await {
                Some(chunk) => Ok(out.hand_over(chunk, buf)),
                None => Ok(0),
            }
        })
    }

    fn try_read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let Ok(mut out) = self.output.try_lock() else {
            return Ok(None);
        };
        if let Some(n) = out.take_left(buf) {
            return Ok(Some(n));
        }
        match out.chunks.try_recv() {
            Ok(chunk) => Ok(Some(out.hand_over(chunk, buf))),
            Err(_) => Ok(None),
        }
    }

    fn write_all<'a>(&'a self, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        let writer = self.writer.clone();
        let data = data.to_vec();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let mut w = lock(&writer);
                w.write_all(&data)?;
                w.flush()
            })
            .await
            .map_err(io::Error::other)?
        })
    }

    fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
        super::resize(&self.master, cols, rows)
    }

    fn wait(&self) -> BoxFuture<'_, ChildExit> {
        Box::pin(self.supervised.wait())
    }

    fn kill(&self) -> BoxFuture<'_, Vec<i32>> {
        Box::pin(self.supervised.kill())
    }
}

/// Start `launch` in a new ConPTY of `cols` x `rows`, its shell in a job of its own.
pub async fn spawn(
    launch: &ShellLaunch,
    cwd: &Path,
    extra_env: &BTreeMap<String, String>,
    cols: u16,
    rows: u16,
) -> io::Result<ConPty> {
    // The operator's sandbox cannot be set up here: with one asked for, nothing starts.
    crate::sandbox::current()
        .ready()
        .map_err(|u| io::Error::new(io::ErrorKind::PermissionDenied, u.to_string()))?;
    let pair = native_pty_system()
        .openpty(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(io::Error::other)?;
    let mut cmd = CommandBuilder::new(&launch.program);
    cmd.args(&launch.args);
    cmd.cwd(cwd);
    for (k, v) in super::terminal_env(extra_env, &launch.env) {
        cmd.env(k, v);
    }
    let job = Arc::new(Job::new()?);
    let mut child = pair.slave.spawn_command(cmd).map_err(io::Error::other)?;
    drop(pair.slave);
    let contained = match child.as_raw_handle() {
        Some(h) => job.assign(h),
        None => Err(io::Error::other("the console's program has no handle")),
    };
    if let Err(e) = contained {
        let _ = child.kill();
        return Err(e);
    }
    let pid = child.process_id().map_or(0, |p| p as i32);
    let (exit_tx, exit) = watch::channel(None);
    tokio::task::spawn_blocking(move || {
        let e = match child.wait() {
            Ok(status) => ChildExit::Code(status.exit_code() as i32),
            Err(_) => ChildExit::Unknown,
        };
        exit_tx.send_replace(Some(e));
    });
    let mut reader = pair.master.try_clone_reader().map_err(io::Error::other)?;
    let writer = pair.master.take_writer().map_err(io::Error::other)?;
    let (tx, chunks) = mpsc::channel(CHUNKS_HELD);
    tokio::task::spawn_blocking(move || {
        let mut buf = vec![0u8; READ_SIZE];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.blocking_send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    Ok(ConPty {
        master: Mutex::new(pair.master),
        output: tokio::sync::Mutex::new(Output {
            chunks,
            left: Vec::new(),
        }),
        writer: Arc::new(Mutex::new(writer)),
        supervised: Supervised::in_job(pid, job, exit),
    })
}
