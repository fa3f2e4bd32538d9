//! What the variables a line sets do: some hold a command line a program runs (judged as a
//! line), some a prompt, some code or configuration the policy cannot read (warned).

/// Variables whose value is a command line some program runs (a pager, an editor, a
/// prompt hook, a compiler wrapper): set in a line, the value is judged as a line of its own
/// (`PAGER='rm -rf ~' git log` is judged as `rm -rf ~`).
pub const COMMAND_VARIABLES: &[&str] = &[
    "PROMPT_COMMAND",
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "BROWSER",
    "RUSTC_WRAPPER",
    "CC",
    "CXX",
    "LESSOPEN",
    "LESSCLOSE",
    "GIT_PROXY_COMMAND",
    "FCEDIT",
    "SYSTEMD_EDITOR",
    "SYSTEMD_PAGER",
    "KUBE_EDITOR",
    "SVN_EDITOR",
    "HGEDITOR",
    "GH_PAGER",
    "GH_EDITOR",
    "PSQL_PAGER",
    "BAT_PAGER",
    "DELTA_PAGER",
    "RUSTC",
    "RUSTDOC",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTC",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "SHELL",
    // zsh: what runs for a redirection with no command (`< file` is `$READNULLCMD < file`).
    "NULLCMD",
    "READNULLCMD",
];

/// Prompts: their value runs its command substitutions at every prompt.
pub const PROMPT_VARIABLES: &[&str] = &[
    "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT", "RPROMPT", "RPS1",
];

/// zsh's hook arrays: each element is a command (a function's name, or any program) run
/// at that moment (`precmd_functions+=(reboot)` runs `reboot` at every prompt).
const ZSH_HOOK_ARRAYS: &[&str] = &[
    "precmd_functions",
    "preexec_functions",
    "chpwd_functions",
    "periodic_functions",
    "zshexit_functions",
    "zshaddhistory_functions",
    "zsh_directory_name_functions",
];

/// What a variable the line sets makes it run: its value as a line to judge (`lines`), or
/// a warning (`code_env`, with the command it was set for). `NAME[i]=…` and `NAME+=…` are
/// `NAME`'s. A value the line computes (`COMPUTED`) into a variable that runs it is warned.
pub(crate) fn judge_assignment(
    name: &str,
    value: &str,
    command: &[String],
    code_env: &mut Vec<(String, String)>,
    lines: &mut Vec<String>,
) {
    let base = name.split('[').next().unwrap_or(name).trim_end_matches('+');
    let unread = || (name.to_string(), shell_words::join(command));
    if value.contains(crate::lex::COMPUTED)
        && (COMMAND_VARIABLES.contains(&base)
            || PROMPT_VARIABLES.contains(&base)
            || ZSH_HOOK_ARRAYS.contains(&base))
    {
        code_env.push(unread());
    } else if COMMAND_VARIABLES.contains(&base) {
        // `|cmd` (LESSOPEN's pipe form) is the command `cmd`; each of an array's elements
        // is a line (bash runs each of `PROMPT_COMMAND=(a b)`).
        match crate::lex::array_items(value) {
            Some(items) => lines.extend(items),
            None => lines.push(value.trim_start_matches('|').to_string()),
        }
    } else if PROMPT_VARIABLES.contains(&base) {
        // bash decodes a prompt's escapes before it expands it: `\$` is `$` (for a user
        // but root), `\044` is `$`, `\140` a backquote, so `PS1='\$(cmd)'` runs `cmd`.
        let decoded = prompt_decoded(value);
        if decoded.contains("$(") || decoded.contains('`') {
            lines.push(format!("echo \"{}\"", decoded.replace('"', "\\\"")));
        }
    } else if ZSH_HOOK_ARRAYS.contains(&base) {
        // Each element is run as a command (by its name: `precmd_functions+=(reboot)`).
        lines.extend(crate::lex::array_items(value).unwrap_or_else(|| vec![value.to_string()]));
    } else if carries_unread_code(name, value) {
        code_env.push(unread());
    }
}

/// A prompt string with the escapes that can spell `$` or a backquote decoded as bash's
/// prompt decoding does (`\$`, and octal `\NNN`); every other escape is left as written
/// (none stops the prompt, as `\c` stops printf).
fn prompt_decoded(value: &str) -> String {
    use crate::printed::{Escaped, decode_escapes, octal};
    decode_escapes(value, |rest| match rest.first() {
        Some('$') => Escaped::Char('$', 1),
        Some(d) if d.is_digit(8) => octal(rest, 0, 3),
        _ => Escaped::Kept,
    })
    .0
}

/// The variables a builtin assigns by name, with a value the line does not show: `read
/// [opts] NAME…`, `mapfile`/`readarray [opts] NAME`, `printf -v NAME …`.
pub(crate) fn assigned_by_builtin(argv: &[String]) -> Vec<String> {
    let Some(first) = argv.first() else {
        return Vec::new();
    };
    let rest = &argv[1..];
    match first.as_str() {
        // Options that take a value: read's -a -d -i -n -N -p -t -u; mapfile's -d -n -O -s
        // -u -C -c. What is left are names.
        "read" | "mapfile" | "readarray" => {
            let valued: &[&str] = if first == "read" {
                &["-d", "-i", "-n", "-N", "-p", "-t", "-u"]
            } else {
                &["-d", "-n", "-O", "-s", "-u", "-C", "-c"]
            };
            let mut names = Vec::new();
            let mut i = 0;
            while i < rest.len() {
                let a = rest[i].as_str();
                if a == "-a" {
                    names.extend(rest.get(i + 1).cloned());
                    i += 2;
                } else if valued.contains(&a) {
                    i += 2;
                } else if a.starts_with('-') {
                    i += 1;
                } else {
                    names.push(a.to_string());
                    i += 1;
                }
            }
            names
        }
        "printf" => rest
            .windows(2)
            .find(|w| w[0] == "-v")
            .map(|w| vec![w[1].clone()])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Variables that carry code the policy cannot read — a function body, options that load
/// code into an interpreter, configuration that names programs — or that change how the
/// shell splits the words that follow (`IFS`): warned.
///
/// Besides options and hooks, this covers what picks the code a program loads before its
/// own: the dynamic loader's libraries (`LD_PRELOAD=./x.so ls` is not `ls`), the file a
/// shell sources first (`BASH_ENV`, `ENV`, `ZDOTDIR`), the home and configuration
/// directories (`HOME=…` makes `git` read a `.gitconfig` with a `core.fsmonitor`), and the
/// repository git reads its configuration and hooks from.
pub fn carries_unread_code(name: &str, value: &str) -> bool {
    // zsh's tables of what names run: `functions[ls]='…'`, `aliases[x]=…`, `commands[x]=…`.
    if let Some((table, _)) = name.split_once('[')
        && matches!(
            table,
            "functions"
                | "aliases"
                | "galiases"
                | "saliases"
                | "commands"
                | "builtins"
                | "reswords"
                | "dis_functions"
                | "dis_aliases"
        )
    {
        return true;
    }
    match name {
        "IFS" | "PERL5OPT" | "RUBYOPT" | "JAVA_TOOL_OPTIONS" | "_JAVA_OPTIONS"
        | "JDK_JAVA_OPTIONS" => true,
        "BASH_ENV"
        | "ENV"
        | "ZDOTDIR"
        | "INPUTRC"
        | "SHELLOPTS"
        | "BASHOPTS"
        | "HOME"
        | "XDG_CONFIG_HOME"
        | "PYTHONSTARTUP"
        | "PYTHONWARNINGS"
        | "PYTHONBREAKPOINT"
        | "PYTHONHOME"
        | "PERL5DB"
        | "GCONV_PATH"
        | "LESS"
        | "LESSKEY"
        | "GIT_DIR"
        | "GIT_EXEC_PATH"
        | "GIT_TEMPLATE_DIR"
        | "GIT_CONFIG"
        | "NPM_CONFIG_SCRIPT_SHELL"
        | "npm_config_script_shell"
        | "MAKEFLAGS"
        | "MFLAGS"
        // Where the shell writes every line typed: `HISTFILE=~/.bashrc` makes them run in
        // every shell started after.
        | "HISTFILE" => true,
        "NODE_OPTIONS" => !node_options_are_data(value),
        // Certificate checks turned off, or a trusted authority of the line's choosing:
        // whatever is downloaded from then on (packages, scripts) can be anyone's code.
        "GIT_SSL_NO_VERIFY" | "CURL_CA_BUNDLE" | "REQUESTS_CA_BUNDLE" | "SSL_CERT_FILE"
        | "SSL_CERT_DIR" | "GIT_SSL_CAINFO" | "NODE_EXTRA_CA_CERTS" | "PIP_CERT" => true,
        "NODE_TLS_REJECT_UNAUTHORIZED" | "PYTHONHTTPSVERIFY" => value.trim() == "0",
        _ => {
            ["BASH_FUNC_", "GIT_CONFIG_", "LD_", "DYLD_", "LUA_INIT"]
                .iter()
                .any(|p| name.starts_with(p))
                || (name.starts_with("CARGO_TARGET_")
                    && (name.ends_with("_RUNNER") || name.ends_with("_LINKER")))
        }
    }
}

/// Whether every word of a `NODE_OPTIONS` value tunes the runtime rather than loading code
/// (`--require`, `--import data:…`, `--loader` do).
fn node_options_are_data(value: &str) -> bool {
    const TUNING: &[&str] = &[
        "--max-old-space-size",
        "--max-semi-space-size",
        "--stack-size",
        "--stack-trace-limit",
        "--enable-source-maps",
        "--no-warnings",
        "--no-deprecation",
        "--trace-warnings",
        "--trace-deprecation",
        "--throw-deprecation",
        "--unhandled-rejections",
        "--openssl-legacy-provider",
        "--use-openssl-ca",
        "--dns-result-order",
        "--max-http-header-size",
        "--experimental-vm-modules",
        "--preserve-symlinks",
    ];
    value.split_whitespace().all(|w| {
        let name = w.split_once('=').map_or(w, |(n, _)| n);
        TUNING.contains(&name)
    })
}
