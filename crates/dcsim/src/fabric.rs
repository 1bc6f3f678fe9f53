//! The fabric at run time: the event scheduler, the packet pool, the network and the
//! forwarding logic that moves packets from port to port.
//!
//! Event structure per port (after htsim's `Queue`): an arriving packet goes straight onto an
//! idle link; otherwise it is queued and, on the idle→busy transition, one transmit-complete
//! event ([`Event::TxDone`]) is scheduled; each completion starts the next packet. A link
//! only delays: the packet reappears at the next node as an [`Event::Arrive`] after its lead
//! time plus the propagation delay.

use crate::metrics::{HopEvent, PacketTracer};
use crate::packet::{Packet, PacketId, PacketPool, SeqSet};
use crate::queue::{HopKind, Offer};
use crate::spec::SharedBuffer;
use crate::streams::{ElementRngs, Stream};
use crate::topology::{Balancer, Network};
use dcsim_engine::{Scheduler, SimTime};

/// Every event of a simulation. Small and `Copy` (12 bytes, checked by a test).
///
/// The fabric knows four kinds: a flow arrival, a port finishing a packet, a packet reaching a
/// node, and a transport's own event, whose meaning belongs to the run's transport (its
/// timers and clocks: see [`crate::transport::TransportEvent`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Event {
    /// The workload's next flow arrives.
    NextFlow,
    /// Port `.0` finished serializing a packet.
    TxDone(u32),
    /// Packet `.1` reaches node `.0`.
    Arrive(u32, PacketId),
    /// A transport event: the transport's event `code` with two arguments.
    Transport {
        /// Which of the transport's events.
        code: u8,
        /// First argument.
        a: u32,
        /// Second argument.
        b: u32,
    },
}

/// Packet accounting for the conservation invariant.
#[derive(Debug, Default, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct PacketCounters {
    /// Packets created by hosts.
    pub created: u64,
    /// Data packets created.
    pub data: u64,
    /// Data packets created as retransmissions.
    pub data_retransmitted: u64,
    /// Control packets created.
    pub control: u64,
    /// Packets that reached their destination host.
    pub delivered: u64,
    /// Wire bytes of the data packets that reached their destination host.
    pub data_bytes_delivered: u64,
    /// Packets dropped by a port.
    pub dropped: u64,
    /// Packets handed to another partition (a partitioned run).
    pub sent_away: u64,
    /// Packets received from other partitions (a partitioned run).
    pub received: u64,
}

impl PacketCounters {
    /// The counters of several partitions, summed.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a PacketCounters>) -> PacketCounters {
        parts.into_iter().fold(PacketCounters::default(), |a, c| PacketCounters {
            created: a.created + c.created,
            data: a.data + c.data,
            data_retransmitted: a.data_retransmitted + c.data_retransmitted,
            control: a.control + c.control,
            delivered: a.delivered + c.delivered,
            data_bytes_delivered: a.data_bytes_delivered + c.data_bytes_delivered,
            dropped: a.dropped + c.dropped,
            sent_away: a.sent_away + c.sent_away,
            received: a.received + c.received,
        })
    }
}

/// A packet leaving its partition by a port whose peer is in another ([`crate::partition`]):
/// it reaches `node` at `at`, delivered there at the next window's barrier.
///
/// Two cache lines (the packet's, then the rest), checked by a test: it is written by one
/// thread and read by another, and the partition it left travels inside it rather than
/// beside it (a `(u32, Crossing)` took three lines, the packet being line-aligned).
#[derive(Copy, Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Crossing {
    /// The packet.
    pub packet: Packet,
    /// When it reaches `node`.
    pub at: SimTime,
    /// Its packet-trace number (traced runs only).
    pub trace_id: u64,
    /// The last port it was offered to (traced runs only).
    pub trace_port: u32,
    /// The node it reaches.
    pub node: u32,
    /// The partition it left.
    pub from: u32,
}

/// Deliveries of the flows whose ids start at `first`, counted apart from the others (the
/// simulation's long-lived flows): distinct payload bytes per flow (goodput), wire bytes of
/// every data packet, and packets of any kind.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FlowMeter {
    /// The first metered flow id; flow `first + k` is the k-th metered flow.
    pub first: u32,
    received: Vec<SeqSet>,
    /// Distinct payload bytes delivered (a data packet delivered twice counts once).
    pub payload_bytes: u64,
    /// Wire bytes of every data packet delivered, duplicates included.
    pub wire_bytes: u64,
    /// Packets of any kind delivered (to hosts, or consumed at switches).
    pub packets: u64,
}

impl Default for FlowMeter {
    /// Meters no flow.
    fn default() -> Self {
        FlowMeter::new(u32::MAX, 0)
    }
}

impl FlowMeter {
    /// A meter for the `n` flows `first..first + n` (`n = 0`: none).
    pub fn new(first: u32, n: u32) -> Self {
        FlowMeter {
            first: if n == 0 { u32::MAX } else { first },
            received: vec![SeqSet::default(); n as usize],
            payload_bytes: 0,
            wire_bytes: 0,
            packets: 0,
        }
    }

    /// Packet `p` of a metered flow was delivered. Out of line: unmetered runs never call it.
    #[inline(never)]
    fn on_delivered(&mut self, p: &Packet) {
        self.packets += 1;
        if p.is_control() {
            return;
        }
        self.wire_bytes += p.size_bytes as u64;
        if self.received[(p.flow - self.first) as usize].insert(p.seq) {
            self.payload_bytes += (p.size_bytes - crate::units::HEADER_BYTES) as u64;
        }
    }
}

/// A scripted loss: drop the next `count` packets of `flow` with sequence number `seq` and
/// the given kind when they are offered to the `hop`-th port of their path (0 = source NIC).
/// Fault injection for tests and experiments; it wraps the ports rather than changing them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LossRule {
    /// Flow id.
    pub flow: u32,
    /// Sequence number (data: packet index; ACK: cumulative ACK value).
    pub seq: u32,
    /// Which packets.
    pub kind: crate::packet::PacketKind,
    /// Index of the port on the path.
    pub hop: u8,
    /// How many matching packets to drop.
    pub count: u32,
}

/// Scheduler, packets, network and forwarding state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Fabric {
    /// The event scheduler.
    pub sched: Scheduler<Event>,
    /// All packets alive.
    pub pool: PacketPool,
    /// Topology, ports and routes.
    pub net: Network,
    balancer: Balancer,
    /// The ports' tie-break streams: one shared, or each port's own (the partitioned model).
    queue_rngs: ElementRngs,
    /// Conservation counters.
    pub counters: PacketCounters,
    /// Deliveries of the flows metered apart (none unless set).
    pub meter: FlowMeter,
    losses: Vec<LossRule>,
    /// The per-packet trace (`output.packet_trace`); `None`, and never touched beyond that
    /// check, when off.
    pub tracer: Option<Box<PacketTracer>>,
    /// Where packets leaving this partition go (a partitioned run).
    pub outboxes: Outboxes,
}

/// Where the packets leaving a partition go during a window: one buffer per thread of
/// destination, each lent for the window by the thread running the partition, so a crossing is
/// written once, where its destination's thread reads it after the barrier. Each crossing
/// carries the partition it left (the destination merges them by source partition).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Outboxes {
    /// The partition they leave.
    partition: u32,
    /// Per node: the buffer for its partition's thread.
    buffer_of_node: Vec<u32>,
    /// The buffers (empty stand-ins outside a window).
    pub buffers: Vec<Vec<Crossing>>,
    /// Crossings sent since the last [`Outboxes::take_sent`], and the earliest time one of
    /// them arrives.
    sent: u64,
    earliest: Option<SimTime>,
}

impl Outboxes {
    /// The outboxes of `partition`, with `buffers` buffers (one per thread), the buffer of
    /// each node given by `buffer_of_node`.
    pub fn new(partition: u32, buffer_of_node: Vec<u32>, buffers: usize) -> Self {
        let buffers = vec![Vec::new(); buffers];
        Outboxes { partition, buffer_of_node, buffers, sent: 0, earliest: None }
    }

    /// The crossings sent since the last call, and the earliest of their arrival times.
    pub fn take_sent(&mut self) -> (u64, Option<SimTime>) {
        (std::mem::take(&mut self.sent), self.earliest.take())
    }
}

/// How far ahead the event queue's near-future wheel looks. Most events are a packet
/// reaching the next node; the latest such event is one that waits behind a full buffer.
/// The wheel covers that (rounded up to a power of two), so almost nothing goes to its
/// far-future heap.
fn wheel_horizon(net: &Network) -> SimTime {
    let longest_ps = net
        .ports
        .iter()
        .map(|p| {
            let bits = (p.buffer_hint_bytes() as u128 + crate::units::MTU_BYTES as u128) * 8;
            (bits * 1_000_000_000_000 / p.rate.0.max(1) as u128 + p.delay.0 as u128).min(1 << 40)
                as u64
        })
        .max()
        .unwrap_or(0);
    SimTime(longest_ps)
}

impl Fabric {
    /// A fabric over `net`; `seed` feeds the load balancers' and queue tie-breaks' streams: one
    /// of each, or with `per_element` (the partitioned model) one per switch and one per port.
    pub fn new(net: Network, lb: crate::spec::LoadBalancing, seed: u64, per_element: bool) -> Self {
        let lb_rngs = ElementRngs::new(Stream::LoadBalancer, seed, net.n_nodes(), per_element);
        let balancer = Balancer::new(lb, net.n_hosts(), net.n_nodes(), lb_rngs);
        let n_ports = net.ports.len() as u32;
        let queue_rngs = ElementRngs::new(Stream::QueueTieBreaks, seed, n_ports, per_element);
        Fabric {
            sched: Scheduler::with_horizon(wheel_horizon(&net)),
            pool: PacketPool::new(),
            net,
            balancer,
            queue_rngs,
            counters: PacketCounters::default(),
            meter: FlowMeter::default(),
            losses: Vec::new(),
            tracer: None,
            outboxes: Outboxes::default(),
        }
    }

    /// Gives the (still empty) event queue slots of 2^`slot_bits` ps over the same horizon:
    /// a partition's queue holds only its share of the fabric's events, so it needs wider
    /// slots to hold as many events per slot (crate::sim::partitioned).
    pub fn set_slot_bits(&mut self, slot_bits: u32) {
        assert_eq!(self.sched.pending(), 0, "the event queue is resized before it is used");
        self.sched = Scheduler::with_slots_over(slot_bits, wheel_horizon(&self.net));
    }

    /// Adds a scripted loss.
    pub fn add_loss(&mut self, rule: LossRule) {
        self.losses.push(rule);
    }

    /// Whether scripted losses are set.
    pub fn has_losses(&self) -> bool {
        !self.losses.is_empty()
    }

    /// True if a loss rule claims packet `id` at this hop (and consumes one of its drops).
    /// Counts the packet's hops (only needed, so only done, when loss rules exist).
    #[cold]
    fn scripted_loss(&mut self, id: PacketId) -> bool {
        self.pool.get_mut(id).hops += 1;
        let p = self.pool.get(id);
        for r in &mut self.losses {
            if r.count > 0
                && r.flow == p.flow
                && r.seq == p.seq
                && r.kind == p.kind
                && r.hop + 1 == p.hops
            {
                r.count -= 1;
                return true;
            }
        }
        false
    }

    /// Current simulated time.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.sched.now()
    }

    /// Schedules `ev` at `at` (never in the past: transports only schedule ahead).
    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        debug_assert!(at >= self.now());
        self.sched.schedule_at(at, ev).expect("transports schedule only in the future");
    }

    /// A host sends `p`: it enters the host's NIC queue.
    #[inline]
    pub fn inject(&mut self, host: u32, p: Packet) {
        self.counters.created += 1;
        if p.is_control() {
            self.counters.control += 1;
        } else {
            self.counters.data += 1;
            self.counters.data_retransmitted += u64::from(p.retransmit);
        }
        let id = self.pool.alloc(p);
        if self.tracer.is_some() {
            self.trace_created(id);
        }
        let nic = self.net.nic(host);
        self.offer(nic, id);
    }

    /// Switch `node` sends `p` (a control packet its arbitrator answers with): it leaves by
    /// the switch's route towards `p.dst`.
    pub fn send_from_switch(&mut self, node: u32, p: Packet) {
        debug_assert!(p.is_control());
        self.counters.created += 1;
        self.counters.control += 1;
        let id = self.pool.alloc(p);
        if self.tracer.is_some() {
            self.trace_created(id);
        }
        self.on_arrive_at_switch(node, id);
    }

    /// When host `host`'s NIC will have sent everything queued at it now.
    #[inline]
    pub fn nic_idle_at(&self, host: u32) -> SimTime {
        self.net.ports[self.net.nic(host) as usize].idle_at(self.now())
    }

    /// The destination host consumed packet `id`.
    #[inline]
    pub fn deliver(&mut self, id: PacketId) {
        self.counters.delivered += 1;
        let p = self.pool.get(id);
        if !p.is_control() {
            self.counters.data_bytes_delivered += p.size_bytes as u64;
        }
        if p.flow >= self.meter.first {
            self.meter.on_delivered(p);
        }
        if self.tracer.is_some() {
            self.trace_delivery(id);
        }
        self.pool.free(id);
    }

    /// Offers packet `id` to `port`. A traced run takes its own copy of the path (one branch
    /// here), so the untraced one is exactly as it was without tracing.
    #[inline]
    fn offer(&mut self, port: u32, id: PacketId) {
        if self.tracer.is_some() {
            self.offer_traced(port, id);
        } else {
            self.offer_with::<false>(port, id);
        }
    }

    #[cold]
    #[inline(never)]
    fn offer_traced(&mut self, port: u32, id: PacketId) {
        self.offer_with::<true>(port, id);
    }

    /// The offer itself; `TRACED` adds the packet trace's rows.
    #[inline(always)]
    fn offer_with<const TRACED: bool>(&mut self, port: u32, id: PacketId) {
        let now = self.sched.now();
        if !self.losses.is_empty() && self.scripted_loss(id) {
            if TRACED {
                self.trace_offer(port, id, Offer::Dropped(id));
            }
            self.counters.dropped += 1;
            self.pool.free(id);
            return;
        }
        let pt = &mut self.net.ports[port as usize];
        let offered = pt.offer(id, now, &mut self.pool, self.queue_rngs.of(port));
        let (peer, remote) = (pt.peer, pt.remote);
        if TRACED {
            self.trace_offer(port, id, offered);
        }
        match offered {
            Offer::Depart { arrive_at } if remote => self.send_away(peer, arrive_at, id),
            Offer::Depart { arrive_at } => {
                self.sched
                    .schedule_at(arrive_at, Event::Arrive(peer, id))
                    .expect("arrivals are in the future");
            }
            Offer::Queued => self.ensure_wakeup(port),
            Offer::Dropped(victim) => {
                self.counters.dropped += 1;
                self.pool.free(victim);
                while let Some(extra) = self.net.ports[port as usize].take_extra_drop(&self.pool) {
                    if TRACED {
                        self.trace_offer(port, extra, Offer::Dropped(extra));
                    }
                    self.counters.dropped += 1;
                    self.pool.free(extra);
                }
                if victim != id {
                    self.ensure_wakeup(port);
                }
            }
        }
    }

    #[inline]
    fn ensure_wakeup(&mut self, port: u32) {
        let pt = &mut self.net.ports[port as usize];
        if !pt.wakeup_pending {
            pt.wakeup_pending = true;
            let at = pt.busy_until;
            self.sched
                .schedule_at(at, Event::TxDone(port))
                .expect("busy_until is never in the past");
        }
    }

    /// Port `port` (an event-driven discipline) finished a packet: start the next one. Always
    /// inlined, as its `next_departure` is: the partitioned loop calls it too, and with two
    /// callers the compiler stopped inlining it into the sequential loop (+3 % instructions on
    /// pFabric, callgrind; docs/performance.md, "Parallel runs").
    #[inline(always)]
    pub fn on_tx_done(&mut self, port: u32) {
        let now = self.sched.now();
        let pt = &mut self.net.ports[port as usize];
        pt.wakeup_pending = false;
        if let Some((id, arrive_at)) = pt.next_departure(now, &self.pool, self.queue_rngs.of(port))
        {
            let (peer, remote, backlog) = (pt.peer, pt.remote, pt.has_backlog());
            if self.tracer.is_some() {
                self.trace_dequeue(port, id);
            }
            if remote {
                self.send_away(peer, arrive_at, id);
            } else {
                self.sched
                    .schedule_at(arrive_at, Event::Arrive(peer, id))
                    .expect("arrivals are in the future");
            }
            if backlog {
                self.ensure_wakeup(port);
            }
        }
    }

    /// Packet `id` leaves this partition for `node`, which it reaches at `at`: it goes into
    /// the outbox for `node`'s thread and its slot is freed here. Cold: the sequential model
    /// never calls it, and its ports' forwarding stays as small as it was.
    #[cold]
    #[inline(never)]
    fn send_away(&mut self, node: u32, at: SimTime, id: PacketId) {
        self.counters.sent_away += 1;
        let (trace_id, trace_port) =
            self.tracer.as_ref().map_or((0, crate::metrics::NO_PORT), |t| t.identity(id));
        let out = &mut self.outboxes;
        out.sent += 1;
        out.earliest = Some(out.earliest.map_or(at, |t| t.min(at)));
        let packet = *self.pool.get(id);
        let crossing = Crossing { packet, at, trace_id, trace_port, node, from: out.partition };
        out.buffers[out.buffer_of_node[node as usize] as usize].push(crossing);
        self.pool.free(id);
    }

    /// A packet from another partition: it reaches its node at its time (never before this
    /// partition's clock: the window was no longer than the lookahead).
    pub fn receive(&mut self, c: &Crossing) {
        self.counters.received += 1;
        let id = self.pool.alloc(c.packet);
        if let Some(t) = &mut self.tracer {
            t.on_received(id, (c.trace_id, c.trace_port));
        }
        self.sched
            .schedule_at(c.at, Event::Arrive(c.node, id))
            .expect("a crossing arrives after the window it left in");
    }

    /// Packet `id` arrived at switch `node`: route it to an egress port.
    #[inline(always)]
    pub fn on_arrive_at_switch(&mut self, node: u32, id: PacketId) {
        let p = self.pool.get(id);
        let (src, dst, flow) = (p.src, p.dst, p.flow);
        let choices = self.net.routes.next_hops(node, dst);
        let port = self.balancer.pick(node, src, flow, choices);
        if let Some(shared) = self.net.shared_buffer {
            if !self.shared_memory_admits(shared, node, port, id) {
                self.drop_before_port(port, id);
                return;
            }
        }
        self.offer(port, id);
    }

    /// Whether switch `node`'s shared memory takes packet `id` into `port`'s queue (dynamic
    /// thresholds, [`SharedBuffer::admits`]). A packet that goes straight onto an idle link
    /// never waits in the memory and is always taken. Out of line: only runs with a shared
    /// memory call it, and each call sums the switch's ports.
    #[inline(never)]
    fn shared_memory_admits(
        &mut self,
        shared: SharedBuffer,
        node: u32,
        port: u32,
        id: PacketId,
    ) -> bool {
        let now = self.sched.now();
        let size = self.pool.get(id).size_bytes as u64;
        let pt = &mut self.net.ports[port as usize];
        let port_bytes = pt.waiting_bytes_at(now);
        if port_bytes == 0 && pt.busy_until <= now {
            return true;
        }
        let switch_bytes = self.net.switch_bytes(node, now);
        shared.admits(port_bytes, switch_bytes, size)
    }

    /// Drops packet `id` on its way into `port` (the port's memory refused it), counted at
    /// the port as its own drops are.
    #[inline(never)]
    fn drop_before_port(&mut self, port: u32, id: PacketId) {
        let size = self.pool.get(id).size_bytes as u64;
        self.net.ports[port as usize].count_drop(size);
        if self.tracer.is_some() {
            self.trace_offer(port, id, Offer::Dropped(id));
        }
        self.counters.dropped += 1;
        self.pool.free(id);
    }

    /// Traces what offering packet `id` to `port` did. Out of line: only traced runs call it.
    #[cold]
    #[inline(never)]
    fn trace_offer(&mut self, port: u32, id: PacketId, offered: Offer) {
        let now = self.sched.now();
        let (Some(tracer), pt) = (&mut self.tracer, &self.net.ports[port as usize]) else {
            return;
        };
        let p = self.pool.get(id);
        match offered {
            Offer::Depart { .. } => {
                tracer.record(now, id, p, HopEvent::Enqueue, pt.owner, port);
                // The transmission just committed ends at `busy_until`.
                let start = pt.busy_until - pt.tx_time(p.size_bytes as u64);
                tracer.record(start, id, p, HopEvent::Dequeue, pt.owner, port);
            }
            Offer::Queued => tracer.record(now, id, p, HopEvent::Enqueue, pt.owner, port),
            Offer::Dropped(victim) => {
                if victim != id {
                    tracer.record(now, id, p, HopEvent::Enqueue, pt.owner, port);
                }
                let v = self.pool.get(victim);
                tracer.record(now, victim, v, HopEvent::Drop, pt.owner, port);
            }
        }
    }

    /// Traces the creation of packet `id`. Out of line: only traced runs call it.
    #[cold]
    #[inline(never)]
    fn trace_created(&mut self, id: PacketId) {
        if let Some(tracer) = &mut self.tracer {
            tracer.on_created(id);
        }
    }

    /// Traces the start of packet `id`'s transmission at `port` (an event-driven port). Out of
    /// line: only traced runs call it.
    #[cold]
    #[inline(never)]
    fn trace_dequeue(&mut self, port: u32, id: PacketId) {
        let now = self.sched.now();
        let owner = self.net.ports[port as usize].owner;
        if let Some(tracer) = &mut self.tracer {
            tracer.record(now, id, self.pool.get(id), HopEvent::Dequeue, owner, port);
        }
    }

    /// Traces the delivery of packet `id` where its last link took it. Out of line: only
    /// traced runs call it.
    #[cold]
    #[inline(never)]
    fn trace_delivery(&mut self, id: PacketId) {
        let now = self.sched.now();
        let Some(tracer) = &mut self.tracer else { return };
        let node = self.net.ports[tracer.last_port(id) as usize].peer;
        tracer.record(now, id, self.pool.get(id), HopEvent::Deliver, node, crate::metrics::NO_PORT);
    }

    /// Packets held by event-driven queues (timeline FIFOs hold none: theirs are already
    /// scheduled to arrive at the next node).
    pub fn packets_queued(&self) -> u64 {
        self.net.ports.iter().map(|p| p.queue.held_packets() as u64).sum()
    }

    /// Drops (or marks) summed per hop kind.
    pub fn per_hop(
        &self,
        f: impl Fn(&crate::queue::PortStats) -> u64,
    ) -> std::collections::BTreeMap<String, u64> {
        let mut m: std::collections::BTreeMap<String, u64> =
            HopKind::ALL.iter().map(|h| (h.name().to_string(), 0)).collect();
        for p in &self.net.ports {
            *m.get_mut(p.hop.name()).expect("all kinds present") += f(&p.stats());
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;

    #[test]
    fn the_meter_counts_distinct_payload_every_wire_byte_and_every_packet() {
        let first = 1000;
        let mut m = FlowMeter::new(first, 2);
        let data = |flow, seq| {
            Packet::new(PacketKind::DATA, first + flow, 0, 0, 1, seq, 1500, SimTime::ZERO)
        };
        for (flow, seq) in [(0, 0), (0, 1), (0, 1), (1, 1)] {
            m.on_delivered(&data(flow, seq));
        }
        m.on_delivered(&Packet::new(PacketKind::ACK, first, 0, 1, 0, 2, 40, SimTime::ZERO));
        assert_eq!((m.payload_bytes, m.wire_bytes, m.packets), (3 * 1460, 4 * 1500, 5));
        // No flow metered: the first id is out of reach.
        assert_eq!(FlowMeter::new(first, 0).first, u32::MAX);
    }
}
