//! Which program is which: a client names itself at `initialize` (`clientId`), and the host
//! binds that name to the secret it presents the first time (`_meta.interactiveTerminal
//! .clientSecret`), so another program holding the same token cannot take the name over and
//! with it the terminals it owns. A terminal belongs to the client that created it: other
//! clients may list it, not read, type into or end it — unless the operator shares
//! terminals (`--share-terminals`). A person on the signed-in page may do anything.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::locks::lock;
use serde_json::Value;

/// Names bound to the secrets that claimed them (`None`: claimed without one).
#[derive(Default)]
pub struct ClientIds {
    names: Mutex<HashMap<String, Option<String>>>,
}

/// The secret in an `initialize` / `reconnect` request's `_meta`.
pub fn secret_in(meta: Option<&serde_json::Map<String, Value>>) -> Option<String> {
    meta.and_then(|m| m.get("interactiveTerminal"))
        .and_then(|m| m.get("clientSecret"))
        .and_then(Value::as_str)
        .map(String::from)
}

impl ClientIds {
    /// Claim `id` with `secret`: the first claim binds it; later ones must present the same
    /// secret (a name first claimed without one stays open to anyone).
    pub fn claim(&self, id: &str, secret: Option<&str>) -> Result<(), String> {
        let mut names = lock(&self.names);
        match names.get(id) {
            None => {
                names.insert(id.to_string(), secret.map(String::from));
                Ok(())
            }
            Some(None) => Ok(()),
            Some(Some(bound)) => match secret {
                Some(s) if crate::token::matches(s, bound) => Ok(()),
                _ => Err(format!(
                    "client id {id:?} belongs to another client (its secret does not match)"
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_name_needs_its_secret() {
        let c = ClientIds::default();
        assert!(c.claim("a", Some("s1")).is_ok());
        assert!(c.claim("a", Some("s1")).is_ok());
        assert!(c.claim("a", Some("s2")).is_err());
        assert!(c.claim("a", None).is_err());
        assert!(c.claim("open", None).is_ok());
        assert!(c.claim("open", Some("x")).is_ok());
    }
}
