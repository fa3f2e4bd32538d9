//! A page of output escaped into JSON once, not twice.
//!
//! An answer carrying output carries it in both of its forms: the text content (what most
//! clients show the model) and `structuredContent` (what Claude Code and Codex show it),
//! each standing alone. For a page of `read_output` that is the same megabyte twice, and
//! escaping newline-dense text into JSON (an escape every few bytes) was the largest part of
//! the server's CPU for a page. Here, before an answer is serialised, each long string of its
//! `structuredContent` is taken out and put back as a marker, and so is the same text where
//! it stands inside a text content; the rest is serialised as usual, and each marker is then
//! replaced by its string, escaped once. JSON escaping is character by character, so the
//! escape of a text is the escapes of its pieces put together: the bytes are the ones
//! `serde_json` writes for the whole answer.
//!
//! A marker is a per-process random word that the escaping leaves as it is; no answer ever
//! shows it, so no output can hold one but by chance (2^-128).

use std::io;
use std::sync::OnceLock;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, JsonRpcMessage, JsonRpcResponse, ServerResult};
use rmcp::service::TxJsonRpcMessage;
use serde_json::Value;

/// Strings shorter than this are escaped where they stand: sharing pays for itself on pages.
const SHARED_MIN: usize = 64 * 1024;

/// The marker's fixed part: `<prefix><index>~`.
fn prefix() -> &'static str {
    static PREFIX: OnceLock<String> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let word = crate::ids::random_hex(16).unwrap_or_else(|| crate::ids::new_id("m"));
        format!("itmcp-shared-{word}-")
    })
}

fn marker(k: usize) -> String {
    format!("{}{k}~", prefix())
}

/// Serialise `item` as one JSON line into `buf` (without the newline), each long string of a
/// tool's answer escaped once.
pub fn write(buf: &mut Vec<u8>, mut item: TxJsonRpcMessage<RoleServer>) -> io::Result<()> {
    let taken = match &mut item {
        JsonRpcMessage::Response(JsonRpcResponse {
            result: ServerResult::CallToolResult(r),
            ..
        }) => take_long(r),
        _ => Vec::new(),
    };
    if taken.is_empty() {
        return Ok(serde_json::to_writer(&mut *buf, &item)?);
    }
    // The answer without its long strings is small; `buf` (kept from answer to answer, so
    // no fresh pages) gets it with each marker replaced.
    let skeleton = serde_json::to_vec(&item)?;
    splice(buf, &skeleton, &taken)
}

/// Take the long strings out of `r`'s structured content, and out of its text contents where
/// they stand there, leaving markers.
fn take_long(r: &mut CallToolResult) -> Vec<String> {
    let mut taken = Vec::new();
    if let Some(v) = r.structured_content.as_mut() {
        take_from(v, &mut taken);
    }
    if taken.is_empty() {
        return taken;
    }
    for block in &mut r.content {
        let ContentBlock::Text(t) = block else {
            continue;
        };
        for (k, s) in taken.iter().enumerate() {
            if t.text.len() < s.len() {
                continue;
            }
            if let Some(at) = find_page(&t.text, s) {
                t.text.replace_range(at..at + s.len(), &marker(k));
            }
        }
    }
    taken
}

/// Where `page` stands in `text`, if it does: its first bytes found (a short search), then
/// the whole compared there. A search for a megabyte-long needle prepares for a minute's
/// worth of milliseconds; this costs one pass of `memchr` and a `memcmp`. A text where the
/// start is found again and again without the rest (output built to defeat it) is given up
/// after a few tries: the page is then escaped where it stands, as it was before.
fn find_page(text: &str, page: &str) -> Option<usize> {
    const HEAD: usize = 256;
    const TRIES: usize = 8;
    let (text, page) = (text.as_bytes(), page.as_bytes());
    memchr::memmem::find_iter(text, &page[..HEAD.min(page.len())])
        .take(TRIES)
        .find(|&at| text.get(at..at + page.len()) == Some(page))
}

fn take_from(v: &mut Value, taken: &mut Vec<String>) {
    match v {
        Value::String(s) if s.len() >= SHARED_MIN => {
            let k = taken.len();
            taken.push(std::mem::replace(s, marker(k)));
        }
        Value::Array(items) => items.iter_mut().for_each(|i| take_from(i, taken)),
        Value::Object(map) => map.values_mut().for_each(|i| take_from(i, taken)),
        _ => {}
    }
}

/// Write `skeleton` into `buf` with every marker replaced by its string, escaped (without
/// quotes); a string met again is copied from where it was first escaped.
fn splice(buf: &mut Vec<u8>, skeleton: &[u8], taken: &[String]) -> io::Result<()> {
    let mut first: Vec<Option<std::ops::Range<usize>>> = vec![None; taken.len()];
    let prefix = prefix().as_bytes();
    let mut from = 0;
    while let Some(found) = memchr::memmem::find(&skeleton[from..], prefix) {
        let at = from + found;
        let digits = &skeleton[at + prefix.len()..];
        let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        let k = std::str::from_utf8(&digits[..n])
            .ok()
            .and_then(|d| d.parse::<usize>().ok())
            .filter(|k| *k < taken.len() && digits.get(n) == Some(&b'~'));
        buf.extend_from_slice(&skeleton[from..at]);
        let Some(k) = k else {
            // Not one of ours (cannot happen but by chance): left as it is.
            buf.extend_from_slice(prefix);
            from = at + prefix.len();
            continue;
        };
        match first[k].clone() {
            Some(range) => buf.extend_from_within(range),
            None => {
                let start = buf.len();
                serde::Serialize::serialize(
                    taken[k].as_str(),
                    &mut serde_json::Serializer::with_formatter(&mut *buf, Unquoted),
                )?;
                first[k] = Some(start..buf.len());
            }
        }
        from = at + prefix.len() + n + 1;
    }
    buf.extend_from_slice(&skeleton[from..]);
    Ok(())
}

/// `serde_json`'s compact output, strings without their quotes: a string's escaped contents.
struct Unquoted;

impl serde_json::ser::Formatter for Unquoted {
    fn begin_string<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn end_string<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::RequestId;

    fn answer(text: String, structured: Value) -> TxJsonRpcMessage<RoleServer> {
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = Some(structured);
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: Default::default(),
            id: RequestId::Number(7),
            result: ServerResult::CallToolResult(r),
        })
    }

    fn page() -> String {
        let mut s = String::from("a \"quoted\" start\\ with a tab\t and \u{1} and é\n");
        let mut n = 0u64;
        while s.len() < 3 * SHARED_MIN {
            s.push_str(&format!("{n}\n"));
            n += 1;
        }
        s
    }

    #[test]
    fn the_bytes_are_serde_jsons_for_the_whole_answer() {
        let out = page();
        let other = "x".repeat(SHARED_MIN + 5);
        for item in [
            answer(
                format!("header line\n{out}\nfooter: read on with cursor 9"),
                serde_json::json!({"result": {"stdout": out, "stderr": "small"}, "n": [1, other]}),
            ),
            // The text not inside the text content: taken from the structured form only.
            answer("a short summary".into(), serde_json::json!({"stdout": out})),
            // Nothing long: as it is.
            answer("short".into(), serde_json::json!({"stdout": "short"})),
        ] {
            let expected = serde_json::to_vec(&item).expect("serialised");
            let mut buf = Vec::new();
            write(&mut buf, item).expect("written");
            assert_eq!(
                String::from_utf8_lossy(&buf),
                String::from_utf8_lossy(&expected)
            );
        }
    }

    #[test]
    fn repetitive_and_hostile_texts_give_serde_jsons_bytes() {
        let yes = "y\n".repeat(2 * SHARED_MIN);
        // The page's start found again and again in the text without the rest: given up
        // after a few tries, escaped where it stands.
        let near = format!("{}z\n", &yes[..300]).repeat(50);
        for (text, page) in [
            (format!("header\n{yes}"), yes.clone()),
            (format!("{near}{yes}"), yes.clone()),
        ] {
            let item = answer(text.clone(), serde_json::json!({"stdout": page}));
            let expected = serde_json::to_vec(&item).expect("serialised");
            let mut buf = Vec::new();
            write(&mut buf, item).expect("written");
            assert!(buf == expected, "not serde_json's bytes");
        }
        assert_eq!(find_page(&format!("header\n{yes}"), &yes), Some(7));
        assert_eq!(find_page(&format!("{near}{yes}"), &yes), None);
    }

    #[test]
    fn a_marker_like_text_that_is_not_ours_is_left_alone() {
        let skeleton = format!("[\"{}x\",\"{}99~\"]", prefix(), prefix()).into_bytes();
        let mut buf = Vec::new();
        splice(&mut buf, &skeleton, &["y".repeat(3)]).expect("spliced");
        assert_eq!(buf, skeleton);
    }
}
