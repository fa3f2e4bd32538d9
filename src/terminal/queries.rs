//! Terminal queries a program prints, and the answers a terminal gives them.
//!
//! Programs ask their terminal who it is and where the cursor stands (device attributes,
//! status and cursor position reports, XTVERSION, mode reports, default colours) and wait
//! for the answer: vttest shows nothing until it comes, prompt_toolkit REPLs complain, and
//! an unanswered query eats the agent's next keystroke as its answer. The reader finds the
//! queries in what the pty printed and writes the answers back, as the same terminal for
//! every adapter (the host's core runs this code too).

/// A query found in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// `CSI c` / `CSI 0 c`: primary device attributes.
    PrimaryAttributes,
    /// `CSI > c` / `CSI > 0 c`: secondary device attributes.
    SecondaryAttributes,
    /// `CSI 5 n`: device status.
    Status,
    /// `CSI 6 n` (`private`: `CSI ? 6 n`): the cursor's position.
    CursorPosition { private: bool },
    /// `CSI > q` / `CSI > 0 q`: the terminal's name and version.
    Version,
    /// `CSI ? Ps $ p`: whether DEC private mode `Ps` is set.
    PrivateMode(u16),
    /// `OSC 10 ; ?` / `OSC 11 ; ?`: the default foreground / background colour.
    Colour(u8),
}

/// Longest query kept across two reads (a query split by the pty's read boundary).
const MAX_QUERY: usize = 24;

/// Finds queries in a stream read in pieces.
#[derive(Debug, Default)]
pub struct Queries {
    carry: Vec<u8>,
}

impl Queries {
    /// The queries in `bytes` (with what the last call left unfinished), each with the
    /// offset in `bytes` just past its last byte: the screen is read there, where the
    /// program asked, not after whatever it printed next in the same read.
    pub fn scan(&mut self, bytes: &[u8]) -> Vec<(Query, usize)> {
        let carried = self.carry.len();
        let joined = super::carry::joined(&mut self.carry, bytes);
        let data: &[u8] = &joined;
        let mut found = Vec::new();
        let mut at = 0;
        while let Some(i) = memchr::memchr(0x1b, &data[at..]) {
            let start = at + i;
            match parse(&data[start..]) {
                Parsed::Query(q, len) => {
                    at = start + len;
                    found.push((q, at.saturating_sub(carried)));
                }
                Parsed::Other => at = start + 1,
                Parsed::Incomplete => {
                    if data.len() - start <= MAX_QUERY {
                        self.carry = data[start..].to_vec();
                    }
                    break;
                }
            }
        }
        found
    }
}

enum Parsed {
    Query(Query, usize),
    Other,
    Incomplete,
}

/// The query `s` (starting with ESC) begins with, if any.
fn parse(s: &[u8]) -> Parsed {
    match s.get(1) {
        None => Parsed::Incomplete,
        Some(b'[') => csi(s),
        Some(b']') => osc(s),
        Some(_) => Parsed::Other,
    }
}

fn csi(s: &[u8]) -> Parsed {
    // ESC [ <private marker> <params> <intermediate> <final>
    let body = &s[2..];
    let Some(end) = body.iter().position(|b| (0x40..=0x7e).contains(b)) else {
        return if body.len() < MAX_QUERY && body.iter().all(|b| (0x20..=0x3f).contains(b)) {
            Parsed::Incomplete
        } else {
            Parsed::Other
        };
    };
    let (params, last) = (&body[..end], body[end]);
    let len = 2 + end + 1;
    let q = match (params, last) {
        (b"" | b"0", b'c') => Query::PrimaryAttributes,
        (b">" | b">0", b'c') => Query::SecondaryAttributes,
        (b"5", b'n') => Query::Status,
        (b"6", b'n') => Query::CursorPosition { private: false },
        (b"?6", b'n') => Query::CursorPosition { private: true },
        (b">" | b">0", b'q') => Query::Version,
        (p, b'p') if p.starts_with(b"?") && p.ends_with(b"$") => {
            match std::str::from_utf8(&p[1..p.len() - 1])
                .ok()
                .and_then(|n| n.parse().ok())
            {
                Some(n) => Query::PrivateMode(n),
                None => return Parsed::Other,
            }
        }
        _ => return Parsed::Other,
    };
    Parsed::Query(q, len)
}

fn osc(s: &[u8]) -> Parsed {
    // ESC ] 1 0 ; ? (BEL | ESC \)
    for (prefix, which) in [(&b"\x1b]10;?"[..], 10), (&b"\x1b]11;?"[..], 11)] {
        if s.len() < prefix.len() {
            if prefix.starts_with(s) {
                return Parsed::Incomplete;
            }
            continue;
        }
        if !s.starts_with(prefix) {
            continue;
        }
        return match &s[prefix.len()..] {
            [0x07, ..] => Parsed::Query(Query::Colour(which), prefix.len() + 1),
            [0x1b, b'\\', ..] => Parsed::Query(Query::Colour(which), prefix.len() + 2),
            [] | [0x1b] => Parsed::Incomplete,
            _ => Parsed::Other,
        };
    }
    Parsed::Other
}

/// DEC private modes the screen model knows.
pub fn private_mode(s: &vt100::Screen, mode: u16) -> Option<bool> {
    Some(match mode {
        1 => s.application_cursor(),
        25 => !s.hide_cursor(),
        47 | 1047 | 1049 => s.alternate_screen(),
        1000 => s.mouse_protocol_mode() == vt100::MouseProtocolMode::PressRelease,
        1002 => s.mouse_protocol_mode() == vt100::MouseProtocolMode::ButtonMotion,
        1003 => s.mouse_protocol_mode() == vt100::MouseProtocolMode::AnyMotion,
        1006 => s.mouse_protocol_encoding() == vt100::MouseProtocolEncoding::Sgr,
        2004 => s.bracketed_paste(),
        _ => return None,
    })
}

/// The answer to `q`; `screen` is asked only by the queries that need it.
pub fn answer(q: Query, screen: &mut dyn FnMut() -> Option<(u16, u16, Option<bool>)>) -> Vec<u8> {
    match q {
        // A VT100 with advanced video, as tmux answers.
        Query::PrimaryAttributes => b"\x1b[?1;2c".to_vec(),
        Query::SecondaryAttributes => b"\x1b[>0;10;1c".to_vec(),
        Query::Status => b"\x1b[0n".to_vec(),
        Query::CursorPosition { private } => {
            let (row, col) = screen().map_or((0, 0), |(r, c, _)| (r, c));
            let mark = if private { "?" } else { "" };
            format!("\x1b[{mark}{};{}R", row + 1, col + 1).into_bytes()
        }
        Query::Version => format!(
            "\x1bP>|{}({})\x1b\\",
            env!("CARGO_PKG_NAME"),
            env!("CARGO_PKG_VERSION")
        )
        .into_bytes(),
        Query::PrivateMode(n) => {
            let state = match screen().and_then(|(_, _, set)| set) {
                Some(true) => 1,
                Some(false) => 2,
                None => 0,
            };
            format!("\x1b[?{n};{state}$y").into_bytes()
        }
        // Light grey on black, as the page draws it.
        Query::Colour(10) => b"\x1b]10;rgb:d0d0/d0d0/d0d0\x1b\\".to_vec(),
        Query::Colour(_) => b"\x1b]11;rgb:0000/0000/0000\x1b\\".to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_found_also_when_a_read_splits_them() {
        let mut q = Queries::default();
        let mut scan = |b: &[u8]| q.scan(b).into_iter().map(|(q, _)| q).collect::<Vec<_>>();
        assert_eq!(
            scan(b"ab\x1b[6n\x1b[31mred\x1b[c\x1b[>c\x1b[?2004$p\x1b]11;?\x07"),
            vec![
                Query::CursorPosition { private: false },
                Query::PrimaryAttributes,
                Query::SecondaryAttributes,
                Query::PrivateMode(2004),
                Query::Colour(11),
            ]
        );
        assert_eq!(scan(b"x\x1b["), vec![]);
        assert_eq!(scan(b">0q tail"), vec![Query::Version]);
        assert_eq!(scan(b"\x1b]10;"), vec![]);
        assert_eq!(scan(b"?\x1b\\"), vec![Query::Colour(10)]);
        // Not queries: colours, cursor moves, a title.
        assert_eq!(scan(b"\x1b[1;2H\x1b[0m\x1b]0;title\x07\x1b[6"), vec![]);
        assert_eq!(scan(b"n"), vec![Query::CursorPosition { private: false }]);
    }

    #[test]
    fn each_query_says_where_it_ends_in_the_read() {
        let mut q = Queries::default();
        assert_eq!(
            q.scan(b"\x1b[2;1Hx\x1b[6n\x1b[1;1H  "),
            vec![(Query::CursorPosition { private: false }, 11)]
        );
        assert_eq!(q.scan(b"ab\x1b[5"), vec![]);
        assert_eq!(q.scan(b"nzz"), vec![(Query::Status, 1)]);
    }

    #[test]
    fn answers_say_what_a_terminal_says() {
        let mut at = || Some((4, 9, Some(true)));
        assert_eq!(
            answer(Query::CursorPosition { private: false }, &mut at),
            b"\x1b[5;10R"
        );
        assert_eq!(answer(Query::PrivateMode(2004), &mut at), b"\x1b[?2004;1$y");
        assert_eq!(answer(Query::Status, &mut at), b"\x1b[0n");
        let mut none = || None;
        assert_eq!(answer(Query::PrivateMode(7), &mut none), b"\x1b[?7;0$y");
        assert!(
            String::from_utf8(answer(Query::Version, &mut none))
                .unwrap()
                .contains("interactive-terminal-mcp")
        );
    }
}
