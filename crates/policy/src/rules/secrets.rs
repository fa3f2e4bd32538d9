//! Which paths hold credentials: keys, cloud and registry logins, password stores, shell
//! histories (what was typed, tokens among it), the server's and the host's tokens, the
//! system's password hashes and mounted secrets, another process's environment.
//!
//! Read wherever they sit — this user's home, another's (`/home/*/.ssh/id_rsa`,
//! `/root/.aws/credentials`) — as a file, as a directory read whole (`tar czf - ~/.ssh`,
//! `grep -r . ~/.aws`, `cp -r ~/.ssh`), or through a pattern that can match one
//! (`cat ~/.ssh/*`, `cat ~/.ss?/id_*`).

use super::globs::fnmatch;
use super::secret_names::{is_home, login_file, private_in_ssh, system_credential};

/// Under a home directory: exact paths, and directories (ending in `/`) whose every file
/// counts.
const HOME_SECRETS: &[&str] = &[
    ".aws/credentials",
    ".aws/config",
    ".netrc",
    ".git-credentials",
    ".docker/config.json",
    ".kube/config",
    ".pypirc",
    ".npmrc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh/hosts.yml",
    ".config/gcloud/",
    ".azure/",
    ".gnupg/",
    ".password-store/",
    ".config/interactive-terminal-mcp/",
    ".config/interactive-terminal/",
    ".bash_history",
    ".zsh_history",
    ".zhistory",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
    ".local/share/fish/fish_history",
    // Browsers' saved passwords and cookies (signed-in sessions), and the desktop's keyrings.
    ".mozilla/",
    ".config/google-chrome/",
    ".config/chromium/",
    ".config/BraveSoftware/",
    ".config/microsoft-edge/",
    ".local/share/keyrings/",
    ".config/op/",
    // Other tools' logins and tokens.
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".pgpass",
    ".my.cnf",
    ".s3cfg",
    ".boto",
    ".config/rclone/rclone.conf",
    ".config/hub",
    ".config/hcloud/",
    ".config/doctl/",
    ".oci/",
    ".fly/",
    ".config/netlify/",
    ".config/heroku/",
    ".netlify/",
    ".wrangler/",
    ".docker/contexts/",
    ".aws/sso/",
    ".aws/cli/cache/",
    ".config/git/credentials",
    ".config/containers/auth.json",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".composer/auth.json",
    ".config/composer/auth.json",
    ".gem/credentials",
    ".config/configstore/",
    ".ngrok2/",
    ".config/ngrok/",
    // AI agents' and editors' logins (and the editors' stored secrets).
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/",
    ".config/github-copilot/",
    ".config/Code/User/globalStorage/",
    ".config/Cursor/User/globalStorage/",
    ".viminfo",
    ".lesshst",
    // Services' command-line logins and chat clients' sessions that no word of their names
    // gives away.
    ".kaggle/kaggle.json",
    ".config/solana/id.json",
    ".sentryclirc",
    ".yarnrc.yml",
    ".config/stripe/config.toml",
    ".twilio-cli/",
    ".railway/",
    ".ibmcloud/",
    ".config/linode-cli",
    ".config/tailscale/",
    ".config/filezilla/",
    ".config/remmina/",
    ".purple/accounts.xml",
    ".weechat/sec.conf",
    ".config/Slack/",
    ".config/discord/",
    ".config/Signal/config.json",
    ".dbshell",
    // AI clients' own settings: the MCP servers they start, with those servers' tokens in
    // their environments.
    ".claude.json",
    // Emacs's `auth-source` logins (the `.netrc` format, plain text), WakaTime's API key,
    // Expo's session.
    ".authinfo",
    ".wakatime.cfg",
    ".expo/state.json",
    ".config/Claude/claude_desktop_config.json",
    ".cursor/mcp.json",
    ".codeium/windsurf/mcp_config.json",
    ".config/Code/User/mcp.json",
    ".codex/config.toml",
    // Data platforms', CI services' and forges' command-line logins, package indexes with
    // a login in their address.
    ".databrickscfg",
    ".snowsql/config",
    ".dbt/profiles.yml",
    ".circleci/cli.yml",
    ".travis/config.yml",
    ".config/glab-cli/config.yml",
    ".config/tea/config.yml",
    ".local/share/atuin/",
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".bundle/config",
    ".nuget/NuGet/NuGet.Config",
];

/// Private SSH keys, by the names `ssh-keygen` gives them (`.pub` halves are not).
const SSH_KEYS: &[&str] = &[
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "id_dsa",
    "id_ed25519_sk",
];

/// System files that hold credentials, and directories whose every file does.
const SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/run/secrets/",
    "/var/run/secrets/",
    "/etc/ssl/private/",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/letsencrypt/live/",
    "/etc/letsencrypt/archive/",
    "/etc/wireguard/",
    "/etc/NetworkManager/system-connections/",
    "/var/lib/tailscale/",
    "/run/containers/",
    // Clusters' and services' own logins.
    "/etc/kubernetes/",
    "/etc/rancher/k3s/k3s.yaml",
    "/etc/mysql/debian.cnf",
    "/etc/gitlab-runner/config.toml",
    "/var/lib/gitlab-runner/config.toml",
    "/var/lib/docker/containers/",
];

/// Programs that, given a directory, only list it or change its metadata: naming a
/// credentials directory to them reads nothing of what it holds.
const LISTERS: &[&str] = &[
    "ls", "stat", "du", "tree", "file", "test", "[", "realpath", "readlink", "mkdir", "chmod",
    "chown", "touch", "cd", "pushd", "basename", "dirname",
];

/// Whether a path holds an environment's variables, and the tokens among them: a process's
/// own (`/proc/self/environ`, `/proc/$$/environ`) or a project's `.env` files (not their
/// templates: `.env.example`, `.env.sample`, `.env.template`, `.env.dist`). Reading one is
/// what `env` is; sending one on is warned.
pub fn is_environment_file(path: &str) -> bool {
    let path = path.trim_start_matches('@');
    let path = path
        .split_once('=')
        .map_or(path, |(_, v)| v.trim_start_matches('@'));
    if path.starts_with("/proc/") && path.ends_with("/environ") {
        return true;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    name == ".env"
        || name.strip_prefix(".env.").is_some_and(|rest| {
            !matches!(
                rest,
                "example" | "sample" | "template" | "dist" | "defaults"
            )
        })
}

/// Whether `ps` is asked for every process's environment (BSD's `e`: `ps auxe`, `ps eww`,
/// `ps -ef eww`). procps takes BSD options (no dash) anywhere among the others, so every
/// word is read, but for the values of the options that take one (`ps -u steve`, `ps U
/// steve`, `ps -o pid,user`).
pub fn shows_environments(program: &str, args: &[String]) -> bool {
    /// Short options, UNIX (`-u me`) and BSD (`U me`), whose value may be the next word.
    const UNIX_VALUE: &str = "CGUgpqstuoOD";
    const BSD_VALUE: &str = "OopqtUk";
    /// Long options that take no value; any other without `=` takes the next word.
    const LONG_FLAGS: &[&str] = &[
        "--help",
        "--version",
        "--info",
        "--headers",
        "--no-headers",
        "--forest",
        "--cumulative",
        "--deselect",
    ];
    if program != "ps" {
        return false;
    }
    let mut value_next = false;
    for a in args {
        if std::mem::take(&mut value_next) {
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            value_next = !long.contains('=') && !LONG_FLAGS.contains(&a.as_str());
        } else if let Some(cluster) = a.strip_prefix('-') {
            // The first letter that takes a value takes the rest of the word, or the next.
            value_next = cluster
                .char_indices()
                .find(|(_, c)| UNIX_VALUE.contains(*c))
                .is_some_and(|(i, _)| i + 1 == cluster.len());
        } else {
            let letters = match a.find(|c| BSD_VALUE.contains(c)) {
                Some(i) => {
                    value_next = i + 1 == a.len();
                    &a[..i]
                }
                None => a.as_str(),
            };
            if letters.contains('e') {
                return true;
            }
        }
    }
    false
}

/// Whether a (normalized) path holds credentials, or is a pattern that can match one.
pub fn is_secret_file(path: &str) -> bool {
    // Another process's environment and memory (tokens, keys).
    if let Some(rest) = path.strip_prefix("/proc/")
        && let Some((pid, file)) = rest.split_once('/')
        && !matches!(pid, "self" | "thread-self")
        && matches!(file, "environ" | "mem")
    {
        return true;
    }
    if SYSTEM_SECRETS.iter().any(|s| within(path, s)) || system_credential(path) {
        return true;
    }
    // A container registry login kept for a user's session (`podman login`).
    if path.starts_with("/run/user/") && path.ends_with("/containers/auth.json") {
        return true;
    }
    // The host keys of `/etc/ssh` (not its configuration).
    if path.starts_with("/etc/ssh/") && path.contains("_key") && !path.ends_with(".pub") {
        return true;
    }
    let parts: Vec<&str> = path.split('/').collect();
    // Under any home: every place a home's part may start (`~/`, `/home/bob/`, `/root/`, a
    // relative path's start).
    (0..parts.len())
        .any(|i| home_secret(&parts[i..]) || (is_home(&parts[..i]) && login_file(&parts[i..])))
}

/// Whether a directory `path` (normalized) holds credentials: a read of it whole reads them
/// (`tar`, `cp -r`, `grep -r`, `rsync`, `zip`); `program` is the command's, whose listing of
/// the directory reads nothing.
pub fn is_secret_dir(path: &str, program: &str) -> bool {
    if LISTERS.contains(&program) {
        return false;
    }
    let path = path.trim_end_matches('/');
    if SYSTEM_SECRETS
        .iter()
        .any(|s| s.ends_with('/') && s.trim_end_matches('/') == path)
        || path == "/etc/ssh"
    {
        return true;
    }
    let parts: Vec<&str> = path.split('/').collect();
    (0..parts.len()).any(|i| {
        let rel = &parts[i..];
        // A directory of secrets counts itself; a file's directories do.
        starts_hidden(rel)
            && home_secret_parts().iter().any(|(secret, dir)| {
                (secret.len() > rel.len() || (*dir && secret.len() == rel.len()))
                    && matches_parts(rel, &secret[..rel.len()])
            })
    })
}

/// What a command prints that is a credential, when it is one of the programs that hand
/// out stored secrets: a key ring, a password store, a cloud or forge CLI's token. Named by
/// program and verb; a program's other verbs pass.
pub fn prints_credentials(program: &str, args: &[String]) -> Option<&'static str> {
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let has = |flag: &str| {
        args.iter()
            .any(|a| a == flag || a.split_once('=').is_some_and(|(n, _)| n == flag))
    };
    let first = words.first().copied().unwrap_or("");
    let second = words.get(1).copied().unwrap_or("");
    let found = match program {
        "gpg" | "gpg2" => {
            has("--export-secret-keys")
                || has("--export-secret-subkeys")
                || has("--export-secret-key")
        }
        "git" => {
            // The subcommand: the first word that is not an option or a global option's
            // value (`git -C dir credential fill`).
            let sub = args.iter().enumerate().find(|(i, a)| {
                !a.starts_with('-')
                    && (*i == 0
                        || !matches!(
                            args[i - 1].as_str(),
                            "-C" | "-c" | "--work-tree" | "--git-dir" | "--namespace"
                        ))
            });
            sub.is_some_and(|(_, s)| s == "credential" || s.starts_with("credential-"))
        }
        "gh" | "glab" => first == "auth" && (second == "token" || has("--show-token") || has("-t")),
        "gcloud" => matches!(first, "auth" | "config") && second.starts_with("print-"),
        "az" => first == "account" && second == "get-access-token",
        "aws" => {
            first == "configure"
                && (second == "export-credentials"
                    || (second == "get"
                        && words
                            .get(2)
                            .is_some_and(|k| k.contains("secret") || k.contains("token"))))
                || (first == "ecr" && second == "get-login-password")
                || (first == "sts" && second == "get-session-token")
        }
        // The cluster's credentials, or a secret's data in a format that shows it (`get
        // secret x -o yaml`; the bare `get secrets` lists names).
        "kubectl" | "oc" => {
            (first == "config" && second == "view" && has("--raw"))
                || (first == "get"
                    && second.starts_with("secret")
                    && args.iter().any(|a| {
                        a.starts_with("-o") || a.starts_with("--output") || a == "--template"
                    }))
        }
        "security" => first.contains("password") || first == "dump-keychain",
        // `pass NAME` and `pass show NAME` print; the bare command and other verbs list or
        // change the store.
        "pass" | "gopass" => {
            !first.is_empty()
                && !matches!(
                    first,
                    "ls" | "list"
                        | "find"
                        | "search"
                        | "init"
                        | "git"
                        | "generate"
                        | "insert"
                        | "edit"
                        | "rm"
                        | "mv"
                        | "cp"
                        | "help"
                        | "version"
                )
        }
        "secret-tool" => first == "lookup" || first == "search",
        "op" => matches!(first, "read" | "inject") || (first == "item" && second == "get"),
        "vault" => {
            matches!(first, "read")
                || (first == "kv" && second == "get")
                || (first == "token" && second == "create")
        }
        "heroku" => first == "auth:token",
        // A credential the environment holds, printed into the answer (and the
        // transcript): `printenv GITHUB_TOKEN`, `echo $AWS_SECRET_ACCESS_KEY`.
        "printenv" => words.iter().any(|w| crate::env::credential_variable(w)),
        // `find ~ -name id_rsa -exec cat {} \;`: the credentials found are handed to a
        // command, whatever directory they are in.
        "find" => {
            let runs = args
                .iter()
                .any(|a| matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"));
            runs && args.windows(2).any(|w| {
                matches!(
                    w[0].as_str(),
                    "-name" | "-iname" | "-path" | "-wholename" | "-ipath"
                ) && names_secret(&w[1])
            })
        }
        "echo" | "printf" => args.iter().any(|a| references_credential(a)),
        "npm" => first == "token",
        // The kernel's keyring: a key's payload printed (`keyctl print @u`).
        "keyctl" => matches!(first, "print" | "pipe" | "read"),
        "ps" => shows_environments(program, args),
        "doctl" => first == "auth" && second == "token",
        _ => program.starts_with("docker-credential-") && first == "get",
    };
    found.then_some("prints stored credentials")
}

/// Whether a file name (or `find`'s pattern for one) is a credential's: a private SSH key
/// (`id_rsa`, `id_*`), a key or certificate bundle (`*.pem`, `*.key`), or a credentials
/// file (`credentials`, `.netrc`, `.git-credentials`, `.pypirc`, `credentials.toml`,
/// `shadow`).
pub(super) fn names_secret(pattern: &str) -> bool {
    let p = pattern
        .rsplit('/')
        .next()
        .unwrap_or(pattern)
        .trim_matches(['\'', '"'])
        .to_ascii_lowercase();
    SSH_KEYS.contains(&p.as_str())
        || p.starts_with("id_") && !p.ends_with(".pub")
        || p.ends_with(".pem")
        || p.ends_with(".key")
        || matches!(
            p.as_str(),
            "credentials"
                | ".netrc"
                | ".git-credentials"
                | ".pypirc"
                | "credentials.toml"
                | "shadow"
        )
}

/// Whether a word expands a variable that holds a credential (`$GITHUB_TOKEN`,
/// `${DB_PASSWORD}`, `"token: $NPM_TOKEN"`).
fn references_credential(word: &str) -> bool {
    word.split('$').skip(1).any(|rest| {
        let rest = rest.strip_prefix('{').unwrap_or(rest);
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        !name.is_empty() && crate::env::credential_variable(&name)
    })
}

/// Whether `rel` (a home's part, split) names or can match one of the home's credentials.
fn home_secret(rel: &[&str]) -> bool {
    if private_in_ssh(rel) {
        return true;
    }
    // A key in `.ssh` by its extension.
    if rel.len() == 2 && rel[0] == ".ssh" && rel[1].ends_with(".pem") {
        return true;
    }
    // Every entry starts with a hidden name, which only a hidden name or a pattern starting
    // with a dot matches (`matches_parts`): most words end here.
    if !starts_hidden(rel) {
        return false;
    }
    home_secret_parts().iter().any(|(secret, dir)| {
        if *dir {
            rel.len() > secret.len() && matches_parts(&rel[..secret.len()], secret)
        } else {
            rel.len() == secret.len() && matches_parts(rel, secret)
        }
    })
}

/// Whether path parts start with a hidden name (or a pattern for one), as every entry of
/// [`home_secret_parts`] does.
fn starts_hidden(rel: &[&str]) -> bool {
    rel.first().is_some_and(|p| p.starts_with('.'))
}

/// [`HOME_SECRETS`] and the private keys of `.ssh` by their names, as path parts (and
/// whether the entry is a directory), split once: every word of every command is checked
/// against them.
fn home_secret_parts() -> &'static [(Vec<&'static str>, bool)] {
    static PARTS: std::sync::OnceLock<Vec<(Vec<&'static str>, bool)>> = std::sync::OnceLock::new();
    PARTS.get_or_init(|| {
        HOME_SECRETS
            .iter()
            .map(|s| {
                (
                    s.trim_end_matches('/').split('/').collect(),
                    s.ends_with('/'),
                )
            })
            .chain(SSH_KEYS.iter().map(|k| (vec![".ssh", *k], false)))
            .collect()
    })
}

/// Whether path parts, each a name or a shell pattern, match a secret's names one by one.
fn matches_parts(pattern: &[&str], names: &[&str]) -> bool {
    pattern.iter().zip(names).all(|(p, n)| {
        if p.contains(['*', '?', '[']) {
            fnmatch(p, n) && (!n.starts_with('.') || p.starts_with('.'))
        } else {
            p == n
        }
    })
}

/// Whether `path` is `s` or, when `s` is a directory (ends in `/`), inside it.
fn within(path: &str, s: &str) -> bool {
    if s.ends_with('/') {
        path.starts_with(s)
    } else {
        path == s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_home_credential_starts_with_a_hidden_name() {
        // `home_secret` and `is_secret_dir` skip words that do not (`starts_hidden`).
        for (parts, _) in home_secret_parts() {
            assert!(starts_hidden(parts), "{parts:?}");
        }
    }

    #[test]
    fn credentials_are_found_wherever_they_sit_and_however_they_are_named() {
        for secret in [
            "~/.ssh/id_rsa",
            "/home/bob/.ssh/id_ed25519",
            "/home/*/.ssh/id_rsa",
            "~/.ssh/*",
            "~/.ss?/id_*",
            "/root/.aws/credentials",
            "~/.gnupg/private-keys-v1.d/x.key",
            "~/.bash_history",
            "/var/run/secrets/kubernetes.io/serviceaccount/token",
            "/etc/shadow",
            "/etc/ssh/ssh_host_ed25519_key",
            "/proc/1/environ",
            "~/.ssh/deploy.pem",
            ".ssh/id_rsa",
        ] {
            assert!(is_secret_file(secret), "{secret}");
        }
        for plain in [
            "~/.ssh/id_rsa.pub",
            "~/.ssh/known_hosts",
            "~/.ssh/config",
            "~/.bashrc",
            "/etc/ssh/sshd_config",
            "/proc/self/environ",
            "~/src/*.rs",
            "/etc/passwd",
        ] {
            assert!(!is_secret_file(plain), "{plain}");
        }
    }

    #[test]
    fn a_credentials_directory_read_whole_is_a_read_of_them() {
        for dir in [
            "~/.ssh",
            "~/.aws/",
            "/home/bob/.gnupg",
            "/run/secrets",
            "~/.config",
        ] {
            assert!(is_secret_dir(dir, "tar"), "{dir}");
        }
        assert!(!is_secret_dir("~/.ssh", "ls"));
        assert!(!is_secret_dir("~/src", "tar"));
        assert!(!is_secret_dir("~/.cache", "grep"));
    }
}
