//! An access token (the host service's, and the MCP server's over HTTP): configured, or
//! generated once and kept (mode 0600) so restarts keep working for clients that already
//! know it; and how a request presents it.
//!
//! A token file that other users can read is refused (the service does not start), not
//! overwritten: someone may already have copied it. A generated token is never printed —
//! launchers capture stderr into logs — only where it is kept.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The variable that carries the host service's token: read by the host, by the MCP server
/// that bridges to it, and set by the server for the host it starts.
pub const HOST_TOKEN_VARIABLE: &str = "PM_INTERACTIVE_TERMINAL_TOKEN";

/// How a kept secret's file is private, for messages.
pub const KEPT_PRIVATE: &str = if cfg!(windows) {
    "readable by its owner only"
} else {
    "mode 0600"
};

/// Bytes of randomness in a generated token (192 bits).
const TOKEN_BYTES: usize = 24;

/// Least length of a token that guards a non-loopback address (128 bits as hex).
pub const MIN_PUBLIC_TOKEN_CHARS: usize = 32;
/// Least count of distinct characters in such a token (`aaaa…` is no secret).
const MIN_DISTINCT_CHARS: usize = 10;

/// Where the generated token lives by default.
pub fn default_file() -> PathBuf {
    config_file("interactive-terminal", "token")
}

/// `$XDG_CONFIG_HOME/<program>/<name>` (else `~/.config/…`, else the temporary directory);
/// on Windows `%APPDATA%\<program>\<name>`, in the user's own profile.
pub fn config_file(program: &str, name: &str) -> PathBuf {
    let windows = cfg!(windows).then(|| std::env::var_os("APPDATA")).flatten();
    let base = windows
        .or_else(|| std::env::var_os("XDG_CONFIG_HOME"))
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(std::env::temp_dir);
    base.join(program).join(name)
}

/// Whether a token is strong enough to guard an address other machines reach.
pub fn strong_enough(token: &str) -> bool {
    let distinct: std::collections::HashSet<char> = token.chars().collect();
    token.chars().count() >= MIN_PUBLIC_TOKEN_CHARS && distinct.len() >= MIN_DISTINCT_CHARS
}

/// Refuse a token file other users could read, or one someone else owns.
fn check_private(file: &Path, meta: &std::fs::Metadata) -> Result<(), String> {
    match crate::os::not_private(meta) {
        None => Ok(()),
        Some(why) => Err(format!(
            "the token file {} {why}; anyone who read it can use this service. Make it private to you (`chmod 600 {}`) if it stayed private, or delete it to get a new token",
            file.display(),
            file.display()
        )),
    }
}

/// The token in `file`, or a new one written there (mode 0600), said on stderr.
pub fn load_or_create(file: &Path) -> Result<String, String> {
    let (token, made) = kept_secret(file)?;
    if made {
        eprintln!(
            "interactive-terminal: generated an access token; it is kept in {} ({KEPT_PRIVATE}): read it from there",
            file.display()
        );
    }
    Ok(token)
}

/// The secret in `file`, or a new one written there (mode 0600); whether it was made now.
/// A file other users can read, or someone else's, is refused.
pub fn kept_secret(file: &Path) -> Result<(String, bool), String> {
    match std::fs::metadata(file) {
        Ok(meta) => {
            check_private(file, &meta)?;
            let t = std::fs::read_to_string(file)
                .map_err(|e| format!("{}: {e}", file.display()))?
                .trim()
                .to_string();
            if !t.is_empty() {
                return Ok((t, false));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("{}: {e}", file.display())),
    }
    let token = crate::ids::random_hex(TOKEN_BYTES)
        .ok_or_else(|| "no randomness for a token (/dev/urandom)".to_string())?;
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut f = crate::os::create_private(file).map_err(|e| format!("{}: {e}", file.display()))?;
    f.write_all(token.as_bytes())
        .map_err(|e| format!("{}: {e}", file.display()))?;
    Ok((token, true))
}

/// Constant-time comparison, so the token cannot be guessed byte by byte from timings.
pub fn matches(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token a program presents in its headers: `Authorization: Bearer <token>`, or a
/// header of the service's own.
pub fn presented<'a>(authorization: Option<&'a str>, custom: Option<&'a str>) -> Option<&'a str> {
    authorization
        .and_then(|a| a.strip_prefix("Bearer "))
        .or(custom)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn tokens_are_found_in_headers() {
        assert_eq!(presented(Some("Bearer abc"), None), Some("abc"));
        assert_eq!(presented(None, Some("def")), Some("def"));
        assert_eq!(presented(Some("Basic zzz"), None), None);
    }

    #[test]
    fn tokens_are_generated_once_kept_private_and_compared_exactly() {
        let dir = std::env::temp_dir().join(format!("itmcp-token-{}", std::process::id()));
        let file = dir.join("token");
        let _ = std::fs::remove_file(&file);
        let a = load_or_create(&file).expect("create");
        let b = load_or_create(&file).expect("load");
        assert_eq!(a, b);
        assert_eq!(a.len(), TOKEN_BYTES * 2);
        assert!(strong_enough(&a));
        assert!(matches(&a, &b));
        assert!(!matches("x", &a));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let e = load_or_create(&file).expect_err("a readable token file is refused");
        assert!(e.contains("other users"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&file).ok(),
            Some(a),
            "and not overwritten"
        );
        let _ = std::fs::remove_dir_all(dir);
        assert!(!strong_enough("short"));
        assert!(!strong_enough(&"a".repeat(64)));
    }
}
