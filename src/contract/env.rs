//! Environment variables a request may not set (`execution.env`): those that make a shell
//! or the dynamic loader run code of the agent's choosing beside the command judged.
//!
//! The policy judges the command line, and a person approving reads it; the environment is
//! neither. `{"PROMPT_COMMAND": "touch F"}` on a new bash terminal ran `touch` at every
//! prompt with `touch` blocked by the operator; `LD_PRELOAD` runs a library's code in every
//! program, `BASH_FUNC_echo%%` replaces `echo`. Such a variable set in the command line
//! itself (`LD_PRELOAD=… cmd`) is judged and shown with it; in `execution.env` it is refused.

use std::collections::BTreeMap;

use serde_json::json;

use super::error::TermError;

/// Names that carry code a shell runs (its startup file, prompt commands and prompts, which
/// expand `$(…)`, its options and the directory of its rc files).
const SHELL_CODE: [&str; 16] = [
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT",
    "RPROMPT",
    "RPS1",
    "RPS2",
    "SHELLOPTS",
    "BASHOPTS",
    "ZDOTDIR",
    "GCONV_PATH",
];
/// Prefixes of names that carry code: the loader's (`LD_PRELOAD`, `LD_AUDIT`,
/// `LD_LIBRARY_PATH`, …) and bash's exported functions (`BASH_FUNC_name%%`).
const CODE_PREFIXES: [&str; 2] = ["LD_", "BASH_FUNC_"];

/// Refuse a request environment that carries code.
pub(super) fn check(env: Option<&BTreeMap<String, String>>) -> Result<(), TermError> {
    let Some(name) = env.into_iter().flatten().map(|(k, _)| k).find(|k| {
        SHELL_CODE.contains(&k.as_str()) || CODE_PREFIXES.iter().any(|p| k.starts_with(p))
    }) else {
        return Ok(());
    };
    Err(TermError::payload(format!(
        "execution.env.{name} makes a shell or the dynamic loader run code beside the command, \
         where neither the policy nor a person approving sees it; nothing was run: set it in \
         the command line itself ({name}=… command), where it is judged and shown"
    ))
    .with("field", json!(format!("execution.env.{name}"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(names: &[&str]) -> BTreeMap<String, String> {
        names
            .iter()
            .map(|n| (n.to_string(), "x".to_string()))
            .collect()
    }

    #[test]
    fn code_carrying_names_are_refused_and_data_passes() {
        for bad in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "BASH_FUNC_echo%%",
            "PROMPT_COMMAND",
            "PS1",
            "BASH_ENV",
            "ZDOTDIR",
        ] {
            assert!(check(Some(&env(&["CI", bad]))).is_err(), "{bad}");
        }
        assert!(
            check(Some(&env(&[
                "CI", "RUST_LOG", "NODE_ENV", "PATH", "LANG", "OLD_PWD"
            ])))
            .is_ok()
        );
        assert!(check(None).is_ok());
    }
}
