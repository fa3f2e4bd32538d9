//! Errors a container user meets name their cause: a working directory the server's user
//! cannot enter (a mounted workspace owned by someone else, mode 0700) is named, as the
//! request's or as the server's own; a program that cannot start is not called a malformed
//! request. Through the real binary, as an unprivileged user (as in a container), when the
//! tests run as root.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::os::unix::fs::PermissionsExt;

use common::*;
use serde_json::{Value, json};

const NOBODY: &str = "65534";

fn headless(command: &str, cwd: Option<&str>) -> Value {
    let mut r = json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": command}});
    if let Some(cwd) = cwd {
        r["runtime"] = json!({"cwd": cwd});
    }
    r
}

/// The server as `nobody` (through setpriv), or as this user when not root.
async fn unprivileged(env: &[(&str, &str)]) -> Server {
    let root = nix_uid() == 0;
    let launch = if root {
        let uid = format!("--reuid={NOBODY}");
        let gid = format!("--regid={NOBODY}");
        server()
            .bin(&on_path("setpriv"))
            .args(&[&uid, &gid, "--clear-groups", "--", SERVER_BIN])
    } else {
        server()
    };
    launch.envs(env).start().await
}

fn nix_uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|u| u.parse().ok())
        .unwrap()
}

fn locked(path: &std::path::Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_directory_that_cannot_be_entered_is_named() {
    if nix_uid() != 0 {
        eprintln!("as an ordinary user no other user's directory can be made here: run as root");
        return;
    }
    let s = unprivileged(&[("PM_TERM_NO_USER_RC", "1")]).await;
    // The server's own directory stops being enterable, as a mounted 0700 workspace is.
    let own = std::fs::read_link(format!("/proc/{}/cwd", s.pid)).unwrap();
    locked(&own);
    let r = s.call(headless("pwd", None)).await;
    assert_eq!(r["error"]["code"], "PM_TERM_INVALID_MODE", "{r:#}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains(&own.display().to_string()), "{r:#}");
    assert!(message.contains("cannot be entered"), "{r:#}");
    assert_eq!(
        r["error"]["details"]["working_directory"],
        own.display().to_string()
    );
    let advice = r["fallback"]["user_message"].as_str().unwrap();
    assert!(
        !advice.contains("malformed") && advice.contains("runtime.cwd"),
        "{r:#}"
    );
    // Another directory it can enter: the command runs there.
    let r = s.call(headless("pwd", Some("/tmp"))).await;
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    // A directory the request names that cannot be entered: named, as the request's field.
    let asked = scratch_dir();
    locked(&asked);
    let r = s
        .call(headless("pwd", Some(&asked.display().to_string())))
        .await;
    assert_eq!(r["error"]["code"], "PM_TERM_INVALID_PAYLOAD", "{r:#}");
    assert_eq!(r["error"]["details"]["field"], "runtime.cwd", "{r:#}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&asked.display().to_string()) && message.contains("cannot be entered"),
        "{r:#}"
    );
    // So is a terminal's.
    let r = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
            "runtime": {"cwd": asked.display().to_string()}}))
        .await;
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("cannot be entered"), "{r:#}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_that_cannot_start_is_not_a_malformed_request() {
    // The operator's shell for command lines is a file that cannot be run.
    let dir = scratch_dir();
    let shell = dir.join("not-a-shell");
    std::fs::write(&shell, "plain text").unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o644)).unwrap();
    let s = unprivileged(&[("PM_TERM_SHELL", &shell.display().to_string())]).await;
    let r = s.call(headless("echo hi", Some("/tmp"))).await;
    assert_eq!(r["error"]["code"], "PM_TERM_INVALID_MODE", "{r:#}");
    assert_eq!(
        r["error"]["details"]["program"],
        shell.display().to_string()
    );
    let advice = r["fallback"]["user_message"].as_str().unwrap();
    assert!(
        !advice.contains("malformed") && advice.contains("operator"),
        "{r:#}"
    );
    s.stop().await;
}
