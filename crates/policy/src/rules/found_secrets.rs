//! Credentials `find` locates and hands on by its output: `cat $(find ~ -name id_rsa)`,
//! `find ~ -name 'id_*' | xargs cat`. The same search with `-exec cat {} +` is read where
//! `find`'s own words are (`secrets::prints_credentials`); here its list of paths becomes
//! another command's words or input, wherever the keys are.

use super::*;
use crate::lex::Simple;
use crate::wrappers::basename;

/// A `find` whose name test matches a credential's file name.
fn finds_secrets(c: &Simple) -> bool {
    c.argv.first().is_some_and(|p| basename(p) == "find")
        && c.argv.windows(2).any(|w| {
            matches!(
                w[0].as_str(),
                "-name" | "-iname" | "-path" | "-wholename" | "-ipath"
            ) && super::secrets::names_secret(&w[1])
        })
}

/// The command a line hands such a `find`'s paths to: one whose words hold the search
/// (`cat $(find …)`), or the next of its pipeline (`find … | xargs cat`).
pub fn found_secrets_in(cmds: &[Simple]) -> Option<Finding> {
    cmds.iter().enumerate().find_map(|(i, c)| {
        let substituted = c.substitutions.iter().any(finds_secrets);
        let piped = finds_secrets(c)
            && cmds
                .get(i + 1)
                .is_some_and(|next| next.pipeline == c.pipeline);
        (substituted || piped).then(|| {
            finding(
                Severity::Warn,
                "secret_read",
                "hands on the credentials a find locates (private keys, credentials files): \
                 what is read can be sent on",
                &c.argv,
            )
        })
    })
}
