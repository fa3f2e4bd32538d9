//! How much output the server keeps: at most [`max_per_stream`] bytes of one stream and
//! [`max_total`] on disk in all. Past either, the middle of a stream is dropped — its head and
//! its newest bytes are kept — and the range dropped is remembered, so that every answer
//! can say how much went and where. A disk that refuses (full, quota) is the third cause:
//! memory then holds at most [`memory_ceiling`] and the oldest of it goes.
//!
//! Dropped file ranges are punched out (`fallocate`), so the space comes back at once; the
//! whole file goes when its stream is dropped (it was unlinked when made).

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// Default most bytes kept of one stream (a command's output, a terminal's stream).
pub const DEFAULT_MAX_PER_STREAM: u64 = 256 * 1024 * 1024;
/// Default most bytes on disk for all streams of the server together.
pub const DEFAULT_MAX_TOTAL: u64 = 1024 * 1024 * 1024;

static PER_STREAM: AtomicU64 = AtomicU64::new(DEFAULT_MAX_PER_STREAM);
static TOTAL: AtomicU64 = AtomicU64::new(DEFAULT_MAX_TOTAL);
/// Bytes on disk now, every stream of the process together.
static HELD: AtomicU64 = AtomicU64::new(0);

/// The operator's limits (`PM_TERM_SPOOL_MAX_STREAM`, `PM_TERM_SPOOL_MAX_TOTAL`), set once
/// at start for every stream of the process.
pub fn set_limits(per_stream: u64, total: u64) {
    PER_STREAM.store(per_stream.max(2), Ordering::Relaxed);
    TOTAL.store(total.max(2), Ordering::Relaxed);
}

pub fn max_per_stream() -> u64 {
    PER_STREAM.load(Ordering::Relaxed)
}

pub fn max_total() -> u64 {
    TOTAL.load(Ordering::Relaxed)
}

/// Bytes all streams hold on disk now.
pub fn held_total() -> u64 {
    HELD.load(Ordering::Relaxed)
}

pub(super) fn hold(n: u64) {
    HELD.fetch_add(n, Ordering::Relaxed);
}

pub(super) fn release(n: u64) {
    let _ = HELD.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |h| {
        Some(h.saturating_sub(n))
    });
}

/// All streams together hold more than the total limit.
pub(super) fn over_total() -> bool {
    held_total() > max_total()
}

/// Most bytes a stream keeps in memory while its disk refuses.
pub(super) fn memory_ceiling(memory_limit: usize) -> usize {
    memory_limit.saturating_mul(4).max(16 * 1024 * 1024)
}

/// Why bytes of a stream were dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    StreamLimit,
    TotalLimit,
    DiskRefused,
    /// A stream that had passed a limit ended: it keeps [`ENDED_KEEP`] of head and of tail.
    Ended,
}

/// Bytes of head, and of tail, that a stream which passed a limit keeps once it has ended:
/// a flood that is over gives its space back to the streams still running.
pub const ENDED_KEEP: u64 = 1024 * 1024;

impl Cause {
    /// The limit's name, as answers give it.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::StreamLimit => "spool_per_stream",
            Cause::TotalLimit => "spool_total",
            Cause::DiskRefused => "disk_space",
            Cause::Ended => "spool_ended",
        }
    }

    pub fn named(s: &str) -> Option<Cause> {
        [
            Cause::StreamLimit,
            Cause::TotalLimit,
            Cause::DiskRefused,
            Cause::Ended,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }

    /// Why, in words a model acts on.
    pub fn says(self) -> String {
        match self {
            Cause::StreamLimit => format!(
                "the output passed the server's limit of {} MiB per stream (PM_TERM_SPOOL_MAX_STREAM): its head and newest bytes are kept",
                max_per_stream() >> 20
            ),
            Cause::TotalLimit => format!(
                "the server's output on disk passed its limit of {} MiB (PM_TERM_SPOOL_MAX_TOTAL): terminate what you no longer need",
                max_total() >> 20
            ),
            Cause::DiskRefused => {
                "the spool directory's disk refused the output (full, or a quota): only the newest bytes are kept in memory".to_string()
            }
            Cause::Ended => format!(
                "the output passed a spool limit, and once it ended only its first and last {} MiB were kept",
                ENDED_KEEP >> 20
            ),
        }
    }
}

/// The ranges of a stream that were dropped, oldest first, and the latest cause.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Dropped {
    ranges: Vec<(u64, u64)>,
    cause: Option<Cause>,
}

/// What a reader is told about dropped bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedSummary {
    /// From the first dropped byte to the end of the last dropped range.
    pub from: u64,
    pub to: u64,
    /// Bytes dropped in all (less than `to - from` when kept bytes lie between).
    pub bytes: u64,
    pub cause: Cause,
}

impl Dropped {
    /// Note `[from, to)` as dropped, joined to the ranges it touches.
    pub fn add(&mut self, from: u64, to: u64, cause: Cause) {
        if to <= from {
            return;
        }
        self.cause = Some(cause);
        self.ranges.push((from, to));
        self.ranges.sort_unstable();
        let mut joined: Vec<(u64, u64)> = Vec::with_capacity(self.ranges.len());
        for (a, b) in self.ranges.drain(..) {
            match joined.last_mut() {
                Some(last) if last.1 >= a => last.1 = last.1.max(b),
                _ => joined.push((a, b)),
            }
        }
        self.ranges = joined;
    }

    /// The end of the dropped range holding `at`, if one does.
    pub fn containing(&self, at: u64) -> Option<u64> {
        self.ranges
            .iter()
            .find(|(a, b)| *a <= at && at < *b)
            .map(|r| r.1)
    }

    /// The start of the first dropped range at or after `at`.
    pub fn next_from(&self, at: u64) -> Option<u64> {
        self.ranges.iter().map(|r| r.0).find(|a| *a >= at)
    }

    pub fn summary(&self) -> Option<DroppedSummary> {
        let (first, last) = (self.ranges.first()?, self.ranges.last()?);
        Some(DroppedSummary {
            from: first.0,
            to: last.1,
            bytes: self.ranges.iter().map(|(a, b)| b - a).sum(),
            cause: self.cause?,
        })
    }
}

/// Give `[from, to)` of `file` back to the disk, its size unchanged (reads there give zeros,
/// and no reader is sent there).
#[cfg(target_os = "linux")]
pub(super) fn punch(file: &File, from: u64, to: u64) -> io::Result<()> {
    use nix::fcntl::{FallocateFlags, fallocate};
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(from), i64::try_from(to - from)) else {
        return Err(io::Error::other("offset out of range"));
    };
    fallocate(
        file.as_raw_fd(),
        FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE,
        offset,
        len,
    )
    .map_err(io::Error::from)
}

/// Elsewhere the space comes back when the stream ends.
#[cfg(not(target_os = "linux"))]
pub(super) fn punch(_file: &File, _from: u64, _to: u64) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn touching_ranges_join_and_readers_are_sent_past_them() {
        let mut d = Dropped::default();
        d.add(10, 20, Cause::StreamLimit);
        d.add(20, 30, Cause::StreamLimit);
        d.add(50, 60, Cause::DiskRefused);
        assert_eq!(d.containing(15), Some(30));
        assert_eq!(d.containing(30), None);
        assert_eq!(d.next_from(31), Some(50));
        assert_eq!(d.next_from(61), None);
        let s = d.summary().unwrap();
        assert_eq!(
            (s.from, s.to, s.bytes, s.cause),
            (10, 60, 30, Cause::DiskRefused)
        );
    }

    fn lines(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("line {i:07}\n").into_bytes())
            .collect()
    }

    /// Every byte the stream keeps, read by cursor as a client does, and what was skipped.
    fn read_by_cursor(s: &super::super::Spool) -> (Vec<u8>, u64) {
        let (mut at, mut back, mut skipped) = (0, Vec::new(), 0);
        while at < s.len() {
            let sl = s.read(at, 100_000).expect("read");
            skipped += sl.omitted_before;
            back.extend_from_slice(&sl.bytes);
            at = sl.end;
        }
        (back, skipped)
    }

    #[test]
    fn past_the_stream_limit_the_middle_goes_and_its_space_comes_back() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("itmcp-cap-test-{}", std::process::id()));
        let mut s = super::super::Spool::new(&dir, 64 * 1024);
        s.per_stream = 1024 * 1024;
        let all = lines(400_000); // 5.2 MB
        for c in all.chunks(4096) {
            s.append(c);
        }
        assert_eq!(s.len(), all.len() as u64);
        let d = s.dropped().expect("dropped");
        assert_eq!(d.cause, Cause::StreamLimit);
        assert_eq!(d.from, 512 * 1024, "the head is kept");
        let (kept, skipped) = read_by_cursor(&s);
        assert_eq!(skipped, d.bytes);
        assert_eq!(kept.len() as u64 + d.bytes, all.len() as u64);
        assert!(
            kept.len() as u64 <= 1024 * 1024 + 64 * 1024,
            "{}",
            kept.len()
        );
        assert_eq!(&kept[..512 * 1024], &all[..512 * 1024]);
        let tail = &kept[512 * 1024..];
        assert_eq!(
            tail,
            &all[all.len() - tail.len()..],
            "the newest bytes are kept"
        );
        // The middle's space is back: the file holds about the limit, not the stream.
        let on_disk = s.file.as_ref().unwrap().metadata().unwrap().blocks() * 512;
        assert!(on_disk <= 2 * 1024 * 1024, "{on_disk} bytes on disk");
        // A read from inside the dropped range starts past it and says how far that was.
        let r = s.read(d.from + 10, 100).unwrap();
        assert_eq!((r.start, r.omitted_before), (d.to, d.to - d.from - 10));
    }

    #[test]
    fn a_flood_that_ended_keeps_a_little_of_its_head_and_tail() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("itmcp-cap-end-{}", std::process::id()));
        let mut s = super::super::Spool::new(&dir, 64 * 1024);
        s.per_stream = 8 * 1024 * 1024;
        let all = lines(1_600_000); // 20.8 MB
        for c in all.chunks(65536) {
            s.append(c);
        }
        s.settle();
        let (kept, skipped) = read_by_cursor(&s);
        assert_eq!(kept.len() as u64 + skipped, all.len() as u64);
        let keep = ENDED_KEEP as usize;
        assert_eq!(kept.len(), 2 * keep, "the first and last MiB");
        assert_eq!(&kept[..keep], &all[..keep]);
        assert_eq!(&kept[keep..], &all[all.len() - keep..]);
        assert_eq!(s.dropped().unwrap().cause, Cause::Ended);
        let on_disk = s.file.as_ref().unwrap().metadata().unwrap().blocks() * 512;
        assert!(
            on_disk <= 2 * ENDED_KEEP + 256 * 1024,
            "{on_disk} bytes on disk"
        );
    }

    #[test]
    fn a_refusing_disk_keeps_memory_bounded_and_the_newest_bytes() {
        let blocker = std::env::temp_dir().join(format!("itmcp-cap-file-{}", std::process::id()));
        std::fs::write(&blocker, b"a file, not a directory").unwrap();
        let mut s = super::super::Spool::new(&blocker.join("spool"), 64 * 1024);
        let all = lines(3_000_000); // 39 MB
        for c in all.chunks(65536) {
            s.append(c);
        }
        assert!(
            s.memory_bytes() <= 2 * memory_ceiling(64 * 1024),
            "{}",
            s.memory_bytes()
        );
        let d = s.dropped().expect("dropped");
        assert_eq!((d.from, d.cause), (0, Cause::DiskRefused));
        let (kept, _) = read_by_cursor(&s);
        assert_eq!(&kept[..], &all[all.len() - kept.len()..]);
        assert!(Dropped::default().summary().is_none());
        let _ = std::fs::remove_file(&blocker);
    }
}
