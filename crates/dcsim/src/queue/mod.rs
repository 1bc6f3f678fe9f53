//! Switch and NIC egress ports, and the queue disciplines that plug into them.
//!
//! A [`Port`] is a shell: it owns the link rate, the serialization state, the ECN marker and
//! the statistics. A discipline ([`QueueDiscipline`]) decides only three things: whether an
//! arriving packet is admitted (and which packet is dropped if not), which packet leaves
//! next, and how much it holds. Adding a discipline (strict priority, pFabric's priority
//! dropping, shared buffers) means adding a variant to [`AnyQueue`]; the port, the fabric and
//! the engine do not change.

mod droptail;

pub use droptail::DropTail;

use crate::packet::{ecn, PacketId, PacketPool};
use crate::units::BitRate;
use dcsim_engine::{Rng, SimTime};
use serde::Serialize;

/// Why a packet was dropped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DropReason {
    /// The queue's byte limit would be exceeded.
    LimitExceeded,
}

/// Why a packet was ECN-marked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MarkReason {
    /// The instantaneous port occupancy was at or above the threshold K.
    InstantaneousThreshold,
}

/// What a discipline did with an arriving packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The packet is queued.
    Accepted,
    /// `victim` (the arriving packet or one already queued) was removed and must be freed.
    /// When the victim is a queued packet, the arriving packet has been queued instead.
    Dropped {
        /// The packet dropped.
        victim: PacketId,
        /// Why.
        reason: DropReason,
    },
}

/// The contract between a port and its queue discipline.
pub trait QueueDiscipline {
    /// Offers packet `id`; the discipline queues it or drops something.
    fn enqueue(&mut self, id: PacketId, pool: &PacketPool, rng: &mut Rng) -> Admission;
    /// Removes and returns the next packet to transmit.
    fn dequeue(&mut self, pool: &PacketPool) -> Option<PacketId>;
    /// Bytes held (not counting a packet being serialized).
    fn len_bytes(&self) -> u64;
    /// Packets held.
    fn len_packets(&self) -> usize;
}

/// Every queue discipline, dispatched by `match` (no virtual call on the packet path).
#[derive(Debug)]
pub enum AnyQueue {
    /// First in, first out with a byte limit.
    DropTail(DropTail),
}

impl QueueDiscipline for AnyQueue {
    #[inline]
    fn enqueue(&mut self, id: PacketId, pool: &PacketPool, rng: &mut Rng) -> Admission {
        match self {
            AnyQueue::DropTail(q) => q.enqueue(id, pool, rng),
        }
    }
    #[inline]
    fn dequeue(&mut self, pool: &PacketPool) -> Option<PacketId> {
        match self {
            AnyQueue::DropTail(q) => q.dequeue(pool),
        }
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        match self {
            AnyQueue::DropTail(q) => q.len_bytes(),
        }
    }
    #[inline]
    fn len_packets(&self) -> usize {
        match self {
            AnyQueue::DropTail(q) => q.len_packets(),
        }
    }
}

/// Where a port sits on a host-to-host path, for per-hop drop reports (pHost Fig. 5f).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HopKind {
    /// A host's NIC (first hop).
    SourceNic,
    /// A ToR/edge switch port towards the fabric.
    TorUplink,
    /// Any port inside the fabric (aggregation, spine, core).
    Core,
    /// A ToR/edge switch port towards a host (last hop).
    TorDownlink,
}

impl HopKind {
    /// All kinds, in path order.
    pub const ALL: [HopKind; 4] =
        [HopKind::SourceNic, HopKind::TorUplink, HopKind::Core, HopKind::TorDownlink];
    /// A stable name for reports.
    pub fn name(self) -> &'static str {
        match self {
            HopKind::SourceNic => "source_nic",
            HopKind::TorUplink => "tor_uplink",
            HopKind::Core => "core",
            HopKind::TorDownlink => "tor_downlink",
        }
    }
}

/// ECN marking at a port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EcnMarking {
    /// Never mark.
    Off,
    /// Mark an ECT packet on arrival if the bytes already queued are at least `threshold`
    /// (DCTCP's instantaneous-queue rule, reference §7.1).
    Instantaneous {
        /// K, in bytes.
        threshold_bytes: u64,
    },
}

/// Counters kept by every port.
#[derive(Copy, Clone, Debug, Default, Serialize)]
pub struct PortStats {
    /// Packets accepted (including ones sent straight onto an idle link).
    pub enqueued_packets: u64,
    /// Bytes accepted.
    pub enqueued_bytes: u64,
    /// Packets that started transmission.
    pub dequeued_packets: u64,
    /// Bytes that started transmission.
    pub dequeued_bytes: u64,
    /// Packets dropped.
    pub dropped_packets: u64,
    /// Bytes dropped.
    pub dropped_bytes: u64,
    /// Packets ECN-marked.
    pub marked_packets: u64,
    /// Bytes ECN-marked.
    pub marked_bytes: u64,
}

/// An egress port: a queue discipline in front of a link of fixed rate and delay.
#[derive(Debug)]
pub struct Port {
    /// The node this port belongs to.
    pub owner: u32,
    /// The node at the other end of the link.
    pub peer: u32,
    /// True when `peer` is a host (the last hop serializes fully even under cut-through).
    pub peer_is_host: bool,
    /// Link rate.
    pub rate: BitRate,
    /// Propagation delay of the link (including any per-host delay).
    pub delay: SimTime,
    /// Position on a path, for per-hop reports.
    pub hop: HopKind,
    /// The queue discipline.
    pub queue: AnyQueue,
    /// ECN marking rule.
    pub marking: EcnMarking,
    /// When the packet now on the wire finishes serializing.
    pub busy_until: SimTime,
    /// True when a transmit-complete event is pending for this port.
    pub wakeup_pending: bool,
    /// Counters.
    pub stats: PortStats,
}

/// The outcome of offering a packet to a port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Offer {
    /// The link was idle: transmit this packet now.
    TransmitNow,
    /// Queued behind the packet on the wire; a wake-up must be pending at `busy_until`.
    Queued,
    /// A packet (maybe the arriving one) was dropped; the caller frees it.
    Dropped(PacketId),
}

impl Port {
    /// A port with an empty queue.
    pub fn new(owner: u32, peer: u32, peer_is_host: bool, rate: BitRate, delay: SimTime, hop: HopKind, queue: AnyQueue, marking: EcnMarking) -> Self {
        Port {
            owner,
            peer,
            peer_is_host,
            rate,
            delay,
            hop,
            queue,
            marking,
            busy_until: SimTime::ZERO,
            wakeup_pending: false,
            stats: PortStats::default(),
        }
    }

    /// True if nothing is being serialized at `now` and nothing is queued.
    #[inline]
    pub fn is_idle(&self, now: SimTime) -> bool {
        self.busy_until <= now && self.queue.len_packets() == 0
    }

    /// Offers packet `id` at time `now`: marks it if the marking rule says so, then either
    /// lets it go straight onto an idle link or hands it to the discipline.
    #[inline]
    pub fn offer(&mut self, id: PacketId, now: SimTime, pool: &mut PacketPool, rng: &mut Rng) -> Offer {
        let size = pool.get(id).size_bytes as u64;
        if let EcnMarking::Instantaneous { threshold_bytes } = self.marking {
            let p = pool.get_mut(id);
            if p.ecn & ecn::ECT != 0 && self.queue.len_bytes() >= threshold_bytes {
                p.ecn |= ecn::CE;
                self.stats.marked_packets += 1;
                self.stats.marked_bytes += size;
            }
        }
        if self.is_idle(now) {
            self.stats.enqueued_packets += 1;
            self.stats.enqueued_bytes += size;
            return Offer::TransmitNow;
        }
        match self.queue.enqueue(id, pool, rng) {
            Admission::Accepted => {
                self.stats.enqueued_packets += 1;
                self.stats.enqueued_bytes += size;
                Offer::Queued
            }
            Admission::Dropped { victim, reason: _ } => {
                let vsize = pool.get(victim).size_bytes as u64;
                if victim != id {
                    // The arriving packet took the victim's place.
                    self.stats.enqueued_packets += 1;
                    self.stats.enqueued_bytes += size;
                }
                self.stats.dropped_packets += 1;
                self.stats.dropped_bytes += vsize;
                Offer::Dropped(victim)
            }
        }
    }

    /// Starts serializing packet `id` at `now`; returns when its first `lead_bytes` have left
    /// the port (the whole packet for store-and-forward) — that plus the delay is when the
    /// next node sees it.
    #[inline]
    pub fn start_transmission(&mut self, id: PacketId, now: SimTime, pool: &PacketPool, cut_through: bool) -> SimTime {
        let size = pool.get(id).size_bytes as u64;
        self.stats.dequeued_packets += 1;
        self.stats.dequeued_bytes += size;
        let ser = self.rate.tx_time(size);
        self.busy_until = now + ser;
        let lead = if cut_through && !self.peer_is_host {
            // Cut-through (YAPS): the next switch starts on the packet once its header is in.
            self.rate.tx_time(crate::units::HEADER_BYTES as u64)
        } else {
            ser
        };
        now + lead + self.delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, PacketKind};

    pub(crate) fn pkt(pool: &mut PacketPool, size: u32, ecn_bits: u8) -> PacketId {
        pool.alloc(Packet {
            flow: 0,
            slot: 0,
            src: 0,
            dst: 1,
            seq: 0,
            size_bytes: size,
            priority: 0,
            timestamp: SimTime::ZERO,
            kind: PacketKind::Data,
            ecn: ecn_bits,
            class: 0,
            retransmit: false,
            hops: 0,
        })
    }

    fn port(limit: u64, marking: EcnMarking) -> Port {
        Port::new(0, 1, false, BitRate::from_gbps(10.0), SimTime::from_ns(200), HopKind::Core, AnyQueue::DropTail(DropTail::new(limit)), marking)
    }

    #[test]
    fn idle_port_transmits_at_once_then_queues() {
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(1);
        let mut p = port(3000, EcnMarking::Off);
        let a = pkt(&mut pool, 1500, 0);
        assert_eq!(p.offer(a, SimTime::ZERO, &mut pool, &mut rng), Offer::TransmitNow);
        let arrive = p.start_transmission(a, SimTime::ZERO, &pool, false);
        assert_eq!(arrive, SimTime::from_ns(1400));
        assert_eq!(p.busy_until, SimTime::from_ns(1200));
        let b = pkt(&mut pool, 1500, 0);
        assert_eq!(p.offer(b, SimTime::from_ns(100), &mut pool, &mut rng), Offer::Queued);
        // Cut-through towards a switch: the header (40 B = 32 ns) leads.
        let c = pkt(&mut pool, 1500, 0);
        let mut q = port(3000, EcnMarking::Off);
        assert_eq!(q.start_transmission(c, SimTime::ZERO, &pool, true), SimTime::from_ns(232));
    }

    #[test]
    fn ecn_marks_exactly_at_threshold() {
        // K = 2 packets: the third packet queued behind two marks, the second does not.
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(1);
        let mut p = port(100_000, EcnMarking::Instantaneous { threshold_bytes: 3000 });
        let first = pkt(&mut pool, 1500, ecn::ECT);
        assert_eq!(p.offer(first, SimTime::ZERO, &mut pool, &mut rng), Offer::TransmitNow);
        p.start_transmission(first, SimTime::ZERO, &pool, false);
        let mut marked = Vec::new();
        for _ in 0..4 {
            let id = pkt(&mut pool, 1500, ecn::ECT);
            p.offer(id, SimTime::from_ns(10), &mut pool, &mut rng);
            marked.push(pool.get(id).ecn & ecn::CE != 0);
        }
        // Queue before each arrival: 0, 1500, 3000, 4500 bytes (the packet on the wire is not queued).
        assert_eq!(marked, vec![false, false, true, true]);
        assert_eq!(p.stats.marked_packets, 2);
        // A non-ECT packet is never marked.
        let id = pkt(&mut pool, 1500, 0);
        p.offer(id, SimTime::from_ns(10), &mut pool, &mut rng);
        assert_eq!(pool.get(id).ecn & ecn::CE, 0);
    }
}
