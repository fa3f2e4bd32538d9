//! Places under a cap shared by every session of the server (running commands, live
//! terminals): a cap that a burst queues behind instead of being refused.
//!
//! A command takes a place before it starts and gives it back when it has exited. When all
//! places are taken, a start waits its turn (at most [`Places::queue`] starts wait at once,
//! each at most the wait it was given); only past those bounds is it refused, and the
//! refusal says which bound and how long it waited.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Default most starts waiting for a place at once.
pub const DEFAULT_QUEUE: usize = 256;

/// Longest a start waits for a place before it is refused.
pub const MAX_QUEUE_WAIT: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub struct Places {
    taken: AtomicUsize,
    max: usize,
    waiting: AtomicUsize,
    queue: usize,
    freed: Notify,
}

/// Why a start got no place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoPlace {
    /// `queue` starts were already waiting: this one was refused at once.
    QueueFull { max: usize, queue: usize },
    /// It waited `waited` and no place came free.
    Waited { max: usize, waited: Duration },
}

/// One place, given back when dropped (the command has exited, or did not start).
#[derive(Debug)]
pub struct RunningSlot(Arc<Places>);

impl Drop for RunningSlot {
    fn drop(&mut self) {
        self.0.taken.fetch_sub(1, Ordering::AcqRel);
        self.0.freed.notify_waiters();
    }
}

/// A start waiting in the queue; leaves it when dropped (also when its call is cancelled).
struct InQueue<'a>(&'a AtomicUsize);

impl Drop for InQueue<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Places {
    pub fn new(max: usize, queue: usize) -> Arc<Places> {
        Arc::new(Places {
            taken: AtomicUsize::new(0),
            max: max.max(1),
            waiting: AtomicUsize::new(0),
            queue,
            freed: Notify::new(),
        })
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// Places taken now.
    pub fn taken(&self) -> usize {
        self.taken.load(Ordering::Acquire)
    }

    /// A place now, if one is free.
    pub fn try_take(self: &Arc<Self>) -> Option<RunningSlot> {
        self.taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|_| RunningSlot(self.clone()))
    }

    /// A place, waiting for one at most `wait` (and [`MAX_QUEUE_WAIT`]); with the time
    /// waited.
    pub async fn take(
        self: &Arc<Self>,
        wait: Duration,
    ) -> Result<(RunningSlot, Duration), NoPlace> {
        if let Some(slot) = self.try_take() {
            return Ok((slot, Duration::ZERO));
        }
        let queued = self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.queue).then_some(n + 1)
            });
        if queued.is_err() {
            return Err(NoPlace::QueueFull {
                max: self.max,
                queue: self.queue,
            });
        }
        let _in_queue = InQueue(&self.waiting);
        let start = Instant::now();
        let deadline = start + wait.min(MAX_QUEUE_WAIT);
        loop {
            // Registered before the check: a place given back in between still wakes us.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Some(slot) = self.try_take() {
                return Ok((slot, start.elapsed()));
            }
            if tokio::time::timeout_at(deadline.into(), freed)
                .await
                .is_err()
            {
                return Err(NoPlace::Waited {
                    max: self.max,
                    waited: start.elapsed(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_start_over_the_cap_waits_for_a_place_given_back() {
        let p = Places::new(1, 4);
        let first = p.try_take().unwrap();
        assert!(p.try_take().is_none());
        let q = p.clone();
        let second = tokio::spawn(async move { q.take(Duration::from_secs(10)).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!second.is_finished());
        drop(first);
        let (slot, waited) = second.await.unwrap().unwrap();
        assert!(waited >= Duration::from_millis(40), "{waited:?}");
        assert_eq!(p.taken(), 1);
        drop(slot);
        assert_eq!(p.taken(), 0);
    }

    #[tokio::test]
    async fn past_the_queue_or_the_wait_a_start_is_refused_saying_which() {
        let p = Places::new(1, 1);
        let _held = p.try_take().unwrap();
        let q = p.clone();
        let waiting = tokio::spawn(async move { q.take(Duration::from_secs(10)).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            p.take(Duration::from_secs(1)).await.unwrap_err(),
            NoPlace::QueueFull { max: 1, queue: 1 }
        );
        waiting.abort();
        let _ = waiting.await;
        match p.take(Duration::from_millis(30)).await {
            Err(NoPlace::Waited { max: 1, waited }) => assert!(waited >= Duration::from_millis(30)),
            other => panic!("{other:?}"),
        }
    }
}
