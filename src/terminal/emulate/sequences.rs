//! The escape sequences the front acts on, found in the bytes a program printed.

/// A sequence this front handles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ours {
    SaveCursor,
    RestoreCursor,
    Index,
    NextLine,
    SetTab,
    ClearTab(u16),
    ForwardTab(u16),
    BackTab(u16),
    Insert(bool),
    /// `CSI ? … 7 … h/l` (`true`: wrap); the sequence still goes to the screen.
    Wrap(bool),
    /// `CSI ? … 3 … h/l`: the sequence itself still goes to the screen (for its other modes).
    ColumnMode,
    Align,
    Reset,
    /// `CSI ! p` (DECSTR): modes back to their defaults, the screen kept.
    SoftReset,
    /// `CSI ? 1047 h/l`: the alternate screen, cleared when left.
    Alternate(bool),
    /// `CSI ? 1048 h/l`: save / restore the cursor.
    CursorMode(bool),
    /// `ESC ( 0` / `ESC ) B` …: G0 or G1 made the line-drawing set (`true`) or another.
    Charset(usize, bool),
}

/// What starts at an escape byte.
pub(super) enum Seq {
    Ours(Ours, usize),
    /// Not ours: this many bytes go through.
    Other(usize),
    /// A control string starts: this many bytes, then its body.
    String(usize),
    Incomplete,
}

/// The DEC line-drawing character for `b` (`0x5f..=0x7e`), as xterm draws it.
pub(super) fn line_drawing(b: u8) -> char {
    const SET: [char; 32] = [
        ' ', '◆', '▒', '␉', '␌', '␍', '␊', '°', '±', '␤', '␋', '┘', '┐', '┌', '└', '┼', '⎺', '⎻',
        '─', '⎼', '⎽', '├', '┤', '┴', '┬', '│', '≤', '≥', 'π', '≠', '£', '·',
    ];
    SET.get(usize::from(b.wrapping_sub(0x5f)))
        .copied()
        .unwrap_or(char::from(b))
}

pub(super) fn is_continuation(b: u8) -> bool {
    (0x80..0xc0).contains(&b)
}

/// Bytes of the UTF-8 character led by `b` (1 for anything that does not lead one).
pub(super) fn utf8_len(b: u8) -> usize {
    match b {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

/// The sequence `s` (starting with ESC) begins with.
pub(super) fn parse(s: &[u8]) -> Seq {
    let Some(&second) = s.get(1) else {
        return Seq::Incomplete;
    };
    match second {
        b'[' => csi(s),
        b']' | b'P' | b'_' | b'^' | b'X' => Seq::String(2),
        b'7' => Seq::Ours(Ours::SaveCursor, 2),
        b'8' => Seq::Ours(Ours::RestoreCursor, 2),
        b'D' => Seq::Ours(Ours::Index, 2),
        b'E' => Seq::Ours(Ours::NextLine, 2),
        b'H' => Seq::Ours(Ours::SetTab, 2),
        b'c' => Seq::Ours(Ours::Reset, 2),
        b'(' | b')' => match s.get(2) {
            None => Seq::Incomplete,
            Some(&set) => Seq::Ours(Ours::Charset(usize::from(second == b')'), set == b'0'), 3),
        },
        b'#' => match s.get(2) {
            None => Seq::Incomplete,
            Some(b'8') => Seq::Ours(Ours::Align, 3),
            Some(_) => Seq::Other(3),
        },
        // ESC, intermediates, a final byte (charsets, keypad modes, ESC 7/8 …).
        _ => match s[1..].iter().position(|b| !(0x20..=0x2f).contains(b)) {
            Some(i) => Seq::Other(i + 2),
            None => Seq::Incomplete,
        },
    }
}

fn csi(s: &[u8]) -> Seq {
    let body = &s[2..];
    let Some(end) = body.iter().position(|b| !(0x20..=0x3f).contains(b)) else {
        return Seq::Incomplete;
    };
    let last = body[end];
    if !(0x40..=0x7e).contains(&last) {
        // A control inside the sequence: the screen model deals with it.
        return Seq::Other(2);
    }
    let len = 2 + end + 1;
    let (head, intermediates) = match body[..end].iter().position(|b| (0x20..=0x2f).contains(b)) {
        Some(i) => (&body[..i], &body[i..end]),
        None => (&body[..end], &body[..0]),
    };
    if intermediates == b"!" && last == b'p' && head.is_empty() {
        return Seq::Ours(Ours::SoftReset, len);
    }
    if !intermediates.is_empty() {
        return Seq::Other(len);
    }
    let (private, params) = match head.first() {
        Some(m @ (b'<' | b'=' | b'>' | b'?')) => (Some(*m), &head[1..]),
        _ => (None, head),
    };
    let numbers: Vec<u16> = params
        .split(|&b| b == b';')
        .map(|p| {
            std::str::from_utf8(p)
                .ok()
                .and_then(|p| p.parse().ok())
                .unwrap_or(0)
        })
        .collect();
    let first = numbers.first().copied().unwrap_or(0);
    let ours = match (private, last) {
        (None, b's') if params.is_empty() => Ours::SaveCursor,
        (None, b'u') if params.is_empty() => Ours::RestoreCursor,
        (None, b'I') => Ours::ForwardTab(first.max(1)),
        (None, b'Z') => Ours::BackTab(first.max(1)),
        (None, b'g') => Ours::ClearTab(first),
        (None, b'h' | b'l') if numbers.contains(&4) => Ours::Insert(last == b'h'),
        (Some(b'?'), b'h' | b'l') if numbers.contains(&3) => Ours::ColumnMode,
        (Some(b'?'), b'h' | b'l') if numbers.contains(&7) => Ours::Wrap(last == b'h'),
        (Some(b'?'), b'h' | b'l') if numbers.contains(&1047) => Ours::Alternate(last == b'h'),
        (Some(b'?'), b'h' | b'l') if numbers.contains(&1048) => Ours::CursorMode(last == b'h'),
        _ => return Seq::Other(len),
    };
    Seq::Ours(ours, len)
}
