//! The one driver of the terminal operations: the local adapter calls [`execute`]
//! in-process, the host service calls it for requests that arrive over AHP, so the behaviour
//! is the same wherever a terminal lives. The wire types are in `protocol` (re-exported
//! here), reading a terminal in `view`, running commands in `drive`.

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use super::protocol::*;
pub use super::view::{chunk, find, ran, screen, summary};

use super::core::Core;
use super::{drive, held, lifecycle};

/// Serve one request against the core. `caller` is the AHP client it came from (the host
/// records it as the holder of the terminals it opens); `None` in-process.
pub async fn execute(core: &Arc<Core>, req: TermRequest, caller: Option<&str>) -> OpResult {
    match req {
        TermRequest::Open(a) => drive::open(core, a, caller).await.map(TermResponse::Ran),
        TermRequest::Run(a) => drive::run(core, a).await.map(TermResponse::Ran),
        TermRequest::Input(a) => drive::input(core, a).await.map(TermResponse::Ran),
        TermRequest::Read(a) => read(core, a).await.map(TermResponse::Read),
        TermRequest::Attach { terminal_id, claim } => {
            let t = find(core, &terminal_id)?;
            if let Some(c) = &claim {
                drive::set_claim(core, &t, c, false);
            }
            Ok(TermResponse::Attached(Attached {
                terminal: summary(&t),
                running: t.is_running(),
                screen: screen(core, &t),
                commands: t.state().commands.iter().cloned().collect(),
            }))
        }
        TermRequest::Kill { terminal_id } => {
            let t = find(core, &terminal_id)?;
            let was_running = t.is_running();
            let killed = lifecycle::kill(core, &t).await;
            let note = (!was_running).then(|| {
                "the terminal had already exited; anything it left behind was killed".to_string()
            });
            Ok(TermResponse::Killed(Killed {
                terminal: Some(summary(&t)),
                killed,
                note,
            }))
        }
        TermRequest::Dispose { terminal_id } => {
            let killed = core.dispose(&terminal_id).await?;
            Ok(TermResponse::Killed(Killed {
                terminal: None,
                killed,
                note: None,
            }))
        }
        TermRequest::List => Ok(TermResponse::List {
            terminals: core
                .list()
                .iter()
                .map(|t| {
                    let mut s = summary(t);
                    if s.running {
                        s.background_jobs = t.pty.background_jobs();
                    }
                    s
                })
                .collect(),
        }),
        TermRequest::Interrupt { terminal_id, claim } => {
            let t = find(core, &terminal_id)?;
            let call = claim.as_ref().and_then(AgentClaim::call_key);
            let withheld = held::interrupt(core, &t, call.as_deref())
                .await
                .map_err(|e| {
                    OpError::new(
                        OpErrorKind::Invalid,
                        format!("cannot interrupt terminal {terminal_id}: {e}"),
                    )
                })?;
            Ok(TermResponse::Interrupted { withheld })
        }
        TermRequest::Rewind {
            terminal_id,
            back_to,
        } => {
            let t = find(core, &terminal_id)?;
            let mut st = t.state();
            let rewound = back_to < st.delivered;
            st.delivered = st.delivered.min(back_to);
            Ok(TermResponse::Rewound { rewound })
        }
    }
}

async fn read(core: &Arc<Core>, a: ReadArgs) -> Result<ReadAnswer, OpError> {
    let t = find(core, &a.terminal_id)?;
    let now = Instant::now();
    let deadline = now + Duration::from_millis(a.wait_ms);
    // A program blocked reading the terminal sends nothing more until someone types: the
    // wait ends there, and says so.
    let ended = if a.wait_ms > 0 && matches!(a.output.view, View::Raw | View::Text) {
        let from = a.output.cursor.unwrap_or_else(|| t.state().delivered);
        super::waits::wait_for_or_input(&t, deadline, now, |st| {
            st.spool.len() > from || !st.running()
        })
        .await
    } else if a.wait_ms > 0 {
        super::waits::wait_for_or_input(&t, deadline, now, |st| !st.running()).await
    } else {
        super::waits::Ended::Cond
    };
    let waiting = ended == super::waits::Ended::Input || super::waits::waits_for_input(&t);
    let waiting_for_input = waiting.then(|| super::view::prompt_line(core, &t));
    let full_screen = super::view::full_screen(core, &t, &a.output);
    let shown = match a.output.view {
        View::Raw | View::Text => Shown::Output(chunk(&t, None, None, &a.output)?),
        View::Screen => Shown::Screen(screen(core, &t)),
        View::Commands => Shown::Commands {
            commands: t.state().commands.iter().cloned().collect(),
        },
    };
    Ok(ReadAnswer {
        terminal: summary(&t),
        running: t.is_running(),
        shown,
        waiting_for_input,
        screen: full_screen,
    })
}
