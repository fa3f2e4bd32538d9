//! One way to take a lock: a panic while a lock was held (a bug, already logged) must not
//! take every later request down with it, so a poisoned lock is used as it is. The state
//! behind our locks is kept consistent step by step, never half-written across a panic point.

use std::sync::{Mutex, MutexGuard};

/// Lock `m`, poisoned or not.
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
