//! Strict priority over K FIFO queues sharing one buffer, with a reservation per queue
//! (pFabric SIGCOMM'13 §6.2: "The queues at a port share a buffer pool of size 225KB (150
//! packets). We reserve 15KB (10 packets) of buffer per queue and the rest is shared
//! dynamically on a first-come-first-serve basis"; pFabric SIGCOMM'13 §6.2).
//!
//! A packet of class k (0 = highest priority; classes ≥ K go to queue K−1) is admitted if
//! queue k stays within its reservation, or if the bytes it adds beyond the reservation fit
//! in what is left of the shared part (`limit − K·reserve`); otherwise it is dropped (tail
//! drop). Dequeue serves the highest-priority non-empty queue, FIFO within a queue. The
//! reference leaves open whether the paper also dropped across classes by priority; dcsim
//! does not (plain tail drop per queue), which is what a commodity switch does.

use super::{Admission, DropReason, QueueDiscipline};
use crate::packet::{PacketId, PacketPool};
use dcsim_engine::Rng;
use std::collections::VecDeque;

/// K strict-priority FIFOs over a shared buffer with per-queue reservations.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct StrictPriorityQueue {
    queues: Vec<VecDeque<(PacketId, u32)>>,
    bytes: Vec<u64>,
    total: u64,
    shared_used: u64,
    limit_bytes: u64,
    reserve_bytes: u64,
}

impl StrictPriorityQueue {
    /// `queues` queues sharing `limit_bytes`, each with `reserve_bytes` of its own.
    pub fn new(queues: usize, limit_bytes: u64, reserve_bytes: u64) -> Self {
        assert!(queues >= 1);
        StrictPriorityQueue {
            queues: (0..queues).map(|_| VecDeque::with_capacity(16)).collect(),
            bytes: vec![0; queues],
            total: 0,
            shared_used: 0,
            limit_bytes,
            reserve_bytes,
        }
    }

    /// The whole buffer.
    pub fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    /// Bytes waiting in queue `k`.
    pub fn queue_bytes(&self, k: usize) -> u64 {
        self.bytes[k]
    }

    /// Bytes waiting in the queue a packet of class `class` joins (classes past the last
    /// queue share it).
    pub fn class_bytes(&self, class: usize) -> u64 {
        self.bytes[class.min(self.bytes.len() - 1)]
    }

    fn shared_capacity(&self) -> u64 {
        self.limit_bytes.saturating_sub(self.queues.len() as u64 * self.reserve_bytes)
    }

    fn excess(&self, bytes: u64) -> u64 {
        bytes.saturating_sub(self.reserve_bytes)
    }
}

impl QueueDiscipline for StrictPriorityQueue {
    fn enqueue(&mut self, id: PacketId, pool: &PacketPool, _rng: &mut Rng) -> Admission {
        let p = pool.get(id);
        let k = (p.class as usize).min(self.queues.len() - 1);
        let size = p.size_bytes as u64;
        let grow = self.excess(self.bytes[k] + size) - self.excess(self.bytes[k]);
        // The buffer bounds the port whatever the reservations (the spec keeps them within it).
        if self.shared_used + grow > self.shared_capacity() || self.total + size > self.limit_bytes
        {
            return Admission::Dropped { victim: id, reason: DropReason::LimitExceeded };
        }
        self.shared_used += grow;
        self.bytes[k] += size;
        self.total += size;
        self.queues[k].push_back((id, p.size_bytes));
        Admission::Accepted
    }

    fn dequeue(&mut self, _pool: &PacketPool, _rng: &mut Rng) -> Option<PacketId> {
        let k = self.queues.iter().position(|q| !q.is_empty())?;
        let (id, size) = self.queues[k].pop_front().expect("non-empty");
        let size = size as u64;
        self.shared_used -= self.excess(self.bytes[k]) - self.excess(self.bytes[k] - size);
        self.bytes[k] -= size;
        self.total -= size;
        Some(id)
    }

    fn len_bytes(&self) -> u64 {
        self.total
    }

    fn len_packets(&self) -> usize {
        self.queues.iter().map(VecDeque::len).sum()
    }
    fn release_reserve(&mut self) {
        self.queues.iter_mut().for_each(VecDeque::shrink_to_fit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, PacketKind};
    use dcsim_engine::SimTime;

    fn pkt(pool: &mut PacketPool, class: u8) -> PacketId {
        pool.alloc(Packet {
            class,
            ..Packet::new(PacketKind::DATA, 0, 0, 0, 1, 0, 1500, SimTime::ZERO)
        })
    }

    #[test]
    fn serves_the_highest_class_first_fifo_within() {
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(0);
        let mut q = StrictPriorityQueue::new(3, 100_000, 0);
        let low1 = pkt(&mut pool, 2);
        let high = pkt(&mut pool, 0);
        let low2 = pkt(&mut pool, 2);
        let mid = pkt(&mut pool, 1);
        let beyond = pkt(&mut pool, 7); // classes past the last queue share it
        for id in [low1, high, low2, mid, beyond] {
            assert_eq!(q.enqueue(id, &pool, &mut rng), Admission::Accepted);
        }
        let order: Vec<_> = std::iter::from_fn(|| q.dequeue(&pool, &mut rng)).collect();
        assert_eq!(order, vec![high, mid, low1, low2, beyond]);
        assert_eq!(q.len_bytes(), 0);
    }

    #[test]
    fn the_buffer_bounds_the_port_even_when_reservations_exceed_it() {
        // 4 queues × 1e9 B reserved on a 6000 B buffer: four 1500 B packets fill it, whatever
        // their classes, and the fifth is dropped.
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(0);
        let mut q = StrictPriorityQueue::new(4, 6000, 1_000_000_000);
        for class in [0, 1, 2, 3] {
            assert_eq!(q.enqueue(pkt(&mut pool, class), &pool, &mut rng), Admission::Accepted);
        }
        let extra = pkt(&mut pool, 0);
        assert!(matches!(q.enqueue(extra, &pool, &mut rng), Admission::Dropped { .. }));
        assert_eq!(q.len_bytes(), 6000);
    }

    #[test]
    fn reservations_and_the_shared_pool() {
        // 2 queues, 9000 B total, 3000 B reserved each: 3000 B shared.
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(0);
        let mut q = StrictPriorityQueue::new(2, 9000, 3000);
        // Queue 1 fills its reservation (2 packets) and the whole shared part (2 more).
        for _ in 0..4 {
            let id = pkt(&mut pool, 1);
            assert_eq!(q.enqueue(id, &pool, &mut rng), Admission::Accepted);
        }
        let extra = pkt(&mut pool, 1);
        assert!(matches!(q.enqueue(extra, &pool, &mut rng), Admission::Dropped { .. }));
        // Queue 0 still has its own 3000 B...
        for _ in 0..2 {
            let id = pkt(&mut pool, 0);
            assert_eq!(q.enqueue(id, &pool, &mut rng), Admission::Accepted);
        }
        // ...but nothing more: the shared part is used up by queue 1.
        let over = pkt(&mut pool, 0);
        assert!(matches!(q.enqueue(over, &pool, &mut rng), Admission::Dropped { .. }));
        assert_eq!((q.queue_bytes(0), q.queue_bytes(1)), (3000, 6000));
        // Serving queue 0 frees its reservation only; serving queue 1 frees shared space,
        // which queue 0 can then use.
        q.dequeue(&pool, &mut rng);
        q.dequeue(&pool, &mut rng);
        q.dequeue(&pool, &mut rng); // one packet of queue 1: shared part now 1500 B free
        let a = pkt(&mut pool, 0);
        let b = pkt(&mut pool, 0);
        let c = pkt(&mut pool, 0);
        assert_eq!(q.enqueue(a, &pool, &mut rng), Admission::Accepted);
        assert_eq!(q.enqueue(b, &pool, &mut rng), Admission::Accepted);
        assert_eq!(q.enqueue(c, &pool, &mut rng), Admission::Accepted); // uses the freed shared space
        let d = pkt(&mut pool, 0);
        assert!(matches!(q.enqueue(d, &pool, &mut rng), Admission::Dropped { .. }));
    }
}
