//! The container entrypoint's validation, run under bash as the container would run it.
#![allow(clippy::unwrap_used, clippy::panic)]

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
        (vec![], "PM_INTERACTIVE_TERMINAL_TOKEN is missing"),
        (
            vec![t, ("PM_INTERACTIVE_TERMINAL_HOST_PORT", "70000")],
            "PM_INTERACTIVE_TERMINAL_HOST_PORT=70000",
        ),
        (
            vec![t, ("PM_INTERACTIVE_TERMINAL_HOST_PORT", "http")],
            "must be a TCP port",
        ),
        (
            vec![t, ("PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS", "-5")],
            "PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS=-5",
        ),
        (
            vec![t, ("PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS", "0")],
            "PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS=0",
        ),
        (
            vec![t, ("PM_INTERACTIVE_TERMINAL_HOST_ALIAS", "bad host")],
            "not a host name",
        ),
        (
            vec![t, ("PM_TERM_ADAPTER_MODE", "gui")],
            "PM_TERM_ADAPTER_MODE=gui",
        ),
        (
            vec![t, ("PM_RUNNING_IN_CONTAINER", "maybe")],
            "PM_RUNNING_IN_CONTAINER=maybe",
        ),
    ];
    for (env, want) in cases {
        let o = run(&env, &["--check-env"]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{env:?}: {e}");
        assert!(e.contains(want), "{env:?}: wanted {want:?} in {e}");
        assert!(e.contains("PM_TERM_INVALID_MODE"));
    }
}

#[test]
fn local_mode_needs_no_token() {
    let o = run(&[("PM_TERM_ADAPTER_MODE", "local")], &["--check-env"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn it_execs_the_server_even_with_problems() {
    // Problems are reported, and the server still starts: headless work is unaffected.
    let o = run(&[], &["--version"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("interactive-terminal-mcp "));
    assert!(stderr(&o).contains("PM_INTERACTIVE_TERMINAL_TOKEN is missing"));
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
