//! Calls through D-Bus: a message to a service outside, which does what it is asked — start
//! a unit (`systemd-run` by another name), run script in the desktop's shell, hand over the
//! secrets of the keyring. A call is asked about unless its method only reads (an allow-list
//! of methods: `Get`, `Introspect`, `ListNames`, …); one that stops the machine is blocked.

/// Methods that only read: properties, introspection, the bus's own lists, and units,
/// sessions and users listed or looked up.
const READS: &[&str] = &[
    "Get",
    "GetAll",
    "Introspect",
    "Ping",
    "GetMachineId",
    "ListNames",
    "ListActivatableNames",
    "NameHasOwner",
    "GetNameOwner",
    "GetId",
    "GetConnectionUnixUser",
    "GetConnectionUnixProcessID",
    "GetConnectionCredentials",
    "ListUnits",
    "ListUnitFiles",
    "GetUnit",
    "GetUnitFileState",
    "ListSessions",
    "ListUsers",
    "ListSeats",
    "GetSession",
    "GetUser",
    "GetCapabilities",
    "GetServerInformation",
];

/// A D-Bus call by one of the command-line clients: `(rule, what it does)`; `power` (the
/// machine stops) is blocked, the others are asked about.
pub fn dbus_call(name: &str, args: &[String]) -> Option<(&'static str, String)> {
    if let Some((stops, what)) = systemd_call(name, args) {
        return Some((if stops { "power" } else { "destructive_admin" }, what));
    }
    let positional: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(String::as_str)
        .collect();
    let called = |method: &str| {
        let member = method.rsplit('.').next().unwrap_or(method);
        (!READS.contains(&member)).then(|| {
            (
                "dbus_call",
                format!(
                    "{name} calls {method} through D-Bus: a service outside this command does \
                     what it asks, unseen here"
                ),
            )
        })
    };
    match name {
        // busctl [OPTIONS] VERB …: `call SERVICE OBJECT INTERFACE METHOD`.
        "busctl" => {
            // Its operands, past the options and the values of those that take one (`-H
            // HOST`, `-M MACHINE`: getopt takes them anywhere).
            let mut operands = Vec::new();
            let mut words = args.iter();
            while let Some(a) = words.next() {
                if matches!(a.as_str(), "-H" | "-M" | "--host" | "--machine") {
                    words.next();
                } else if !a.starts_with('-') {
                    operands.push(a.as_str());
                }
            }
            let (&verb, rest) = operands.split_first()?;
            match verb {
                "call" => called(rest.get(3).copied().unwrap_or("a method")),
                "set-property" | "emit" | "monitor" | "capture" => Some((
                    "dbus_call",
                    format!("{name} {verb} acts on other programs' D-Bus services or messages"),
                )),
                _ => None,
            }
        }
        // gdbus call … --method IFACE.METHOD; emit, monitor.
        "gdbus" => match positional.first().copied()? {
            "call" => {
                let method = args
                    .iter()
                    .position(|a| a == "--method" || a == "-m")
                    .and_then(|i| args.get(i + 1).cloned())
                    .or_else(|| {
                        args.iter()
                            .find_map(|a| a.strip_prefix("--method=").map(str::to_string))
                    })
                    .unwrap_or_else(|| "a method".into());
                called(&method)
            }
            verb @ ("emit" | "monitor") => Some((
                "dbus_call",
                format!("{name} {verb} acts on other programs' D-Bus services or messages"),
            )),
            _ => None,
        },
        // dbus-send [OPTIONS] OBJECT_PATH INTERFACE.MEMBER [ARGS…].
        "dbus-send" => called(positional.get(1).copied().unwrap_or("a method")),
        // qdbus [SERVICE [PATH [METHOD [ARGS…]]]]: fewer words list.
        "qdbus" | "qdbus6" | "qdbus-qt5" => positional.get(2).and_then(|m| called(m)),
        _ => None,
    }
}

/// A call through D-Bus that stops the machine, or changes its services: what `shutdown`
/// or `systemctl` would do, asked of systemd or logind directly (`busctl call … PowerOff`,
/// `dbus-send … Manager.Reboot`, `gdbus call … StartUnit`). `(stops, what)`.
fn systemd_call(name: &str, args: &[String]) -> Option<(bool, String)> {
    if !matches!(name, "dbus-send" | "busctl" | "gdbus" | "qdbus" | "dbus") {
        return None;
    }
    let method = |m: &str| args.iter().any(|a| a == m || a.ends_with(&format!(".{m}")));
    if ["PowerOff", "Reboot", "Halt", "KExec", "SoftReboot"]
        .iter()
        .any(|m| method(m))
    {
        return Some((
            true,
            format!("{name} asks the system to stop or restart the machine"),
        ));
    }
    let systemd = args
        .iter()
        .any(|a| a.contains("org.freedesktop.systemd1") || a.contains("org.freedesktop.login1"));
    let changes = args.iter().any(|a| {
        let m = a.rsplit('.').next().unwrap_or(a);
        [
            "Start",
            "Stop",
            "Restart",
            "Kill",
            "Mask",
            "Enable",
            "Disable",
            "Suspend",
            "Hibernate",
            "Terminate",
            "Set",
            "Link",
            "Reload",
        ]
        .iter()
        .any(|v| m.starts_with(v))
    });
    (systemd && changes).then(|| {
        (
            false,
            format!("{name} asks systemd or logind to change services, sessions or the machine"),
        )
    })
}
