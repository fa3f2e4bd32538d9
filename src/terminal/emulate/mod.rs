//! What the screen model does not draw by itself, done in front of it.
//!
//! `vt100` draws most of what programs send but drops a few sequences that full-screen
//! programs and vttest use: `CSI s`/`CSI u` (save and restore the cursor), `ESC D` (index),
//! `ESC E` (next line), custom tab stops (`ESC H`, `CSI g`, `CSI I`, `CSI Z`), insert mode
//! (`CSI 4 h`), autowrap off (`CSI ? 7 l`), the alignment test (`ESC # 8`) and the clear on a column-mode change
//! (`CSI ? 3 h/l`). Each of them is said here in sequences `vt100` does draw (the cursor read
//! back from the screen where one needs it), so the screen matches what a terminal such as
//! tmux shows. Widths are the C library's `wcwidth`, as the programs on the pty count them:
//! the emoji presentation selector (U+FE0F) would make the screen model draw `❤️` two columns
//! wide where `wcwidth` (and tmux) count one, so it is left out of the screen (the output
//! keeps it). Everything else goes through byte for byte, and the common case (no insert
//! mode, no custom tab stops) only looks at escape bytes and `0xEF` lead bytes.

/// U+FE0F, VARIATION SELECTOR-16, in UTF-8.
const EMOJI_PRESENTATION: &[u8] = b"\xef\xb8\x8f";

/// Longest escape sequence kept across two reads; a longer one goes through as it is.
const MAX_SEQUENCE: usize = 64;

/// The state a terminal keeps that the screen model does not.
#[derive(Debug, Default)]
pub struct Front {
    /// An escape sequence (or a character) the last read ended inside.
    carry: Vec<u8>,
    /// Inside a control string (OSC, DCS, APC, PM, SOS): nothing is ours until it ends.
    in_string: bool,
    /// Insert mode (IRM): printed characters push the rest of the row right.
    insert: bool,
    /// Autowrap off (DECAWM reset): a character printed at the last column stays there.
    no_wrap: bool,
    /// Tab stops set by the program; `None` is a stop every 8 columns.
    tabs: Option<Vec<u16>>,
    /// G0 and G1 hold the DEC line-drawing set (`ESC ( 0`, `ESC ) 0`).
    graphics: [bool; 2],
    /// G1 is shifted in (SO) in place of G0 (SI).
    shifted: bool,
    /// The sets and shift saved with the cursor (a terminal saves them together).
    saved: ([bool; 2], bool),
}

mod sequences;

use sequences::{Ours, Seq, is_continuation, line_drawing, parse, utf8_len};

impl Front {
    /// Draw `bytes` on `p`'s screen.
    pub fn process(&mut self, p: &mut vt100::Parser, bytes: &[u8]) {
        let joined = super::carry::joined(&mut self.carry, bytes);
        let data: &[u8] = &joined;
        let mut at = 0;
        let mut from = 0;
        while at < data.len() {
            if self.in_string {
                match memchr::memchr2(0x07, 0x1b, &data[at..]) {
                    Some(i) if data[at + i] == 0x07 => {
                        at += i + 1;
                        self.in_string = false;
                    }
                    // An ESC ends the string (`ESC \` is its terminator): parse it as usual.
                    Some(i) => {
                        at += i;
                        self.in_string = false;
                    }
                    None => at = data.len(),
                }
                continue;
            }
            let Some(i) = self.next_interesting(&data[at..]) else {
                break;
            };
            at += i;
            match data[at] {
                0x1b => match parse(&data[at..]) {
                    Seq::Other(len) => at += len,
                    Seq::String(len) => {
                        at += len;
                        self.in_string = true;
                    }
                    Seq::Ours(ours, len) => {
                        p.process(&data[from..at]);
                        let seq = &data[at..at + len];
                        at += len;
                        from = at;
                        self.act(p, ours, seq);
                    }
                    Seq::Incomplete => {
                        if data.len() - at <= MAX_SEQUENCE {
                            p.process(&data[from..at]);
                            self.carry = data[at..].to_vec();
                            return;
                        }
                        at += 1;
                    }
                },
                0xef if data[at..].starts_with(EMOJI_PRESENTATION) => {
                    p.process(&data[from..at]);
                    at += EMOJI_PRESENTATION.len();
                    from = at;
                }
                0xef if EMOJI_PRESENTATION.starts_with(&data[at..]) => {
                    p.process(&data[from..at]);
                    self.carry = data[at..].to_vec();
                    return;
                }
                0xef if !(self.insert || self.no_wrap) => at += 1,
                0x0e | 0x0f => {
                    p.process(&data[from..at]);
                    self.shifted = data[at] == 0x0e;
                    at += 1;
                    from = at;
                }
                b @ 0x5f..=0x7e if self.line_drawing() => {
                    p.process(&data[from..at]);
                    at += 1;
                    from = at;
                    self.before_char(p, 1);
                    let mut utf8 = [0; 4];
                    p.process(line_drawing(b).encode_utf8(&mut utf8).as_bytes());
                }
                b'\t' => {
                    p.process(&data[from..at]);
                    at += 1;
                    from = at;
                    self.tab(p, 1, true);
                }
                _ => {
                    // A printed character in insert mode or with autowrap off.
                    let len = utf8_len(data[at]);
                    if data.len() - at < len {
                        p.process(&data[from..at]);
                        self.carry = data[at..].to_vec();
                        return;
                    }
                    let width = std::str::from_utf8(&data[at..at + len])
                        .ok()
                        .and_then(|s| s.chars().next())
                        .and_then(unicode_width::UnicodeWidthChar::width)
                        .map_or(0, |w| w as u16);
                    if width > 0 {
                        p.process(&data[from..at]);
                        from = at;
                        self.before_char(p, width);
                    }
                    at += len;
                }
            }
        }
        p.process(&data[from..]);
    }

    /// Where the next byte this front may act on is: escapes and `0xEF` always, tabs while
    /// the program set its own stops, shifts once a set was designated, the letters of the
    /// line-drawing set while it is in use, printed characters in insert mode or with
    /// autowrap off.
    fn next_interesting(&self, s: &[u8]) -> Option<usize> {
        let each_char = self.insert || self.no_wrap;
        let drawing = self.line_drawing();
        if each_char || drawing || self.graphics[1] || self.shifted {
            let tabs = self.tabs.is_some();
            return s.iter().position(|&b| {
                matches!(b, 0x1b | 0xef | 0x0e | 0x0f)
                    || (tabs && b == b'\t')
                    || (drawing && (0x5f..=0x7e).contains(&b))
                    || (each_char && b >= 0x20 && b != 0x7f && !is_continuation(b))
            });
        }
        if self.tabs.is_some() {
            return memchr::memchr3(0x1b, b'\t', 0xef, s);
        }
        memchr::memchr2(0x1b, 0xef, s)
    }

    fn save_cursor(&mut self, p: &mut vt100::Parser) {
        self.saved = (self.graphics, self.shifted);
        p.process(b"\x1b7");
    }

    fn restore_cursor(&mut self, p: &mut vt100::Parser) {
        (self.graphics, self.shifted) = self.saved;
        p.process(b"\x1b8");
    }

    /// The set in use draws lines.
    fn line_drawing(&self) -> bool {
        self.graphics[usize::from(self.shifted)]
    }

    /// Before a character `width` columns wide is printed: with autowrap off, at the last
    /// column, write over it instead of wrapping; in insert mode, make room for it.
    fn before_char(&self, p: &mut vt100::Parser, width: u16) {
        if self.no_wrap {
            let cols = size(p).1;
            if p.screen().cursor_position().1 + width > cols {
                let col = cols.saturating_sub(width) + 1;
                p.process(format!("\x1b[{col}G").as_bytes());
            }
        }
        if self.insert {
            p.process(format!("\x1b[{width}@").as_bytes());
        }
    }

    fn act(&mut self, p: &mut vt100::Parser, ours: Ours, seq: &[u8]) {
        match ours {
            Ours::SaveCursor => self.save_cursor(p),
            Ours::RestoreCursor => self.restore_cursor(p),
            // vt100's line feed is an index: down a row, scrolling at the bottom margin.
            Ours::Index => p.process(b"\n"),
            Ours::NextLine => p.process(b"\r\n"),
            Ours::SetTab => {
                let col = p.screen().cursor_position().1;
                let stops = self.stops(p);
                if let Err(i) = stops.binary_search(&col) {
                    stops.insert(i, col);
                }
            }
            Ours::ClearTab(3) => self.tabs = Some(Vec::new()),
            Ours::ClearTab(0) => {
                let col = p.screen().cursor_position().1;
                let stops = self.stops(p);
                stops.retain(|&c| c != col);
            }
            Ours::ClearTab(_) => {}
            Ours::ForwardTab(n) => self.tab(p, n, true),
            Ours::BackTab(n) => self.tab(p, n, false),
            Ours::Insert(on) => self.insert = on,
            Ours::Wrap(on) => {
                self.no_wrap = !on;
                p.process(seq);
            }
            Ours::ColumnMode => {
                // The width stays (the pty's size is the operator's); the screen is cleared
                // and the cursor homed, as a terminal does on DECCOLM.
                p.process(seq);
                p.process(b"\x1b[H\x1b[2J");
            }
            Ours::Align => {
                let (rows, cols) = size(p);
                let mut fill = b"\x1b[?6l\x1b[r".to_vec();
                let line = "E".repeat(usize::from(cols));
                for row in 1..=rows {
                    fill.extend_from_slice(format!("\x1b[{row};1H{line}").as_bytes());
                }
                fill.extend_from_slice(b"\x1b[H");
                p.process(&fill);
            }
            Ours::Charset(g, graphics) => self.graphics[g] = graphics,
            Ours::Alternate(on) => {
                p.process(seq);
                p.process(if on {
                    b"\x1b[?47h"
                } else {
                    b"\x1b[2J\x1b[?47l"
                });
            }
            Ours::CursorMode(on) => {
                p.process(seq);
                if on {
                    self.save_cursor(p);
                } else {
                    self.restore_cursor(p);
                }
            }
            Ours::SoftReset => {
                (self.insert, self.no_wrap) = (false, false);
                (self.graphics, self.shifted) = ([false; 2], false);
                // Margins and origin mode reset (both home the cursor: it is put back),
                // attributes, a visible cursor, normal cursor keys and keypad.
                let (row, col) = p.screen().cursor_position();
                p.process(b"\x1b[?6l\x1b[r\x1b[0m\x1b[?25h\x1b[?1l\x1b>");
                p.process(format!("\x1b[{};{}H", row + 1, col + 1).as_bytes());
            }
            Ours::Reset => {
                (self.insert, self.no_wrap, self.tabs) = (false, false, None);
                (self.graphics, self.shifted) = ([false; 2], false);
                self.saved = ([false; 2], false);
                p.process(seq);
            }
        }
    }

    /// The program's tab stops, made from the default ones the first time it changes them.
    fn stops(&mut self, p: &vt100::Parser) -> &mut Vec<u16> {
        let cols = size(p).1;
        self.tabs
            .get_or_insert_with(|| (0..cols).step_by(8).collect())
    }

    /// Move `n` tab stops forward or back, never past the row's ends.
    fn tab(&mut self, p: &mut vt100::Parser, n: u16, forward: bool) {
        let cols = size(p).1;
        let mut col = p.screen().cursor_position().1.min(cols.saturating_sub(1));
        let last = cols.saturating_sub(1);
        for _ in 0..n.max(1) {
            col = match (&self.tabs, forward) {
                (Some(t), true) => t.iter().copied().find(|&c| c > col).unwrap_or(last),
                (Some(t), false) => t.iter().rev().copied().find(|&c| c < col).unwrap_or(0),
                (None, true) => ((col / 8 + 1) * 8).min(last),
                (None, false) => col.saturating_sub(1) / 8 * 8,
            };
        }
        p.process(format!("\x1b[{}G", col + 1).as_bytes());
    }
}

/// The screen's rows and columns.
fn size(p: &vt100::Parser) -> (u16, u16) {
    let (rows, cols) = p.screen().size();
    (rows.get(), cols.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dim(n: u16) -> std::num::NonZeroU16 {
        std::num::NonZeroU16::new(n).unwrap()
    }

    /// The screen's rows after `bytes`, fed in pieces of `step` bytes.
    fn drawn(bytes: &[u8], step: usize) -> Vec<String> {
        let mut p = vt100::Parser::new(dim(4), dim(20), 0);
        let mut f = Front::default();
        for piece in bytes.chunks(step) {
            f.process(&mut p, piece);
        }
        p.screen()
            .rows(0, 20)
            .map(|r| r.trim_end().to_string())
            .collect()
    }

    fn both(bytes: &[u8]) -> Vec<String> {
        let whole = drawn(bytes, usize::MAX);
        assert_eq!(whole, drawn(bytes, 1), "split byte by byte");
        whole
    }

    #[test]
    fn save_and_restore_the_cursor() {
        assert_eq!(both(b"A\x1b[sBBBB\x1b[uX")[0], "AXBBB");
    }

    #[test]
    fn index_and_next_line() {
        assert_eq!(both(b"ab\x1bDc\x1bEd"), ["ab", "  c", "d", ""]);
    }

    #[test]
    fn insert_mode_pushes_the_row_right() {
        assert_eq!(both(b"world\r\x1b[4hhello \x1b[4l!")[0], "hello !orld");
        assert_eq!(both("ab\r\x1b[4h日".as_bytes())[0], "日ab");
    }

    #[test]
    fn tab_stops_set_cleared_and_walked_back() {
        // Clear all, set stops at 3 and 10, tab twice, back-tab once.
        let rows = both(b"\x1b[3g\x1b[4G\x1bH\x1b[11G\x1bH\rA\tB\tC\x1b[ZD");
        assert_eq!(rows[0], "A  B      D");
        // Default stops: forward with CSI I, back with CSI Z.
        assert_eq!(both(b"x\x1b[2Iy\x1b[2Zz")[0], "x       z       y");
    }

    #[test]
    fn autowrap_off_writes_over_the_last_column() {
        assert_eq!(
            both(b"\x1b[?7l\x1b[1;15Habcdefghij\x1b[?7h\x1b[2;1Hnext"),
            ["              abcdej", "next", "", ""]
        );
        // On again: wraps as before.
        assert_eq!(
            both(b"\x1b[?7l\x1b[?7h\x1b[1;19Habc")[..2],
            ["                  ab", "c"]
        );
    }

    #[test]
    fn emoji_take_the_columns_wcwidth_gives_them() {
        // ❤️ one column (the selector left out), the family six (three people, two joiners).
        assert_eq!(
            both("❤️x\r\n👨‍👩‍👧x\r\n日本x".as_bytes())[..3],
            ["❤x", "👨\u{200d}👩\u{200d}👧x", "日本x"]
        );
        let mut p = vt100::Parser::new(dim(4), dim(20), 0);
        Front::default().process(&mut p, "❤️".as_bytes());
        assert_eq!(p.screen().cursor_position(), (0, 1));
    }

    #[test]
    fn soft_reset_and_the_other_alternate_screen() {
        assert_eq!(
            both(
                b"ab\x1b[4h\x1b[!pX\r\n\x1b[?1047hALT\x1b[?1047l\x1b[?1048h\x1b[3;3Hq\x1b[?1048lz"
            ),
            ["abX", "z", "  q", ""]
        );
    }

    #[test]
    fn the_line_drawing_set_draws_lines() {
        let rows = both(b"\x1b(0lqqk\r\nx  x\r\nmqqj\x1b(B q\r\n\x1b)0\x0eltk\x0f t");
        assert_eq!(rows, ["┌──┐", "│  │", "└──┘ q", "┌├┐ t"]);
        // The sets are saved and restored with the cursor.
        let rows = both(b"\x1b(0qq\x1b7\x1b[2;1H\x1b(BA\x1b8qq\x1b[sx\x1b(Bx\x1b[uq");
        assert_eq!(rows[..2], ["─────x", "A"]);
    }

    #[test]
    fn alignment_test_and_column_mode() {
        assert_eq!(both(b"junk\x1b#8"), vec!["E".repeat(20); 4]);
        assert_eq!(both(b"junk\r\nmore\x1b[?3hX"), ["X", "", "", ""]);
    }

    #[test]
    fn strings_and_other_sequences_go_through() {
        // A title holding a tab and text, insert mode on: the title is not touched.
        let rows = both(b"\x1b[4h\x1b]0;a\tb c\x07ok\x1b]2;t\x1b\\\x1b(Bz");
        assert_eq!(rows[0], "okz");
        assert_eq!(both(b"\x1b[31mred\x1b[0m\x1b[>4;1m\x1b[2;3Hq")[1], "  q");
    }
}
