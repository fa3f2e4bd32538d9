//! What to run in a new session, on every system.

use std::path::{Path, PathBuf};

use super::SessionIo;

/// What to run in a new session.
pub struct SessionSpec<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    pub cwd: &'a Path,
    /// Set on top of the server's environment.
    pub env: Vec<(String, String)>,
    /// Paths the program must be able to read although the operator's sandbox hides them
    /// (a terminal's shell-integration scripts).
    pub expose: &'a [PathBuf],
    /// Inside the operator's sandbox. Only a headless command a person let out is not.
    /// (Windows has no sandbox: the server does not start with one asked for.)
    pub confined: bool,
    pub io: SessionIo,
}

impl SessionSpec<'_> {
    /// The program as it will start, inside the operator's sandbox when confined (`Err`
    /// with `PermissionDenied` and the reason when the sandbox cannot be set up: nothing
    /// starts unconfined), and the session's descriptors.
    pub(super) fn into_launch(self) -> std::io::Result<(crate::sandbox::Launch, SessionIo)> {
        let launch = if self.confined {
            crate::sandbox::current()
                .wrap(self.program, self.args, self.cwd, self.expose, self.env)
                .map_err(|u| {
                    std::io::Error::new(std::io::ErrorKind::PermissionDenied, u.to_string())
                })?
        } else {
            crate::sandbox::Launch {
                program: self.program.to_string(),
                args: self.args.to_vec(),
                env: self.env,
                landlock: None,
            }
        };
        Ok((launch, self.io))
    }
}
