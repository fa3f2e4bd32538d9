//! Exactly-once terminal operations across reconnects: an operation runs once per request
//! id; a client whose connection dropped mid-wait sends the same id again and gets the
//! first run's answer (or waits for it) instead of running the command a second time.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::locks::lock;
use serde_json::Value;
use tokio::sync::watch;

/// How long an answer is kept for a client that comes back.
const KEEP_FOR: Duration = Duration::from_secs(600);
/// Most answers kept.
const MAX_ENTRIES: usize = 4096;

struct Entry {
    rx: watch::Receiver<Option<Arc<Value>>>,
    at: Instant,
}

#[derive(Default)]
pub struct RequestCache {
    entries: Mutex<HashMap<String, Entry>>,
}

impl RequestCache {
    /// The answer of the operation `id`, running `op` only if this id was never seen.
    pub async fn run<F>(&self, id: &str, op: F) -> Arc<Value>
    where
        F: Future<Output = Value> + Send + 'static,
    {
        let mut rx = {
            let mut map = lock(&self.entries);
            match map.get(id) {
                Some(e) => e.rx.clone(),
                None => {
                    let now = Instant::now();
                    map.retain(|_, e| now.duration_since(e.at) < KEEP_FOR);
                    if map.len() >= MAX_ENTRIES
                        && let Some(oldest) =
                            map.iter().min_by_key(|(_, e)| e.at).map(|(k, _)| k.clone())
                    {
                        map.remove(&oldest);
                    }
                    let (tx, rx) = watch::channel(None);
                    map.insert(
                        id.to_string(),
                        Entry {
                            rx: rx.clone(),
                            at: now,
                        },
                    );
                    // Detached: the operation finishes even if this connection drops.
                    tokio::spawn(async move {
                        let v = op.await;
                        let _ = tx.send(Some(Arc::new(v)));
                    });
                    rx
                }
            }
        };
        loop {
            if let Some(v) = rx.borrow_and_update().clone() {
                return v;
            }
            if rx.changed().await.is_err() {
                return Arc::new(
                    serde_json::json!({"err": {"kind": "internal", "message": "operation lost", "partial": null}}),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn runs_once_per_id() {
        let cache = Arc::new(RequestCache::default());
        let runs = Arc::new(AtomicUsize::new(0));
        let mut handles = Vec::new();
        for _ in 0..5 {
            let (cache, runs) = (cache.clone(), runs.clone());
            handles.push(tokio::spawn(async move {
                cache
                    .run("req_1", async move {
                        runs.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        serde_json::json!(42)
                    })
                    .await
            }));
        }
        for h in handles {
            assert_eq!(*h.await.expect("join"), serde_json::json!(42));
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }
}
