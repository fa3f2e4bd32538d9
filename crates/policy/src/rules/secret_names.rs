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

/// Words that name a credential in a file's or a directory's name (split at every
/// character that is not a letter or a digit: `api_key`, `chap-secrets`, `auth.conf.d`),
/// wherever the file is: under a home's hidden directories, and under `/etc`, `/var/lib`,
/// `/run`, `/srv` or `/opt`.
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
    "apikey",
    "privkey",
    "private",
    "keyring",
    "keystore",
    "keytab",
    "wallet",
    "wallets",
];

/// Words that name a credential under a home's hidden directories only: in the system's
/// they name files anyone reads (`/etc/login.defs`, `/etc/apt/keys`, a history of packages).
const HOME_WORDS: &[&str] = &[
    "key", "keys", "cookie", "cookies", "login", "logins", "history",
];

/// Words of a pass phrase's file (Ansible's `~/.vault_pass.txt`, `~/.ansible/vault_pass`),
/// under a home's hidden directories and in its hidden files alike.
const PASS_WORDS: &[&str] = &["pass", "passphrase", "passwd"];

/// Extensions of data files, which a word of the name makes a credential (a program's source
/// named `token_stream.rs` or `auth.py` is not one).
const DATA: &[&str] = &[
    "",
    "json",
    "yml",
    "yaml",
    "toml",
    "ini",
    "conf",
    "cfg",
    "cnf",
    "db",
    "txt",
    "xml",
    "dat",
    "sqlite",
    "sqlite3",
    "ldb",
    "properties",
    "env",
    "key",
    "pem",
    "gpg",
];

/// Extensions that are private keys and key stores whatever the name, wherever they are.
const KEY_FILES: &[&str] = &["key", "keytab", "p12", "pfx", "jks", "kdbx", "ppk"];

/// And under a home's hidden directories only: in the system's directories `.pem` and `.gpg`
/// are mostly public certificates and keyrings.
const HOME_KEY_FILES: &[&str] = &["keystore", "pem", "age", "gpg"];

/// Whether an extension is a key's under a home's hidden directories.
fn key_file(ext: &str) -> bool {
    KEY_FILES.contains(&ext) || HOME_KEY_FILES.contains(&ext)
}

fn words(name: &str) -> impl Iterator<Item = &str> {
    name.split(|c: char| !c.is_ascii_alphanumeric())
}

fn split_ext(name: &str) -> (&str, &str) {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, ext),
        _ => (name, ""),
    }
}

/// Whether `rel` is, by its name, a login, a key or a history under a home's hidden
/// directories (`~/.foo/credentials.json`, `~/.bar/auth.json`, `~/.config/anthropic/api_key`,
/// `~/.minisign/minisign.key`, `~/.ethereum/keystore/x`, `~/.sqlite_history`): a word of its
/// name or of a directory's under the hidden one says so (`authorized_keys` does not), or
/// its extension is a key's. Only data files count.
pub(super) fn login_file(rel: &[&str]) -> bool {
    let Some((name, dirs)) = rel.split_last() else {
        return false;
    };
    let lower = name.to_ascii_lowercase();
    let (stem, ext) = split_ext(&lower);
    if dirs.is_empty() {
        // A hidden file of the home itself: a history, a key, or a data file named for a
        // credential (`~/.vault_pass.txt`, `~/.gitlab_token`, `~/.api_secret`); not by the
        // home-only words, which name start-up files here (`~/.login`).
        let named = |w: &str| WORDS.contains(&w) || PASS_WORDS.contains(&w);
        return lower.starts_with('.')
            && (lower.ends_with("history")
                || lower.ends_with("_hist")
                || key_file(ext)
                || lower.ends_with("authority")
                || (DATA.contains(&ext) && words(stem).any(named)));
    }
    if !dirs[0].starts_with('.') || lower == "authorized_keys" || lower == "authorized_keys2" {
        return false;
    }
    if key_file(ext) {
        return true;
    }
    let named = |w: &str| WORDS.contains(&w) || HOME_WORDS.contains(&w) || PASS_WORDS.contains(&w);
    DATA.contains(&ext)
        && (words(stem).any(named)
            || dirs[1..]
                .iter()
                .any(|d| words(&d.to_ascii_lowercase()).any(named)))
}

/// Whether a (normalized) system path is, by its name, a credential: a key store by its
/// extension, or a data file whose name or directory names one (`/etc/ppp/chap-secrets`,
/// `/etc/apt/auth.conf.d/x.conf`, `/var/lib/jenkins/secrets/master.key`,
/// `/etc/pki/tls/private/x.key`); and a Kerberos ticket cache wherever it is
/// (`/tmp/krb5cc_0`).
pub(super) fn system_credential(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    if name.starts_with("krb5cc") {
        return true;
    }
    const ROOTS: &[&str] = &["/etc/", "/var/lib/", "/run/", "/var/run/", "/srv/", "/opt/"];
    let Some(rest) = ROOTS.iter().find_map(|r| path.strip_prefix(r)) else {
        return false;
    };
    // PAM's modules are named for what they do (`common-auth`), not for what they hold.
    if path.starts_with("/etc/pam.d/") {
        return false;
    }
    let (stem, ext) = split_ext(&name);
    if KEY_FILES.contains(&ext) {
        return true;
    }
    let named = |w: &str| WORDS.contains(&w);
    let dirs: Vec<String> = rest
        .split('/')
        .rev()
        .skip(1)
        .map(str::to_ascii_lowercase)
        .collect();
    DATA.contains(&ext) && (words(stem).any(named) || dirs.iter().any(|d| words(d).any(named)))
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
        for secret in [
            ".config/anthropic/api_key",
            ".minisign/minisign.key",
            ".ethereum/keystore/x",
            ".bitcoin/wallet.dat",
            ".config/sops/age/keys.txt",
            ".config/Slack/Cookies",
            ".local/share/atuin/history.db",
            ".cloudflared/cert.pem",
            ".netrc.gpg",
            ".Xauthority",
        ] {
            assert!(login_file(&parts(secret)), "{secret}");
        }
        for data in [
            ".cargo/registry/src/x/src/private/mod.rs",
            ".config/Code/User/settings.json",
            ".local/share/x/keywords.json",
            ".gitconfig",
            ".config/fish/config.fish",
        ] {
            assert!(!login_file(&parts(data)), "{data}");
        }
    }

    #[test]
    fn system_credentials_by_name() {
        for secret in [
            "/etc/ppp/chap-secrets",
            "/etc/apt/auth.conf",
            "/etc/apt/auth.conf.d/x.conf",
            "/var/lib/jenkins/secrets/master.key",
            "/etc/pki/tls/private/x.key",
            "/etc/openvpn/client.key",
            "/etc/krb5.keytab",
            "/tmp/krb5cc_0",
            "/run/user/0/keyring/control",
        ] {
            assert!(system_credential(secret), "{secret}");
        }
        for data in [
            "/etc/passwd",
            "/etc/login.defs",
            "/etc/pam.d/common-auth",
            "/etc/ssl/certs/ca-certificates.crt",
            "/etc/ssl/certs/x.pem",
            "/etc/apt/keyrings/docker.gpg",
            "/etc/default/keyboard",
            "/opt/app/src/auth.py",
            "/var/lib/dpkg/status",
            "/usr/share/doc/x/secrets.txt",
        ] {
            assert!(!system_credential(data), "{data}");
        }
    }
}
