//! Readings of a line in the terminals' other shells, where a word runs what a POSIX shell
//! reads as data: fish's escapes decoded in unquoted words, zsh's code in glob qualifiers
//! and in the `(e)` flag.

use std::cell::Cell;

use crate::{Finding, Policy, Severity, fish_escapes, zsh_code};

thread_local! {
    /// How deep these readings are nested (a qualifier's code holding another qualifier).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Each reading judges its text again, whole: a few levels and a few KiB of code bound what a
/// crafted line costs (beyond them it is a line the policy cannot read). Real qualifiers
/// hold a test or a short command, one level deep.
const MAX_NESTED: usize = 3;
const MAX_CODE: usize = 4096;

impl Policy {
    /// What the line runs as fish and zsh read it, beyond the POSIX reading.
    pub(crate) fn other_shells(&self, line: &str, cwd: Option<&str>) -> Vec<Finding> {
        let mut out = Vec::new();
        let depth = DEPTH.with(|d| d.get());
        let codes = zsh_code::qualifier_code(line);
        // In a fish terminal, unquoted escapes are decoded (`rm \x2drf ~`): read so too.
        let fish = fish_escapes::decoded(line);
        let again = !codes.is_empty() || fish.is_some();
        if again && (depth >= MAX_NESTED || codes.iter().any(|c| c.len() > MAX_CODE)) {
            out.push(Finding {
                severity: Severity::Block,
                rule: "too_complex",
                message: "the command line nests code in words too deeply to be judged".into(),
                command: line.chars().take(200).collect(),
            });
            return out;
        }
        DEPTH.with(|d| d.set(depth + 1));
        if let Some(fish) = fish {
            out.extend(self.evaluate(&fish, cwd).findings);
        }
        // zsh runs a glob qualifier's code (`*(e:CODE:)`): judged as a line of its own.
        for code in codes {
            out.extend(self.evaluate(&code, cwd).findings);
        }
        if zsh_code::expands_value(line) {
            out.push(Finding {
                severity: Severity::Warn,
                rule: "opaque_script",
                message: "zsh's (e) flag expands a value again as code: what runs is in the \
                          value, not on the line"
                    .into(),
                command: line.chars().take(200).collect(),
            });
        }
        DEPTH.with(|d| d.set(depth));
        out
    }
}
