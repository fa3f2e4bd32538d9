//! A streaming scanner for shell-integration escape sequences.
//!
//! It passes terminal output through unchanged except for OSC 633 (VS Code's shell
//! integration) and OSC 133 (FinalTerm) sequences, which it removes wherever they appear,
//! even split across reads. A 633 sequence becomes an [`Event`] only when its last parameter
//! is this terminal's nonce: output that merely prints such a sequence (a `cat` of a
//! hostile file, a command echoing `\e]633;E;...`) is stripped and never trusted.

/// Longest OSC payload buffered before giving up on it as ordinary data.
const MAX_OSC_PAYLOAD: usize = 512 * 1024;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

/// A trusted shell-integration event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `A`: the prompt starts; the shell is idle.
    PromptStart,
    /// `B`: the prompt ends; typed input starts.
    PromptEnd,
    /// `E`: the command line about to run.
    CommandLine(String),
    /// `C`: the command starts executing; its output follows.
    Executed,
    /// `D`: the command finished, with its exit code when the shell reported one.
    Finished(Option<i32>),
    /// `P;Cwd=`: the shell's working directory.
    Cwd(String),
    /// `P;PmIntegration=`: how much of the integration the script could install
    /// (`full` or `prompt_only`; this server's own property).
    Installed(String),
    /// The user's rc files have run (`P;PmRc=done`).
    RcDone,
    /// `G`: a continuation prompt (bash's and zsh's `PS2`) is drawn: the shell has part of a
    /// command line and reads the rest.
    Continuation,
}

/// One piece of the scanned stream, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Data(Vec<u8>),
    Event(Event),
    /// A window title the output set (OSC 0 or 2). The sequence stays in the data: it is
    /// the program's own output, not trusted, and says nothing about the integration.
    Title(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// Saw ESC.
    Esc,
    /// Inside `ESC ]`, collecting the payload.
    Osc,
    /// Inside an OSC payload, saw ESC (maybe the start of ST `ESC \`).
    OscEsc,
}

#[derive(Debug)]
pub struct Scanner {
    nonce: String,
    state: State,
    payload: Vec<u8>,
    /// Sequences stripped without being trusted (wrong or missing nonce, or 133).
    pub untrusted: u64,
}

impl Scanner {
    pub fn new(nonce: &str) -> Scanner {
        Scanner {
            nonce: nonce.to_string(),
            state: State::Ground,
            payload: Vec::new(),
            untrusted: 0,
        }
    }

    /// Scan the next chunk of output.
    pub fn feed(&mut self, input: &[u8]) -> Vec<Item> {
        let mut out: Vec<Item> = Vec::new();
        let mut data: Vec<u8> = Vec::with_capacity(input.len());
        let mut i = 0;
        while i < input.len() {
            match self.state {
                State::Ground => match memchr_esc(&input[i..]) {
                    Some(k) => {
                        data.extend_from_slice(&input[i..i + k]);
                        i += k + 1;
                        self.state = State::Esc;
                    }
                    None => {
                        data.extend_from_slice(&input[i..]);
                        i = input.len();
                    }
                },
                State::Esc => {
                    if input[i] == b']' {
                        self.state = State::Osc;
                        self.payload.clear();
                        i += 1;
                    } else {
                        data.push(ESC);
                        self.state = State::Ground;
                        // Re-scan this byte in ground state (it may be another ESC).
                    }
                }
                State::Osc => {
                    let b = input[i];
                    i += 1;
                    match b {
                        BEL => self.finish(&mut out, &mut data, &[BEL]),
                        ESC => self.state = State::OscEsc,
                        _ => {
                            self.payload.push(b);
                            if self.payload.len() > MAX_OSC_PAYLOAD {
                                self.abandon(&mut data);
                            }
                        }
                    }
                }
                State::OscEsc => {
                    if input[i] == b'\\' {
                        i += 1;
                        self.finish(&mut out, &mut data, b"\x1b\\");
                    } else {
                        // ESC inside an OSC aborts it; what was collected is plain data and
                        // the ESC starts something new.
                        self.abandon(&mut data);
                        self.state = State::Esc;
                    }
                }
            }
        }
        if !data.is_empty() {
            out.push(Item::Data(data));
        }
        out
    }

    /// Bytes held back because they may start a sequence that is not finished yet.
    pub fn pending(&self) -> usize {
        match self.state {
            State::Ground => 0,
            State::Esc => 1,
            State::Osc => 2 + self.payload.len(),
            State::OscEsc => 3 + self.payload.len(),
        }
    }

    fn abandon(&mut self, data: &mut Vec<u8>) {
        data.push(ESC);
        data.push(b']');
        data.append(&mut self.payload);
        self.state = State::Ground;
    }

    fn finish(&mut self, out: &mut Vec<Item>, data: &mut Vec<u8>, terminator: &[u8]) {
        self.state = State::Ground;
        let payload = std::mem::take(&mut self.payload);
        let integration = payload.starts_with(b"633;") || payload.starts_with(b"133;");
        if !integration {
            data.push(ESC);
            data.push(b']');
            data.extend_from_slice(&payload);
            data.extend_from_slice(terminator);
            let title = payload
                .strip_prefix(b"0;")
                .or_else(|| payload.strip_prefix(b"2;"));
            if let Some(t) = title {
                out.push(Item::Data(std::mem::take(data)));
                out.push(Item::Title(String::from_utf8_lossy(t).into_owned()));
            }
            return;
        }
        match self.trusted_event(&payload) {
            Some(ev) => {
                if !data.is_empty() {
                    out.push(Item::Data(std::mem::take(data)));
                }
                out.push(Item::Event(ev));
            }
            None => self.untrusted += 1,
        }
    }

    fn trusted_event(&self, payload: &[u8]) -> Option<Event> {
        let text = std::str::from_utf8(payload).ok()?;
        let mut parts: Vec<&str> = text.split(';').collect();
        if parts.first() != Some(&"633") || parts.len() < 3 {
            return None;
        }
        if parts.pop() != Some(self.nonce.as_str()) || self.nonce.is_empty() {
            return None;
        }
        let args = &parts[2..];
        match (parts[1], args) {
            ("A", []) => Some(Event::PromptStart),
            ("B", []) => Some(Event::PromptEnd),
            ("C", []) => Some(Event::Executed),
            ("D", []) => Some(Event::Finished(None)),
            ("D", [code]) => Some(Event::Finished(code.trim().parse().ok())),
            ("E", [line]) => Some(Event::CommandLine(unescape(line))),
            ("E", []) => Some(Event::CommandLine(String::new())),
            ("G", []) => Some(Event::Continuation),
            ("P", [prop]) => {
                if let Some(p) = prop.strip_prefix("Cwd=") {
                    Some(Event::Cwd(unescape(p)))
                } else if *prop == "PmRc=done" {
                    Some(Event::RcDone)
                } else {
                    prop.strip_prefix("PmIntegration=")
                        .map(|l| Event::Installed(l.to_string()))
                }
            }
            _ => None,
        }
    }
}

/// The next ESC, searched a vector at a time: on a flood (`cat` of a big file) this runs
/// over every byte the pty prints, and a byte-at-a-time search was the largest part of the
/// server's own code on that path (about 6 % of the reading thread's samples, the rest
/// being the kernel's).
fn memchr_esc(b: &[u8]) -> Option<usize> {
    memchr::memchr(ESC, b)
}

/// Undo the integration scripts' escaping: `\\` is a backslash, `\xNN` a byte.
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            if b[i + 1] == b'\\' {
                out.push(b'\\');
                i += 2;
                continue;
            }
            if b[i + 1] == b'x'
                && i + 3 < b.len()
                && let Ok(v) = u8::from_str_radix(&s[i + 2..i + 4], 16)
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: &str = "n0nce";

    fn scan_all(chunks: &[&[u8]]) -> (Vec<u8>, Vec<Event>, u64) {
        let mut s = Scanner::new(N);
        let mut data = Vec::new();
        let mut events = Vec::new();
        for c in chunks {
            for item in s.feed(c) {
                match item {
                    Item::Data(d) => data.extend(d),
                    Item::Event(e) => events.push(e),
                    Item::Title(_) => {}
                }
            }
        }
        (data, events, s.untrusted)
    }

    fn stream() -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(b"\x1b]633;A;n0nce\x07$ \x1b]633;B;n0nce\x07ls\r\n");
        v.extend_from_slice(b"\x1b]633;E;echo a\\x3bb \\\\ c;n0nce\x07\x1b]633;C;n0nce\x1b\\");
        v.extend_from_slice(b"out\x1b]0;title\x07put\r\n");
        v.extend_from_slice(b"\x1b]633;E;fake;wrong\x07\x1b]133;A\x07\x1b[31mred\x1b[0m");
        v.extend_from_slice(b"\x1b]633;D;3;n0nce\x07\x1b]633;P;Cwd=/tmp/a\\x3bb;n0nce\x07");
        v.extend_from_slice(b"> \x1b]633;G;n0nce\x07\x1b]633;G;wrong\x07");
        v
    }

    #[test]
    fn events_in_order_and_sequences_stripped() {
        let (data, events, untrusted) = scan_all(&[&stream()]);
        assert_eq!(
            events,
            vec![
                Event::PromptStart,
                Event::PromptEnd,
                Event::CommandLine("echo a;b \\ c".into()),
                Event::Executed,
                Event::Finished(Some(3)),
                Event::Cwd("/tmp/a;b".into()),
                Event::Continuation,
            ]
        );
        assert_eq!(untrusted, 3);
        assert_eq!(
            data,
            b"$ ls\r\nout\x1b]0;title\x07put\r\n\x1b[31mred\x1b[0m> ".to_vec()
        );
    }

    #[test]
    fn split_at_every_position_gives_the_same_result() {
        let s = stream();
        let whole = scan_all(&[&s]);
        for cut in 0..s.len() {
            assert_eq!(scan_all(&[&s[..cut], &s[cut..]]), whole, "cut at {cut}");
        }
        // One byte at a time.
        let bytes: Vec<&[u8]> = s.chunks(1).collect();
        assert_eq!(scan_all(&bytes), whole);
    }

    #[test]
    fn no_integration_bytes_survive() {
        let (data, _, _) = scan_all(&[&stream()]);
        let text = String::from_utf8_lossy(&data);
        assert!(!text.contains("633;") && !text.contains("133;"));
    }

    #[test]
    fn aborted_and_oversized_osc_are_data() {
        let (data, events, _) = scan_all(&[b"a\x1b]1;x\x1b[0mb"]);
        assert!(events.is_empty());
        assert_eq!(data, b"a\x1b]1;x\x1b[0mb".to_vec());
        let mut big = b"\x1b]9;".to_vec();
        big.extend(std::iter::repeat_n(b'z', MAX_OSC_PAYLOAD + 10));
        let (data, _, _) = scan_all(&[&big]);
        assert_eq!(data.len(), big.len());
    }

    #[test]
    fn empty_nonce_trusts_nothing() {
        let mut s = Scanner::new("");
        let items = s.feed(b"\x1b]633;A;\x07");
        assert!(items.is_empty());
        assert_eq!(s.untrusted, 1);
    }

    #[test]
    fn titles_are_reported_and_kept_in_the_data() {
        let mut s = Scanner::new(N);
        let mut items = s.feed(b"a\x1b]0;build: st");
        items.extend(s.feed(b"ep 2\x07b\x1b]2;two\x1b\\\x1b]1;icon\x07"));
        let titles: Vec<&str> = items
            .iter()
            .filter_map(|i| match i {
                Item::Title(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(titles, ["build: step 2", "two"]);
        let data: Vec<u8> = items
            .iter()
            .filter_map(|i| match i {
                Item::Data(d) => Some(d.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(
            data,
            b"a\x1b]0;build: step 2\x07b\x1b]2;two\x1b\\\x1b]1;icon\x07".to_vec()
        );
        // The title comes after the bytes before it.
        assert!(matches!(items[0], Item::Data(_)));
    }
}
