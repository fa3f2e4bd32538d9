//! Every `.git` under a writable root — the root's own and those of repositories nested in
//! it (vendored checkouts, submodules' pointer files, side projects) — stays read-only: a
//! hook or a `core.fsmonitor` written there runs, outside the sandbox, the next time the
//! user runs git in that repository.
//!
//! Found by walking the root's directories (not following symbolic links) before a command
//! starts, remembered for a few seconds so that a burst of commands walks once. A root too
//! large to walk within the budget is refused rather than half protected.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::settings::PROTECTED_NAMES;

/// Directories one walk may enter.
const MAX_DIRS: usize = 200_000;

/// How long a walk's answer is reused.
const FRESH_FOR: Duration = Duration::from_secs(5);

type Found = Result<Vec<PathBuf>, String>;

fn cache() -> &'static Mutex<HashMap<PathBuf, (Instant, Found)>> {
    static CACHE: std::sync::OnceLock<Mutex<HashMap<PathBuf, (Instant, Found)>>> =
        std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The protected entries (`.git` directories and files) under `root`, outermost first.
pub fn under(root: &Path) -> Found {
    if let Some((at, found)) = crate::locks::lock(cache()).get(root)
        && at.elapsed() < FRESH_FOR
    {
        return found.clone();
    }
    let found = walk(root, MAX_DIRS);
    crate::locks::lock(cache()).insert(root.to_path_buf(), (Instant::now(), found.clone()));
    found
}

fn walk(root: &Path, budget: usize) -> Found {
    let mut found = Vec::new();
    let mut queue = std::collections::VecDeque::from([root.to_path_buf()]);
    let mut entered = 0usize;
    while let Some(dir) = queue.pop_front() {
        entered += 1;
        if entered > budget {
            return Err(format!(
                "the workspace {} holds more than {budget} directories, too many to find \
                 every .git in it before each command; name narrower workspaces",
                root.display()
            ));
        }
        // A directory this user cannot read holds nothing the sandbox could write either.
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            if PROTECTED_NAMES.iter().any(|n| name == *n) {
                found.push(entry.path());
            } else if kind.is_dir() {
                queue.push_back(entry.path());
            }
        }
    }
    Ok(found)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn nested_repositories_are_found_and_a_huge_root_is_refused() {
        let root = std::env::temp_dir().join(format!("itmcp-gitdirs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in [
            ".git/hooks",
            "vendor/lib/.git",
            "a/b/c/d",
            "link-target/.git",
        ] {
            std::fs::create_dir_all(root.join(d)).expect("dirs");
        }
        std::fs::write(root.join("sub.git-file"), "x").expect("file");
        std::fs::create_dir_all(root.join("mod")).expect("dir");
        std::fs::write(root.join("mod/.git"), "gitdir: ../.git/modules/mod").expect("file");
        std::os::unix::fs::symlink(root.join("link-target"), root.join("a/link")).expect("link");
        let mut found = walk(&root, 1000).expect("walked");
        found.sort();
        let mut want = vec![
            root.join(".git"),
            root.join("link-target/.git"),
            root.join("mod/.git"),
            root.join("vendor/lib/.git"),
        ];
        want.sort();
        assert_eq!(found, want);
        assert!(walk(&root, 3).is_err());
        let _ = std::fs::remove_dir_all(&root);
    }
}
