//! Code kept as text that bash runs later: a command substitution inside quotes is only
//! text where it is written, but bash runs it when the text is read as arithmetic — an
//! array subscript in `(( x ))`, `$(( x ))`, `let`, `[[ x -eq 0 ]]` or `declare -i`, where a
//! variable's value is itself evaluated (`x='a[$(rm -rf ~)]'; (( x ))`) — or as a prompt
//! (`${x@P}`). What runs is in no word the line shows as a command.

use super::*;

/// How a character of the line is read.
#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Each character of `line` with whether bash would expand it there: `false` inside single
/// quotes (and `$'…'`) and for a character escaped with a backslash (the backslash left
/// out).
fn expansion_marks(line: &str) -> Vec<(char, bool)> {
    let mut out = Vec::with_capacity(line.len());
    let mut q = Quote::None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (q, c) {
            (Quote::Single, '\'') => {
                q = Quote::None;
                out.push((c, false));
            }
            (Quote::Single, _) => out.push((c, false)),
            (Quote::None, '\'') => {
                q = Quote::Single;
                out.push((c, false));
            }
            (Quote::None, '$') if chars.peek() == Some(&'\'') => {
                out.push((c, false));
            }
            (Quote::None | Quote::Double, '\\') => {
                // The backslash itself is not part of the text; what it escapes is literal.
                if let Some(next) = chars.next() {
                    out.push((next, false));
                }
            }
            (Quote::None, '"') => {
                q = Quote::Double;
                out.push((c, true));
            }
            (Quote::Double, '"') => {
                q = Quote::None;
                out.push((c, true));
            }
            _ => out.push((c, true)),
        }
    }
    out
}

/// The finding for a line holding code kept as text that bash runs later, if it does.
pub fn check_dormant_code(line: &str) -> Option<Finding> {
    let marks = expansion_marks(line);
    // A subscript whose text holds a command substitution that is not expanded where it is
    // written: `'a[$(cmd)]'`, `"a[\$(cmd)]"`, `'a[`cmd`]'`.
    let subscript = marks.iter().enumerate().any(|(i, (c, _))| {
        let mut rest = marks[i + 1..].iter().skip_while(|(c, _)| *c == ' ');
        *c == '['
            && matches!(
                (rest.next(), rest.next()),
                (Some(('`', false)), _) | (Some(('$', false)), Some(('(', _)))
            )
    });
    // `${name@P}` where it is expanded: the value is read as a prompt string.
    let text: String = marks.iter().map(|(c, _)| *c).collect();
    let prompt = text.match_indices("@P}").any(|(i, _)| {
        let at = text[..i].chars().count();
        marks[..at]
            .iter()
            .rev()
            .take_while(|(c, _)| *c != '{')
            .all(|(c, _)| c.is_ascii_alphanumeric() || *c == '_' || *c == '[' || *c == ']')
            && marks[..at]
                .iter()
                .rev()
                .find(|(c, _)| *c == '{')
                .is_some_and(|(_, live)| *live)
    });
    let what = match (subscript, prompt) {
        (true, _) => {
            "holds a command substitution kept as text in an array subscript: bash runs it \
             where that text is read as arithmetic (`(( x ))`, `let`, `[[ x -eq 0 ]]`, \
             `declare -i`), so what runs is in no word the line shows as a command"
        }
        (false, true) => {
            "expands a variable as a prompt string (`${x@P}`), which runs the command \
             substitutions in its value: what runs is not in the line"
        }
        (false, false) => return None,
    };
    Some(Finding {
        severity: Severity::Warn,
        rule: "computed_command",
        message: what.into(),
        command: line.chars().take(200).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_kept_as_text_for_arithmetic_or_a_prompt_is_found() {
        for warned in [
            "x='a[$(touch /tmp/p)]'; (( x ))",
            "let 'a[$(touch /tmp/p)]'",
            "[[ 'a[$(touch /tmp/p)]' -eq 0 ]]",
            "let \"a[\\$(touch /tmp/p)]\"",
            "x='a[`touch /tmp/p`]'; echo $(( x ))",
            "x='a[ $(id)]'; (( x ))",
            "x='$(touch /tmp/p)'; echo ${x@P}",
            "printf '%s' \"${x@P}\"",
        ] {
            assert!(check_dormant_code(warned).is_some(), "{warned}");
        }
        for passed in [
            "arr[$(date +%s)]=x",
            "git commit -m 'fix $(foo) in the docs'",
            "echo '${x@P}'",
            "echo ${arr[0]} ${#arr[@]}",
            "grep -E '[a-z]+' file",
            "echo 'user@P}'",
            "(( i + 1 ))",
        ] {
            assert!(check_dormant_code(passed).is_none(), "{passed}");
        }
    }
}
