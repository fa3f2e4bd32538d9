//! Credentials known by where and how they are named rather than by a list of tools' files:
//! every file of `.ssh` but the public ones, and a login or a history under a home's hidden
//! directories. Every list of tools' files missed some (`id_ecdsa_sk`, a deploy key named
//! `~/.ssh/github`, `~/.codex/auth.json`, `~/.sqlite_history`).

/// Whether path parts name a home directory: `~`, `~user`, `/root`, `/home/NAME` (or a
/// pattern there).
pub(super) fn is_home(parts: &[&str]) -> bool {
    match parts {
        [t] => t.starts_with('~'),
        ["", "root"] => true,
        ["", "home", _] => true,
        _ => false,
    }
}

/// Whether `rel` is a file of `.ssh` but the public ones: a key may have any name
/// (`~/.ssh/deploy`, `id_ecdsa_sk`), and a pattern may match one.
pub(super) fn private_in_ssh(rel: &[&str]) -> bool {
    const PUBLIC: &[&str] = &[
        "known_hosts",
        "known_hosts.old",
        "authorized_keys",
        "authorized_keys2",
        "config",
    ];
    let [dir, name] = rel else {
        return false;
    };
    *dir == ".ssh"
        && !name.is_empty()
        && !name.ends_with(".pub")
        && (name.contains(['*', '?', '['])
            || !(PUBLIC.contains(name) || name.starts_with("config.")))
}

/// Whether `rel` is, by its name, a login or a history under a home's hidden directories
/// (`~/.foo/credentials.json`, `~/.bar/auth.json`, `~/.gemini/oauth_creds.json`,
/// `~/.sqlite_history`): a word of its name says so (`authorized_keys` does not). Only data files count (a program's source named
/// `token_stream.rs` in a registry's cache is not a token).
pub(super) fn login_file(rel: &[&str]) -> bool {
    let Some((name, dirs)) = rel.split_last() else {
        return false;
    };
    let lower = name.to_ascii_lowercase();
    if dirs.is_empty() {
        return lower.starts_with('.') && (lower.ends_with("history") || lower.ends_with("_hist"));
    }
    let (stem, ext) = lower.rsplit_once('.').unwrap_or((&lower, ""));
    let data = matches!(
        ext,
        "" | "json" | "yml" | "yaml" | "toml" | "ini" | "conf" | "cfg" | "db" | "txt" | "xml"
    );
    const WORDS: &[&str] = &[
        "credential",
        "credentials",
        "creds",
        "token",
        "tokens",
        "secret",
        "secrets",
        "password",
        "passwords",
        "auth",
        "oauth",
    ];
    dirs[0].starts_with('.')
        && data
        && stem
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| WORDS.contains(&w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(p: &str) -> Vec<&str> {
        p.split('/').collect()
    }

    #[test]
    fn any_key_in_ssh_but_the_public_files() {
        assert!(private_in_ssh(&parts(".ssh/deploy")));
        assert!(private_in_ssh(&parts(".ssh/id_*")));
        assert!(!private_in_ssh(&parts(".ssh/*.pub")));
        assert!(!private_in_ssh(&parts(".ssh/config")));
        assert!(!private_in_ssh(&parts(".ssh/known_hosts")));
    }

    #[test]
    fn logins_and_histories_by_name_in_hidden_directories() {
        assert!(login_file(&parts(".codex/auth.json")));
        assert!(login_file(&parts(".x/credentials")));
        assert!(login_file(&parts(".azure/msal_token_cache.json")));
        assert!(!login_file(&parts(".ssh/authorized_keys")));
        assert!(!login_file(&parts(".x/tokenizer.json")));
        assert!(login_file(&parts(".sqlite_history")));
        assert!(!login_file(&parts(".cargo/registry/src/x/token_stream.rs")));
        assert!(!login_file(&parts("src/auth.json")));
        assert!(is_home(&parts("~")) && is_home(&parts("/root")) && is_home(&parts("/home/bob")));
        assert!(!is_home(&parts("/srv/app")));
    }
}
