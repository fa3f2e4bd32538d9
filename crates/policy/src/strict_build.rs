//! The build and test commands of the strict allowlist, and the options an agent may give
//! them.
//!
//! Why options are listed, not left free: a build or test runs the project's own code, which
//! is what an agent asks for, but these tools also take options that pick another program to
//! run or a place to write, with no file of the agent's needed. `cargo test --config
//! 'target.<triple>.runner=["sh","-c","…"]'` ran a shell command of the agent's choosing;
//! `go test -exec`, `go build -toolexec`, `go vet -vettool` name a program; `npm test
//! --node-options=--import=data:…` runs code given inline; `go build -o ~/.local/bin/git`
//! and `pytest --junitxml ~/.bashrc` write over a user's files, and `pytest --basetemp DIR`
//! empties DIR. No list of such options is complete (pytest's plugins add their own), so
//! each command admits the options that shape its run and report — which targets, which
//! tests, how much output — and words that are not options (paths, test names, values).
//! Not `--manifest-path`: it builds another project, whose build scripts ran.
//!
//! The project's own code still runs — its build scripts, its tests, and its tools'
//! project configuration (`.cargo/config.toml`, `conftest.py`, `package.json` scripts) —
//! and the agent may have written all of it, so these commands are warned (`project_code`)
//! and go through the approval chain (`Decision::runs_project_code`).

/// An option that takes a value ends in `=` here: given as `--opt=value`, `--opt value`,
/// or, for a one-letter one, `-ovalue`.
const CARGO_COMMON: &[&str] = &[
    "--release",
    "-r",
    "--all-targets",
    "--all-features",
    "--no-default-features",
    "--workspace",
    "--all",
    "--lib",
    "--bins",
    "--tests",
    "--examples",
    "--benches",
    "-q",
    "--quiet",
    "-v",
    "--verbose",
    "--locked",
    "--offline",
    "--frozen",
    "--keep-going",
    "--ignore-rust-version",
    "--timings",
    "--features=",
    "-F=",
    "--package=",
    "-p=",
    "--exclude=",
    "--bin=",
    "--test=",
    "--example=",
    "--bench=",
    "--jobs=",
    "-j=",
    "--message-format=",
    "--color=",
    "--profile=",
];

/// `cargo test`'s own, beside the common ones (after `--`, the test binaries' arguments).
const CARGO_TEST: &[&str] = &["--no-fail-fast", "--doc", "--no-run"];

/// `cargo doc`'s own (not `--open`, which starts a browser).
const CARGO_DOC: &[&str] = &["--no-deps", "--document-private-items"];

/// The lint levels clippy takes after `--`.
const CLIPPY_LINTS: &[&str] = &[
    "-D=",
    "-W=",
    "-A=",
    "--deny=",
    "--warn=",
    "--allow=",
    "--forbid=",
];

const CARGO_METADATA: &[&str] = &[
    "--format-version=",
    "--no-deps",
    "--all-features",
    "--no-default-features",
    "--features=",
    "--filter-platform=",
    "--offline",
    "--locked",
    "--frozen",
    "-q",
    "--quiet",
];

const CARGO_TREE: &[&str] = &[
    "-e=",
    "--edges=",
    "-i=",
    "--invert=",
    "--depth=",
    "--prefix=",
    "--no-dedupe",
    "-d",
    "--duplicates",
    "--charset=",
    "-f=",
    "--format=",
    "-p=",
    "--package=",
    "--workspace",
    "--features=",
    "--all-features",
    "--no-default-features",
    "--offline",
    "--locked",
    "--frozen",
    "-q",
    "-v",
];

const CARGO_FMT_CHECK: &[&str] = &[
    "--all",
    "-p=",
    "--package=",
    "--message-format=",
    "-q",
    "-v",
];

/// The script runners' own quiet switches; after `--`, the test script's arguments.
const SCRIPT_RUNNER: &[&str] = &["--silent", "-s", "--quiet", "-q"];

/// `npm ls`: what it lists and how. Not `--logs-dir` (npm writes its debug log into any
/// directory named) nor `--userconfig`/`--prefix` (another configuration, another tree).
const NPM_LS: &[&str] = &[
    "--all",
    "-a",
    "--json",
    "--long",
    "-l",
    "--parseable",
    "-p",
    "--depth=",
    "--omit=",
    "--include=",
    "--global",
    "-g",
    "--link",
    "--unicode",
];

const PYTEST: &[&str] = &[
    "-q",
    "--quiet",
    "-v",
    "--verbose",
    "-x",
    "--exitfirst",
    "-s",
    "-l",
    "--showlocals",
    "--lf",
    "--last-failed",
    "--ff",
    "--failed-first",
    "--nf",
    "--new-first",
    "--sw",
    "--stepwise",
    "--co",
    "--collect-only",
    "--no-header",
    "--no-summary",
    "--strict-markers",
    "--disable-warnings",
    "--runxfail",
    "-k=",
    "-m=",
    "-r=",
    "-n=",
    "--tb=",
    "--maxfail=",
    "--durations=",
    "--durations-min=",
    "--color=",
    "--capture=",
    "--deselect=",
    "--ignore=",
    "--ignore-glob=",
];

/// Go's flags, each also taken with two dashes.
const GO_TEST: &[&str] = &[
    "-v",
    "-race",
    "-short",
    "-cover",
    "-benchmem",
    "-failfast",
    "-json",
    "-run=",
    "-skip=",
    "-count=",
    "-timeout=",
    "-bench=",
    "-benchtime=",
    "-p=",
    "-parallel=",
    "-tags=",
    "-mod=",
    "-shuffle=",
    "-cpu=",
    "-vet=",
];

const GO_BUILD: &[&str] = &[
    "-v",
    "-race",
    "-trimpath",
    "-a",
    "-n",
    "-x",
    "-tags=",
    "-mod=",
    "-p=",
];

const GO_VET: &[&str] = &["-v", "-tags=", "-mod="];

fn list(groups: &[&[&str]]) -> Vec<String> {
    groups
        .iter()
        .flat_map(|g| g.iter())
        .map(|o| o.to_string())
        .collect()
}

/// Go's flag package takes `-flag` and `--flag` alike.
fn go(flags: &[&str]) -> Vec<String> {
    flags
        .iter()
        .flat_map(|f| [f.to_string(), format!("-{f}")])
        .collect()
}

/// What a build or test command admits after its prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Options taken; one that takes a value ends in `=`.
    pub allowed: Vec<String>,
    /// After a `--`, anything (what goes to the tests).
    pub free_after_dashes: bool,
    /// It runs the project's own code: build scripts, tests, scripts (not `cargo
    /// metadata`, `cargo tree`, `cargo fmt --check`, which only read it).
    pub runs_project_code: bool,
}

impl Options {
    /// Whether every word of `rest` is one these options admit (`admits`).
    pub fn admit(&self, rest: &[String]) -> bool {
        admits(rest, &self.allowed, self.free_after_dashes)
    }

    /// What they admit, for error messages.
    pub fn describe(&self) -> String {
        describe(&self.allowed, self.free_after_dashes)
    }
}

fn entry(prefix: &[&str], allowed: Vec<String>, free_after_dashes: bool) -> (Vec<String>, Options) {
    let reads_only = matches!(prefix, ["cargo", "metadata" | "tree" | "fmt", ..]);
    (
        prefix.iter().map(|w| w.to_string()).collect(),
        Options {
            allowed,
            free_after_dashes,
            runs_project_code: !reads_only,
        },
    )
}

/// The build and test entries: each command's words and the options it takes.
pub fn entries() -> Vec<(Vec<String>, Options)> {
    vec![
        entry(&["cargo", "build"], list(&[CARGO_COMMON]), false),
        entry(&["cargo", "check"], list(&[CARGO_COMMON]), false),
        entry(&["cargo", "test"], list(&[CARGO_COMMON, CARGO_TEST]), true),
        entry(
            &["cargo", "clippy"],
            list(&[CARGO_COMMON, CLIPPY_LINTS]),
            false,
        ),
        entry(&["cargo", "doc"], list(&[CARGO_COMMON, CARGO_DOC]), false),
        entry(&["cargo", "metadata"], list(&[CARGO_METADATA]), false),
        entry(&["cargo", "tree"], list(&[CARGO_TREE]), false),
        entry(
            &["cargo", "fmt", "--check"],
            list(&[CARGO_FMT_CHECK]),
            false,
        ),
        // It runs no script, but npm reads the project's `.npmrc`, which the agent may
        // have written (`logs-dir=` puts npm's log in any directory): the project's code.
        entry(&["npm", "ls"], list(&[NPM_LS]), false),
        entry(&["npm", "test"], list(&[SCRIPT_RUNNER]), true),
        entry(&["npm", "run", "test"], list(&[SCRIPT_RUNNER]), true),
        entry(&["yarn", "test"], list(&[SCRIPT_RUNNER]), true),
        entry(&["pnpm", "test"], list(&[SCRIPT_RUNNER]), true),
        entry(&["pytest"], list(&[PYTEST]), false),
        entry(&["python3", "-m", "pytest"], list(&[PYTEST]), false),
        entry(&["python", "-m", "pytest"], list(&[PYTEST]), false),
        entry(&["go", "test"], go(GO_TEST), false),
        entry(&["go", "build"], go(GO_BUILD), false),
        entry(&["go", "vet"], go(GO_VET), false),
    ]
}

/// Whether every word of `rest` is one these `allowed` options admit: a word that is not an
/// option; an allowed option, alone or with `=value` when it takes one; a cluster of allowed
/// one-letter options, the last of which may take the rest of the word as its value; and,
/// when `free_after_dashes`, anything after a `--`.
fn admits(rest: &[String], allowed: &[String], free_after_dashes: bool) -> bool {
    let flag = |name: &str| allowed.iter().any(|a| a == name);
    let valued = |name: &str| {
        allowed
            .iter()
            .any(|a| a.strip_suffix('=').is_some_and(|n| n == name))
    };
    for w in rest {
        if w == "--" {
            if free_after_dashes {
                return true;
            }
            continue;
        }
        let Some(body) = w.strip_prefix('-').filter(|b| !b.is_empty()) else {
            // Not an option: a path, a name, a value.
            continue;
        };
        let name = w.split_once('=').map_or(w.as_str(), |(n, _)| n);
        if flag(name) && !w.contains('=') || valued(name) {
            continue;
        }
        if body.starts_with('-') || !cluster(body, &flag, &valued) {
            return false;
        }
    }
    true
}

/// One-letter options run together (`-vx`, `-kname`, `-Dwarnings`): each letter allowed, and
/// one that takes a value takes the rest.
fn cluster(body: &str, flag: &dyn Fn(&str) -> bool, valued: &dyn Fn(&str) -> bool) -> bool {
    for c in body.chars() {
        let name = format!("-{c}");
        if valued(&name) {
            return true;
        }
        if !flag(&name) {
            return false;
        }
    }
    true
}

fn describe(allowed: &[String], free_after_dashes: bool) -> String {
    let opts: Vec<String> = allowed
        .iter()
        .map(|a| match a.strip_suffix('=') {
            Some(n) => format!("{n} X"),
            None => a.clone(),
        })
        .collect();
    let tail = if free_after_dashes { " [-- …]" } else { "" };
    format!("[{}] [names, paths]{tail}", opts.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn ok(allowed: &[&str], free: bool, rest: &str) -> bool {
        admits(&words(rest), &list(&[allowed]), free)
    }

    #[test]
    fn options_that_shape_a_run_pass_and_others_do_not() {
        let cargo = [CARGO_COMMON, CARGO_TEST].concat();
        for good in [
            "",
            "--release --all-features",
            "-p core --features=a,b my_test",
            "-j 2 -q",
            "-- --nocapture --config x",
            "--message-format=json",
        ] {
            assert!(ok(&cargo, true, good), "{good}");
        }
        for bad in [
            "--config target.x.runner=sh",
            "--config=build.rustc-wrapper=/tmp/w",
            "-Z unstable-options",
            "--target-dir /tmp/t",
            "-qZx",
            "--release=yes",
        ] {
            assert!(!ok(&cargo, true, bad), "{bad}");
        }
        let clippy = [CARGO_COMMON, CLIPPY_LINTS].concat();
        assert!(ok(
            &clippy,
            false,
            "--all-targets -- -D warnings -Dclippy::all"
        ));
        assert!(!ok(&clippy, false, "-- -C linker=/bin/sh"));
        assert!(ok(PYTEST, false, "-vx -k test_a tests/ --tb=short -ra"));
        assert!(ok(PYTEST, false, "-kname -n4"));
        for bad in [
            "--basetemp /home",
            "--junitxml=/root/.bashrc",
            "-p evil",
            "-vp evil",
            "-c /tmp/x.ini",
            "-W ignore::m.W",
            "--pastebin=all",
        ] {
            assert!(!ok(PYTEST, false, bad), "{bad}");
        }
        assert!(ok(
            SCRIPT_RUNNER,
            true,
            "--silent -- --coverage --watch=false"
        ));
        assert!(!ok(SCRIPT_RUNNER, true, "--script-shell=/bin/sh"));
        assert!(!ok(SCRIPT_RUNNER, true, "--node-options=--import=data:x"));
        let go_test = go(GO_TEST);
        assert!(admits(
            &words("-run TestX -count=1 --race ./..."),
            &go_test,
            false
        ));
        assert!(!admits(&words("-exec sh ./..."), &go_test, false));
        assert!(!admits(&words("--toolexec=/tmp/x"), &go(GO_BUILD), false));
        assert!(!admits(
            &words("-o /root/.local/bin/git ."),
            &go(GO_BUILD),
            false
        ));
        assert!(!admits(&words("-vettool=/tmp/x"), &go(GO_VET), false));
    }
}
