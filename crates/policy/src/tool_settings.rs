//! Settings given on a tool's command line that name a program it runs: cargo's `--config`
//! (a target's `runner`, a `linker`, `build.rustc-wrapper`, an `env.` entry) and apt's `-o`
//! (`APT::Update::Pre-Invoke`, `DPkg::Pre-Install-Pkgs`, …), and settings read from a file
//! the line does not show (`cargo --config FILE`, `apt-get -c FILE`).
//!
//! cargo's settings are admitted by an allow-list of the tables that hold no program (build
//! profiles, the network, the terminal, the build's jobs and directories): any other key may
//! be one of the many that start a program or load one, so it is warned, not guessed at.

/// cargo settings that name no program: whole tables, or single keys of `build`.
const CARGO_DATA_TABLES: &[&str] = &[
    "profile.",
    "net.",
    "http.",
    "term.",
    "cargo-new.",
    "future-incompat-report.",
    "resolver.",
];
const CARGO_DATA_KEYS: &[&str] = &[
    "build.jobs",
    "build.target-dir",
    "build.target",
    "build.incremental",
    "build.dep-info-basedir",
    "build.pipelining",
    "install.root",
];

/// Why cargo's `--config` values on this line are not read, if one is a file or a setting
/// outside the data-only tables.
pub fn cargo(rest: &[String]) -> Option<String> {
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i].as_str();
        i += 1;
        if a == "--" {
            break;
        }
        let value = match a.strip_prefix("--config") {
            Some("") => {
                i += 1;
                rest.get(i - 1).map(String::as_str)
            }
            Some(v) => v.strip_prefix('='),
            None => None,
        };
        let Some(value) = value else {
            continue;
        };
        let Some((key, _)) = value.split_once('=') else {
            return Some(format!(
                "cargo --config {value} reads settings from a file the line does not show \
                 (a runner, a linker or a wrapper there is a program cargo runs)"
            ));
        };
        let key: String = key
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '"')
            .collect();
        let data = CARGO_DATA_TABLES.iter().any(|t| key.starts_with(t))
            || CARGO_DATA_KEYS.contains(&key.as_str());
        if !data {
            return Some(format!(
                "cargo --config sets {key}, a setting that may name a program cargo runs or \
                 an environment it hands on"
            ));
        }
    }
    None
}

/// apt settings that name no program: whole trees (`debug::`, `apt::get::`), or single
/// settings (compared whole: `acquire::http::proxy` is data, `…::proxy-auto-detect` runs a
/// program). Lower case; a trailing `::` (a list appended to) is dropped first.
const APT_DATA_TREES: &[&str] = &["debug::", "apt::get::"];
const APT_DATA_SETTINGS: &[&str] = &[
    "quiet",
    "apt::color",
    "apt::install-recommends",
    "apt::install-suggests",
    "apt::keep-downloaded-packages",
    "acquire::retries",
    "acquire::check-valid-until",
    "acquire::languages",
    "acquire::queue-mode",
    "acquire::http::timeout",
    "acquire::https::timeout",
    "acquire::http::proxy",
    "acquire::https::proxy",
    "acquire::http::pipeline-depth",
    "dpkg::options",
    "dpkg::use-pty",
    "dpkg::progress-fancy",
];

/// Why apt's settings on this line are not read: `-o NAME=VALUE` outside the data-only
/// settings (hooks such as `APT::Update::Pre-Invoke` and `DPkg::Pre-Install-Pkgs` are
/// command lines apt hands to a shell; `Dir::Bin::…` and `…::Proxy-Auto-Detect` name
/// programs it runs), or `-c FILE` (a configuration file the line does not show).
pub fn apt(name: &str, rest: &[String]) -> Option<String> {
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i].as_str();
        i += 1;
        let (opt, attached) = if let Some(v) = a.strip_prefix("--option") {
            ('o', v.strip_prefix('='))
        } else if let Some(v) = a.strip_prefix("--config-file") {
            ('c', v.strip_prefix('='))
        } else if let Some(v) = a.strip_prefix("-o") {
            ('o', Some(v).filter(|v| !v.is_empty()))
        } else if let Some(v) = a.strip_prefix("-c") {
            ('c', Some(v).filter(|v| !v.is_empty()))
        } else {
            continue;
        };
        let value = match attached {
            Some(v) => v,
            None => {
                i += 1;
                rest.get(i - 1).map(String::as_str).unwrap_or("")
            }
        };
        if opt == 'c' {
            return Some(format!(
                "{name} -c reads its configuration from a file the line does not show (its hooks \
                 are command lines it runs)"
            ));
        }
        let setting = value.split('=').next().unwrap_or("").to_ascii_lowercase();
        let setting = setting.trim().trim_end_matches("::");
        let data = APT_DATA_TREES.iter().any(|t| setting.starts_with(t))
            || APT_DATA_SETTINGS.contains(&setting);
        if !data {
            return Some(format!(
                "{name} -o {setting} may be a hook or a helper program: a command line apt runs"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(line: &str) -> Vec<String> {
        shell_words::split(line).unwrap_or_default()
    }

    #[test]
    fn cargo_settings_outside_the_data_tables_are_not_taken_on_trust() {
        for ok in [
            "build --config build.jobs=2",
            "build --config profile.dev.opt-level=1 --release",
            "--config 'net.git-fetch-with-cli=true' fetch",
            "run -- --config x",
        ] {
            assert_eq!(cargo(&w(ok)), None, "{ok}");
        }
        for bad in [
            "--config 'build.rustc-wrapper=\"/tmp/x\"' build",
            "--config=target.x86_64-unknown-linux-gnu.runner='sh -c x' run",
            "run --config 'target.\"cfg(unix)\".runner=\"x\"'",
            "--config env.LD_PRELOAD='/tmp/x.so' build",
            "--config /tmp/evil.toml build",
            "--config 'registry.global-credential-providers=[\"x\"]' publish",
        ] {
            assert!(cargo(&w(bad)).is_some(), "{bad}");
        }
    }

    #[test]
    fn apt_hooks_and_files_are_not_taken_on_trust() {
        assert_eq!(
            apt("apt-get", &w("-o Debug::pkgProblemResolver=yes install x")),
            None
        );
        assert_eq!(apt("apt-get", &w("-y -q install curl")), None);
        assert_eq!(
            apt(
                "apt-get",
                &w("-o Dpkg::Options::=--force-confold -o APT::Get::Assume-Yes=true upgrade")
            ),
            None
        );
        for bad in [
            "-o APT::Update::Pre-Invoke::='rm -rf ~' update",
            "-oDPkg::Pre-Install-Pkgs::='sh -c x' install y",
            "--option=DPkg::Post-Invoke::=x install y",
            "-o Dir::Bin::dpkg=/tmp/x install y",
            "-o Acquire::http::Proxy-Auto-Detect=/tmp/x update",
            "-c /tmp/apt.conf update",
        ] {
            assert!(apt("apt-get", &w(bad)).is_some(), "{bad}");
        }
    }
}
