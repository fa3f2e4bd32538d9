//! A long stretch of output shown as a model can use it: its head and its tail, each cut at
//! a line end, and where the middle left out lies.
//!
//! Why: an answer is read by a language model with a context window, through a client that
//! keeps results under a size. The first 64 KiB of a failing run of 6,000 log lines did not
//! hold the failure line at its end; a long output answered with 145,000 characters. So a
//! default answer shows what fits its budget — the head (a third: what the run started
//! with) and the tail (the rest: summaries and errors are there) — and says exactly which
//! bytes it left out, to be read by cursor.

use std::io;

use super::{Slice, Spool};

/// The head and tail of a stretch of a stream.
#[derive(Debug)]
pub struct Excerpt {
    pub head: Slice,
    /// `None`: the head is the whole stretch.
    pub tail: Option<Slice>,
}

impl Excerpt {
    /// The bytes left out between head and tail (`from`, `to`), if any.
    pub fn gap(&self) -> Option<(u64, u64)> {
        self.tail
            .as_ref()
            .map(|t| (self.head.end, t.start))
            .filter(|(a, b)| b > a)
    }

    /// Where a reader who saw this is: after the tail, or the head.
    pub fn end(&self) -> u64 {
        self.tail.as_ref().map_or(self.head.end, |t| t.end)
    }
}

impl Spool {
    /// The stretch `[from, until)` of the stream in at most `budget` bytes: whole, or its
    /// head (a third of the budget, back to its last line end) and its tail (the rest,
    /// forward to its first line start), never inside a UTF-8 character. `finished`: the
    /// stream grows no more.
    pub fn read_excerpt(
        &self,
        from: u64,
        until: u64,
        budget: usize,
        finished: bool,
    ) -> io::Result<Excerpt> {
        let until = until.min(self.len());
        let from = from.min(until);
        if until - from <= budget as u64 {
            let mut head = self.read_text(from, budget, false, finished)?;
            cut_at(&mut head, until);
            return Ok(Excerpt { head, tail: None });
        }
        let head_budget = budget / 3;
        let mut head = self.read_text(from, head_budget, false, finished)?;
        if let Some(nl) = head.bytes.iter().rposition(|b| *b == b'\n') {
            head.bytes.truncate(nl + 1);
            head.end = head.start + head.bytes.len() as u64;
        }
        let tail_budget = (budget - head_budget) as u64;
        let tail_from = until.saturating_sub(tail_budget).max(head.end);
        let mut tail = self.read(tail_from, (until - tail_from) as usize)?;
        // Start at a line's start (when one begins in the first half), and never inside a
        // character.
        let half = tail.bytes.len() / 2;
        let skip = match tail.bytes[..half].iter().position(|b| *b == b'\n') {
            Some(nl) => nl + 1,
            None => tail
                .bytes
                .iter()
                .take(3)
                .take_while(|b| (**b & 0xC0) == 0x80)
                .count(),
        };
        tail.bytes.drain(..skip);
        tail.start += skip as u64;
        let len = self.len();
        head.omitted_after = len - head.end;
        tail.omitted_after = len - tail.end;
        Ok(Excerpt {
            head,
            tail: Some(tail),
        })
    }
}

/// Cut a slice back to `until`.
fn cut_at(s: &mut Slice, until: u64) {
    if s.end > until && until >= s.start {
        s.bytes.truncate((until - s.start) as usize);
        s.end = until;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spool_of(text: &str) -> Spool {
        let mut s = Spool::new(&std::env::temp_dir(), 1 << 20);
        s.append(text.as_bytes());
        s
    }

    #[test]
    fn a_long_stretch_shows_its_head_and_tail_cut_at_lines() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let s = spool_of(&text);
        let e = s.read_excerpt(0, s.len(), 600, true).expect("excerpt");
        let head = String::from_utf8(e.head.bytes.clone()).expect("utf8");
        let tail = String::from_utf8(e.tail.as_ref().expect("tail").bytes.clone()).expect("utf8");
        assert!(
            head.starts_with("line 0\n") && head.ends_with('\n'),
            "{head}"
        );
        assert!(
            tail.starts_with("line ") && tail.ends_with("line 999\n"),
            "{tail}"
        );
        assert!(head.len() + tail.len() <= 600);
        let (a, b) = e.gap().expect("a gap");
        assert_eq!(a, e.head.end);
        assert_eq!(b, e.tail.as_ref().expect("tail").start);
        // What was shown and left out adds up to the whole, each byte once.
        assert_eq!(
            e.head.bytes.len() as u64 + (b - a) + tail.len() as u64,
            s.len()
        );
        // A short stretch is whole.
        let e = s.read_excerpt(0, 20, 600, true).expect("excerpt");
        assert!(e.tail.is_none() && e.head.end == 20);
    }
}
