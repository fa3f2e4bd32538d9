//! Files a process names after itself (`<prefix><pid><suffix>`) and removes when it ends: a
//! process killed with SIGKILL cannot, so the next one clears what the dead left behind.

use std::path::Path;

/// Call `remove` on every entry of `dir` named `<prefix><pid><suffix>` whose process is gone
/// (or a zombie: ended, its owner dead before it could reap it).
pub fn remove_left_by_dead(dir: &Path, prefix: &str, suffix: &str, remove: impl Fn(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.strip_suffix(suffix))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if !crate::os::process_running(pid) {
            remove(&e.path());
        }
    }
}
