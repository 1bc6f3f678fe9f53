//! Fifo: first in, first out with a byte limit, as an event-driven discipline.
//!
//! The reference implementation of [`QueueDiscipline`]: the port asks it for the next packet
//! whenever the link frees. Production FIFO ports use the equivalent, faster
//! [`super::DropTail`] timeline (`engine.fifo_timeline = true`); this one is the cross-check
//! and the building block of multi-queue disciplines.

use super::{Admission, DropReason, QueueDiscipline};
use crate::packet::{PacketId, PacketPool};
use dcsim_engine::Rng;
use std::collections::VecDeque;

/// FIFO of packet ids with a byte limit; the arriving packet is dropped when over the limit.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Fifo {
    fifo: VecDeque<PacketId>,
    bytes: u64,
    limit_bytes: u64,
}

impl Fifo {
    /// A queue holding at most `limit_bytes`.
    pub fn new(limit_bytes: u64) -> Self {
        Fifo { fifo: VecDeque::with_capacity(32), bytes: 0, limit_bytes }
    }

    /// The byte limit.
    pub fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }
}

impl QueueDiscipline for Fifo {
    #[inline]
    fn enqueue(&mut self, id: PacketId, pool: &PacketPool, _rng: &mut Rng) -> Admission {
        let size = pool.get(id).size_bytes as u64;
        if self.bytes + size > self.limit_bytes {
            return Admission::Dropped { victim: id, reason: DropReason::LimitExceeded };
        }
        self.bytes += size;
        self.fifo.push_back(id);
        Admission::Accepted
    }
    #[inline]
    fn dequeue(&mut self, pool: &PacketPool, _rng: &mut Rng) -> Option<PacketId> {
        let id = self.fifo.pop_front()?;
        self.bytes -= pool.get(id).size_bytes as u64;
        Some(id)
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    #[inline]
    fn len_packets(&self) -> usize {
        self.fifo.len()
    }
    fn release_reserve(&mut self) {
        self.fifo.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::pkt;

    #[test]
    fn drops_exactly_at_the_limit() {
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(0);
        let mut q = Fifo::new(4500);
        let ids: Vec<_> = (0..4).map(|_| pkt(&mut pool, 1500, 0)).collect();
        for &id in &ids[..3] {
            assert_eq!(q.enqueue(id, &pool, &mut rng), Admission::Accepted);
        }
        assert_eq!(
            q.enqueue(ids[3], &pool, &mut rng),
            Admission::Dropped { victim: ids[3], reason: DropReason::LimitExceeded }
        );
        let small = pkt(&mut pool, 40, 0);
        assert!(matches!(q.enqueue(small, &pool, &mut rng), Admission::Dropped { .. }));
        assert_eq!(q.dequeue(&pool, &mut rng), Some(ids[0]));
        assert_eq!(q.enqueue(small, &pool, &mut rng), Admission::Accepted);
        assert_eq!(q.dequeue(&pool, &mut rng), Some(ids[1]));
        assert_eq!(q.dequeue(&pool, &mut rng), Some(ids[2]));
        assert_eq!(q.dequeue(&pool, &mut rng), Some(small));
        assert_eq!(q.dequeue(&pool, &mut rng), None);
        assert_eq!(q.len_bytes(), 0);
    }
}
