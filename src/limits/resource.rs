//! Which machine resource an OS error says ran out: such a failure is told to the agent as
//! a limit it may wait out or free, by name, never as an internal error.

/// The resource `e` says ran out (`disk_space`, `open_files`, `processes`, `memory`), if it
/// names one.
pub fn exhausted(e: &std::io::Error) -> Option<&'static str> {
    crate::os::exhausted(e)
}
