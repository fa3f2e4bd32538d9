//! Shell integration in the set-ups users really have: every rc file of `tests/rc` (bash, zsh,
//! fish; real Debian packages where one ships the thing) is the home of a server started
//! through rmcp's client, and a terminal in it must get exit codes, exact command lines,
//! running full-screen programs and prompt completion right, with not one line of its own
//! in the transcript. Also: the machine user's own home, untouched, and a home made the way
//! `useradd -m` makes one, with an rc that sources several set-ups at once.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::*;
use serde_json::{Value, json};

/// Set-ups checked at once (each is a server and a shell).
const PARALLEL: usize = 3;

/// Text that only a broken integration (or a broken set-up) prints.
const NOISE: &[&str] = &[
    "__pmt",
    "PROMPT_COMMAND",
    "syntax error",
    "command not found",
    "unbound variable",
    "parameter not set",
    "bad substitution",
    "bad pattern",
    "no such file",
    "No such file",
    "not found",
    "decoy",
    "Unknown command",
    "633;",
    "readonly",
];

/// One rc file of the corpus and what comes with it.
struct Setup {
    shell: &'static str,
    name: String,
    rc: String,
    /// Extra files for the home (`#@file`).
    files: Vec<(String, String)>,
    /// Packaged files the set-up sources (`#@needs`).
    needs: Vec<String>,
    false_ends_shell: bool,
    /// The shell the rc replaces itself with (`#@becomes fish`), whose syntax the commands
    /// sent must be in.
    becomes: Option<String>,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rc")
}

fn parse(shell: &'static str, name: String, text: &str) -> Setup {
    let mut files = Vec::new();
    let mut needs = Vec::new();
    let mut becomes = None;
    let mut rc = String::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some((path, body)) = current.as_mut() {
            if line.trim() == "#@end" {
                files.push((std::mem::take(path), std::mem::take(body)));
                current = None;
            } else {
                body.push_str(line);
                body.push('\n');
            }
            continue;
        }
        if let Some(path) = line.strip_prefix("#@file ") {
            current = Some((path.trim().to_string(), String::new()));
        } else if let Some(path) = line.strip_prefix("#@needs ") {
            needs.push(path.trim().to_string());
        } else if let Some(other) = line.strip_prefix("#@becomes ") {
            becomes = Some(other.trim().to_string());
        } else {
            rc.push_str(line);
            rc.push('\n');
        }
    }
    Setup {
        shell,
        name,
        false_ends_shell: text.contains("#@expect false-ends-shell"),
        rc,
        files,
        needs,
        becomes,
    }
}

fn corpus(shell: &'static str) -> Vec<Setup> {
    let dir = corpus_dir().join(shell);
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            parse(shell, name, &std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

fn rc_path(shell: &str) -> &'static str {
    match shell {
        "bash" => ".bashrc",
        "zsh" => ".zshrc",
        _ => ".config/fish/config.fish",
    }
}

/// A fresh home holding the set-up's files.
fn make_home(setup: &Setup) -> PathBuf {
    for need in &setup.needs {
        assert!(
            Path::new(need).exists(),
            "{}/{} sources {need}, which is not installed (scripts/test installs it)",
            setup.shell,
            setup.name
        );
    }
    let home = scratch_dir();
    let write = |rel: &str, text: &str| {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(rc_path(setup.shell), &setup.rc);
    for (rel, text) in &setup.files {
        write(rel, text);
    }
    home
}

fn run(id: &str, command: &str, wait_ms: u64) -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": {"command": command},
        "runtime": {"wait_ms": wait_ms}})
}

fn input(id: &str, data: &str) -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": {"input": data}, "runtime": {"wait_ms": 3000}})
}

fn read(id: &str, output: Value) -> Value {
    json!({"action": "read_output", "target": {"terminal_id": id}, "output": output})
}

/// Checks failed in one set-up, each with what was seen.
#[derive(Default)]
struct Findings(Vec<String>);

impl Findings {
    fn expect(&mut self, ok: bool, what: &str, seen: &Value) {
        if !ok {
            let r = &seen["result"];
            self.0.push(format!(
                "{what}: running={} exit_code={} command={} output={:?} error={}",
                r["running"], r["exit_code"], r["command"], r["output"], seen["error"]
            ));
        }
    }
}

fn command_line(p: &Value) -> &str {
    p["result"]["command"]["command_line"]
        .as_str()
        .unwrap_or("<none>")
}

fn finished_with(p: &Value, code: i64) -> bool {
    p["success"] == true
        && p["result"]["running"] == false
        && p["result"]["exit_code"] == code
        && p["result"]["command"]["complete"] == true
}

/// The last commands the terminal recorded.
async fn commands(s: &Server, id: &str) -> Vec<Value> {
    let c = s.call(read(id, json!({"view": "commands"}))).await;
    c["result"]["commands"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Run every check in one terminal of `shell` in a server whose home is `home`.
async fn check_terminal(
    shell: &str,
    syntax: &str,
    home: &Path,
    false_ends_shell: bool,
    extra_env: &[(&str, &str)],
) -> (Vec<String>, String) {
    let home_s = home.display().to_string();
    // Warned lines (one left open is `unparseable`) run unasked: what is tested is how the
    // terminal handles them.
    let mut env = vec![
        ("HOME", home_s.as_str()),
        ("PM_TERM_INTERACTIVE_SHELL", shell),
        ("PM_TERM_APPROVAL_DEFAULT", "approve"),
    ];
    env.extend_from_slice(extra_env);
    let s = server().envs(&env).start().await;
    let mut f = Findings::default();
    let open = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
            "runtime": {"wait_ms": 15000}}))
        .await;
    assert_eq!(open["success"], true, "{open:#}");
    let id = open["identity"]["terminal_id"]
        .as_str()
        .unwrap()
        .to_string();
    f.expect(
        open["result"]["shell_integration"] == "full",
        "shell_integration is full after the first prompt",
        &open,
    );

    let p = s.call(run(&id, "true", 15000)).await;
    f.expect(finished_with(&p, 0), "`true` finishes with 0", &p);
    f.expect(command_line(&p) == "true", "`true` is its command line", &p);
    f.expect(
        p["result"]["output"]
            .as_str()
            .is_some_and(|o| o.trim().is_empty()),
        "`true` prints nothing",
        &p,
    );

    let line = "echo 'a;b' \"c  d\"; echo done";
    let p = s.call(run(&id, line, 15000)).await;
    f.expect(finished_with(&p, 0), "a quoted line finishes with 0", &p);
    f.expect(
        command_line(&p) == line,
        "a quoted line is captured exactly",
        &p,
    );
    f.expect(
        p["result"]["output"].as_str().map(str::trim_end) == Some("a;b c  d\ndone"),
        "a quoted line's output is its own",
        &p,
    );

    let spaced = " echo spaced";
    let p = s.call(run(&id, spaced, 15000)).await;
    f.expect(
        finished_with(&p, 0),
        "a line with a leading space finishes",
        &p,
    );
    f.expect(
        command_line(&p) == spaced,
        "a line with a leading space is captured exactly (history may leave it out)",
        &p,
    );

    let multi = if syntax == "fish" {
        "echo 'x y\n  z'"
    } else {
        "cat <<'EOF'\nx y\n  z\nEOF"
    };
    let p = s.call(run(&id, multi, 15000)).await;
    f.expect(finished_with(&p, 0), "a multi-line command finishes", &p);
    f.expect(
        command_line(&p) == multi,
        "a multi-line command is captured exactly",
        &p,
    );
    f.expect(
        p["result"]["output"].as_str().map(str::trim_end) == Some("x y\n  z"),
        "a multi-line command's output is its own",
        &p,
    );

    // A script of several lines answers when all of it has run, with the last line's status
    // (bash runs each line of a paste as a command line of its own). Where a failing status
    // ends the shell (`set -e`), the script ends well.
    let (script, status) = if false_ends_shell {
        ("echo one\necho two\ntrue", 0)
    } else {
        ("echo one\necho two\nfalse", 1)
    };
    let p = s.call(run(&id, script, 15000)).await;
    f.expect(
        finished_with(&p, status),
        "a script finishes with its last line's status",
        &p,
    );
    // What the user's own hooks print between its lines (a PS0 of theirs) stays in it.
    let out = p["result"]["output"].as_str().unwrap_or_default();
    f.expect(
        out.find("one\n")
            .is_some_and(|a| out[a..].contains("two\n")),
        "a script's output is all of its lines'",
        &p,
    );
    // A Ctrl-C ends a shell whose failing statuses end it: there a line left open is not
    // tried.
    if !false_ends_shell {
        // A line the shell cannot finish is refused and dropped (fish's, before it is
        // typed); the next one runs.
        let p = s.call(run(&id, "echo 'left open", 15000)).await;
        f.expect(
            p["error"]["code"] == "PM_TERM_INVALID_PAYLOAD",
            "a line left open is refused",
            &p,
        );
        let p = s.call(run(&id, "echo after-open", 15000)).await;
        f.expect(
            finished_with(&p, 0)
                && p["result"]["output"].as_str().map(str::trim_end) == Some("after-open"),
            "the line after one left open runs as sent",
            &p,
        );
    }

    // A command past its timeout is interrupted when the timeout passes, whatever the
    // user's set-up does at its prompts (the interrupt once waited for a prompt while the
    // command ran: 10 s from the shell's start). Where a failing status ends the shell, the
    // interrupt would end it too.
    if !false_ends_shell {
        let mut q = run(&id, "sleep 30", 15000);
        q["runtime"]["timeout_ms"] = json!(800);
        let p = s.call(q).await;
        let ran_ms = p["error"]["details"]["command"]["duration_ms"].as_i64();
        // A prompt slower than the timeout (a busy machine) gets nothing typed at all.
        let untyped = p["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nothing was typed"));
        f.expect(
            p["error"]["code"] == "PM_TERM_TIMEOUT"
                && (ran_ms.is_some_and(|ms| ms < 5000) || untyped),
            "a command past its timeout is interrupted then",
            &p,
        );
        let p = s.call(run(&id, "echo after-timeout", 15000)).await;
        f.expect(
            finished_with(&p, 0)
                && p["result"]["output"].as_str().map(str::trim_end) == Some("after-timeout"),
            "the line after a timeout runs as sent",
            &p,
        );
    }

    let dir = scratch_dir().join("dir with space");
    std::fs::create_dir_all(&dir).unwrap();
    let dir_s = dir.display().to_string();
    let p = s.call(run(&id, &format!("cd '{dir_s}'"), 15000)).await;
    f.expect(finished_with(&p, 0), "cd finishes with 0", &p);
    let list = s.call(json!({"action": "list"})).await;
    let cwd = list["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == id.as_str())
        .map(|i| i["cwd"].clone())
        .unwrap_or(Value::Null);
    f.expect(
        cwd == dir_s.as_str(),
        &format!("the terminal follows cd (cwd {cwd})"),
        &p,
    );

    // The integration's marks and nonce never reach a program's environment (an exported
    // PS1 or PROMPT_COMMAND would carry them into every nested shell).
    let p = s
        .call(run(&id, "env | grep -c '63[3];' || true", 15000))
        .await;
    f.expect(
        p["result"]["output"].as_str().map(str::trim) == Some("0"),
        "no integration mark in the environment",
        &p,
    );

    // Nor do the integration's own directories (a shell the rc starts finds them while the
    // rc runs, then takes them out).
    let p = s
        .call(run(
            &id,
            "env | grep -c 'shell-integratio[n]' || true",
            15000,
        ))
        .await;
    f.expect(
        p["result"]["output"].as_str().map(str::trim) == Some("0"),
        "no integration directory in the environment",
        &p,
    );

    // Completion comes with the prompt, not at the end of the wait.
    let p = s.call(run(&id, "sleep 0.2", 60_000)).await;
    f.expect(finished_with(&p, 0), "`sleep 0.2` is reported finished", &p);
    f.expect(
        p["result"]["duration_ms"]
            .as_u64()
            .is_some_and(|d| d < 30_000),
        "completion is reported when the prompt returns",
        &p,
    );

    // A full-screen program runs until it is quit.
    let p = s.call(run(&id, "vim -u NONE -N -n", 1500)).await;
    f.expect(
        p["success"] == true && p["result"]["running"] == true,
        "vim is reported running while it runs",
        &p,
    );
    f.expect(
        p["result"]["command"]["complete"] == false,
        "vim's command is not complete while it runs",
        &p,
    );
    let _ = s.call(input(&id, "\x1b:q!\r")).await;
    let mut done = false;
    let mut seen = Value::Null;
    for _ in 0..50 {
        let cs = commands(&s, &id).await;
        seen = cs.last().cloned().unwrap_or(Value::Null);
        if seen["command_line"] == "vim -u NONE -N -n" && seen["complete"] == true {
            done = seen["exit_code"] == 0;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    f.expect(
        done,
        "vim, once quit, finished with 0",
        &json!({"result": {"command": seen}}),
    );

    // A line a person types is reported as typed, or not at all: never as another line.
    let _ = s.call(input(&id, "echo typed-by-hand\r")).await;
    let mut last = Value::Null;
    for _ in 0..50 {
        last = commands(&s, &id)
            .await
            .last()
            .cloned()
            .unwrap_or(Value::Null);
        if last["command_line"] != "vim -u NONE -N -n" && last["complete"] == true {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    f.expect(
        last["command_line"] == "echo typed-by-hand" || last["command_line"] == "",
        &format!(
            "a typed line is never reported as another one ({})",
            last["command_line"]
        ),
        &json!({}),
    );

    let p = s.call(run(&id, "false", 15000)).await;
    f.expect(
        p["result"]["exit_code"] == 1 && p["result"]["command"]["complete"] == true,
        "`false` finishes with 1",
        &p,
    );
    f.expect(
        command_line(&p) == "false",
        "`false` is its command line",
        &p,
    );
    if false_ends_shell {
        let l = s.call(json!({"action": "list"})).await;
        let gone = l["result"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["id"] == id.as_str() && i["running"] == false && i["exit_code"] == 1);
        f.expect(gone, "this set-up's shell ends on `false`, with 1", &l);
    } else {
        f.expect(
            p["result"]["running"] == false,
            "the shell outlives `false`",
            &p,
        );
    }

    let all = s
        .call(read(&id, json!({"cursor": 0, "max_bytes": 1_048_576})))
        .await;
    let transcript = all["result"]["output"].as_str().unwrap_or("").to_string();
    for n in NOISE {
        if transcript.contains(n) {
            f.0.push(format!("the transcript contains {n:?}"));
        }
    }
    s.stop().await;
    (f.0, transcript)
}

async fn check_corpus(shell: &'static str) {
    let setups = corpus(shell);
    assert!(setups.len() >= 5, "the {shell} corpus is there");
    // PM_TEST_SETUP=name narrows a run to the set-ups whose file name contains it.
    let only = std::env::var("PM_TEST_SETUP").unwrap_or_default();
    let setups: Vec<Setup> = setups
        .into_iter()
        .filter(|s| s.name.contains(&only))
        .collect();
    let gate = Arc::new(tokio::sync::Semaphore::new(PARALLEL));
    let mut tasks = tokio::task::JoinSet::new();
    for setup in setups {
        let gate = gate.clone();
        tasks.spawn(async move {
            let _permit = gate.acquire_owned().await.unwrap();
            let home = make_home(&setup);
            let (found, transcript) = check_terminal(
                shell,
                setup.becomes.as_deref().unwrap_or(shell),
                &home,
                setup.false_ends_shell,
                &[],
            )
            .await;
            (setup.name, found, transcript)
        });
    }
    let mut report = String::new();
    while let Some(done) = tasks.join_next().await {
        let (name, found, transcript) = done.unwrap();
        if !found.is_empty() {
            report.push_str(&format!(
                "\n== {shell}/{name}\n- {}\n-- transcript --\n{transcript}\n",
                found.join("\n- ")
            ));
        }
    }
    assert!(report.is_empty(), "set-ups that broke:{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bash_setups() {
    check_corpus("bash").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn zsh_setups() {
    check_corpus("zsh").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fish_setups() {
    check_corpus("fish").await;
}

/// The machine user's own home, as it is: whatever their rc files do.
#[tokio::test]
async fn the_users_own_home() {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        panic!("HOME is not set");
    };
    // Their login shell when it is one with integration; bash otherwise.
    let login = std::env::var("SHELL").unwrap_or_default();
    let shell = ["bash", "zsh", "fish"]
        .into_iter()
        .find(|s| login.ends_with(&format!("/{s}")) && on_path_opt(s).is_some())
        .unwrap_or("bash");
    // Their history stays theirs: the test's lines go nowhere.
    let scratch = scratch_dir().join("history");
    let scratch = scratch.display().to_string();
    let (found, transcript) = check_terminal(
        shell,
        shell,
        &home,
        false,
        &[("HISTFILE", scratch.as_str()), ("fish_history", "")],
    )
    .await;
    assert!(
        found.is_empty(),
        "in {}: {found:#?}\n{transcript}",
        home.display()
    );
}

/// A home made like `useradd -m` makes one (/etc/skel), whose rc sources several set-ups of
/// the corpus together, for each shell.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_accounts_home_with_several_setups() {
    let together: &[(&str, &[&str])] = &[
        (
            "bash",
            &[
                "pyenv-virtualenv.bashrc",
                "cd-wrapped.bashrc",
                "completion-fzf.bashrc",
                "bash-preexec.bashrc",
                "rewritten-prompt.bashrc",
                "debug-trap.bashrc",
                "histcontrol.bashrc",
            ],
        ),
        (
            "zsh",
            &[
                "ohmyzsh-style.zshrc",
                "autosuggest-highlight.zshrc",
                "redraw-clock.zshrc",
            ],
        ),
        (
            "fish",
            &["custom-prompt.fish", "preexec-handlers.fish", "fzf.fish"],
        ),
    ];
    let mut report = String::new();
    for (shell, names) in together {
        let home = scratch_dir();
        copy_dir(Path::new("/etc/skel"), &home);
        let corpus_dir = corpus_dir().join(shell);
        let mut rc = std::fs::read_to_string(home.join(rc_path(shell))).unwrap_or_default();
        for name in *names {
            let setup = parse(
                shell,
                name.to_string(),
                &std::fs::read_to_string(corpus_dir.join(name)).unwrap(),
            );
            let part = home.join(format!(".setup-{name}"));
            std::fs::write(&part, &setup.rc).unwrap();
            rc.push_str(&format!("\nsource '{}'\n", part.display()));
        }
        let p = home.join(rc_path(shell));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, rc).unwrap();
        let (found, transcript) = check_terminal(shell, shell, &home, false, &[]).await;
        if !found.is_empty() {
            report.push_str(&format!(
                "\n== {shell}\n- {}\n{transcript}\n",
                found.join("\n- ")
            ));
        }
    }
    assert!(report.is_empty(), "{report}");
}

/// A set-up that takes hooks away (a read-only PROMPT_COMMAND: no exit status, no prompt
/// start) is reported as such, and its commands get no made-up status: no exit code, but
/// still running while they run and finished when the prompt returns.
#[tokio::test]
async fn a_setup_that_takes_hooks_away_is_reported() {
    let home = scratch_dir();
    std::fs::write(
        home.join(".bashrc"),
        "readonly PROMPT_COMMAND='history -a'\n",
    )
    .unwrap();
    let s = bash_server_in(&home).await;
    let open = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}))
        .await;
    assert_eq!(
        open["result"]["shell_integration"], "prompt_only",
        "{open:#}"
    );
    let id = open["identity"]["terminal_id"]
        .as_str()
        .unwrap()
        .to_string();
    for cmd in ["true", "false"] {
        let p = s.call(run(&id, cmd, 15000)).await;
        assert_eq!(p["result"]["running"], false, "{p:#}");
        assert_eq!(p["result"]["command"]["complete"], true, "{p:#}");
        assert_eq!(p["result"]["command"]["command_line"], cmd, "{p:#}");
        assert_eq!(
            p["result"]["exit_code"],
            Value::Null,
            "no status is made up: {p:#}"
        );
        assert_eq!(p["result"]["shell_integration"], "prompt_only", "{p:#}");
    }
    let p = s.call(run(&id, "vim -u NONE -N -n", 1500)).await;
    assert_eq!(p["result"]["running"], true, "{p:#}");
    let all = s.call(read(&id, json!({"cursor": 0}))).await;
    let text = all["result"]["output"].as_str().unwrap();
    assert!(NOISE.iter().all(|n| !text.contains(n)), "{text}");
    s.stop().await;
}

fn copy_dir(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for e in entries.flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A hook framework that installs itself at the first prompt (bash-preexec, which atuin,
/// starship and iTerm2 ship) arms the user's preexec hooks as the last thing the prompt
/// runs. The very first line a person types in a new terminal must run those hooks (a
/// history recorder or a timer would miss it otherwise) and be reported as typed, as every
/// later line is.
#[tokio::test]
async fn the_first_typed_line_runs_the_users_preexec_hooks_and_is_reported() {
    let setup = corpus("bash")
        .into_iter()
        .find(|s| s.name == "bash-preexec.bashrc")
        .unwrap();
    let home = make_home(&setup);
    let s = bash_server_in(&home).await;
    let open = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}))
        .await;
    let id = open["identity"]["terminal_id"]
        .as_str()
        .unwrap()
        .to_string();
    for (n, line) in [
        "echo \"first=${__timer-unset}\"",
        "echo \"second=${__timer-unset}\"",
    ]
    .into_iter()
    .enumerate()
    {
        let _ = s.call(input(&id, &format!("{line}\r"))).await;
        let mut seen = Vec::new();
        for _ in 0..50 {
            seen = commands(&s, &id).await;
            if seen.len() > n && seen[n]["complete"] == true {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(seen.len(), n + 1, "{seen:#?}");
        assert_eq!(seen[n]["command_line"], line, "{seen:#?}");
        assert_eq!(seen[n]["exit_code"], 0, "{seen:#?}");
    }
    let all = s.call(read(&id, json!({"cursor": 0}))).await;
    let text = all["result"]["output"].as_str().unwrap();
    for name in ["first", "second"] {
        let ran = text
            .split(&format!("{name}="))
            .nth(2)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
        assert!(ran, "the preexec hook did not run before {name}: {text}");
    }
    s.stop().await;
}
