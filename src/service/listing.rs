//! `list` answers a page at a time: a client with hundreds of terminals pays for the items
//! it asks for, not for every one (as MCP pages its own lists).
//!
//! Items come in a stable order — sessions before terminals, then oldest first, then by id
//! — and a cursor is the sort key of the last item a page returned, so a page after items
//! were removed or added still starts where the previous one ended.

use serde_json::json;

use crate::contract::TermError;
use crate::contract::request::{ListOptions, ListState};
use crate::contract::result::{ListItem, Listing};

/// Items per page when the request names no limit.
pub const DEFAULT_LIMIT: usize = 100;

/// Where an item sorts: its mode's rank, its start time, its id.
type Key = (u8, u64, String);

fn rank(item: &ListItem) -> u8 {
    u8::from(item.mode != "headless")
}

/// The item's place in the order, compared without copying its id.
fn place(item: &ListItem) -> (u8, u64, &str) {
    (rank(item), item.started_at_ms, item.id.as_str())
}

fn encode(item: &ListItem) -> String {
    format!("{}.{}.{}", rank(item), item.started_at_ms, item.id)
}

fn decode(cursor: &str) -> Option<Key> {
    let mut parts = cursor.splitn(3, '.');
    let rank = parts.next()?.parse().ok()?;
    let at = parts.next()?.parse().ok()?;
    let id = parts.next().filter(|id| !id.is_empty())?;
    Some((rank, at, id.to_string()))
}

/// The page of `items` the options ask for.
pub fn page(mut items: Vec<ListItem>, opts: &ListOptions) -> Result<Listing, TermError> {
    let after = match &opts.cursor {
        Some(c) => Some(decode(c).ok_or_else(|| {
            TermError::payload("listing.cursor is not a cursor this server returned")
                .with("field", json!("listing.cursor"))
        })?),
        None => None,
    };
    if let Some(state) = opts.state {
        items.retain(|i| i.running == (state == ListState::Running));
    }
    let total = items.len();
    if let Some((r, at, id)) = &after {
        items.retain(|i| place(i) > (*r, *at, id.as_str()));
    }
    items.sort_by(|a, b| place(a).cmp(&place(b)));
    let limit = opts.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let more = items.len() > limit;
    items.truncate(limit);
    let next_cursor = if more { items.last().map(encode) } else { None };
    Ok(Listing {
        running: false,
        items,
        total,
        next_cursor,
        sandbox: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::result::ItemKind;

    fn item(id: &str, mode: &'static str, at: u64, running: bool) -> ListItem {
        ListItem {
            id: id.into(),
            mode,
            command: None,
            cwd: None,
            state: if running { "running" } else { "exited" },
            running,
            exit_code: None,
            signal: None,
            age_ms: 0,
            started_at_ms: at,
            workspace_id: None,
            kind: ItemKind::Session {
                timed_out: false,
                stdout_bytes: 0,
                stderr_bytes: 0,
            },
        }
    }

    fn ids(l: &Listing) -> Vec<&str> {
        l.items.iter().map(|i| i.id.as_str()).collect()
    }

    #[test]
    fn pages_walk_every_item_once_in_order() {
        let items = vec![
            item("t_2", "interactive", 5, true),
            item("ses_1", "headless", 9, false),
            item("t_1", "interactive", 5, false),
            item("t_3", "interactive", 1, true),
        ];
        let mut opts = ListOptions {
            limit: Some(2),
            ..Default::default()
        };
        let first = page(items.clone(), &opts).unwrap();
        assert_eq!(ids(&first), ["ses_1", "t_3"]);
        assert_eq!(first.total, 4);
        opts.cursor = first.next_cursor.clone();
        let second = page(items.clone(), &opts).unwrap();
        assert_eq!(ids(&second), ["t_1", "t_2"]);
        assert_eq!(second.next_cursor, None);
        // The item a cursor names may be gone: the next page still starts after it.
        let fewer: Vec<ListItem> = items.iter().filter(|i| i.id != "t_3").cloned().collect();
        opts.cursor = first.next_cursor;
        assert_eq!(ids(&page(fewer, &opts).unwrap()), ["t_1", "t_2"]);
    }

    #[test]
    fn state_filter_and_bad_cursors() {
        let items = vec![
            item("t_1", "interactive", 1, true),
            item("t_2", "interactive", 2, false),
        ];
        let running = ListOptions {
            state: Some(ListState::Running),
            ..Default::default()
        };
        let l = page(items.clone(), &running).unwrap();
        assert_eq!((ids(&l), l.total), (vec!["t_1"], 1));
        for bad in ["", "x", "1.x.t_1", "1.2.", "9999.1.t"] {
            let opts = ListOptions {
                cursor: Some(bad.into()),
                ..Default::default()
            };
            assert!(page(items.clone(), &opts).is_err(), "{bad:?}");
        }
    }
}
