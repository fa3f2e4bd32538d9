//! What a scanner of the pty's output kept from one read (an unfinished sequence), joined to
//! the next read, so a sequence split by a read boundary is seen whole.

use std::borrow::Cow;

/// `bytes` with what `carry` held in front of it (`carry` is left empty).
pub(super) fn joined<'a>(carry: &mut Vec<u8>, bytes: &'a [u8]) -> Cow<'a, [u8]> {
    if carry.is_empty() {
        return Cow::Borrowed(bytes);
    }
    carry.extend_from_slice(bytes);
    Cow::Owned(std::mem::take(carry))
}
