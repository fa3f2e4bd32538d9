//! The operator's sandbox, attacked from inside: as root and as `nobody`, under bubblewrap
//! and under the Landlock fallback.

use super::*;

/// Everything a sandboxed command tried that got past the sandbox, for one mechanism and one
/// identity.
async fn sandbox_escapes(who: Who, mechanism: &str) -> Vec<String> {
    let p = place(who);
    let landlock = mechanism == "landlock";
    if landlock {
        // Landlock refuses a workspace holding a repository (its own test, below).
        std::fs::remove_dir_all(p.ws.join(".git")).unwrap();
        std::fs::remove_dir_all(p.ws.join("vendor")).unwrap();
    }
    let s = start_sandboxed(who, &p, mechanism).await;
    let mut escaped = Vec::new();
    let sock = p.out.join("svc.sock");
    let path_listener = Listener::unix(&sock);
    let abstract_name = unique("itmcp-abstract-");
    let abstract_listener = Listener::abstract_name(&abstract_name);
    if who == Who::Nobody {
        std::os::unix::fs::chown(&sock, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    let keep = p.out.join("keep.txt");
    let before = std::fs::metadata(&keep).unwrap();
    let shm = format!("/dev/shm/{}", unique("itmcp-shm-"));
    // The kernel's keyrings are not namespaced: a key the user keeps in the session keyring
    // (which every process started from the session shares) is there for the taking, and a
    // key planted there stays after the command.
    let kept_name = unique("itmcp-kept-");
    let kept = Key::add(&kept_name, "key-secret-0123456789");
    let planted_name = unique("itmcp-planted-");
    // Another terminal of the same user, with a line typed into it.
    let (_other_terminal, victim_tty) = other_terminal(who);
    let out = p.out.display().to_string();
    let attempts: Vec<(&str, String)> = vec![
        (
            "remount / read-write, then write outside",
            format!(
                "mount -o remount,bind,rw / ; mount -o remount,rw / ; echo x > {out}/remounted"
            ),
        ),
        (
            "connect to a path socket outside",
            format!(
                "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}'); s.send(b'hi')\"",
                sock.display()
            ),
        ),
        (
            "connect to an abstract socket outside",
            format!(
                "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect(b'\\0{abstract_name}'); s.send(b'hi')\""
            ),
        ),
        (
            "write a hook into a nested repository",
            "echo 'touch /tmp/pwned' > vendor/lib/.git/hooks/pre-commit".into(),
        ),
        (
            "write a hook into the workspace's repository",
            "echo 'touch /tmp/pwned' > .git/hooks/pre-commit".into(),
        ),
        ("chmod outside", format!("chmod 000 {out}/keep.txt")),
        (
            "touch -d outside",
            format!("touch -d 2001-01-01 {out}/keep.txt"),
        ),
        ("chown outside", format!("chown 1:1 {out}/keep.txt")),
        ("write /dev/shm", format!("echo x > {shm}")),
        (
            "read the host's token",
            format!(
                "cat {}/.config/interactive-terminal/token",
                p.home.display()
            ),
        ),
        (
            "read the HTTP token",
            format!(
                "cat {}/.config/interactive-terminal-mcp/http-token",
                p.home.display()
            ),
        ),
        (
            "read a key from the session keyring",
            format!(
                "python3 -c \"import ctypes; l=ctypes.CDLL(None); k=l.syscall({keyctl}, 10, -3, b'user', b'{kept_name}', 0); b=ctypes.create_string_buffer(64); n=l.syscall({keyctl}, 11, k, b, 64) if k >= 0 else -1; print(b.value.decode() if n > 0 else 'refused')\"",
                keyctl = nix::libc::SYS_keyctl
            ),
        ),
        (
            "plant a key in the session keyring",
            format!(
                "python3 -c \"import ctypes; k=ctypes.CDLL(None).syscall({}, b'user', b'{planted_name}', b'x', 1, -3); print('-secret- planted' if k >= 0 else 'refused')\"",
                nix::libc::SYS_add_key
            ),
        ),
        (
            "read what is typed into another terminal",
            format!("timeout 2 cat {victim_tty}"),
        ),
        (
            "write to another terminal",
            format!("echo x > {victim_tty} && echo '-secret- wrote another terminal'"),
        ),
        (
            "make a user namespace (every capability inside it)",
            "python3 -c \"import ctypes; print('-secret- unshared' if ctypes.CDLL(None).unshare(0x10000000) == 0 else 'refused')\"".into(),
        ),
    ];
    for (what, command) in &attempts {
        let r = s.call(in_dir(command, &p.ws)).await;
        let said = printed(&r);
        if said.contains("-secret-") {
            escaped.push(format!("{mechanism}/{who:?}: {what}: {said}"));
        }
    }
    if p.out.join("remounted").exists() {
        escaped.push(format!(
            "{mechanism}/{who:?}: remounted / and wrote outside"
        ));
    }
    if path_listener.hits() > 0 || abstract_listener.hits() > 0 {
        escaped.push(format!(
            "{mechanism}/{who:?}: Unix sockets reached: path {}, abstract {}",
            path_listener.hits(),
            abstract_listener.hits()
        ));
    }
    for hook in [".git/hooks/pre-commit", "vendor/lib/.git/hooks/pre-commit"] {
        if !landlock && p.ws.join(hook).exists() {
            escaped.push(format!("{mechanism}/{who:?}: wrote {hook}"));
        }
    }
    let after = std::fs::metadata(&keep).unwrap();
    if (after.mode(), after.uid(), after.mtime()) != (before.mode(), before.uid(), before.mtime()) {
        escaped.push(format!(
            "{mechanism}/{who:?}: changed the metadata of a file outside"
        ));
    }
    drop(kept);
    if let Some(planted) = Key::find(&planted_name) {
        drop(planted);
        escaped.push(format!(
            "{mechanism}/{who:?}: planted a key in the session keyring"
        ));
    }
    if Path::new(&shm).exists() {
        let _ = std::fs::remove_file(&shm);
        escaped.push(format!("{mechanism}/{who:?}: wrote {shm}"));
    }
    // Tracing an unrelated process of the same user (it would run code outside), and typing
    // into a terminal's input.
    let mut victim = victim(who, "30");
    let attach = |pid: String| {
        format!(
            "python3 -c \"import ctypes; print('attached' if ctypes.CDLL(None).ptrace(16, {pid}, 0, 0) == 0 else 'refused')\""
        )
    };
    let traced = s
        .call(in_dir(&attach(victim.id().to_string()), &p.ws))
        .await;
    if printed(&traced).contains("attached") {
        escaped.push(format!(
            "{mechanism}/{who:?}: ptrace attached an unrelated process"
        ));
    }
    // A debugger's own child (what Yama's default scope still allows): tracing at all.
    let traced = s
        .call(in_dir(
            &format!("sleep 5 & {}; kill %1", attach("$!".into())),
            &p.ws,
        ))
        .await;
    if printed(&traced).contains("attached") {
        escaped.push(format!(
            "{mechanism}/{who:?}: ptrace attached a process of its own"
        ));
    }
    let _ = victim.kill();
    let _ = victim.wait();
    let open = s
        .call(json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "execute_command"},
            "execution": {"command": "python3 -c \"import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('typed')\""},
            "runtime": {"cwd": p.ws.display().to_string(), "wait_ms": 20000}}))
        .await;
    if open["result"]["output"]
        .as_str()
        .unwrap_or_default()
        .contains("typed\r\n")
        || open["result"]["output"]
            .as_str()
            .unwrap_or_default()
            .ends_with("typed\n")
    {
        escaped.push(format!(
            "{mechanism}/{who:?}: TIOCSTI typed into a terminal"
        ));
    }
    // The sandbox still works for what it is for.
    let ok = s
        .call(in_dir("echo fine > inside.txt && cat inside.txt", &p.ws))
        .await;
    assert_eq!(
        ok["result"]["stdout"], "fine\n",
        "{mechanism}/{who:?}: {ok:#}"
    );
    s.stop().await;
    escaped
}

/// The operator's sandbox holds as root and as a user, under bubblewrap and under the
/// Landlock fallback: no remount, no Unix socket out, every `.git` read-only, no metadata
/// change outside, no `/dev/shm`, no tokens read, no tracing, no typing into terminals.
#[tokio::test(flavor = "multi_thread")]
async fn the_sandbox_holds_against_a_determined_agent() {
    let mut escaped = Vec::new();
    for who in identities() {
        for mechanism in ["bubblewrap", "landlock"] {
            escaped.extend(sandbox_escapes(who, mechanism).await);
        }
    }
    assert!(escaped.is_empty(), "got through:\n{}", escaped.join("\n"));
}

/// Landlock cannot keep a nested repository read-only inside a writable root: the sandbox
/// refuses to start commands there, naming it, rather than grant it.
#[tokio::test(flavor = "multi_thread")]
async fn landlock_refuses_a_workspace_holding_a_nested_repository() {
    let who = Who::Me;
    let p = place(who);
    std::fs::remove_dir_all(p.ws.join(".git")).unwrap();
    let s = start_sandboxed(who, &p, "landlock").await;
    let r = s.call(in_dir("echo x > vendor/lib/.git/HEAD", &p.ws)).await;
    assert_eq!(code(&r), "PM_TERM_INVALID_MODE", "{r:#}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("vendor/lib/.git"),
        "{r:#}"
    );
    assert_eq!(
        std::fs::read_to_string(p.ws.join("vendor/lib/.git/HEAD")).unwrap(),
        "ref: refs/heads/main\n"
    );
    s.stop().await;
}

/// A key in this process's session keyring (shared with the server it starts), removed
/// when dropped.
struct Key(i64);

impl Key {
    const SESSION: i64 = -3;

    fn add(name: &str, payload: &str) -> Key {
        let name = std::ffi::CString::new(name).unwrap();
        // SAFETY: add_key with NUL-terminated strings and a payload of the length given.
        let id = unsafe {
            nix::libc::syscall(
                nix::libc::SYS_add_key,
                c"user".as_ptr(),
                name.as_ptr(),
                payload.as_ptr(),
                payload.len(),
                Self::SESSION,
            )
        };
        assert!(id >= 0, "add_key: {}", std::io::Error::last_os_error());
        Key(id)
    }

    fn find(name: &str) -> Option<Key> {
        let name = std::ffi::CString::new(name).unwrap();
        // SAFETY: KEYCTL_SEARCH (10) with NUL-terminated strings and no destination.
        let id = unsafe {
            nix::libc::syscall(
                nix::libc::SYS_keyctl,
                10,
                Self::SESSION,
                c"user".as_ptr(),
                name.as_ptr(),
                0,
            )
        };
        (id >= 0).then_some(Key(id))
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        // SAFETY: KEYCTL_INVALIDATE (21) of a key id; no pointer.
        unsafe { nix::libc::syscall(nix::libc::SYS_keyctl, 21, self.0) };
    }
}
