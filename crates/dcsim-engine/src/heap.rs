//! A 4-ary min-heap of events keyed by `(time, sequence)`: the far-future store of
//! [`crate::EventQueue`], and a general-purpose pending-event set in its own right.
//!
//! Why a 4-ary heap: a datacenter simulation holds a few thousand to a few hundred thousand
//! pending events (one per busy port, per packet on a wire, per armed timer). A d-ary heap
//! with d = 4 halves the depth of a binary heap and keeps the four children of a node in one
//! or two cache lines; `crates/dcsim-bench` measures it against `std::collections::BinaryHeap`
//! (see `docs/performance.md`). Ladder and calendar queues pay off only at millions of pending
//! events with smooth time distributions, which this workload does not have.

use crate::SimTime;

/// Packs `(time, seq)` into one `u128` (time in the high 64 bits), so ordering is a single
/// 128-bit comparison instead of a lexicographic tuple comparison.
#[inline(always)]
pub(crate) fn key(time: SimTime, seq: u64) -> u128 {
    ((time.0 as u128) << 64) | seq as u128
}

#[inline(always)]
pub(crate) fn key_time(k: u128) -> SimTime {
    SimTime((k >> 64) as u64)
}

/// A priority queue of events ordered by time, FIFO among equal times.
///
/// The tie-break is an insertion counter (`seq`) that never repeats, so the order of two
/// events scheduled for the same time is the order in which they were inserted. That makes
/// the pop order a pure function of the insertion sequence.
///
/// Layout: keys and payloads live in parallel arrays, so a node's four children's keys
/// (4 × 16 bytes) share one cache line and the payloads are only touched when moved.
///
/// Deferred root removal: `pull` leaves the root slot empty (a "hole") instead of refilling
/// it at once. A discrete-event handler usually schedules one new event right after popping
/// one; that insert drops straight into the hole and sifts down, so the pop-then-push pair
/// costs one sift instead of two.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HeapQueue<E> {
    keys: Vec<u128>,
    events: Vec<E>,
    next_seq: u64,
    hole: bool,
}

impl<E: Copy> Default for HeapQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

const ARITY: usize = 4;

impl<E: Copy> HeapQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        HeapQueue {
            keys: Vec::with_capacity(1024),
            events: Vec::with_capacity(1024),
            next_seq: 0,
            hole: false,
        }
    }

    /// Number of pending events. O(1).
    #[inline]
    pub fn len(&self) -> usize {
        self.keys.len() - self.hole as usize
    }

    /// True when nothing is pending. O(1).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Inserts `event` at `time`. O(log₄ n).
    #[inline]
    pub fn insert(&mut self, time: SimTime, event: E) {
        let k = key(time, self.next_seq);
        self.next_seq += 1;
        self.insert_key(k, event);
    }

    /// Inserts with a caller-made key (the wheel keeps one sequence counter for both stores).
    #[inline]
    pub(crate) fn insert_key(&mut self, k: u128, event: E) {
        if self.hole {
            self.hole = false;
            self.sift_down(0, k, event);
        } else {
            self.keys.push(k);
            self.events.push(event);
            self.sift_up(self.keys.len() - 1, k, event);
        }
    }

    /// The smallest key, if any.
    #[inline]
    pub(crate) fn peek_key(&mut self) -> Option<u128> {
        self.fill_hole();
        self.keys.first().copied()
    }

    /// Removes the smallest element with its key.
    #[inline]
    pub(crate) fn pull_key(&mut self) -> Option<(u128, E)> {
        self.fill_hole();
        if self.keys.is_empty() {
            return None;
        }
        self.hole = true;
        Some((self.keys[0], self.events[0]))
    }

    /// Refills an empty root with the last element.
    #[inline]
    fn fill_hole(&mut self) {
        if !self.hole {
            return;
        }
        self.hole = false;
        let k = self.keys.pop().expect("a hole implies a slot");
        let e = self.events.pop().expect("parallel arrays");
        if !self.keys.is_empty() {
            self.sift_down(0, k, e);
        }
    }

    /// The time of the earliest event, if any. O(log₄ n) when a removal is pending, else O(1).
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.fill_hole();
        self.keys.first().map(|&k| key_time(k))
    }

    /// Removes and returns the earliest event (FIFO among equal times). O(log₄ n).
    #[inline]
    pub fn pull(&mut self) -> Option<(SimTime, E)> {
        self.fill_hole();
        if self.keys.is_empty() {
            return None;
        }
        self.hole = true;
        Some((key_time(self.keys[0]), self.events[0]))
    }

    /// Like [`pull`](Self::pull), but only if the earliest event is at or before `limit`;
    /// otherwise leaves it in place and returns `None`.
    #[inline]
    pub fn pull_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        self.fill_hole();
        match self.keys.first() {
            Some(&k) if key_time(k) <= limit => {
                self.hole = true;
                Some((key_time(k), self.events[0]))
            }
            _ => None,
        }
    }

    /// Every pending event, in no particular order. O(n).
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.events.iter().skip(self.hole as usize)
    }

    /// Removes every pending event. O(n).
    pub fn clear(&mut self) {
        self.keys.clear();
        self.events.clear();
        self.hole = false;
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize, k: u128, e: E) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let pk = self.keys[parent];
            if k >= pk {
                break;
            }
            self.keys[i] = pk;
            self.events[i] = self.events[parent];
            i = parent;
        }
        self.keys[i] = k;
        self.events[i] = e;
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize, k: u128, e: E) {
        let n = self.keys.len();
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let (mut best, mut best_key);
            if first + ARITY <= n {
                // Full node: a tournament of the four children, written so the compiler can
                // use conditional moves rather than unpredictable branches.
                let c = &self.keys[first..first + ARITY];
                let (a, ak) = if c[1] < c[0] { (1, c[1]) } else { (0, c[0]) };
                let (b, bk) = if c[3] < c[2] { (3, c[3]) } else { (2, c[2]) };
                (best, best_key) = if bk < ak { (b, bk) } else { (a, ak) };
                best += first;
            } else {
                best = first;
                best_key = self.keys[first];
                for c in first + 1..n {
                    if self.keys[c] < best_key {
                        best = c;
                        best_key = self.keys[c];
                    }
                }
            }
            if best_key >= k {
                break;
            }
            self.keys[i] = best_key;
            self.events[i] = self.events[best];
            i = best;
        }
        self.keys[i] = k;
        self.events[i] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order() {
        let mut q = HeapQueue::new();
        for (t, e) in [(5u64, 'a'), (1, 'b'), (3, 'c'), (9, 'd'), (0, 'e'), (3, 'f')] {
            q.insert(SimTime(t), e);
        }
        let order: Vec<char> = std::iter::from_fn(|| q.pull().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['e', 'b', 'c', 'f', 'a', 'd']);
    }

    #[test]
    fn pull_then_insert_reuses_the_root_and_keeps_order() {
        let mut q = HeapQueue::new();
        for t in [4u64, 8, 6] {
            q.insert(SimTime(t), t);
        }
        assert_eq!(q.pull(), Some((SimTime(4), 4)));
        assert_eq!(q.len(), 2);
        q.insert(SimTime(5), 5); // fills the hole
        q.insert(SimTime(7), 7);
        assert_eq!(q.iter().count(), 4);
        assert_eq!(q.pull_until(SimTime(4)), None, "5 is after the limit and stays");
        let order: Vec<u64> = std::iter::from_fn(|| q.pull().map(|(_, e)| e)).collect();
        assert_eq!(order, vec![5, 6, 7, 8]);
        assert!(q.is_empty());
        assert_eq!(q.peek_time(), None);
    }

    #[test]
    fn equal_times_are_fifo() {
        let mut q = HeapQueue::new();
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
        let mut q = HeapQueue::new();
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
