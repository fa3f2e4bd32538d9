//! Options as programs' own parsers read them (`getopt_long`): in clusters (`-qc`),
//! attached (`-S'…'`) or in the next word, and long names abbreviated to any unique
//! prefix (`--comm=`). What every rule that looks for an option uses.

/// The value of option `short` (a letter, in a cluster or alone) or `long` (also
/// abbreviated, as `getopt_long` takes it), attached or in the next word; options only
/// before the first word that is not one. `None` when not given.
pub fn option_value(args: &[String], short: Option<char>, long: Option<&str>) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" || !a.starts_with('-') || a == "-" {
            return None;
        }
        if let (Some(body), Some(long)) = (a.strip_prefix("--"), long) {
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            if !name.is_empty() && long.starts_with(name) {
                return value
                    .map(str::to_string)
                    .or_else(|| args.get(i + 1).cloned());
            }
        } else if let (Some(cluster), Some(c)) = (a.strip_prefix('-'), short)
            && !a.starts_with("--")
            && let Some(at) = cluster.find(c)
        {
            let attached = &cluster[at + c.len_utf8()..];
            return if attached.is_empty() {
                args.get(i + 1).cloned()
            } else {
                Some(attached.to_string())
            };
        }
        i += 1;
    }
    None
}

/// [`option_value`] looked for at every word, not only before the first operand (`make
/// all -f -`).
pub(crate) fn option_value_anywhere(args: &[String], short: char, long: &str) -> Option<String> {
    (0..args.len()).find_map(|i| option_value(&args[i..], Some(short), Some(long)))
}

/// Whether any word of `args` is option `short` (in a cluster) or `long` (abbreviated too).
pub(crate) fn has_option(args: &[String], short: Option<char>, long: Option<&str>) -> bool {
    args.iter().any(|a| {
        if let Some(body) = a.strip_prefix("--") {
            let name = body.split_once('=').map_or(body, |(n, _)| n);
            long.is_some_and(|l| !name.is_empty() && l.starts_with(name))
        } else {
            a.strip_prefix('-')
                .is_some_and(|c| short.is_some_and(|s| c.contains(s)))
        }
    })
}

/// Whether a long option whose name begins with at least `min` letters of `long` is given.
pub(crate) fn has_long_at_least(args: &[String], long: &str, min: usize) -> bool {
    args.iter().any(|a| {
        a.strip_prefix("--").is_some_and(|body| {
            let name = body.split_once('=').map_or(body, |(n, _)| n);
            name.len() >= min.min(long.len()) && long.starts_with(name)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_words as words;

    #[test]
    fn options_are_found_as_their_parsers_find_them() {
        assert_eq!(
            option_value(
                &words("-qc 'rm -rf ~' /dev/null"),
                Some('c'),
                Some("command")
            )
            .as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            option_value(&words("-Srm"), Some('S'), Some("split-string")).as_deref(),
            Some("rm")
        );
        assert_eq!(
            option_value(
                &words("--split='rm -rf ~'"),
                Some('S'),
                Some("split-string")
            )
            .as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            option_value(&words("-i -S x"), Some('S'), Some("split-string")).as_deref(),
            Some("x")
        );
        assert_eq!(option_value(&words("ls -S x"), Some('S'), None), None);
    }
}
