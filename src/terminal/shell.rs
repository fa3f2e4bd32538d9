//! Choosing a shell and injecting shell integration the way VS Code does: bash gets our
//! script as `--init-file`, zsh gets our `ZDOTDIR`, fish sources ours with `--init-command`
//! (after its config); all still run the user's own rc files.
//! The nonce travels in a file the script reads and deletes, so no later process can find
//! it in an environment.

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

const BASH_SCRIPT: &str = include_str!("scripts/bash-integration.sh");
const ZSH_ENV: &str = include_str!("scripts/zsh/.zshenv");
const ZSH_RC: &str = include_str!("scripts/zsh/.zshrc");
const FISH_SCRIPT: &str = include_str!("scripts/fish-integration.fish");
/// Found by a fish that the user's ~/.bashrc starts (`exec fish`): loads `FISH_SCRIPT`.
const FISH_VENDOR: &str = include_str!("scripts/fish-vendor.fish");
/// Where fish looks for vendor configuration under each of `XDG_DATA_DIRS`; the bash
/// integration puts `<scripts>/fish-data` first there while the user's rc runs.
const FISH_VENDOR_FILE: &str = "fish-data/fish/vendor_conf.d/interactive-terminal-mcp.fish";
const POSIX_SCRIPT: &str = include_str!("scripts/posix-integration.sh");

/// Shells with shell integration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellKind {
    Bash,
    Zsh,
    Fish,
    /// dash / ash: no hooks, so the prompt carries exit status and cwd, and the core marks
    /// a line typed at the prompt as executed when its echo arrives.
    PromptOnly,
    /// Any other shell: no command detection.
    Plain,
}

/// How to start a terminal's shell.
#[derive(Debug, Clone)]
pub struct ShellLaunch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub kind: ShellKind,
    /// Removed by the script; removed by us if the shell never reads it.
    pub nonce_file: Option<PathBuf>,
    /// What the shell reads from the runtime directory (the integration scripts, its nonce):
    /// a sandbox with a private /tmp must still show it.
    pub expose: Vec<PathBuf>,
}

pub use crate::program::{is_executable, which};

/// The program process `pid` runs now: the shell a terminal started, or the one that
/// shell's rc replaced itself with (`exec fish` at the end of a ~/.bashrc).
pub fn program_of(pid: i32) -> Option<PathBuf> {
    crate::os::program_of(pid)
}

pub fn kind_of(program: &Path) -> ShellKind {
    match program.file_name().and_then(|n| n.to_str()) {
        Some("bash") => ShellKind::Bash,
        Some("zsh") => ShellKind::Zsh,
        Some("fish") => ShellKind::Fish,
        Some("dash" | "ash") => ShellKind::PromptOnly,
        // `sh` is dash on Debian-like systems (bash elsewhere, which as `sh` ignores our
        // init file: left plain).
        Some("sh") => match std::fs::canonicalize(program) {
            Ok(real) if real.file_name().and_then(|n| n.to_str()) == Some("dash") => {
                ShellKind::PromptOnly
            }
            _ => ShellKind::Plain,
        },
        _ => ShellKind::Plain,
    }
}

/// Resolve the shell for a new terminal: the request's, else the operator's default, else
/// `$SHELL` when it is bash, zsh or fish, else bash, else `/bin/sh`; on Windows PowerShell
/// (`pwsh`, else Windows PowerShell), else cmd.exe.
pub fn resolve(requested: Option<&str>, default: Option<&str>) -> Result<PathBuf, String> {
    let pick = |name: &str| -> Result<PathBuf, String> {
        let p = Path::new(name);
        if p.is_absolute() {
            if is_executable(p) {
                Ok(p.to_path_buf())
            } else {
                Err(format!(
                    "shell {name:?} does not exist or is not executable"
                ))
            }
        } else {
            which(name).ok_or_else(|| format!("shell {name:?} is not installed (not on PATH)"))
        }
    };
    if let Some(r) = requested {
        return pick(r);
    }
    if let Some(d) = default {
        return pick(d);
    }
    if cfg!(windows) {
        return ["pwsh", "powershell", "cmd"]
            .iter()
            .find_map(|s| which(s))
            .ok_or_else(|| "no shell found: neither PowerShell nor cmd.exe".to_string());
    }
    if let Ok(sh) = std::env::var("SHELL") {
        let p = PathBuf::from(&sh);
        if kind_of(&p) != ShellKind::Plain && is_executable(&p) {
            return Ok(p);
        }
    }
    which("bash")
        .or_else(|| Some(PathBuf::from("/bin/sh")).filter(|p| is_executable(p)))
        .ok_or_else(|| "no shell found: neither bash nor /bin/sh".to_string())
}

/// The runtime directory's folder of integration scripts.
const SCRIPTS_DIR: &str = "shell-integration";

/// Where the integration scripts were written.
struct Scripts {
    bash: PathBuf,
    zdotdir: PathBuf,
    fish: PathBuf,
    posix: PathBuf,
}

/// Write the integration scripts under `dir` (once per content) and return their paths.
fn install_scripts(dir: &Path) -> std::io::Result<Scripts> {
    // Every shell sources these: the spool directory and this server's own directory in it
    // must be ones no other user can change (see `private_dir`).
    if let Some(spool) = dir.parent() {
        crate::private_dir::ensure(spool)?;
    }
    crate::private_dir::ensure(dir)?;
    let base = dir.join(SCRIPTS_DIR);
    let zdotdir = base.join("zsh");
    std::fs::create_dir_all(&zdotdir)?;
    let bash = base.join("bash-integration.sh");
    write_if_changed(&bash, BASH_SCRIPT)?;
    write_if_changed(&zdotdir.join(".zshenv"), ZSH_ENV)?;
    write_if_changed(&zdotdir.join(".zshrc"), ZSH_RC)?;
    let fish = base.join("fish-integration.fish");
    write_if_changed(&fish, FISH_SCRIPT)?;
    let vendor = base.join(FISH_VENDOR_FILE);
    if let Some(d) = vendor.parent() {
        std::fs::create_dir_all(d)?;
    }
    write_if_changed(&vendor, FISH_VENDOR)?;
    let posix = base.join("posix-integration.sh");
    write_if_changed(&posix, POSIX_SCRIPT)?;
    Ok(Scripts {
        bash,
        zdotdir,
        fish,
        posix,
    })
}

fn write_if_changed(path: &Path, content: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(content) {
        return Ok(());
    }
    let tmp = path.with_extension(format!("tmp-{}", ulid::Ulid::generate()));
    std::fs::write(&tmp, content)?;
    std::fs::rename(&tmp, path)
}

/// Whether `program` takes `-i` to be interactive on a pty as it is on a keyboard: the
/// shells, and the REPLs that read it so (Python, Node, Lua). Another console (sqlite3,
/// gdb, psql) is interactive on a terminal by itself and refuses `-i` or reads it as
/// something else, so it starts with no arguments.
fn takes_interactive_flag(program: &Path) -> bool {
    let name = program
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        base,
        "sh" | "ksh"
            | "mksh"
            | "oksh"
            | "loksh"
            | "pdksh"
            | "csh"
            | "tcsh"
            | "yash"
            | "posh"
            | "python"
            | "pypy"
            | "node"
            | "nodejs"
            | "lua"
            | "luajit"
    )
}

/// Prepare the launch of `program` with shell integration for `terminal_id`.
pub fn prepare(
    program: &Path,
    runtime_dir: &Path,
    terminal_id: &str,
    nonce: &str,
    skip_user_rc: bool,
) -> std::io::Result<ShellLaunch> {
    let kind = kind_of(program);
    let mut env = Vec::new();
    let mut args = Vec::new();
    let mut nonce_file = None;
    if kind != ShellKind::Plain {
        let scripts = install_scripts(runtime_dir)?;
        let nf = runtime_dir.join(format!("nonce-{terminal_id}"));
        let mut f = crate::os::create_private(&nf)?;
        f.write_all(nonce.as_bytes())?;
        env.push(("PM_TERM_NONCE_FILE".into(), nf.display().to_string()));
        nonce_file = Some(nf);
        // Set either way: the server's own environment is the shell's too, and an operator's
        // `PM_TERM_NO_USER_RC=0` (read by the server as false) would read as "skip" to the
        // integration, which only asks whether the variable is empty.
        let skip = if skip_user_rc { "1" } else { "" };
        env.push(("PM_TERM_NO_USER_RC".into(), skip.into()));
        match kind {
            ShellKind::Bash => {
                args.push("--init-file".into());
                args.push(scripts.bash.display().to_string());
                args.push("-i".into());
            }
            ShellKind::Zsh => {
                // Empty when the user has none: a value left in the server's environment is
                // not the user's.
                let user = std::env::var("ZDOTDIR").unwrap_or_default();
                env.push(("PM_TERM_USER_ZDOTDIR".into(), user));
                env.push(("ZDOTDIR".into(), scripts.zdotdir.display().to_string()));
                args.push("-i".into());
            }
            ShellKind::Fish => {
                if skip_user_rc {
                    args.push("--no-config".into());
                }
                // In fish single quotes only \\ and \' are escapes.
                let path = scripts.fish.display().to_string();
                args.push("--init-command".into());
                args.push(format!(
                    "source '{}'",
                    path.replace('\\', "\\\\").replace('\'', "\\'")
                ));
                args.push("-i".into());
            }
            ShellKind::PromptOnly => {
                let user = std::env::var("ENV").unwrap_or_default();
                env.push(("PM_TERM_USER_ENV".into(), user));
                env.push(("ENV".into(), scripts.posix.display().to_string()));
                args.push("-i".into());
            }
            ShellKind::Plain => {}
        }
    } else if takes_interactive_flag(program) {
        args.push("-i".into());
    }
    Ok(ShellLaunch {
        program: program.to_path_buf(),
        args,
        env,
        kind,
        // The scripts and this terminal's own nonce, not the others' (a sandboxed shell
        // cannot delete its nonce file; the core removes it when the terminal ends).
        expose: match &nonce_file {
            Some(nf) => vec![runtime_dir.join(SCRIPTS_DIR), nf.clone()],
            None => Vec::new(),
        },
        nonce_file,
    })
}

/// Prefix of a process's runtime directory under the spool directory (`run-<pid>`).
const RUNTIME_DIR_PREFIX: &str = "run-";

/// Remove a runtime directory (its scripts and any nonce file a shell never read).
pub fn remove_runtime_dir(dir: &Path) {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {}
        // Never made (a spool directory refused at start, said then): nothing to remove.
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {}
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot remove the runtime directory")
        }
    }
}

/// Remove the runtime directories that servers killed before they could clean up left in
/// `spool_dir` (their process is gone).
pub fn remove_stale_runtime_dirs(spool_dir: &Path) {
    crate::stale::remove_left_by_dead(spool_dir, RUNTIME_DIR_PREFIX, "", remove_runtime_dir);
}

/// The runtime directory of this process under `spool_dir`.
pub fn runtime_dir(spool_dir: &Path) -> PathBuf {
    spool_dir.join(format!("{RUNTIME_DIR_PREFIX}{}", std::process::id()))
}

/// A fresh random nonce (hex).
pub fn new_nonce() -> String {
    // Without kernel randomness a ULID still has 80 random bits.
    crate::ids::random_hex(16).unwrap_or_else(|| ulid::Ulid::generate().to_string().to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shells_resolve() {
        assert!(resolve(Some("sh"), None).is_ok());
        assert!(resolve(Some("/no/such/shell"), None).is_err());
        assert!(resolve(Some("no-such-shell-xyz"), None).is_err());
        assert_eq!(kind_of(Path::new("/usr/bin/zsh")), ShellKind::Zsh);
        assert_eq!(kind_of(Path::new("/bin/dash")), ShellKind::PromptOnly);
        assert_eq!(kind_of(Path::new("/bin/ksh")), ShellKind::Plain);
        assert_eq!(kind_of(Path::new("/usr/bin/fish")), ShellKind::Fish);
        assert_eq!(new_nonce().len(), 32);
        assert_ne!(new_nonce(), new_nonce());
    }
}
