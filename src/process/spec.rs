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
