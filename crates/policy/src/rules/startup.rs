//! Which files are start-up files: those shells and tools run, or read for what to run,
//! when they start — the home's (`~/.bashrc`, `~/.gitconfig`, anything hidden in the home)
//! and a repository's (`.git/config`, hooks). What is written into one runs later, unjudged.

/// A shell's own start-up files under the home directory, whose text is shell lines (what
/// an `echo` writes into one can be judged as a line).
const SHELL_STARTUP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
];

/// The other files under the home directory that a shell or a tool runs, or reads for what
/// to run, when it starts: exact paths, and directories (ending in `/`) whose every file
/// counts.
const HOME_STARTUP: &[&str] = &[
    ".cshrc",
    ".tcshrc",
    ".inputrc",
    ".gitconfig",
    ".npmrc",
    ".yarnrc",
    ".pam_environment",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".vimrc",
    ".exrc",
    ".gdbinit",
    ".wgetrc",
    ".curlrc",
    ".emacs",
    ".ssh/authorized_keys",
    ".ssh/config",
    ".ssh/rc",
    ".ssh/environment",
    ".config/fish/",
    ".config/git/",
    ".config/nvim/",
    ".config/autostart/",
    ".config/systemd/user/",
    ".config/environment.d/",
    ".emacs.d/",
    ".vim/",
    ".local/share/applications/",
    ".config/interactive-terminal-mcp/",
    // Early on most distributions' `PATH` (as `~/bin` is, see `home_bin`): a program
    // written there shadows the one the person, and every later command, means.
    ".local/bin/",
];

/// Whether a (normalized) path is in the home's configuration: a hidden name at the home's
/// top or anything under one (`~/.cargo/config.toml`, `~/.config/systemd/user/x.service`,
/// `~/.local/lib/python3/site-packages/x.pth`, `~/.tmux.conf`), or macOS's launch agents.
/// An allow-list the other way round: only the caches pass (`~/.cache/`), since each list
/// of the files programs read at start missed some (`.pythonrc`, `.gradle/init.d`,
/// `.m2/settings.xml`, `.psqlrc`, …).
pub(super) fn home_configuration(path: &str) -> bool {
    in_home(path).is_some_and(|r| {
        (r.starts_with('.') && !r.starts_with(".cache/") && r != ".cache")
            || r.starts_with("Library/LaunchAgents/")
            || r.starts_with("Library/LaunchDaemons/")
    })
}

/// Whether a (normalized) path is in the home's own `bin`, which Debian's and Ubuntu's
/// `.profile` put first on `PATH`. Only a path that names the home counts: a relative
/// `bin/tool` of a terminal whose directory is not known is a project's, as often as not.
pub(super) fn home_bin(path: &str) -> bool {
    in_home(path).is_some_and(|r| r.starts_with("bin/"))
}

/// Hidden names a project keeps at its top that no program runs code from when they sit in
/// the home instead. A relative path written where the directory is not known (a terminal's)
/// may be either: these pass, every other hidden name is asked about as the home's.
const PROJECT_FILES: &[&str] = &[
    ".gitignore",
    ".gitmodules",
    // A repository's own directory: what in it runs (config, hooks) is a start-up file
    // of its own (`is_startup_file`), judged before this list is.
    ".git/",
    // direnv runs an `.envrc` only once the person has allowed its text (`direnv allow`).
    ".envrc",
    ".gitattributes",
    ".gitkeep",
    ".dockerignore",
    ".editorconfig",
    ".env",
    ".env.",
    ".nvmrc",
    ".node-version",
    ".python-version",
    ".ruby-version",
    ".prettierrc",
    ".prettierignore",
    ".eslintignore",
    ".github/",
    ".gitlab-ci.yml",
    ".idea/",
    ".vscode/settings.json",
    ".vscode/launch.json",
    ".vscode/extensions.json",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
];

/// Whether a relative path, read as if the terminal sat in the home, would write the home's
/// configuration: any hidden name there but the project files above.
pub(super) fn home_configuration_if_home(path: &str) -> bool {
    home_configuration(path)
        && !in_home(path).is_some_and(|r| {
            PROJECT_FILES.iter().any(|p| {
                r == p.trim_end_matches('/') || (p.ends_with(['/', '.']) && r.starts_with(p))
            })
        })
}

/// A path's part under the home directory (`~/x`, `$HOME/x`, `/home/u/x` for the home),
/// once normalized.
fn in_home(path: &str) -> Option<&str> {
    if let Some(rest) = path.strip_prefix("~/") {
        return Some(rest);
    }
    let home = super::home_dir()?;
    path.strip_prefix(home)?.strip_prefix('/')
}

/// Whether a file of this name, put in the home directory, is one of its start-up files.
pub(super) fn home_startup_name(name: &str) -> bool {
    listed(name, SHELL_STARTUP) || listed(name, HOME_STARTUP)
}

fn listed(rest: &str, list: &[&str]) -> bool {
    list.iter().any(|p| {
        if p.ends_with('/') {
            rest.starts_with(p)
        } else {
            rest == *p
        }
    })
}

/// Whether a (normalized) path is a start-up file: one of the home's, or a repository's
/// configuration and hooks (`.git/config`, `.git/hooks/…`), which git runs from.
pub fn is_startup_file(path: &str) -> bool {
    if in_home(path).is_some_and(|r| listed(r, SHELL_STARTUP) || listed(r, HOME_STARTUP)) {
        return true;
    }
    // The repository's directory itself, or its hooks', written into (`cp x .git/hooks`,
    // `mv dir .git`): what lands there is what git runs.
    let dir = path.trim_end_matches('/');
    dir.ends_with("/.git/config")
        || dir == ".git/config"
        || dir.contains("/.git/hooks/")
        || dir.starts_with(".git/hooks/")
        || [".git", ".git/hooks"].iter().any(|d| {
            dir.strip_suffix(d)
                .is_some_and(|r| r.is_empty() || r.ends_with('/'))
        })
}

/// Whether a (normalized) path is a shell's own start-up file, whose text is shell lines
/// (what an `echo` writes into it can be judged as a line; an `.inputrc`, a `.gitconfig` or
/// `authorized_keys` is read another way).
pub(super) fn is_shell_startup(path: &str) -> bool {
    in_home(path).is_some_and(|r| SHELL_STARTUP.contains(&r))
}
