//! Connections still reading their request head, oldest first: when too many wait, the
//! listener closes the oldest, so a flood of silent sockets cannot keep out a real client
//! (which sends its head at once).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::locks::lock;
use tokio::task::AbortHandle;

/// One waiting connection: its ticket, and its task once spawned.
struct Slot {
    ticket: u64,
    task: Option<AbortHandle>,
}

#[derive(Default)]
struct Queue {
    next: u64,
    slots: VecDeque<Slot>,
}

#[derive(Default)]
pub struct Waiting {
    queue: Mutex<Queue>,
}

impl Waiting {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        lock(&self.queue)
    }

    /// A place for a new connection; the oldest one's task when there were `max` already.
    pub fn admit(&self, max: usize) -> (u64, Option<AbortHandle>) {
        let mut q = self.queue();
        q.next += 1;
        let ticket = q.next;
        let evicted = if q.slots.len() >= max {
            q.slots.pop_front().and_then(|s| s.task)
        } else {
            None
        };
        q.slots.push_back(Slot { ticket, task: None });
        (ticket, evicted)
    }

    /// The task serving `ticket` (if it is still waiting).
    pub fn attach(&self, ticket: u64, task: AbortHandle) {
        if let Some(slot) = self.queue().slots.iter_mut().find(|s| s.ticket == ticket) {
            slot.task = Some(task);
        }
    }

    /// `ticket` has sent its head (or ended): it no longer waits.
    fn leave(&self, ticket: u64) {
        self.queue().slots.retain(|s| s.ticket != ticket);
    }
}

/// Gives up a place among waiting connections when dropped.
pub struct Leave(Arc<Waiting>, u64);

impl Leave {
    pub fn new(waiting: Arc<Waiting>, ticket: u64) -> Leave {
        Leave(waiting, ticket)
    }
}

impl Drop for Leave {
    fn drop(&mut self) {
        self.0.leave(self.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_waiting_is_evicted() {
        let w = Arc::new(Waiting::default());
        let (a, none) = w.admit(2);
        assert!(none.is_none());
        let (b, _) = w.admit(2);
        drop(Leave::new(w.clone(), a));
        let (_, none) = w.admit(2);
        assert!(none.is_none(), "a left, so there was room");
        assert_eq!(w.queue().slots.len(), 2);
        assert_eq!(w.queue().slots[0].ticket, b);
    }
}
