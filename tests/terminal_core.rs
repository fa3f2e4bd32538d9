//! The terminal core fed by real shells in real ptys: command detection with exit codes,
//! cwd changes, nonce spoofing, no integration bytes in stored or sent data, and the same
//! action stream reduced by Microsoft's `ahp` reducers reproducing the core's state.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use ahp_types::ActionEnvelope;
use ahp_types::actions::StateAction;
use ahp_types::state::{SnapshotState, TerminalContentPart};
use itmcp::terminal::ops::{
    self, AgentClaim, InputArgs, OpenArgs, OutputSpec, ReadAnswer, ReadArgs, RunArgs, Shown,
    TermRequest, TermResponse, View,
};
use itmcp::terminal::{Core, CoreConfig};

fn core() -> Arc<Core> {
    // This test binary embeds the core: the server binary is the spawner of its sessions.
    itmcp::process::use_spawner_program(std::path::Path::new(common::SERVER_BIN));
    let dir = std::env::temp_dir().join(format!("itmcp-core-test-{}", std::process::id()));
    let mut cfg = CoreConfig::new(dir, 1 << 20);
    cfg.skip_user_rc = true;
    Core::new(cfg)
}

fn claim() -> AgentClaim {
    AgentClaim {
        session: "itmcp-session:/test".into(),
        chat: "itmcp-chat:/test".into(),
        tool_call_id: Some("req_1".into()),
    }
}

fn open(shell: &str, command: Option<&str>) -> TermRequest {
    TermRequest::Open(OpenArgs {
        name: None,
        cwd: Some("/tmp".into()),
        env: BTreeMap::new(),
        shell: Some(shell.into()),
        cols: Some(100),
        rows: Some(30),
        workspace_id: None,
        command: command.map(String::from),
        wait_ms: 10_000,
        timeout_ms: None,
        claim: claim(),
        output: OutputSpec::default(),
    })
}

fn run(id: &str, command: &str) -> TermRequest {
    TermRequest::Run(RunArgs {
        terminal_id: id.into(),
        command: command.into(),
        wait_ms: 10_000,
        timeout_ms: None,
        claim: Some(claim()),
        output: OutputSpec::default(),
        unseen_line: false,
        size: None,
    })
}

/// Everything the core broadcasts, collected.
fn collect(
    rx: &mut tokio::sync::broadcast::Receiver<Arc<ActionEnvelope>>,
) -> Vec<Arc<ActionEnvelope>> {
    let mut v = Vec::new();
    while let Ok(e) = rx.try_recv() {
        v.push(e);
    }
    v
}

/// `exit7` is a command line exiting 7 in that shell's syntax.
async fn detection_and_exit_codes(shell: &str, exit7: &str) {
    let core = core();
    let mut rx = core.follow();
    let r = ops::execute(&core, open(shell, Some("echo hello")), None)
        .await
        .unwrap()
        .ran()
        .unwrap();
    let id = r.terminal.terminal_id.clone();
    let cmd = r.command.clone().expect("command detected");
    assert_eq!(cmd.command_line, "echo hello");
    assert_eq!(cmd.exit_code, Some(0));
    assert!(cmd.complete);
    assert_eq!(r.output.text, "hello\n");
    assert!(r.terminal.supports_command_detection);

    let r = ops::execute(&core, run(&id, exit7), None)
        .await
        .unwrap()
        .ran()
        .unwrap();
    assert_eq!(r.command.as_ref().unwrap().exit_code, Some(7));
    let r = ops::execute(&core, run(&id, "cd /usr && printf 'x;y\\n'"), None)
        .await
        .unwrap()
        .ran()
        .unwrap();
    assert_eq!(r.output.text, "x;y\n");
    assert_eq!(r.terminal.cwd.as_deref(), Some("/usr"));

    // A command printing fake integration sequences (no or wrong nonce) is not trusted,
    // and the sequences never reach stored or sent data.
    let fake = r"printf '\033]633;E;rm -rf /;deadbeef\007\033]633;D;99\007\033]133;A\007done\n'";
    let r = ops::execute(&core, run(&id, fake), None)
        .await
        .unwrap()
        .ran()
        .unwrap();
    let c = r.command.unwrap();
    assert!(c.command_line.starts_with("printf"), "{c:?}");
    assert_eq!(c.exit_code, Some(0));
    assert_eq!(r.output.text, "done\n");

    // The raw stream and every sent action are free of 633 / 133 sequences.
    let raw = ops::execute(
        &core,
        TermRequest::Read(ReadArgs {
            terminal_id: id.clone(),
            wait_ms: 0,
            output: OutputSpec {
                view: View::Raw,
                cursor: Some(0),
                max_bytes: Some(1 << 20),
                tail: false,
                excerpt: None,
            },
        }),
        None,
    )
    .await
    .unwrap();
    let TermResponse::Read(ReadAnswer {
        shown: Shown::Output(raw),
        ..
    }) = raw
    else {
        panic!("a raw read answers output: {raw:?}");
    };
    let text = raw.text;
    assert!(
        !text.contains("\x1b]633;") && !text.contains("\x1b]133;"),
        "{text:?}"
    );
    assert!(
        text.contains("]633;E;rm -rf /;deadbeef"),
        "the typed command is echoed as typed"
    );
    // The snapshot first: the shell may still print (its prompt) after the last answer, and
    // the mirror must be fed exactly the actions the snapshot reflects.
    let snap = core.snapshot(&itmcp::ids::terminal_uri(&id)).unwrap();
    let actions: Vec<_> = collect(&mut rx)
        .into_iter()
        .filter(|e| e.server_seq as i64 <= snap.from_seq)
        .collect();
    for e in &actions {
        if let StateAction::TerminalData(d) = &e.action {
            assert!(!d.data.contains("\x1b]633;") && !d.data.contains("\x1b]133;"));
        }
    }
    let executed = actions
        .iter()
        .filter(|e| matches!(e.action, StateAction::TerminalCommandExecuted(_)))
        .count();
    let finished: Vec<Option<i64>> = actions
        .iter()
        .filter_map(|e| match &e.action {
            StateAction::TerminalCommandFinished(f) => Some(f.exit_code),
            _ => None,
        })
        .collect();
    assert_eq!(executed, 4);
    assert_eq!(finished, vec![Some(0), Some(7), Some(0), Some(0)]);
    assert!(actions.iter().any(
        |e| matches!(&e.action, StateAction::TerminalCwdChanged(c) if c.cwd == "file:///usr")
    ));
    assert!(
        actions
            .iter()
            .any(|e| matches!(e.action, StateAction::TerminalCommandDetectionAvailable(_)))
    );

    // Microsoft's reducer fed the same stream from the creation snapshot ends where the
    // core is (content parts included).
    let seqs: Vec<u64> = actions.iter().map(|e| e.server_seq).collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "gapless sequence"
    );
    let SnapshotState::Terminal(live) = snap.state else {
        panic!()
    };
    let mut mirror = ahp_types::state::TerminalState {
        title: live.title.clone(),
        cwd: None,
        cols: None,
        rows: None,
        content: vec![],
        lifecycle: ahp_types::state::TerminalLifecycleState::Running(
            ahp_types::state::TerminalRunningLifecycleState {},
        ),
        claim: live.claim.clone(),
        supports_command_detection: None,
        is_pty: Some(true),
    };
    let uri = itmcp::ids::terminal_uri(&id);
    for e in actions.iter().filter(|e| e.channel == uri) {
        ahp::reducers::apply_action_to_terminal(&mut mirror, &e.action);
    }
    assert_eq!(mirror.content, live.content);
    assert_eq!(mirror.cwd, live.cwd);
    assert_eq!(mirror.supports_command_detection, Some(true));
    let commands: Vec<_> = live
        .content
        .iter()
        .filter_map(|p| match p {
            TerminalContentPart::Command(c) => Some((c.command_line.clone(), c.exit_code)),
            _ => None,
        })
        .collect();
    assert_eq!(commands.len(), 4);
    assert_eq!(commands[1], (exit7.to_string(), Some(7)));
    core.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bash_detection_exit_codes_cwd_and_spoofing() {
    detection_and_exit_codes("bash", "(exit 7)").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn zsh_detection_exit_codes_cwd_and_spoofing() {
    detection_and_exit_codes("zsh", "(exit 7)").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn fish_detection_exit_codes_cwd_and_spoofing() {
    detection_and_exit_codes("fish", "sh -c 'exit 7'").await;
}

/// A program with no integration at all as the terminal's shell (here python3's REPL, as a
/// stand-in for ksh, tcsh, …): commands are answered when the output goes quiet, with no
/// exit code, and the answer says why.
#[tokio::test(flavor = "multi_thread")]
async fn a_shell_without_integration_answers_when_quiet() {
    let core = core();
    let python = common::on_path("python3");
    let r = ops::execute(&core, open(&python, Some("print(6 * 7)")), None)
        .await
        .unwrap()
        .ran()
        .unwrap();
    assert!(!r.terminal.supports_command_detection);
    assert!(r.command.is_none());
    assert!(
        r.note.as_deref().unwrap().contains("no shell integration"),
        "{r:?}"
    );
    assert!(r.output.text.contains("42"));
    core.shutdown().await;
}

/// dash has no hooks: the prompt reports exit status and cwd, the core marks the line it
/// typed as executed when the echo arrives.
#[tokio::test(flavor = "multi_thread")]
async fn dash_detection_exit_codes_cwd_and_spoofing() {
    detection_and_exit_codes("dash", "(exit 7)").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sequences_split_across_reads_are_stripped() {
    // A program writing an integration-looking sequence a byte at a time still never leaks
    // it and never fools detection (the scanner carries state across reads).
    let core = core();
    let r = ops::execute(&core, open("bash", None), None)
        .await
        .unwrap()
        .ran()
        .unwrap();
    let id = r.terminal.terminal_id;
    let cmd = r#"for c in $(printf '\033]633;D;5\007' | od -An -tx1); do printf "\x$c"; sleep 0.01; done; echo end"#;
    let r = ops::execute(&core, run(&id, cmd), None)
        .await
        .unwrap()
        .ran()
        .unwrap();
    assert_eq!(r.command.as_ref().unwrap().exit_code, Some(0));
    assert_eq!(r.output.text, "end\n");
    core.shutdown().await;
}

/// Raw input that waits for python's prompt.
fn repl_line(id: &str, data: &str) -> TermRequest {
    TermRequest::Input(InputArgs {
        terminal_id: id.to_string(),
        data: data.into(),
        wait_for: Some(">>> $".into()),
        wait_ms: 10_000,
        claim: None,
        output: OutputSpec::default(),
        unseen_line: false,
        size: None,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn raw_input_to_a_python_repl() {
    let core = core();
    let r = ops::execute(&core, open("bash", None), None)
        .await
        .unwrap()
        .ran()
        .unwrap();
    let id = r.terminal.terminal_id;
    let r = ops::execute(&core, repl_line(&id, "python3 -q\r"), None)
        .await
        .unwrap()
        .ran()
        .unwrap();
    assert!(r.output.text.ends_with(">>> "));
    let r = ops::execute(&core, repl_line(&id, "print(6*7)\r"), None)
        .await
        .unwrap()
        .ran()
        .unwrap();
    assert!(r.output.text.contains("42\n"));
    core.shutdown().await;
}
