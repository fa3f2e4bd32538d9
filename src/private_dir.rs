//! Directories only this user may change, for what the server writes under a shared
//! temporary directory: the shell-integration scripts every terminal's shell sources, the
//! output spools, the sandbox's and the network proxy's files.
//!
//! Their names are predictable (`/tmp/interactive-terminal-mcp-<uid>`), and anyone may create
//! a name in `/tmp`. A directory another user made first, or one others may write to, would
//! let them swap the scripts a shell is about to source: their code, run as this user. So a
//! directory is used only when it is a real directory (or a link this user made) owned by
//! this user; one this user owns but others may write to is narrowed to `0700` first.

use std::io;
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;

/// Mode of a directory this module creates or narrows.
#[cfg(unix)]
const PRIVATE_MODE: u32 = 0o700;

/// Permission bits that let others (group or world) change a directory's entries.
#[cfg(unix)]
const OTHERS_WRITE: u32 = 0o022;

/// `%TEMP%\<name>`: Windows gives each user a temporary directory of their own, in their
/// profile, which other users cannot enter.
#[cfg(windows)]
pub fn per_user(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(name)
}

/// `$TMPDIR/<name>-<uid>`: where this user's `name` directory goes under the shared temporary
/// directory (the uid keeps users apart; [`ensure`] keeps others out of it).
#[cfg(unix)]
pub fn per_user(name: &str) -> std::path::PathBuf {
    let uid = crate::os::real_uid();
    std::env::temp_dir().join(format!("{name}-{uid}"))
}

/// Create `dir` (and missing parents) as private, or check that the existing one is safe to
/// write into; an unsafe one is an error that names the directory and why.
pub fn ensure(dir: &Path) -> io::Result<()> {
    check(dir).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))
}

/// On Windows the directory is under the user's own temporary directory ([`per_user`]),
/// whose access list keeps other users out: it need only be a directory.
#[cfg(windows)]
fn check(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    if std::fs::metadata(dir)?.is_dir() {
        Ok(())
    } else {
        Err(unsafe_dir("is not a directory".into()))
    }
}

#[cfg(unix)]
fn check(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_MODE)
        .create(dir)?;
    let me = crate::os::effective_uid();
    let link = std::fs::symlink_metadata(dir)?;
    if link.file_type().is_symlink() && link.uid() != me {
        return Err(unsafe_dir(format!(
            "is a symbolic link owned by uid {}",
            link.uid()
        )));
    }
    let meta = std::fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(unsafe_dir("is not a directory".into()));
    }
    if meta.uid() != me {
        return Err(unsafe_dir(format!(
            "is owned by uid {}, not by this user (uid {me})",
            meta.uid()
        )));
    }
    if meta.mode() & OTHERS_WRITE != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(PRIVATE_MODE))?;
        tracing::info!(dir = %dir.display(), mode = format!("{:o}", meta.mode() & 0o777),
            "others could write to this directory; narrowed to 0700");
    }
    Ok(())
}

/// Why a directory is refused; [`ensure`] puts its name in front.
fn unsafe_dir(why: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{why}: another user could change what the server writes there; remove it or choose another directory"
        ),
    )
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "itmcp-private-{tag}-{}-{}",
            std::process::id(),
            ulid::Ulid::generate()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).expect("stat").mode() & 0o777
    }

    #[test]
    fn new_directories_are_private_and_open_ones_of_ours_are_narrowed() {
        let base = scratch("mode");
        let d = base.join("a/b");
        ensure(&d).expect("created");
        assert_eq!(mode(&d), PRIVATE_MODE);
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        ensure(&d).expect("narrowed");
        assert_eq!(mode(&d), PRIVATE_MODE);
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        ensure(&d).expect("kept: others may read, not write");
        assert_eq!(mode(&d), 0o755);
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn a_file_in_the_way_is_refused_with_its_name() {
        let base = scratch("file");
        std::fs::create_dir_all(&base).expect("mkdir");
        let f = base.join("spool");
        std::fs::write(&f, "x").expect("write");
        let e = ensure(&f).expect_err("a file is no directory");
        assert!(e.to_string().contains("spool"), "{e}");
        let e = ensure(&f.join("below")).expect_err("nothing below a file");
        assert!(e.to_string().contains("Not a directory"), "{e}");
        let _ = std::fs::remove_dir_all(&base);
    }

    /// A directory another user made first (as root here: a directory handed to `nobody`).
    #[test]
    fn a_directory_another_user_owns_is_refused() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("skipped: only root can hand a directory to another user");
            return;
        }
        let base = scratch("owner");
        let d = base.join("theirs");
        std::fs::create_dir_all(&d).expect("mkdir");
        std::os::unix::fs::chown(&d, Some(65534), Some(65534)).expect("chown");
        let e = ensure(&d).expect_err("not ours");
        assert!(e.to_string().contains("owned by uid 65534"), "{e}");
        let l = base.join("link");
        std::os::unix::fs::symlink(&d, &l).expect("symlink");
        assert!(ensure(&l).is_err(), "a link to theirs is theirs");
        let _ = std::fs::remove_dir_all(&base);
    }
}
