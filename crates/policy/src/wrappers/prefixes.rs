//! Wrappers that only change how the command after their options runs (`nice`, `timeout`,
//! `chroot DIR`, `caffeinate`), and `cmake -E`'s portable commands: the command they run.

use super::*;

/// Wrappers that only change how the command after their options runs (`nice`, `timeout`,
/// `chroot DIR`, `command`): that command.
pub(super) fn prefix(name: &str, rest: &[String]) -> Option<Vec<String>> {
    Some(match name {
        "nice" => skip_options(rest, &["-n", "--adjustment"]).to_vec(),
        // GNU time's `-o FILE` and `-f FORMAT` take values; setsid's `-f` (fork) does not.
        "time" => skip_options(rest, &["-o", "-f", "--output", "--format"]).to_vec(),
        "nohup" | "builtin" | "unbuffer" | "catchsegv" | "setsid" | "noglob" | "nocorrect"
        | "busybox" | "toybox" => skip_options(rest, &[]).to_vec(),
        // zsh's `- cmd` (a login-style exec), fish's `and`/`or`/`not` before a command.
        "-" | "and" | "or" | "not" => rest.to_vec(),
        // zsh's `repeat N cmd`.
        "repeat" => rest.get(1..).unwrap_or(&[]).to_vec(),
        "chroot" => {
            let r = skip_options(rest, &["--userspec", "--groups"]);
            r.get(1..).unwrap_or(&[]).to_vec()
        }
        "command" => {
            if rest.first().is_some_and(|a| a == "-v" || a == "-V") {
                Vec::new()
            } else {
                skip_options(rest, &[]).to_vec()
            }
        }
        "exec" => skip_options(rest, &["-a"]).to_vec(),
        "timeout" => {
            let r = skip_options(rest, &["-s", "--signal", "-k", "--kill-after"]);
            r.get(1..).unwrap_or(&[]).to_vec()
        }
        "stdbuf" => skip_options(rest, &["-i", "-o", "-e"]).to_vec(),
        // moreutils' `ifne CMD` (run when the input is not empty), macOS's `caffeinate CMD`,
        // `trickle CMD` (bandwidth), `systemd-inhibit CMD`.
        "ifne" => skip_options(rest, &[]).to_vec(),
        "caffeinate" => skip_options(rest, &["-t", "-w"]).to_vec(),
        "trickle" => skip_options(rest, &["-d", "-u", "-w", "-t", "-l", "-n"]).to_vec(),
        "systemd-inhibit" => skip_options(rest, &["--what", "--who", "--why", "--mode"]).to_vec(),
        // `cmake -E rm -rf DIR`: cmake's portable commands, judged as what they do.
        "cmake" if rest.first().is_some_and(|a| a == "-E") => cmake_command(&rest[1..]),
        // `lckdo LOCK CMD`, `setlock LOCK CMD`: the command after the lock file.
        "lckdo" | "setlock" => {
            let r = skip_options(rest, &[]);
            r.get(1..).unwrap_or(&[]).to_vec()
        }
        "ionice" => skip_options(
            rest,
            &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
        )
        .to_vec(),
        "chrt" | "taskset" => {
            // With -p they change a running process and start none.
            let on_pid = rest.iter().any(|a| {
                a == "--pid" || (a.starts_with('-') && !a.starts_with("--") && a.contains('p'))
            });
            if on_pid {
                Vec::new()
            } else {
                let r = skip_options(rest, &[]);
                r.get(1..).unwrap_or(&[]).to_vec()
            }
        }
        _ => return None,
    })
}

/// `cmake -E VERB ARGS…` as the command it amounts to: deletes, copies, moves and links as
/// `rm`/`cp`/`mv`/`ln`, `chdir DIR CMD…` and `time CMD…` as the command, `env …` as `env`.
/// A verb that only prints or compares runs nothing.
fn cmake_command(verb_args: &[String]) -> Vec<String> {
    let Some((verb, args)) = verb_args.split_first() else {
        return Vec::new();
    };
    let with = |program: &[&str]| -> Vec<String> {
        program
            .iter()
            .map(|w| w.to_string())
            .chain(args.iter().cloned())
            .collect()
    };
    match verb.as_str() {
        "rm" => with(&["rm"]),
        "remove" => with(&["rm", "-f"]),
        "remove_directory" => with(&["rm", "-rf"]),
        "copy" | "copy_if_different" => with(&["cp"]),
        "copy_directory" | "copy_directory_if_different" => with(&["cp", "-r"]),
        "rename" => with(&["mv"]),
        "create_symlink" => with(&["ln", "-s"]),
        "create_hardlink" => with(&["ln"]),
        "make_directory" => with(&["mkdir", "-p"]),
        "touch" | "touch_nocreate" => with(&["touch"]),
        "tar" => with(&["tar"]),
        "cat" => with(&["cat"]),
        "env" => with(&["env"]),
        "time" => args.to_vec(),
        "chdir" => args.get(1..).unwrap_or(&[]).to_vec(),
        _ => Vec::new(),
    }
}
