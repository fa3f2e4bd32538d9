//! The core with an action its reducer does not apply (tests over the device in memory).

use std::collections::BTreeSet;

use ahp_types::actions::StateAction;

use super::{adopt, core};

/// An action the reducer does not apply (a command finished that never started, a root
/// action sent to a terminal) is neither logged nor broadcast and takes no sequence
/// number; the caller gets it back with the reason. Input, which changes no state, is
/// still told.
#[tokio::test]
async fn an_action_the_reducer_refuses_is_neither_logged_nor_broadcast() {
    use ahp_types::actions::{
        RootTerminalsChangedAction, TerminalCommandFinishedAction, TerminalInputAction,
    };
    let core = core();
    let (t, sh) = adopt(&core, "refused");
    let mut feed = core.follow();
    let channel: BTreeSet<String> = [t.uri.clone()].into();
    let before = core.replay_after(0, &channel).map(|r| r.len()).unwrap_or(0);
    let no_op = core.dispatch(
        &t,
        StateAction::TerminalCommandFinished(TerminalCommandFinishedAction {
            command_id: "never-started".into(),
            exit_code: Some(0),
            duration_ms: None,
        }),
        None,
    );
    let out_of_scope = core.dispatch(
        &t,
        StateAction::RootTerminalsChanged(RootTerminalsChangedAction { terminals: vec![] }),
        None,
    );
    for env in [&no_op, &out_of_scope] {
        assert!(env.rejection_reason.is_some(), "{env:?}");
    }
    assert_eq!(no_op.server_seq, out_of_scope.server_seq, "no number taken");
    let told: Vec<_> = std::iter::from_fn(|| feed.try_recv().ok())
        .filter(|e| {
            e.channel == t.uri
                && matches!(
                    e.action,
                    StateAction::TerminalCommandFinished(_) | StateAction::RootTerminalsChanged(_)
                )
        })
        .collect();
    assert!(told.is_empty(), "a refused action was broadcast: {told:?}");
    assert_eq!(
        core.replay_after(0, &channel).map(|r| r.len()).unwrap_or(0),
        before,
        "a refused action was logged"
    );
    let typed = core.dispatch(
        &t,
        StateAction::TerminalInput(TerminalInputAction { data: "x".into() }),
        None,
    );
    assert!(typed.rejection_reason.is_none());
    assert_eq!(typed.server_seq, no_op.server_seq + 1);
    let told = std::iter::from_fn(|| feed.try_recv().ok())
        .find(|e| matches!(e.action, StateAction::TerminalInput(_)))
        .expect("the input is told");
    assert_eq!(told.server_seq, typed.server_seq);
    drop(sh);
}
