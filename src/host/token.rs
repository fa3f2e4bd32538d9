//! The host's access token: configured, or generated once and kept (mode 0600) so restarts
//! keep working for clients that already know it.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Bytes of randomness in a generated token.
const TOKEN_BYTES: usize = 24;

/// Where the generated token lives by default.
pub fn default_file() -> PathBuf {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("interactive-terminal").join("token")
}

fn generate() -> Result<String, String> {
    let mut buf = [0u8; TOKEN_BYTES];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut buf))
        .map_err(|e| format!("no randomness for a token: {e}"))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// The token in `file`, or a new one written there. A new token is printed on stderr, once.
pub fn load_or_create(file: &Path) -> Result<String, String> {
    if let Ok(t) = std::fs::read_to_string(file) {
        let t = t.trim().to_string();
        if !t.is_empty() {
            return Ok(t);
        }
    }
    let token = generate()?;
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(file)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    f.write_all(token.as_bytes())
        .map_err(|e| format!("{}: {e}", file.display()))?;
    eprintln!(
        "interactive-terminal: generated an access token and stored it in {} (mode 0600): {token}",
        file.display()
    );
    Ok(token)
}

/// Constant-time comparison, so the token cannot be guessed byte by byte from timings.
pub fn matches(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_generated_once_and_compared_exactly() {
        let dir = std::env::temp_dir().join(format!("itmcp-token-{}", std::process::id()));
        let file = dir.join("token");
        let _ = std::fs::remove_file(&file);
        let a = load_or_create(&file).expect("create");
        let b = load_or_create(&file).expect("load");
        assert_eq!(a, b);
        assert_eq!(a.len(), TOKEN_BYTES * 2);
        assert!(matches(&a, &b));
        assert!(!matches("x", &a));
        let _ = std::fs::remove_dir_all(dir);
    }
}
