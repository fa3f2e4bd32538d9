//! `wait_for` patterns, compiled once and kept.
//!
//! Why: an agent driving a REPL or a shell sends the same prompt pattern with every input,
//! and compiling it (the regex engine builds its automata up front) was a fifth of the
//! server's CPU per round trip — twice over, since the request's validation compiles it
//! too. Only patterns that compile small are kept, and only a few of them, so a hostile
//! agent sending ever-new or huge patterns makes the server keep at most
//! [`KEPT`] × ([`KEPT_SIZE`] + [`KEPT_DFA_SIZE`] per thread matching at once) of them;
//! others compile as before, each time, within the engine's default limits.
//!
//! A kept pattern is handed out shared, not cloned: a clone of a `Regex` gets a pool of
//! match caches of its own, so its first match built the engine's caches afresh on every
//! round trip.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use regex::{Regex, RegexBuilder};

use crate::locks::lock;

/// Patterns kept; when full, the kept ones are dropped and keeping starts over.
const KEPT: usize = 32;
/// Longest pattern text kept.
const KEPT_PATTERN_BYTES: usize = 1024;
/// Compiled size a kept pattern may reach.
const KEPT_SIZE: usize = 256 * 1024;
/// Cache of the lazy automaton a kept pattern may grow while matching.
const KEPT_DFA_SIZE: usize = 256 * 1024;

fn kept() -> &'static Mutex<HashMap<String, Arc<Regex>>> {
    static KEPT_PATTERNS: OnceLock<Mutex<HashMap<String, Arc<Regex>>>> = OnceLock::new();
    KEPT_PATTERNS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// `pattern` compiled (the kept one, with its match caches, when it was compiled before).
pub fn compile(pattern: &str) -> Result<Arc<Regex>, regex::Error> {
    if pattern.len() > KEPT_PATTERN_BYTES {
        return Regex::new(pattern).map(Arc::new);
    }
    if let Some(re) = lock(kept()).get(pattern) {
        return Ok(re.clone());
    }
    let small = RegexBuilder::new(pattern)
        .size_limit(KEPT_SIZE)
        .dfa_size_limit(KEPT_DFA_SIZE)
        .build();
    match small {
        Ok(re) => {
            let re = Arc::new(re);
            let mut map = lock(kept());
            if map.len() >= KEPT {
                map.clear();
            }
            map.insert(pattern.to_string(), re.clone());
            Ok(re)
        }
        // Too big to keep, or invalid: the engine's own limits and error decide.
        Err(_) => Regex::new(pattern).map(Arc::new),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_patterns_match_as_compiled_ones_and_errors_stay_errors() {
        for _ in 0..2 {
            let re = compile(r">>> $").unwrap();
            assert!(re.is_match("2\r\n>>> "));
            assert!(!re.is_match(">>> x"));
        }
        // The kept one itself, not a clone with caches of its own.
        assert!(Arc::ptr_eq(
            &compile(r">>> $").unwrap(),
            &compile(r">>> $").unwrap()
        ));
        assert!(compile("(unclosed").is_err());
        // Too big to keep, still compiled within the engine's default limits.
        let big = r"\w{40}";
        assert!(compile(big).unwrap().is_match(&"a".repeat(40)));
        assert!(!lock(kept()).contains_key(big));
        // Ever-new patterns never keep more than the bound.
        for i in 0..(3 * KEPT) {
            compile(&format!("prompt-{i}$")).unwrap();
            assert!(lock(kept()).len() <= KEPT);
        }
    }
}
