//! bubblewrap: the program runs in its own mount, pid and IPC namespaces (and network
//! namespace when the network is off), with the whole file system bound read-only, a fresh
//! /dev and /proc, a private tmpfs on /tmp, and the writable roots bound back writable —
//! except what stays protected inside them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::settings::PROTECTED_NAMES;
use super::{Level, Mechanism, NetRoute, Network, Settings, netbridge};

/// The program's name on PATH (Debian's `bubblewrap` package).
const PROGRAM: &str = "bwrap";

/// Where every sandbox gets a tmpfs of its own.
const PRIVATE_TMP: &str = "/tmp";

/// Find bubblewrap and try it once with `settings`, as every session will use it.
pub fn find(settings: &Settings) -> Result<Mechanism, String> {
    let path = crate::program::which(PROGRAM).ok_or_else(|| {
        format!(
            "bubblewrap ({PROGRAM}) is not installed or not on PATH (Debian/Ubuntu: apt-get \
             install bubblewrap)"
        )
    })?;
    let version = Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "bubblewrap".into());
    let probe = Command::new(&path)
        .args(argv(settings, "true", &[], Path::new("/"), &[], &[], None))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("{} cannot be started: {e}", path.display()))?;
    if !probe.status.success() {
        let said = String::from_utf8_lossy(&probe.stderr).trim().to_string();
        return Err(format!(
            "{} cannot set up the sandbox here ({}): {said}; user namespaces may be disabled \
             (kernel.unprivileged_userns_clone, or a container without them)",
            path.display(),
            probe.status
        ));
    }
    Ok(Mechanism::Bubblewrap { path, version })
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

/// bwrap's arguments that run `program args` in `cwd` inside the sandbox; with `net`, through
/// the helper that brings the allow-list proxy onto the sandbox's loopback.
pub fn argv(
    settings: &Settings,
    program: &str,
    args: &[String],
    cwd: &Path,
    expose: &[PathBuf],
    env: &[(String, String)],
    net: Option<&NetRoute>,
) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    let mut push = |items: &[&str]| a.extend(items.iter().map(|s| s.to_string()));
    push(&["--die-with-parent", "--unshare-pid", "--unshare-ipc"]);
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
        // (read-only, unless a writable root holds it) and what the caller names.
        let hidden =
            |p: &Path| p.starts_with(PRIVATE_TMP) && !writable.iter().any(|w| p.starts_with(w));
        let net_paths = net
            .iter()
            .flat_map(|n| [n.socket.as_path(), n.helper.as_path()]);
        for p in expose
            .iter()
            .map(PathBuf::as_path)
            .chain([cwd])
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
    }
    for p in &settings.protected {
        if writable.iter().any(|w| p.starts_with(w)) {
            bind("--ro-bind-try", p);
        }
    }
    a.extend(["--chdir".to_string(), cwd.display().to_string()]);
    for (k, v) in env {
        a.extend(["--setenv".to_string(), k.clone(), v.clone()]);
    }
    if let Some(n) = net {
        let url = format!("http://127.0.0.1:{}", netbridge::PORT);
        for var in PROXY_VARS {
            a.extend(["--setenv".into(), var.into(), url.clone()]);
        }
        for var in NO_PROXY_VARS {
            a.extend(["--unsetenv".into(), var.into()]);
        }
        a.extend([
            "--".to_string(),
            n.helper.display().to_string(),
            netbridge::FLAG.to_string(),
            n.socket.display().to_string(),
        ]);
    }
    a.extend(["--".to_string(), program.to_string()]);
    a.extend(args.iter().cloned());
    a
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

    #[test]
    fn workspace_write_binds_roots_writable_and_keeps_protected_paths_read_only() {
        let s = settings(Level::WorkspaceWrite, &["/w/a", "/tmp/b"], Network::Off);
        let a = argv(
            &s,
            "sh",
            &["-c".into(), "x".into()],
            Path::new("/tmp/c"),
            &[],
            &[("K".to_string(), "v w".to_string())],
            None,
        )
        .join(" ");
        assert!(a.starts_with(
            "--die-with-parent --unshare-pid --unshare-ipc --unshare-net --ro-bind / / "
        ));
        let pos = |needle: &str| a.find(needle).unwrap_or_else(|| panic!("{needle} in {a}"));
        // The private /tmp comes before what is bound into it.
        assert!(pos("--tmpfs /tmp") < pos("--bind /tmp/b /tmp/b"));
        assert!(pos("--ro-bind-try /tmp/c /tmp/c") > pos("--tmpfs /tmp"));
        // Protected paths come after the roots they sit in.
        assert!(pos("--ro-bind-try /w/a/.git /w/a/.git") > pos("--bind /w/a /w/a"));
        assert!(pos("--ro-bind-try /w/a/.config/itmcp") > pos("--bind /w/a /w/a"));
        assert!(
            !a.contains("/etc/x"),
            "outside the roots it is read-only anyway"
        );
        assert!(
            a.ends_with("--chdir /tmp/c --setenv K v w -- sh -c x"),
            "{a}"
        );
    }

    #[test]
    fn read_only_binds_nothing_writable_and_network_on_keeps_the_network() {
        let s = settings(Level::ReadOnly, &["/w/a"], Network::On);
        let a = argv(
            &s,
            "true",
            &[],
            Path::new("/w/a"),
            &[PathBuf::from("/tmp/run")],
            &[],
            None,
        )
        .join(" ");
        assert!(!a.contains("--unshare-net"));
        assert!(!a.contains("--bind /w/a"));
        assert!(a.contains("--ro-bind-try /tmp/run /tmp/run"));
        let s = settings(Level::Off, &[], Network::Off);
        let a = argv(&s, "true", &[], Path::new("/tmp/x"), &[], &[], None).join(" ");
        assert!(a.contains("--unshare-net --bind / /"));
        assert!(!a.contains("--tmpfs"));
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
        let a = argv(
            &s,
            "sh",
            &["-c".into(), "x".into()],
            Path::new("/w"),
            &[],
            &[("HTTPS_PROXY".to_string(), "http://elsewhere".to_string())],
            Some(&net),
        );
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
            a.ends_with("-- /opt/bin/server --pm-net-bridge /tmp/net/proxy-1.sock -- sh -c x"),
            "{a}"
        );
    }
}
