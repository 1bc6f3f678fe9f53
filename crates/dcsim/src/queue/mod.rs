//! Switch and NIC egress ports, and the queue disciplines that plug into them.
//!
//! A [`Port`] is a shell: it owns the link rate, the serialization state, the ECN marker and
//! the statistics. A discipline ([`QueueDiscipline`]) decides only three things: whether an
//! arriving packet is admitted (and which packet is dropped if not), which packet leaves
//! next, and how much it holds. Adding a discipline (strict priority, pFabric's priority
//! dropping, shared buffers) means adding a variant to [`AnyQueue`]; the port, the fabric and
//! the engine do not change.
//!
//! FIFO ports take a fast path ([`PortQueue::Timeline`]): a FIFO's departure order is fixed at
//! enqueue, so the port commits each packet's transmission on arrival and needs no
//! transmit-complete events. Every other discipline is event-driven
//! ([`PortQueue::Scheduled`]): the port asks it for the next packet whenever the link frees.

mod droptail;
mod fifo;
mod pfabric;
mod prio;

pub use droptail::DropTail;
pub use fifo::Fifo;
pub use pfabric::PriorityDropQueue;
pub use prio::StrictPriorityQueue;

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
    /// Evicted as the least urgent packet of a full priority queue.
    LowestPriority,
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
    /// Removes and returns the next packet to transmit (`rng` for random tie-breaks).
    fn dequeue(&mut self, pool: &PacketPool, rng: &mut Rng) -> Option<PacketId>;
    /// Bytes held (not counting a packet being serialized).
    fn len_bytes(&self) -> u64;
    /// Packets held.
    fn len_packets(&self) -> usize;
    /// Further packets evicted by the last `enqueue`, beyond the one it reported (a long
    /// arrival may push out several short packets). The port drains this after each enqueue.
    fn take_extra_drop(&mut self) -> Option<PacketId> {
        None
    }
    /// Frees the room reserved for waiting packets (the queue stays usable and grows again
    /// when packets arrive): a partition's copy of a port it never drives needs none.
    fn release_reserve(&mut self);
}

/// Every event-driven queue discipline, dispatched by `match` (no virtual call on the packet
/// path).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub enum AnyQueue {
    /// First in, first out with a byte limit.
    Fifo(Fifo),
    /// pFabric: priority scheduling and priority dropping.
    PriorityDrop(PriorityDropQueue),
    /// K strict-priority FIFOs over a shared buffer.
    StrictPriority(StrictPriorityQueue),
}

/// Forwards a call to whichever discipline `self` holds.
macro_rules! each_queue {
    ($self:expr, $q:ident => $body:expr) => {
        match $self {
            AnyQueue::Fifo($q) => $body,
            AnyQueue::PriorityDrop($q) => $body,
            AnyQueue::StrictPriority($q) => $body,
        }
    };
}

impl QueueDiscipline for AnyQueue {
    #[inline]
    fn enqueue(&mut self, id: PacketId, pool: &PacketPool, rng: &mut Rng) -> Admission {
        each_queue!(self, q => q.enqueue(id, pool, rng))
    }
    #[inline]
    fn dequeue(&mut self, pool: &PacketPool, rng: &mut Rng) -> Option<PacketId> {
        each_queue!(self, q => q.dequeue(pool, rng))
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        each_queue!(self, q => q.len_bytes())
    }
    #[inline]
    fn len_packets(&self) -> usize {
        each_queue!(self, q => q.len_packets())
    }
    #[inline]
    fn take_extra_drop(&mut self) -> Option<PacketId> {
        each_queue!(self, q => q.take_extra_drop())
    }
    fn release_reserve(&mut self) {
        each_queue!(self, q => q.release_reserve())
    }
}

impl AnyQueue {
    /// The byte limit.
    pub fn limit_bytes(&self) -> u64 {
        each_queue!(self, q => q.limit_bytes())
    }
}

/// How a port holds its waiting packets.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub enum PortQueue {
    /// FIFO fast path: departures computed at enqueue.
    Timeline(DropTail),
    /// An event-driven discipline.
    Scheduled(AnyQueue),
}

impl PortQueue {
    /// Packets whose ids the queue holds (the timeline holds none: its packets are already
    /// scheduled on the wire).
    pub fn held_packets(&self) -> usize {
        match self {
            PortQueue::Timeline(_) => 0,
            PortQueue::Scheduled(q) => q.len_packets(),
        }
    }

    /// Frees the room reserved for waiting packets ([`QueueDiscipline::release_reserve`]).
    pub fn release_reserve(&mut self) {
        match self {
            PortQueue::Timeline(q) => q.release_reserve(),
            PortQueue::Scheduled(q) => q.release_reserve(),
        }
    }
}

/// Where a port sits on a host-to-host path, for per-hop drop reports (pHost Fig. 5f).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
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
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum EcnMarking {
    /// Never mark.
    Off,
    /// Mark an ECT packet on arrival if the bytes already queued are at least `threshold`
    /// (DCTCP's instantaneous-queue rule, DCTCP SIGCOMM'10 §3.1).
    Instantaneous {
        /// K, in bytes.
        threshold_bytes: u64,
    },
    /// As `Instantaneous`, but counting only the bytes of the arriving packet's own queue
    /// (strict-priority ports; PIAS §4.1.2 "per-queue" marking). On single-queue ports this
    /// is the same as `Instantaneous`.
    PerQueue {
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
///
/// Layout (issue 16 lever 2): a packet's pass through a port touches the fields that time its
/// transmission, the count of what the port accepted and the head of its queue. The port is
/// aligned to a cache line and laid out in that order (`repr(C)`): the first line holds every
/// field a packet reads or writes on its way through a FIFO port, the queue's head fills the
/// second, and what only a drop, a mark or an event-driven dequeue touches comes after it. A
/// FIFO (timeline) port counts a packet as sent when it accepts it (its departure is fixed
/// then), so it keeps no separate count of packets sent: [`Port::stats`] reports the accepted
/// ones. Before, the counters had a line of their own, a third line per packet
/// (docs/performance.md, "A port in two cache lines").
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[repr(C, align(64))]
pub struct Port {
    /// When the last committed packet finishes serializing.
    pub busy_until: SimTime,
    /// Serialization time per byte, ps, when exact (0: divide instead).
    ps_per_byte: u64,
    /// From the start of a transmission (cut-through) or its end (store-and-forward) to the
    /// packet's arrival at the peer: the header's serialization plus the delay, or the delay.
    lead: SimTime,
    /// ECN marking rule.
    pub marking: EcnMarking,
    /// The node at the other end of the link.
    pub peer: u32,
    /// True when a transmit-complete event is pending for this port.
    pub wakeup_pending: bool,
    /// True when `peer` belongs to another partition of a partitioned run: what leaves by
    /// this port is handed over at the next window's barrier ([`crate::partition`]).
    pub remote: bool,
    /// True when the peer starts forwarding once the header is in (cut-through towards a
    /// switch; the last hop to a host always serializes fully).
    pub cut_through: bool,
    /// True when `peer` is a host.
    pub peer_is_host: bool,
    /// Packets accepted (including ones sent straight onto an idle link).
    enqueued_packets: u64,
    /// Bytes accepted.
    enqueued_bytes: u64,
    /// The waiting packets.
    pub queue: PortQueue,
    /// Packets and bytes that started transmission (event-driven disciplines only: a
    /// timeline's are its accepted ones).
    dequeued_packets: u64,
    dequeued_bytes: u64,
    /// Packets and bytes dropped.
    dropped_packets: u64,
    dropped_bytes: u64,
    /// Packets and bytes ECN-marked.
    marked_packets: u64,
    marked_bytes: u64,
    /// The node this port belongs to.
    pub owner: u32,
    /// Position on a path, for per-hop reports.
    pub hop: HopKind,
    /// Link rate.
    pub rate: BitRate,
    /// Propagation delay of the link (including any per-host delay).
    pub delay: SimTime,
}

/// The outcome of offering a packet to a port.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Offer {
    /// The packet's transmission is committed; it reaches the peer at `arrive_at`.
    Depart {
        /// Arrival time at the peer.
        arrive_at: SimTime,
    },
    /// Queued in an event-driven discipline; a wake-up must be pending at `busy_until`.
    Queued,
    /// A packet (maybe the arriving one) was dropped; the caller frees it.
    Dropped(PacketId),
}

impl Port {
    /// A port with an empty queue.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        owner: u32,
        peer: u32,
        peer_is_host: bool,
        cut_through: bool,
        rate: BitRate,
        delay: SimTime,
        hop: HopKind,
        queue: PortQueue,
        marking: EcnMarking,
    ) -> Self {
        let cut_through = cut_through && !peer_is_host;
        let mut port = Port {
            owner,
            peer,
            peer_is_host,
            remote: false,
            cut_through,
            rate,
            ps_per_byte: rate.exact_ps_per_byte().unwrap_or(0),
            lead: delay,
            delay,
            hop,
            queue,
            marking,
            busy_until: SimTime::ZERO,
            wakeup_pending: false,
            enqueued_packets: 0,
            enqueued_bytes: 0,
            dequeued_packets: 0,
            dequeued_bytes: 0,
            dropped_packets: 0,
            dropped_bytes: 0,
            marked_packets: 0,
            marked_bytes: 0,
        };
        if cut_through {
            port.lead = port.tx_time(crate::units::HEADER_BYTES as u64) + delay;
        }
        port
    }

    /// Its counters. A timeline port has sent every packet it accepted (their departures are
    /// committed when they are accepted, the packets still waiting included).
    pub fn stats(&self) -> PortStats {
        let (dequeued_packets, dequeued_bytes) = match self.queue {
            PortQueue::Timeline(_) => (self.enqueued_packets, self.enqueued_bytes),
            PortQueue::Scheduled(_) => (self.dequeued_packets, self.dequeued_bytes),
        };
        PortStats {
            enqueued_packets: self.enqueued_packets,
            enqueued_bytes: self.enqueued_bytes,
            dequeued_packets,
            dequeued_bytes,
            dropped_packets: self.dropped_packets,
            dropped_bytes: self.dropped_bytes,
            marked_packets: self.marked_packets,
            marked_bytes: self.marked_bytes,
        }
    }

    /// Counts a packet of `bytes` dropped on its way into this port.
    #[inline]
    pub fn count_drop(&mut self, bytes: u64) {
        self.dropped_packets += 1;
        self.dropped_bytes += bytes;
    }

    /// Counts a packet of `bytes` accepted.
    #[inline(always)]
    fn count_enqueued(&mut self, bytes: u64) {
        self.enqueued_packets += 1;
        self.enqueued_bytes += bytes;
    }

    /// Serialization time of `bytes` on this link.
    #[inline]
    pub fn tx_time(&self, bytes: u64) -> SimTime {
        if self.ps_per_byte > 0 {
            SimTime(bytes * self.ps_per_byte)
        } else {
            self.rate.tx_time(bytes)
        }
    }

    /// The byte limit of the queue, if it has one (used to size the event queue's horizon).
    pub fn buffer_hint_bytes(&self) -> u64 {
        match &self.queue {
            PortQueue::Timeline(q) => q.limit_bytes(),
            PortQueue::Scheduled(q) => q.limit_bytes(),
        }
    }

    /// Bytes waiting at `now` (a FIFO timeline first forgets the packets that have started
    /// by then): a shared switch memory's occupancy.
    pub fn waiting_bytes_at(&mut self, now: SimTime) -> u64 {
        if let PortQueue::Timeline(q) = &mut self.queue {
            q.advance(now);
        }
        self.waiting_bytes()
    }

    /// Bytes waiting now (for the ECN decision).
    #[inline]
    fn waiting_bytes(&self) -> u64 {
        match &self.queue {
            PortQueue::Timeline(q) => q.len_bytes(),
            PortQueue::Scheduled(q) => q.len_bytes(),
        }
    }

    /// Offers packet `id` at time `now`: marks it if the marking rule says so, then commits
    /// its transmission, queues it, or drops something. Always inlined: the fabric calls it from
    /// its untraced and its traced path, and the untraced one must stay one function.
    #[inline(always)]
    pub fn offer(
        &mut self,
        id: PacketId,
        now: SimTime,
        pool: &mut PacketPool,
        rng: &mut Rng,
    ) -> Offer {
        let size = pool.get(id).size_bytes;
        if let PortQueue::Timeline(q) = &mut self.queue {
            q.advance(now);
        }
        let rule = match self.marking {
            EcnMarking::Off => None,
            EcnMarking::Instantaneous { threshold_bytes } => {
                Some((threshold_bytes, self.waiting_bytes()))
            }
            EcnMarking::PerQueue { threshold_bytes } => {
                let class = pool.get(id).class as usize;
                let waiting = match &self.queue {
                    PortQueue::Scheduled(AnyQueue::StrictPriority(q)) => q.class_bytes(class),
                    _ => self.waiting_bytes(),
                };
                Some((threshold_bytes, waiting))
            }
        };
        if let Some((threshold_bytes, waiting)) = rule {
            let p = pool.get_mut(id);
            if p.ecn & ecn::ECT != 0 && waiting >= threshold_bytes {
                p.ecn |= ecn::CE;
                self.marked_packets += 1;
                self.marked_bytes += size as u64;
            }
        }
        match &mut self.queue {
            PortQueue::Timeline(q) => {
                let start = self.busy_until.max(now);
                if !q.admit(size, start, now) {
                    self.count_drop(size as u64);
                    return Offer::Dropped(id);
                }
                self.count_enqueued(size as u64);
                Offer::Depart { arrive_at: self.start_timeline_transmission_at(start, size) }
            }
            PortQueue::Scheduled(q) if self.busy_until <= now && q.len_packets() == 0 => {
                self.count_enqueued(size as u64);
                Offer::Depart { arrive_at: self.start_transmission_at(now, size) }
            }
            PortQueue::Scheduled(q) => {
                match q.enqueue(id, pool, rng) {
                    Admission::Accepted => {
                        self.count_enqueued(size as u64);
                        Offer::Queued
                    }
                    Admission::Dropped { victim, reason: _ } => {
                        if victim != id {
                            // The arriving packet took the victim's place.
                            self.count_enqueued(size as u64);
                        }
                        self.count_drop(pool.get(victim).size_bytes as u64);
                        Offer::Dropped(victim)
                    }
                }
            }
        }
    }

    /// An event-driven discipline commits a transmission of `size` bytes starting at `start`;
    /// returns the arrival time at the peer.
    #[inline]
    fn start_transmission_at(&mut self, start: SimTime, size: u32) -> SimTime {
        self.dequeued_packets += 1;
        self.dequeued_bytes += size as u64;
        self.start_timeline_transmission_at(start, size)
    }

    /// Commits a transmission of `size` bytes starting at `start`, counted as sent when it was
    /// accepted (a timeline port); returns the arrival time at the peer.
    #[inline]
    fn start_timeline_transmission_at(&mut self, start: SimTime, size: u32) -> SimTime {
        let end = start + self.tx_time(size as u64);
        self.busy_until = end;
        // The packet reaches the peer after its lead (the header under cut-through, the whole
        // packet otherwise) and the delay.
        if self.cut_through {
            start + self.lead
        } else {
            end + self.lead
        }
    }

    /// Event-driven disciplines: the link is free at `now`; takes the next packet, if any,
    /// and returns it with its arrival time at the peer. Always inlined (see
    /// `Fabric::on_tx_done`).
    #[inline(always)]
    pub fn next_departure(
        &mut self,
        now: SimTime,
        pool: &PacketPool,
        rng: &mut Rng,
    ) -> Option<(PacketId, SimTime)> {
        let PortQueue::Scheduled(q) = &mut self.queue else { return None };
        let id = q.dequeue(pool, rng)?;
        let size = pool.get(id).size_bytes;
        Some((id, self.start_transmission_at(now, size)))
    }

    /// A further packet evicted by the last offer (see [`QueueDiscipline::take_extra_drop`]);
    /// counted here, freed by the caller.
    #[inline]
    pub fn take_extra_drop(&mut self, pool: &PacketPool) -> Option<PacketId> {
        let PortQueue::Scheduled(q) = &mut self.queue else { return None };
        let id = q.take_extra_drop()?;
        self.count_drop(pool.get(id).size_bytes as u64);
        Some(id)
    }

    /// When the port will have sent everything it holds now (`now` if it is idle).
    #[inline]
    pub fn idle_at(&self, now: SimTime) -> SimTime {
        let queued = match &self.queue {
            PortQueue::Timeline(_) => 0, // already counted in `busy_until`
            PortQueue::Scheduled(q) => q.len_bytes(),
        };
        self.busy_until.max(now) + self.tx_time(queued)
    }

    /// True if an event-driven discipline still holds packets.
    #[inline]
    pub fn has_backlog(&self) -> bool {
        matches!(&self.queue, PortQueue::Scheduled(q) if q.len_packets() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, PacketKind};

    pub(crate) fn pkt(pool: &mut PacketPool, size: u32, ecn_bits: u8) -> PacketId {
        pool.alloc(Packet {
            ecn: ecn_bits,
            ..Packet::new(PacketKind::DATA, 0, 0, 0, 1, 0, size, SimTime::ZERO)
        })
    }

    fn port(timeline: bool, limit: u64, marking: EcnMarking) -> Port {
        let queue = if timeline {
            PortQueue::Timeline(DropTail::new(limit))
        } else {
            PortQueue::Scheduled(AnyQueue::Fifo(Fifo::new(limit)))
        };
        port_with(queue, marking)
    }

    /// A 10 Gbps, 200 ns, store-and-forward core port with `queue`.
    fn port_with(queue: PortQueue, marking: EcnMarking) -> Port {
        Port::new(
            0,
            1,
            false,
            false,
            BitRate::from_gbps(10.0),
            SimTime::from_ns(200),
            HopKind::Core,
            queue,
            marking,
        )
    }

    #[test]
    fn idle_port_transmits_at_once_then_queues() {
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(1);
        for timeline in [true, false] {
            let mut p = port(timeline, 3000, EcnMarking::Off);
            let a = pkt(&mut pool, 1500, 0);
            assert_eq!(
                p.offer(a, SimTime::ZERO, &mut pool, &mut rng),
                Offer::Depart { arrive_at: SimTime::from_ns(1400) }
            );
            assert_eq!(p.busy_until, SimTime::from_ns(1200));
            let b = pkt(&mut pool, 1500, 0);
            let offered = p.offer(b, SimTime::from_ns(100), &mut pool, &mut rng);
            if timeline {
                // Starts when the link frees at 1200, arrives 1400 later.
                assert_eq!(offered, Offer::Depart { arrive_at: SimTime::from_ns(2600) });
            } else {
                assert_eq!(offered, Offer::Queued);
                assert!(p.has_backlog());
                assert_eq!(
                    p.next_departure(SimTime::from_ns(1200), &pool, &mut rng),
                    Some((b, SimTime::from_ns(2600)))
                );
            }
        }
        // Cut-through towards a switch: the header (40 B = 32 ns) leads.
        let mut ct = Port::new(
            0,
            1,
            false,
            true,
            BitRate::from_gbps(10.0),
            SimTime::from_ns(200),
            HopKind::Core,
            PortQueue::Timeline(DropTail::new(3000)),
            EcnMarking::Off,
        );
        let c = pkt(&mut pool, 1500, 0);
        assert_eq!(
            ct.offer(c, SimTime::ZERO, &mut pool, &mut rng),
            Offer::Depart { arrive_at: SimTime::from_ns(232) }
        );
        assert_eq!(ct.busy_until, SimTime::from_ns(1200));
    }

    /// Issue 16 lever 2: every field a packet reads or writes on its way through a FIFO port
    /// (the accepted count included) fills the first cache line, the queue's head the second.
    #[test]
    fn a_port_is_two_hot_cache_lines() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!((align_of::<Port>(), size_of::<Port>()), (64, 256));
        for hot in [
            offset_of!(Port, busy_until),
            offset_of!(Port, ps_per_byte),
            offset_of!(Port, lead),
            offset_of!(Port, marking),
            offset_of!(Port, peer),
            offset_of!(Port, wakeup_pending),
            offset_of!(Port, remote),
            offset_of!(Port, cut_through),
            offset_of!(Port, enqueued_packets),
            offset_of!(Port, enqueued_bytes),
        ] {
            assert!(hot < 64, "offset {hot}");
        }
        assert_eq!(offset_of!(Port, enqueued_bytes) + 8, 64);
        assert_eq!(offset_of!(Port, queue), 64);
        // A timeline's state (the variant's tag and its `DropTail`) ends within the second line.
        assert!(size_of::<DropTail>() + 8 <= 64);
    }

    /// A timeline port reports what it accepted as sent; an event-driven one what it started.
    #[test]
    fn a_port_counts_what_it_sent() {
        for timeline in [true, false] {
            let mut pool = PacketPool::new();
            let mut rng = Rng::new(1);
            let mut p = port(timeline, 3000, EcnMarking::Off);
            let ids: Vec<_> = (0..4).map(|_| pkt(&mut pool, 1500, 0)).collect();
            for &id in &ids {
                p.offer(id, SimTime::ZERO, &mut pool, &mut rng);
            }
            // One on the wire, two waiting, one dropped (3,000 bytes of room).
            let s = p.stats();
            assert_eq!((s.enqueued_packets, s.enqueued_bytes), (3, 4500), "timeline {timeline}");
            assert_eq!((s.dropped_packets, s.dropped_bytes), (1, 1500), "timeline {timeline}");
            let sent = if timeline { (3, 4500) } else { (1, 1500) };
            assert_eq!((s.dequeued_packets, s.dequeued_bytes), sent, "timeline {timeline}");
            if !timeline {
                let done = p.busy_until;
                assert!(p.next_departure(done, &pool, &mut rng).is_some());
                assert_eq!(p.stats().dequeued_packets, 2);
            }
        }
    }

    #[test]
    fn ecn_marks_exactly_at_threshold() {
        // K = 2 packets: the third packet queued behind two marks, the second does not.
        for timeline in [true, false] {
            let mut pool = PacketPool::new();
            let mut rng = Rng::new(1);
            let mut p =
                port(timeline, 100_000, EcnMarking::Instantaneous { threshold_bytes: 3000 });
            let first = pkt(&mut pool, 1500, ecn::ECT);
            p.offer(first, SimTime::ZERO, &mut pool, &mut rng);
            let mut marked = Vec::new();
            for _ in 0..4 {
                let id = pkt(&mut pool, 1500, ecn::ECT);
                p.offer(id, SimTime::from_ns(10), &mut pool, &mut rng);
                marked.push(pool.get(id).ecn & ecn::CE != 0);
            }
            // Waiting before each arrival: 0, 1500, 3000, 4500 bytes (the packet on the wire
            // does not count).
            assert_eq!(marked, vec![false, false, true, true]);
            assert_eq!(p.stats().marked_packets, 2);
            let id = pkt(&mut pool, 1500, 0);
            p.offer(id, SimTime::from_ns(10), &mut pool, &mut rng);
            assert_eq!(pool.get(id).ecn & ecn::CE, 0, "a non-ECT packet is never marked");
        }
    }

    #[test]
    fn per_port_and_per_queue_marking_on_a_strict_priority_port() {
        // Two queues, K = 3000 B. Queued while the link is busy: two class-1 packets (3000 B
        // in queue 1), then a class-0 packet arrives. Per port it sees 3000 B waiting and is
        // marked; per queue it sees its own empty queue and is not. A further class-1 packet
        // is marked either way.
        for (marking, expect_high) in [
            (EcnMarking::Instantaneous { threshold_bytes: 3000 }, true),
            (EcnMarking::PerQueue { threshold_bytes: 3000 }, false),
        ] {
            let mut pool = PacketPool::new();
            let mut rng = Rng::new(1);
            let queue = PortQueue::Scheduled(AnyQueue::StrictPriority(StrictPriorityQueue::new(
                2, 100_000, 0,
            )));
            let mut p = port_with(queue, marking);
            let class = |pool: &mut PacketPool, c: u8| {
                let id = pkt(pool, 1500, ecn::ECT);
                pool.get_mut(id).class = c;
                id
            };
            let on_wire = class(&mut pool, 1);
            p.offer(on_wire, SimTime::ZERO, &mut pool, &mut rng);
            for _ in 0..2 {
                let id = class(&mut pool, 1);
                p.offer(id, SimTime::from_ns(10), &mut pool, &mut rng);
                assert_eq!(pool.get(id).ecn & ecn::CE, 0);
            }
            let high = class(&mut pool, 0);
            p.offer(high, SimTime::from_ns(20), &mut pool, &mut rng);
            assert_eq!(pool.get(high).ecn & ecn::CE != 0, expect_high, "{marking:?}");
            let low = class(&mut pool, 1);
            p.offer(low, SimTime::from_ns(30), &mut pool, &mut rng);
            assert_ne!(pool.get(low).ecn & ecn::CE, 0, "{marking:?}");
        }
    }
}
