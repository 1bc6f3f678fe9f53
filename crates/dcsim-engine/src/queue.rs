//! The pending-event set of a simulation: a timing wheel (calendar queue) for the near
//! future, backed by a 4-ary heap for the far future.
//!
//! Why: in a packet simulation nearly every event is scheduled a few microseconds ahead
//! (a packet reaching the next switch, a link freeing), and only a few (timers, the next
//! flow arrival) further out. The wheel splits the near future into fixed-width slots; an
//! insert links the event into its slot's list, and a pop takes the first event of the
//! earliest non-empty slot, found through a bitmap. Events beyond the wheel's horizon wait in
//! a [`HeapQueue`] and move into the wheel as it turns. `crates/dcsim-bench` measures this
//! against the heap alone (see `docs/performance.md`).
//!
//! Order is exactly the heap's: by time, then by insertion sequence (FIFO among equal
//! times).
//!
//! Layout: each slot is a singly linked list, **kept in (time, insertion) order**, threaded
//! through one contiguous node pool (a slot costs 8 bytes for its first and last node, and a
//! freed node is reused at once, so an insert writes to memory that is usually still cached).
//! An insert goes after every event of its slot with a time at or before its own: into an
//! empty slot, at the end (one comparison with the last node), or after a short walk (a slot
//! of 8.2 ns holds about three events; on the pHost benchmark about a third of inserts walk). A
//! pop takes the first node of the cursor slot, so turning the wheel is finding the next
//! occupied slot and moving far events that come into the window (issue 16 lever 2: the wheel
//! used to gather a slot's unsorted list into a buffer and sort it, about 235 instructions per
//! turn).
//!
//! **Crowded slots.** A walk costs a step per event of the slot, so a slot holding hundreds of
//! events (a fabric far larger than the papers', or the hold benchmark's 100,000 events within
//! 1.2 µs: 1.7 µs per pop and insert) would make inserts linear. An insert that would walk more
//! than [`WALK_LIMIT`] nodes of a slot other than the cursor's appends instead and marks the
//! slot unsorted; every later insert into it appends, and the wheel sorts the slot (stably by
//! time) when it turns to it. The order is the same: the list is then a sorted prefix followed
//! by events inserted after all of it, so a stable sort by time puts equal times in insertion
//! order.
//!
//! The wheel stores times only, no insertion sequence numbers (24-byte nodes, 8-byte
//! comparisons). The FIFO order among equal times comes from the lists: an event enters a
//! slot's list either from the far heap (in key order, when the slot comes into the window,
//! before any direct insert can reach it) or by a direct insert after that, each after the
//! events of equal time already there. Only the far heap needs sequence numbers.

use crate::heap::{key, key_time, HeapQueue};
use crate::SimTime;

/// Default slot width: 2^13 ps ≈ 8.2 ns (measured against 4.1 and 16.4 ns on the pHost and
/// pFabric benchmarks: about two events per turned slot, fewest instructions per event).
pub const DEFAULT_SLOT_BITS: u32 = 13;
/// Default number of slots: 2^12, a horizon of ≈ 33.6 µs.
pub const DEFAULT_SLOTS_LOG2: u32 = 12;

/// End of a slot's list, and of the free list.
const NIL: u32 = u32::MAX;

/// The longest walk an insert makes into a slot's list before it appends and leaves the slot to
/// be sorted when the wheel reaches it (module docs, "Crowded slots"). A slot of the papers'
/// fabrics holds about three events, so their runs never reach it.
pub const WALK_LIMIT: u32 = 16;

/// One pending event, linked to the next event of the same slot (or the next free node).
/// 24 bytes for a 12-byte event.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct Node<E> {
    time: u64,
    event: E,
    next: u32,
}

/// The first and last node of a slot's list (`NIL` when it is empty).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct Ends {
    first: u32,
    last: u32,
}

const EMPTY: Ends = Ends { first: NIL, last: NIL };

/// A priority queue of events ordered by time, FIFO among equal times; O(1) expected insert
/// and pop for events within the horizon.
///
/// Invariant: every slot of the window (`cur` to `cur + mask`) is a list in (time, insertion)
/// order, or marked in `unsorted` and then a list in that order followed by events inserted
/// after all of it (never the cursor slot), its bit set in `occupied` exactly when it is
/// non-empty; the cursor slot's list may
/// also hold events for earlier times (inserted after a peek turned the wheel past them),
/// first in its order. Events beyond the horizon wait in `far`, whose earliest slot number is
/// cached in `far_min_slot`.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EventQueue<E> {
    /// Each slot's list.
    slots: Vec<Ends>,
    /// The list nodes of every slot, and the free nodes (linked from `free`).
    pool: Vec<Node<E>>,
    free: u32,
    /// One bit per slot: its list is non-empty.
    occupied: Vec<u64>,
    /// One bit per slot: its list is to be sorted when the wheel turns to it.
    unsorted: Vec<u64>,
    /// How many slots are marked in `unsorted` (0 in the papers' runs: one test skips both).
    crowded: u32,
    /// Scratch for sorting a slot's nodes.
    sorting: Vec<u32>,
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
        Self::with_slots_over(DEFAULT_SLOT_BITS, horizon)
    }

    /// A queue with slots of 2^`slot_bits` ps and enough of them to cover `horizon` (between
    /// 2^10 and 2^18 slots).
    pub fn with_slots_over(slot_bits: u32, horizon: SimTime) -> Self {
        let slots = (horizon.0 >> slot_bits).max(1).next_power_of_two();
        Self::with_geometry(slot_bits, slots.trailing_zeros().clamp(10, 18))
    }

    /// A queue with slots of 2^`slot_bits` ps and 2^`slots_log2` slots (at least 64).
    pub fn with_geometry(slot_bits: u32, slots_log2: u32) -> Self {
        let n = 1usize << slots_log2.max(6);
        EventQueue {
            slots: vec![EMPTY; n],
            pool: Vec::with_capacity(1024),
            free: NIL,
            occupied: vec![0; n / 64],
            unsorted: vec![0; n / 64],
            crowded: 0,
            sorting: Vec::new(),
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

    /// A node holding `event` at `time`, from the free list or the end of the pool.
    #[inline(always)]
    fn alloc(&mut self, time: u64, event: E) -> u32 {
        let node = Node { time, event, next: NIL };
        if let Some(slot) = self.pool.get_mut(self.free as usize) {
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
        }
    }

    /// Links an event at `time` into the list of slot `abs` (inside the window), after every
    /// event there at or before `time`.
    #[inline(always)]
    fn link(&mut self, abs: u64, time: u64, event: E) {
        let i = (abs & self.mask) as usize;
        let n = self.alloc(time, event);
        let Ends { first, last } = self.slots[i];
        if first == NIL {
            self.slots[i] = Ends { first: n, last: n };
            self.occupied[i / 64] |= 1 << (i % 64);
        } else if self.pool[last as usize].time <= time {
            self.pool[last as usize].next = n;
            self.slots[i].last = n;
        } else {
            self.link_inside(i, first, n, time);
        }
    }

    /// Links node `n` (at `time`, earlier than the last of slot `i`'s list, whose first node is
    /// `first`) in its place, or at the end of a crowded slot other than the cursor's, which is
    /// then sorted when the wheel turns to it (module docs). Out of line: most inserts go into
    /// an empty slot or at the end.
    #[inline(never)]
    fn link_inside(&mut self, i: usize, first: u32, n: u32, time: u64) {
        // The cursor slot is never marked (the wheel sorted it when it turned to it).
        if self.crowded != 0 && self.unsorted[i / 64] & (1 << (i % 64)) != 0 {
            self.append(i, n);
            return;
        }
        if self.pool[first as usize].time > time {
            self.pool[n as usize].next = first;
            self.slots[i].first = n;
            return;
        }
        if let Some(prev) = self.walk_and_link(first, n, time, WALK_LIMIT) {
            self.link_crowded(i, prev, n, time);
        }
    }

    /// Walks the list on from node `prev` (at or before `time`) for at most `steps` nodes and
    /// links node `n` after the last node at or before `time`; returns the node it stopped at
    /// if it walked `steps` without finding the place. The list's last node is later than
    /// `time`, so the walk stops before the end.
    #[inline(always)]
    fn walk_and_link(&mut self, mut prev: u32, n: u32, time: u64, mut steps: u32) -> Option<u32> {
        loop {
            let next = self.pool[prev as usize].next;
            if self.pool[next as usize].time > time {
                self.pool[n as usize].next = next;
                self.pool[prev as usize].next = n;
                return None;
            }
            prev = next;
            steps -= 1;
            if steps == 0 {
                return Some(prev);
            }
        }
    }

    /// An insert that has walked [`WALK_LIMIT`] nodes of slot `i` to `prev`: appends and marks
    /// the slot to be sorted by the wheel, or, in the cursor slot, walks on.
    #[cold]
    #[inline(never)]
    fn link_crowded(&mut self, i: usize, prev: u32, n: u32, time: u64) {
        if i != (self.cur & self.mask) as usize {
            self.unsorted[i / 64] |= 1 << (i % 64);
            self.crowded += 1;
            self.append(i, n);
        } else {
            self.walk_and_link(prev, n, time, u32::MAX);
        }
    }

    /// Links node `n` after the last node of slot `i`'s non-empty list.
    #[inline]
    fn append(&mut self, i: usize, n: u32) {
        let last = self.slots[i].last;
        self.pool[last as usize].next = n;
        self.slots[i].last = n;
    }

    /// Puts the list of slot `i`, marked unsorted, in (time, insertion) order: a stable sort by
    /// time (module docs, "Crowded slots").
    #[cold]
    #[inline(never)]
    fn sort_slot(&mut self, i: usize) {
        let mut order = std::mem::take(&mut self.sorting);
        order.clear();
        let mut n = self.slots[i].first;
        while n != NIL {
            order.push(n);
            n = self.pool[n as usize].next;
        }
        order.sort_by_key(|&n| self.pool[n as usize].time);
        for pair in order.windows(2) {
            self.pool[pair[0] as usize].next = pair[1];
        }
        let (first, last) = (order[0], order[order.len() - 1]);
        self.pool[last as usize].next = NIL;
        self.slots[i] = Ends { first, last };
        self.unsorted[i / 64] &= !(1 << (i % 64));
        self.crowded -= 1;
        self.sorting = order;
    }

    /// Inserts `event` at `time`. O(1) within the horizon (for an event no earlier than its
    /// slot's others), O(log₄ n) beyond it.
    ///
    /// Inlined into every caller (a few instructions for the common case, a slot of the
    /// window); the rarer cases are out of line.
    #[inline(always)]
    pub fn insert(&mut self, time: SimTime, event: E) {
        self.len += 1;
        let abs = time.0 >> self.slot_bits;
        if abs.wrapping_sub(self.cur) <= self.mask {
            self.link(abs, time.0, event);
        } else {
            self.insert_elsewhere(abs, time, event);
        }
    }

    /// An insert before the cursor slot (possible after a peek turned the wheel past the
    /// current time: it joins the cursor slot's list, ahead of that slot's own events) or
    /// beyond the horizon.
    #[inline(never)]
    fn insert_elsewhere(&mut self, abs: u64, time: SimTime, event: E) {
        if abs < self.cur {
            self.link(self.cur, time.0, event);
        } else {
            self.far.insert_key(key(time, self.next_seq), event);
            self.next_seq += 1;
            self.far_min_slot = self.far_min_slot.min(abs);
        }
    }

    /// Moves far events that the window now covers into their slots' lists.
    #[inline]
    fn refill(&mut self) {
        let horizon = self.cur + self.mask;
        while self.far_min_slot <= horizon {
            let (k, e) = self.far.pull_key().expect("far_min_slot says non-empty");
            self.link(self.far_min_slot, key_time(k).0, e);
            self.far_min_slot = self.far.peek_key().map_or(u64::MAX, |k| self.slot_of(k));
        }
    }

    /// With the cursor slot empty, turns the wheel to the next non-empty slot; returns its
    /// first node, or `None` if nothing is pending. Out of line, but not cold: about a third of
    /// the pulls of a packet simulation turn the wheel.
    #[inline(never)]
    fn next_slot(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let i = (self.cur & self.mask) as usize;
        self.cur = match self.scan((i + 1) & self.mask as usize) {
            Some(off) => self.cur + 1 + off as u64,
            None => self.far_min_slot,
        };
        self.refill();
        let i = (self.cur & self.mask) as usize;
        if self.crowded != 0 && self.unsorted[i / 64] & (1 << (i % 64)) != 0 {
            self.sort_slot(i);
        }
        let first = self.slots[i].first;
        debug_assert_ne!(first, NIL);
        Some(first)
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

    /// The node of the earliest pending event, left in place.
    #[inline]
    fn first(&mut self) -> Option<u32> {
        match self.slots[(self.cur & self.mask) as usize].first {
            NIL => self.next_slot(),
            n => Some(n),
        }
    }

    /// Unlinks node `n`, the first of the cursor slot's list, and returns its event.
    #[inline]
    fn take_first(&mut self, n: u32) -> (SimTime, E) {
        let i = (self.cur & self.mask) as usize;
        let node = &mut self.pool[n as usize];
        let (time, event, next) = (node.time, node.event, node.next);
        node.next = self.free;
        self.free = n;
        self.slots[i].first = next;
        if next == NIL {
            self.slots[i].last = NIL;
            self.occupied[i / 64] &= !(1 << (i % 64));
        }
        self.len -= 1;
        (SimTime(time), event)
    }

    /// The time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.first().map(|n| SimTime(self.pool[n as usize].time))
    }

    /// Removes and returns the earliest event (FIFO among equal times).
    #[inline]
    pub fn pull(&mut self) -> Option<(SimTime, E)> {
        let n = self.first()?;
        Some(self.take_first(n))
    }

    /// Like [`pull`](Self::pull), but only if the earliest event is at or before `limit`.
    #[inline]
    pub fn pull_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        let n = self.first()?;
        if self.pool[n as usize].time > limit.0 {
            return None;
        }
        Some(self.take_first(n))
    }

    /// Every pending event, in no particular order. O(n + slots).
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        let lists = self.slots.iter().flat_map(move |s| {
            std::iter::successors(self.pool.get(s.first as usize), move |n| {
                self.pool.get(n.next as usize)
            })
            .map(|n| &n.event)
        });
        lists.chain(self.far.iter())
    }

    /// Removes every pending event.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = EMPTY);
        self.occupied.iter_mut().for_each(|w| *w = 0);
        self.unsorted.iter_mut().for_each(|w| *w = 0);
        self.crowded = 0;
        self.pool.clear();
        self.free = NIL;
        self.far.clear();
        self.far_min_slot = u64::MAX;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn horizon_sets_the_number_of_slots() {
        let q: EventQueue<u8> = EventQueue::with_horizon(SimTime::from_us(60));
        assert_eq!(q.slots.len(), 1 << 13); // 60 µs / 8.2 ns → 7 324 → 2^13
        let tiny: EventQueue<u8> = EventQueue::with_horizon(SimTime::from_ns(1));
        assert_eq!(tiny.slots.len(), 1 << 10);
        // Slots of 2^17 ps (131 ns): 60 µs needs 458 of them, so the minimum of 2^10.
        let wide: EventQueue<u8> = EventQueue::with_slots_over(17, SimTime::from_us(60));
        assert_eq!((wide.slot_bits, wide.slots.len()), (17, 1 << 10));
        let wide: EventQueue<u8> = EventQueue::with_slots_over(15, SimTime::from_us(600));
        assert_eq!((wide.slot_bits, wide.slots.len()), (15, 1 << 15)); // 18,311 → 2^15
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
    /// inserts, with equal and out-of-order times (appends, links at the front and inside),
    /// pops in (time, insertion) order, for slots of 6, 32 and 80 events.
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

    /// Pulls the earliest event, checks that it is the reference's earliest (time, insertion)
    /// pair, removes that, and returns the time; `None` when the queue is empty.
    fn pull_checked(
        q: &mut EventQueue<u64>,
        reference: &mut std::collections::BTreeSet<(u64, u64)>,
        at: &str,
    ) -> Option<u64> {
        let (t, s) = q.pull()?;
        assert_eq!(Some((t.0, s)), reference.pop_first(), "{at}");
        Some(t.0)
    }

    /// Pulls every remaining event, checking each against the reference in order.
    fn drain_checked(q: &mut EventQueue<u64>, reference: std::collections::BTreeSet<(u64, u64)>) {
        for r in reference {
            let (t, s) = q.pull().unwrap();
            assert_eq!((t.0, s), r);
        }
        assert!(q.is_empty());
    }

    /// Crowded slots (module docs): hundreds of events per slot, with equal times, inserts
    /// into the cursor slot after peeks, and pulls in between, pop in (time, insertion) order,
    /// and the slots were in fact left to be sorted by the wheel.
    #[test]
    fn crowded_slots_pop_in_time_then_insertion_order() {
        let mut x: u64 = 99;
        // 64 slots of 1,024 ps; times on a 64 ps grid, so many are equal.
        let mut q = EventQueue::with_geometry(10, 6);
        let mut reference = std::collections::BTreeSet::new();
        let (mut now, mut seq, mut marked) = (0u64, 0u64, 0);
        for step in 0..60_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if step % 4 != 3 {
                // Mostly 1-4 slots ahead; one in 16 into the cursor slot (after a peek, the
                // cursor may be past `now`: such an insert joins the cursor slot).
                let ahead =
                    if (x >> 40).is_multiple_of(16) { 0 } else { 1_024 + (x >> 33) % 4_096 };
                let t = (now + ahead) / 64 * 64;
                q.insert(SimTime(t.max(now)), seq);
                reference.insert((t.max(now), seq));
                seq += 1;
                marked += q.unsorted.iter().map(|w| w.count_ones()).sum::<u32>();
            } else {
                if (x >> 50).is_multiple_of(2) {
                    let _ = q.peek_time();
                }
                if let Some(t) = pull_checked(&mut q, &mut reference, &format!("step {step}")) {
                    now = t;
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        drain_checked(&mut q, reference);
        assert!(marked > 0, "no slot was ever crowded: the test does not reach the path");
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
                } else if let Some(t) = pull_checked(
                    &mut q,
                    &mut reference,
                    &format!("geometry ({slot_bits}, {slots_log2}), step {step}"),
                ) {
                    now = t;
                }
                assert_eq!(q.len(), reference.len());
            }
            drain_checked(&mut q, reference);
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
