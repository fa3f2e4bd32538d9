//! How far the policy follows what nests, in one place: a line may nest substitutions,
//! shells inside shells and wrappers inside wrappers, and each level is read again. The
//! depth bounds how deep; the budget bounds how much in all, since nesting multiplies
//! (`find -exec` per starting point, `xargs` per input line, `eval eval …`) and a few
//! hundred bytes could otherwise take minutes and gigabytes to judge. What goes past
//! either is judged as a line the policy cannot read.

use std::cell::Cell;

/// Deepest nesting followed, of every kind: substitutions (`$(…$(…))`), shells inside
/// shells (`sh -c "sh -c '…'"`), wrappers inside wrappers (`sudo env nice sh -c …`).
pub const MAX_DEPTH: usize = 16;

/// Units of nested work one line may cost: each command unwrapped beyond the line's own,
/// and each KiB of script text read again at a deeper level.
pub const NESTED_BUDGET: usize = 2048;

/// Bytes of nested script text that cost one unit of the budget.
const NESTED_TEXT_UNIT: usize = 1024;

/// Take the cost of reading `text` again one level down from `budget`: `false` (and the
/// budget spent) when it does not cover it.
pub fn spend_on_text(budget: &Cell<usize>, text: &str) -> bool {
    let cost = 1 + text.len() / NESTED_TEXT_UNIT;
    if budget.get() < cost {
        budget.set(0);
        return false;
    }
    budget.set(budget.get() - cost);
    true
}
