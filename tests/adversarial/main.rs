//! The adversarial suite: each boundary the server promises, attacked as a hostile agent
//! would — through the MCP tools only — with the server run as the test's user and, when
//! that is root (as in many containers), again as an unprivileged user (`setpriv --reuid
//! nobody`). One group per boundary; every attempt checks its effect (a file that must not
//! change, a connection that must not arrive, a secret that must not be printed), never only
//! the answer's wording. A hole found is a case added here.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)] // drives the unix binaries (ptys, shells, signals); Windows: tests/windows

mod answers;
#[path = "../common/mod.rs"]
mod common;
mod containment;
mod credentials;
mod deletes;
mod keys;
mod policy;
mod repl;
mod requests;
mod sandbox;
mod strict;

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::{Value, json};

const NOBODY: u32 = 65534;

/// Who the server runs as.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Who {
    /// The test's own user (root in CI's containers).
    Me,
    /// `nobody`, started through `setpriv` (only when the test runs as root).
    Nobody,
}

/// The identities a boundary is tried as: the test's user, and `nobody` when that is root.
fn identities() -> Vec<Who> {
    if nix::unistd::geteuid().is_root() {
        vec![Who::Me, Who::Nobody]
    } else {
        vec![Who::Me]
    }
}

/// A test's files (under /var/tmp: a sandbox's private /tmp would hide them rather than keep
/// them read-only), owned by whoever the server runs as.
struct Place {
    base: PathBuf,
    home: PathBuf,
    ws: PathBuf,
    out: PathBuf,
}

impl Drop for Place {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn place(who: Who) -> Place {
    let base = PathBuf::from("/var/tmp").join(unique("itmcp-adv-"));
    let home = base.join("home");
    let ws = base.join("ws");
    let out = base.join("outside");
    for d in [
        &home.join(".config/interactive-terminal"),
        &home.join(".config/interactive-terminal-mcp"),
        &ws.join(".git/hooks"),
        &ws.join("vendor/lib/.git/hooks"),
        &out,
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join("vendor/lib/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(out.join("keep.txt"), "keep\n").unwrap();
    std::fs::write(
        home.join(".config/interactive-terminal/token"),
        "host-secret-0123456789\n",
    )
    .unwrap();
    std::fs::write(
        home.join(".config/interactive-terminal-mcp/http-token"),
        "http-secret-0123456789\n",
    )
    .unwrap();
    let p = Place {
        base,
        home,
        ws,
        out,
    };
    if who == Who::Nobody {
        chown_tree(&p.base, NOBODY);
    }
    for f in [
        "interactive-terminal/token",
        "interactive-terminal-mcp/http-token",
    ] {
        let path = p.home.join(".config").join(f);
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
    }
    p
}

fn chown_tree(dir: &Path, uid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid)).unwrap();
    if dir.is_dir() && !dir.is_symlink() {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            chown_tree(&e.path(), uid);
        }
    }
}

/// The server started as `who`, with `args`, its home in the place.
async fn start(who: Who, p: &Place, args: &[&str], env: &[(&str, &str)]) -> Server {
    let launch = match who {
        Who::Me => server().args(args),
        Who::Nobody => {
            let uid = format!("--reuid={NOBODY}");
            let gid = format!("--regid={NOBODY}");
            let mut a = vec![
                uid.as_str(),
                gid.as_str(),
                "--clear-groups",
                "--",
                SERVER_BIN,
            ];
            a.extend_from_slice(args);
            server().bin(&on_path("setpriv")).args(&a)
        }
    };
    launch
        .env("HOME", &p.home.display().to_string())
        .env("TMPDIR", "/tmp")
        // Warned commands run unasked: what is tried here is what the boundary lets them do.
        .env("PM_TERM_APPROVAL_DEFAULT", "approve")
        .env("PM_TERM_NO_USER_RC", "1")
        .envs(env)
        .start()
        .await
}

/// The server as `who`, its terminals bash, with nobody to ask: a warned command is
/// declined, so whatever runs is what the policy let through.
/// The answer to a line that would delete `p.out`: held (blocked, or declined with nobody to
/// ask), and what it would delete still there.
fn assert_held(who: Who, p: &Place, line: &str, r: &Value) {
    assert!(
        matches!(code(r), "PM_TERM_BLOCKED_DESTRUCTIVE" | "PM_TERM_DECLINED"),
        "{who:?}: ran unasked: {line}: {r:#}"
    );
    assert!(
        p.out.join("keep.txt").exists(),
        "{who:?}: {line} deleted {}",
        p.out.display()
    );
}

async fn start_declining(who: Who, p: &Place) -> Server {
    let env = [
        ("PM_TERM_APPROVAL_DEFAULT", "decline"),
        ("PM_TERM_INTERACTIVE_SHELL", "bash"),
    ];
    start(who, p, &[], &env).await
}

fn in_dir(command: &str, cwd: &Path) -> Value {
    json!({"action": "execute", "invocation": {"mode": "headless", "intent": "execute_command"},
        "execution": {"command": command},
        "runtime": {"cwd": cwd.display().to_string(), "wait_ms": 20000}})
}

/// What a headless answer printed, both streams.
fn printed(r: &Value) -> String {
    format!(
        "{}{}",
        r["result"]["stdout"].as_str().unwrap_or_default(),
        r["result"]["stderr"].as_str().unwrap_or_default()
    )
}

/// A listener outside the sandbox that counts the connections that reach it.
struct Listener {
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Listener {
    fn unix(path: &Path) -> Listener {
        let l = std::os::unix::net::UnixListener::bind(path).unwrap();
        Self::serve(move || l.accept().map(|(s, _)| s))
    }

    fn abstract_name(name: &str) -> Listener {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let l = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        Self::serve(move || l.accept().map(|(s, _)| s))
    }

    fn serve(
        accept: impl Fn() -> std::io::Result<std::os::unix::net::UnixStream> + Send + 'static,
    ) -> Listener {
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let h = hits.clone();
        std::thread::spawn(move || {
            while let Ok(mut s) = accept() {
                h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut b = [0u8; 16];
                let _ = s.read(&mut b);
            }
        });
        Listener { hits }
    }

    fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// An unrelated process of `who`'s (a `sleep` of `secs`), outside every session.
/// Another terminal of the same user (a person's shell, say), its device owned by `who`, with
/// a line typed into it: reading the device takes what is typed, writing it shows the person
/// anything. The pty stays open while the first value lives.
fn other_terminal(who: Who) -> (nix::pty::OpenptyResult, String) {
    let pty = nix::pty::openpty(None, None).unwrap();
    let device = std::fs::read_link(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&pty.slave)
    ))
    .unwrap()
    .display()
    .to_string();
    if who == Who::Nobody {
        std::os::unix::fs::chown(&device, Some(NOBODY), None).unwrap();
    }
    nix::unistd::write(&pty.master, b"-secret- typed by a person\n").unwrap();
    (pty, device)
}

fn victim(who: Who, secs: &str) -> std::process::Child {
    match who {
        Who::Me => std::process::Command::new("sleep")
            .arg(secs)
            .spawn()
            .unwrap(),
        Who::Nobody => std::process::Command::new("setpriv")
            .args([
                &format!("--reuid={NOBODY}"),
                &format!("--regid={NOBODY}"),
                "--clear-groups",
                "sleep",
                secs,
            ])
            .spawn()
            .unwrap(),
    }
}

/// The server started as `who` with the operator's sandbox over the place's workspace.
async fn start_sandboxed(who: Who, p: &Place, mechanism: &str) -> Server {
    let ws = p.ws.display().to_string();
    start(
        who,
        p,
        &[
            "--sandbox",
            "workspace-write",
            "--workspace",
            &ws,
            "--sandbox-mechanism",
            mechanism,
        ],
        &[],
    )
    .await
}
