//! Output as text: where a UTF-8 character ends, and bytes turned into a string without
//! a copy when they are valid.

/// Bytes in the UTF-8 character that starts with `lead` (1 for anything that cannot start one).
pub(super) fn utf8_width(lead: u8) -> usize {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 1,
    }
}

/// Whether `b` continues a UTF-8 character rather than starting one.
pub(super) fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Bytes as text, and whether any were not UTF-8 (those become U+FFFD). Valid bytes, the
/// usual case, are moved into the string after one fast check: a page of output is neither
/// copied nor walked character by character, as a lossy conversion of a borrowed slice does.
pub fn into_text(bytes: Vec<u8>) -> (String, bool) {
    match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    }
}

/// Bytes to drop from the end of `bytes` so it does not stop inside a UTF-8 character.
/// Only an incomplete but so-far-valid sequence is dropped; invalid bytes stay as they are.
pub fn incomplete_utf8_tail(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for back in 1..=3.min(n) {
        let b = bytes[n - back];
        if is_continuation(b) {
            continue;
        }
        let need = utf8_width(b);
        return if back < need { back } else { 0 };
    }
    0
}
