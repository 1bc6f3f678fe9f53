//! The pending-event set: a 4-ary min-heap keyed by `(time, sequence)`.
//!
//! Why a 4-ary heap: a datacenter simulation holds a few thousand to a few hundred thousand
//! pending events (one per busy port, per packet on a wire, per armed timer). A d-ary heap
//! with d = 4 halves the depth of a binary heap and keeps the four children of a node in one
//! or two cache lines; `crates/dcsim-bench` measures it against `std::collections::BinaryHeap`
//! (see `docs/performance.md`). Ladder and calendar queues pay off only at millions of pending
//! events with smooth time distributions, which this workload does not have.

use crate::SimTime;

/// One pending event: its key and its payload.
#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    fn before(&self, other: &Self) -> bool {
        (self.time, self.seq) < (other.time, other.seq)
    }
}

/// A priority queue of events ordered by time, FIFO among equal times.
///
/// The tie-break is an insertion counter (`seq`) that never repeats, so the order of two
/// events scheduled for the same time is the order in which they were inserted. That makes
/// the pop order a pure function of the insertion sequence.
#[derive(Clone, Debug)]
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    next_seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

const ARITY: usize = 4;

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue { heap: Vec::with_capacity(1024), next_seq: 0 }
    }

    /// Number of pending events. O(1).
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending. O(1).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Inserts `event` at `time`. O(log₄ n).
    #[inline]
    pub fn insert(&mut self, time: SimTime, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
        self.sift_up(self.heap.len() - 1);
    }

    /// The time of the earliest event, if any. O(1).
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| e.time)
    }

    /// Removes and returns the earliest event (FIFO among equal times). O(log₄ n).
    #[inline]
    pub fn pull(&mut self) -> Option<(SimTime, E)> {
        let n = self.heap.len();
        if n == 0 {
            return None;
        }
        let last = self.heap.pop().expect("non-empty");
        if n == 1 {
            return Some((last.time, last.event));
        }
        let top = std::mem::replace(&mut self.heap[0], last);
        self.sift_down(0);
        Some((top.time, top.event))
    }

    /// Every pending event, in no particular order. O(n).
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.heap.iter().map(|e| &e.event)
    }

    /// Removes every pending event. O(n).
    pub fn clear(&mut self) {
        self.heap.clear();
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let item = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if item.before(&self.heap[parent]) {
                self.heap[i] = self.heap[parent];
                i = parent;
            } else {
                break;
            }
        }
        self.heap[i] = item;
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let item = self.heap[i];
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            for c in first + 1..end {
                if self.heap[c].before(&self.heap[best]) {
                    best = c;
                }
            }
            if self.heap[best].before(&item) {
                self.heap[i] = self.heap[best];
                i = best;
            } else {
                break;
            }
        }
        self.heap[i] = item;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::new();
        for (t, e) in [(5u64, 'a'), (1, 'b'), (3, 'c'), (9, 'd'), (0, 'e'), (3, 'f')] {
            q.insert(SimTime(t), e);
        }
        let order: Vec<char> = std::iter::from_fn(|| q.pull().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['e', 'b', 'c', 'f', 'a', 'd']);
    }

    #[test]
    fn equal_times_are_fifo() {
        let mut q = EventQueue::new();
        for i in 0..1000u32 {
            q.insert(SimTime(7), i);
        }
        for i in 0..1000u32 {
            assert_eq!(q.pull(), Some((SimTime(7), i)));
        }
        assert!(q.is_empty());
    }

    #[test]
    fn matches_a_sorted_reference_on_random_input() {
        // A simple LCG keeps the test free of dependencies; interleaves inserts and pulls.
        let mut x: u64 = 12345;
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u64)> = Vec::new(); // (time, seq)
        let mut seq = 0u64;
        for step in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if step % 3 != 2 {
                let t = (x >> 33) % 500;
                q.insert(SimTime(t), seq);
                reference.push((t, seq));
                seq += 1;
            } else if let Some((t, s)) = q.pull() {
                let min = *reference.iter().min().unwrap();
                assert_eq!((t.0, s), min);
                reference.retain(|&r| r != min);
            }
        }
        reference.sort();
        for r in reference {
            let (t, s) = q.pull().unwrap();
            assert_eq!((t.0, s), r);
        }
    }
}
