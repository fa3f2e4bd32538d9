//! Writes into the home directory itself, where the shells' and tools' start-up files are:
//! a copy, a sync or an archive unpacked there can put a `.bashrc` in place without the line
//! naming it (`tar -C ~ -xf x.tar`, `cp -r dir/. ~`, `cp dir/.bashrc ~`).

use super::startup::home_startup_name;
use super::*;
use crate::wrappers::basename;

/// What the command writes into the home directory that may be a start-up file, if it does.
pub fn into_home(argv: &[String], cwd: Option<&str>) -> Option<Finding> {
    let name = basename(argv.first()?);
    let rest = &argv[1..];
    let (flags, targets) = flags_and_targets(rest);
    let home = |p: &str| {
        let n = normalize(p, cwd);
        n == "~" || super::home_dir().is_some_and(|h| n.trim_end_matches('/') == h)
    };
    // Also `/`, a directory that holds homes or a system directory: what lands there lands
    // in a home's start-up files or the system's (`tar -xzf x.tgz -C /` puts back
    // `etc/cron.d/x` and `home/alice/.bashrc` as the archive has them). Which of the two the
    // landing place was is kept for the finding's rule and words.
    let into_the_system = std::cell::Cell::new(false);
    let is_home = |p: &str| {
        let system = !home(p) && is_critical(&normalize(p, cwd));
        into_the_system.set(into_the_system.get() || system);
        system || home(p)
    };
    let there = || {
        if into_the_system.get() {
            "/, a home or a system directory, where start-up and system files are"
        } else {
            "the home directory, where start-up files are"
        }
    };
    let what = match &*name {
        "cp" | "mv" | "ln" | "install" | "rsync" | "scp" if targets.len() >= 2 => {
            let (dest, sources) = targets.split_last()?;
            if !is_home(dest) {
                return None;
            }
            // A directory's contents, whatever they are (`cp -r dir/. ~`, `rsync dir/ ~`).
            let wholesale = name == "rsync"
                || has_short(&flags, &['r', 'R', 'a'])
                || flags
                    .iter()
                    .any(|f| f.starts_with("--rec") || f.starts_with("--arch"));
            let named = sources.iter().find(|s| {
                let base = s.trim_end_matches('/').rsplit('/').next().unwrap_or(s);
                home_startup_name(base)
            });
            match named {
                Some(s) => format!("puts {s} in the home directory, as a start-up file"),
                None if wholesale => format!(
                    "copies the contents of {} into {}",
                    sources.join(" "),
                    there()
                ),
                None => return None,
            }
        }
        // An archive unpacked into the home (`-C ~`, `--directory=~`, `unzip -d ~`), or
        // where the line stands when that is the home.
        "tar" | "bsdtar" | "unzip" => {
            let (unpacks, short, long): (bool, char, &[&str]) = if name == "unzip" {
                (
                    !has_short(&flags, &['l', 't', 'v', 'Z', 'p', 'c']),
                    'd',
                    &[],
                )
            } else {
                (extracts(rest), 'C', &["directory"])
            };
            let dir = crate::getopt::option_values(rest, short, long)
                .last()
                .copied()
                .unwrap_or(".");
            // Members named by absolute path or with `..` kept as they are (`tar -P`,
            // `--absolute-names`, `unzip -:`): they land wherever they point, a `.bashrc`
            // among them.
            let anywhere = if name == "unzip" {
                flags.contains(&"-:")
            } else {
                rest.iter().any(|a| {
                    a.starts_with("--abs")
                        || (a.starts_with('-') && !a.starts_with("--") && a.contains('P'))
                        || (!a.starts_with('-') && a == rest[0].as_str() && a.contains('P'))
                })
            };
            if unpacks && anywhere {
                "unpacks an archive's members where their absolute or parent paths point, \
                 start-up files among them"
                    .into()
            } else if !unpacks || !is_home(dir) {
                return None;
            } else {
                format!("unpacks an archive into {}", there())
            }
        }
        // 7-Zip's `x`/`e` with `-oDIR` (glued: 7z takes no space there).
        "7z" | "7za" | "7zz" | "7zr"
            if rest
                .first()
                .is_some_and(|v| matches!(v.as_str(), "x" | "e"))
                && rest
                    .iter()
                    .filter_map(|a| a.strip_prefix("-o"))
                    .any(is_home) =>
        {
            format!("unpacks an archive into {}", there())
        }
        _ => return None,
    };
    let rule = if into_the_system.get() {
        "system_file_write"
    } else {
        "startup_file_write"
    };
    Some(finding(Severity::Warn, rule, what, argv))
}

/// Whether tar's words ask it to extract: `x` in its first word (`tar xf`, `tar -xzf`) or
/// in a cluster, or `--extract`/`--get` (also abbreviated).
fn extracts(rest: &[String]) -> bool {
    let first_is_mode = rest
        .first()
        .is_some_and(|w| !w.starts_with("--") && w.trim_start_matches('-').contains('x'));
    first_is_mode
        || rest.iter().any(|a| {
            (a.starts_with('-') && !a.starts_with("--") && a.contains('x'))
                || (a.len() > 3 && ("--extract".starts_with(a.as_str()) || a == "--get"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(line: &str) -> bool {
        let argv: Vec<String> = shell_words::split(line).expect("words");
        into_home(&argv, Some("/work")).is_some()
    }

    #[test]
    fn what_lands_in_the_home_as_a_start_up_file_is_found() {
        for warned in [
            "tar -C ~ -xf evil.tar",
            "tar xf evil.tar -C ~",
            "tar --extract --file=x.tar --directory=$HOME",
            "unzip -o evil.zip -d ~",
            "cp -r evil/. ~",
            "cp -a evil/ ~/",
            "rsync -a evil/ ~/",
            "cp evil/.bashrc ~",
            "mv x/.profile $HOME/",
            "tar -xPf evil.tar",
            "tar xPf evil.tar",
            "tar --absolute-names -xf evil.tar",
            "unzip -: evil.zip",
            "tar -xzf x.tgz -C /",
            "tar -C /etc -xf x.tar",
            "unzip -o x.zip -d /",
            "rsync -a evil/ /",
            "cp -r evil/. /usr",
        ] {
            assert!(judged(warned), "{warned}");
        }
        for passed in [
            "cp notes.txt ~",
            "tar -C ~ -tf evil.tar",
            "tar xf x.tar",
            "tar -cPf out.tar /etc/hostname",
            "tar -C ~/src/proj -xf x.tar",
            "unzip -l evil.zip -d ~",
            "cp -r evil ~/src/",
        ] {
            assert!(!judged(passed), "{passed}");
        }
    }
}
