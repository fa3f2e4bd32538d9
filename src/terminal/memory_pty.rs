//! A terminal device in memory, for testing the core and the driver without a kernel pty:
//! the test plays the shell, reading what the core types and printing what a shell with
//! integration would print.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::io;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, watch};

use super::pty::Pty;
use crate::process::ChildExit;

/// The pid the memory device reports for its "shell".
pub const FAKE_PID: i32 = 4_000_000;

/// The core's side of the device.
pub struct MemoryPty {
    output: tokio::sync::Mutex<(mpsc::UnboundedReceiver<Vec<u8>>, Vec<u8>)>,
    input: mpsc::UnboundedSender<Vec<u8>>,
    size: Arc<Mutex<(u16, u16)>>,
    exit: watch::Sender<Option<ChildExit>>,
}

/// The test's side: the shell's output, what it was sent, its size, and its exit.
pub struct ShellSide {
    pub output: mpsc::UnboundedSender<Vec<u8>>,
    pub input: mpsc::UnboundedReceiver<Vec<u8>>,
    pub size: Arc<Mutex<(u16, u16)>>,
    pub exit: watch::Sender<Option<ChildExit>>,
    pending: Vec<u8>,
}

pub fn pair() -> (MemoryPty, ShellSide) {
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let size = Arc::new(Mutex::new((0, 0)));
    let (exit, _) = watch::channel(None);
    (
        MemoryPty {
            output: tokio::sync::Mutex::new((out_rx, Vec::new())),
            input: in_tx,
            size: size.clone(),
            exit: exit.clone(),
        },
        ShellSide {
            output: out_tx,
            input: in_rx,
            size,
            exit,
            pending: Vec::new(),
        },
    )
}

impl ShellSide {
    pub fn print(&self, s: &str) {
        let _ = self.output.send(s.as_bytes().to_vec());
    }

    /// The next line typed (up to its `\r`), or `None` once the core dropped the device.
    pub async fn line(&mut self) -> Option<String> {
        loop {
            if let Some(i) = self.pending.iter().position(|&b| b == b'\r') {
                let line: Vec<u8> = self.pending.drain(..=i).collect();
                return Some(String::from_utf8_lossy(&line[..i]).into_owned());
            }
            let more = self.input.recv().await?;
            self.pending.extend(more);
        }
    }
}

impl Pty for MemoryPty {
    fn pid(&self) -> i32 {
        FAKE_PID
    }

    fn read<'a>(&'a self, buf: &'a mut [u8]) -> BoxFuture<'a, io::Result<usize>> {
        Box::pin(async move {
            let mut guard = self.output.lock().await;
            let (rx, left) = &mut *guard;
            let mut exit = self.exit.subscribe();
            while left.is_empty() {
                if let Ok(chunk) = rx.try_recv() {
                    *left = chunk;
                    continue;
                }
                // Like a pty: once the program is gone and its output read, the end.
                if exit.borrow_and_update().is_some() {
                    return Ok(0);
                }
                tokio::select! {
                    chunk = rx.recv() => match chunk {
                        Some(chunk) => *left = chunk,
                        None => return Ok(0),
                    },
                    _ = exit.changed() => {}
                }
            }
            let n = left.len().min(buf.len());
            buf[..n].copy_from_slice(&left[..n]);
            left.drain(..n);
            Ok(n)
        })
    }

    fn write_all<'a>(&'a self, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            self.input
                .send(data.to_vec())
                .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
        })
    }

    fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
        *self.size.lock().unwrap() = (cols, rows);
        Ok(())
    }

    fn wait(&self) -> BoxFuture<'_, ChildExit> {
        let mut rx = self.exit.subscribe();
        Box::pin(async move {
            loop {
                if let Some(e) = *rx.borrow_and_update() {
                    return e;
                }
                if rx.changed().await.is_err() {
                    return ChildExit::Unknown;
                }
            }
        })
    }

    fn kill(&self) -> BoxFuture<'_, Vec<i32>> {
        /// What a killed program's exit says on unix (its number is the same on every unix).
        const SIGKILL: i32 = 9;
        Box::pin(async move {
            let was_running = self.exit.borrow().is_none();
            self.exit.send_replace(Some(ChildExit::Signal(SIGKILL)));
            if was_running { vec![FAKE_PID] } else { vec![] }
        })
    }
}

#[cfg(test)]
mod tests {
    /// What the core does with an action the reducer does not apply.
    mod refused;

    use std::collections::{BTreeMap, BTreeSet};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::terminal::core::ROOT_SETTLE;
    use crate::terminal::lifecycle::{self, Device};
    use crate::terminal::ops::{
        self, OutputSpec, ReadArgs, RunArgs, Shown, TermRequest, TermResponse, View,
    };
    use crate::terminal::protocol::AgentClaim;
    use crate::terminal::{Core, CoreConfig, CreateSpec};
    use ahp_types::actions::StateAction;
    use ahp_types::state::{SnapshotState, TerminalClaim};

    const NONCE: &str = "n0nce";
    const WAIT: Duration = Duration::from_secs(10);

    fn mark(code: &str) -> String {
        format!("\x1b]633;{code};{NONCE}\x07")
    }

    fn prompt() -> String {
        format!("{}$ {}", mark("A"), mark("B"))
    }

    /// A shell with full integration: `make` prints and succeeds, `false` fails, `exit N`
    /// ends the shell with N; anything else is not found.
    async fn play_shell(mut sh: ShellSide) -> ShellSide {
        sh.print(&prompt());
        while let Some(line) = sh.line().await {
            sh.print(&format!("{line}\r\n"));
            if let Some(code) = line.strip_prefix("exit ") {
                let code = code.parse().unwrap();
                sh.exit.send_replace(Some(ChildExit::Code(code)));
                break;
            }
            let (out, status) = match line.as_str() {
                "make" => ("compiled ok\r\n", 0),
                "false" => ("", 1),
                _ => ("sh: not found\r\n", 127),
            };
            sh.print(&format!(
                "{}{}{out}{}{}",
                mark(&format!("E;{line}")),
                mark("C"),
                mark(&format!("D;{status}")),
                prompt()
            ));
        }
        sh
    }

    fn core() -> Arc<Core> {
        let dir = std::env::temp_dir().join(format!(
            "pm-term-memory-pty-{}-{}",
            std::process::id(),
            crate::ids::new_id("t")
        ));
        Core::new(CoreConfig::new(dir, 1 << 20))
    }

    /// A terminal on a memory device with its shell played.
    struct Opened {
        id: String,
        shell: tokio::task::JoinHandle<ShellSide>,
        /// The device's size as the core sets it.
        size: Arc<Mutex<(u16, u16)>>,
    }

    fn open(core: &Arc<Core>) -> Opened {
        open_as(core, "mem1")
    }

    fn open_as(core: &Arc<Core>, id: &str) -> Opened {
        let (t, sh) = adopt(core, id);
        let size = sh.size.clone();
        Opened {
            id: t.id.clone(),
            shell: tokio::spawn(play_shell(sh)),
            size,
        }
    }

    /// A terminal on a memory device; the shell's side is the test's to play.
    fn adopt(core: &Arc<Core>, id: &str) -> (Arc<crate::terminal::term::Terminal>, ShellSide) {
        let (pty, sh) = pair();
        let claim = AgentClaim {
            session: "s".into(),
            chat: "c".into(),
            tool_call_id: None,
        };
        let t = core.adopt(
            id.into(),
            CreateSpec {
                id: None,
                name: None,
                cwd: "/".into(),
                env: BTreeMap::new(),
                shell: None,
                cols: 80,
                rows: 24,
                claim: claim.active(),
                holder_client: None,
                workspace_id: None,
            },
            Device {
                pty: Box::new(pty),
                program: "/bin/fake-sh".into(),
                nonce: NONCE.into(),
                prompt_only: false,
                nonce_file: None,
            },
        );
        (t, sh)
    }

    fn output() -> OutputSpec {
        OutputSpec {
            view: View::Text,
            max_bytes: None,
            tail: false,
            cursor: None,
            excerpt: None,
        }
    }

    async fn run(core: &Arc<Core>, id: &str, command: &str) -> crate::terminal::protocol::Ran {
        let req = TermRequest::Run(RunArgs {
            terminal_id: id.into(),
            command: command.into(),
            wait_ms: WAIT.as_millis() as u64,
            timeout_ms: None,
            claim: None,
            output: output(),
            unseen_line: false,
            size: None,
        });
        match ops::execute(core, req, None).await {
            Ok(TermResponse::Ran(ran)) => ran,
            other => panic!("run {command}: {other:?}"),
        }
    }

    #[tokio::test]
    async fn the_driver_runs_commands_on_a_device_in_memory() {
        let core = core();
        let Opened { id, .. } = open(&core);
        let ran = run(&core, &id, "make").await;
        let cmd = ran.command.expect("the command is detected");
        assert_eq!(cmd.command_line, "make");
        assert_eq!(cmd.exit_code, Some(0));
        assert!(
            ran.output.text.contains("compiled ok"),
            "{:?}",
            ran.output.text
        );
        assert!(!ran.output.text.contains("633"), "marks are stripped");
        let ran = run(&core, &id, "false").await;
        assert_eq!(ran.command.and_then(|c| c.exit_code), Some(1));

        let read = ops::execute(
            &core,
            TermRequest::Read(ReadArgs {
                terminal_id: id.clone(),
                wait_ms: 0,
                output: OutputSpec {
                    view: View::Commands,
                    ..output()
                },
            }),
            None,
        )
        .await;
        let Ok(TermResponse::Read(read)) = read else {
            panic!("read: {read:?}")
        };
        let Shown::Commands { commands } = read.shown else {
            panic!("commands view: {:?}", read.shown)
        };
        let lines: Vec<_> = commands.iter().map(|c| c.command_line.as_str()).collect();
        assert_eq!(lines, ["make", "false"]);
    }

    /// What an answer nobody received showed is unread again; what somebody read past it
    /// meanwhile is shown again too, twice rather than lost.
    #[tokio::test]
    async fn a_rewind_gives_back_what_an_answer_nobody_received_showed() {
        let core = core();
        let Opened { id, .. } = open(&core);
        let t = core.get(&id).unwrap();
        let shown = run(&core, &id, "make").await.output;
        let back_to = shown.delivered_before.expect("the mark before the answer");
        assert!(back_to < shown.end);
        // Somebody reads on before the rewind arrives.
        let later = run(&core, &id, "false").await.output;
        assert!(later.end > shown.end);
        let rewind = TermRequest::Rewind {
            terminal_id: id.clone(),
            back_to,
        };
        let rewound = ops::execute(&core, rewind.clone(), None).await;
        assert!(matches!(
            rewound,
            Ok(TermResponse::Rewound { rewound: true })
        ));
        let again = ops::chunk(&t, None, None, &output()).unwrap();
        assert_eq!(again.start, back_to);
        assert!(again.end >= later.end);
        assert!(again.text.contains("compiled ok"), "{:?}", again.text);
        // A mark already before it stays.
        t.state().delivered = 0;
        let not = ops::execute(&core, rewind, None).await;
        assert!(matches!(not, Ok(TermResponse::Rewound { rewound: false })));
        assert_eq!(t.state().delivered, 0);
    }

    #[tokio::test]
    async fn resize_reaches_the_device_and_the_screen() {
        let core = core();
        let Opened { id, shell, size } = open(&core);
        let t = core.get(&id).unwrap();
        lifecycle::resize(&core, &t, 100, 40, None).expect("resized");
        shell.abort();
        assert_eq!(*size.lock().unwrap(), (100, 40));
        let screen = ops::screen(&core, &t);
        assert_eq!((screen.cols, screen.rows), (100, 40));
        assert_eq!(t.state().state.cols, Some(100));
    }

    #[tokio::test]
    async fn the_shells_exit_is_recorded_after_its_last_output() {
        let core = core();
        let Opened { id, shell, .. } = open(&core);
        let _ = run(&core, &id, "make").await;
        let t = core.get(&id).unwrap();
        lifecycle::input(&core, &t, "exit 3\r", None).await.unwrap();
        let sh = shell.await.unwrap();
        let deadline = Instant::now() + WAIT;
        assert!(crate::terminal::drive::wait_for(&t, deadline, |st| !st.running()).await);
        let summary = ops::summary(&t);
        assert_eq!(summary.exit_code, Some(3));
        // The output printed before the exit is all there.
        let whole = OutputSpec {
            cursor: Some(0),
            view: View::Raw,
            ..output()
        };
        let text = ops::chunk(&t, None, None, &whole).unwrap().text;
        assert!(
            text.contains("compiled ok\r\n") && text.ends_with("$ exit 3\r\n"),
            "{text:?}"
        );
        // Input to an exited terminal is refused, not lost silently.
        assert!(lifecycle::input(&core, &t, "ls\r", None).await.is_err());
        drop(sh);
    }

    #[tokio::test]
    async fn kill_kills_the_device_and_records_the_signal() {
        let core = core();
        let Opened { id, .. } = open(&core);
        let t = core.get(&id).unwrap();
        let killed = lifecycle::kill(&core, &t).await;
        assert_eq!(killed, vec![FAKE_PID]);
        let summary = ops::summary(&t);
        assert!(!summary.running);
        assert_eq!(summary.signal.as_deref(), Some("SIGKILL"));
        // Killing again kills nothing and still answers.
        assert!(lifecycle::kill(&core, &t).await.is_empty());
    }

    #[tokio::test]
    async fn a_replay_carries_the_newest_root_list_in_its_place() {
        let core = core();
        let opened: Vec<Opened> = ["m1", "m2", "m3"]
            .iter()
            .map(|id| open_as(&core, id))
            .collect();
        let root: BTreeSet<String> = [ahp_types::ROOT_RESOURCE_URI.to_string()].into();
        let replay = core.replay_after(0, &root).unwrap();
        // Every create changed the root list; only the newest stands for them in a replay.
        assert_eq!(replay.len(), 1, "{replay:?}");
        let StateAction::RootTerminalsChanged(list) = &replay[0].action else {
            panic!("{replay:?}")
        };
        assert_eq!(list.terminals.len(), 3);
        // Mixed with a terminal's channel, the replay stays in sequence order.
        let _ = run(&core, "m3", "make").await;
        let t = core.get("m3").unwrap();
        let both: BTreeSet<String> =
            [ahp_types::ROOT_RESOURCE_URI.to_string(), t.uri.clone()].into();
        let replay = core.replay_after(0, &both).unwrap();
        let seqs: Vec<u64> = replay.iter().map(|e| e.server_seq).collect();
        let mut sorted = seqs.clone();
        sorted.sort();
        assert_eq!(seqs, sorted);
        assert!(replay.iter().any(|e| e.channel == t.uri));
        for o in opened {
            o.shell.abort();
        }
    }

    #[tokio::test]
    async fn titles_come_from_the_output_without_a_screen_read() {
        let core = core();
        let (t, sh) = adopt(&core, "titled");
        sh.print("building\x1b]0;build: step 2\x07 more");
        let deadline = Instant::now() + WAIT;
        assert!(
            crate::terminal::drive::wait_for(&t, deadline, |st| st.state.title == "build: step 2")
                .await,
            "title stayed {:?}",
            t.state().state.title
        );
        // The sequence stays in the stream: the screen shows the text around it.
        let screen = ops::screen(&core, &t);
        assert!(
            screen.text.starts_with("building more"),
            "{:?}",
            screen.text
        );
        drop(sh);
    }

    /// The root lists a follower received so far: how many, and the newest.
    fn root_lists(
        feed: &mut tokio::sync::broadcast::Receiver<Arc<ahp_types::ActionEnvelope>>,
    ) -> Vec<Vec<ahp_types::state::TerminalInfo>> {
        let mut lists = Vec::new();
        while let Ok(env) = feed.try_recv() {
            if let StateAction::RootTerminalsChanged(r) = &env.action {
                lists.push(r.terminals.clone());
            }
        }
        lists
    }

    fn claim(core: &Arc<Core>, id: &str, claim: TerminalClaim) {
        let t = core.get(id).unwrap();
        core.dispatch(
            &t,
            StateAction::TerminalClaimed(ahp_types::actions::TerminalClaimedAction { claim }),
            None,
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_claim_given_back_before_the_root_list_settles_publishes_no_list() {
        let core = core();
        let o = open_as(&core, "r1");
        let agent = AgentClaim {
            session: "s".into(),
            chat: "c".into(),
            tool_call_id: Some("call_1".into()),
        };
        // Asked at once, the root list already holds the new terminal.
        let root = ahp_types::ROOT_RESOURCE_URI;
        let Some(SnapshotState::Root(r)) = core.snapshot(root).map(|s| s.state) else {
            panic!("no root snapshot")
        };
        assert_eq!(r.terminals.map(|t| t.len()), Some(1));
        tokio::time::sleep(ROOT_SETTLE * 2).await;
        let mut feed = core.follow();
        // A short call: the claim taken and given back. The terminal's own channel says
        // so; the root list, back where it was, is not published again.
        claim(&core, "r1", agent.active());
        claim(&core, "r1", agent.background());
        tokio::time::sleep(ROOT_SETTLE * 2).await;
        let seen: Vec<_> = std::iter::from_fn(|| feed.try_recv().ok()).collect();
        let kinds = |f: fn(&StateAction) -> bool| seen.iter().filter(|e| f(&e.action)).count();
        assert_eq!(kinds(|a| matches!(a, StateAction::TerminalClaimed(_))), 2);
        assert_eq!(
            kinds(|a| matches!(a, StateAction::RootTerminalsChanged(_))),
            0
        );
        // A long call: held past the settle time, the claim shows in the root list, and
        // so does its return.
        claim(&core, "r1", agent.active());
        tokio::time::sleep(ROOT_SETTLE * 2).await;
        let lists = root_lists(&mut feed);
        assert_eq!(lists.len(), 1, "{lists:?}");
        assert_eq!(lists[0][0].claim, agent.active());
        claim(&core, "r1", agent.background());
        tokio::time::sleep(ROOT_SETTLE * 2).await;
        let lists = root_lists(&mut feed);
        assert_eq!(lists.len(), 1, "{lists:?}");
        assert_eq!(lists[0][0].claim, agent.background());
        o.shell.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn a_replay_asked_before_the_root_list_settles_carries_the_list_as_it_is() {
        let core = core();
        let a = open_as(&core, "q1");
        let b = open_as(&core, "q2");
        let root: BTreeSet<String> = [ahp_types::ROOT_RESOURCE_URI.to_string()].into();
        let replay = core.replay_after(0, &root).unwrap();
        let StateAction::RootTerminalsChanged(list) = &replay[0].action else {
            panic!("{replay:?}")
        };
        assert_eq!(list.terminals.len(), 2);
        // Published once; the settle that follows finds nothing new.
        let mut feed = core.follow();
        tokio::time::sleep(ROOT_SETTLE * 2).await;
        assert!(root_lists(&mut feed).is_empty());
        a.shell.abort();
        b.shell.abort();
    }
}
