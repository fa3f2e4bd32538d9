//! The container entrypoint's validation, run under bash as the container would run it.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::process::{Command, Output};

const SERVER_BIN: &str = env!("CARGO_BIN_EXE_interactive-terminal-mcp");

fn run(env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut c = Command::new("bash");
    c.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/container/entrypoint.sh"
    ))
    .args(args)
    .env_clear()
    .env("PATH", "/usr/local/bin:/usr/bin:/bin")
    .env("PM_TERM_SERVER_BIN", SERVER_BIN);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn defaults_with_a_token_are_valid() {
    let o = run(&[("PM_INTERACTIVE_TERMINAL_TOKEN", "t")], &["--check-env"]);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains("host aliases [host.containers.internal, host.docker.internal], port 45459"),
        "{e}"
    );
    assert!(e.contains("configuration ok"));
}

#[test]
fn an_alias_override_is_tried_first() {
    let o = run(
        &[
            ("PM_INTERACTIVE_TERMINAL_TOKEN", "t"),
            ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "gateway.lan"),
            ("PM_INTERACTIVE_TERMINAL_HOST_FALLBACK_ALIAS", "10.0.2.2"),
            ("PM_INTERACTIVE_TERMINAL_HOST_PORT", "5000"),
        ],
        &["--check-env"],
    );
    assert!(o.status.success());
    assert!(
        stderr(&o)
            .contains("host aliases [gateway.lan, host.containers.internal, 10.0.2.2], port 5000")
    );
}

#[test]
fn missing_and_bad_values_are_diagnosed() {
    let t = ("PM_INTERACTIVE_TERMINAL_TOKEN", "t");
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![], "PM_INTERACTIVE_TERMINAL_TOKEN is required"),
        (
            vec![t, ("PM_INTERACTIVE_TERMINAL_HOST_PORT", "70000")],
            "PM_INTERACTIVE_TERMINAL_HOST_PORT 70000 is not a TCP port",
        ),
        (
            vec![t, ("PM_INTERACTIVE_TERMINAL_HOST_PORT", "http")],
            "PM_INTERACTIVE_TERMINAL_HOST_PORT must be a positive integer, not \"http\"",
        ),
        (
            vec![t, ("PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS", "-5")],
            "PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS must be a positive integer",
        ),
        (
            vec![t, ("PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS", "0")],
            "PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS must be a positive integer",
        ),
        (
            vec![t, ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "bad host")],
            "not a host name",
        ),
    ];
    for (env, want) in cases {
        let o = run(&env, &["--check-env"]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{env:?}: {e}");
        assert!(e.contains(want), "{env:?}: wanted {want:?} in {e}");
        assert!(e.contains("PM_TERM_INVALID_MODE"));
    }
    // Values the server will not start with: status 2, the variable named.
    for (name, value) in [
        ("PM_TERM_ADAPTER_MODE", "gui"),
        ("PM_RUNNING_IN_CONTAINER", "maybe"),
    ] {
        let o = run(&[t, (name, value)], &["--check-env"]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}={value}: {e}");
        assert!(e.contains(name), "{name}={value}: {e}");
    }
}

/// The server alone decides: what the entrypoint reports for an input is exactly what the
/// server started with that input does. Each case: the environment, whether the bridge is
/// usable (the check's status 0) and what an interactive request then gets.
#[tokio::test(flavor = "multi_thread")]
async fn the_entrypoint_and_the_server_agree_on_every_input() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port().to_string()
    };
    let port = closed.as_str();
    let spaced = format!(" {port}");
    let cases: Vec<(Vec<(&str, &str)>, i32)> = vec![
        (
            vec![
                ("PM_RUNNING_IN_CONTAINER", "TRUE"),
                ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port),
            ],
            0,
        ),
        (
            vec![
                ("PM_RUNNING_IN_CONTAINER", "on"),
                ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port),
            ],
            0,
        ),
        (
            vec![("PM_INTERACTIVE_TERMINAL_HOST_PORT", spaced.as_str())],
            0,
        ),
        (
            vec![("PM_INTERACTIVE_TERMINAL_HOST_PORT", "99999999999999999999")],
            1,
        ),
        (
            vec![
                ("PM_INTERACTIVE_TERMINAL_HOST_PORT", port),
                ("PM_INTERACTIVE_TERMINAL_TOKEN", "   "),
            ],
            1,
        ),
    ];
    for (extra, status) in cases {
        let mut env = vec![
            ("PM_INTERACTIVE_TERMINAL_TOKEN", "t"),
            ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "127.0.0.1"),
            ("PM_INTERACTIVE_TERMINAL_HOST_FALLBACK_ALIAS", "127.0.0.1"),
            ("PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS", "500"),
        ];
        env.retain(|(k, _)| !extra.iter().any(|(e, _)| e == k));
        env.extend(extra.iter().copied());
        let o = run(&env, &["--check-env"]);
        assert_eq!(o.status.code(), Some(status), "{env:?}: {}", stderr(&o));
        // The same input, straight to the server.
        let mut direct = Command::new(SERVER_BIN);
        direct
            .arg("--check-config")
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            // The entrypoint's defaults, then the case's values over them.
            .env("PM_RUNNING_IN_CONTAINER", "true")
            .env("PM_TERM_ADAPTER_MODE", "container_bridge")
            .envs(env.iter().copied());
        assert_eq!(
            direct.output().unwrap().status.code(),
            Some(status),
            "{env:?}"
        );
        // And the server the entrypoint starts acts on that verdict.
        let mut cmd = tokio::process::Command::new("bash");
        cmd.arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/container/entrypoint.sh"
        ))
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("PM_TERM_SERVER_BIN", SERVER_BIN)
        .env("PM_TERM_LOG", "error")
        .current_dir(std::env::temp_dir())
        .envs(env.iter().copied());
        let s = common::connect(cmd, true).await;
        let r = s
            .call(serde_json::json!({"action": "execute",
                "invocation": {"mode": "interactive", "intent": "open_only"}}))
            .await;
        let want = if status == 0 {
            "PM_TERM_GUI_UNAVAILABLE"
        } else {
            "PM_TERM_INVALID_MODE"
        };
        assert_eq!(common::code(&r), want, "{env:?}: {r:#}");
        // The check's diagnostics went to stderr: the MCP stream on stdout stayed clean.
        let h = s.call(common::headless("echo clean")).await;
        assert_eq!(h["result"]["stdout"], "clean\n");
        s.stop().await;
    }
}

#[test]
fn local_mode_needs_no_token() {
    let o = run(&[("PM_TERM_ADAPTER_MODE", "local")], &["--check-env"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn it_execs_the_server_even_with_problems() {
    // Problems are reported, and the server still starts: headless work is unaffected (the
    // agreement test drives such a server over MCP). Arguments reach the server unchanged.
    let o = run(&[], &["--version"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("interactive-terminal-mcp "));
    // Stdin closed: the server starts, finds no client and ends; the problem was said first.
    let o = run(&[], &[]);
    let e = stderr(&o);
    assert!(
        e.contains("PM_INTERACTIVE_TERMINAL_TOKEN is required"),
        "{e}"
    );
    assert!(o.stdout.is_empty(), "nothing but MCP on stdout");
    assert_ne!(o.status.code(), Some(2), "{e}");
    let o = run(&[("PM_TERM_SERVER_BIN", "/nonexistent/server")], &[]);
    assert_eq!(o.status.code(), Some(127));
}

#[test]
fn a_value_the_server_refuses_stops_the_container_at_start() {
    // A mode that does not exist is not a bridge problem: the server would refuse it, so the
    // entrypoint says so and stops, instead of exec'ing a server that exits at once.
    let o = run(
        &[
            ("PM_INTERACTIVE_TERMINAL_TOKEN", "t"),
            ("PM_TERM_ADAPTER_MODE", "gui"),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("refuses to start"), "{}", stderr(&o));
}

/// The container scripts pass the linters they have: shellcheck for the entrypoint and the
/// image builder (the test suite's set-up installs it).
#[test]
fn the_entrypoint_is_shellcheck_clean() {
    let o = Command::new("shellcheck")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/container/entrypoint.sh"
        ))
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/container-image"
        ))
        .output()
        .expect("shellcheck is installed by scripts/test");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

/// `run-container.ps1` is an MCP client's stdio command: nothing it says may reach stdout,
/// and the token never goes on a command line. (No PowerShell can be installed from the
/// package registries these checks run with, so its rules are checked on the text.)
#[test]
fn the_windows_launcher_keeps_stdout_for_mcp_and_the_token_off_the_command_line() {
    let script =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/run-container.ps1")).unwrap();
    let code: Vec<&str> = script
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    for writer in [
        "Write-Warning",
        "Write-Host",
        "Write-Output",
        "Write-Information",
        "echo ",
    ] {
        assert!(
            !code.iter().any(|l| l.contains(writer)),
            "{writer} writes to stdout under pwsh -File"
        );
    }
    assert!(
        !code.iter().any(|l| l.contains("TOKEN=$")),
        "the token goes by name (-e NAME), never as NAME=value"
    );
    assert!(
        code.iter()
            .any(|l| l.contains("[Console]::Error.WriteLine"))
    );
    assert!(
        code.iter()
            .any(|l| l.contains("PM_INTERACTIVE_TERMINAL_HOST_FALLBACK_ALIAS"))
    );
}
