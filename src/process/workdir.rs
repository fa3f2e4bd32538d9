//! The working directory a command or terminal starts in, checked before anything starts.
//!
//! A directory that exists but cannot be entered (a mounted workspace owned by another user,
//! mode 0700) makes the start itself fail with EACCES, which reads as "cannot run /bin/sh":
//! the shell is fine, the directory is the cause. So the directory is checked first, and the
//! answer names it, and says whether the request chose it or the server started there.

use std::path::{Path, PathBuf};

/// Why a working directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum WorkdirError {
    /// The request's directory.
    #[error("working directory {path:?} {reason}")]
    Asked { path: String, reason: String },
    /// The server's own directory (no directory was asked for).
    #[error(
        "the server's working directory {path:?} cannot be entered by its user ({user}): {reason}"
    )]
    Own {
        path: String,
        /// Who the server runs as (`uid 1000`; a user name on Windows).
        user: String,
        reason: String,
    },
}

/// The directory to start in: `cwd` (relative to the server's own directory), or the
/// server's own directory; it must exist, be a directory and be enterable by this process.
pub fn resolve(cwd: Option<&str>) -> Result<PathBuf, WorkdirError> {
    let base = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let Some(raw) = cwd else {
        return match enterable(&base) {
            Ok(()) => Ok(base),
            Err(e) => Err(WorkdirError::Own {
                path: base.display().to_string(),
                user: crate::os::user_label(),
                reason: e.to_string(),
            }),
        };
    };
    let path = if Path::new(raw).is_absolute() {
        PathBuf::from(raw)
    } else {
        base.join(raw)
    };
    let asked = |reason: String| WorkdirError::Asked {
        path: raw.to_string(),
        reason,
    };
    match std::fs::metadata(&path) {
        Ok(m) if m.is_dir() => enterable(&path)
            .map(|()| path)
            .map_err(|e| asked(format!("cannot be entered by this server's user ({e})"))),
        Ok(_) => Err(asked("is not a directory".into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(asked("does not exist".into())),
        Err(e) => Err(asked(format!("is not accessible ({e})"))),
    }
}

/// Whether this process may make `dir` its working directory: on Windows, whether it can
/// list it (there is no search permission apart from reading).
#[cfg(windows)]
fn enterable(dir: &Path) -> std::io::Result<()> {
    std::fs::read_dir(dir).map(|_| ())
}

/// Whether this process may make `dir` its working directory (search permission).
#[cfg(unix)]
fn enterable(dir: &Path) -> std::io::Result<()> {
    nix::unistd::access(dir, nix::unistd::AccessFlags::X_OK).map_err(std::io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_named_with_their_cause() {
        let missing = resolve(Some("/no/such/dir")).unwrap_err().to_string();
        assert!(
            missing.contains("\"/no/such/dir\" does not exist"),
            "{missing}"
        );
        let file = resolve(Some("/etc/hostname")).unwrap_err().to_string();
        assert!(file.contains("is not a directory"), "{file}");
        assert!(resolve(Some("/")).is_ok());
        assert!(resolve(None).is_ok());
    }
}
