//! bubblewrap: the program runs in its own user, mount, pid and IPC namespaces (and network
//! namespace when the network is off), with every capability dropped, the whole file system
//! bound read-only, a fresh /dev and /proc, a private tmpfs on /tmp, the writable roots bound
//! back writable — except what stays protected inside them — the server's own files hidden,
//! and a system-call filter (`seccomp`) applied inside by the server's own binary before the
//! program starts.
//!
//! Run by root (as in many containers), bubblewrap keeps every capability unless told
//! otherwise, and `mount -o remount,bind,rw /` made the host writable again: so it always
//! gets `--cap-drop ALL`, and a user namespace of its own where the kernel allows one (root
//! inside then has no power over the mounts it was given).

use std::path::{Path, PathBuf};
#[cfg(target_os = "linux")]
use std::process::{Command, Stdio};

use super::seccomp::{self, Sockets};
use super::settings::PROTECTED_NAMES;
use super::{Level, Mechanism, NetRoute, Network, Settings, gitdirs, netbridge};

/// The program's name on PATH (Debian's `bubblewrap` package).
#[cfg(target_os = "linux")]
const PROGRAM: &str = "bwrap";

/// Where every sandbox gets a tmpfs of its own.
const PRIVATE_TMP: &str = "/tmp";

/// How bubblewrap is run here, found once at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Whether it makes a user namespace (always for an unprivileged user; for root, where
    /// the kernel allows it).
    pub user_namespace: bool,
    /// The server's own binary, which applies the system-call filter inside.
    pub helper: PathBuf,
}

/// One program to start inside.
pub struct Run<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    pub cwd: &'a Path,
    /// Paths the program must read although the private /tmp hides them.
    pub expose: &'a [PathBuf],
    pub env: &'a [(String, String)],
}

/// bubblewrap is Linux's.
#[cfg(not(target_os = "linux"))]
pub fn find(_settings: &Settings) -> Result<Mechanism, String> {
    Err(super::NOT_LINUX.into())
}

/// Find bubblewrap and try it once with `settings`, as every session will use it.
#[cfg(target_os = "linux")]
pub fn find(settings: &Settings) -> Result<Mechanism, String> {
    let path = crate::program::which(PROGRAM).ok_or_else(|| {
        format!(
            "bubblewrap ({PROGRAM}) is not installed or not on PATH (Debian/Ubuntu: apt-get \
             install bubblewrap)"
        )
    })?;
    let helper = std::env::current_exe()
        .map_err(|e| format!("cannot find this program's own binary for the sandbox: {e}"))?;
    let version = Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "bubblewrap".into());
    // Root may be refused a user namespace (a container without them): it then runs with
    // its capabilities dropped all the same.
    let tries: &[bool] = if nix::unistd::geteuid().is_root() {
        &[true, false]
    } else {
        &[true]
    };
    let mut said = String::new();
    for &user_namespace in tries {
        let options = Options {
            user_namespace,
            helper: helper.clone(),
        };
        let run = Run {
            program: "true",
            args: &[],
            cwd: Path::new("/"),
            expose: &[],
            env: &[],
        };
        let probe = Command::new(&path)
            .args(argv(settings, &options, run, None)?)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("{} cannot be started: {e}", path.display()))?;
        if probe.status.success() {
            return Ok(Mechanism::Bubblewrap {
                path,
                version,
                options,
            });
        }
        said = format!(
            "{} ({})",
            String::from_utf8_lossy(&probe.stderr).trim(),
            probe.status
        );
    }
    Err(format!(
        "{} cannot set up the sandbox here: {said}; user namespaces may be disabled \
         (kernel.unprivileged_userns_clone, or a container without them)",
        path.display(),
    ))
}

/// Variables that send a program's connections through a proxy.
const PROXY_VARS: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];

/// Variables that would let a program skip the proxy (a connection it makes directly has
/// nowhere to go, so it would only fail in a more puzzling way).
const NO_PROXY_VARS: [&str; 2] = ["NO_PROXY", "no_proxy"];

/// bwrap's arguments that run `run` inside the sandbox; with `net`, through the helper that
/// brings the allow-list proxy onto the sandbox's loopback. `Err` when a writable root
/// cannot be checked for the repositories in it.
pub fn argv(
    settings: &Settings,
    options: &Options,
    run: Run<'_>,
    net: Option<&NetRoute>,
) -> Result<Vec<String>, String> {
    let mut a: Vec<String> = Vec::new();
    let mut push = |items: &[&str]| a.extend(items.iter().map(|s| s.to_string()));
    push(&["--die-with-parent", "--unshare-pid", "--unshare-ipc"]);
    if options.user_namespace {
        push(&["--unshare-user"]);
    }
    push(&["--cap-drop", "ALL"]);
    if settings.network != Network::On {
        push(&["--unshare-net"]);
    }
    let root_bind = match settings.level {
        Level::Off => "--bind",
        Level::ReadOnly | Level::WorkspaceWrite => "--ro-bind",
    };
    push(&[root_bind, "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    let private_tmp = settings.level != Level::Off;
    if private_tmp {
        push(&["--tmpfs", PRIVATE_TMP]);
    }
    let mut bind = |flag: &str, p: &Path| {
        let s = p.display().to_string();
        a.extend([flag.to_string(), s.clone(), s]);
    };
    let writable = settings.writable_roots();
    if private_tmp {
        // What the private /tmp hides but the program needs to read: its working directory
        // (read-only, unless a writable root holds it), the helper, and what the caller names.
        let hidden =
            |p: &Path| p.starts_with(PRIVATE_TMP) && !writable.iter().any(|w| p.starts_with(w));
        let net_paths = net
            .iter()
            .flat_map(|n| [n.socket.as_path(), n.helper.as_path()]);
        for p in run
            .expose
            .iter()
            .map(PathBuf::as_path)
            .chain([run.cwd, options.helper.as_path()])
            .chain(net_paths)
        {
            if hidden(p) {
                bind("--ro-bind-try", p);
            }
        }
    }
    for w in writable {
        bind("--bind", w);
    }
    for w in writable {
        for name in PROTECTED_NAMES {
            bind("--ro-bind-try", &w.join(name));
        }
        for git in gitdirs::under(w)? {
            bind("--ro-bind-try", &git);
        }
    }
    // The server's own files (tokens, the page key, the policy) are hidden, not only kept
    // read-only: a sandboxed program reads nothing it could use against the server.
    for p in &settings.protected {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => {
                let s = p.display().to_string();
                a.extend(["--tmpfs".into(), s.clone(), "--remount-ro".into(), s]);
            }
            Ok(_) => {
                a.extend([
                    "--ro-bind".into(),
                    "/dev/null".into(),
                    p.display().to_string(),
                ]);
            }
            Err(_) => {}
        }
    }
    a.extend(["--chdir".to_string(), run.cwd.display().to_string()]);
    for (k, v) in run.env {
        a.extend(["--setenv".to_string(), k.clone(), v.clone()]);
    }
    let helper = options.helper.display().to_string();
    let sockets = match settings.network {
        Network::On => Sockets::Any,
        Network::Off | Network::Allow(_) => Sockets::OwnNamespace,
    };
    a.push("--".to_string());
    if let Some(n) = net {
        let url = format!("http://127.0.0.1:{}", netbridge::PORT);
        let at = a.len() - 1;
        let mut proxy: Vec<String> = Vec::new();
        for var in PROXY_VARS {
            proxy.extend(["--setenv".into(), var.into(), url.clone()]);
        }
        for var in NO_PROXY_VARS {
            proxy.extend(["--unsetenv".into(), var.into()]);
        }
        a.splice(at..at, proxy);
        a.extend([
            helper.clone(),
            netbridge::FLAG.to_string(),
            n.socket.display().to_string(),
            "--".to_string(),
        ]);
    }
    a.push(helper);
    a.extend(seccomp::helper_args(sockets, run.program, run.args));
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(level: Level, ws: &[&str], network: Network) -> Settings {
        Settings {
            level,
            workspaces: ws.iter().map(PathBuf::from).collect(),
            network,
            protected: vec![PathBuf::from("/w/a/.config/itmcp"), PathBuf::from("/etc/x")],
            mechanism: super::super::settings::MechanismChoice::Auto,
        }
    }

    fn options() -> Options {
        Options {
            user_namespace: true,
            helper: PathBuf::from("/opt/bin/server"),
        }
    }

    fn args<'a>(
        program: &'a str,
        args: &'a [String],
        cwd: &'a str,
        expose: &'a [PathBuf],
        env: &'a [(String, String)],
    ) -> Run<'a> {
        Run {
            program,
            args,
            cwd: Path::new(cwd),
            expose,
            env,
        }
    }

    #[test]
    fn workspace_write_binds_roots_writable_and_keeps_protected_paths_read_only() {
        let s = settings(Level::WorkspaceWrite, &["/w/a", "/tmp/b"], Network::Off);
        let sh = ["-c".to_string(), "x".to_string()];
        let env = [("K".to_string(), "v w".to_string())];
        let a = argv(&s, &options(), args("sh", &sh, "/tmp/c", &[], &env), None)
            .expect("argv")
            .join(" ");
        assert!(a.starts_with(
            "--die-with-parent --unshare-pid --unshare-ipc --unshare-user --cap-drop ALL \
             --unshare-net --ro-bind / / "
        ));
        let pos = |needle: &str| a.find(needle).unwrap_or_else(|| panic!("{needle} in {a}"));
        // The private /tmp comes before what is bound into it.
        assert!(pos("--tmpfs /tmp") < pos("--bind /tmp/b /tmp/b"));
        assert!(pos("--ro-bind-try /tmp/c /tmp/c") > pos("--tmpfs /tmp"));
        // Protected paths come after the roots they sit in.
        assert!(pos("--ro-bind-try /w/a/.git /w/a/.git") > pos("--bind /w/a /w/a"));
        assert!(
            a.ends_with(
                "--chdir /tmp/c --setenv K v w -- /opt/bin/server --pm-confine own-namespace \
                 -- sh -c x"
            ),
            "{a}"
        );
    }

    #[test]
    fn read_only_binds_nothing_writable_and_network_on_keeps_the_network() {
        let s = settings(Level::ReadOnly, &["/w/a"], Network::On);
        let run = [PathBuf::from("/tmp/run")];
        let a = argv(&s, &options(), args("true", &[], "/w/a", &run, &[]), None)
            .expect("argv")
            .join(" ");
        assert!(!a.contains("--unshare-net"));
        assert!(!a.contains("--bind /w/a"));
        assert!(a.contains("--ro-bind-try /tmp/run /tmp/run"));
        assert!(
            a.ends_with("-- /opt/bin/server --pm-confine any -- true"),
            "{a}"
        );
        let s = settings(Level::Off, &[], Network::Off);
        let a = argv(&s, &options(), args("true", &[], "/tmp/x", &[], &[]), None)
            .expect("argv")
            .join(" ");
        assert!(a.contains("--unshare-net --bind / /"));
        assert!(!a.contains("--tmpfs"));
        let root = Options {
            user_namespace: false,
            ..options()
        };
        let a = argv(&s, &root, args("true", &[], "/tmp/x", &[], &[]), None)
            .expect("argv")
            .join(" ");
        assert!(
            !a.contains("--unshare-user") && a.contains("--cap-drop ALL"),
            "{a}"
        );
    }

    #[test]
    fn an_allow_list_runs_the_program_through_the_helper_with_the_proxy_set() {
        let s = settings(
            Level::ReadOnly,
            &[],
            Network::Allow(vec!["example.com".into()]),
        );
        let net = NetRoute {
            socket: PathBuf::from("/tmp/net/proxy-1.sock"),
            helper: PathBuf::from("/opt/bin/server"),
        };
        let sh = ["-c".to_string(), "x".to_string()];
        let env = [("HTTPS_PROXY".to_string(), "http://elsewhere".to_string())];
        let a = argv(&s, &options(), args("sh", &sh, "/w", &[], &env), Some(&net)).expect("argv");
        let a = a.join(" ");
        assert!(a.contains("--unshare-net"));
        assert!(a.contains("--ro-bind-try /tmp/net/proxy-1.sock /tmp/net/proxy-1.sock"));
        // The proxy's variables come after the request's: the last --setenv wins.
        assert!(
            a.find("--setenv HTTPS_PROXY http://127.0.0.1:3128")
                > a.find("--setenv HTTPS_PROXY http://elsewhere")
        );
        assert!(a.contains("--unsetenv NO_PROXY"));
        assert!(
            a.ends_with(
                "-- /opt/bin/server --pm-net-bridge /tmp/net/proxy-1.sock -- /opt/bin/server \
                 --pm-confine own-namespace -- sh -c x"
            ),
            "{a}"
        );
    }
}
