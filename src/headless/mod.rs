//! Headless execution: one manager owning every pipe-based session, its limits as named
//! constants, every session's output kept by cursor until it is pruned.

pub mod session;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub use crate::limits::places::{NoPlace, Places, RunningSlot};
pub use session::{Program, Session, StartSpec, Status, Stream};

use crate::ids;

/// Default most sessions running at once.
pub const DEFAULT_MAX_RUNNING: usize = 64;
/// Default most exited sessions kept readable; the oldest are pruned first.
pub const DEFAULT_MAX_RETAINED: usize = 256;

#[derive(Debug, Clone)]
pub struct HeadlessConfig {
    pub spool_dir: PathBuf,
    pub memory_limit: usize,
    /// Places for running sessions, shared with every other session of the server.
    pub places: Arc<Places>,
    pub max_retained: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    #[error(transparent)]
    Workdir(crate::process::workdir::WorkdirError),
    #[error("cannot start {program:?}: {source}")]
    Spawn {
        program: String,
        /// The request named the program (`execution.args`), rather than the server's shell.
        named: bool,
        #[source]
        source: std::io::Error,
    },
    #[error("{}", no_place(.0))]
    NoPlace(NoPlace),
}

pub struct HeadlessSessions {
    cfg: HeadlessConfig,
    /// Keyed by id: ULIDs sort by creation time, so iteration is oldest first.
    sessions: Mutex<BTreeMap<String, Arc<Session>>>,
    /// Pruned sessions whose processes still run (killed at shutdown).
    lingering: Mutex<Vec<Arc<Session>>>,
}

use crate::locks::lock;

/// What a start that got no place is told.
fn no_place(n: &NoPlace) -> String {
    match n {
        NoPlace::QueueFull { max, queue } => format!(
            "the server's limit of {max} running commands is reached and {queue} more already wait for a place"
        ),
        NoPlace::Waited { max, waited } => format!(
            "the server's limit of {max} running commands is reached and no place came free in {} ms",
            waited.as_millis()
        ),
    }
}

/// Resolve and check a working directory (see [`crate::process::workdir`]).
pub fn resolve_cwd(cwd: Option<&str>) -> Result<PathBuf, HeadlessError> {
    crate::process::workdir::resolve(cwd).map_err(HeadlessError::Workdir)
}

impl HeadlessSessions {
    pub fn new(cfg: HeadlessConfig) -> HeadlessSessions {
        HeadlessSessions {
            cfg,
            sessions: Mutex::new(BTreeMap::new()),
            lingering: Mutex::new(Vec::new()),
        }
    }

    /// Start a session once a place is free, waiting at most `wait` for one; with the time
    /// it waited.
    pub async fn start(
        &self,
        spec: StartSpec,
        wait: std::time::Duration,
    ) -> Result<(Arc<Session>, std::time::Duration), HeadlessError> {
        let (slot, waited) = self
            .cfg
            .places
            .take(wait)
            .await
            .map_err(HeadlessError::NoPlace)?;
        let id = ids::new_id(ids::SESSION);
        let (program, named) = match &spec.program {
            Program::Shell { shell, .. } => (shell.display().to_string(), false),
            Program::Argv { program, .. } => (program.clone(), true),
        };
        let session = Session::spawn(
            id.clone(),
            spec,
            &self.cfg.spool_dir,
            self.cfg.memory_limit,
            slot,
        )
        .await
        .map_err(|source| HeadlessError::Spawn {
            program,
            named,
            source,
        })?;
        tracing::info!(session = %id, pid = session.pid, command = %session.command, "session started");
        let mut sessions = lock(&self.sessions);
        sessions.insert(id, session.clone());
        // Every session kept is running or has exited; the running hold places. (A start
        // under way elsewhere holds one too, so this count may fall short by it, for a
        // moment: a later start prunes what this one left.)
        let exited = sessions.len().saturating_sub(self.cfg.places.taken());
        let pruned = prune(
            &mut sessions,
            exited,
            self.cfg.max_retained.saturating_sub(1),
        );
        drop(sessions);
        // A pruned session is forgotten, but what it left running (a server it started in
        // the background) stays until the server ends.
        lock(&self.lingering).extend(pruned.into_iter().filter(|s| s.has_processes()));
        Ok((session, waited))
    }

    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.sessions).get(id).cloned()
    }

    /// Every session, oldest first.
    pub fn list(&self) -> Vec<Arc<Session>> {
        lock(&self.sessions).values().cloned().collect()
    }

    /// Kill every session's processes, all at once (server shutdown).
    pub async fn shutdown(&self) {
        let mut all = self.list();
        all.extend(std::mem::take(&mut *lock(&self.lingering)));
        let kills: Vec<_> = all
            .iter()
            .filter(|s| s.has_processes())
            .map(|s| s.kill())
            .collect();
        futures_util::future::join_all(kills).await;
    }
}

/// Of the `exited` sessions among `sessions`, drop the oldest until at most `keep_exited`
/// remain; returns them. Runs at every start: it walks only past what it drops (and the
/// running sessions older than those, at most the running limit).
fn prune(
    sessions: &mut BTreeMap<String, Arc<Session>>,
    exited: usize,
    keep_exited: usize,
) -> Vec<Arc<Session>> {
    let excess = exited.saturating_sub(keep_exited);
    if excess == 0 {
        return Vec::new();
    }
    let oldest: Vec<String> = sessions
        .iter()
        .filter(|(_, s)| !s.is_running())
        .take(excess)
        .map(|(k, _)| k.clone())
        .collect();
    oldest
        .iter()
        .filter_map(|id| {
            tracing::debug!(session = %id, "pruned exited session");
            sessions.remove(id)
        })
        .collect()
}
