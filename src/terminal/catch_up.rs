//! Drawing a terminal's screen costs the same whatever it printed before.
//!
//! The screen is rendered when it is looked at (`Core::sync_screen`). A terminal that printed
//! 200 MB since it was last looked at would take seconds to replay, and a screen only shows
//! its last rows: past [`MAX_REPLAY`] of backlog, the screen is drawn from the last
//! [`MAX_REPLAY`] bytes only, starting at a line, after the DEC private modes the skipped
//! bytes set (alternate screen, cursor keys, bracketed paste) are applied, so that a
//! full-screen program that switched screens long ago is still seen as one.

use std::collections::BTreeMap;

/// Most bytes of backlog replayed into the screen model in one catch-up.
pub const MAX_REPLAY: u64 = 1024 * 1024;

/// How far past the cut a line start is looked for before starting mid-line.
const LINE_SEARCH: usize = 64 * 1024;

/// DEC private modes (`CSI ? Pm h` / `CSI ? Pm l`), the last setting of each.
#[derive(Debug, Default)]
pub struct Modes(BTreeMap<u16, bool>);

impl Modes {
    /// Note every DEC private mode `bytes` set or reset. A sequence split across two calls
    /// is missed; the cost of that is one mode in a skipped megabyte, not a wrong stream.
    pub fn scan(&mut self, bytes: &[u8]) {
        for at in memchr::memmem::find_iter(bytes, b"\x1b[?") {
            let rest = &bytes[at + 3..];
            let end = rest
                .iter()
                .take(32)
                .position(|b| !(b.is_ascii_digit() || *b == b';'));
            let Some(end) = end else { continue };
            let on = match rest[end] {
                b'h' => true,
                b'l' => false,
                _ => continue,
            };
            for n in rest[..end].split(|b| *b == b';') {
                if let Some(n) = std::str::from_utf8(n).ok().and_then(|s| s.parse().ok()) {
                    self.0.insert(n, on);
                }
            }
        }
    }

    /// The sequences that put a screen in these modes.
    pub fn replay(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, on) in &self.0 {
            out.extend_from_slice(format!("\x1b[?{n}{}", if *on { 'h' } else { 'l' }).as_bytes());
        }
        out
    }
}

/// Where to start drawing in `window` (the bytes from the cut on): just after its first line
/// end when one is near, else at once.
pub fn line_start(window: &[u8]) -> usize {
    let near = &window[..window.len().min(LINE_SEARCH)];
    memchr::memchr(b'\n', near).map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_setting_of_each_mode_is_replayed() {
        let mut m = Modes::default();
        m.scan(b"x\x1b[?1049h\x1b[?1;2004hvim\x1b[?1l");
        m.scan(b"\x1b[?25l\x1b[?9999x\x1b[?");
        assert_eq!(
            m.replay(),
            b"\x1b[?1l\x1b[?25l\x1b[?1049h\x1b[?2004h".to_vec()
        );
        let mut p = vt100::Parser::new(
            std::num::NonZeroU16::new(4).unwrap(),
            std::num::NonZeroU16::new(10).unwrap(),
            0,
        );
        p.process(&m.replay());
        assert!(p.screen().alternate_screen() && p.screen().bracketed_paste());
    }

    #[test]
    fn drawing_starts_at_a_line_when_one_is_near() {
        assert_eq!(line_start(b"tail of a line\nnext"), 15);
        assert_eq!(line_start(b"no line end"), 0);
        assert_eq!(line_start(&vec![b'x'; LINE_SEARCH + 10]), 0);
    }
}
