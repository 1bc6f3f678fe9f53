//! pFabric's priority-dropping queue (Alizadeh et al., HotNets'12 §2.2; SIGCOMM'13 §4.1).
//!
//! Every packet carries one priority number (lower = more urgent: the flow's remaining bytes,
//! or 0 for ACKs). The port keeps packets in arrival order and:
//!
//! * **dequeue** — finds the most urgent packet (lowest number; ties broken at random, HotNets
//!   §2.2) and sends the *earliest-arrived* packet of that packet's flow, so a flow's packets
//!   leave in order and its older packets (whose numbers are larger, because remaining size
//!   shrinks) are not starved by its newer ones (the SIGCOMM paper's starvation rule,
//!   §4.1, as the authors' ns-2 patch implements it);
//! * **enqueue** — appends; if the buffer then exceeds its limit, drops the least urgent
//!   packet: the arriving one if its number is at least every queued packet's (HotNets §2.2:
//!   "if it has priority less than or equal to the lowest priority packet in the buffer, it is
//!   dropped"), otherwise a least-urgent queued packet (random among ties), repeating until the
//!   buffer fits (a short arriving packet may need one victim, a full one more if the victims
//!   are short).
//!
//! Ties are broken at random (HotNets §2.2), or with `pfabric.ties = "queue-order"` by queue
//! order as the authors' ns-2 patch and the pHost authors' simulator do
//! ([`PriorityDropQueue::with_queue_order_ties`]).
//!
//! Data structure: a `Vec` in arrival order. pFabric buffers hold a few dozen packets (15 at
//! 22.5 KB, 24 at 36 KB), so each operation is one linear scan plus one `Vec::remove`:
//! O(n) with n ≤ ~25, a few dozen nanoseconds, and no allocation once the Vec has grown to
//! the buffer's size. A heap would be O(log n) but needs a second index for the per-flow
//! earliest-packet rule and random tie-breaks; at this size the scan is faster.

use super::{Admission, DropReason, QueueDiscipline};
use crate::packet::{PacketId, PacketPool};
use dcsim_engine::Rng;

#[derive(Copy, Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Entry {
    id: PacketId,
    priority: u64,
    flow: u32,
    size: u32,
}

/// pFabric's priority-scheduling, priority-dropping port queue.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct PriorityDropQueue {
    entries: Vec<Entry>,
    bytes: u64,
    limit_bytes: u64,
    extra_drops: Vec<PacketId>,
    /// Ties by queue order instead of at random: dequeue the earliest of the most urgent, drop
    /// the latest of the least urgent.
    queue_order_ties: bool,
    /// Dequeue the most urgent packet itself, not the earliest packet of its flow (HotNets'12
    /// §2.2 states no starvation rule; SIGCOMM'13 §4.1 adds it).
    #[serde(default)]
    most_urgent_first: bool,
}

/// Which of several equally ranked packets [`PriorityDropQueue::pick`] takes.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Tie {
    Random,
    Earliest,
    Latest,
}

impl PriorityDropQueue {
    /// A queue holding at most `limit_bytes`.
    pub fn new(limit_bytes: u64) -> Self {
        PriorityDropQueue {
            entries: Vec::with_capacity(32),
            bytes: 0,
            limit_bytes,
            extra_drops: Vec::new(),
            queue_order_ties: false,
            most_urgent_first: false,
        }
    }

    /// The same queue sending the most urgent packet itself (HotNets'12 §2.2: "the packet
    /// with the highest priority buffered at the port is dequeued"), without SIGCOMM'13 §4.1's
    /// starvation rule (the earliest packet of that packet's flow).
    pub fn with_most_urgent_first(mut self) -> Self {
        self.most_urgent_first = true;
        self
    }

    /// The same queue breaking ties by queue order, as the pFabric ns-2 patch's `drop-tail.cc`
    /// and the pHost authors' `PFabricQueue` do: the earliest of the most urgent packets is
    /// dequeued, the latest of the least urgent dropped.
    pub fn with_queue_order_ties(mut self) -> Self {
        self.queue_order_ties = true;
        self
    }

    /// The byte limit.
    pub fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    /// Index of a queued entry chosen by `better` (strictly better replaces; equal ties go to
    /// `tie`: uniformly at random by reservoir sampling, or the earliest or latest queued).
    ///
    /// The scan runs once per dequeue over a queue that is usually near full (about 20 packets
    /// on the pHost fabric), so it keeps the running best's priority in a local rather than
    /// reloading it (issue 16 lever 2). Random ties draw exactly as reservoir sampling over the
    /// scan: one draw for each entry equal to the running best when it is reached.
    #[inline(always)]
    fn pick(&self, rng: &mut Rng, tie: Tie, better: impl Fn(u64, u64) -> bool) -> Option<usize> {
        let (first, rest) = self.entries.split_first()?;
        let (mut best, mut best_priority, mut ties) = (0, first.priority, 1u64);
        for (i, e) in rest.iter().enumerate() {
            let p = e.priority;
            if better(p, best_priority) {
                (best, best_priority, ties) = (i + 1, p, 1);
            } else if p == best_priority {
                match tie {
                    Tie::Random => {
                        ties += 1;
                        if rng.below(ties) == 0 {
                            best = i + 1;
                        }
                    }
                    Tie::Latest => best = i + 1,
                    Tie::Earliest => {}
                }
            }
        }
        Some(best)
    }
}

impl QueueDiscipline for PriorityDropQueue {
    fn enqueue(&mut self, id: PacketId, pool: &PacketPool, rng: &mut Rng) -> Admission {
        let p = pool.get(id);
        let arriving = Entry { id, priority: p.priority, flow: p.flow, size: p.size_bytes };
        let mut first_victim: Option<PacketId> = None;
        let mut bytes = self.bytes + arriving.size as u64;
        let mut arriving_kept = true;
        while bytes > self.limit_bytes {
            // The least urgent queued packet (largest number), ties at random or the latest.
            let tie = if self.queue_order_ties { Tie::Latest } else { Tie::Random };
            let worst = self.pick(rng, tie, |p, best| p > best);
            let victim = match worst {
                Some(w) if arriving_kept && arriving.priority < self.entries[w].priority => {
                    let e = self.entries.remove(w);
                    bytes -= e.size as u64;
                    e.id
                }
                _ if arriving_kept => {
                    arriving_kept = false;
                    bytes -= arriving.size as u64;
                    arriving.id
                }
                Some(w) => {
                    // Unreachable in practice (dropping the arrival already fits the buffer).
                    let e = self.entries.remove(w);
                    bytes -= e.size as u64;
                    e.id
                }
                None => break,
            };
            if first_victim.is_none() {
                first_victim = Some(victim);
            } else {
                self.extra_drops.push(victim);
            }
        }
        if arriving_kept {
            self.entries.push(arriving);
        }
        self.bytes = bytes;
        match first_victim {
            None => Admission::Accepted,
            Some(victim) => Admission::Dropped { victim, reason: DropReason::LowestPriority },
        }
    }

    fn dequeue(&mut self, _pool: &PacketPool, rng: &mut Rng) -> Option<PacketId> {
        // The most urgent packet (smallest number), ties at random or the earliest...
        let tie = if self.queue_order_ties { Tie::Earliest } else { Tie::Random };
        let best = self.pick(rng, tie, |p, best| p < best)?;
        // ...then the earliest-arrived packet of its flow (the starvation rule), unless off.
        let first = if self.most_urgent_first {
            best
        } else {
            let flow = self.entries[best].flow;
            self.entries.iter().position(|e| e.flow == flow).expect("best is of this flow")
        };
        let e = self.entries.remove(first);
        self.bytes -= e.size as u64;
        Some(e.id)
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn len_packets(&self) -> usize {
        self.entries.len()
    }
    fn release_reserve(&mut self) {
        self.entries.shrink_to_fit();
        self.extra_drops.shrink_to_fit();
    }

    fn take_extra_drop(&mut self) -> Option<PacketId> {
        self.extra_drops.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, PacketKind};
    use dcsim_engine::SimTime;

    fn pkt(pool: &mut PacketPool, flow: u32, seq: u32, priority: u64, size: u32) -> PacketId {
        pool.alloc(Packet {
            priority,
            ..Packet::new(PacketKind::DATA, flow, flow, 0, 1, seq, size, SimTime::ZERO)
        })
    }

    /// Flow 1's packets carry remaining sizes 9000, 7500, 6000 (urgency grows as it sends);
    /// flow 2 has one packet at 7000. Enqueued in the order a1, b, a2, a3 into `q`.
    fn two_flows(q: &mut PriorityDropQueue, pool: &mut PacketPool, rng: &mut Rng) -> [PacketId; 4] {
        let a1 = pkt(pool, 1, 0, 9000, 1500);
        let b = pkt(pool, 2, 0, 7000, 1500);
        let a2 = pkt(pool, 1, 1, 7500, 1500);
        let a3 = pkt(pool, 1, 2, 6000, 1500);
        for id in [a1, b, a2, a3] {
            assert_eq!(q.enqueue(id, pool, rng), Admission::Accepted);
        }
        [a1, b, a2, a3]
    }

    #[test]
    fn sends_the_earliest_packet_of_the_most_urgent_flow() {
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(1);
        let mut q = PriorityDropQueue::new(100_000);
        let [a1, b, a2, a3] = two_flows(&mut q, &mut pool, &mut rng);
        // The most urgent packet is a3 (6000), so flow 1 goes first, oldest packet first:
        // a1 even though its own number (9000) is the largest in the queue.
        for want in [a1, a2, a3, b] {
            assert_eq!(q.dequeue(&pool, &mut rng), Some(want));
        }
        assert_eq!(q.dequeue(&pool, &mut rng), None);
        assert_eq!(q.len_bytes(), 0);
    }

    #[test]
    fn without_the_starvation_rule_the_most_urgent_packet_goes_first() {
        // The same four packets, in strict order of their numbers: a3 (6000), b (7000),
        // a2 (7500), a1 (9000).
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(1);
        let mut q = PriorityDropQueue::new(100_000).with_most_urgent_first();
        let [a1, b, a2, a3] = two_flows(&mut q, &mut pool, &mut rng);
        for want in [a3, b, a2, a1] {
            assert_eq!(q.dequeue(&pool, &mut rng), Some(want));
        }
        assert_eq!(q.dequeue(&pool, &mut rng), None);
    }

    #[test]
    fn drops_the_least_urgent_packet_when_full() {
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(1);
        let mut q = PriorityDropQueue::new(3000); // two full packets
        let x = pkt(&mut pool, 1, 0, 500, 1500);
        let y = pkt(&mut pool, 2, 0, 9000, 1500);
        q.enqueue(x, &pool, &mut rng);
        q.enqueue(y, &pool, &mut rng);
        // A more urgent arrival pushes out the least urgent queued packet.
        let z = pkt(&mut pool, 3, 0, 100, 1500);
        assert_eq!(
            q.enqueue(z, &pool, &mut rng),
            Admission::Dropped { victim: y, reason: DropReason::LowestPriority }
        );
        // An arrival at least as unimportant as everything queued is itself dropped.
        let w = pkt(&mut pool, 4, 0, 500, 1500);
        assert_eq!(
            q.enqueue(w, &pool, &mut rng),
            Admission::Dropped { victim: w, reason: DropReason::LowestPriority }
        );
        assert_eq!(q.len_packets(), 2);
        assert_eq!(q.len_bytes(), 3000);
        // ACKs (priority 0) displace data.
        let ack = pkt(&mut pool, 5, 0, 0, 40);
        assert_eq!(
            q.enqueue(ack, &pool, &mut rng),
            Admission::Dropped { victim: x, reason: DropReason::LowestPriority }
        );
        assert_eq!(q.dequeue(&pool, &mut rng), Some(ack));
    }

    #[test]
    fn a_long_arrival_can_evict_several_short_packets() {
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(1);
        let mut q = PriorityDropQueue::new(1600);
        let s1 = pkt(&mut pool, 1, 0, 800, 600);
        let s2 = pkt(&mut pool, 2, 0, 900, 600);
        q.enqueue(s1, &pool, &mut rng);
        q.enqueue(s2, &pool, &mut rng);
        let big = pkt(&mut pool, 3, 0, 10, 1500);
        assert_eq!(
            q.enqueue(big, &pool, &mut rng),
            Admission::Dropped { victim: s2, reason: DropReason::LowestPriority }
        );
        assert_eq!(q.take_extra_drop(), Some(s1));
        assert_eq!(q.take_extra_drop(), None);
        assert_eq!((q.len_packets(), q.len_bytes()), (1, 1500));
    }

    #[test]
    fn ties_are_broken_at_random_and_reproducibly() {
        // Four flows with the same urgency: which goes first depends on the seeded stream
        // only; over many trials each is first about a quarter of the time.
        let mut counts = [0u32; 4];
        let mut rng = Rng::new(42);
        for _ in 0..4000 {
            let mut pool = PacketPool::new();
            let mut q = PriorityDropQueue::new(100_000);
            let ids: Vec<_> = (0..4).map(|f| pkt(&mut pool, f, 0, 777, 1500)).collect();
            for &id in &ids {
                q.enqueue(id, &pool, &mut rng);
            }
            let first = q.dequeue(&pool, &mut rng).unwrap();
            counts[ids.iter().position(|&i| i == first).unwrap()] += 1;
        }
        assert!(counts.iter().all(|&c| (850..1150).contains(&c)), "{counts:?}");
        // Same seed, same choices.
        let run = |seed| {
            let mut rng = Rng::new(seed);
            let mut pool = PacketPool::new();
            let mut q = PriorityDropQueue::new(100_000);
            for f in 0..8 {
                let id = pkt(&mut pool, f, 0, 5, 1500);
                q.enqueue(id, &pool, &mut rng);
            }
            std::iter::from_fn(|| q.dequeue(&pool, &mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(run(9), run(9));
        // Drop ties are random too: with three equally unimportant packets queued, the victim
        // varies across seeds.
        let victims: std::collections::HashSet<u32> = (0..40u64)
            .map(|seed| {
                let mut rng = Rng::new(seed);
                let mut pool = PacketPool::new();
                let mut q = PriorityDropQueue::new(4500);
                for f in 0..3 {
                    let id = pkt(&mut pool, f, 0, 9000, 1500);
                    q.enqueue(id, &pool, &mut rng);
                }
                let urgent = pkt(&mut pool, 9, 0, 1, 1500);
                match q.enqueue(urgent, &pool, &mut rng) {
                    Admission::Dropped { victim, .. } => victim,
                    _ => panic!("must drop"),
                }
            })
            .collect();
        assert_eq!(victims.len(), 3);
    }

    /// Issue 17 item 3.4: `pfabric.ties = "queue-order"` (the pHost authors' `PFabricQueue`):
    /// the earliest of the most urgent packets leaves first, the latest of the least urgent
    /// is dropped, whatever the random stream.
    #[test]
    fn queue_order_ties_send_the_earliest_and_drop_the_latest() {
        for seed in 0..20u64 {
            let mut rng = Rng::new(seed);
            let mut pool = PacketPool::new();
            let mut q = PriorityDropQueue::new(4580).with_queue_order_ties();
            // Three flows' packets, all at priority 9000, leave room for two ACKs only; a
            // more urgent full packet evicts the last of them (flow 2's).
            let ids: Vec<_> = (0..3).map(|f| pkt(&mut pool, f, 0, 9000, 1500)).collect();
            for &id in &ids {
                assert_eq!(q.enqueue(id, &pool, &mut rng), Admission::Accepted);
            }
            let urgent = pkt(&mut pool, 9, 0, 1, 1500);
            assert_eq!(
                q.enqueue(urgent, &pool, &mut rng),
                Admission::Dropped { victim: ids[2], reason: DropReason::LowestPriority }
            );
            // Two ACKs (priority 0) of flows 1 and 0, in that order: flow 1's goes first, as
            // the earliest of the most urgent, and with it flow 1's data (queued before it).
            let ack1 = pkt(&mut pool, 1, 0, 0, 40);
            let ack0 = pkt(&mut pool, 0, 0, 0, 40);
            assert_eq!(q.enqueue(ack1, &pool, &mut rng), Admission::Accepted);
            assert_eq!(q.enqueue(ack0, &pool, &mut rng), Admission::Accepted);
            let order: Vec<_> = std::iter::from_fn(|| q.dequeue(&pool, &mut rng)).collect();
            assert_eq!(order, [ids[1], ack1, ids[0], ack0, urgent]);
        }
    }
}
