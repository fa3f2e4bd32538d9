//! Programs that run a command inside a project's environment — `uv run`, `poetry run`,
//! `pipenv run`, `conda run`, `bundle exec`, `mise exec`, `asdf exec`, `nix develop -c`,
//! `nix-shell --run`, `devbox run`, `direnv exec`: the command is what runs, and is judged
//! (`uv run rm -rf ~` is `rm -rf ~`). Their own options are an allow-list per tool: an
//! option not on it might take the next word as its value, so the command cannot be told
//! and a person is asked.

use super::{Effective, option_anywhere};

/// Options of `uv run` that take a value (the rest of its options are flags below).
const UV_VALUED: &[&str] = &[
    "--with",
    "--with-editable",
    "--with-requirements",
    "--python",
    "-p",
    "--project",
    "--directory",
    "--env-file",
    "--extra",
    "--group",
    "--only-group",
    "--no-group",
    "--package",
    "--index",
    "--default-index",
    "--index-url",
    "--extra-index-url",
    "--find-links",
    "-f",
    "--config-file",
    "--cache-dir",
    "--color",
    "--resolution",
    "--prerelease",
    "--exclude-newer",
    "--link-mode",
    "--python-platform",
];

const UV_FLAGS: &[&str] = &[
    "--frozen",
    "--locked",
    "--no-sync",
    "--isolated",
    "--all-extras",
    "--all-packages",
    "--all-groups",
    "--no-dev",
    "--dev",
    "--no-project",
    "--active",
    "--no-cache",
    "--offline",
    "--exact",
    "--no-env-file",
    "--no-editable",
    "--native-tls",
    "--compile-bytecode",
    "--script",
    "--quiet",
    "-q",
    "--verbose",
    "-v",
    "--upgrade",
    "-U",
    "--reinstall",
    "--refresh",
    "--no-build-isolation",
];

/// Global options of poetry (before or after `run`).
const POETRY_VALUED: &[&str] = &["-C", "--directory", "-P", "--project"];
const POETRY_FLAGS: &[&str] = &[
    "-q",
    "--quiet",
    "-v",
    "-vv",
    "-vvv",
    "--verbose",
    "-n",
    "--no-interaction",
    "--ansi",
    "--no-ansi",
    "--no-plugins",
    "--no-cache",
];

const CONDA_VALUED: &[&str] = &["-n", "--name", "-p", "--prefix", "--cwd"];
const CONDA_FLAGS: &[&str] = &[
    "--no-capture-output",
    "--live-stream",
    "-v",
    "--verbose",
    "--debug-wrapper-scripts",
];

const BUNDLE_FLAGS: &[&str] = &["--keep-file-descriptors", "--gemfile"];

/// What `name rest…` runs when it is one of these tools running a command (`None`: it is
/// not, or this use of it runs none).
pub(super) fn run(eff: &mut Effective, name: &str, rest: &[String]) -> Option<Vec<String>> {
    // The verb is the first word that is not an option, past the values of the tool's
    // own options that take one (`poetry -C app run …`, `uv --directory d run …`).
    let globals: &[&str] = match name {
        "uv" => UV_VALUED,
        "poetry" => POETRY_VALUED,
        "conda" | "mamba" | "micromamba" => CONDA_VALUED,
        _ => &[],
    };
    let verb = {
        let mut i = 0;
        while i < rest.len() && rest[i].starts_with('-') {
            i += if globals.contains(&rest[i].as_str()) {
                2
            } else {
                1
            };
        }
        (i < rest.len()).then_some(i)
    };
    let verb_is = |v: &str| verb.is_some_and(|i| rest[i] == v);
    let after_verb = || verb.map_or(&[][..], |i| &rest[i + 1..]);
    let command = match name {
        "uv" if verb_is("run") => command_after(name, after_verb(), UV_VALUED, UV_FLAGS),
        "poetry" if verb_is("run") => {
            command_after(name, after_verb(), POETRY_VALUED, POETRY_FLAGS)
        }
        "pipenv" if verb_is("run") => command_after(name, after_verb(), &[], &[]),
        "conda" | "mamba" | "micromamba" if verb_is("run") => {
            command_after(name, after_verb(), CONDA_VALUED, CONDA_FLAGS)
        }
        "bundle" | "bundler" if verb_is("exec") => {
            command_after(name, after_verb(), &[], BUNDLE_FLAGS)
        }
        "asdf" if verb_is("exec") => command_after(name, after_verb(), &[], &[]),
        "devbox" if verb_is("run") => {
            command_after(name, after_verb(), &["-c", "--config"], &["-q", "--quiet"])
        }
        // `direnv exec DIR CMD…`: the directory's .envrc, then the command.
        "direnv" if verb_is("exec") => Ok(after_verb().get(1..).unwrap_or(&[]).to_vec()),
        // `mise exec [TOOL@VERSION…] -- CMD…`, or `-c LINE`.
        "mise" | "rtx" if verb_is("exec") || verb_is("x") => {
            let args = after_verb();
            if let Some(line) = option_anywhere(args, 'c', "command") {
                eff.shell_lines.push(line);
                Ok(Vec::new())
            } else {
                match args.iter().position(|a| a == "--") {
                    Some(i) => Ok(args[i + 1..].to_vec()),
                    None => Err(format!("{name} exec runs a shell with no command given")),
                }
            }
        }
        // `nix develop -c CMD…` / `--command`, `nix shell PKGS -c CMD…`.
        "nix" if verb_is("develop") || verb_is("shell") => {
            let args = after_verb();
            match args.iter().position(|a| a == "-c" || a == "--command") {
                Some(i) => Ok(args[i + 1..].to_vec()),
                None => return None,
            }
        }
        // `nix-shell --run LINE` / `--command LINE`: a line for its shell.
        "nix-shell" => {
            if let Some(line) = crate::getopt::option_value_anywhere(rest, '\0', "run")
                .or_else(|| crate::getopt::option_value_anywhere(rest, '\0', "command"))
            {
                eff.shell_lines.push(line);
            }
            return Some(Vec::new());
        }
        // `rake -e CODE` runs Ruby code.
        "rake" if crate::getopt::has_option(rest, Some('e'), Some("execute")) => {
            Err("rake -e runs the Ruby code it is given".to_string())
        }
        // `mvn exec:exec -Dexec.executable=PROG`: a program named in a property.
        "mvn" | "mvnw"
            if rest.iter().any(|a| a == "exec:exec")
                && rest.iter().any(|a| a.starts_with("-Dexec.executable")) =>
        {
            Err(format!(
                "{name} exec:exec runs the program its exec.executable property names"
            ))
        }
        _ => return None,
    };
    match command {
        Ok(argv) => Some(argv),
        Err(why) => {
            eff.opaque_script.get_or_insert(why);
            Some(Vec::new())
        }
    }
}

/// The command after a tool's options: options in `valued` take the next word, those in
/// `flags` take none, `--opt=value` is one word, and `--` ends them. Any other option
/// makes the command unknown.
fn command_after(
    name: &str,
    args: &[String],
    valued: &[&str],
    flags: &[&str],
) -> Result<Vec<String>, String> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            return Ok(args[i + 1..].to_vec());
        }
        if !a.starts_with('-') || a == "-" {
            return Ok(args[i..].to_vec());
        }
        // `uv run -m MODULE ARGS…` runs Python's module.
        if name == "uv" && (a == "-m" || a == "--module") {
            let mut argv = vec!["python".to_string(), "-m".to_string()];
            argv.extend(args[i + 1..].iter().cloned());
            return Ok(argv);
        }
        let bare = a.split_once('=').map_or(a, |(o, _)| o);
        if valued.contains(&a) {
            i += 2;
        } else if (a.contains('=') && valued.contains(&bare)) || flags.contains(&a) {
            i += 1;
        } else {
            return Err(format!(
                "{name} is given the option {a}, not known to this policy: which word is the \
                 command it runs cannot be told"
            ));
        }
    }
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(line: &str) -> (Option<Vec<String>>, Effective) {
        let words: Vec<String> = shell_words::split(line).unwrap();
        let mut eff = Effective::default();
        let next = run(&mut eff, &words[0], &words[1..]);
        (next, eff)
    }

    #[test]
    fn the_command_an_environment_runs_is_found() {
        for (line, command) in [
            ("uv run rm -rf ~", "rm -rf ~"),
            (
                "uv run --python 3.12 --with requests python x.py",
                "python x.py",
            ),
            ("uv run --frozen -- pytest -q", "pytest -q"),
            ("poetry -C app run pytest", "pytest"),
            (
                "conda run -n env --no-capture-output python x.py",
                "python x.py",
            ),
            ("bundle exec rspec", "rspec"),
            ("mise exec node@20 -- node x.js", "node x.js"),
            ("nix develop -c cargo build", "cargo build"),
            ("direnv exec . make", "make"),
        ] {
            let (next, _) = ran(line);
            assert_eq!(next.unwrap().join(" "), command, "{line}");
        }
        let (_, eff) = ran("nix-shell -p hello --run 'rm -rf ~'");
        assert_eq!(eff.shell_lines, vec!["rm -rf ~"]);
    }

    #[test]
    fn an_option_not_known_leaves_the_command_unknown() {
        for line in [
            "uv run --some-new-option 3 rm -rf ~",
            "mise exec node@20",
            "rake -e 'system(\"id\")'",
            "mvn exec:exec -Dexec.executable=rm",
        ] {
            let (_, eff) = ran(line);
            assert!(eff.opaque_script.is_some(), "{line}");
        }
        assert!(ran("uv pip install x").0.is_none());
        assert!(ran("poetry install").0.is_none());
    }
}
