//! `file://` URIs for local paths, as AHP carries a terminal's working directory. Encoding and
//! decoding go through `percent-encoding`: a path is any bytes a user's shell reports, and a URI
//! is whatever a client sends back, so neither direction may fail.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// Everything but the unreserved characters and `/` is escaped (RFC 3986 path segments).
const PATH_ESCAPES: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A `file://` URI for a local path.
pub fn file_uri(path: &str) -> String {
    format!("file://{}", utf8_percent_encode(path, PATH_ESCAPES))
}

/// The local path of a `file://` URI (percent-decoded; a `%` not followed by two hex digits is
/// kept as it is, invalid UTF-8 replaced); other strings are taken as paths.
pub fn file_uri_path(uri: &str) -> String {
    let raw = uri.strip_prefix("file://").unwrap_or(uri);
    percent_decode_str(raw).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_escape() {
        assert_eq!(file_uri("/tmp/a b#c"), "file:///tmp/a%20b%23c");
        assert_eq!(file_uri_path(&file_uri("/tmp/a b#c/é")), "/tmp/a b#c/é");
        assert_eq!(file_uri_path("/plain/path"), "/plain/path");
        // A `%` before a multi-byte character, a lone `%`, a truncated escape: kept, no panic.
        assert_eq!(file_uri_path("file:///%aé"), "/%aé");
        assert_eq!(file_uri_path("file:///x%"), "/x%");
        assert_eq!(file_uri_path("file:///x%4"), "/x%4");
        assert_eq!(file_uri_path("file:///%ff"), "/\u{fffd}");
    }
}
