//! A destructive program given a word the line computes at run time (`rm -$(cat f) ~`,
//! `rm $(echo -rf) /`) beside a target that is the root, the home or a system directory:
//! what the program does there depends on that word, which cannot be read here.

use super::*;

/// Programs whose options decide whether they destroy what they are given.
const DESTRUCTIVE: &[&str] = &[
    "rm", "rmdir", "shred", "unlink", "chmod", "chown", "chgrp", "setfacl", "find", "rsync", "mv",
    "cp", "truncate", "dd", "git", "chattr",
];

/// The finding for such a command, if it is one.
pub fn computed_argument(argv: &[String], cwd: Option<&str>) -> Option<Finding> {
    let name = crate::wrappers::basename(argv.first()?);
    if !DESTRUCTIVE.contains(&&*name) {
        return None;
    }
    let rest = &argv[1..];
    let computed = rest.iter().find(|w| is_computed(w))?;
    let critical = rest
        .iter()
        .filter(|w| !is_computed(w) && !w.starts_with('-'))
        .find(|w| is_critical(&normalize(w, cwd)))?;
    Some(finding(
        Severity::Warn,
        "computed_command",
        format!(
            "{name} is given {}, computed when it runs, beside {critical}: what it does \
             there cannot be read",
            computed.replace(crate::lex::COMPUTED, "$(…)")
        ),
        argv,
    ))
}

/// Whether a word holds a substitution or an expansion the line does not resolve.
fn is_computed(word: &str) -> bool {
    word.contains(crate::lex::COMPUTED)
        || word.contains("$(")
        || word.contains('`')
        || word.contains("${")
        || {
            word.match_indices('$').any(|(i, _)| {
                word[i + 1..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && !word[i + 1..].starts_with("HOME")
            })
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(line: &str) -> bool {
        let argv: Vec<String> = shell_words::split(line).expect("words");
        computed_argument(&argv, Some("/work")).is_some()
    }

    #[test]
    fn a_computed_word_beside_a_critical_target_is_found() {
        for warned in [
            "rm -$(echo rf) ~",
            "rm $(cat flags) /",
            "rm -\"$(echo rf)\" ~",
            "chown -$(echo R) nobody /",
            "rm $OPTS $HOME",
        ] {
            assert!(judged(warned), "{warned}");
        }
        for passed in [
            "rm -rf $DIR",
            "rm -f $(cat list)",
            "rm -rf ./build",
            "ls -$(echo l) ~",
            "rm -rf ~/x/$NAME",
        ] {
            assert!(!judged(passed), "{passed}");
        }
    }
}
