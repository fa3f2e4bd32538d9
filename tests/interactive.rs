//! Interactive terminals through the real binary and rmcp's client: shells, command
//! detection, raw input, REPLs, prompts, Ctrl-C, full-screen programs through the screen
//! view, kills that leave nothing behind, 50 terminals at once, MCP resources, and calls
//! their client cancels.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::time::Duration;

use common::*;
use rmcp::model::{ReadResourceRequestParams, SubscribeRequestParams};
use serde_json::{Value, json};

fn keys(id: &str, keys: &[&str]) -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": {"keys": keys}})
}

fn read(id: &str, output: Value) -> Value {
    json!({"action": "read_output", "target": {"terminal_id": id}, "output": output})
}

/// Shell environment for predictable prompts in the tests.
fn env() -> Vec<(&'static str, &'static str)> {
    vec![("PM_TERM_NO_USER_RC", "1")]
}

/// The last command the terminal detected (its `commands` view).
/// The terminal's last command once the shell has reported its end (the end mark can
/// follow the output that satisfied a wait by a moment on a loaded machine), or as it stands
/// after 5 s.
async fn last_command(s: &Server, id: &str) -> Value {
    last_command_within(s, id, Duration::from_secs(5)).await
}

/// [`last_command`], waiting up to `within` for its end.
async fn last_command_within(s: &Server, id: &str, within: Duration) -> Value {
    let deadline = std::time::Instant::now() + within;
    loop {
        let c = s.call(read(id, json!({"view": "commands"}))).await;
        let last = c["result"]["commands"]
            .as_array()
            .unwrap()
            .last()
            .cloned()
            .unwrap();
        if last["complete"] == true || std::time::Instant::now() >= deadline {
            return last;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn open_run_and_detect_commands_in_bash_and_zsh() {
    let s = server().envs(&env()).start().await;
    for sh in ["bash", "zsh"] {
        let p = s
            .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
                "execution": {"shell": sh, "name": format!("{sh}-term")}, "runtime": {"cwd": "/tmp"}}))
            .await;
        assert_eq!(p["status"], "accepted", "{p:#}");
        assert_eq!(p["result"]["running"], true);
        assert_eq!(p["result"]["supports_command_detection"], true);
        assert_eq!(p["resolved"]["adapter"], "local");
        let id = p["identity"]["terminal_id"].as_str().unwrap().to_string();
        assert!(id.starts_with("term_"));
        let r = s.call(terminal_command(&id, "echo $((6*7)); false")).await;
        assert_eq!(r["status"], "completed", "{r:#}");
        assert_eq!(r["result"]["output"], "42\n");
        assert_eq!(r["result"]["exit_code"], 1);
        assert_eq!(
            r["result"]["command"]["command_line"],
            "echo $((6*7)); false"
        );
        let r = s.call(terminal_command(&id, "cd / && pwd")).await;
        assert_eq!(r["result"]["output"], "/\n");
        assert_eq!(r["result"]["exit_code"], 0);
        let c = s.call(read(&id, json!({"view": "commands"}))).await;
        let cmds = c["result"]["commands"].as_array().unwrap();
        assert_eq!(cmds.len(), 2);
        assert_eq!(cmds[0]["exit_code"], 1);
        let l = s
            .call(json!({"action": "list", "invocation": {"mode": "interactive"}}))
            .await;
        let item = l["result"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == id.as_str())
            .cloned()
            .unwrap();
        assert_eq!(item["title"], format!("{sh}-term"));
        assert_eq!(item["cwd"], "/");
        assert_eq!(item["claim"]["kind"], "session");
        assert!(
            item["claim"].get("toolCallId").is_none(),
            "backgrounded after the call"
        );
    }
    s.stop().await;
}

#[tokio::test]
async fn execute_command_in_a_new_terminal_and_legacy_aliases() {
    let s = server().envs(&env()).start().await;
    let p = s
        .call(open_running(
            "printf 'a\\nb\\n'; exit_code=3; (exit $exit_code)",
        ))
        .await;
    assert_eq!(p["result"]["output"], "a\nb\n");
    assert_eq!(p["result"]["exit_code"], 3);
    assert_eq!(p["result"]["running"], false);
    // create / send / close aliases.
    let c = s.call(json!({"action": "create", "name": "legacy"})).await;
    assert_eq!(c["resolved"]["legacy_action"], "create");
    assert_eq!(c["resolved"]["mode"], "interactive");
    let id = c["identity"]["terminal_id"].as_str().unwrap().to_string();
    let r = s
        .call(json!({"action": "send", "terminal_id": id, "command": "echo via-send"}))
        .await;
    assert_eq!(r["result"]["output"], "via-send\n");
    assert_eq!(r["resolved"]["legacy_action"], "send");
    let k = s.call(json!({"action": "close", "terminal_id": id})).await;
    assert_eq!(k["resolved"]["canonical_action"], "terminate");
    assert_eq!(k["result"]["running"], false);
    // Output stays readable after the terminal is closed.
    let r = s.call(read(&id, json!({"cursor": 0}))).await;
    assert!(r["result"]["output"].as_str().unwrap().contains("via-send"));
    s.stop().await;
}

#[tokio::test]
async fn a_prompt_answered_with_raw_input() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let mut q = terminal_command(&id, "read -p 'Name? ' n; echo \"hi $n\"");
    q["runtime"] = json!({"wait_ms": 500});
    let p = s.call(q).await;
    assert_eq!(p["result"]["running"], true, "waiting at the prompt: {p:#}");
    assert!(p["result"]["output"].as_str().unwrap().contains("Name? "));
    let a = s.call(terminal_input(&id, "bob\r", Some("hi bob"))).await;
    assert!(
        a["result"]["output"].as_str().unwrap().contains("hi bob"),
        "{a:#}"
    );
    let last = last_command(&s, &id).await;
    assert_eq!(last["complete"], true);
    assert_eq!(last["exit_code"], 0);
    s.stop().await;
}

/// Input larger than the terminal takes at once, sent while the program is not reading:
/// the kernel refuses the rest until the program reads, and every byte must still arrive,
/// in order.
#[tokio::test]
async fn input_larger_than_the_terminal_takes_at_once_arrives_whole() {
    const BYTES: usize = 120_000;
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let mut q = terminal_command(
        &id,
        &format!("stty raw -echo; sleep 1; head -c {BYTES} | sha256sum; stty sane"),
    );
    q["runtime"] = json!({"wait_ms": 100});
    let p = s.call(q).await;
    assert_eq!(p["result"]["running"], true, "{p:#}");
    let data: String = (0..BYTES)
        .map(|i| (b'a' + (i % 26) as u8) as char)
        .collect();
    use sha2::Digest;
    let want: String = sha2::Sha256::digest(data.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let a = s.call(terminal_input(&id, &data, Some(&want))).await;
    assert!(
        a["result"]["output"].as_str().unwrap().contains(&want),
        "{:#}",
        a["result"]
    );
    s.stop().await;
}

#[tokio::test]
async fn python_repl_round_trips() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let p = s
        .call(terminal_input(&id, "python3 -q\r", Some(">>> $")))
        .await;
    assert!(
        p["result"]["output"].as_str().unwrap().ends_with(">>> "),
        "{p:#}"
    );
    // A command line sent while python runs is refused: it would go to python's stdin.
    let busy = s.call(terminal_command(&id, "ls")).await;
    assert_eq!(code(&busy), "PM_TERM_INVALID_PAYLOAD");
    assert_eq!(busy["error"]["details"]["busy"], true);
    for (line, want) in [
        ("x = 6 * 7\r", ""),
        ("print(x)\r", "42"),
        ("'ab' * 3\r", "'ababab'"),
    ] {
        let r = s.call(terminal_input(&id, line, Some(">>> $"))).await;
        let out = r["result"]["output"].as_str().unwrap();
        assert!(out.contains(want), "{line:?} -> {out:?}");
        assert!(out.ends_with(">>> "));
    }
    let r = s.call(keys(&id, &["ctrl-d"])).await;
    assert_eq!(r["success"], true);
    let last = last_command(&s, &id).await;
    assert_eq!(last["command_line"], "python3 -q");
    assert_eq!(last["exit_code"], 0);
    s.stop().await;
}

/// `wait_for` patterns are kept between inputs. An agent sending ever-new patterns (more
/// than are kept), one too big to keep, one too big to compile at all and an invalid one:
/// each input waits for its own pattern — a matched wait answers before the output that
/// follows it — and the bad ones get a clear error while the terminal goes on working.
#[tokio::test]
async fn ever_new_and_oversized_wait_for_patterns_each_wait_for_their_own() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    s.call(terminal_input(&id, "python3 -q\r", Some(">>> $")))
        .await;
    // Matched early, the answer comes before `late`; a wrong or stale pattern would wait
    // for the whole 10 s and carry it. (Neither the pattern nor `late` is in the echoed
    // input line.)
    let early = |pattern: &'static str| {
        let s = &s;
        let id = &id;
        async move {
            let line = "import time; print('tag3', 'A' * 40); time.sleep(2); print('la' + 'te')\r";
            let r = s.call(terminal_input(id, line, Some(pattern))).await;
            let out = r["result"]["output"].as_str().unwrap().to_string();
            assert!(out.contains(&"A".repeat(40)), "{pattern}: {out:?}");
            assert!(!out.contains("late"), "{pattern} matched late: {out:?}");
            s.call(terminal_input(id, "\r", Some(">>> $"))).await;
        }
    };
    early("tag3 A").await;
    for i in 0..40 {
        let r = s
            .call(terminal_input(
                &id,
                &format!("print('tag{i}')\r"),
                Some(&format!("tag{i}\\r?\\n>>> $")),
            ))
            .await;
        let out = r["result"]["output"].as_str().unwrap();
        assert!(out.contains(&format!("tag{i}")), "{i}: {out:?}");
    }
    // The first pattern again after more than are kept; then one too big to keep.
    early("tag3 A").await;
    early(r"\w{40}").await;
    for bad in ["(unclosed", r"\w{5000}"] {
        let r = s.call(terminal_input(&id, "1+1\r", Some(bad))).await;
        assert_eq!(code(&r), "PM_TERM_INVALID_PAYLOAD", "{bad}: {r:#}");
        assert!(
            r["error"]["message"].as_str().unwrap().contains("wait_for"),
            "{r:#}"
        );
    }
    let r = s.call(terminal_input(&id, "6*7\r", Some(">>> $"))).await;
    assert!(
        r["result"]["output"].as_str().unwrap().contains("42"),
        "{r:#}"
    );
    s.stop().await;
}

#[tokio::test]
async fn ctrl_c_interrupts_sleep() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let mut q = terminal_command(&id, "sleep 100");
    q["runtime"] = json!({"wait_ms": 300});
    let p = s.call(q).await;
    assert_eq!(p["result"]["running"], true);
    let r = s.call(keys(&id, &["ctrl-c"])).await;
    assert_eq!(r["result"]["command"]["exit_code"], 130, "{r:#}");
    assert_eq!(r["result"]["command"]["complete"], true);
    // The answer speaks for the command the input ended.
    assert_eq!(r["result"]["running"], false, "{r:#}");
    // The shell is usable again.
    let r = s.call(terminal_command(&id, "echo back")).await;
    assert_eq!(r["result"]["output"], "back\n");
    s.stop().await;
}

/// A client's stop button on a command in a terminal: cancelled (`notifications/cancelled`)
/// while it runs, a command typed into an existing terminal is interrupted at once and the
/// shell stays usable; a terminal opened for the cancelled call is killed, with everything
/// in it.
#[tokio::test]
async fn a_cancelled_call_stops_its_command_in_a_terminal() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let n = unique_sleep();
    let mut q = terminal_command(&id, &format!("echo before-the-stop; sleep {n}"));
    q["runtime"] = json!({"wait_ms": 60000});
    let started = std::time::Instant::now();
    let left = cancel_once_running(s.client.peer(), q, &n, 1).await;
    assert!(left.is_empty(), "the command ran on: {left:?}");
    assert!(started.elapsed() < Duration::from_secs(30));
    let last = last_command(&s, &id).await;
    assert_eq!(last["exit_code"], 130, "interrupted: {last:#}");
    // The cancelled call's answer reached nobody: its output is still unread.
    let r = s.call(read(&id, json!({}))).await;
    let text = r["result"]["output"].as_str().unwrap_or_default();
    assert!(text.contains("before-the-stop"), "{r:#}");
    let r = s.call(terminal_command(&id, "echo still-here")).await;
    assert_eq!(r["result"]["output"], "still-here\n", "{r:#}");
    // A terminal opened for the call: killed, and everything in it.
    let n = unique_sleep();
    let mut q = open_running(&format!("sleep {n} & sleep {n}"));
    q["runtime"] = json!({"wait_ms": 60000});
    let left = cancel_once_running(s.client.peer(), q, &n, 2).await;
    assert!(left.is_empty(), "left in the opened terminal: {left:?}");
    // The terminal's end is reported a moment after its processes are gone.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let l = s.call(json!({"action": "list"})).await;
        let items = l["result"]["items"].as_array().unwrap();
        assert_eq!(items.len(), 2, "{l:#}");
        let running = items.iter().filter(|i| i["state"] == "running").count();
        if running == 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the first terminal runs on, the opened one ends: {l:#}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.stop().await;
}

/// A `read_output` its client cancels while it waits stops nothing, and what the terminal
/// shows once the wait ends is not lost to the next read: the answer reached nobody.
#[tokio::test]
async fn a_cancelled_read_leaves_the_output_unread() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let mut q = terminal_command(&id, "sleep 2; echo arrived-late");
    q["runtime"] = json!({"wait_ms": 500});
    let r = s.call(q).await;
    assert_eq!(r["result"]["running"], true, "{r:#}");
    let mut q = read(&id, json!({}));
    q["runtime"] = json!({"wait_ms": 30000});
    let call = send_call(s.client.peer(), "memory_terminal_interactive", q, None).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    call.cancel(Some("the user pressed stop".into()))
        .await
        .unwrap();
    let last = last_command(&s, &id).await;
    assert_eq!(last["complete"], true, "{last:#}");
    // The host's read answered once the output came, to nobody.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = s.call(read(&id, json!({}))).await;
    let text = r["result"]["output"].as_str().unwrap_or_default();
    assert!(text.contains("arrived-late"), "{r:#}");
    // Read once, it is delivered: the next read starts after it.
    let r = s.call(read(&id, json!({}))).await;
    let text = r["result"]["output"].as_str().unwrap_or_default();
    assert!(!text.contains("arrived-late"), "{r:#}");
    s.stop().await;
}

/// A command that runs past its `timeout_ms` is interrupted then, and the call answers soon
/// after — also for a terminal's first command, seconds after its shell started. (The
/// interrupt once waited for a prompt to be drawn while the command ran, that is until the
/// shell's 10 s startup wait was over: a 0.8 s timeout answered after about 10 s.)
#[tokio::test]
async fn interactive_timeout_interrupts_with_output_so_far() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let mut q = terminal_command(&id, "echo first; sleep 30");
    q["runtime"] = json!({"timeout_ms": 800});
    let asked = std::time::Instant::now();
    let p = s.call(q).await;
    let took = asked.elapsed();
    assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{p:#}");
    // The timeout, the interrupt's settle (at most 2 s) and a loaded machine's slack: far
    // below the startup wait the interrupt was held for.
    assert!(
        took < Duration::from_secs(6),
        "answered after {took:?}: {p:#}"
    );
    let ran = p["error"]["details"]["command"]["duration_ms"]
        .as_u64()
        .unwrap();
    assert!(ran < 5000, "interrupted after {ran} ms: {p:#}");
    assert_eq!(p["error"]["details"]["target"], "terminal_id");
    // The terminal echoes the interrupt (^C) into the command's output, as a person sees it.
    assert!(
        p["error"]["details"]["output"]
            .as_str()
            .unwrap()
            .starts_with("first\n"),
        "{p:#}"
    );
    assert_eq!(p["error"]["details"]["command"]["exit_code"], 130);
    assert_eq!(p["fallback"]["recommended_mode"], "headless");
    s.stop().await;
}

/// A command past its timeout that Ctrl-C does not stop is still ended: its process group is
/// sent SIGINT (for a terminal whose Ctrl-C was turned off: `stty raw` puts it back only at
/// the line's end, which never comes), then SIGTERM, then SIGKILL, and the answer says which
/// ended it. A loop of the shell's own that ignores SIGINT cannot be signalled without ending
/// the terminal: the answer says it still runs and to terminate it, and `terminate` does.
#[tokio::test]
async fn a_timeout_ends_a_command_that_turned_ctrl_c_off_or_ignores_it() {
    let mut envs = env();
    // The lines that trap signals are warned (terminal state): the operator approves them.
    envs.push(("PM_TERM_APPROVAL_DEFAULT", "approve"));
    let s = server().envs(&envs).start().await;
    let id = open_shell(&s).await;
    let cases = [
        (
            r#"old=$(stty -g); stty raw; sleep 30; stty "$old""#,
            "SIGINT",
            130,
        ),
        (r#"sh -c 'trap "" INT; sleep 30'"#, "SIGTERM", 143),
        (r#"sh -c 'trap "" INT TERM; sleep 30'"#, "SIGKILL", 137),
    ];
    for (line, signal, exit) in cases {
        let mut q = terminal_command(&id, line);
        q["runtime"] = json!({"timeout_ms": 800});
        let p = s.call(q).await;
        assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{line}: {p:#}");
        let said = p["error"]["message"].as_str().unwrap();
        assert!(
            said.contains(&format!("was sent {signal}, which ended it")),
            "{line}: {said}"
        );
        let cmd = &p["error"]["details"]["command"];
        assert_eq!(cmd["complete"], true, "{line}: {p:#}");
        assert_eq!(cmd["exit_code"], exit, "{line}: {p:#}");
        // The terminal takes the next command at once.
        let r = s.call(terminal_command(&id, "echo next-$((6*7))")).await;
        assert_eq!(r["result"]["output"], "next-42\n", "after {line}: {r:#}");
    }
    // A call that answered before the timeout (its wait was shorter): the timeout still
    // comes, in the background, and ends the command the same way.
    let mut q = terminal_command(&id, r#"sh -c 'trap "" INT TERM; sleep 30'"#);
    q["runtime"] = json!({"timeout_ms": 800, "wait_ms": 200});
    let p = s.call(q).await;
    assert_eq!(p["result"]["running"], true, "{p:#}");
    // Ctrl-C's settle and the three signals' take about 5 s after the timeout.
    let ended = last_command_within(&s, &id, Duration::from_secs(20)).await;
    assert_eq!(
        ended["exit_code"], 137,
        "ended in the background: {ended:#}"
    );
    // The shell's own loop, SIGINT ignored: nothing ends it but the terminal's end.
    let mut q = terminal_command(&id, r#"trap '' INT; while :; do :; done"#);
    q["runtime"] = json!({"timeout_ms": 800});
    let p = s.call(q).await;
    assert_eq!(code(&p), "PM_TERM_TIMEOUT", "{p:#}");
    let said = p["error"]["message"].as_str().unwrap();
    assert!(
        said.contains("still runs") && said.contains("action terminate"),
        "{said}"
    );
    assert_eq!(p["error"]["details"]["command"]["complete"], false, "{p:#}");
    let k = s
        .call(json!({"action": "terminate", "target": {"terminal_id": id}}))
        .await;
    assert_eq!(k["status"], "completed", "{k:#}");
    s.stop().await;
}

#[tokio::test]
async fn vim_and_top_through_the_screen_view() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let file = std::env::temp_dir().join(format!("itmcp-vim-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let r = s
        .call(terminal_input(
            &id,
            &format!("vim -u NONE -N {}\r", file.display()),
            Some("~"),
        ))
        .await;
    assert_eq!(r["success"], true);
    let sc = s.call(read(&id, json!({"view": "screen"}))).await;
    assert_eq!(sc["result"]["screen"]["alternate_screen"], true, "{sc:#}");
    assert!(
        sc["result"]["screen"]["text"]
            .as_str()
            .unwrap()
            .contains("~")
    );
    s.call(terminal_input(
        &id,
        "ihello from vim",
        Some("hello from vim"),
    ))
    .await;
    let sc = s.call(read(&id, json!({"view": "screen"}))).await;
    assert!(
        sc["result"]["screen"]["text"]
            .as_str()
            .unwrap()
            .starts_with("hello from vim")
    );
    s.call(keys(&id, &["escape"])).await;
    s.call(terminal_input(&id, ":wq\r", None)).await;
    let done = s.call(terminal_command(&id, "true")).await;
    assert_eq!(done["success"], true);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello from vim\n");
    let sc = s.call(read(&id, json!({"view": "screen"}))).await;
    assert_eq!(sc["result"]["screen"]["alternate_screen"], false);

    s.call(terminal_input(&id, "top -d 0.5\r", Some("load average")))
        .await;
    let sc = s.call(read(&id, json!({"view": "screen"}))).await;
    let text = sc["result"]["screen"]["text"].as_str().unwrap().to_string();
    assert!(
        text.contains("load average") && text.contains("PID"),
        "{text}"
    );
    s.call(terminal_input(&id, "q", None)).await;
    let r = s.call(terminal_command(&id, "echo after-top")).await;
    assert_eq!(r["result"]["output"], "after-top\n");
    let _ = std::fs::remove_file(&file);
    s.stop().await;
}

#[tokio::test]
async fn killing_a_shell_with_background_jobs_leaves_nothing() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let tag = unique_sleep();
    let r = s
        .call(terminal_command(
            &id,
            &format!("sleep {tag} & setsid sleep {tag} & (sh -c 'sleep {tag} &' &); nohup sleep {tag} >/dev/null 2>&1 &"),
        ))
        .await;
    assert_eq!(r["success"], true);
    assert!(
        wait_present(&tag, 4, Duration::from_secs(3)).await >= 4,
        "{:?}",
        pids_with_arg(&tag)
    );
    let k = s
        .call(json!({"action": "terminate", "target": {"terminal_id": id}}))
        .await;
    assert_eq!(k["success"], true, "{k:#}");
    assert!(k["result"]["terminated"].as_array().unwrap().len() >= 5);
    assert!(wait_gone(&tag, Duration::from_secs(3)).await.is_empty());
    let (item, _) = s.listed(&id).await;
    assert_eq!(item.unwrap()["state"], "exited");
    s.stop().await;
}

#[tokio::test]
async fn fifty_terminals_at_once() {
    let s = std::sync::Arc::new(server().envs(&env()).start().await);
    let mut hs = Vec::new();
    for i in 0..50 {
        let s = s.clone();
        hs.push(tokio::spawn(async move {
            let mut q = open_running(&format!("echo t-{i}"));
            q["runtime"] = json!({"wait_ms": 60000});
            let p = s.call(q).await;
            assert_eq!(p["result"]["output"], format!("t-{i}\n"), "{p:#}");
            assert_eq!(p["result"]["exit_code"], 0);
            p["identity"]["terminal_id"].as_str().unwrap().to_string()
        }));
    }
    let mut ids = Vec::new();
    for h in hs {
        ids.push(h.await.unwrap());
    }
    let l = s
        .call(json!({"action": "list", "invocation": {"mode": "interactive"}}))
        .await;
    let items = l["result"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 50);
    assert!(items.iter().all(|i| i["running"] == true));
    for id in &ids {
        let r = s
            .call(json!({"action": "terminate", "target": {"terminal_id": id}}))
            .await;
        assert_eq!(r["success"], true);
    }
}

#[tokio::test]
async fn read_output_views_and_cursors() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    s.call(terminal_command(
        &id,
        "printf '\\033[31mred\\033[0m plain\\n'",
    ))
    .await;
    let raw = s.call(read(&id, json!({"view": "raw", "cursor": 0}))).await;
    let raw_text = raw["result"]["output"].as_str().unwrap().to_string();
    assert!(raw_text.contains("\u{1b}[31mred"));
    let total = raw["result"]["streams"]["output"]["total"]
        .as_u64()
        .unwrap();
    assert_eq!(raw["result"]["cursor"]["output"], total);
    let text = s.call(read(&id, json!({"cursor": 0}))).await;
    assert!(
        text["result"]["output"]
            .as_str()
            .unwrap()
            .contains("red plain\n")
    );
    // Nothing new since the last answer (the prompt's text may come after the command's
    // answer on a loaded machine: read it first, after the output has been quiet).
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.call(read(&id, json!({}))).await;
    let again = s.call(read(&id, json!({}))).await;
    assert_eq!(again["result"]["output"], "");
    // Waiting for output that arrives later.
    let mut q = terminal_command(&id, "sleep 0.5; echo late");
    q["runtime"] = json!({"wait_ms": 100});
    s.call(q).await;
    let late = s
        .call(json!({"action": "read_output", "target": {"terminal_id": id}, "runtime": {"wait_ms": 5000}}))
        .await;
    assert!(
        late["result"]["output"].as_str().unwrap().contains("late"),
        "{late:#}"
    );
    // Byte cursors resume exactly: two halves make the whole.
    let a = s
        .call(read(
            &id,
            json!({"view": "raw", "cursor": 0, "max_bytes": 10}),
        ))
        .await;
    let next = a["result"]["cursor"]["output"].as_u64().unwrap();
    let b = s
        .call(read(
            &id,
            json!({"view": "raw", "cursor": next, "max_bytes": 1048576}),
        ))
        .await;
    let joined = format!(
        "{}{}",
        a["result"]["output"].as_str().unwrap(),
        b["result"]["output"].as_str().unwrap()
    );
    assert!(joined.starts_with(&raw_text));
    let nf = s.call(read("term_NOPE", json!({}))).await;
    assert_eq!(code(&nf), "PM_TERM_NOT_FOUND");
    s.stop().await;
}

/// A program prints bytes that are not UTF-8, then a character split across two writes with
/// a pause between. The raw view shows the invalid bytes as U+FFFD and the character whole;
/// read back in pieces of at most four bytes, the pieces join to the same text, and the
/// terminal goes on working.
#[tokio::test]
async fn raw_view_of_invalid_and_split_utf8() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let done = s
        .call(terminal_command(
            &id,
            "printf 'a\\377\\376b\\n'; printf '\\342\\202'; sleep 0.3; printf '\\254 euro\\n'",
        ))
        .await;
    assert_eq!(done["result"]["exit_code"], 0, "{done:#}");
    let raw = s.call(read(&id, json!({"view": "raw", "cursor": 0}))).await;
    let text = raw["result"]["output"].as_str().unwrap().to_string();
    assert!(text.contains("a\u{FFFD}\u{FFFD}b\r\n"), "{text:?}");
    assert!(text.contains("\u{20AC} euro"), "{text:?}");
    let (mut cursor, mut joined) = (0u64, String::new());
    loop {
        let p = s
            .call(read(
                &id,
                json!({"view": "raw", "cursor": cursor, "max_bytes": 4}),
            ))
            .await;
        let next = p["result"]["cursor"]["output"].as_u64().unwrap();
        if next == cursor {
            break;
        }
        joined.push_str(p["result"]["output"].as_str().unwrap());
        cursor = next;
    }
    assert!(joined.starts_with(&text), "{joined:?}\n{text:?}");
    let after = s.call(terminal_command(&id, "echo still here")).await;
    assert!(
        after["result"]["output"]
            .as_str()
            .unwrap()
            .contains("still here"),
        "{after:#}"
    );
    s.stop().await;
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe is the subscription of the negotiated 2025-11-25 protocol
async fn terminals_are_resources_with_updates() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let uri = format!("ahp-terminal:/{id}");
    let list = s.client.list_all_resources().await.unwrap();
    assert!(list.iter().any(|r| r.uri == uri));
    // The template says how to build that URI from a terminal id.
    let templates = s.client.list_all_resource_templates().await.unwrap();
    let t = templates
        .iter()
        .find(|t| t.uri_template == "ahp-terminal:/{terminal_id}")
        .expect("terminal template advertised");
    assert_eq!(t.uri_template.replace("{terminal_id}", &id), uri);
    let read = s
        .client
        .read_resource(ReadResourceRequestParams::new(uri.clone()))
        .await
        .unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("text contents")
    };
    let state: Value = serde_json::from_str(text).unwrap();
    assert_eq!(state["lifecycle"]["status"], "running");
    assert_eq!(state["claim"]["kind"], "session");
    s.client
        .subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .unwrap();
    s.call(terminal_command(&id, "echo resource-update")).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !s.recorder.updated.lock().unwrap().contains(&uri) {
        assert!(
            std::time::Instant::now() < deadline,
            "no resources/updated for {uri}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let read = s
        .client
        .read_resource(ReadResourceRequestParams::new(uri.clone()))
        .await
        .unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!()
    };
    let state: Value = serde_json::from_str(text).unwrap();
    let parts = state["content"].as_array().unwrap();
    assert!(parts.iter().any(|p| p["type"] == "command"
        && p["commandLine"] == "echo resource-update"
        && p["exitCode"] == 0));
    assert_eq!(state["supportsCommandDetection"], true);
    s.stop().await;
}

#[tokio::test]
async fn titles_set_by_programs_become_terminal_titles() {
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    s.call(terminal_command(&id, "printf '\\033]0;build: step 2\\007'"))
        .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let l = s
            .call(json!({"action": "list", "invocation": {"mode": "interactive"}}))
            .await;
        let title = l["result"]["items"][0]["title"]
            .as_str()
            .unwrap()
            .to_string();
        if title == "build: step 2" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "title stayed {title:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.stop().await;
}

#[tokio::test]
async fn list_answers_in_pages_with_a_state_filter() {
    let s = server().envs(&env()).start().await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(open_shell(&s).await);
    }
    // One exited terminal and one exited headless session besides the five running.
    let gone = s.call(open_running("exit 3")).await;
    let gone_id = gone["identity"]["terminal_id"]
        .as_str()
        .unwrap()
        .to_string();
    let h = s
        .call(json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
            "execution": {"command": "true"}}))
        .await;
    let session = h["identity"]["session_id"].as_str().unwrap().to_string();

    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut req = json!({"action": "list", "listing": {"limit": 2}});
        if let Some(c) = &cursor {
            req["listing"]["cursor"] = json!(c);
        }
        let r = s.call(req).await;
        assert_eq!(r["success"], true, "{r:#}");
        assert_eq!(r["result"]["total"], 7, "{r:#}");
        let items = r["result"]["items"].as_array().unwrap();
        assert!(items.len() <= 2);
        seen.extend(items.iter().map(|i| i["id"].as_str().unwrap().to_string()));
        match r["result"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    // Every item once, the session first, the terminals oldest first.
    let mut expected = vec![session.clone()];
    expected.extend(ids.iter().cloned());
    expected.push(gone_id.clone());
    assert_eq!(seen, expected);

    let running = s
        .call(json!({"action": "list", "listing": {"state": "running"}}))
        .await;
    let running: Vec<&str> = running["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(running, ids.iter().map(String::as_str).collect::<Vec<_>>());
    let exited = s
        .call(json!({"action": "list", "listing": {"state": "exited"}}))
        .await;
    assert_eq!(exited["result"]["total"], 2, "{exited:#}");

    // Hostile or mistaken paging gets a clear refusal, and the server goes on.
    for bad in [
        json!({"action": "list", "listing": {"cursor": "not-a-cursor"}}),
        json!({"action": "list", "listing": {"limit": 0}}),
        json!({"action": "list", "listing": {"limit": 1000000}}),
        json!({"action": "list", "listing": {"state": "zombie"}}),
        json!({"action": "list", "listing": {"sort": "name"}}),
        json!({"action": "read_output", "target": {"terminal_id": ids[0]}, "listing": {"limit": 1}}),
    ] {
        let r = s.call(bad.clone()).await;
        assert_eq!(
            r["error"]["code"], "PM_TERM_INVALID_PAYLOAD",
            "{bad}: {r:#}"
        );
    }
    let r = s.call(json!({"action": "list"})).await;
    assert_eq!(r["result"]["total"], 7);
}

#[tokio::test]
async fn the_screen_read_right_after_a_flood_shows_its_end() {
    // The screen is rendered when it is read: a read just after a long output must show the
    // output's last lines, not what the screen held before.
    let s = server().envs(&env()).start().await;
    let id = open_shell(&s).await;
    let r = s.call(terminal_command(&id, "seq 1 300000")).await;
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    let sc = s.call(read(&id, json!({"view": "screen"}))).await;
    let text = sc["result"]["screen"]["text"].as_str().unwrap();
    assert!(text.contains("299999\n300000"), "{text}");
    // And again after more: the second render continues from where the first stopped.
    s.call(terminal_command(&id, "echo the-end")).await;
    let sc = s.call(read(&id, json!({"view": "screen"}))).await;
    let text = sc["result"]["screen"]["text"].as_str().unwrap();
    assert!(
        text.contains("300000") && text.contains("the-end"),
        "{text}"
    );
}

/// A REPL driven the way agents drive one — the same prompt pattern for every input —
/// in a home whose `~/.bashrc` is a user's: Debian's own, a hook framework taking over the
/// DEBUG trap and `PROMPT_COMMAND`, a title written at every prompt and a slow start. The
/// REPL is the first line of the terminal: it is reported as typed. Every
/// answer carries its own input's result and ends at the prompt that follows it (the kept
/// pattern matches each new output, not an earlier one), and the shell's own hooks print
/// nothing into the transcript.
#[tokio::test]
async fn a_repl_in_a_users_own_bash_answers_each_input_with_its_own_result() {
    let rc_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rc/bash");
    let home = scratch_dir();
    let mut rc = String::new();
    // A slow start and a title at every prompt, then the hook framework, sourced last as
    // its documentation asks.
    let own =
        "sleep 0.3\nPROMPT_COMMAND+=$'\\n''printf \"\\e]0;%s@%s\\a\" \"$USER\" \"${PWD##*/}\"'\n";
    for part in ["debian-skel.bashrc", "", "bash-preexec.bashrc"] {
        match part {
            "" => rc.push_str(own),
            name => rc.push_str(&std::fs::read_to_string(rc_dir.join(name)).unwrap()),
        }
        rc.push('\n');
    }
    std::fs::write(home.join(".bashrc"), rc).unwrap();
    let s = bash_server_in(&home).await;
    let id = open_shell(&s).await;
    let p = s
        .call(terminal_input(&id, "python3 -q\r", Some(">>> $")))
        .await;
    assert!(
        p["result"]["output"].as_str().unwrap().ends_with(">>> "),
        "{p:#}"
    );
    for i in 0..60u64 {
        let line = format!("print('sq{i}=' + str({i} * {i}))\r");
        let r = s.call(terminal_input(&id, &line, Some(">>> $"))).await;
        let out = r["result"]["output"].as_str().unwrap();
        assert!(out.contains(&format!("sq{i}={}", i * i)), "{i}: {out:?}");
        assert!(out.ends_with(">>> "), "{i}: {out:?}");
        if i > 0 {
            let prev = format!("sq{}={}", i - 1, (i - 1) * (i - 1));
            assert!(!out.contains(&prev), "{i} carries the last answer: {out:?}");
        }
    }
    let r = s.call(keys(&id, &["ctrl-d"])).await;
    assert_eq!(r["success"], true, "{r:#}");
    let last = last_command(&s, &id).await;
    assert_eq!(last["command_line"], "python3 -q", "{last:#}");
    assert_eq!(last["exit_code"], 0, "{last:#}");
    // The shell is back and still reports its commands.
    let r = s.call(terminal_command(&id, "echo back-in-bash")).await;
    assert_eq!(r["result"]["exit_code"], 0, "{r:#}");
    let all = s.call(read(&id, json!({"cursor": 0}))).await;
    let text = all["result"]["output"].as_str().unwrap();
    for noise in [
        "__bp",
        "__timer",
        "PROMPT_COMMAND",
        "command not found",
        "633;",
    ] {
        assert!(!text.contains(noise), "{noise} in the transcript: {text}");
    }
    s.stop().await;
}

/// A terminal whose shell has ended — the user's `exit`, a shell killed — answers every
/// later command, raw input and key with how it ended and how to go on, not with "the
/// request is malformed"; its output stays readable, and the request it names opens a new
/// terminal that works.
#[tokio::test]
async fn a_terminal_whose_shell_ended_says_how_and_how_to_go_on() {
    let rc_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rc/bash");
    let home = scratch_dir();
    std::fs::copy(rc_dir.join("debian-skel.bashrc"), home.join(".bashrc")).unwrap();
    let s = bash_server_in(&home).await;
    let id = open_shell(&s).await;
    let r = s.call(terminal_command(&id, "echo before; exit 3")).await;
    assert_eq!(r["result"]["exit_code"], 3, "{r:#}");
    for late in [
        terminal_command(&id, "echo late"),
        terminal_input(&id, "echo late\r", None),
        keys(&id, &["ctrl-c"]),
    ] {
        let e = s.call(late).await;
        assert_eq!(code(&e), "PM_TERM_INVALID_PAYLOAD", "{e:#}");
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.contains("exited with code 3"), "{e:#}");
        assert_eq!(e["error"]["details"]["exited"], true, "{e:#}");
        assert_eq!(e["error"]["details"]["terminal_id"], id.as_str(), "{e:#}");
        let told = e["fallback"]["user_message"].as_str().unwrap();
        assert!(
            !told.contains("malformed") && told.contains("open_only"),
            "{e:#}"
        );
        assert_eq!(e["fallback"]["next_action"], "execute", "{e:#}");
    }
    let all = s.call(read(&id, json!({"cursor": 0}))).await;
    assert!(
        all["result"]["output"].as_str().unwrap().contains("before"),
        "{all:#}"
    );
    // The request the error names opens a terminal that runs commands.
    let e = s.call(terminal_command(&id, "true")).await;
    let reopened = s.call(e["error"]["details"]["reopen"].clone()).await;
    assert_eq!(reopened["success"], true, "{reopened:#}");
    let fresh = reopened["identity"]["terminal_id"].as_str().unwrap();
    let r = s.call(terminal_command(fresh, "kill -KILL $$")).await;
    assert_eq!(r["success"], true, "{r:#}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let e = s.call(terminal_command(fresh, "true")).await;
        let message = e["error"]["message"].as_str().unwrap_or("").to_string();
        if message.contains("killed by SIGKILL") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{e:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.stop().await;
}

/// A terminal whose shell ends at once (an operator's shell that exits, Wine's stub
/// `powershell.exe`): the command sent with the open is answered with how the shell ended
/// and how to go on, not with "the request is malformed".
#[tokio::test]
async fn a_shell_that_ends_at_once_is_reported_as_ended() {
    let s = server()
        .envs(&[("PM_TERM_INTERACTIVE_SHELL", "/bin/true")])
        .start()
        .await;
    let e = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": "echo hi"}, "runtime": {"wait_ms": 3000}}))
        .await;
    assert_eq!(e["error"]["details"]["exited"], true, "{e:#}");
    let message = e["error"]["message"].as_str().unwrap();
    assert!(message.contains("exited with code 0"), "{e:#}");
    let told = e["fallback"]["user_message"].as_str().unwrap();
    assert!(!told.contains("malformed"), "{e:#}");
    s.stop().await;
}
