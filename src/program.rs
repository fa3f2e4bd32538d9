//! Finding programs the operator installed: on PATH, executable.

use std::path::{Path, PathBuf};

/// Find `name` on PATH, in its absolute entries only. Why: a relative entry (`.`, an empty
/// entry, `bin`) is looked up from the working directory, which may be a project the agent
/// writes in, where a file named like the program would run in its place.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .flat_map(|d| {
            crate::os::program_file_names(name)
                .into_iter()
                .map(move |n| d.join(n))
        })
        .find(|p| is_executable(p))
}

/// Whether `p` is a file someone may execute.
pub fn is_executable(p: &Path) -> bool {
    crate::os::executable(p)
}
