//! `stty`: which of its settings leave the terminal's keys and signals as they were, and
//! when a line that turns Ctrl-C off puts it back before it ends.

/// Whether `stty args` leaves the terminal's keys and signals as they were: only settings
/// from an allow-list, which report (`-a`, `-g`, `size`), size the terminal, or switch a
/// mode that neither disarms Ctrl-C nor remaps a key the policy reads in raw input (`echo`,
/// `-echo`, `sane`, `icanon`, output and flow modes). Anything else is a change of keys or
/// signals: `intr undef` disarms Ctrl-C; so do `-isig` and `raw`, which the shell's line
/// editor then saves as the modes every later command runs with; `kill`/`werase`/`erase`
/// remapped make the keys the policy reads in raw input mean other edits; `-F` picks another
/// terminal. A list of the harmful ones missed `raw`.
pub(super) fn leaves_modes(args: &[String]) -> bool {
    const KEEP: &[&str] = &[
        "-a", "--all", "-g", "--save", "size", "speed", "sane", "cooked", "-raw", "rows", "cols",
        "columns", "echo", "-echo", "echoe", "-echoe", "echok", "-echok", "echoctl", "-echoctl",
        "echoke", "-echoke", "echonl", "-echonl", "icanon", "-icanon", "isig", "iexten", "onlcr",
        "-onlcr", "opost", "-opost", "icrnl", "-icrnl", "ixon", "-ixon", "ixoff", "-ixoff",
        "ixany", "-ixany", "tostop", "-tostop", "iutf8", "-iutf8", "ocrnl", "-ocrnl", "onlret",
        "-onlret", "inlcr", "-inlcr", "igncr", "-igncr", "nl", "-nl", "cs8", "-parenb", "parenb",
        "tabs", "-tabs",
    ];
    args.iter().all(|a| {
        KEEP.contains(&a.as_str()) || (!a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Settings that only turn the interrupt signal off (`raw`, `-isig`, `-cooked`), beside
/// those [`leaves_modes`] keeps.
const STTY_SIGNALS_OFF: &[&str] = &["raw", "-isig", "-cooked"];

/// Whether `argv` is `stty` turning the interrupt signal off and changing nothing else the
/// policy reads as a change of keys (`stty raw -echo`, a program about to read keys).
pub fn stty_signals_off(argv: &[String]) -> bool {
    let Some((first, args)) = argv.split_first() else {
        return false;
    };
    crate::wrappers::basename(first) == "stty"
        && args.iter().any(|a| STTY_SIGNALS_OFF.contains(&a.as_str()))
        && leaves_modes(
            &args
                .iter()
                .filter(|a| !STTY_SIGNALS_OFF.contains(&a.as_str()))
                .cloned()
                .collect::<Vec<_>>(),
        )
}

/// Whether every `stty` of the line given a variable puts back settings the line saved
/// with `stty -g`: `stty "$N"` (or `$N`, `"${N}"`), where `N=$(stty -g)` is the line's only
/// assignment of `N` and `N` is named nowhere else (`read N`, `N+=…`, `for N in` would give
/// it other settings). `old=$(stty -g); …; stty "$old"` passes;
/// `old=$(stty -g); read old < f; stty $old` does not.
pub fn restores_only_saved_settings(line: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut found = false;
    for (at, _) in line.match_indices("stty ") {
        let rest = line[at + 5..].trim_start();
        if !rest.starts_with(['$', '"']) {
            continue;
        }
        found = true;
        let var = rest.trim_start_matches('"').trim_start_matches('$');
        let var = var.strip_prefix('{').unwrap_or(var);
        let name: String = var.chars().take_while(|&c| is_name(c)).collect();
        let after = &var[name.len()..];
        let after = after.strip_prefix('}').unwrap_or(after);
        let after = after.strip_prefix('"').unwrap_or(after);
        if name.is_empty()
            || !after
                .chars()
                .next()
                .is_none_or(|c| matches!(c, ';' | '&' | '|' | ' ' | '\n' | ')'))
        {
            return false;
        }
        // The name as a word of its own (not `$N`, `${N}`): only its one assignment.
        let bare = line
            .match_indices(name.as_str())
            .filter(|(i, _)| {
                let before = line[..*i].chars().next_back();
                let next = line[i + name.len()..].chars().next();
                !before.is_some_and(|c| is_name(c) || c == '$' || c == '{')
                    && !next.is_some_and(is_name)
            })
            .count();
        let saved = [
            format!("{name}=$(stty -g)"),
            format!("{name}=\"$(stty -g)\""),
        ];
        if bare != 1 || !saved.iter().any(|s| line.contains(s.as_str())) {
            return false;
        }
    }
    found
}

/// Whether `argv` is `stty` given only words the line computes (`stty "$old"`).
pub fn stty_computed(argv: &[String]) -> bool {
    argv.first()
        .is_some_and(|f| crate::wrappers::basename(f) == "stty")
        && argv.len() > 1
        && argv[1..].iter().all(|a| a.contains(crate::lex::COMPUTED))
}

/// Whether `argv` is `stty` putting the interrupt signal back: `sane`, `cooked`, `-raw`,
/// `isig`, or settings saved before (`stty "$old"`, a word the line computes: `stty -g`'s
/// output).
pub fn stty_restores(argv: &[String]) -> bool {
    let Some((first, args)) = argv.split_first() else {
        return false;
    };
    crate::wrappers::basename(first) == "stty"
        && args.iter().any(|a| {
            matches!(a.as_str(), "sane" | "cooked" | "-raw" | "isig")
                || a.contains(crate::lex::COMPUTED)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_settings_the_line_saved_are_put_back() {
        assert!(restores_only_saved_settings(
            "old=$(stty -g); stty raw -echo; read -rs -t 5 a; stty \"$old\""
        ));
        assert!(restores_only_saved_settings(
            "s=\"$(stty -g)\"; stty raw; cat; stty \"${s}\""
        ));
        for line in [
            "stty raw; stty $old",
            "old=$(stty -g); read old < f; stty $old",
            "old=$(stty -g); old='intr undef'; stty $old",
            "x=$(stty -g); stty $(cat evil)",
            "old=$(stty -g); stty $old$x",
        ] {
            assert!(!restores_only_saved_settings(line), "{line}");
        }
    }
}
