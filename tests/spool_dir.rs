//! The spool directory as operators and other users leave it: one that cannot be made (a
//! file in the way), one another user made first under a shared temporary directory, one of
//! ours that others may write to. Through the real binaries (the MCP server, and the host
//! service over its WebSocket): output is never lost, the operator is told once and
//! clearly, and nothing is written where another user could change it (every terminal's
//! shell sources scripts from there).
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use common::*;
use serde_json::json;

/// Lines of `seq` in a run: about 2.6 MB, forty times the memory bound below.
const SEQ_LINES: u32 = 400_000;

/// A memory bound small enough that `seq` passes it many times over.
const MEMORY_BYTES: &str = "65536";

/// What the server says when a spill is refused (once per run of refusals).
const SPILL_REFUSED: &str = "spool spill failed";

/// Run `seq`, then read its output back by cursor in 1 MiB pieces: every byte, in order.
async fn seq_reads_back_whole(s: &Server) {
    let mut req = headless(&format!("seq 1 {SEQ_LINES}"));
    req["runtime"] = json!({"wait_ms": 60000});
    req["output"] = json!({"max_bytes": 1024});
    let p = s.call(req).await;
    assert_eq!(p["result"]["exit_code"], 0, "{p:#}");
    let id = p["identity"]["session_id"].as_str().unwrap().to_string();
    let want: String = (1..=SEQ_LINES).map(|i| format!("{i}\n")).collect();
    let mut got = String::new();
    loop {
        let r = s
            .call(
                json!({"action": "read_output", "target": {"session_id": id},
                "output": {"stdout_cursor": got.len(), "max_bytes": 1_048_576}}),
            )
            .await;
        let chunk = r["result"]["stdout"].as_str().unwrap();
        if chunk.is_empty() {
            break;
        }
        got.push_str(chunk);
        assert_eq!(r["result"]["cursor"]["stdout"], got.len());
    }
    assert!(
        got == want,
        "read back {} of {} bytes, or not in order",
        got.len(),
        want.len()
    );
}

/// A sticky temporary directory (as `/tmp` is) in which another user (`nobody`, uid 65534)
/// made `<prefix><our uid>` first, open to all; `None` (the test skipped) unless root, as
/// only root can make a directory another user's.
fn made_first_by_another_user(prefix: &str) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: only root can make a directory another user's");
        return None;
    }
    let tmp = scratch_dir();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let theirs = tmp.join(format!("{prefix}{}", nix::unistd::geteuid().as_raw()));
    std::fs::create_dir(&theirs).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    Some((tmp, theirs))
}

/// Another user's directory as they made it: nothing written into it, its mode unchanged.
fn left_as_it_was(theirs: &std::path::Path) {
    let left: Vec<_> = std::fs::read_dir(theirs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(
        left.is_empty(),
        "written into another user's directory: {left:?}"
    );
    assert_eq!(
        std::fs::metadata(theirs).unwrap().mode() & 0o7777,
        0o777,
        "left as it was"
    );
}

/// `--check-config` under `env` exits 1 saying each of `says`; then the server starts under
/// it anyway (its stderr kept), as an operator who did not check would start it.
async fn refused_then_started(env: &[(&str, &str)], says: &[&str]) -> Server {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_interactive-terminal-mcp"));
    cmd.arg("--check-config").current_dir(scratch_dir());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{said}");
    for s in says {
        assert!(
            said.contains(s),
            "--check-config does not say {s:?}: {said}"
        );
    }
    server().envs(env).capture_stderr().start().await
}

#[tokio::test]
async fn a_spool_directory_that_cannot_be_made_loses_no_output_and_says_so_once() {
    let base = scratch_dir();
    std::fs::write(base.join("file"), "in the way").unwrap();
    let dir = base.join("file/spool").display().to_string();
    let env = [
        ("PM_TERM_SPOOL_DIR", dir.as_str()),
        ("PM_TERM_OUTPUT_MEMORY_BYTES", MEMORY_BYTES),
        ("PM_TERM_INTERACTIVE_SHELL", "bash"),
    ];
    let s = refused_then_started(&env, &[&dir, "PM_TERM_SPOOL_DIR"]).await;
    seq_reads_back_whole(&s).await;
    // A terminal cannot start without its scripts: an answer, not a hang, and the server
    // goes on serving.
    let p = s.call(open_terminal()).await;
    assert_eq!(p["success"], false, "{p:#}");
    assert_eq!(code(&p), "PM_TERM_INTERNAL", "{p:#}");
    seq_reads_back_whole(&s).await;
    let log = s.stderr.lock().unwrap().clone();
    assert!(
        log.contains("the spool directory is unusable") && log.contains(&dir),
        "the operator is told at start: {log}"
    );
    // Two commands of forty times the bound each: one warning per command's stream, not one
    // per read of the pipe.
    let warned = log.matches(SPILL_REFUSED).count();
    assert_eq!(warned, 2, "{log}");
    s.stop().await;
}

/// Another user creates `/tmp/interactive-terminal-mcp-<uid>` before the server does (any
/// user may create a name in a shared `/tmp`). The server must not write there: whoever owns
/// it could swap the scripts a terminal's shell is about to source.
#[tokio::test]
async fn a_spool_directory_another_user_made_first_is_not_written_to() {
    let Some((tmp, theirs)) = made_first_by_another_user("interactive-terminal-mcp-") else {
        return;
    };
    let tmp_s = tmp.display().to_string();
    let env = [
        ("TMPDIR", tmp_s.as_str()),
        ("PM_TERM_OUTPUT_MEMORY_BYTES", MEMORY_BYTES),
        ("PM_TERM_INTERACTIVE_SHELL", "bash"),
    ];
    let s = refused_then_started(&env, &["owned by uid 65534"]).await;
    let p = s.call(open_terminal()).await;
    assert_eq!(
        p["success"], false,
        "no terminal sources scripts from there: {p:#}"
    );
    seq_reads_back_whole(&s).await;
    left_as_it_was(&theirs);
    let log = s.stderr.lock().unwrap().clone();
    assert!(log.contains("owned by uid 65534"), "{log}");
    s.stop().await;
}

/// An operator's spool directory that others may write to (made by hand, or under a umask
/// of 000): narrowed to this user alone, then used as usual.
#[tokio::test]
async fn a_spool_directory_of_ours_that_others_may_write_is_narrowed_and_used() {
    let dir = scratch_dir().join("spool");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let dir_s = dir.display().to_string();
    let s = server()
        .envs(&[
            ("PM_TERM_SPOOL_DIR", dir_s.as_str()),
            ("PM_TERM_OUTPUT_MEMORY_BYTES", MEMORY_BYTES),
            ("PM_TERM_INTERACTIVE_SHELL", "bash"),
            ("PM_TERM_NO_USER_RC", "1"),
        ])
        .capture_stderr()
        .start()
        .await;
    assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
    let p = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": "echo spooled-$((6*7))"}}))
        .await;
    assert_eq!(p["success"], true, "{p:#}");
    assert!(
        p["result"]["output"]
            .as_str()
            .unwrap()
            .contains("spooled-42"),
        "{p:#}"
    );
    seq_reads_back_whole(&s).await;
    let log = s.stderr.lock().unwrap().clone();
    assert!(!log.contains(SPILL_REFUSED), "{log}");
    s.stop().await;
}

/// A host (`interactive-terminal`, the bundled and container-bridge path) under an unusable
/// spool directory: every `createTerminal` over its WebSocket is answered with an error, not
/// left hanging, the host goes on serving, and its log says why once at start.
async fn host_refuses_terminals(h: &HostProc, log: &std::path::Path, says: &str) {
    let client = ahp_client(h, "refused").await;
    for n in 0..2 {
        let uri = format!("ahp-terminal:/term_{}", unique(&format!("refused{n}")));
        let r = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            create_terminal(&client, &uri, "refused"),
        )
        .await
        .expect("createTerminal is answered");
        match r {
            Err(ahp::ClientError::Rpc(e)) => assert!(
                e.message.contains(says),
                "the person or program that asked is told why: {e:?}"
            ),
            other => panic!("a terminal started, or no error of its own: {other:?}"),
        }
    }
    client.ping().await.unwrap();
    let said = std::fs::read_to_string(log).unwrap();
    assert_eq!(
        said.matches("the spool directory is unusable").count(),
        1,
        "told once at start: {said}"
    );
    assert!(said.contains(says), "the log names {says:?}: {said}");
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_whose_spool_directory_cannot_be_made_opens_no_terminal_and_goes_on_serving() {
    let base = scratch_dir();
    std::fs::write(base.join("file"), "in the way").unwrap();
    let dir = base.join("file/spool").display().to_string();
    let log = base.join("host.log");
    let h = host("tok-spool-file")
        .args(&["--spool-dir", &dir])
        .log_to(&log)
        .start();
    host_refuses_terminals(&h, &log, &dir).await;
}

/// The host's default spool directory, `$TMPDIR/interactive-terminal-<uid>`, made first by
/// another user in a shared temporary directory: no terminal's shell sources scripts from
/// there, and nothing is written into it.
#[tokio::test(flavor = "multi_thread")]
async fn a_host_whose_spool_directory_another_user_made_first_writes_nothing_there() {
    let Some((tmp, theirs)) = made_first_by_another_user("interactive-terminal-") else {
        return;
    };
    let log = scratch_dir().join("host.log");
    let h = host("tok-spool-theirs")
        .env("TMPDIR", &tmp.display().to_string())
        .log_to(&log)
        .start();
    host_refuses_terminals(&h, &log, "owned by uid 65534").await;
    left_as_it_was(&theirs);
}
