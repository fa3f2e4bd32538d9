//! The root list as a person watching the host sees it while an agent works among many
//! terminals: current when asked, and on the feed ending where the agent left it — the list
//! is published once its changes settle, so a claim taken and given back within one short
//! call never shows, and one held longer shows and then goes.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::time::Duration;

use ahp::SubscriptionEvent;
use ahp_types::ROOT_RESOURCE_URI;
use ahp_types::actions::StateAction;
use ahp_types::state::{SnapshotState, TerminalClaim, TerminalInfo, TerminalLifecycleState};
use common::*;
use serde_json::Value;

/// Terminals the agent opens besides the one it works in.
const TERMINALS: usize = 30;
/// How long the watcher waits for the list it expects.
const WATCH: Duration = Duration::from_secs(10);

fn terminal_id(r: &Value) -> String {
    assert_eq!(r["success"], true, "{r:#}");
    r["identity"]["terminal_id"].as_str().unwrap().to_string()
}

fn entry<'a>(list: &'a [TerminalInfo], id: &str) -> Option<&'a TerminalInfo> {
    list.iter().find(|t| t.resource.ends_with(id))
}

/// Whether `id`'s claim in `list` is the agent's during a call (a tool call named).
fn in_a_call(list: &[TerminalInfo], id: &str) -> bool {
    matches!(entry(list, id).map(|t| &t.claim),
        Some(TerminalClaim::Session(s)) if s.tool_call_id.is_some())
}

/// The next root list on `feed` that `wanted` accepts.
async fn next_list(
    feed: &mut ahp::SessionSubscription,
    wanted: impl Fn(&[TerminalInfo]) -> bool,
) -> Vec<TerminalInfo> {
    let deadline = tokio::time::Instant::now() + WATCH;
    loop {
        let event = tokio::time::timeout_at(deadline, feed.recv())
            .await
            .expect("the root list never showed what was expected");
        if let Some(SubscriptionEvent::Action(env)) = event
            && let StateAction::RootTerminalsChanged(r) = env.action
            && wanted(&r.terminals)
        {
            return r.terminals;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_watching_the_root_list_sees_every_terminal_and_where_the_agent_left_it() {
    let h = host("tok-root-list").start();
    let agent = start_bridged(&h).await;
    let work = terminal_id(&agent.call(open_terminal()).await);
    let mut others = Vec::new();
    for _ in 0..TERMINALS {
        others.push(terminal_id(&agent.call(open_terminal()).await));
    }

    // A person opens the page right after: every terminal is listed already.
    let watcher = ahp_client(&h, "watcher").await;
    let (snap, mut feed) = watcher.subscribe(ROOT_RESOURCE_URI.into()).await.unwrap();
    let Some(SnapshotState::Root(root)) = snap.snapshot.map(|s| s.state) else {
        panic!("no root snapshot")
    };
    let listed = root.terminals.unwrap_or_default();
    for id in others.iter().chain([&work]) {
        assert!(entry(&listed, id).is_some(), "{id} not listed: {listed:?}");
    }

    // Quick commands, then one that runs long enough to be seen: the watcher sees the
    // agent's claim while it runs and, after the answer, the claim backgrounded.
    for i in 0..10 {
        let r = agent
            .call(terminal_command(&work, &format!("echo quick-{i}")))
            .await;
        assert_eq!(r["success"], true, "{r:#}");
    }
    let (r, during) = tokio::join!(
        agent.call(terminal_command(&work, "sleep 1")),
        next_list(&mut feed, |l| in_a_call(l, &work)),
    );
    assert_eq!(r["success"], true, "{r:#}");
    assert_eq!(during.len(), TERMINALS + 1);
    let after = next_list(&mut feed, |l| !in_a_call(l, &work)).await;
    assert!(
        matches!(
            entry(&after, &work).map(|t| &t.claim),
            Some(TerminalClaim::Session(_))
        ),
        "{after:?}"
    );

    // An ended terminal shows as ended.
    let ended = &others[0];
    let r = agent
        .call(serde_json::json!({"action": "terminate", "target": {"terminal_id": ended}}))
        .await;
    assert_eq!(r["success"], true, "{r:#}");
    let after = next_list(&mut feed, |l| {
        entry(l, ended).is_some_and(|t| matches!(t.lifecycle, TerminalLifecycleState::Exited(_)))
    })
    .await;
    assert_eq!(after.len(), TERMINALS + 1, "{after:?}");
}
