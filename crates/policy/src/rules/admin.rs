//! Rules on administration: tools that destroy infrastructure, data or access, package
//! installs, kills of every process, setuid bits, and containers handed the host.

use super::*;
use crate::wrappers::basename;

/// Operations that destroy infrastructure, data or access, by tool.
pub fn admin_destructive(name: &str, targets: &[&str], flags: &[&str]) -> Option<String> {
    let first = targets.first().copied().unwrap_or("");
    let second = targets.get(1).copied().unwrap_or("");
    let what = match name {
        "terraform" | "tofu" | "pulumi" if first == "destroy" => "destroys managed infrastructure",
        // Cloud and virtual-machine tools: a verb that deletes, destroys or terminates,
        // wherever it stands among their words (`aws ec2 terminate-instances`, `gcloud
        // compute instances delete`, `az group delete`, `gh repo delete`, `virsh undefine`).
        _ if INFRA_TOOLS.contains(&name) && targets.iter().any(|t| destroys(t)) => {
            "deletes, destroys or terminates managed resources (machines, groups, repositories, data)"
        }
        "kubectl" | "oc" if first == "delete" => "deletes cluster resources",
        "helm" if matches!(first, "uninstall" | "delete") => "uninstalls a release",
        "docker" | "podman" if first == "system" && second == "prune" => {
            "deletes containers, images and volumes"
        }
        "docker" | "podman"
            if matches!(first, "volume" | "image" | "container") && second == "prune" =>
        {
            "deletes unused containers, images or volumes"
        }
        "docker" | "podman" if first == "volume" && matches!(second, "rm" | "remove") => {
            "deletes volumes, and the data in them"
        }
        // `docker compose down -v` (and `docker-compose`, `podman compose`): the project's
        // volumes go with its containers — its databases' data.
        "docker" | "podman" | "docker-compose" | "podman-compose"
            if targets.contains(&"down")
                && (name.ends_with("-compose") || first == "compose")
                && (flags.contains(&"--volumes") || has_short(flags, &['v'])) =>
        {
            "deletes the project's volumes, and the data in them"
        }
        // `docker rm -f $(docker ps -aq)`: every container (or image) a listing prints.
        "docker" | "podman"
            if (matches!(first, "rm" | "rmi" | "kill")
                || (matches!(first, "container" | "image") && matches!(second, "rm" | "kill")))
                && targets.iter().any(|t| t.contains(crate::lex::COMPUTED)) =>
        {
            "removes or kills the containers or images a listing computes when it runs (all \
             of them, with `ps -aq`)"
        }
        // Publishing a package: public at once, and a registry does not take a version back.
        "npm" | "pnpm" | "yarn" | "bun" | "cargo" | "poetry" | "flit" | "hatch" | "uv"
            if first == "publish" && !flags.contains(&"--dry-run") =>
        {
            "publishes a package to its registry (public, and a version cannot be taken back)"
        }
        "npm" | "pnpm" | "yarn" if matches!(first, "unpublish" | "deprecate") => {
            "takes a published package (or its versions) away from everyone who depends on it"
        }
        // Scaled to nothing: every replica of the workload stops.
        "kubectl" | "oc"
            if first == "scale"
                && (flags.contains(&"--replicas=0")
                    || (flags.contains(&"--replicas") && targets.contains(&"0"))) =>
        {
            "stops every replica of a workload"
        }
        "twine" if first == "upload" => {
            "publishes a package to its registry (public, and a version cannot be taken back)"
        }
        "gem" if first == "push" => {
            "publishes a package to its registry (public, and a version cannot be taken back)"
        }
        "crontab" if has_short(flags, &['r']) => "deletes the user's crontab",
        "journalctl"
            if flags
                .iter()
                .any(|f| f.starts_with("--vacuum") || *f == "--rotate") =>
        {
            "deletes the system's archived logs"
        }
        // macOS's service manager: anything but reading loads, starts or changes what runs
        // at login or on a schedule.
        "launchctl"
            if !matches!(
                first,
                "list" | "print" | "print-disabled" | "version" | "help" | "blame" | "procinfo"
            ) =>
        {
            "loads or changes a launch agent or daemon (what runs at login or on a schedule)"
        }
        "iptables" | "ip6tables" | "nft"
            if has_short(flags, &['F', 'X']) || flags.contains(&"--flush") || first == "flush" =>
        {
            "flushes firewall rules"
        }
        "userdel" | "deluser" | "groupdel" => "deletes users or groups",
        "dropdb" => "drops a database",
        // A console's statements pass (see `consoles`), but not the ones that destroy a
        // database's data wholesale.
        "psql" | "mysql" | "mariadb" | "sqlite3" | "sqlcmd" | "clickhouse-client" | "duckdb"
        | "mongo" | "mongosh"
            if targets.iter().chain(flags).any(|t| drops_data(t)) =>
        {
            "drops or empties a database, schema or table"
        }
        "redis-cli"
            if targets.iter().any(|t| {
                t.eq_ignore_ascii_case("flushall") || t.eq_ignore_ascii_case("flushdb")
            }) =>
        {
            "deletes every key"
        }
        "aws"
            if first == "s3"
                && ((second == "rm" && flags.contains(&"--recursive"))
                    || (second == "rb" && flags.contains(&"--force"))) =>
        {
            "deletes S3 objects recursively"
        }
        "vssadmin" | "wbadmin" if first == "delete" => "deletes shadow copies or backups",
        "gsutil" if first == "rm" && has_short(flags, &['r']) => {
            "deletes storage objects recursively"
        }
        // `ip OBJECT VERB …`: only showing is left alone. iproute2 takes any prefix of a
        // verb, in its own order (`ip link s` is `set`), so a verb passes only when it
        // spells out `show`/`list`/`get` far enough to be nothing else.
        "ip" if !second.is_empty()
            && (second.len() < 2
                || !["show", "list", "lst", "get", "help"]
                    .iter()
                    .any(|v| v.starts_with(second))) =>
        {
            "changes the network configuration (links, addresses, routes)"
        }
        // `ifconfig eth0 down`, `ifconfig eth0 10.0.0.2`: more than the interface's name
        // changes it (`ifconfig`, `ifconfig eth0` show).
        "ifconfig" if targets.len() >= 2 => {
            "changes the network configuration (links, addresses, routes)"
        }
        // hdparm's options that erase, trim or rewrite the disk's sectors or firmware.
        "hdparm"
            if flags.iter().any(|f| {
                f.starts_with("--security-erase")
                    || matches!(
                        *f,
                        "--trim-sector-ranges"
                            | "--trim-sector-ranges-stdin"
                            | "--write-sector"
                            | "--fwdownload"
                            | "--make-bad-sector"
                            | "--dco-restore"
                            | "--dco-setmax"
                            | "--security-set-pass"
                    )
            }) =>
        {
            "erases, trims or rewrites the disk's sectors or firmware"
        }
        "swapoff" | "swapon" => "changes the machine's swap",
        // NetworkManager: only showing is left alone (`nmcli networking off`, `nmcli con
        // down x` cut the machine off).
        "nmcli" if nmcli_changes(targets) => {
            "changes the network configuration (links, addresses, routes)"
        }
        // A device node made is a disk or a terminal reachable under a name no rule on
        // devices knows (`mknod /tmp/x b 8 0` is the first disk).
        "mknod" if targets.iter().any(|t| matches!(*t, "b" | "c" | "u")) => {
            "makes a device node: a name for a disk or device that the rules on devices do not know"
        }
        "sysctl"
            if targets.iter().any(|t| t.contains('='))
                || has_short(flags, &['w', 'p'])
                || flags
                    .iter()
                    .any(|f| f.starts_with("--w") || f.starts_with("--l") || *f == "--system") =>
        {
            "changes kernel settings"
        }
        _ => return None,
    };
    Some(what.to_string())
}

/// Whether `nmcli OBJECT VERB …` changes something: only its listings pass, in the
/// abbreviations nmcli takes (`nmcli c s`, `nmcli d wifi l`, `nmcli radio wifi`).
fn nmcli_changes(ops: &[&str]) -> bool {
    let spells = |word: &str, min: usize, verbs: &[&str]| {
        word.len() >= min && verbs.iter().any(|v| v.starts_with(word))
    };
    let (Some(object), Some(verb)) = (ops.first(), ops.get(1)) else {
        return false;
    };
    let reads = spells(verb, 1, &["show", "status"])
        || spells(
            verb,
            2,
            &["list", "monitor", "connectivity", "help", "permissions"],
        )
        || (spells(verb, 1, &["wifi", "lldp"])
            && ops.get(2).is_none_or(|w| spells(w, 1, &["list"])))
        || (spells(object, 1, &["radio", "networking", "general"])
            && ops.len() == 2
            && !matches!(*verb, "on" | "off"));
    !reads
}

/// A command's words that are not options (its verbs and their objects).
fn operands(args: &[String]) -> Vec<&str> {
    args.iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect()
}

pub fn package_install(name: &str, args: &[String]) -> Option<String> {
    let words = operands(args);
    let first = words.first().copied().unwrap_or("");
    let flag = |f: &str| args.iter().any(|a| a == f);
    let installs = match name {
        "apt" | "apt-get" | "aptitude" => matches!(
            first,
            "install"
                | "remove"
                | "purge"
                | "upgrade"
                | "dist-upgrade"
                | "full-upgrade"
                | "autoremove"
                | "reinstall"
        ),
        "dpkg" => args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-i" | "--install" | "-r" | "--remove" | "-P" | "--purge"
            )
        }),
        "yum" | "dnf" | "microdnf" | "tdnf" => matches!(
            first,
            "install" | "remove" | "erase" | "upgrade" | "update" | "reinstall" | "downgrade"
        ),
        "zypper" => matches!(
            first,
            "install" | "in" | "remove" | "rm" | "update" | "up" | "dist-upgrade" | "dup"
        ),
        "pacman" | "yay" | "paru" => args
            .iter()
            .any(|a| a.starts_with("-S") || a.starts_with("-R") || a.starts_with("-U")),
        "apk" => matches!(first, "add" | "del"),
        "brew" | "port" => matches!(first, "install" | "uninstall" | "upgrade" | "reinstall"),
        "snap" | "flatpak" => matches!(first, "install" | "remove" | "uninstall"),
        "pip" | "pip3" | "pipx" | "uv" if first == "pip" => {
            matches!(words.get(1).copied(), Some("install" | "uninstall"))
        }
        "pip" | "pip3" | "pipx" => matches!(first, "install" | "uninstall"),
        // `python -m pip install`, and a project's `setup.py install` / `develop`, which
        // put it into the interpreter's (or the user's) site-packages as pip would.
        "python" | "python3" => {
            args.windows(3).any(|w| {
                w[0] == "-m" && w[1] == "pip" && matches!(w[2].as_str(), "install" | "uninstall")
            }) || args.windows(2).any(|w| {
                basename(&w[0]) == "setup.py" && matches!(w[1].as_str(), "install" | "develop")
            })
        }
        // Named packages (new code from the registry, with install scripts) or global ones;
        // a bare `npm install` / `npm ci` restores the project's locked dependencies.
        "npm" | "pnpm" | "bun" => {
            matches!(first, "install" | "i" | "add" | "uninstall" | "remove")
                && (flag("-g") || flag("--global") || words.len() > 1)
        }
        "yarn" => first == "global" || first == "add",
        "uv" | "poetry" | "pdm" => matches!(first, "add" | "remove"),
        "gem" | "cargo" | "go" | "conda" | "mamba" | "choco" | "winget" | "scoop" | "nix-env" => {
            matches!(first, "install" | "uninstall") || (name == "nix-env" && flag("-i"))
        }
        _ => false,
    };
    installs.then(|| format!("installs or removes packages ({name} {first})"))
}

/// A package fetched from its registry and run at once (`npx -y PKG`, `pnpm dlx`, `uvx`,
/// `pipx run`, `go run MODULE@VERSION`, `deno run https://…`): new code, with its install
/// scripts, as `npm install PKG` is. A bare `npx TOOL` runs the project's own tool when it
/// has one, and is left to what it runs.
pub fn runs_fetched(name: &str, args: &[String]) -> Option<String> {
    let words = operands(args);
    let first = words.first().copied().unwrap_or("");
    let second = words.get(1).copied().unwrap_or("");
    let flag = |f: &[&str]| {
        args.iter()
            .any(|a| f.contains(&a.split('=').next().unwrap_or(a)))
    };
    // `pkg@1.2`, `@scope/pkg@1`, a URL or a git spec: a version the project does not pin.
    let remote_spec = |w: &str| {
        w.trim_start_matches('@').contains('@')
            || w.contains("://")
            || w.starts_with("github:")
            || w.starts_with("git+")
    };
    let npx_like = |spec: Option<&str>| {
        flag(&["-y", "--yes", "-p", "--package"]) || spec.is_some_and(remote_spec)
    };
    let fetches = match name {
        "npx" | "bunx" => npx_like(words.first().copied()),
        "npm" if first == "exec" || first == "x" => npx_like(words.get(1).copied()),
        "pnpm" | "yarn" => first == "dlx",
        "uvx" => true,
        "uv" => first == "tool" && second == "run",
        "pipx" => first == "run",
        "go" => first == "run" && words.iter().skip(1).any(|w| remote_spec(w)),
        "deno" => {
            matches!(first, "run" | "install")
                && words.iter().skip(1).any(|w| {
                    w.starts_with("http://")
                        || w.starts_with("https://")
                        || w.starts_with("npm:")
                        || w.starts_with("jsr:")
                })
        }
        _ => false,
    };
    fetches.then(|| {
        format!(
            "fetches a package from its registry and runs it ({name} {})",
            words.first().copied().unwrap_or("")
        )
    })
}

/// A `chmod` mode that sets the setuid or setgid bit (`u+s`, `+s`, `4755`, `2755`).
pub fn sets_id_bits(mode: &str) -> bool {
    if mode.bytes().all(|b| b.is_ascii_digit()) {
        return mode.len() == 4
            && matches!(mode.as_bytes()[0], b'2' | b'4' | b'6' | b'3' | b'5' | b'7');
    }
    mode.split(',').any(|clause| {
        clause
            .split_once(['+', '='])
            .is_some_and(|(_, perms)| perms.contains('s'))
    })
}

/// `docker run` (or `create`) options that hand the container the host: full privileges,
/// added capabilities, the host's root or docker socket mounted, its pid, network or user
/// namespace, its devices, confinement switched off.
/// `kubectl run --privileged`, `kubectl run --overrides=…` (a pod spec patched by hand:
/// `hostPID`, `hostPath` of `/`), `kubectl debug node/…` (a pod in the node's namespaces with
/// its root mounted) or a debugging profile that grants privileges.
pub fn pod_gets_the_host(args: &[String]) -> bool {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let has = |opt: &str| {
        words
            .iter()
            .any(|w| *w == opt || w.starts_with(&format!("{opt}=")))
    };
    let profile = words.iter().enumerate().any(|(i, w)| {
        let v = w.strip_prefix("--profile=").or_else(|| {
            (*w == "--profile")
                .then(|| words.get(i + 1).copied())
                .flatten()
        });
        v.is_some_and(|v| matches!(v, "sysadmin" | "netadmin" | "legacy"))
    });
    if words.contains(&"run") {
        return (has("--privileged") && !words.contains(&"--privileged=false"))
            || has("--overrides");
    }
    words.contains(&"debug")
        && (profile || words.iter().any(|w| w.starts_with("node/") || *w == "node"))
}

pub fn gives_the_host(name: &str, args: &[String]) -> bool {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    if !words
        .iter()
        .any(|w| matches!(*w, "run" | "create" | "exec"))
    {
        return false;
    }
    words.iter().enumerate().any(|(i, w)| {
        let value = |opt: &str| -> Option<&str> {
            w.strip_prefix(&format!("{opt}="))
                .or_else(|| (*w == opt).then(|| words.get(i + 1).copied()).flatten())
        };
        let mount = value("-v")
            .or_else(|| value("--volume"))
            .or_else(|| value("--mount"))
            .or_else(|| w.strip_prefix("-v").filter(|v| v.starts_with('/')));
        *w == "--privileged"
            || value("--cap-add").is_some()
            || value("--device").is_some()
            || [
                "--pid",
                "--userns",
                "--uts",
                "--ipc",
                "--cgroupns",
                "--net",
                "--network",
            ]
            .iter()
            .any(|o| value(o) == Some("host"))
            || value("--security-opt").is_some_and(|v| v.contains("unconfined"))
            || mount.is_some_and(|m| {
                let src = m
                    .split(',')
                    .find_map(|p| p.strip_prefix("source=").or_else(|| p.strip_prefix("src=")))
                    .unwrap_or_else(|| m.split(':').next().unwrap_or(""));
                let n = normalize(src, None);
                src == "/"
                    || src.ends_with("docker.sock")
                    || src.ends_with("podman.sock")
                    || is_critical(src)
                    // Credentials handed in: what runs there reads them (`-v ~/.ssh:/k`).
                    || super::secrets::is_secret_file(&n)
                    || super::secrets::is_secret_dir(&n, name)
                    || n == "~/.ssh"
            })
    })
}

/// Command-line tools of clouds, forges and virtual machines, whose verbs act on resources
/// elsewhere.
const INFRA_TOOLS: &[&str] = &[
    "aws",
    "gcloud",
    "az",
    "gh",
    "glab",
    "doctl",
    "heroku",
    "fly",
    "flyctl",
    "vercel",
    "netlify",
    "vagrant",
    "virsh",
    "multipass",
    "lxc",
    "incus",
    "openstack",
    "hcloud",
    "linode-cli",
    "scw",
    "oci",
    "ibmcloud",
    "eksctl",
    "minikube",
    "kind",
    "k3d",
];

/// Whether a word of such a tool is a verb that deletes: `delete`, `destroy`,
/// `terminate-instances`, `delete-bucket`, `undefine`, `apps:destroy`, `purge`.
fn destroys(word: &str) -> bool {
    let w = word.rsplit(':').next().unwrap_or(word);
    [
        "delete",
        "destroy",
        "terminate",
        "undefine",
        "purge",
        "remove",
        "deregister",
    ]
    .iter()
    .any(|v| w == *v || w.starts_with(&format!("{v}-")))
}

/// Whether a console's statement drops or empties data wholesale: SQL's `DROP DATABASE`,
/// `DROP SCHEMA`, `DROP TABLE`, `TRUNCATE`, a `DELETE FROM` with no `WHERE`, Mongo's
/// `dropDatabase()`, `.drop()`, `deleteMany({})`.
fn drops_data(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    let words: Vec<&str> = t
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let sql = words.windows(2).any(|w| {
        (w[0] == "drop" && matches!(w[1], "database" | "schema" | "table" | "owned"))
            || (w[0] == "truncate")
    }) || t
        .split(';')
        .any(|stmt| stmt.contains("delete from") && !stmt.contains("where"));
    let mongo = t.contains("dropdatabase(")
        || t.contains(".drop(")
        || t.contains("deletemany({})")
        || t.contains("remove({})");
    sql || mongo
}
