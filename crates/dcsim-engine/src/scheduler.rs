//! The simulation clock plus the pending-event set.

use crate::{EventQueue, SimTime};
use std::fmt;

/// Scheduling an event before the current time.
///
/// Fatal for the event concerned: the caller has a bug (an event in the past would make time
/// go backwards). Returned rather than panicking so a library user can report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulingError {
    /// The time asked for.
    pub requested: SimTime,
    /// The current simulated time.
    pub now: SimTime,
}

impl fmt::Display for SchedulingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot schedule an event at `{}`: the clock is already at `{}`",
            self.requested, self.now
        )
    }
}

impl std::error::Error for SchedulingError {}

/// A clock and an [`EventQueue`]: `pop` advances the clock to the next event's time.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Scheduler<E> {
    now: SimTime,
    queue: EventQueue<E>,
    processed: u64,
}

impl<E: Copy> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> Scheduler<E> {
    /// A scheduler at time zero with nothing pending.
    pub fn new() -> Self {
        Scheduler { now: SimTime::ZERO, queue: EventQueue::new(), processed: 0 }
    }

    /// A scheduler whose event queue keeps events up to about `horizon` ahead in its timing
    /// wheel (O(1)); later events wait in its heap. Size it to cover the common delays.
    pub fn with_horizon(horizon: SimTime) -> Self {
        Scheduler { now: SimTime::ZERO, queue: EventQueue::with_horizon(horizon), processed: 0 }
    }

    /// Like [`with_horizon`](Self::with_horizon), with slots of 2^`slot_bits` ps.
    pub fn with_slots_over(slot_bits: u32, horizon: SimTime) -> Self {
        let queue = EventQueue::with_slots_over(slot_bits, horizon);
        Scheduler { now: SimTime::ZERO, queue, processed: 0 }
    }

    /// The current simulated time.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events popped so far.
    #[inline]
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events still pending.
    #[inline]
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Schedules `event` at absolute time `at`, which must not be in the past.
    #[inline(always)]
    pub fn schedule_at(&mut self, at: SimTime, event: E) -> Result<(), SchedulingError> {
        if at < self.now {
            return Err(SchedulingError { requested: at, now: self.now });
        }
        self.queue.insert(at, event);
        Ok(())
    }

    /// Schedules `event` after `delay` from now. Never fails.
    #[inline]
    pub fn schedule_in(&mut self, delay: SimTime, event: E) {
        self.queue.insert(self.now + delay, event);
    }

    /// The time of the next event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.queue.peek_time()
    }

    /// Pops the next event if it is at or before `limit` (advancing the clock to it);
    /// otherwise leaves it pending and returns `None`.
    #[inline]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        let (t, e) = self.queue.pull_until(limit)?;
        debug_assert!(t >= self.now, "time went backwards: {t} < {}", self.now);
        self.now = t;
        self.processed += 1;
        Some((t, e))
    }

    /// Every pending event, in no particular order (for end-of-run accounting).
    pub fn pending_events(&self) -> impl Iterator<Item = &E> {
        self.queue.iter()
    }

    /// Pops the next event and advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let (t, e) = self.queue.pull()?;
        // Invariant: time never goes backwards (guaranteed by schedule_at's check).
        debug_assert!(t >= self.now, "time went backwards: {t} < {}", self.now);
        self.now = t;
        self.processed += 1;
        Some((t, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_follows_events_and_rejects_the_past() {
        let mut s = Scheduler::new();
        s.schedule_at(SimTime(10), 1u8).unwrap();
        s.schedule_in(SimTime(5), 2u8);
        assert_eq!(s.pop(), Some((SimTime(5), 2)));
        assert_eq!(s.now(), SimTime(5));
        let err = s.schedule_at(SimTime(4), 3).unwrap_err();
        assert_eq!(err.now, SimTime(5));
        assert!(err.to_string().contains("already at"));
        assert_eq!(s.pop(), Some((SimTime(10), 1)));
        assert_eq!(s.pop(), None);
        assert_eq!(s.processed(), 2);
    }
}
