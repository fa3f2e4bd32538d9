//! Wall-clock times as the protocols carry them: milliseconds since the Unix epoch. A clock
//! set before 1970 reads as 0 rather than failing a request.

use std::time::{SystemTime, UNIX_EPOCH};

/// `t` in milliseconds since the epoch.
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Now, in milliseconds since the epoch.
pub fn now_ms() -> u64 {
    unix_ms(SystemTime::now())
}
