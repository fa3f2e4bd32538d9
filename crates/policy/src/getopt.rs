//! Options as programs' own parsers read them (`getopt_long`): in clusters (`-qc`),
//! attached (`-S'…'`) or in the next word, and long names abbreviated to any unique
//! prefix (`--comm=`). What every rule that looks for an option uses.

/// The values a command's option takes: `-X VALUE`, `-XVALUE`, a cluster ending in `X`
/// (`-sSo FILE`), `--long VALUE`, `--long=VALUE`, and a long name abbreviated (as
/// `getopt_long` takes a unique prefix; an ambiguous or unabbreviating one only makes this
/// see more, which costs nothing: what is seen is only compared with start-up files).
pub(crate) fn option_values<'a>(args: &'a [String], short: char, longs: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            let matches = longs
                .iter()
                .any(|l| !name.is_empty() && l.starts_with(name));
            if matches {
                match value {
                    Some(v) => out.push(v),
                    None => {
                        if let Some(v) = args.get(i + 1) {
                            out.push(v.as_str());
                        }
                        i += 1;
                    }
                }
            }
        } else if let Some(cluster) = a.strip_prefix('-')
            && let Some(at) = cluster.find(short)
        {
            let value = &cluster[at + short.len_utf8()..];
            if value.is_empty() {
                if let Some(v) = args.get(i + 1) {
                    out.push(v.as_str());
                }
                i += 1;
            } else {
                out.push(value);
            }
        }
        i += 1;
    }
    out
}

/// Short options read as getopt reads them, given `valued`, the letters that take a value
/// (a clustered `-vp 22` is `-v -p 22`): each valued letter with its value, and where the
/// operands start (after `--`, or at the first word that is not an option).
pub(crate) fn short_options<'a>(args: &'a [String], valued: &str) -> (Vec<(char, &'a str)>, usize) {
    let mut found = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            return (found, i + 1);
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        for (at, letter) in a.char_indices().skip(1) {
            if !valued.contains(letter) {
                continue;
            }
            let inline = &a[at + letter.len_utf8()..];
            let value = if inline.is_empty() {
                i += 1;
                args.get(i).map_or("", String::as_str)
            } else {
                inline
            };
            found.push((letter, value));
            break;
        }
        i += 1;
    }
    (found, i.min(args.len()))
}

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
