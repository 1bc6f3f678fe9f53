//! The pending-event set of a simulation: a timing wheel (calendar queue) for the near
//! future, backed by a 4-ary heap for the far future.
//!
//! Why: in a packet simulation nearly every event is scheduled a few microseconds ahead
//! (a packet reaching the next switch, a link freeing), and only a few (timers, the next
//! flow arrival) further out. The wheel splits the near future into fixed-width slots; an
//! insert appends to its slot in O(1), and a pop takes the earliest event of the earliest
//! non-empty slot, found through a bitmap. Events beyond the wheel's horizon wait in a
//! [`HeapQueue`] and move into the wheel as it turns. `crates/dcsim-bench` measures this
//! against the heap alone (see `docs/performance.md`).
//!
//! Order is exactly the heap's: by time, then by insertion sequence (FIFO among equal
//! times). A slot is sorted (descending, so the earliest is at the end) the first time it is
//! looked at; later inserts into a sorted slot are placed by binary search.

use crate::heap::{key, key_time, HeapQueue};
use crate::SimTime;

/// Default slot width: 2^12 ps ≈ 4.1 ns.
pub const DEFAULT_SLOT_BITS: u32 = 12;
/// Default number of slots: 2^12, a horizon of ≈ 16.8 µs.
pub const DEFAULT_SLOTS_LOG2: u32 = 12;

/// A priority queue of events ordered by time, FIFO among equal times; O(1) expected insert
/// and pop for events within the horizon.
///
/// Invariant: only the cursor slot is sorted (ascending from `head`); every other slot is an
/// unsorted bag that gets sorted once, when the cursor reaches it. Events beyond the horizon
/// wait in `far`, whose earliest slot number is cached in `far_min_slot`.
#[derive(Clone, Debug)]
pub struct EventQueue<E> {
    slots: Vec<Vec<(u128, E)>>,
    /// One bit per slot: non-empty.
    occupied: Vec<u64>,
    slot_bits: u32,
    mask: u64,
    /// Absolute slot number (time >> slot_bits) of the cursor slot.
    cur: u64,
    /// Next element of the cursor slot.
    head: usize,
    far: HeapQueue<E>,
    far_min_slot: u64,
    len: usize,
    next_seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// A queue with the default geometry (4.1 ns slots, 16.8 µs horizon).
    pub fn new() -> Self {
        Self::with_geometry(DEFAULT_SLOT_BITS, DEFAULT_SLOTS_LOG2)
    }

    /// A queue with default-width slots and enough of them to cover `horizon` (between 2^10
    /// and 2^18 slots, i.e. 4.2 µs to 1.07 ms).
    pub fn with_horizon(horizon: SimTime) -> Self {
        let slots = (horizon.0 >> DEFAULT_SLOT_BITS).max(1).next_power_of_two();
        Self::with_geometry(DEFAULT_SLOT_BITS, slots.trailing_zeros().clamp(10, 18))
    }

    /// A queue with slots of 2^`slot_bits` ps and 2^`slots_log2` slots (at least 64).
    pub fn with_geometry(slot_bits: u32, slots_log2: u32) -> Self {
        let n = 1usize << slots_log2.max(6);
        EventQueue {
            slots: (0..n).map(|_| Vec::new()).collect(),
            occupied: vec![0; n / 64],
            slot_bits,
            mask: n as u64 - 1,
            cur: 0,
            head: 0,
            far: HeapQueue::new(),
            far_min_slot: u64::MAX,
            len: 0,
            next_seq: 0,
        }
    }

    /// Number of pending events. O(1).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is pending. O(1).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn slot_of(&self, k: u128) -> u64 {
        key_time(k).0 >> self.slot_bits
    }

    /// Puts an event with key `k` (whose slot is inside the window) into its slot. Events
    /// for the cursor slot or earlier (possible after a peek turned the wheel) go into the
    /// sorted cursor slot.
    #[inline]
    fn place(&mut self, k: u128, event: E, cursor_sorted: bool) {
        let abs = self.slot_of(k);
        let i = (abs.max(self.cur) & self.mask) as usize;
        let slot = &mut self.slots[i];
        if abs <= self.cur && cursor_sorted {
            // Usually the newest key is the largest: append; otherwise binary insertion.
            if slot.last().is_none_or(|&(x, _)| x < k) {
                slot.push((k, event));
            } else {
                let pos = self.head + slot[self.head..].partition_point(|&(x, _)| x < k);
                slot.insert(pos, (k, event));
            }
        } else {
            slot.push((k, event));
        }
        self.occupied[i / 64] |= 1 << (i % 64);
    }

    /// Inserts `event` at `time`. O(1) within the horizon, O(log₄ n) beyond it.
    #[inline]
    pub fn insert(&mut self, time: SimTime, event: E) {
        let k = key(time, self.next_seq);
        self.next_seq += 1;
        self.len += 1;
        let abs = time.0 >> self.slot_bits;
        if abs <= self.cur + self.mask {
            self.place(k, event, true);
        } else {
            self.far.insert_key(k, event);
            self.far_min_slot = self.far_min_slot.min(abs);
        }
    }

    /// Moves far events that the window now covers into their (unsorted) slots.
    #[inline]
    fn refill(&mut self) {
        let horizon = self.cur + self.mask;
        while self.far_min_slot <= horizon {
            let (k, e) = self.far.pull_key().expect("far_min_slot says non-empty");
            self.place(k, e, false);
            self.far_min_slot = self.far.peek_key().map_or(u64::MAX, |k| self.slot_of(k));
        }
    }

    /// Makes the cursor slot hold the earliest pending event; false if nothing is pending.
    #[inline]
    fn advance(&mut self) -> bool {
        let i = (self.cur & self.mask) as usize;
        if self.head < self.slots[i].len() {
            return true;
        }
        if self.len == 0 {
            return false;
        }
        // The cursor slot is drained: move to the next occupied slot, or jump to the far heap.
        let next = match self.scan((i + 1) & self.mask as usize) {
            Some(off) => self.cur + 1 + off as u64,
            None => self.far_min_slot,
        };
        self.cur = next;
        self.head = 0;
        self.refill();
        let j = (self.cur & self.mask) as usize;
        self.slots[j].sort_unstable_by_key(|e| e.0);
        debug_assert!(!self.slots[j].is_empty());
        true
    }

    /// Distance from slot `start` to the first occupied slot (cyclically), if any.
    #[inline]
    fn scan(&self, start: usize) -> Option<usize> {
        let words = self.occupied.len();
        let (w0, b0) = (start / 64, start % 64);
        let first = self.occupied[w0] >> b0;
        if first != 0 {
            return Some(first.trailing_zeros() as usize);
        }
        for step in 1..=words {
            let w = (w0 + step) % words;
            let mut bits = self.occupied[w];
            if step == words {
                bits &= (1u64 << b0).wrapping_sub(1); // only the part before `start`
            }
            if bits != 0 {
                return Some(step * 64 - b0 + bits.trailing_zeros() as usize);
            }
        }
        None
    }

    /// The time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if !self.advance() {
            return None;
        }
        let i = (self.cur & self.mask) as usize;
        Some(key_time(self.slots[i][self.head].0))
    }

    #[inline]
    fn take(&mut self) -> (SimTime, E) {
        let i = (self.cur & self.mask) as usize;
        let slot = &mut self.slots[i];
        let (k, e) = slot[self.head];
        self.head += 1;
        if self.head == slot.len() {
            slot.clear();
            self.head = 0;
            self.occupied[i / 64] &= !(1 << (i % 64));
        }
        self.len -= 1;
        (key_time(k), e)
    }

    /// Removes and returns the earliest event (FIFO among equal times).
    #[inline]
    pub fn pull(&mut self) -> Option<(SimTime, E)> {
        if !self.advance() {
            return None;
        }
        Some(self.take())
    }

    /// Like [`pull`](Self::pull), but only if the earliest event is at or before `limit`.
    #[inline]
    pub fn pull_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        if self.peek_time()? > limit {
            return None;
        }
        Some(self.take())
    }

    /// Every pending event, in no particular order. O(n + slots).
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        let cursor = (self.cur & self.mask) as usize;
        let head = self.head;
        self.slots
            .iter()
            .enumerate()
            .flat_map(move |(i, s)| {
                s.iter().skip(if i == cursor { head } else { 0 }).map(|(_, e)| e)
            })
            .chain(self.far.iter())
    }

    /// Removes every pending event.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(Vec::clear);
        self.occupied.iter_mut().for_each(|w| *w = 0);
        self.far.clear();
        self.far_min_slot = u64::MAX;
        self.head = 0;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn horizon_sets_the_number_of_slots() {
        let q: EventQueue<u8> = EventQueue::with_horizon(SimTime::from_us(60));
        assert_eq!(q.slots.len(), 1 << 14); // 60 µs / 4.1 ns → 14 648 → 2^14
        let tiny: EventQueue<u8> = EventQueue::with_horizon(SimTime::from_ns(1));
        assert_eq!(tiny.slots.len(), 1 << 10);
    }

    #[test]
    fn pops_in_time_order_across_the_horizon() {
        // Tiny geometry (64 slots of 16 ps) so the far heap and wrap-around are exercised.
        let mut q = EventQueue::with_geometry(4, 6);
        for (t, e) in [
            (5u64, 'a'),
            (1, 'b'),
            (3000, 'c'),
            (9, 'd'),
            (0, 'e'),
            (3, 'f'),
            (100_000, 'g'),
            (3, 'h'),
        ] {
            q.insert(SimTime(t), e);
        }
        assert_eq!(q.len(), 8);
        let order: Vec<char> = std::iter::from_fn(|| q.pull().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['e', 'b', 'f', 'h', 'a', 'd', 'c', 'g']);
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
    fn pull_until_leaves_later_events() {
        let mut q = EventQueue::with_geometry(4, 6);
        q.insert(SimTime(50), 1);
        q.insert(SimTime(5000), 2);
        assert_eq!(q.pull_until(SimTime(40)), None);
        assert_eq!(q.pull_until(SimTime(50)), Some((SimTime(50), 1)));
        assert_eq!(q.pull_until(SimTime(4999)), None);
        // Peeking turned the wheel to the far event; an insert before it still comes first.
        q.insert(SimTime(60), 3);
        assert_eq!(q.peek_time(), Some(SimTime(60)));
        assert_eq!(q.pull(), Some((SimTime(60), 3)));
        assert_eq!(q.pull(), Some((SimTime(5000), 2)));
        assert_eq!(q.pull(), None);
    }

    #[test]
    fn matches_a_sorted_reference_on_random_input() {
        // Interleaved inserts (never before the last popped time, as in a simulation) and
        // pulls, with delays spanning slots, wrap-arounds and the far heap.
        for (slot_bits, slots_log2) in [(4, 6), (12, 12), (0, 6)] {
            let mut x: u64 = 12345;
            let mut q = EventQueue::with_geometry(slot_bits, slots_log2);
            let mut reference = std::collections::BTreeSet::new();
            let mut now = 0u64;
            let mut seq = 0u64;
            for step in 0..50_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if step % 3 != 2 {
                    let span = [10u64, 1_000, 100_000][(x >> 20) as usize % 3];
                    let t = now + (x >> 33) % span;
                    q.insert(SimTime(t), seq);
                    reference.insert((t, seq));
                    seq += 1;
                } else if let Some((t, s)) = q.pull() {
                    let min = *reference.iter().next().unwrap();
                    assert_eq!((t.0, s), min, "geometry ({slot_bits}, {slots_log2}), step {step}");
                    reference.remove(&min);
                    now = t.0;
                }
                assert_eq!(q.len(), reference.len());
            }
            for r in reference {
                let (t, s) = q.pull().unwrap();
                assert_eq!((t.0, s), r);
            }
        }
    }
}
