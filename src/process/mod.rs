//! Process trees: the subreaper, reaping, and killing everything an identity started.

pub mod reaper;
pub mod tree;

pub use tree::{OWNER_ENV, Selector, kill_all_descendants, kill_tree};

/// Signal names for exit reports (`SIGKILL`, not `9`).
pub fn signal_name(sig: i32) -> String {
    match nix::sys::signal::Signal::try_from(sig) {
        Ok(s) => s.as_str().to_string(),
        Err(_) => format!("SIG{sig}"),
    }
}
