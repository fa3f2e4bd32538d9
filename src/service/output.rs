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
    };
    StreamOut {
        text,
        info,
        next_cursor: slice.end,
        truncated,
    }
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
