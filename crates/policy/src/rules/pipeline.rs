//! What follows each command in its pipeline, read once for a whole line.
//!
//! Rules that look for one command piped into another (`curl … | sh`, `env | curl -d @-`,
//! `pgrep -u me | xargs kill`) used to scan the rest of the pipeline from every command:
//! a 128 KiB line of `env | env | …` took 53 s to judge. Each answer is now computed in one
//! pass from the end.

use crate::lex::Simple;

/// For each command of `cmds`, whether a later command of the same pipeline satisfies `pred`
/// (a pipeline's commands are consecutive). `pred` is asked once per command.
pub(super) fn followed_by(cmds: &[Simple], pred: impl Fn(&Simple) -> bool) -> Vec<bool> {
    followed_by_before(cmds, pred, |_| false)
}

/// [`followed_by`], looking no further than the first later command `stop` recognises
/// (`ps aux | grep node | xargs kill`: the `grep` picks by name).
pub(super) fn followed_by_before(
    cmds: &[Simple],
    pred: impl Fn(&Simple) -> bool,
    stop: impl Fn(&Simple) -> bool,
) -> Vec<bool> {
    let mut after = vec![false; cmds.len()];
    for i in (0..cmds.len().saturating_sub(1)).rev() {
        let next = &cmds[i + 1];
        if next.pipeline == cmds[i].pipeline && !stop(next) {
            after[i] = pred(next) || after[i + 1];
        }
    }
    after
}

/// For each command of `cmds`, the index just past the end of its pipeline.
pub(super) fn pipeline_ends(cmds: &[Simple]) -> Vec<usize> {
    let mut end = vec![cmds.len(); cmds.len()];
    for i in (0..cmds.len().saturating_sub(1)).rev() {
        end[i] = if cmds[i + 1].pipeline == cmds[i].pipeline {
            end[i + 1]
        } else {
            i + 1
        };
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_follows_in_the_same_pipeline() {
        let cmds = crate::lex::parse("a | b | c; d | b; b").commands;
        let is_b = |c: &Simple| c.argv.first().is_some_and(|w| w == "b");
        assert_eq!(
            followed_by(&cmds, is_b),
            [true, false, false, true, false, false]
        );
        assert_eq!(pipeline_ends(&cmds), [3, 3, 3, 5, 5, 6]);
        let is_c = |c: &Simple| c.argv.first().is_some_and(|w| w == "c");
        assert_eq!(
            followed_by_before(&cmds, is_c, is_b),
            [false, true, false, false, false, false]
        );
    }
}
