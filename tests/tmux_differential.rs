//! The same programs drawn in a terminal of this server and in tmux, compared row by row.
//!
//! Each scenario runs at 80×24 in a detached tmux session (no configuration, no status line)
//! and in a terminal of the real binary; once the program waits for a key, tmux's
//! `capture-pane` and the server's screen view must hold the same rows, and the cursor must
//! stand in the same place. Scenarios cover what full-screen programs send: cursor saves,
//! index and next line, insert mode, tab stops, the alignment test, scroll regions, erasing,
//! wrapping and wide characters, the alternate screen, origin mode, and real programs (less,
//! vim) on a file. (tmux ignores `CSI I`, forward tabs, which xterm and this terminal
//! follow, so no scenario sends it.)
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

const COLS: u16 = 80;
const ROWS: u16 = 24;

/// A scenario: its name, the shell command that draws (run by `sh -c`, then `read`), and
/// the input sent after it, each followed by one more comparison.
type Scenario = (&'static str, String, Vec<&'static str>);

/// vttest's menu entry `n`, walked through with Return until the menu shows again.
fn vttest(n: &'static str, screens: usize) -> Vec<&'static str> {
    let mut steps = vec![n];
    steps.extend(std::iter::repeat_n("\r", screens));
    steps
}

fn scenarios(dir: &Path) -> Vec<Scenario> {
    let file = dir.join("numbers.txt");
    let text: String = (1..=200)
        .map(|i| format!("line {i} of the file\n"))
        .collect();
    std::fs::write(&file, text).unwrap();
    let f = file.display();
    let p = |s: &str| format!("printf '{s}'");
    vec![
        ("save and restore", p("A\\033[sBBBB\\033[uX\\n\\0337Y\\0338Z"), vec![]),
        ("index and next line", p("ab\\033Dc\\033Ed\\033[10;5Hup\\033M\\033Mx"), vec![]),
        ("insert mode", p("world\\r\\033[4hhello \\033[4l!\\n\\033[4hab\\033[3Dxy\\033[4l"), vec![]),
        (
            "tab stops",
            p("\\033[3g\\033[4G\\033H\\033[11G\\033H\\033[30G\\033H\\rA\\tB\\tC\\033[ZD\\n1\\t2\\t\\t3\\033[Z4\\033[0g\\n\\033[3ga\\tb\\033[3Zc"),
            vec![],
        ),
        ("alignment test", p("junk\\033#8\\033[5;5Hmid"), vec![]),
        (
            "scroll region",
            "printf '\\033[5;10r\\033[5;1H'; seq 1 20; printf '\\033[r\\033[20;1Hafter'".into(),
            vec![],
        ),
        (
            "erasing",
            p("0123456789\\033[5G\\033[K\\n0123456789\\033[5G\\033[1K\\n0123456789\\033[3G\\033[4X\\n0123456789\\033[3G\\033[2P\\n0123456789\\033[3G\\033[2@\\nkeep\\033[2L\\033[1M\\033[10;1Hx\\033[J"),
            vec![],
        ),
        (
            "wrapping and wide characters",
            "printf 'a%.0s' $(seq 1 170); printf '\\n日本語のテキスト\\n'; printf 'é%.0s' $(seq 1 85); printf '\\nx\\033[79G日y'".into(),
            vec![],
        ),
        ("repeat and movement", p("x\\033[5by\\033[3;3Hz\\033[2Aw\\033[4Cv\\033[2Bu\\033[10Dt\\033[2Es\\033[Fr\\033[15Gq\\033[7dp\\033[20`o"), vec![]),
        ("alternate screen", p("main\\033[?1049halt\\033[?1049l after"), vec![]),
        ("origin mode", p("\\033[3;8r\\033[?6h\\033[1;1Htop\\033[10;1Hbottom\\033[?6l\\033[r\\033[1;1Habs"), vec![]),
        ("autowrap off", p("\\033[?7l\\033[1;75Habcdefghij\\033[?7h\\033[3;1Hnext\\033[2;78Hwrapped"), vec![]),
        ("column mode clears", p("junk\\033[?3lX"), vec![]),
        (
            "line drawing",
            p("\\033(0lqqqk\\nx a x\\nmqqqj\\033(B q x\\n\\033)0\\016ltwuk\\017 t\\n\\033[!p\\033[4hsoft"),
            vec![],
        ),
        ("colours as text", p("\\033[31mred\\033[1;42m bold on green\\033[0m\\033[7m inverse\\033[0m plain"), vec![]),
        ("less on a file", format!("TERM=xterm-256color less {f}"), vec![" ", "G", "?line 1\r", "g", "key:down", "key:down"]),
        ("vim on a file", format!("TERM=xterm-256color vim -u NONE -N -n -i NONE {f}"), vec!["50G", "ddjp", "ohello", "key:escape", ":set nu\r", "key:up", "key:down"]),
        (
            "vttest: cursor movements",
            "TERM=xterm-256color vttest".into(),
            vttest("1\r", 6),
        ),
        (
            "vttest: screen features",
            "TERM=xterm-256color vttest".into(),
            vttest("2\r", 15),
        ),
        (
            "vttest: insert and delete",
            "TERM=xterm-256color vttest".into(),
            vttest("8\r", 14),
        ),
        (
            "vttest: character sets",
            "TERM=xterm-256color vttest".into(),
            vec!["3\r", "\r"],
        ),
        (
            "vttest: known bugs",
            "TERM=xterm-256color vttest".into(),
            vec!["9\r", "1\r", "\r", "2\r", "\r", "7\r", "\r", "9\r", "\r", "\r"],
        ),
        (
            "vttest: resets",
            "TERM=xterm-256color vttest".into(),
            vec!["10\r", "1\r", "\r", "3\r", "\r"],
        ),
        (
            "a curses program",
            format!("TERM=xterm-256color python3 {}", curses_program(dir).display()),
            vec!["key:down", "key:down", "key:up", "x"],
        ),
        (
            "nano on a file",
            format!("TERM=xterm-256color nano --ignorercfiles {f}"),
            vec!["key:down", "key:down", "hello", "key:end", "key:ctrl+g"],
        ),
        (
            "mc in a folder",
            format!("cd {}; TERM=xterm-256color mc -u -d --nocolor", dir.display()),
            vec!["key:down", "key:down", "key:tab", "key:f9"],
        ),
        (
            "whiptail",
            "TERM=xterm-256color whiptail --title Choose --menu 'Pick one' 15 50 4 a Apples b Bananas c Cherries".into(),
            vec!["key:down", "key:down", "key:up"],
        ),
    ]
}

/// A curses program with a box, a highlighted menu moved by the arrow keys (keypad on) and a
/// status line.
fn curses_program(dir: &Path) -> PathBuf {
    let path = dir.join("menu.py");
    std::fs::write(
        &path,
        r#"import curses
def main(w):
    curses.curs_set(0)
    w.keypad(True)
    items = ["open", "save", "quit"]
    at = 0
    while True:
        w.erase()
        w.box()
        w.addstr(0, 2, " menu ")
        for i, name in enumerate(items):
            w.addstr(2 + i, 4, name, curses.A_REVERSE if i == at else 0)
        w.addstr(curses.LINES - 2, 2, "key: arrows, x to exit")
        w.refresh()
        k = w.getch()
        if k == curses.KEY_DOWN: at = (at + 1) % 3
        elif k == curses.KEY_UP: at = (at - 1) % 3
        elif k == ord("x"): break
        w.addstr(curses.LINES - 3, 2, "got %d" % k)
curses.wrapper(main)
"#,
    )
    .unwrap();
    path
}

/// Where tmux draws other than xterm and vttest's own words on the screen say, the snapshot
/// is checked against those words instead: tmux homes the cursor to the absolute top on
/// DECSTBM even in origin mode, so vttest's "this line should be at the bottom" lands on its
/// second row there.
fn tmux_differs(name: &str, n: usize, ours: &[String]) -> Option<bool> {
    match (name, n) {
        ("vttest: screen features", 11) => Some(
            ours[22].starts_with("This line should be the one above the bottom of the screen.")
                && ours[23].starts_with(
                    "Origin mode test. This line should be at the bottom of the screen.",
                ),
        ),
        _ => None,
    }
}

/// Rows as text with trailing blanks cut, always `ROWS` of them.
fn rows(text: &str) -> Vec<String> {
    let mut rows: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    rows.resize(usize::from(ROWS), String::new());
    rows.truncate(usize::from(ROWS));
    rows
}

/// The text of `capture-pane -e`: escapes taken out, and the runs tmux marks as drawn in
/// the DEC line-drawing set (between SO and SI; tmux keeps their letters) as the lines a
/// terminal shows.
fn text_of(captured: &str) -> String {
    const SET: &str = " ◆▒␉␌␍␊°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·";
    let mut out = String::new();
    let mut drawing = false;
    let mut chars = captured.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                if chars.next() == Some('[') {
                    while chars.next().is_some_and(|b| !('@'..='~').contains(&b)) {}
                }
            }
            '\x0e' => drawing = true,
            '\x0f' => drawing = false,
            '_'..='~' if drawing => {
                out.push(SET.chars().nth(c as usize - 0x5f).unwrap());
            }
            c => out.push(c),
        }
    }
    out
}

/// tmux on its own socket, with no configuration but no status line.
struct Tmux {
    socket: String,
    conf: PathBuf,
}

impl Tmux {
    fn new(dir: &Path) -> Tmux {
        let conf = dir.join("tmux.conf");
        std::fs::write(&conf, "set -g status off\nset -g remain-on-exit on\n").unwrap();
        let tmux = Tmux {
            socket: format!("differential-{}", std::process::id()),
            conf,
        };
        // One server for every scenario, kept up by a session of its own (sessions started at
        // once would each try to start one).
        let o = tmux
            .cmd()
            .args(["new-session", "-d", "-s", "keep", "sleep", "100000"])
            .output()
            .unwrap();
        assert!(o.status.success(), "tmux: {o:?}");
        tmux
    }

    fn cmd(&self) -> std::process::Command {
        let mut c = std::process::Command::new("tmux");
        c.arg("-L").arg(&self.socket).arg("-f").arg(&self.conf);
        c.env_remove("TMUX");
        c
    }

    async fn out(&self, args: &[&str]) -> String {
        let o = tokio::process::Command::from(self.cmd())
            .args(args)
            .output()
            .await
            .unwrap();
        if !o.status.success() {
            let ls = self.cmd().args(["ls"]).output().unwrap();
            panic!(
                "tmux {args:?}: {o:?}\nsessions: {}",
                String::from_utf8_lossy(&ls.stdout)
            );
        }
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Start `command` in session `name`, at the size every scenario has.
    async fn start(&self, name: &str, command: &str) {
        let script = format!("printf '\\033[H\\033[2J'; {command}; read x");
        let (x, y) = (COLS.to_string(), ROWS.to_string());
        self.out(&[
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            &x,
            "-y",
            &y,
            "sh",
            "-c",
            &script,
        ])
        .await;
    }

    /// Send a step: text as it is, `key:<name>` as that key.
    async fn send(&self, name: &str, step: &str) {
        match step.strip_prefix("key:") {
            Some(key) => {
                let k = match key.strip_prefix("ctrl+") {
                    Some(c) => format!("C-{c}"),
                    None => {
                        let mut k = key.to_string();
                        k[..1].make_ascii_uppercase();
                        k
                    }
                };
                self.out(&["send-keys", "-t", name, &k]).await;
            }
            None => {
                self.out(&["send-keys", "-t", name, "-l", step]).await;
            }
        }
    }

    /// The screen and cursor (row, col) once the pane stopped changing.
    async fn snapshot(&self, name: &str) -> (Vec<String>, (u64, u64)) {
        let started = Instant::now();
        let mut last = (Vec::new(), (0, 0));
        let mut same = 0;
        while same < 3 && started.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let screen = text_of(&self.out(&["capture-pane", "-p", "-e", "-t", name]).await);
            let cursor = self
                .out(&["display", "-p", "-t", name, "#{cursor_y} #{cursor_x}"])
                .await;
            let mut at = cursor.split_whitespace().map(|n| n.parse::<u64>().unwrap());
            let now = (rows(&screen), (at.next().unwrap(), at.next().unwrap()));
            same = if now == last { same + 1 } else { 0 };
            last = now;
        }
        last
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").output();
    }
}

fn call(id: &str, execution: Value) -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
        "target": {"terminal_id": id}, "execution": execution, "runtime": {"wait_ms": 15000}})
}

/// Start `command` in the terminal `id`; it has drawn once it waits for a key.
async fn start(s: &Server, id: &str, command: &str) {
    let script = format!("printf '\\033[H\\033[2J'; {command}; read x");
    let quoted = format!("sh -c '{}'", script.replace('\'', "'\\''"));
    let r = s.call(call(id, json!({"command": quoted}))).await;
    assert_eq!(r["result"]["waiting_for_input"], true, "{r:#}");
}

/// Send a step: text as it is, `key:<name>` as that named key.
async fn send(s: &Server, id: &str, step: &str) {
    let execution = match step.strip_prefix("key:") {
        Some(key) => json!({"keys": [key]}),
        None => json!({"input": step}),
    };
    let r = s.call(call(id, execution)).await;
    assert!(r["error"].is_null(), "{step:?}: {r:#}");
}

/// The screen and cursor of the terminal `id` once it stopped changing (as the tmux side
/// waits for a still pane).
async fn snapshot(s: &Server, id: &str) -> (Vec<String>, (u64, u64)) {
    let mut last = Value::Null;
    let mut same = 0;
    while same < 2 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let r = s
            .call(json!({"action": "read_output", "target": {"terminal_id": id}, "output": {"view": "screen"}}))
            .await;
        let sc = r["result"]["screen"].clone();
        same = if sc == last { same + 1 } else { 0 };
        last = sc;
    }
    let text = last["text"].as_str().unwrap();
    let cursor = (
        last["cursor_row"].as_u64().unwrap(),
        last["cursor_col"].as_u64().unwrap(),
    );
    (rows(text), cursor)
}

/// What one scenario found: rows and cursors compared and alike, and what differed.
#[derive(Default)]
struct Found {
    rows: (usize, usize),
    cursors: (usize, usize),
    report: Vec<String>,
}

/// Run scenario `i` in tmux and in a fresh terminal of `s` (nothing a scenario left changes
/// the next), comparing after the first draw and after each step.
async fn compare(s: &Server, tmux: &Tmux, i: usize, scenario: Scenario) -> Found {
    let (name, command, steps) = scenario;
    let mut found = Found::default();
    let r = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"},
            "execution": {"cols": COLS, "rows": ROWS}}))
        .await;
    let id = r["identity"]["terminal_id"].as_str().unwrap().to_string();
    let session = format!("s{i}");
    tmux.start(&session, &command).await;
    start(s, &id, &command).await;
    for (n, step) in std::iter::once("").chain(steps).enumerate() {
        if !step.is_empty() {
            tmux.send(&session, step).await;
            send(s, &id, step).await;
        }
        let (theirs, their_cursor) = tmux.snapshot(&session).await;
        let (mine, my_cursor) = snapshot(s, &id).await;
        if let Some(ok) = tmux_differs(name, n, &mine) {
            found.rows.1 += theirs.len();
            if ok {
                found.rows.0 += theirs.len();
            } else {
                found.report.push(format!(
                    "{name} (snapshot {n}): not as vttest says: {mine:#?}"
                ));
            }
            continue;
        }
        for (row, (a, b)) in theirs.iter().zip(&mine).enumerate() {
            found.rows.1 += 1;
            if a == b {
                found.rows.0 += 1;
            } else {
                found.report.push(format!(
                    "{name} after {step:?} (snapshot {n}): row {row}\n  tmux: {a:?}\n  ours: {b:?}"
                ));
            }
        }
        found.cursors.1 += 1;
        if their_cursor == my_cursor {
            found.cursors.0 += 1;
        } else {
            found.report.push(format!(
                "{name} after {step:?}: cursor (row, col) tmux {their_cursor:?}, ours {my_cursor:?}"
            ));
        }
    }
    let _ = tmux.out(&["kill-session", "-t", &session]).await;
    s.call(json!({"action": "terminate", "target": {"terminal_id": id}}))
        .await;
    found
}

/// Scenarios run this many at a time (each mostly waits for its screens to settle).
const AT_ONCE: usize = 4;

#[tokio::test(flavor = "multi_thread")]
async fn every_scenario_draws_as_tmux_draws() {
    let dir = scratch_dir();
    let tmux = Tmux::new(&dir);
    let s = server()
        .envs(&[("PM_TERM_NO_USER_RC", "1"), ("PM_TERM_APPROVAL", "never")])
        .start()
        .await;
    let mut all = Found::default();
    let mut list: Vec<_> = scenarios(&dir).into_iter().enumerate().collect();
    while !list.is_empty() {
        let batch: Vec<_> = list.drain(..AT_ONCE.min(list.len())).collect();
        let runs = batch
            .into_iter()
            .map(|(i, scenario)| compare(&s, &tmux, i, scenario));
        for found in futures_util::future::join_all(runs).await {
            all.rows = (all.rows.0 + found.rows.0, all.rows.1 + found.rows.1);
            all.cursors = (
                all.cursors.0 + found.cursors.0,
                all.cursors.1 + found.cursors.1,
            );
            all.report.extend(found.report);
        }
    }
    eprintln!(
        "{}/{} rows and {}/{} cursors as tmux draws them",
        all.rows.0, all.rows.1, all.cursors.0, all.cursors.1
    );
    assert!(
        all.report.is_empty(),
        "differences:\n{}",
        all.report.join("\n")
    );
    s.stop().await;
}
