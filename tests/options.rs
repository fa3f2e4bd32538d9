//! Options as a user meets them: both binaries started from a shell with flags and
//! environment variables, bad values refused at start with a message naming the option, the
//! log filter the operator gave winning over a shell-wide RUST_LOG, and `--help` in step with
//! the README.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

use std::process::{Command, Output, Stdio};

const SERVER_BIN: &str = env!("CARGO_BIN_EXE_interactive-terminal-mcp");
const HOST_BIN: &str = env!("CARGO_BIN_EXE_interactive-terminal");

/// `bin args…` run by bash as a user's shell would, with `env` exported, stdin closed.
fn run(bin: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut line = shell_words::quote(bin).into_owned();
    for a in args {
        line.push(' ');
        line.push_str(&shell_words::quote(a));
    }
    let mut c = Command::new("bash");
    c.args(["-c", &line])
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", std::env::temp_dir())
        .env("PM_TERM_NO_USER_RC", "1")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Flags, environment, and what the refusal must say.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a [&'a str]);

#[test]
fn bad_values_stop_the_server_at_start_naming_the_option() {
    let cases: &[Case] = &[
        (
            &["--adapter", "foo"],
            &[],
            &["--adapter", "auto, local, bundled, container_bridge"],
        ),
        (
            &[],
            &[("PM_TERM_ADAPTER_MODE", "gui")],
            &["--adapter", "PM_TERM_ADAPTER_MODE"],
        ),
        (
            &[],
            &[("PM_INTERACTIVE_TERMINAL_SPAWN_TIMEOUT_MS", "0")],
            &[
                "--spawn-timeout-ms",
                "PM_INTERACTIVE_TERMINAL_SPAWN_TIMEOUT_MS",
            ],
        ),
        (
            &[],
            &[("PM_INTERACTIVE_TERMINAL_SPAWN_TIMEOUT_MS", "abc")],
            &["--spawn-timeout-ms", "abc"],
        ),
        (&["--max-sessions", "0"], &[], &["--max-sessions"]),
        (&["--approval", "sometimes"], &[], &["--approval"]),
        (
            &[],
            &[("PM_TERM_APPROVE_HEADLESS", "maybe")],
            &["--approve-headless", "PM_TERM_APPROVE_HEADLESS"],
        ),
        (
            &[],
            &[("PM_TERM_ADAPTER_OVERRIDES", "local,everything")],
            &["--adapter-overrides"],
        ),
        (&["--no-such-flag"], &[], &["--no-such-flag"]),
        (
            &[],
            &[("TOKIO_WORKER_THREADS", "two")],
            &["TOKIO_WORKER_THREADS", "'two'"],
        ),
        (
            &[],
            &[("TOKIO_WORKER_THREADS", "0")],
            &["TOKIO_WORKER_THREADS"],
        ),
        (
            &[],
            &[("TOKIO_WORKER_THREADS", "100000")],
            &["TOKIO_WORKER_THREADS", "1 to 1024"],
        ),
        (
            &[],
            &[("PM_TERM_SPOOL_DIR", "~/.cache/terminal-spool")],
            &[
                "PM_TERM_SPOOL_DIR",
                "absolute",
                "write the home directory out",
            ],
        ),
        (&["--spool-dir", "spool"], &[], &["--spool-dir", "absolute"]),
        // The check a container entrypoint runs finds what a start would refuse.
        (
            &["--check-config"],
            &[("TOKIO_WORKER_THREADS", "two")],
            &["TOKIO_WORKER_THREADS"],
        ),
    ];
    for (args, env, wanted) in cases {
        let o = run(SERVER_BIN, args, env);
        let e = stderr(&o);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?} {env:?} was accepted: {e}"
        );
        for w in *wanted {
            assert!(e.contains(w), "{args:?} {env:?}: wanted {w:?} in {e}");
        }
        assert!(o.stdout.is_empty(), "nothing on the MCP channel: {o:?}");
    }
    for (args, env) in [
        (&["--port", "70000"][..], &[][..]),
        (&[], &[("PM_INTERACTIVE_TERMINAL_BIND", "localhost")]),
        (&["--max-terminals", "0"], &[]),
        (&[], &[("TOKIO_WORKER_THREADS", "-1")]),
    ] {
        let o = run(HOST_BIN, args, env);
        assert_eq!(o.status.code(), Some(2), "{args:?} {env:?}: {}", stderr(&o));
    }
}

/// A token on a command line is readable by every local user (`/proc/<pid>/cmdline`, `ps`):
/// each binary refuses one given as a flag, naming the variable to use instead.
#[test]
fn no_token_is_taken_from_a_command_line() {
    let cases: [(&str, &[&str], &str); 3] = [
        (
            SERVER_BIN,
            &["--http-token", "s3cret-s3cret"],
            "PM_TERM_HTTP_TOKEN",
        ),
        (
            SERVER_BIN,
            &["--host-token", "s3cret-s3cret"],
            "PM_INTERACTIVE_TERMINAL_TOKEN",
        ),
        (
            HOST_BIN,
            &["--port", "0", "--token", "s3cret-s3cret"],
            "PM_INTERACTIVE_TERMINAL_TOKEN",
        ),
    ];
    for (bin, args, variable) in cases {
        let o = run(bin, args, &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("command line") && e.contains(variable),
            "{args:?}: {e}"
        );
        assert!(!e.contains("s3cret"), "the refusal repeats the secret: {e}");
    }
}

#[test]
fn empty_variables_count_as_unset_and_good_values_start() {
    // An empty variable (as run-files and compose files leave them) is not a bad value; with
    // stdin closed the server starts, finds no client and ends.
    let o = run(
        SERVER_BIN,
        &[],
        &[
            ("PM_INTERACTIVE_TERMINAL_SPAWN_TIMEOUT_MS", ""),
            ("PM_TERM_ADAPTER_MODE", ""),
            ("PM_TERM_GUI", ""),
            ("PM_TERM_SPOOL_DIR", ""),
            ("PM_TERM_MAX_SESSIONS", "3"),
            ("PM_RUNNING_IN_CONTAINER", "yes"),
            ("PM_TERM_LOG", "info"),
            ("TOKIO_WORKER_THREADS", ""),
        ],
    );
    let e = stderr(&o);
    assert_ne!(o.status.code(), Some(2), "{e}");
    assert!(!e.contains("invalid value"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

/// The worker count the runtime reports at start, from the server's log.
fn workers_started(bin: &str, env: &[(&str, &str)]) -> usize {
    let mut env = env.to_vec();
    env.push(("PM_TERM_LOG", "info"));
    // The host service on a free port, ending when its stdin (closed) does.
    let token = std::env::temp_dir().join(format!("itmcp-workers-{}.token", std::process::id()));
    let host_args = [
        "--port",
        "0",
        "--lifeline",
        "--token-file",
        token.to_str().unwrap(),
    ];
    let args: &[&str] = if bin == HOST_BIN { &host_args } else { &[] };
    let o = run(bin, args, &env);
    let e = stderr(&o);
    let line = e
        .lines()
        .find(|l| l.contains("runtime started"))
        .unwrap_or_else(|| panic!("no start line: {e}"));
    let n = line
        .split("workers=")
        .nth(1)
        .unwrap_or_else(|| panic!("{line}"));
    n.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn the_operators_worker_count_is_the_one_the_runtime_runs() {
    let cores = std::thread::available_parallelism().unwrap().get();
    let default = (cores / 2).clamp(1, 4);
    for bin in [SERVER_BIN, HOST_BIN] {
        assert_eq!(workers_started(bin, &[]), default, "{bin}");
        assert_eq!(
            workers_started(bin, &[("TOKIO_WORKER_THREADS", " ")]),
            default
        );
        assert_eq!(
            workers_started(bin, &[("TOKIO_WORKER_THREADS", "3")]),
            3,
            "{bin}"
        );
    }
    // And the threads are there: a server kept up by an open stdin, with 5 workers asked for
    // (the blocking pool's threads bear the same name, so at least 5).
    let mut c = Command::new(SERVER_BIN);
    c.env("TOKIO_WORKER_THREADS", "5")
        .env("PM_TERM_NO_USER_RC", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let named = |pid: u32| {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|d| {
                d.flatten()
                    .filter(|t| {
                        std::fs::read_to_string(t.path().join("comm"))
                            .is_ok_and(|c| c.starts_with("tokio-rt-worker"))
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut seen = named(child.id());
    while seen < 5 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
        seen = named(child.id());
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen >= 5, "{seen} runtime threads for 5 workers");
}

#[test]
fn the_operators_log_filter_wins_over_rust_log() {
    // With stdin closed the MCP handshake fails: an error every filter but `off` shows.
    let marker = "MCP initialization failed";
    let shown = |env: &[(&str, &str)]| stderr(&run(SERVER_BIN, &[], env)).contains(marker);
    assert!(shown(&[]), "the default filter shows errors");
    assert!(
        !shown(&[("RUST_LOG", "off")]),
        "RUST_LOG applies when no filter is given"
    );
    assert!(
        shown(&[("RUST_LOG", "off"), ("PM_TERM_LOG", "error")]),
        "PM_TERM_LOG wins over a shell-wide RUST_LOG"
    );
    assert!(
        !shown(&[("RUST_LOG", "error"), ("PM_TERM_LOG", "off")]),
        "PM_TERM_LOG off mutes even with RUST_LOG set"
    );
    let o = run(SERVER_BIN, &["--log", "error"], &[("RUST_LOG", "off")]);
    assert!(stderr(&o).contains(marker), "--log wins too");
}

#[test]
fn help_speaks_to_users_and_matches_the_readme() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let mut declared = std::collections::BTreeSet::new();
    for bin in [SERVER_BIN, HOST_BIN] {
        let o = run(bin, &["--help"], &[]);
        assert!(o.status.success());
        let help = String::from_utf8_lossy(&o.stdout).into_owned();
        for internal in ["seed", "§", "003"] {
            assert!(
                !help.contains(internal),
                "{bin} --help mentions {internal:?}"
            );
        }
        for (_, rest) in help
            .match_indices("[env: ")
            .map(|(i, _)| help.split_at(i + 6))
        {
            let var: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            declared.insert(var);
        }
    }
    for var in &declared {
        assert!(
            readme.contains(&format!("`{var}`")),
            "{var} is an option but not in the README"
        );
    }
    let documented: std::collections::BTreeSet<String> = readme
        .lines()
        .filter(|l| l.starts_with("| `PM_"))
        .flat_map(|l| {
            l.split('`')
                .filter(|w| w.starts_with("PM_"))
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect();
    for var in &documented {
        assert!(
            declared.contains(var),
            "the README documents {var}, which no --help declares"
        );
    }
    assert!(declared.len() >= 35, "{declared:?}");
}
