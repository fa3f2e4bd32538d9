//! Whether a shell pattern in a command's words matches what it would expand to: a file of
//! the directory it expands in, or a program on the search path.
//!
//! Why a budget: every pattern is looked up in its directory, and a line can hold many (each
//! `ESC [ A` of typed input is a `[…]` class). 250 of them in 1 KB, against a directory of
//! 16,000 entries, took 130 ms to judge — on the worker that answers every other caller, since
//! a line that short is judged in place. So one judgement reads at most
//! [`ENTRIES_PER_JUDGEMENT`] directory entries in all; past that a pattern counts as
//! matching (the line is warned, never allowed), and each entry is matched without an
//! allocation.

use std::cell::Cell;

/// Directory entries one directory is read for at most; a larger one counts as matching.
const MAX_ENTRIES: usize = 10_000;

/// The longest name a file can have (Linux's `NAME_MAX`, in bytes).
const MAX_NAME: usize = 255;

/// Directory entries one judgement reads at most, over all its patterns and readings.
const ENTRIES_PER_JUDGEMENT: usize = 10_000;

thread_local! {
    /// Entries the judgement under way may still read; `None` outside a judgement.
    static ENTRIES_LEFT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The entry budget of one judgement, from its start to its end: held by the outermost
/// judging call (`evaluate_input` judges each reading with `evaluate`, which finds a budget
/// already started and shares it).
pub struct Budget {
    outermost: bool,
}

impl Budget {
    pub fn start() -> Budget {
        let outermost = ENTRIES_LEFT.with(|left| {
            let fresh = left.get().is_none();
            if fresh {
                left.set(Some(ENTRIES_PER_JUDGEMENT));
            }
            fresh
        });
        Budget { outermost }
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        if self.outermost {
            ENTRIES_LEFT.with(|left| left.set(None));
        }
    }
}

/// Whether the judgement under way has read all the entries it may.
fn spent() -> bool {
    ENTRIES_LEFT.with(|left| left.get() == Some(0))
}

/// Take one entry from the judgement's budget: false once it is spent.
fn take_entry() -> bool {
    ENTRIES_LEFT.with(|left| match left.get() {
        None => true,
        Some(0) => false,
        Some(n) => {
            left.set(Some(n - 1));
            true
        }
    })
}

/// Whether a glob (`/bin/r?`, `r*`) matches anything where the shell will expand it: from
/// `cwd` for a relative one. When that cannot be told (no directory known, too much to
/// look through, a wildcard in a directory part), it counts as matching.
pub fn glob_matches(pattern: &str, cwd: Option<&str>) -> bool {
    let (dir, name) = match pattern.rsplit_once('/') {
        Some(("", n)) => ("/".to_string(), n),
        Some((d, n)) if d.starts_with('/') => (d.to_string(), n),
        Some((d, n)) => match cwd {
            Some(c) => (format!("{c}/{d}"), n),
            None => return true,
        },
        None => match cwd {
            Some(c) => (c.to_string(), pattern),
            // Where it expands is not known, but what it expands to then runs from the
            // search path: it can run something only if it matches a program there.
            None => return matches_a_program(pattern),
        },
    };
    // Longer than any file's name (255 bytes): not worth matching against a directory,
    // entry by entry, in time its length (a line of typed arrow keys is one such pattern).
    if dir.contains(['*', '?', '[']) || name.len() > MAX_NAME {
        return true;
    }
    if spent() {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return false;
    };
    // The pattern read once, not once per entry (a 100 KiB pattern against a directory of
    // thousands took seconds).
    let pattern: Vec<char> = name.chars().collect();
    // One buffer for every entry's characters.
    let mut chars: Vec<char> = Vec::new();
    for (i, e) in entries.flatten().enumerate() {
        if i >= MAX_ENTRIES || !take_entry() {
            return true;
        }
        let n = e.file_name();
        let n = n.to_string_lossy();
        if n.starts_with('.') && !name.starts_with('.') {
            continue;
        }
        chars.clear();
        chars.extend(n.chars());
        if fnmatch_slices(&pattern, &chars) {
            return true;
        }
    }
    false
}

/// Whether a name pattern matches a program in the absolute directories of `PATH`. On
/// Windows, where a program's name carries one of `PATHEXT`'s extensions and case does not
/// count, a pattern in a program's place is taken as naming one (warned, never allowed).
fn matches_a_program(pattern: &str) -> bool {
    if cfg!(not(unix)) {
        return true;
    }
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .filter(|d| d.starts_with('/'))
        .any(|d| glob_matches(&format!("{d}/{pattern}"), None))
}

/// Shell pattern matching of one name: `*`, `?`, `[…]` (with `!`/`^` and ranges). One
/// pass with the last `*` as the only point to come back to: time in the pattern's length
/// times the name's, whatever the stars (a recursive match was exponential in them, and a
/// hostile command line decides how many there are).
pub(crate) fn fnmatch(pattern: &str, name: &str) -> bool {
    let n: Vec<char> = name.chars().collect();
    fnmatch_slices(&pattern.chars().collect::<Vec<_>>(), &n)
}

/// [`fnmatch`] of a pattern and a name already split into characters.
fn fnmatch_slices(p: &[char], n: &[char]) -> bool {
    let (mut pi, mut ni) = (0, 0);
    // Just after the last star, and where in the name it began to match.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if p.get(pi) == Some(&'*') {
            pi += 1;
            star = Some((pi, ni));
            continue;
        }
        if let Some(next) = one(p, pi, n[ni]) {
            pi = next;
            ni += 1;
            continue;
        }
        match star {
            Some((after, from)) => {
                pi = after;
                ni = from + 1;
                star = Some((after, from + 1));
            }
            None => return false,
        }
    }
    p[pi.min(p.len())..].iter().all(|c| *c == '*')
}

/// Whether the element of the pattern at `pi` (a character, `?`, or a `[…]` class) matches
/// `c`: where the pattern goes on if it does.
fn one(p: &[char], pi: usize, c: char) -> Option<usize> {
    match p.get(pi)? {
        '*' => None,
        '?' => Some(pi + 1),
        '[' => {
            let Some(close) = p[pi..]
                .iter()
                .skip(2)
                .position(|x| *x == ']')
                .map(|i| pi + i + 2)
            else {
                return (c == '[').then_some(pi + 1);
            };
            let set = &p[pi + 1..close];
            let (negate, set) = match set.first() {
                Some('!' | '^') => (true, &set[1..]),
                _ => (false, set),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == '-' {
                    hit |= set[i] <= c && c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            (hit != negate).then_some(close + 1)
        }
        x => (*x == c).then_some(pi + 1),
    }
}

#[cfg(test)]
mod glob_tests {
    use super::*;

    #[test]
    fn globs_match_as_the_shell_matches() {
        assert!(fnmatch("r?", "rm"));
        assert!(fnmatch("r[m]", "rm"));
        assert!(fnmatch("r[!x]", "rm"));
        assert!(fnmatch("*.rs", "main.rs"));
        assert!(!fnmatch("r?", "rmdir"));
        assert!(fnmatch("a*b*c", "axxbyyc") && !fnmatch("a*b*c", "axxbyy"));
        assert!(fnmatch("*", "") && fnmatch("**", "x") && !fnmatch("?", ""));
        assert!(fnmatch("[a-c]*[!z]", "bqq") && !fnmatch("[a-c]*[!z]", "bqz"));
        assert!(fnmatch("x[y", "x[y") && !fnmatch("x[y", "xy"));
        // Stars a hostile line piles up cost time in the lengths, not exponential in them.
        let long = "O".repeat(200);
        assert!(!fnmatch(&format!("{}X", "*".repeat(60)), &long));
        assert!(fnmatch(&"*O".repeat(60), &long));
        assert!(!glob_matches("3*4", Some("/")));
    }

    /// One judgement reads at most its budget of directory entries, over all its patterns;
    /// past it a pattern counts as matching without a directory being read, and the next
    /// judgement has its own budget. A name longer than any file's counts as matching.
    #[test]
    fn a_judgement_reads_a_bounded_number_of_entries() {
        let dir = std::env::temp_dir().join(format!("itmcp-globs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("plain"), "").unwrap();
        let cwd = dir.to_str();
        {
            let _judgement = Budget::start();
            assert!(!glob_matches("zz?", cwd));
            {
                // A judgement within (evaluate_input's evaluate) shares the budget.
                let _inner = Budget::start();
                ENTRIES_LEFT.with(|left| left.set(Some(0)));
            }
            assert!(spent(), "the inner start kept the outer budget");
            assert!(
                glob_matches("zz?", cwd),
                "past the budget, counted as matching"
            );
        }
        let _next = Budget::start();
        assert!(!glob_matches("zz?", cwd), "a new judgement, a new budget");
        assert!(glob_matches(&format!("{}?", "p".repeat(300)), cwd));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    #[cfg(unix)]
    fn globs_find_the_files_and_programs_they_match() {
        assert!(glob_matches("/bin/r?", None));
        assert!(!glob_matches("/bin/zz?zz", None));
        assert!(!glob_matches("print(2**10)", None), "matches no program");
        assert!(glob_matches("r?", None), "rm is a program");
    }

    #[test]
    #[cfg(not(unix))]
    fn a_pattern_in_a_programs_place_counts_as_naming_one() {
        assert!(glob_matches("r?", None));
    }
}
