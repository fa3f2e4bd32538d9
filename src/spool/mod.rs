//! An append-only byte stream addressed by absolute offsets, with bounded memory.
//!
//! The newest bytes stay in memory; when the memory part passes its limit, its older half
//! moves to a file on disk, which is unlinked as soon as it is created so that nothing is
//! left behind even if the server is killed. Every byte ever appended stays readable by
//! offset for the spool's lifetime: readers pass a cursor and get exactly what follows it.

pub mod cap;
pub mod excerpt;
mod utf8;

pub use utf8::{incomplete_utf8_tail, into_text};
use utf8::{is_continuation, utf8_width};

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Default bytes a spool keeps in memory before spilling to disk.
pub const DEFAULT_MEMORY_LIMIT: usize = 1024 * 1024;

/// What an operator is told, at start and by `--check-config`, when the spool directory
/// cannot be used (see `private_dir`).
pub const UNUSABLE_DIR: &str = "the spool directory is unusable: terminals cannot start, and output past the memory bound stays in memory; set PM_TERM_SPOOL_DIR to a directory of this user's";

/// Smallest memory limit honoured (tests use small limits to exercise spilling).
const MIN_MEMORY_LIMIT: usize = 64;

#[derive(Debug)]
pub struct Spool {
    mem: Vec<u8>,
    /// Absolute offset of `mem[0]`; everything before it is in `file`.
    mem_start: u64,
    file: Option<File>,
    dir: PathBuf,
    limit: usize,
    spilled_bytes: u64,
    /// Memory length past which the next spill is tried: `limit`, or after a refused spill
    /// another `limit`'s worth beyond what was held then, so that a disk that refuses costs
    /// one attempt per limit of output rather than one per read.
    next_spill_at: usize,
    /// The last spill was refused: only the first refusal in a row is worth a warning.
    refused: bool,
    /// Most bytes kept of this stream ([`cap::max_per_stream`] when it was made).
    per_stream: u64,
    /// Bytes this stream holds on disk (written, not punched out).
    held: u64,
    /// Where the kept head ends, once the stream's middle is being dropped.
    head_end: Option<u64>,
    /// The end of the file range dropped so far (the stream's middle).
    file_dropped_to: u64,
    dropped: cap::Dropped,
}

impl Drop for Spool {
    fn drop(&mut self) {
        cap::release(self.held);
    }
}

/// A slice of the stream: `bytes` are the stream's bytes `start..end`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Slice {
    pub bytes: Vec<u8>,
    pub start: u64,
    pub end: u64,
    /// Bytes of the stream after `end` that this slice left out.
    pub omitted_after: u64,
    /// Bytes between the requested cursor and `start` that a tail read skipped.
    pub omitted_before: u64,
}

impl Spool {
    pub fn new(dir: &Path, limit: usize) -> Spool {
        let limit = limit.max(MIN_MEMORY_LIMIT);
        Spool {
            mem: Vec::new(),
            mem_start: 0,
            file: None,
            dir: dir.to_path_buf(),
            limit,
            spilled_bytes: 0,
            next_spill_at: limit,
            refused: false,
            per_stream: cap::max_per_stream(),
            held: 0,
            head_end: None,
            file_dropped_to: 0,
            dropped: cap::Dropped::default(),
        }
    }

    /// What was dropped of this stream, if anything (see [`cap`]).
    pub fn dropped(&self) -> Option<cap::DroppedSummary> {
        self.dropped.summary()
    }

    /// Total bytes ever appended: the offset the next byte will have.
    pub fn len(&self) -> u64 {
        self.mem_start + self.mem.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes currently held in memory.
    pub fn memory_bytes(&self) -> usize {
        self.mem.capacity()
    }

    pub fn spilled_bytes(&self) -> u64 {
        self.spilled_bytes
    }

    pub fn append(&mut self, data: &[u8]) {
        self.mem.extend_from_slice(data);
        if self.mem.len() > self.next_spill_at {
            self.spill();
        }
    }

    /// Move the older part of memory to disk. If the disk refuses, the bytes stay in
    /// memory: losing output is worse than exceeding the memory bound. The next attempt
    /// waits for another limit's worth of output (a full disk or a missing directory
    /// rarely mends within one read), and a run of refusals warns once.
    fn spill(&mut self) {
        let keep = self.limit / 2;
        let n = self.mem.len() - keep;
        if let Err(e) = self.write_to_file(n) {
            let held = self.mem.len();
            if self.refused {
                tracing::debug!(error = %e, held, "spool spill refused again");
            } else {
                tracing::warn!(error = %e, dir = %self.dir.display(), held, retry_after = self.limit,
                    "spool spill failed; keeping output in memory and trying again after more output");
            }
            self.refused = true;
            self.next_spill_at = held.saturating_add(self.limit);
            self.drop_oldest_in_memory();
            return;
        }
        if self.refused {
            tracing::info!(dir = %self.dir.display(), spilled = n, "spool spills to disk again");
            self.refused = false;
        }
        self.next_spill_at = self.limit;
        self.mem.drain(..n);
        self.mem_start += n as u64;
        self.spilled_bytes += n as u64;
        self.held += n as u64;
        cap::hold(n as u64);
        if self.mem.capacity() > self.limit * 2 {
            self.mem.shrink_to(self.limit);
        }
        self.drop_middle();
    }

    /// Past the per-stream limit (or with all streams past the total), punch out the file's
    /// bytes between the kept head and the newest half of the limit (none of it when over
    /// the total: the newest bytes are then those in memory).
    fn drop_middle(&mut self) {
        let per = self.per_stream;
        let over = cap::over_total();
        let file_end = self.mem_start;
        if self.head_end.is_none() && (file_end > per / 2 || over) {
            self.head_end = Some(file_end.min(per / 2));
        }
        let Some(head) = self.head_end else { return };
        let tail = if over {
            0
        } else {
            (per / 2).saturating_sub(self.mem.len() as u64)
        };
        let from = self.file_dropped_to.max(head);
        let to = file_end.saturating_sub(tail);
        if to <= from {
            return;
        }
        let Some(file) = &self.file else { return };
        if let Err(e) = cap::punch(file, from, to) {
            tracing::warn!(error = %e, dir = %self.dir.display(), "cannot give spooled output back to the disk; keeping it");
            return;
        }
        let cause = if over {
            cap::Cause::TotalLimit
        } else {
            cap::Cause::StreamLimit
        };
        self.dropped.add(from, to, cause);
        self.file_dropped_to = to;
        self.held -= (to - from).min(self.held);
        cap::release(to - from);
    }

    /// The stream has ended. One that passed a limit (a flood) keeps [`cap::ENDED_KEEP`] of
    /// its head and of its tail and gives the rest of its disk back; any other keeps all.
    pub fn settle(&mut self) {
        let Some(head) = self.head_end else { return };
        let Some(file) = &self.file else { return };
        let keep = cap::ENDED_KEEP;
        let file_end = self.mem_start;
        let tail_from = file_end.saturating_sub(keep.saturating_sub(self.mem.len() as u64));
        let mut punched = 0;
        // The head past its first `keep` bytes, then the file's part of the tail before the
        // last `keep` bytes of the stream.
        for (from, to) in [
            (keep.min(head), head),
            (self.file_dropped_to.max(head), tail_from),
        ] {
            if to > from && cap::punch(file, from, to).is_ok() {
                self.dropped.add(from, to, cap::Cause::Ended);
                punched += to - from;
            }
        }
        self.head_end = Some(keep.min(head));
        self.file_dropped_to = self.file_dropped_to.max(tail_from);
        self.held -= punched.min(self.held);
        cap::release(punched);
    }

    /// The disk refuses and memory holds more than its ceiling: the oldest bytes in memory go,
    /// the newest half of the memory limit stays.
    fn drop_oldest_in_memory(&mut self) {
        if self.mem.len() <= cap::memory_ceiling(self.limit) {
            return;
        }
        let n = self.mem.len() - self.limit / 2;
        self.dropped.add(
            self.mem_start,
            self.mem_start + n as u64,
            cap::Cause::DiskRefused,
        );
        self.mem.drain(..n);
        self.mem_start += n as u64;
        self.mem.shrink_to(self.limit);
        self.next_spill_at = self.limit;
    }

    /// Write `mem[..n]` at its own offset in the file. Positioned, not at the handle's
    /// cursor: a write the disk cut short (ENOSPC half way) leaves the cursor past what
    /// counts as spilled, and the retry must land where those bytes belong.
    fn write_to_file(&mut self, n: usize) -> io::Result<()> {
        if self.file.is_none() {
            self.file = Some(open_unlinked(&self.dir)?);
        }
        match &self.file {
            Some(f) => crate::os::write_all_at(f, &self.mem[..n], self.mem_start),
            None => Err(io::Error::other("spool file missing")),
        }
    }

    /// Up to `max` bytes starting at `from`. Offsets past the end give an empty slice. A
    /// read from inside a dropped range starts at its end (`omitted_before` says how far
    /// that was); a read stops where the next dropped range begins.
    pub fn read(&self, from: u64, max: usize) -> io::Result<Slice> {
        let len = self.len();
        let mut start = from.min(len);
        let skipped = match self.dropped.containing(start) {
            Some(end) => end.min(len) - start,
            None => 0,
        };
        start += skipped;
        let mut end = start.saturating_add(max as u64).min(len);
        if let Some(next) = self.dropped.next_from(start) {
            end = end.min(next.max(start));
        }
        let mut bytes = Vec::with_capacity((end - start) as usize);
        let mut pos = start;
        if pos < self.mem_start {
            let file_end = end.min(self.mem_start);
            let mut buf = vec![0u8; (file_end - pos) as usize];
            match &self.file {
                Some(f) => crate::os::read_exact_at(f, &mut buf, pos)?,
                None => return Err(io::Error::other("spool file missing")),
            }
            bytes.extend_from_slice(&buf);
            pos = file_end;
        }
        if pos < end {
            let a = (pos - self.mem_start) as usize;
            let b = (end - self.mem_start) as usize;
            bytes.extend_from_slice(&self.mem[a..b]);
        }
        Ok(Slice {
            bytes,
            start,
            end,
            omitted_after: len - end,
            omitted_before: skipped,
        })
    }

    /// The last `max` bytes, but nothing before `from`; the start moves forward to a UTF-8
    /// character boundary so the text does not begin with half a character.
    pub fn read_tail(&self, from: u64, max: usize) -> io::Result<Slice> {
        let len = self.len();
        let from = from.min(len);
        let mut start = len.saturating_sub(max as u64).max(from);
        if start > from {
            let probe = self.read(start, 4)?;
            let skip = probe
                .bytes
                .iter()
                .take_while(|b| is_continuation(**b))
                .count();
            if skip < 4 {
                start += skip as u64;
            }
        }
        let mut s = self.read(start, (len - start) as usize)?;
        s.omitted_before = s.start - from;
        Ok(s)
    }
}

/// Longest UTF-8 character, in bytes.
const MAX_CHAR_BYTES: usize = 4;

impl Spool {
    /// A read for text: like [`Spool::read`] (or [`Spool::read_tail`]) but never ending
    /// inside a UTF-8 character. A character cut by `max` is left for the next read; when not
    /// even one whole character fits in `max`, that one character is returned (at most four
    /// bytes) so that a reader always moves on. A character whose last bytes have not been
    /// written yet is held back while the stream may grow; once it is `finished`, what is
    /// there is returned as it is (and becomes U+FFFD in the text).
    pub fn read_text(
        &self,
        from: u64,
        max: usize,
        tail: bool,
        finished: bool,
    ) -> io::Result<Slice> {
        let mut s = if tail {
            self.read_tail(from, max)?
        } else {
            self.read(from, max.saturating_add(MAX_CHAR_BYTES - 1))?
        };
        let limit = if tail {
            s.bytes.len()
        } else {
            max.min(s.bytes.len())
        };
        let at_end = s.start + limit as u64 == self.len();
        let back = incomplete_utf8_tail(&s.bytes[..limit]);
        let keep = if back == 0 || (at_end && finished) {
            limit
        } else if back < limit {
            limit - back
        } else {
            // The one character in reach is longer than `max`: return it whole.
            let width = s.bytes.first().map_or(0, |b| utf8_width(*b));
            if s.bytes.len() >= width {
                width
            } else if finished && s.start + s.bytes.len() as u64 == self.len() {
                s.bytes.len()
            } else {
                0
            }
        };
        s.bytes.truncate(keep);
        s.end = s.start + keep as u64;
        s.omitted_after = self.len() - s.end;
        Ok(s)
    }
}

/// Create a file in `dir` and unlink it at once: readable through the handle, invisible
/// on disk, gone when the handle closes.
fn open_unlinked(dir: &Path) -> io::Result<File> {
    crate::private_dir::ensure(dir)?;
    let path = dir.join(format!("spool-{}", ulid::Ulid::generate()));
    crate::os::create_scratch(&path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        std::env::temp_dir().join(format!("itmcp-spool-test-{}", std::process::id()))
    }

    #[test]
    fn text_is_moved_when_valid_and_replaced_when_not() {
        let bytes = "a € b\n".as_bytes().to_vec();
        let at = bytes.as_ptr();
        let (text, lossy) = into_text(bytes);
        assert_eq!((text.as_str(), lossy), ("a € b\n", false));
        assert_eq!(text.as_ptr(), at, "valid bytes are moved, not copied");
        assert_eq!(
            into_text(b"a\xff\xfeb\xe2\x82".to_vec()),
            ("a\u{FFFD}\u{FFFD}b\u{FFFD}".to_string(), true)
        );
    }

    #[test]
    fn every_byte_stays_readable_across_spills() {
        let mut s = Spool::new(&dir(), 100);
        let all = fill(&mut s, 1000);
        assert!(s.spilled_bytes() > 0);
        assert!(s.memory_bytes() < 1000);
        assert_eq!(s.len() as usize, all.len());
        // Read back in odd-sized steps by cursor: nothing lost, nothing duplicated.
        let mut cursor = 0;
        let mut back = Vec::new();
        while cursor < s.len() {
            let sl = s.read(cursor, 37).expect("read");
            assert_eq!(sl.start, cursor);
            back.extend_from_slice(&sl.bytes);
            cursor = sl.end;
        }
        assert_eq!(back, all);
        assert!(s.read(s.len() + 10, 5).expect("read").bytes.is_empty());
    }

    /// A disk that refuses the writes (here: a spool file opened read-only) loses nothing:
    /// what could not be spilled stays in memory and every byte stays readable.
    #[test]
    fn refused_writes_keep_every_byte_in_memory() {
        let mut s = Spool::new(&dir(), 100);
        s.file = Some(File::open("/dev/null").expect("open"));
        let all = fill(&mut s, 1000);
        assert_eq!(s.spilled_bytes(), 0, "nothing counts as spilled");
        assert!(s.memory_bytes() >= all.len());
        assert_eq!(read_all(&s), all);
    }

    /// Append `n` small chunks (`0,1,2,…`) one by one; what was appended.
    fn fill(s: &mut Spool, n: u32) -> Vec<u8> {
        let mut all = Vec::new();
        for i in 0..n {
            let chunk = format!("{i},");
            all.extend_from_slice(chunk.as_bytes());
            s.append(chunk.as_bytes());
        }
        all
    }

    fn read_all(s: &Spool) -> Vec<u8> {
        let mut cursor = 0;
        let mut back = Vec::new();
        while cursor < s.len() {
            let sl = s.read(cursor, 37).expect("read");
            back.extend_from_slice(&sl.bytes);
            cursor = sl.end;
        }
        back
    }

    /// After a refused spill the next attempt waits for another limit's worth of output,
    /// not the next read; once the disk takes writes again, memory falls back under bound.
    #[test]
    fn a_refusing_disk_is_tried_again_after_another_limit_of_output() {
        let mut s = Spool::new(&dir(), 100);
        s.file = Some(File::open("/dev/null").expect("open"));
        let mut all = Vec::new();
        let mut put = |s: &mut Spool, n: usize| {
            let chunk = vec![b'a' + (all.len() % 26) as u8; n];
            all.extend_from_slice(&chunk);
            s.append(&chunk);
        };
        put(&mut s, 150); // refused at 150 bytes: next try past 250
        assert_eq!(s.next_spill_at, 250);
        s.file = Some(open_unlinked(&dir()).expect("a disk that takes writes"));
        put(&mut s, 60);
        put(&mut s, 40);
        assert_eq!(
            s.spilled_bytes(),
            0,
            "not tried again before another limit of output"
        );
        put(&mut s, 1);
        assert_eq!(
            s.spilled_bytes(),
            251 - 50,
            "tried again, and all but half a limit moved"
        );
        assert_eq!(s.next_spill_at, 100);
        for _ in 0..20 {
            put(&mut s, 7);
        }
        assert!(s.mem.len() <= 100, "back under bound: {}", s.mem.len());
        assert_eq!(read_all(&s), all);
    }

    /// A write the disk cut short leaves the file's cursor past what counts as spilled (here:
    /// bytes written through the handle first); the next spill lands at its own offset anyway.
    #[test]
    fn a_write_cut_short_is_retried_where_its_bytes_belong() {
        let mut s = Spool::new(&dir(), 100);
        let mut f = open_unlinked(&dir()).expect("file");
        std::io::Write::write_all(&mut f, b"half a spill").expect("write");
        s.file = Some(f);
        let all = fill(&mut s, 300);
        assert!(s.spilled_bytes() > 0);
        assert_eq!(read_all(&s), all);
    }

    #[test]
    fn tail_reads_start_on_a_character() {
        let mut s = Spool::new(&dir(), 1 << 20);
        s.append("aé€😀".as_bytes());
        let t = s.read_tail(0, 5).expect("tail");
        assert_eq!(std::str::from_utf8(&t.bytes).ok(), Some("😀"));
        assert_eq!(t.omitted_before, t.start);
        assert_eq!(t.end, s.len());
    }

    #[test]
    fn incomplete_tails() {
        assert_eq!(incomplete_utf8_tail("a€".as_bytes()), 0);
        let euro = "€".as_bytes();
        assert_eq!(incomplete_utf8_tail(&euro[..2]), 2);
        assert_eq!(incomplete_utf8_tail(&euro[..1]), 1);
        assert_eq!(incomplete_utf8_tail(&[0xff, 0xfe]), 0);
        assert_eq!(incomplete_utf8_tail(b""), 0);
    }

    #[test]
    fn text_reads_move_on_by_whole_characters_whatever_the_limit() {
        let text = "aé€😀b";
        let mut s = Spool::new(&dir(), 1 << 20);
        s.append(text.as_bytes());
        for max in 1..=6 {
            let mut cursor = 0;
            let mut back = String::new();
            while cursor < s.len() {
                let sl = s.read_text(cursor, max, false, true).expect("read");
                let piece = std::str::from_utf8(&sl.bytes).expect("whole characters");
                assert!(!piece.is_empty(), "max {max} at {cursor}: no progress");
                // Over the limit only when one character does not fit in it.
                assert!(
                    sl.bytes.len() <= max || piece.chars().count() == 1,
                    "max {max}: {piece:?}"
                );
                back.push_str(piece);
                cursor = sl.end;
            }
            assert_eq!(back, text, "max {max}");
        }
    }

    #[test]
    fn a_character_still_being_written_waits_unless_the_stream_is_over() {
        let euro = "€".as_bytes();
        let mut s = Spool::new(&dir(), 1 << 20);
        s.append(b"x");
        s.append(&euro[..2]);
        let sl = s.read_text(0, 100, false, false).expect("read");
        assert_eq!(sl.bytes, b"x");
        assert_eq!(sl.end, 1);
        let sl = s.read_text(1, 1, false, false).expect("read");
        assert!(sl.bytes.is_empty());
        assert_eq!(sl.end, 1, "the cursor stays before the half character");
        let sl = s.read_text(1, 100, false, true).expect("read");
        assert_eq!(sl.bytes, &euro[..2], "a finished stream gives what it has");
        s.append(&euro[2..]);
        let sl = s.read_text(1, 1, false, false).expect("read");
        assert_eq!(sl.bytes, euro);
        assert_eq!(sl.omitted_after, 0);
    }
}
