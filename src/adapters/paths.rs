//! Container paths are not host paths. Across the container bridge, the MCP server (and its
//! agent) sees the container's file system and the terminals run on the host, so a working
//! directory has to be translated on the way there and back. The operator says which
//! container directory is which host directory (`PM_TERM_PATH_MAP`,
//! `CONTAINER=HOST[;CONTAINER=HOST…]`, as the container's volume mounts say); nothing an
//! agent sends can change it.

use std::path::{Component, Path, PathBuf};

use crate::terminal::protocol::{TermRequest, TermResponse, TermSummary};

/// Separates the pairs of a map; `=` separates each pair's two sides.
const PAIR_SEPARATOR: char = ';';

/// Container directories and the host directories they are mounted from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathMap {
    /// (container, host), longest container path first so the most specific mount wins.
    pairs: Vec<(PathBuf, PathBuf)>,
}

impl PathMap {
    /// Parse the operator's setting; every malformed pair is one problem.
    pub fn parse(setting: &str) -> Result<PathMap, Vec<String>> {
        let mut pairs = Vec::new();
        let mut problems = Vec::new();
        for pair in setting
            .split(PAIR_SEPARATOR)
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            match pair.split_once('=') {
                Some((c, h)) if is_clean_absolute(c.trim()) && is_clean_absolute(h.trim()) => {
                    pairs.push((PathBuf::from(c.trim()), PathBuf::from(h.trim())));
                }
                _ => problems.push(format!(
                    "PM_TERM_PATH_MAP entry {pair:?} is not CONTAINER=HOST with two absolute paths"
                )),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        pairs.sort_by_key(|(c, _)| std::cmp::Reverse(c.components().count()));
        Ok(PathMap { pairs })
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The map as the operator writes it (`CONTAINER=HOST;…`).
    pub fn describe(&self) -> String {
        self.pairs
            .iter()
            .map(|(c, h)| format!("{}={}", c.display(), h.display()))
            .collect::<Vec<_>>()
            .join(";")
    }

    /// The host path of a container path, when a mapped directory holds it.
    pub fn to_host(&self, container: &str) -> Option<String> {
        self.translate(container, |(c, h)| (c, h))
    }

    /// The container path of a host path, when a mapped directory holds it.
    pub fn to_container(&self, host: &str) -> Option<String> {
        self.translate(host, |(c, h)| (h, c))
    }

    fn translate<'a>(
        &'a self,
        path: &str,
        sides: impl Fn(&'a (PathBuf, PathBuf)) -> (&'a PathBuf, &'a PathBuf),
    ) -> Option<String> {
        let path = Path::new(path);
        if !is_clean_absolute_path(path) {
            return None;
        }
        let mut best: Option<(&PathBuf, &PathBuf)> = None;
        for pair in &self.pairs {
            let (from, to) = sides(pair);
            if path.starts_with(from)
                && best.is_none_or(|(b, _)| from.components().count() > b.components().count())
            {
                best = Some((from, to));
            }
        }
        let (from, to) = best?;
        let rest = path.strip_prefix(from).ok()?;
        let out = if rest.as_os_str().is_empty() {
            to.clone()
        } else {
            to.join(rest)
        };
        Some(out.to_string_lossy().into_owned())
    }
}

impl PathMap {
    /// A request on its way to the host: a new terminal's working directory becomes the host
    /// path it is mounted from; without one, the terminal opens where this server works (its
    /// host side), as a headless command would — when that directory is mapped.
    pub fn request_to_host(&self, req: &mut TermRequest) {
        if self.is_empty() {
            return;
        }
        if let TermRequest::Open(a) = req {
            a.cwd = match a.cwd.take() {
                Some(c) => Some(self.to_host(&c).unwrap_or(c)),
                None => std::env::current_dir()
                    .ok()
                    .and_then(|d| self.to_host(&d.to_string_lossy())),
            };
        }
    }

    /// An answer on its way back: working directories as the container sees them.
    pub fn response_to_container(&self, resp: &mut TermResponse) {
        if self.is_empty() {
            return;
        }
        let back = |t: &mut TermSummary| {
            if let Some(c) = t.cwd.as_deref().and_then(|c| self.to_container(c)) {
                t.cwd = Some(c);
            }
        };
        match resp {
            TermResponse::Ran(r) => back(&mut r.terminal),
            TermResponse::Read(r) => back(&mut r.terminal),
            TermResponse::Attached(r) => back(&mut r.terminal),
            TermResponse::Killed(r) => r.terminal.iter_mut().for_each(back),
            TermResponse::List { terminals } => terminals.iter_mut().for_each(back),
            TermResponse::Rewound { .. } | TermResponse::Interrupted { .. } => {}
        }
    }
}

fn is_clean_absolute(p: &str) -> bool {
    is_clean_absolute_path(Path::new(p))
}

/// Absolute, without `..` (which would walk out of a mapped directory).
fn is_clean_absolute_path(p: &Path) -> bool {
    p.is_absolute() && !p.components().any(|c| c == Component::ParentDir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_cross_in_both_directions_by_the_most_specific_mount() {
        let m = PathMap::parse("/workspace=/home/me/project; /workspace/cache=/var/cache/x")
            .expect("parses");
        assert_eq!(m.to_host("/workspace").as_deref(), Some("/home/me/project"));
        assert_eq!(
            m.to_host("/workspace/src/lib").as_deref(),
            Some("/home/me/project/src/lib")
        );
        assert_eq!(
            m.to_host("/workspace/cache/a").as_deref(),
            Some("/var/cache/x/a")
        );
        assert_eq!(
            m.to_host("/workspaces").as_deref(),
            None,
            "whole components only"
        );
        assert_eq!(m.to_host("/etc").as_deref(), None);
        assert_eq!(m.to_host("/workspace/../etc").as_deref(), None);
        assert_eq!(
            m.to_container("/home/me/project/src").as_deref(),
            Some("/workspace/src")
        );
        assert_eq!(m.to_container("/home/me").as_deref(), None);
    }

    #[test]
    fn malformed_entries_are_problems() {
        for bad in ["workspace=/x", "/w=relative", "/w", "/w=/x/../y"] {
            assert!(PathMap::parse(bad).is_err(), "{bad}");
        }
        assert!(PathMap::parse("").expect("empty").is_empty());
    }
}
