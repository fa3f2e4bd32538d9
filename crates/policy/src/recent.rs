//! The values a thread computed last, handed out again.
//!
//! One judgement asks the same question of the same text in several rules — the line's
//! parse, what a command runs through its wrappers — and the answers are pure functions of
//! that text. A few are kept per thread, newest first; the value is computed outside any
//! borrow, so computing it may ask the same cache again.

use std::cell::RefCell;
use std::rc::Rc;

/// How many values are kept.
const KEPT: usize = 8;

pub(crate) struct Recent<K, V> {
    kept: RefCell<Vec<(K, Rc<V>)>>,
}

impl<K, V> Recent<K, V> {
    pub(crate) const fn new() -> Self {
        Recent {
            kept: RefCell::new(Vec::new()),
        }
    }

    /// The value kept for the key `is` recognises, or `compute`'s, kept under `key()`.
    pub(crate) fn get_or_compute(
        &self,
        is: impl Fn(&K) -> bool,
        key: impl FnOnce() -> K,
        compute: impl FnOnce() -> V,
    ) -> Rc<V> {
        if let Some(v) = self
            .kept
            .borrow()
            .iter()
            .find(|(k, _)| is(k))
            .map(|(_, v)| v)
        {
            return Rc::clone(v);
        }
        let value = Rc::new(compute());
        let mut kept = self.kept.borrow_mut();
        kept.truncate(KEPT - 1);
        kept.insert(0, (key(), Rc::clone(&value)));
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_computed_once_while_kept() {
        let recent: Recent<String, usize> = Recent::new();
        let computed = std::cell::Cell::new(0);
        let get = |k: &str| {
            *recent.get_or_compute(
                |kept| kept == k,
                || k.to_string(),
                || {
                    computed.set(computed.get() + 1);
                    k.len()
                },
            )
        };
        assert_eq!(get("abc"), 3);
        assert_eq!(get("abc"), 3);
        assert_eq!(computed.get(), 1);
        for i in 0..KEPT {
            get(&format!("k{i}"));
        }
        assert_eq!(get("abc"), 3, "pushed out, computed again");
        assert_eq!(computed.get(), 2 + KEPT);
    }
}
