//! "Did you mean …" for a field the request schema does not have.
//!
//! Why: a model that sends `runtime.wait` or `execution.cwd` learns from "Additional
//! properties are not allowed" only that something is wrong; the field it meant is one
//! edit away or in another group, and naming it makes the retry right the first time.

use serde_json::Value;

/// The field meant by `unexpected`, found at `at` (a group name, or `""` for the top level):
/// a close name in the same place, else the same or a close name in another group.
pub fn field_meant(schema: &Value, at: &str, unexpected: &str) -> Option<String> {
    let props = schema.get("properties")?.as_object()?;
    let here: Vec<String> = if at.is_empty() {
        props.keys().cloned().collect()
    } else {
        group_fields(props.get(at)?)
    };
    let place = |name: &str| {
        if at.is_empty() {
            name.to_string()
        } else {
            format!("{at}.{name}")
        }
    };
    if let Some(best) = closest(unexpected, here.iter().map(String::as_str)) {
        return Some(place(best));
    }
    // Another group: the same name first, then a close one.
    let elsewhere: Vec<(String, String)> = props
        .iter()
        .filter(|(g, _)| g.as_str() != at)
        .flat_map(|(g, v)| group_fields(v).into_iter().map(move |f| (g.clone(), f)))
        .collect();
    if let Some((g, f)) = elsewhere.iter().find(|(_, f)| f == unexpected) {
        return Some(format!("{g}.{f}"));
    }
    let best = closest(unexpected, elsewhere.iter().map(|(_, f)| f.as_str()))?;
    elsewhere
        .iter()
        .find(|(_, f)| f == best)
        .map(|(g, f)| format!("{g}.{f}"))
}

fn group_fields(group: &Value) -> Vec<String> {
    group
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// The candidate closest to `word`: one a prefix of the other (`wait` → `wait_ms`), or
/// within an edit distance of a third of the word (at least one).
fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let word_l = word.to_ascii_lowercase();
    let limit = (word.len() / 3).max(1);
    candidates
        .filter_map(|c| {
            let d = strsim::damerau_levenshtein(&word_l, &c.to_ascii_lowercase());
            let prefix = word.len() >= 3 && (c.starts_with(&word_l) || word_l.starts_with(c));
            (d <= limit || prefix).then_some((if prefix { 0 } else { d }, c))
        })
        .min_by_key(|(d, c)| (*d, c.len()))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_field_meant() {
        let schema: Value =
            serde_json::from_str(crate::contract::schema::REQUEST_SCHEMA).expect("schema");
        let meant = |at: &str, k: &str| field_meant(&schema, at, k);
        assert_eq!(meant("runtime", "wait").as_deref(), Some("runtime.wait_ms"));
        assert_eq!(
            meant("execution", "comand").as_deref(),
            Some("execution.command")
        );
        assert_eq!(meant("execution", "cwd").as_deref(), Some("runtime.cwd"));
        assert_eq!(
            meant("runtime", "command").as_deref(),
            Some("execution.command")
        );
        assert_eq!(meant("", "targte").as_deref(), Some("target"));
        assert_eq!(meant("output", "zzzzzz"), None);
    }
}
