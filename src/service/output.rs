//! Turning stream slices into response fields: text or base64, cut at UTF-8 boundaries,
//! with cursors and truncation stated plainly.

use base64::Engine;

use crate::contract::Encoding;
use crate::contract::result::StreamInfo;
use crate::spool::Slice;

/// One stream's part of an answer.
pub struct StreamOut {
    pub text: String,
    pub info: StreamInfo,
    pub next_cursor: u64,
    pub truncated: bool,
}

/// Render `slice`, read for text with [`crate::spool::Spool::read_text`] (whole characters)
/// or as exact bytes for base64.
pub fn render(slice: Slice, encoding: Encoding, total: u64) -> StreamOut {
    let (text, lossy) = match encoding {
        Encoding::Utf8 => crate::spool::into_text(slice.bytes),
        Encoding::Base64 => (
            base64::engine::general_purpose::STANDARD.encode(&slice.bytes),
            false,
        ),
    };
    let truncated = slice.omitted_after > 0 || slice.omitted_before > 0;
    let info = StreamInfo {
        start: slice.start,
        end: slice.end,
        total,
        truncated,
        bytes_omitted: slice.omitted_after + slice.omitted_before,
        lossy,
        left_out: None,
        dropped: None,
    };
    StreamOut {
        text,
        info,
        next_cursor: slice.end,
        truncated,
    }
}

/// Render a default answer's excerpt of one stream: its head, the line that says what was
/// left out and how to read it, its tail.
pub fn render_excerpt(
    e: crate::spool::excerpt::Excerpt,
    total: u64,
    cursor_key: &str,
) -> StreamOut {
    let gap = e.gap();
    let end = e.end();
    let start = e.head.start;
    let omitted_after = e
        .tail
        .as_ref()
        .map_or(e.head.omitted_after, |t| t.omitted_after);
    let (mut text, mut lossy) = crate::spool::into_text(e.head.bytes);
    if let Some(tail) = e.tail {
        if let Some((from, to)) = gap {
            text.push_str(&left_out_line(cursor_key, from, to));
        }
        let (t, l) = crate::spool::into_text(tail.bytes);
        text.push_str(&t);
        lossy |= l;
    }
    let info = StreamInfo {
        start,
        end,
        total,
        truncated: omitted_after > 0,
        bytes_omitted: omitted_after,
        lossy,
        left_out: gap.map(|(from, to)| crate::contract::result::LeftOut { from, to }),
        dropped: None,
    };
    StreamOut {
        text,
        truncated: omitted_after > 0,
        info,
        next_cursor: end,
    }
}

/// The line put where an excerpt left bytes out: how many, and the request that reads them
/// (`cursor_key`: `cursor` for a terminal, `stdout_cursor`/`stderr_cursor` for a session).
pub fn left_out_line(cursor_key: &str, from: u64, to: u64) -> String {
    format!(
        "\n[… {} bytes left out here: read_output with output.{cursor_key}={from} reads them \
         (the answer's next step) …]\n",
        to - from
    )
}

/// Whether a request reads the way a default answer does: no cursor, no size, no tail, as
/// text. Such an answer is an excerpt within the answer budget; one that names where or how
/// much to read gets exactly those bytes.
pub fn default_read(o: &crate::contract::request::OutputOptions) -> bool {
    o.cursor.is_none()
        && o.stdout_cursor.is_none()
        && o.stderr_cursor.is_none()
        && o.max_bytes.is_none()
        && o.tail != Some(true)
        && o.encoding != Some(Encoding::Base64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(bytes: &[u8], omitted_after: u64) -> Slice {
        Slice {
            bytes: bytes.to_vec(),
            start: 0,
            end: bytes.len() as u64,
            omitted_after,
            omitted_before: 0,
        }
    }

    #[test]
    fn invalid_bytes_are_lossy_or_exact() {
        let out = render(slice(&[0x66, 0xff, 0x6f], 0), Encoding::Utf8, 3);
        assert_eq!(out.text, "f\u{fffd}o");
        assert!(out.info.lossy);
        let out = render(slice(&[0x66, 0xff, 0x6f], 0), Encoding::Base64, 3);
        assert_eq!(out.text, "Zv9v");
    }
}
