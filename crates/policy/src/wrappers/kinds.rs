//! The kinds of wrapper [`super::look_through_budgeted`] looks through, one function each: what
//! each does with its words, and what it runs next (`None`: not one of this kind).

use super::*;

/// Programs that run a command as another user: `sudo`, `su -c`, `runuser`.
pub(super) fn privileged(eff: &mut Effective, name: &str, rest: &[String]) -> Option<Vec<String>> {
    Some(match name {
        "sudo" | "doas" | "pkexec" | "run0" => {
            eff.privileged = true;
            skip_options(
                rest,
                &[
                    "-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D", "-T", "--user",
                    "--group", "--chdir",
                ],
            )
            .to_vec()
        }
        "su" => {
            eff.privileged = true;
            // su [-] [user] -c "cmd" (also -lc "cmd", --command=cmd, --comm cmd)
            if let Some(line) = option_anywhere(rest, 'c', "command") {
                eff.shell_lines.push(line);
            }
            Vec::new()
        }
        // `gosu USER CMD…`, `su-exec USER CMD…`, `s6-setuidgid USER CMD…`.
        "gosu" | "su-exec" | "s6-setuidgid" => {
            eff.privileged = true;
            rest.get(1..).unwrap_or(&[]).to_vec()
        }
        // runit's `chpst [-u USER] … CMD…`.
        "chpst" => {
            eff.privileged = true;
            skip_options(
                rest,
                &[
                    "-u", "-U", "-b", "-e", "-/", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f",
                    "-c", "-r", "-t",
                ],
            )
            .to_vec()
        }
        // A shell with another group's rights (`newgrp docker`: root over the engine).
        "newgrp" | "sg" if rest.len() <= 1 => {
            eff.privileged = true;
            Vec::new()
        }
        "runuser" => {
            eff.privileged = true;
            if let Some(line) = option_anywhere(rest, 'c', "command") {
                eff.shell_lines.push(line);
                Vec::new()
            } else {
                skip_options(rest, &["-u", "-g", "-G", "--user", "--group"]).to_vec()
            }
        }
        _ => return None,
    })
}

/// Lines the shell itself runs, now or later: an alias's value, a trap's action, a sourced
/// file, `eval`'s words.
pub(super) fn shell_state(
    eff: &mut Effective,
    name: &str,
    rest: &[String],
    stdin: &Stdin,
) -> Option<Vec<String>> {
    Some(match name {
        "alias" => {
            // alias NAME=VALUE: a later line's NAME runs VALUE, so VALUE is judged now.
            for def in rest.iter().filter_map(|a| a.split_once('=')) {
                eff.shell_lines.push(def.1.to_string());
            }
            // fish's `alias [--save] NAME VALUE…`: the same, the value in the words after
            // the name.
            let words: Vec<&String> = rest.iter().filter(|a| !a.starts_with('-')).collect();
            if let [name, value @ ..] = &words[..]
                && !name.contains('=')
                && !value.is_empty()
            {
                eff.shell_lines.push(
                    value
                        .iter()
                        .map(|v| v.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                );
            }
            Vec::new()
        }
        "trap" => {
            // trap ACTION SIGNAL…: the action is a command line this shell runs later.
            if let Some(action) = rest.iter().find(|a| !a.starts_with('-'))
                && !action.is_empty()
            {
                eff.shell_lines.push(action.clone());
            }
            Vec::new()
        }
        "source" | "." => {
            // fish's `source` with no file, or with `-`, reads its script from its input
            // (`echo 'rm -rf ~' | source`).
            let file = rest
                .iter()
                .find(|a| *a == "-" || !a.starts_with('-'))
                .map_or("-", String::as_str);
            script_stream(eff, name, file, stdin);
            Vec::new()
        }
        "eval" => {
            // fish's `eval (cmd)` runs what `cmd` prints: not on the line.
            if rest.iter().any(|w| w.contains('(') && w.contains(')')) {
                eff.opaque_script
                    .get_or_insert_with(|| "eval runs what a command substitution prints".into());
            }
            if !rest.is_empty() {
                eff.shell_lines.push(rest.join(" "));
            }
            Vec::new()
        }
        // zsh's `add-zsh-hook HOOK FUNCTION`: FUNCTION (any command's name) runs at each
        // prompt, directory change, … from then on.
        "add-zsh-hook" => {
            let names: Vec<&String> = rest.iter().filter(|a| !a.starts_with('-')).collect();
            if let [_, function] = names[..] {
                eff.shell_lines.push(function.clone());
            }
            Vec::new()
        }
        // fish's `complete -n CONDITION -a ARGUMENTS`: the condition is a command line run at
        // every completion, and the arguments' `(cmd)` substitutions run too.
        "complete" => {
            let lines: Vec<String> = [('n', "condition"), ('a', "arguments")]
                .into_iter()
                .filter_map(|(short, long)| {
                    crate::getopt::option_value_anywhere(rest, short, long)
                        .filter(|v| short == 'n' || v.contains('('))
                })
                .collect();
            if lines.is_empty() {
                // Not fish's (bash's `complete -C CMD` is the runners' to judge).
                return None;
            }
            eff.shell_lines.extend(lines);
            Vec::new()
        }
        // zsh's `emulate sh -c 'LINE'` runs LINE.
        "emulate" => {
            if let Some(line) = rest.windows(2).find(|w| w[0] == "-c").map(|w| w[1].clone()) {
                eff.shell_lines.push(line);
            }
            Vec::new()
        }
        _ => return None,
    })
}

/// Programs that run a command line or argv they are given: `env`, `npx`, `script -c`,
/// `ssh HOST CMD`, `flock -c`, `xargs`, `watch`, `find -exec`, `fd -x`, `ed` on its input.
pub(super) fn runs_lines(
    eff: &mut Effective,
    name: &str,
    rest: &[String],
    stdin: &Stdin,
    budget: &Cell<usize>,
) -> Option<Vec<String>> {
    Some(match name {
        "env" => {
            // -S STRING splits STRING into the command (also attached, `-S'…'`, in a
            // cluster, `-iS…`, or abbreviated, `--split=…`).
            if let Some(split) = crate::getopt::option_value(rest, Some('S'), Some("split-string"))
            {
                eff.shell_lines.push(split);
            }
            // An exported function's body runs in the bash it starts, unjudged.
            if rest.iter().any(|a| a.starts_with("BASH_FUNC_")) {
                eff.opaque_script.get_or_insert_with(|| {
                    "env exports a shell function, whose body is not judged".into()
                });
            }
            let mut r = rest;
            loop {
                match r.first().map(String::as_str) {
                    Some(a)
                        if a.starts_with("--s")
                            || (a.starts_with('-') && !a.starts_with("--") && a.contains('S')) =>
                    {
                        r = &[];
                    }
                    Some("-u") | Some("--unset") | Some("-C") | Some("--chdir") => {
                        r = r.get(2..).unwrap_or(&[])
                    }
                    Some(a) if a.starts_with('-') => r = &r[1..],
                    Some(a) if a.contains('=') => r = &r[1..],
                    _ => break,
                }
            }
            r.to_vec()
        }
        // `bun x PACKAGE ARGS` is `bunx PACKAGE ARGS`.
        "bun" if rest.first().is_some_and(|a| a == "x") => {
            skip_options(&rest[1..], &["-p", "--package"]).to_vec()
        }
        // npx PACKAGE ARGS runs the package's program with ARGS; `-c LINE` runs a line.
        "npx" | "pnpx" | "bunx" => {
            if let Some(line) = option_anywhere(rest, 'c', "call") {
                eff.shell_lines.push(line);
                Vec::new()
            } else {
                skip_options(rest, &["-p", "--package"]).to_vec()
            }
        }
        // `npm exec CMD ARGS` (also `npm x`, `pnpm exec`, `yarn exec`): the package's
        // program, or any on the path, with ARGS; `-c LINE` runs a line.
        "npm" | "pnpm" | "yarn"
            if rest
                .iter()
                .find(|a| !a.starts_with('-'))
                .is_some_and(|verb| verb == "exec" || (name == "npm" && verb == "x")) =>
        {
            let at = rest
                .iter()
                .position(|a| !a.starts_with('-'))
                .map_or(rest.len(), |i| i + 1);
            // npm's option parser drops the first `--` wherever it stands: `npm exec rm --
            // -rf ~` runs `rm -rf ~`.
            let mut after: Vec<String> = rest[at..].to_vec();
            if let Some(dashes) = after.iter().position(|a| a == "--") {
                after.remove(dashes);
            }
            if let Some(line) = option_anywhere(&after, 'c', "call") {
                eff.shell_lines.push(line);
                Vec::new()
            } else {
                skip_options(&after, &["-p", "--package", "-w", "--workspace"]).to_vec()
            }
        }
        // ed reads its commands from its input, and `!…` among them runs a shell.
        "ed" | "ex" if !matches!(stdin, Stdin::None) => {
            eff.opaque_script.get_or_insert_with(|| {
                format!("{name} runs the commands on its input (`!…` runs a shell)")
            });
            Vec::new()
        }
        "strace" | "ltrace" | "proxychains" | "proxychains4" | "torsocks" => {
            // strace's `-o '|CMD'` (or `'!CMD'`) pipes the trace into a shell command.
            if matches!(name, "strace" | "ltrace")
                && let Some(out) = crate::getopt::option_value_anywhere(rest, 'o', "output")
                && let Some(line) = out.strip_prefix('|').or_else(|| out.strip_prefix('!'))
            {
                // The trace is the command's input: judged as a pipe from the tracer (a
                // shell reading it runs what the traced program's names and data spell).
                eff.shell_lines.push(format!("{name} | {line}"));
            }
            skip_options(
                rest,
                &[
                    "-o", "-e", "-p", "-s", "-E", "-u", "-a", "-b", "-P", "-S", "-X",
                ],
            )
            .to_vec()
        }
        // `split --filter=CMD` runs CMD through the shell for each piece.
        "split" => {
            if let Some(line) = crate::getopt::option_value_anywhere(rest, '\0', "filter") {
                eff.shell_lines.push(line);
            }
            Vec::new()
        }
        "script" => {
            // -c LINE, also in a cluster (`-qc`) or abbreviated (`--comm=…`).
            if let Some(line) = option_anywhere(rest, 'c', "command") {
                eff.shell_lines.push(line);
            }
            Vec::new()
        }
        // Commands run on managed hosts or in containers: judged as lines, as ssh's are.
        // `ansible HOSTS -m shell -a 'CMD'` (also `command`, `raw`).
        "ansible" => {
            let module = crate::getopt::option_value_anywhere(rest, 'm', "module-name");
            if matches!(
                module.as_deref(),
                Some(
                    "shell"
                        | "command"
                        | "raw"
                        | "ansible.builtin.shell"
                        | "ansible.builtin.command"
                        | "ansible.builtin.raw"
                )
            ) && let Some(args) = crate::getopt::option_value_anywhere(rest, 'a', "args")
            {
                eff.shell_lines.push(args);
            }
            Vec::new()
        }
        // `kubectl [global options] exec POD -- CMD…` (also `debug`, which may mount the
        // node's root, and `run`): whatever precedes the `--`, the command after it is judged.
        // `lxc exec CONTAINER -- CMD…` (also incus): as kubectl's.
        "lxc" | "incus" if rest.first().is_some_and(|v| v == "exec") => {
            if let Some(at) = rest.iter().position(|a| a == "--") {
                let cmd = &rest[at + 1..];
                if !cmd.is_empty() {
                    eff.shell_lines.push(shell_words::join(cmd));
                }
            }
            Vec::new()
        }
        // `podman unshare CMD…`, `buildah unshare CMD…`: the command in the engine's user
        // namespace, where the user is root over every file it maps.
        "podman" | "buildah" if rest.first().is_some_and(|v| v == "unshare") => {
            eff.privileged = true;
            skip_options(&rest[1..], &[]).to_vec()
        }
        "kubectl" | "oc"
            if rest
                .iter()
                .take_while(|a| *a != "--")
                .any(|a| matches!(a.as_str(), "exec" | "debug" | "run")) =>
        {
            // The words are the program's argv there (no shell joins them, unlike ssh's).
            if let Some(at) = rest.iter().position(|a| a == "--") {
                let cmd = &rest[at + 1..];
                if !cmd.is_empty() {
                    eff.shell_lines.push(shell_words::join(cmd));
                }
            }
            Vec::new()
        }
        // `docker [global options] exec [OPTIONS] CONTAINER CMD…`, and `docker compose exec
        // SERVICE CMD…`: the first `exec` word, wherever global options put it.
        // `docker run [OPTIONS] IMAGE CMD…` and `docker compose run SERVICE CMD…` too: the
        // container may hold the project or the home mounted (`-v $PWD:/src`, a compose
        // file's volumes), so what runs there is judged as here.
        "docker" | "podman" | "nerdctl" if rest.iter().any(|a| a == "exec" || a == "run") => {
            let at = rest
                .iter()
                .position(|a| a == "exec" || a == "run")
                .unwrap_or(0);
            let r = skip_options(&rest[at + 1..], CONTAINER_VALUED_OPTIONS);
            if r.len() > 1 {
                eff.shell_lines.push(shell_words::join(&r[1..]));
            }
            Vec::new()
        }
        "ssh" => {
            // -o ProxyCommand=… and the like run a command here.
            if let Some(why) = runners::unread("ssh", rest) {
                eff.opaque_script.get_or_insert(why);
            }
            // ssh [options] HOST [command…]: the command runs in the remote shell, which
            // reads the words joined by spaces.
            let (_, at) = crate::getopt::short_options(rest, runners::ssh_valued("ssh"));
            if rest.len() > at + 1 {
                eff.shell_lines.push(rest[at + 1..].join(" "));
            }
            Vec::new()
        }
        "flock" => {
            let r = skip_options(rest, &["-w", "--timeout", "-E", "--conflict-exit-code"]);
            match r.get(1).map(String::as_str) {
                Some("-c") | Some("--command") => {
                    if let Some(l) = r.get(2) {
                        eff.shell_lines.push(l.clone());
                    }
                    Vec::new()
                }
                _ => r.get(1..).unwrap_or(&[]).to_vec(),
            }
        }
        "xargs" => xargs(eff, rest, stdin, budget),
        // moreutils' `pee 'CMD' 'CMD'…`: each argument is a line its shell runs.
        "pee" => {
            for line in rest.iter().filter(|a| !a.starts_with('-')) {
                eff.shell_lines.push(line.clone());
            }
            Vec::new()
        }
        "watch" => {
            // watch joins its words with spaces and hands them to `sh -c`, so
            // `watch 'rm -rf ~'` is the line `rm -rf ~`; with `-x` it runs them as argv.
            let exec = rest.iter().any(|a| {
                a == "--exec" || (a.starts_with('-') && !a.starts_with("--") && a.contains('x'))
            });
            let r = skip_options(rest, &["-n", "--interval", "-q", "--equexit"]);
            if exec {
                r.to_vec()
            } else {
                if !r.is_empty() {
                    eff.shell_lines.push(r.join(" "));
                }
                Vec::new()
            }
        }
        "find" => {
            find_exec(eff, rest, budget);
            Vec::new()
        }
        "fd" | "fdfind" => {
            fd_exec(eff, rest, budget);
            Vec::new()
        }
        _ => return None,
    })
}

/// Shells, interpreters and consoles given code, and everything else: what it runs that
/// the policy does not read.
pub(super) fn runs_code(
    eff: &mut Effective,
    name: &str,
    rest: &[String],
    stdin: &Stdin,
    budget: &Cell<usize>,
) -> Vec<String> {
    match name {
        n if is_shell(n) => {
            shell_script(eff, n, rest, stdin);
            Vec::new()
        }
        n if inline::is_interpreter(n) => {
            let found = inline::scan(n, rest, stdin);
            if let Some(what) = found.opaque {
                eff.opaque_script = Some(what);
            }
            eff.shell_lines.extend(found.shell_lines);
            for argv in found.argvs {
                nested(eff, argv, &Stdin::None, budget);
            }
            Vec::new()
        }
        "powershell" | "powershell.exe" | "pwsh" | "pwsh.exe" => {
            let command = rest.iter().position(|a| {
                let a = a.to_ascii_lowercase();
                let option = a.trim_start_matches(['-', '/']);
                a.len() > option.len()
                    && (matches!(option, "c" | "commandwithargs" | "cwa")
                        || (option.len() >= 2 && "command".starts_with(option)))
            });
            let positional = matches!(name, "powershell" | "powershell.exe")
                .then(|| crate::rules::powershell_operands(rest))
                .flatten();
            match (command, positional) {
                (Some(p), _) => eff.powershell.push(rest[p + 1..].join(" ")),
                (None, Some(p)) => eff.powershell.push(rest[p..].join(" ")),
                _ => {}
            }
            Vec::new()
        }
        "cmd" | "cmd.exe" => {
            if let Some(p) = rest
                .iter()
                .position(|a| a.eq_ignore_ascii_case("/c") || a.eq_ignore_ascii_case("/k"))
            {
                eff.powershell.push(rest[p + 1..].join(" "));
            }
            Vec::new()
        }
        n => {
            if let Some(why) =
                runners::unread(n, rest).or_else(|| crate::consoles::input(n, rest, stdin))
            {
                eff.opaque_script.get_or_insert(why);
            }
            Vec::new()
        }
    }
}

/// Options of `docker`/`podman` `exec` and `run` (and compose's) that take a value, so the
/// container's or image's name and the command after it are found.
const CONTAINER_VALUED_OPTIONS: &[&str] = &[
    "-e",
    "--env",
    "-u",
    "--user",
    "-w",
    "--workdir",
    "--env-file",
    "--detach-keys",
    "--index",
    "-v",
    "--volume",
    "--mount",
    "-p",
    "--publish",
    "--name",
    "--network",
    "--net",
    "--entrypoint",
    "-l",
    "--label",
    "--platform",
    "--pull",
    "-h",
    "--hostname",
    "-m",
    "--memory",
    "--cpus",
    "--add-host",
    "--device",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--tmpfs",
    "--ulimit",
    "--restart",
    "--log-driver",
    "--log-opt",
    "--shm-size",
    "--ipc",
    "--pid",
    "--userns",
    "--uts",
    "--cgroupns",
    "--gpus",
    "--runtime",
    "--dns",
    "-f",
    "--file",
    "-p",
    "--project-name",
    "--profile",
];
