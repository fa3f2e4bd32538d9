//! The sandbox as the operator sets it: parsed and checked at start, so a bad setting stops
//! the server with a message instead of confining nothing.

use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Names of the crate's programs whose configuration directories stay read-only inside the
/// sandbox (tokens and settings live there).
const OWN_CONFIG_DIRS: [&str; 2] = ["interactive-terminal-mcp", "interactive-terminal"];

/// The environment variables of the sandbox settings (the flags' twins).
pub const ENV_LEVEL: &str = "PM_TERM_SANDBOX";
pub const ENV_WORKSPACE: &str = "PM_TERM_WORKSPACE";
pub const ENV_NETWORK: &str = "PM_TERM_NETWORK";
pub const ENV_MECHANISM: &str = "PM_TERM_SANDBOX_MECHANISM";

/// Inside a writable root, these stay read-only: a repository's history and hooks.
pub const PROTECTED_NAMES: [&str; 1] = [".git"];

/// What the file system allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Level {
    #[default]
    Off,
    /// Read everything, write only a private /tmp.
    ReadOnly,
    /// Read everything, write the workspace roots and a private /tmp.
    WorkspaceWrite,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Off => "off",
            Level::ReadOnly => "read-only",
            Level::WorkspaceWrite => "workspace-write",
        }
    }
}

impl FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" => Ok(Level::Off),
            "read-only" | "readonly" | "read_only" => Ok(Level::ReadOnly),
            "workspace-write" | "workspace_write" => Ok(Level::WorkspaceWrite),
            other => Err(format!(
                "{other:?} is not a sandbox mode (off, read-only, workspace-write)"
            )),
        }
    }
}

/// Which mechanism enforces the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MechanismChoice {
    /// bubblewrap where it works, else Landlock + seccomp.
    #[default]
    Auto,
    Bubblewrap,
    Landlock,
}

impl MechanismChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            MechanismChoice::Auto => "auto",
            MechanismChoice::Bubblewrap => "bubblewrap",
            MechanismChoice::Landlock => "landlock",
        }
    }
}

impl FromStr for MechanismChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(MechanismChoice::Auto),
            "bubblewrap" | "bwrap" => Ok(MechanismChoice::Bubblewrap),
            "landlock" => Ok(MechanismChoice::Landlock),
            other => Err(format!(
                "{other:?} is not a sandbox mechanism (auto, bubblewrap, landlock)"
            )),
        }
    }
}

/// What the network allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    On,
    Off,
    /// Only these domains (and their subdomains), through a filtering proxy.
    Allow(Vec<String>),
}

impl std::fmt::Display for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Network::On => f.write_str("on"),
            Network::Off => f.write_str("off"),
            Network::Allow(d) => write!(f, "allow:{}", d.join(",")),
        }
    }
}

impl FromStr for Network {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        match t.to_ascii_lowercase().as_str() {
            "on" => return Ok(Network::On),
            "off" => return Ok(Network::Off),
            _ => {}
        }
        let Some(list) = t.strip_prefix("allow:") else {
            return Err(format!(
                "{t:?} is not a network setting (on, off, allow:DOMAIN,…)"
            ));
        };
        let mut domains = Vec::new();
        for d in list.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            let d = d.trim_start_matches("*.").to_ascii_lowercase();
            let valid = d.len() <= 253
                && d.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && label
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                });
            if !valid {
                return Err(format!("{d:?} in {t:?} is not a domain name"));
            }
            domains.push(d);
        }
        if domains.is_empty() {
            return Err(format!("{t:?} names no domain (allow:example.com,…)"));
        }
        Ok(Network::Allow(domains))
    }
}

/// The sandbox settings, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub level: Level,
    /// Writable roots under workspace-write (absolute, existing, without symlinks).
    pub workspaces: Vec<PathBuf>,
    pub network: Network,
    /// Files and directories that stay read-only even inside a writable root.
    pub protected: Vec<PathBuf>,
    pub mechanism: MechanismChoice,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            level: Level::Off,
            workspaces: Vec::new(),
            network: Network::On,
            protected: Vec::new(),
            mechanism: MechanismChoice::Auto,
        }
    }
}

impl Settings {
    /// Check the operator's settings. `workspaces` empty means the server's working
    /// directory; `network` unset means off inside a sandbox and on without one;
    /// `protected` are the server's own files (token and policy files) besides its
    /// configuration directories.
    pub fn new(
        level: Level,
        workspaces: &[PathBuf],
        network: Option<Network>,
        protected: &[PathBuf],
    ) -> Result<Settings, String> {
        let network = network.unwrap_or(match level {
            Level::Off => Network::On,
            _ => Network::Off,
        });
        let mut roots = Vec::new();
        if level == Level::WorkspaceWrite {
            let given: Vec<PathBuf> = if workspaces.is_empty() {
                vec![std::env::current_dir().map_err(|e| {
                    format!("the working directory (the default workspace) is unreadable: {e}")
                })?]
            } else {
                workspaces.to_vec()
            };
            for w in given.iter().filter(|w| !w.as_os_str().is_empty()) {
                roots.push(workspace_root(w)?);
            }
            if roots.iter().any(|r| r == Path::new("/")) {
                return Err(
                    "the workspace / would make the whole file system writable; name \
                     the project directories instead"
                        .into(),
                );
            }
        } else if !workspaces.is_empty() && level == Level::Off {
            tracing::warn!("--workspace has no effect without --sandbox workspace-write");
        }
        // Compared with canonical roots, so canonical too where they exist.
        let mut protected: Vec<PathBuf> = protected
            .iter()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
            .collect();
        for program in OWN_CONFIG_DIRS {
            if let Some(dir) = crate::token::config_file(program, "x").parent() {
                protected.push(dir.to_path_buf());
            }
        }
        Ok(Settings {
            level,
            workspaces: roots,
            network,
            protected,
            mechanism: MechanismChoice::Auto,
        })
    }

    /// The same settings as the environment variables a launched host service reads.
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        let workspaces: Vec<String> = self
            .workspaces
            .iter()
            .map(|w| w.display().to_string())
            .collect();
        vec![
            (ENV_LEVEL, self.level.as_str().to_string()),
            (ENV_WORKSPACE, workspaces.join(":")),
            (ENV_NETWORK, self.network.to_string()),
            (ENV_MECHANISM, self.mechanism.as_str().to_string()),
        ]
    }

    /// The roots commands may write: the workspaces under workspace-write, none otherwise.
    pub fn writable_roots(&self) -> &[PathBuf] {
        match self.level {
            Level::WorkspaceWrite => &self.workspaces,
            _ => &[],
        }
    }

    /// Whether anything is confined at all.
    pub fn confines(&self) -> bool {
        self.level != Level::Off || self.network != Network::On
    }

    /// Where commands may write, for messages; `tmp` says what their temporary space is.
    pub fn writable_description(&self, tmp: &str) -> String {
        let mut parts: Vec<String> = match self.level {
            Level::Off => vec!["everything the server may write".into()],
            Level::ReadOnly => Vec::new(),
            Level::WorkspaceWrite => self
                .writable_roots()
                .iter()
                .map(|w| format!("{} (but .git)", w.display()))
                .collect(),
        };
        parts.push(tmp.into());
        parts.join(", ")
    }
}

/// A workspace root as the kernel will see it: absolute, existing, a directory, symlinks
/// resolved (a bind mount follows them; the protected paths must be computed on the target).
fn workspace_root(w: &Path) -> Result<PathBuf, String> {
    let canon = std::fs::canonicalize(w)
        .map_err(|e| format!("the workspace {} cannot be used: {e}", w.display()))?;
    if !canon.is_dir() {
        return Err(format!(
            "the workspace {} is not a directory",
            canon.display()
        ));
    }
    Ok(canon)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_refuse() {
        assert_eq!("read-only".parse::<Level>(), Ok(Level::ReadOnly));
        assert_eq!(
            " Workspace-Write".parse::<Level>(),
            Ok(Level::WorkspaceWrite)
        );
        assert!("writable".parse::<Level>().is_err());
        assert_eq!("off".parse::<Network>(), Ok(Network::Off));
        assert_eq!(
            "allow:Example.com, *.pypi.org".parse::<Network>(),
            Ok(Network::Allow(vec![
                "example.com".into(),
                "pypi.org".into()
            ]))
        );
        for bad in [
            "allow:",
            "allow:a b",
            "allow:exa_mple.com",
            "maybe",
            "allow:..",
        ] {
            assert!(bad.parse::<Network>().is_err(), "{bad}");
        }
        assert!(
            Settings::new(
                Level::WorkspaceWrite,
                &[PathBuf::from("/no/such/dir")],
                None,
                &[]
            )
            .is_err()
        );
        assert!(Settings::new(Level::WorkspaceWrite, &[PathBuf::from("/")], None, &[]).is_err());
        let s = Settings::new(Level::ReadOnly, &[], None, &[]).expect("read-only");
        assert_eq!(s.network, Network::Off);
        assert!(s.confines());
        let s = Settings::new(Level::Off, &[], None, &[]).expect("off");
        assert!(!s.confines());
    }
}
