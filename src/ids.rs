//! Identities: ULIDs with a prefix naming what they identify (`ses_`, `term_`, `req_`, …; docs/contract.md).

/// Prefix of generated request ids.
pub const REQUEST: &str = "req";
/// Prefix of generated trace ids.
pub const TRACE: &str = "trace";
/// Prefix of headless session ids.
pub const SESSION: &str = "ses";
/// Prefix of terminal ids.
pub const TERMINAL: &str = "term";

/// Longest id accepted from a caller.
const MAX_EXTERNAL_ID_LEN: usize = 256;

/// A fresh `<prefix>_<ulid>`.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::generate())
}

/// `bytes` random bytes from the kernel, as hex: nonces, tokens, login codes. `None` only
/// when the kernel has no randomness to give (then nothing secret may be made).
pub fn random_hex(bytes: usize) -> Option<String> {
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut buf))
        .ok()?;
    Some(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Ids from callers are echoed back and logged: printable ASCII without spaces only.
pub fn is_acceptable_external_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_EXTERNAL_ID_LEN && s.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// The AHP channel URI of a terminal (`ahp-terminal:/term_<ulid>`).
pub fn terminal_uri(terminal_id: &str) -> String {
    format!("ahp-terminal:/{terminal_id}")
}

/// The terminal id in an AHP terminal channel URI.
pub fn terminal_id_from_uri(uri: &str) -> Option<&str> {
    uri.strip_prefix("ahp-terminal:/")
        .filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_prefixes() {
        let id = new_id(SESSION);
        assert!(id.starts_with("ses_") && id.len() == 4 + 26);
        assert!(is_acceptable_external_id("req_abc-1"));
        assert!(!is_acceptable_external_id("has space"));
        assert!(!is_acceptable_external_id(""));
        assert_eq!(
            terminal_id_from_uri(&terminal_uri("term_X")),
            Some("term_X")
        );
    }
}
