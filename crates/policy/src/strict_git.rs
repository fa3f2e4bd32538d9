//! What `git` reads from the repository it runs in, and the strict tool's answer to it.
//!
//! A repository's configuration is the agent's to write (`.git/config`, and without a
//! sandbox the user's `~/.gitconfig` too), and reading commands run programs it names: `git
//! status` ran a `core.fsmonitor`, and a hook (`post-index-change`) when it refreshed the
//! index; `git diff` an external diff or a `textconv`; `git status` a `clean` filter for a
//! file whose stat changed; `git log` the configured gpg for `log.showSignature`. So the
//! strict tool treats that configuration as the agent's code:
//!
//! - keys a reading command runs and that can be switched off are overridden for the run,
//!   from the environment (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`, which beats every file):
//!   [`OVERRIDES`]; and the index is not written (`GIT_OPTIONAL_LOCKS=0`), so no hook of
//!   its is run;
//! - keys that name a program per driver (`filter.<name>.clean`, `diff.<name>.textconv`,
//!   …) or an external diff cannot be switched off by name — a repository's attributes pick
//!   the driver — so a configuration holding one is refused ([`program_key`]), with the key
//!   named; such a repository is for `memory_terminal_interactive`, where a person decides.

/// Settings every strict `git` runs with, beating the configuration files.
pub const OVERRIDES: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.sshCommand", "false"),
    ("core.askPass", "false"),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    // Submodules are repositories of their own, with configuration of their own.
    ("status.submoduleSummary", "false"),
    ("diff.ignoreSubmodules", "all"),
    // No fetch (a partial clone's lazy fetch would run the transport's programs).
    ("protocol.allow", "never"),
];

/// The environment a strict `git` runs with: [`OVERRIDES`], and no index refresh written.
pub fn environment() -> Vec<(String, String)> {
    let mut env = vec![
        ("GIT_OPTIONAL_LOCKS".to_string(), "0".to_string()),
        ("GIT_TERMINAL_PROMPT".to_string(), "0".to_string()),
        ("GIT_CONFIG_COUNT".to_string(), OVERRIDES.len().to_string()),
    ];
    for (i, (k, v)) in OVERRIDES.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), k.to_string()));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), v.to_string()));
    }
    env
}

/// Whether a configuration key (as `git config --list` prints it: section and name lower
/// case) names a program a reading command may run and that [`OVERRIDES`] cannot switch off.
pub fn program_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    if key == "diff.external" {
        return true;
    }
    let Some((section, rest)) = key.split_once('.') else {
        return false;
    };
    let Some((_driver, name)) = rest.rsplit_once('.') else {
        return false;
    };
    matches!(
        (section, name),
        ("filter", "clean" | "smudge" | "process") | ("diff", "textconv" | "command")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_programs_are_found_and_the_rest_is_data() {
        for k in [
            "filter.lfs.process",
            "filter.x.clean",
            "filter.x.smudge",
            "diff.y.textconv",
            "diff.Foo.Command",
            "diff.external",
        ] {
            assert!(program_key(k), "{k}");
        }
        for k in [
            "user.name",
            "core.bare",
            "filter.lfs.required",
            "diff.renames",
            "remote.origin.url",
            "core.fsmonitor",
        ] {
            assert!(!program_key(k), "{k}");
        }
        let env = environment();
        assert!(env.contains(&("GIT_CONFIG_KEY_0".into(), "core.fsmonitor".into())));
        assert!(env.contains(&("GIT_OPTIONAL_LOCKS".into(), "0".into())));
    }
}
