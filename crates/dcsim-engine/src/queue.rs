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
//! times).
//!
//! Layout: every slot but the cursor's is an unsorted singly linked list threaded through
//! one contiguous node pool (a slot costs 4 bytes for its head, and a freed node is reused
//! at once, so an insert writes to memory that is usually still cached). When the cursor
//! reaches a slot, its nodes are copied into one contiguous buffer and sorted (a single
//! event needs no sort); pulls then walk that buffer, and later inserts for the cursor slot
//! are placed in it by binary search (usually an append).
//!
//! The wheel stores times only, no insertion sequence numbers (issue 16 lever 2: 24-byte
//! nodes instead of 32, 8-byte comparisons instead of 16). The FIFO order among equal times
//! comes from the lists themselves: a slot's list holds its events newest first, because an
//! event enters a slot's list either from the far heap (in key order, when the slot comes into
//! the window, before any direct insert can reach it) or by a direct insert after that. So a
//! gathered slot, reversed, is in insertion order, and a stable sort by time gives the order by
//! (time, insertion). Only the far heap needs sequence numbers.

use crate::heap::{key, key_time, HeapQueue};
use crate::SimTime;

/// Default slot width: 2^13 ps ≈ 8.2 ns (measured against 4.1 and 16.4 ns on the pHost and
/// pFabric benchmarks: about two events per turned slot, fewest instructions per event).
pub const DEFAULT_SLOT_BITS: u32 = 13;
/// Default number of slots: 2^12, a horizon of ≈ 33.6 µs.
pub const DEFAULT_SLOTS_LOG2: u32 = 12;

/// End of a slot's list, and of the free list.
const NIL: u32 = u32::MAX;

/// One pending event of a non-cursor slot, linked to the next (older) event of the same slot
/// (or the next free node). 24 bytes for a 12-byte event.
#[derive(Clone, Copy, Debug)]
struct Node<E> {
    time: u64,
    event: E,
    next: u32,
}

/// A priority queue of events ordered by time, FIFO among equal times; O(1) expected insert
/// and pop for events within the horizon.
///
/// Invariant: the cursor slot's events are in `cursor[head..]`, sorted ascending; every
/// other slot within the window is an unsorted list from `heads[slot]`, its bit set in
/// `occupied`, and the cursor slot's list is empty. Events beyond the horizon wait in `far`,
/// whose earliest slot number is cached in `far_min_slot`.
#[derive(Clone, Debug)]
pub struct EventQueue<E> {
    /// First node of each slot's list, or `NIL`.
    heads: Vec<u32>,
    /// The list nodes of every slot, and the free nodes (linked from `free`).
    pool: Vec<Node<E>>,
    free: u32,
    /// One bit per slot: its list is non-empty.
    occupied: Vec<u64>,
    /// The cursor slot's events (time, event), in order; `cursor[..head]` are already taken.
    cursor: Vec<(u64, E)>,
    head: usize,
    slot_bits: u32,
    mask: u64,
    /// Absolute slot number (time >> slot_bits) of the cursor slot.
    cur: u64,
    far: HeapQueue<E>,
    far_min_slot: u64,
    len: usize,
    /// Insertion sequence numbers of the far heap's events.
    next_seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// A queue with the default geometry (8.2 ns slots, 33.6 µs horizon).
    pub fn new() -> Self {
        Self::with_geometry(DEFAULT_SLOT_BITS, DEFAULT_SLOTS_LOG2)
    }

    /// A queue with default-width slots and enough of them to cover `horizon` (between 2^10
    /// and 2^18 slots, i.e. 8.4 µs to 2.1 ms).
    pub fn with_horizon(horizon: SimTime) -> Self {
        let slots = (horizon.0 >> DEFAULT_SLOT_BITS).max(1).next_power_of_two();
        Self::with_geometry(DEFAULT_SLOT_BITS, slots.trailing_zeros().clamp(10, 18))
    }

    /// A queue with slots of 2^`slot_bits` ps and 2^`slots_log2` slots (at least 64).
    pub fn with_geometry(slot_bits: u32, slots_log2: u32) -> Self {
        let n = 1usize << slots_log2.max(6);
        EventQueue {
            heads: vec![NIL; n],
            pool: Vec::with_capacity(1024),
            free: NIL,
            occupied: vec![0; n / 64],
            cursor: Vec::with_capacity(64),
            head: 0,
            slot_bits,
            mask: n as u64 - 1,
            cur: 0,
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

    /// Puts an event at `time`, whose slot is after the cursor's and inside the window, at the
    /// front of its slot's list.
    #[inline(always)]
    fn link(&mut self, abs: u64, time: u64, event: E) {
        let i = (abs & self.mask) as usize;
        let node = Node { time, event, next: self.heads[i] };
        let n = if let Some(slot) = self.pool.get_mut(self.free as usize) {
            let n = self.free;
            self.free = slot.next;
            *slot = node;
            n
        } else {
            self.pool.push(node);
            u32::try_from(self.pool.len() - 1)
                .ok()
                .filter(|&n| n != NIL)
                .expect("fewer than 2^32 - 1 pending events")
        };
        self.heads[i] = n;
        self.occupied[i / 64] |= 1 << (i % 64);
    }

    /// Puts an event for the cursor slot (or an earlier one, possible after a peek turned
    /// the wheel) into the sorted cursor buffer. Out of line: few inserts land there.
    /// The new event goes after every pending event of the same time (it is the newest).
    #[inline(never)]
    fn place_in_cursor(&mut self, time: u64, event: E) {
        if self.head == self.cursor.len() {
            // Drained: start over rather than grow.
            self.cursor.clear();
            self.head = 0;
            self.cursor.push((time, event));
        } else if self.cursor.last().is_none_or(|&(x, _)| x <= time) {
            // Usually the newest event is the latest: append.
            self.cursor.push((time, event));
        } else {
            let pos = self.head + self.cursor[self.head..].partition_point(|&(x, _)| x <= time);
            self.cursor.insert(pos, (time, event));
        }
    }

    /// Inserts `event` at `time`. O(1) within the horizon, O(log₄ n) beyond it.
    ///
    /// Inlined into every caller (a few instructions for the common case, a slot after the
    /// cursor's); the rarer cases are out of line.
    #[inline(always)]
    pub fn insert(&mut self, time: SimTime, event: E) {
        self.len += 1;
        let abs = time.0 >> self.slot_bits;
        if abs > self.cur && abs <= self.cur + self.mask {
            self.link(abs, time.0, event);
        } else {
            self.insert_elsewhere(abs, time, event);
        }
    }

    /// An insert for the cursor slot (or earlier) or beyond the horizon.
    #[inline(never)]
    fn insert_elsewhere(&mut self, abs: u64, time: SimTime, event: E) {
        if abs <= self.cur {
            self.place_in_cursor(time.0, event);
        } else {
            self.far.insert_key(key(time, self.next_seq), event);
            self.next_seq += 1;
            self.far_min_slot = self.far_min_slot.min(abs);
        }
    }

    /// Moves far events that the window now covers into their slots' lists (the cursor
    /// slot's included: it is gathered right after).
    #[inline]
    fn refill(&mut self) {
        let horizon = self.cur + self.mask;
        while self.far_min_slot <= horizon {
            let (k, e) = self.far.pull_key().expect("far_min_slot says non-empty");
            self.link(self.far_min_slot, key_time(k).0, e);
            self.far_min_slot = self.far.peek_key().map_or(u64::MAX, |k| self.slot_of(k));
        }
    }

    /// With the cursor buffer drained, turns the wheel to the next non-empty slot and
    /// gathers it into the buffer; returns its earliest event, or `None` if nothing is
    /// pending. Out of line, but not cold: about half the pulls of a packet simulation turn
    /// the wheel.
    #[inline(never)]
    fn next_slot(&mut self) -> Option<(u64, E)> {
        debug_assert_eq!(self.head, self.cursor.len());
        if self.len == 0 {
            return None;
        }
        let i = (self.cur & self.mask) as usize;
        self.cur = match self.scan((i + 1) & self.mask as usize) {
            Some(off) => self.cur + 1 + off as u64,
            None => self.far_min_slot,
        };
        self.refill();
        let j = (self.cur & self.mask) as usize;
        self.occupied[j / 64] &= !(1 << (j % 64));
        let mut n = std::mem::replace(&mut self.heads[j], NIL);
        self.cursor.clear();
        self.head = 0;
        while let Some(node) = self.pool.get_mut(n as usize) {
            self.cursor.push((node.time, node.event));
            let next = node.next;
            node.next = self.free;
            self.free = n;
            n = next;
        }
        // The list ran newest first: reversed, it is in insertion order, and a stable sort by
        // time makes it (time, insertion) order. Most slots hold one or two events.
        match self.cursor.as_mut_slice() {
            [_] => {}
            [newer, older] => {
                if older.0 <= newer.0 {
                    std::mem::swap(newer, older);
                }
            }
            all => {
                all.reverse();
                all.sort_by_key(|e| e.0);
            }
        }
        debug_assert!(!self.cursor.is_empty());
        self.cursor.first().copied()
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

    /// The earliest pending event with its key, left in place.
    #[inline]
    fn first(&mut self) -> Option<(u64, E)> {
        match self.cursor.get(self.head) {
            Some(&first) => Some(first),
            None => self.next_slot(),
        }
    }

    /// The time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.first().map(|(t, _)| SimTime(t))
    }

    /// Removes and returns the earliest event (FIFO among equal times).
    #[inline]
    pub fn pull(&mut self) -> Option<(SimTime, E)> {
        let (t, e) = self.first()?;
        self.head += 1;
        self.len -= 1;
        Some((SimTime(t), e))
    }

    /// Like [`pull`](Self::pull), but only if the earliest event is at or before `limit`.
    #[inline]
    pub fn pull_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        let (t, e) = self.first()?;
        let t = SimTime(t);
        if t > limit {
            return None;
        }
        self.head += 1;
        self.len -= 1;
        Some((t, e))
    }

    /// Every pending event, in no particular order. O(n + slots).
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        let lists = self.heads.iter().flat_map(move |&h| {
            std::iter::successors(self.pool.get(h as usize), move |n| {
                self.pool.get(n.next as usize)
            })
            .map(|n| &n.event)
        });
        self.cursor[self.head..].iter().map(|(_, e)| e).chain(lists).chain(self.far.iter())
    }

    /// Removes every pending event.
    pub fn clear(&mut self) {
        self.heads.iter_mut().for_each(|h| *h = NIL);
        self.occupied.iter_mut().for_each(|w| *w = 0);
        self.pool.clear();
        self.free = NIL;
        self.cursor.clear();
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
        assert_eq!(q.heads.len(), 1 << 13); // 60 µs / 8.2 ns → 7 324 → 2^13
        let tiny: EventQueue<u8> = EventQueue::with_horizon(SimTime::from_ns(1));
        assert_eq!(tiny.heads.len(), 1 << 10);
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

    /// Issue 16 lever 2: the wheel keeps no sequence numbers; a slot's FIFO order among
    /// equal times comes from its list. A slot filled from the far heap and then by direct
    /// inserts, with equal and out-of-order times, pops in (time, insertion) order, both for
    /// a slot sorted by insertion (≤ 16 events) and one sorted by the standard library.
    #[test]
    fn a_crowded_slot_pops_in_time_then_insertion_order() {
        for per_slot in [3u64, 16, 40] {
            // 64 slots of 1024 ps: slot 100 is beyond the horizon at first.
            let mut q = EventQueue::with_geometry(10, 6);
            let base = 100 * 1024;
            let mut want = Vec::new();
            let mut id = 0u32;
            let mut add = |q: &mut EventQueue<u32>, t: u64, want: &mut Vec<(u64, u32)>| {
                q.insert(SimTime(t), id);
                want.push((t, id));
                id += 1;
            };
            // Far events: times descending with repeats (5 distinct times).
            for i in 0..per_slot {
                add(&mut q, base + 500 - (i % 5) * 100, &mut want);
            }
            // Move the window over slot 100 (an event at slot 60 is pulled first).
            add(&mut q, 60 * 1024, &mut want);
            assert_eq!(q.pull().map(|(t, _)| t.0), Some(60 * 1024));
            want.remove(want.len() - 1);
            // Direct inserts into the same slot, at the same times again.
            for i in 0..per_slot {
                add(&mut q, base + 100 + (i % 5) * 100, &mut want);
            }
            want.sort_by_key(|&(t, _)| t); // stable: insertion order among equal times
            let got: Vec<(u64, u32)> =
                std::iter::from_fn(|| q.pull().map(|(t, e)| (t.0, e))).collect();
            assert_eq!(got, want, "{per_slot} events per half");
        }
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

    #[test]
    fn matches_a_sorted_reference_with_bursts_peeks_and_clears() {
        // Equal-time bursts, inserts at the current time (into the cursor slot, also after a
        // peek turned the wheel past it), pull_until limits, iteration and clear, over
        // geometries from one-picosecond slots to the default.
        for (slot_bits, slots_log2) in [(0, 6), (2, 7), (4, 6), (6, 10), (12, 12), (12, 6)] {
            let mut x: u64 = 987654321 + slot_bits as u64;
            let mut rand = || {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                x >> 33
            };
            let mut q = EventQueue::with_geometry(slot_bits, slots_log2);
            let mut reference = std::collections::BTreeSet::new();
            let mut now = 0u64;
            let mut seq = 0u64;
            for step in 0..40_000 {
                let what = rand() % 16;
                let ctx = format!("geometry ({slot_bits}, {slots_log2}), step {step}");
                match what {
                    0..=6 => {
                        // A burst of 1-8 events at one time, a short or a long way ahead.
                        let span = [1u64, 50, 5_000, 300_000][rand() as usize % 4];
                        let t = now + rand() % span;
                        for _ in 0..1 + rand() % 8 {
                            q.insert(SimTime(t), seq);
                            reference.insert((t, seq));
                            seq += 1;
                        }
                    }
                    7..=12 => {
                        let got = q.pull();
                        let want = reference.pop_first();
                        assert_eq!(got.map(|(t, s)| (t.0, s)), want, "{ctx}");
                        if let Some((t, _)) = want {
                            now = t;
                        }
                    }
                    13 => {
                        // Peek (possibly turning the wheel), then insert at `now`, earlier.
                        let want = reference.first().map(|&(t, _)| t);
                        assert_eq!(q.peek_time().map(|t| t.0), want, "{ctx}");
                        q.insert(SimTime(now), seq);
                        reference.insert((now, seq));
                        seq += 1;
                    }
                    14 => {
                        let limit = now + rand() % 2_000;
                        let want = reference.first().copied().filter(|&(t, _)| t <= limit);
                        let got = q.pull_until(SimTime(limit)).map(|(t, s)| (t.0, s));
                        assert_eq!(got, want, "{ctx}");
                        if let Some(w) = want {
                            reference.remove(&w);
                            now = w.0;
                        }
                    }
                    _ => {
                        let mut all: Vec<u64> = q.iter().copied().collect();
                        all.sort_unstable();
                        let want: Vec<u64> = reference.iter().map(|&(_, s)| s).collect();
                        let mut want_sorted = want.clone();
                        want_sorted.sort_unstable();
                        assert_eq!(all, want_sorted, "{ctx}");
                        if rand() % 50 == 0 {
                            q.clear();
                            reference.clear();
                        }
                    }
                }
                assert_eq!(q.len(), reference.len(), "{ctx}");
            }
            while let Some(r) = reference.pop_first() {
                assert_eq!(q.pull().map(|(t, s)| (t.0, s)), Some(r));
            }
            assert_eq!(q.pull(), None);
        }
    }
}
