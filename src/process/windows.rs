//! Containment on Windows: each session's program starts suspended in a Job Object of its
//! own (`os::job`), so everything it starts is in the job — Windows puts a child in its
//! parent's job and the job allows no breakaway — and is ended with it: on `kill`, when the
//! session is dropped, and when the server dies (its handle, the job's last, is closed by
//! the system: `KILL_ON_JOB_CLOSE`). No helper process stands between the server and the
//! program; the job is what the supervisor is on Linux. See docs/containment.md.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::watch;

use super::SessionSpec;
use super::wire::ChildExit;
use crate::os::job::Job;

/// A session's handles: what its program writes to.
pub enum SessionIo {
    /// The write ends of the stdout and stderr pipes (stdin is closed).
    Headless {
        stdout: std::io::PipeWriter,
        stderr: std::io::PipeWriter,
    },
}

/// A running (or ended) session in its job.
pub struct Supervised {
    /// The program's process id.
    pub pid: i32,
    job: Arc<Job>,
    exit: watch::Receiver<Option<ChildExit>>,
}

/// No process for sessions to start through on Windows: nothing to set.
pub fn use_spawner_program(_path: &Path) {}

/// Nothing to stop: each session's job ends with its handle.
pub async fn stop_spawner() {}

/// Start a session's program in a job of its own: stdin closed, stdout and stderr the
/// session's pipes, no console window.
pub async fn spawn(spec: SessionSpec<'_>) -> std::io::Result<Supervised> {
    use std::os::windows::process::CommandExt;
    // With a sandbox asked for, it is unavailable here: the start is refused with the
    // reason (the server does not start with one in any case).
    let cwd = spec.cwd;
    let (launch, io) = spec.into_launch()?;
    let SessionIo::Headless { stdout, stderr } = io;
    let mut cmd = std::process::Command::new(&launch.program);
    add_args(&mut cmd, &launch.program, &launch.args);
    cmd.current_dir(cwd)
        .envs(launch.env)
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        // CREATE_NO_WINDOW: a console program gets a console nobody sees, not a window.
        .creation_flags(0x0800_0000);
    let job = Job::new()?;
    let mut child = job.spawn(&mut cmd)?;
    // The command holds the pipes' write ends until it is dropped: drop it, or the pipes
    // never end.
    drop(cmd);
    let pid = child.id() as i32;
    let (exit_tx, exit) = watch::channel(None);
    tokio::task::spawn_blocking(move || {
        let e = match child.wait() {
            Ok(status) => status.code().map_or(ChildExit::Unknown, ChildExit::Code),
            Err(_) => ChildExit::Unknown,
        };
        exit_tx.send_replace(Some(e));
    });
    Ok(Supervised::in_job(pid, Arc::new(job), exit))
}

/// The arguments of `program` on its command line. cmd.exe does not read a command line as
/// other programs do (backslash-escaped quotes mean nothing to it): a headless line given
/// to it as `/d /s /c LINE` (`headless::shell_args`) goes as it is, inside the one pair of
/// quotes `/s` tells it to strip. Any other argv is quoted the usual way.
fn add_args(cmd: &mut std::process::Command, program: &str, args: &[String]) {
    use std::os::windows::process::CommandExt;
    let is_cmd = std::path::Path::new(program)
        .file_stem()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.eq_ignore_ascii_case("cmd"));
    match args {
        [d, s, c, line] if is_cmd && d == "/d" && s == "/s" && c == "/c" => {
            cmd.args([d, s, c]).raw_arg(format!("\"{line}\""));
        }
        _ => {
            cmd.args(args);
        }
    }
}

impl Supervised {
    /// A session whose program some other start put in `job` (a terminal's, by ConPTY);
    /// `exit` says how it ended.
    pub fn in_job(pid: i32, job: Arc<Job>, exit: watch::Receiver<Option<ChildExit>>) -> Self {
        Supervised { pid, job, exit }
    }

    /// How the program ended, once it has.
    pub fn exit(&self) -> Option<ChildExit> {
        *self.exit.borrow()
    }

    /// Wait for the program to end.
    pub async fn wait(&self) -> ChildExit {
        super::settle::exit_of(self.exit.clone()).await
    }

    /// Whether every process of the session is gone: the program ended and its job is
    /// empty.
    pub fn is_gone(&self) -> bool {
        self.exit().is_some() && self.job.pids().map_or(true, |p| p.is_empty())
    }

    /// Kill everything in the session's job; returns the ids killed.
    pub async fn kill(&self) -> Vec<i32> {
        let job = self.job.clone();
        tokio::task::spawn_blocking(move || {
            let pids = job.pids().unwrap_or_default();
            if let Err(e) = job.terminate(1) {
                tracing::warn!(error = %e, "cannot end a session's job");
            }
            pids.into_iter().map(|p| p as i32).collect()
        })
        .await
        .unwrap_or_default()
    }
}

/// The containment choice of the operator (`--containment`): on Windows a job is the one
/// containment there is, and these only record the choice.
pub mod namespace {
    use std::sync::atomic::{AtomicBool, Ordering};

    static SUBREAPER_ONLY: AtomicBool = AtomicBool::new(false);

    /// Record the operator's choice (at start, before any session).
    pub fn set_subreaper_only(only: bool) {
        SUBREAPER_ONLY.store(only, Ordering::Relaxed);
    }

    /// Whether the operator chose supervisors alone.
    pub fn subreaper_only() -> bool {
        SUBREAPER_ONLY.load(Ordering::Relaxed)
    }
}
