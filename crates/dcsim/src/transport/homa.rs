//! Homa (Montazeri et al., SIGCOMM'18): receiver-driven message transport over the network's
//! priority queues (paper §3, "Homa design"; the authors' simulator, PlatformLab/HomaSimulation, for what the
//! paper leaves to configuration). A dcsim flow is one Homa message.
//!
//! * **Unscheduled packets.** A new message sends its first RTTbytes at once,
//!   without waiting for the receiver: the packets covering the first `rtt_bytes` (rounded up
//!   to whole packets; 7 packets of 1460 B for 10,000 B, as the authors' simulator's 1442 +
//!   7886 unscheduled bytes take 7 packets). They go at the unscheduled level chosen from the
//!   message's size by the cutoffs (`[homa]`: from the workload's CDF, equal shares of
//!   unscheduled bytes per level — the authors' "CBF graduated" — or given); smaller messages
//!   go higher. With `homa.priority_rule = "bytes-left"` (the authors' simulator) each of
//!   them, and each granted packet of the message's last RTTbytes, goes at the level of the
//!   message bytes left from it on instead (`HomaParams::packet_level`).
//! * **Grants.** A receiver learns of a message from its first arriving packet.
//!   Whenever a data packet reaches it, it ranks its incomplete messages that still need
//!   grants by the packets they still miss (SRPT, ties to the earlier message) and grants the
//!   first `overcommit` of them (controlled overcommitment): each is granted up to the
//!   packets it has received plus RTTbytes (so about RTTbytes is outstanding per granted
//!   message, one grant per arriving packet), at its own scheduled level. Scheduled levels are
//!   the lowest `scheduled_levels` ones; with k messages granted, they use the k lowest
//!   levels, the best-ranked the highest of these (so a new shorter message finds a higher
//!   level free). A grant carries the packets granted so far (cumulative) and the level.
//! * **Senders.** When its NIC is idle, a sender sends one packet of the message with
//!   the fewest payload bytes left to send that has a packet it may send (granted and not
//!   sent yet, or asked for again), ties to the earlier message: the authors' simulator's
//!   `SRBF` sender scheme, which their configuration uses (PlatformLab/HomaSimulation,
//!   `HomaTransport::SendController::OutbndMsgSorter`, `senderScheme = "SRBF"` in
//!   `homaTransportConfig.ini`). It sends only on an idle NIC, so its choice is made as late
//!   as possible.
//! * **Loss.** A receiver that has had no packet of an incomplete message for
//!   `resend_timeout` asks, with one RESEND per contiguous range, for the packets it granted
//!   (or that were unscheduled) and misses; a RESEND also grants its range. A sender whose
//!   message has nothing left to send and has had no word from its receiver (grant, RESEND,
//!   ACK) for twice `resend_timeout` while it has never heard from it or has sent every packet sends
//!   its first packet again, so a receiver that never heard of the message, or whose ACK was
//!   lost, answers (the paper's RPC layer gives this role to the client's timeout).
//! * **Completion.** The receiver sends one 40-byte ACK when it holds every packet; the FCT
//!   ends when the ACK reaches the sender (as for every dcsim protocol, and as in the ideal FCT
//!   the slowdown divides by). Control packets (grants, RESENDs, ACKs) go at the highest level.
//! * **Switches.** Strict priority over `priority_levels` queues (8) at every port, NICs
//!   included.
//!
//! The partitioned model (`engine.partitioned`, [`HomaParams::partitioned`]): a message's
//! sender and receiver may run in different partitions, on different threads
//! ([`crate::partition`]), so they share no table entry and learn from packets only. The
//! senders keep their messages in their own table and number their slots in their partition's
//! residue class (`slot ≡ partition index`, modulo the partition count), so a slot names one
//! open message in the whole run; the receivers keep theirs, indexed by that slot. A data
//! packet carries its message's length in packets (first header word), which is all a receiver
//! needs to learn the message; a receiver's entry is replaced only by a later message of the
//! same slot (flow ids grow with arrival time). The ACK carries the receiver's RESEND rounds
//! (first header word), which the sender adds to its own timeouts in the message's record.

use super::{
    entry_holding, nic_free_on_wake, receiving_entry, schedule_nic_wake, sending_entry, Completion,
    HostTransport, Parts, PortPlan, Protocol, QueuePlan, SlotNumbering, TransportEvent,
};
use crate::fabric::Fabric;
use crate::packet::{Packet, PacketId, PacketKind, SeqSet};
use crate::queue::EcnMarking;
use crate::spec::{HomaPriorityRule, Spec};
use crate::units::{BitRate, Bytes, CONTROL_BYTES, HEADER_BYTES, MSS_BYTES};
use crate::workload::FlowArrival;
use dcsim_engine::SimTime;

/// Grant: the receiver lets the sender send more of a message. Header: the packets granted so
/// far (cumulative), the level for scheduled packets.
pub const GRANT: PacketKind = PacketKind::control(0);
/// RESEND: the receiver asks for packets `seq` up to (not including) header word 0 again, at
/// the level in header word 1.
pub const RESEND: PacketKind = PacketKind::control(1);

/// Header word of a grant: packets granted; of a RESEND: the end of the range asked for.
const GRANTED: usize = 0;
/// Header word of a grant or RESEND: the level for the message's scheduled packets.
const LEVEL: usize = 1;
/// Header word of a data packet in the partitioned model: the message's length in packets.
const LENGTH: usize = 0;
/// Header word of an ACK in the partitioned model: the receiver's RESEND rounds.
const RECEIVER_TIMEOUTS: usize = 0;

crate::transport_events! {
    /// Homa's clocks.
    pub enum HomaEvent {
        /// Host `.0`'s sender may send its next packet (its NIC is free).
        SenderWake(host) = 0,
        /// The receiver's resend timer of the message in slot `.0` (flow id `.1`).
        ReceiverTimer(slot, flow) = 1,
        /// The sender's timer of the message in slot `.0` (flow id `.1`).
        SenderTimer(slot, flow) = 2,
    }
}

/// `transport.protocol = "homa"`.
#[derive(Debug)]
pub struct HomaProtocol;

impl Protocol for HomaProtocol {
    type Host = HomaTransport;

    /// Homa's hosts, and strict-priority ports with `priority_levels` queues.
    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        let ports = PortPlan {
            queue: QueuePlan::StrictPriority {
                queues: spec.homa.priority_levels as usize,
                reserved_bytes: 0,
            },
            marking: EcnMarking::Off,
            buffer_bytes: spec.transport.port_buffer(&spec.topology),
        };
        Parts::packets(HomaTransport::new(HomaParams::from_spec(spec), spec.topology.n_hosts()), ports)
    }
}

/// Homa's settings, in packets and absolute times.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HomaParams {
    /// Host link rate.
    pub rate: BitRate,
    /// RTTbytes in whole packets: sent unscheduled, and kept granted beyond what has arrived.
    pub rtt_pkts: u32,
    /// RTTbytes as configured: under the `bytes-left` rule, a scheduled packet with fewer
    /// bytes on the wire than this from it to its message's end goes at an unscheduled level.
    pub rtt_bytes: u64,
    /// The `bytes-left` priority rule (`homa.priority_rule`): a packet's unscheduled level
    /// from its message's bytes left, not from the message's size.
    pub bytes_left: bool,
    /// Priority levels (0 highest).
    pub levels: u8,
    /// The lowest this many levels carry scheduled packets.
    pub scheduled_levels: u8,
    /// Messages granted at once per receiver.
    pub overcommit: u32,
    /// Unscheduled cutoffs, bytes (see [`HomaParams::unscheduled_level`]).
    pub cutoffs: Vec<u64>,
    /// The resend timeout.
    pub resend_timeout: SimTime,
    /// The partitioned model's variant (`engine.partitioned`): separate sender and receiver
    /// tables (module docs).
    pub partitioned: bool,
}

impl HomaParams {
    /// The `[homa]` settings of `spec`.
    pub fn from_spec(spec: &Spec) -> Self {
        let h = &spec.homa;
        HomaParams {
            rate: spec.topology.host_rate(),
            rtt_pkts: u32::try_from(h.rtt_bytes.div_ceil(MSS_BYTES as u64)).unwrap_or(u32::MAX),
            rtt_bytes: h.rtt_bytes,
            bytes_left: h.priority_rule == HomaPriorityRule::BytesLeft,
            levels: h.priority_levels as u8,
            scheduled_levels: h.scheduled_levels as u8,
            overcommit: h.overcommit,
            cutoffs: h.unscheduled_cutoffs.clone(),
            resend_timeout: SimTime((h.resend_timeout_us * 1e6).round() as u64),
            partitioned: spec.engine.partitioned,
        }
    }

    /// The sender's timeout: twice the receiver's, so that a receiver that knows the message
    /// asks for what it misses before the sender sends its first packet again.
    pub fn sender_timeout(&self) -> SimTime {
        SimTime(2 * self.resend_timeout.as_ps())
    }

    /// The level of the unscheduled packets of a message of `size_bytes`: the first k with
    /// `size ≤ cutoffs[k]`, else the one after the last cutoff (0 is the highest level).
    pub fn unscheduled_level(&self, size_bytes: u64) -> u8 {
        self.cutoffs.partition_point(|&c| c < size_bytes) as u8
    }

    /// The level of packet `seq` of message `m`. Under the `message-size` rule the first
    /// `rtt_pkts` packets go at the message's unscheduled level and the rest at its scheduled
    /// level; under `bytes-left` (the authors' simulator: `PriorityResolver::getUnschedPktsPrio`
    /// and `getSchedPktPrio` in `STATIC_CBF_GRADUATED` mode, which the receiver's grant takes
    /// when it is higher) an unscheduled packet, and a scheduled one with fewer than
    /// `rtt_bytes` on the wire from it to the end, goes at the unscheduled level of the
    /// message bytes left from it on, so a message's last packets rise as it nears its end.
    fn packet_level(&self, m: &Message, seq: u32) -> u8 {
        let unscheduled = seq < self.rtt_pkts;
        if !self.bytes_left {
            return if unscheduled { m.unscheduled_level } else { m.scheduled_level };
        }
        let left = m.size_bytes - u64::from(seq) * MSS_BYTES as u64;
        let wire_left = left + u64::from(HEADER_BYTES) * u64::from(m.n_pkts - seq);
        if unscheduled || wire_left < self.rtt_bytes {
            // Unscheduled levels are above every scheduled one.
            self.unscheduled_level(left)
        } else {
            m.scheduled_level
        }
    }

    /// The scheduled level of the message ranked `rank` (0 best) among `granted` messages
    /// granted at once: the `min(granted, scheduled_levels)` lowest levels, the best-ranked
    /// message at the highest of them; ranks beyond share the lowest level.
    pub fn scheduled_level(&self, rank: u32, granted: u32) -> u8 {
        let used = granted.min(self.scheduled_levels as u32) as u8;
        (self.levels - used + rank.min(u32::from(used) - 1) as u8).min(self.levels - 1)
    }
}

/// A 40-byte control packet of message `m`.
fn control(kind: PacketKind, slot: u32, m: &Message, from: u32, to: u32, now: SimTime) -> Packet {
    Packet::new(kind, m.id, slot, from, to, 0, CONTROL_BYTES, now)
}

/// The receiver's ACK of message `m` (in slot `slot`). In the partitioned model the receiver's
/// entry is its own and counts only its RESEND rounds, which the ACK carries to the sender
/// (module docs); in the sequential model the shared entry counts both ends' already.
fn ack(slot: u32, m: &Message, now: SimTime, partitioned: bool) -> Packet {
    let mut a = control(PacketKind::ACK, slot, m, m.dst, m.src, now);
    if partitioned {
        a.header[RECEIVER_TIMEOUTS] = m.timeouts;
    }
    a
}

/// One message, both ends (the slot is shared, as in the other transports).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Message {
    id: u32,
    active: bool,
    src: u32,
    dst: u32,
    size_bytes: u64,
    n_pkts: u32,
    /// The level of its unscheduled packets.
    unscheduled_level: u8,
    // sender
    /// Packets the sender may send: `[0, granted)`.
    granted: u32,
    /// The next packet never sent.
    next_seq: u32,
    /// Packets asked for again, in order.
    resend: Vec<u32>,
    /// The level of its scheduled packets (from the latest grant or RESEND).
    scheduled_level: u8,
    packets_sent: u32,
    /// The sender has had a grant, RESEND or ACK for it.
    heard: bool,
    /// The sender's latest transmission or word from the receiver.
    sender_activity: SimTime,
    sender_timer_pending: bool,
    timeouts: u32,
    // receiver
    known: bool,
    received: SeqSet,
    received_count: u32,
    /// Packets granted so far, as the receiver counts them (the unscheduled ones included).
    receiver_granted: u32,
    /// The level of its latest grant.
    granted_level: u8,
    last_arrival: SimTime,
    receiver_timer_pending: bool,
}

// A receiver's entry in the partitioned model: learned from a data packet.
impl_receiving_entry!(Message);

impl Message {
    /// Payload bytes left to send, the sender's key (module docs, Senders): the packets never
    /// sent and those asked for again. Bytes, not packets: two messages with as many packets
    /// left differ by their last packets' sizes, and one-packet messages by their sizes.
    fn bytes_left(&self) -> u64 {
        let size = Bytes(self.size_bytes);
        let never_sent =
            self.size_bytes.saturating_sub(u64::from(self.next_seq) * MSS_BYTES as u64);
        let again: u64 = self
            .resend
            .iter()
            .map(|&seq| u64::from(size.packet_wire_bytes(seq) - HEADER_BYTES))
            .sum();
        never_sent + again
    }

    fn sendable(&self) -> bool {
        !self.resend.is_empty() || self.next_seq < self.granted
    }
}

/// Per-host state: the messages it sends and receives.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
struct Host {
    sending: Vec<u32>,
    /// Incomplete messages this host has heard of.
    receiving: Vec<u32>,
    sender_wake_pending: bool,
}

/// What a run's Homa hosts did, for the summary's `transport_counters`.
#[derive(Debug, Default, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Counters {
    grants: u64,
    resends: u64,
    sender_timeouts: u64,
}

/// The Homa transport: message table, hosts, senders and receivers.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct HomaTransport {
    params: HomaParams,
    messages: Vec<Message>,
    free: Vec<u32>,
    /// The partitioned model's receivers, indexed by the slot the message's packets carry.
    receivers: Vec<Message>,
    /// How table entries are numbered on the wire (the partitioned model's residue classes).
    numbering: SlotNumbering,
    hosts: Vec<Host>,
    counters: Counters,
    /// Scratch: the receiver's ranking.
    ranking: Vec<(u32, u32, u32)>,
}

impl HostTransport for HomaTransport {
    /// Starts message `f`: its unscheduled packets may go at once.
    fn start_flow(&mut self, f: &FlowArrival, fab: &mut Fabric) {
        let n = Bytes(f.size_bytes).packets();
        let slot = self.free.pop().unwrap_or_else(|| {
            self.messages.push(Message::default());
            (self.messages.len() - 1) as u32
        });
        let now = fab.now();
        let p = &self.params;
        let m = &mut self.messages[slot as usize];
        let mut received = std::mem::take(&mut m.received);
        let mut resend = std::mem::take(&mut m.resend);
        received.reset(n);
        resend.clear();
        *m = Message {
            id: f.id,
            active: true,
            src: f.src,
            dst: f.dst,
            size_bytes: f.size_bytes,
            n_pkts: n,
            unscheduled_level: p.unscheduled_level(f.size_bytes),
            granted: n.min(p.rtt_pkts),
            resend,
            scheduled_level: p.levels - 1,
            sender_activity: now,
            received,
            ..Message::default()
        };
        self.hosts[f.src as usize].sending.push(slot);
        self.wake_sender(f.src, now, fab);
    }

    /// A packet reached its destination host; frees it. Returns the completion when an ACK
    /// finishes its message.
    fn on_packet(&mut self, id: PacketId, fab: &mut Fabric) -> Option<Completion> {
        let p = *fab.pool.get(id);
        fab.deliver(id);
        let slot = if self.params.partitioned {
            self.apart_slot(&p)?
        } else {
            entry_holding(&self.messages, p.slot, p.flow)?
        };
        let now = fab.now();
        match p.kind {
            PacketKind::DATA => self.on_data(slot, p.seq, fab),
            GRANT | RESEND => {
                let m = &mut self.messages[slot as usize];
                m.heard = true;
                m.sender_activity = now;
                m.scheduled_level = p.header[LEVEL] as u8;
                let end = p.header[GRANTED].min(m.n_pkts);
                if p.kind == RESEND {
                    for seq in p.seq..end.min(m.next_seq) {
                        if !m.resend.contains(&seq) {
                            m.resend.push(seq);
                        }
                    }
                }
                m.granted = m.granted.max(end);
                let src = m.src;
                self.wake_sender(src, now, fab);
            }
            PacketKind::ACK => {
                let m = &mut self.messages[slot as usize];
                // The partitioned model's receiver counts its RESEND rounds apart.
                let timeouts = m.timeouts + p.header[RECEIVER_TIMEOUTS];
                let done = Completion::of(m.id, m.n_pkts, m.packets_sent, timeouts);
                m.active = false;
                let src = m.src;
                self.hosts[src as usize].sending.retain(|&s| s != slot);
                self.free.push(slot);
                return Some(done);
            }
            _ => {}
        }
        None
    }

    fn on_event(&mut self, code: u8, a: u32, b: u32, fab: &mut Fabric) {
        match HomaEvent::decode(code, a, b) {
            HomaEvent::SenderWake(host) => self.on_sender_wake(host, fab),
            HomaEvent::ReceiverTimer(slot, flow) => self.on_receiver_timer(slot, flow, fab),
            HomaEvent::SenderTimer(slot, flow) => self.on_sender_timer(slot, flow, fab),
        }
    }

    /// Numbers this transport's slots for partition `index` of `count` (module docs).
    /// The receiver's RESEND timeout (a sender waits twice it).
    fn recovery_timeout(&self, _net: &crate::topology::Network) -> SimTime {
        self.params.resend_timeout
    }
    fn set_partition(&mut self, index: u32, count: u32) {
        debug_assert!(self.params.partitioned, "only the partitioned model is partitioned");
        debug_assert!(self.messages.is_empty(), "set before any message starts");
        self.numbering = SlotNumbering::of_partition(index, count);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("grants", self.counters.grants),
            ("resends", self.counters.resends),
            ("sender_timeouts", self.counters.sender_timeouts),
        ]
    }
}

impl HomaTransport {
    /// A transport for `n_hosts` hosts.
    pub fn new(params: HomaParams, n_hosts: u32) -> Self {
        HomaTransport {
            params,
            messages: Vec::new(),
            free: Vec::new(),
            receivers: Vec::new(),
            numbering: SlotNumbering::default(),
            hosts: vec![Host::default(); n_hosts as usize],
            counters: Counters::default(),
            ranking: Vec::new(),
        }
    }

    /// The partitioned model: the table entry of packet `p`'s message at this end (`None`: a
    /// packet to ignore). A data packet goes to the receivers' table at the slot it carries,
    /// where its message replaces an earlier one; a grant, RESEND or ACK to this partition's
    /// senders. Out of line and cold, as pHost's.
    #[cold]
    #[inline(never)]
    fn apart_slot(&mut self, p: &Packet) -> Option<u32> {
        if p.kind == PacketKind::DATA {
            return receiving_entry(&mut self.receivers, p, p.header[LENGTH]);
        }
        sending_entry(&self.messages, self.numbering, p)
    }

    fn wake_sender(&mut self, host: u32, at: SimTime, fab: &mut Fabric) {
        let wake = HomaEvent::SenderWake(host).encode();
        schedule_nic_wake(&mut self.hosts[host as usize].sender_wake_pending, at, wake, fab);
    }

    /// The sender's NIC is free: one packet of the sendable message with the fewest payload
    /// bytes left to send.
    fn on_sender_wake(&mut self, host: u32, fab: &mut Fabric) {
        let wake = HomaEvent::SenderWake(host).encode();
        if !nic_free_on_wake(&mut self.hosts[host as usize].sender_wake_pending, host, wake, fab) {
            return;
        }
        let now = fab.now();
        let best = self.hosts[host as usize]
            .sending
            .iter()
            .map(|&slot| (&self.messages[slot as usize], slot))
            .filter(|(m, _)| m.sendable())
            .min_by_key(|(m, _)| (m.bytes_left(), m.id))
            .map(|(_, slot)| slot);
        let Some(slot) = best else { return };
        let m = &mut self.messages[slot as usize];
        let (seq, retransmit) = if m.resend.is_empty() {
            m.next_seq += 1;
            (m.next_seq - 1, false)
        } else {
            (m.resend.remove(0), true)
        };
        let size = Bytes(m.size_bytes).packet_wire_bytes(seq);
        let level = self.params.packet_level(m, seq);
        m.packets_sent += 1;
        m.sender_activity = now;
        let wire = self.numbering.wire(slot);
        let mut header = [0; 2];
        if self.params.partitioned {
            header[LENGTH] = m.n_pkts;
        }
        let data = Packet {
            class: level,
            priority: u64::from(level),
            retransmit,
            header,
            ..Packet::new(PacketKind::DATA, m.id, wire, m.src, m.dst, seq, size, now)
        };
        let (flow, pending) = (m.id, m.sender_timer_pending);
        m.sender_timer_pending = true;
        fab.inject(host, data);
        if !pending {
            let at = now + self.params.sender_timeout();
            fab.schedule(at, HomaEvent::SenderTimer(slot, flow).encode());
        }
        let next = fab.nic_idle_at(host).max(now + self.params.rate.tx_time(size as u64));
        self.wake_sender(host, next, fab);
    }

    /// A data packet reached the receiver: record it, ACK a complete message, and grant.
    fn on_data(&mut self, slot: u32, seq: u32, fab: &mut Fabric) {
        let now = fab.now();
        let (rtt_pkts, partitioned) = (self.params.rtt_pkts, self.params.partitioned);
        let table = if partitioned { &mut self.receivers } else { &mut self.messages };
        let m = &mut table[slot as usize];
        let dst = m.dst;
        if m.received_count == m.n_pkts {
            // Its ACK was lost and the sender timed out: acknowledge again.
            fab.inject(dst, ack(slot, m, now, partitioned));
            return;
        }
        if !m.known {
            m.known = true;
            m.receiver_granted = m.n_pkts.min(rtt_pkts);
            self.hosts[dst as usize].receiving.push(slot);
        }
        if m.received.insert(seq) {
            m.received_count += 1;
            m.last_arrival = now; // a duplicate does not put off a RESEND
        }
        if m.received_count == m.n_pkts {
            self.hosts[dst as usize].receiving.retain(|&s| s != slot);
            fab.inject(dst, ack(slot, m, now, partitioned));
        } else if !m.receiver_timer_pending {
            m.receiver_timer_pending = true;
            let at = now + self.params.resend_timeout;
            fab.schedule(at, HomaEvent::ReceiverTimer(slot, m.id).encode());
        }
        self.grant(dst, fab);
    }

    /// The receiver's grants (paper §3): the `overcommit` messages missing the fewest packets
    /// among those not yet wholly granted each get granted up to what they have received plus
    /// RTTbytes, at their scheduled level.
    fn grant(&mut self, host: u32, fab: &mut Fabric) {
        let now = fab.now();
        let p = &self.params;
        let mut ranking = std::mem::take(&mut self.ranking);
        ranking.clear();
        let table = if p.partitioned { &mut self.receivers } else { &mut self.messages };
        for &slot in &self.hosts[host as usize].receiving {
            let m = &table[slot as usize];
            if m.receiver_granted < m.n_pkts {
                ranking.push((m.n_pkts - m.received_count, m.id, slot));
            }
        }
        let chosen = (p.overcommit as usize).min(ranking.len());
        if chosen < ranking.len() {
            ranking.select_nth_unstable(chosen);
        }
        ranking[..chosen].sort_unstable();
        for (rank, &(_, _, slot)) in ranking[..chosen].iter().enumerate() {
            let level = p.scheduled_level(rank as u32, chosen as u32);
            let m = &mut table[slot as usize];
            let target = (m.received_count + p.rtt_pkts).min(m.n_pkts);
            if target <= m.receiver_granted && level == m.granted_level {
                continue;
            }
            m.receiver_granted = m.receiver_granted.max(target);
            m.granted_level = level;
            let mut header = [0; 2];
            (header[GRANTED], header[LEVEL]) = (m.receiver_granted, u32::from(level));
            let grant = Packet { header, ..control(GRANT, slot, m, m.dst, m.src, now) };
            self.counters.grants += 1;
            fab.inject(host, grant);
            if !m.receiver_timer_pending {
                // A lost grant leaves the message waiting for packets the sender may not
                // send: the timer then asks for them.
                m.receiver_timer_pending = true;
                fab.schedule(now + p.resend_timeout, HomaEvent::ReceiverTimer(slot, m.id).encode());
            }
        }
        self.ranking = ranking;
    }

    /// The receiver's resend timer: after `resend_timeout` without a packet of an incomplete
    /// message, a RESEND for each missing range below what it granted (paper §3).
    fn on_receiver_timer(&mut self, slot: u32, flow: u32, fab: &mut Fabric) {
        let now = fab.now();
        let timeout = self.params.resend_timeout;
        let table = if self.params.partitioned { &mut self.receivers } else { &mut self.messages };
        let m = &mut table[slot as usize];
        if !m.active || m.id != flow {
            return;
        }
        m.receiver_timer_pending = false;
        if m.received_count == m.n_pkts {
            return;
        }
        if now < m.last_arrival + timeout {
            m.receiver_timer_pending = true;
            fab.schedule(m.last_arrival + timeout, HomaEvent::ReceiverTimer(slot, flow).encode());
            return;
        }
        let mut seq = 0;
        let mut asked = false;
        while seq < m.receiver_granted {
            if m.received.contains(seq) {
                seq += 1;
                continue;
            }
            let start = seq;
            while seq < m.receiver_granted && !m.received.contains(seq) {
                seq += 1;
            }
            let mut header = [0; 2];
            (header[GRANTED], header[LEVEL]) = (seq, u32::from(m.granted_level));
            let resend = Packet {
                seq: start,
                header,
                ..control(RESEND, slot, m, m.dst, m.src, now)
            };
            self.counters.resends += 1;
            asked = true;
            fab.inject(m.dst, resend);
        }
        if asked {
            // Ask again if the answer is lost too.
            m.timeouts += 1;
            m.last_arrival = now;
            m.receiver_timer_pending = true;
            fab.schedule(now + timeout, HomaEvent::ReceiverTimer(slot, flow).encode());
        }
    }

    /// The sender's timer: a message with nothing to send and no word from its receiver for
    /// twice `resend_timeout` sends its first packet again when the receiver may not know it (it
    /// never answered) or may have lost its ACK (every packet sent).
    fn on_sender_timer(&mut self, slot: u32, flow: u32, fab: &mut Fabric) {
        let now = fab.now();
        let timeout = self.params.sender_timeout();
        let m = &mut self.messages[slot as usize];
        if !m.active || m.id != flow {
            return;
        }
        let due = m.sender_activity + timeout;
        if now < due || m.sendable() {
            // Not yet due, or only waiting for the NIC: look again later.
            let at = if now < due { due } else { now + timeout };
            fab.schedule(at, HomaEvent::SenderTimer(slot, flow).encode());
            return;
        }
        m.sender_timer_pending = false; // the next transmission sets it again
        if !m.heard || m.next_seq == m.n_pkts {
            m.resend.push(0);
            m.timeouts += 1;
            self.counters.sender_timeouts += 1;
            let src = m.src;
            self.wake_sender(src, now, fab);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(levels: u8, scheduled: u8, cutoffs: Vec<u64>) -> HomaParams {
        HomaParams {
            rate: BitRate::from_gbps(10.0),
            rtt_pkts: 7,
            rtt_bytes: 10_000,
            bytes_left: false,
            levels,
            scheduled_levels: scheduled,
            overcommit: scheduled as u32,
            cutoffs,
            resend_timeout: SimTime::from_ns(1_000_000),
            partitioned: false,
        }
    }

    /// Issue 18, item 2 (unscheduled priority from cutoffs): with cutoffs 2000, 5000 and
    /// 50,000 B, a message goes to the first level whose cutoff it does not exceed.
    #[test]
    fn unscheduled_level_from_cutoffs() {
        let p = params(8, 4, vec![2000, 5000, 50_000]);
        let levels: Vec<u8> = [1, 2000, 2001, 5000, 5001, 50_000, 50_001, 10_000_000]
            .iter()
            .map(|&s| p.unscheduled_level(s))
            .collect();
        assert_eq!(levels, [0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(params(8, 7, vec![]).unscheduled_level(1_000_000), 0);
    }

    /// The `bytes-left` rule: with cutoffs 2000 and 5000 B (three unscheduled levels, five
    /// scheduled), a 20,000 B message (14 packets, the last of 1020 B) at scheduled level 6.
    /// Its unscheduled packets 0-6 have 20,000 down to 11,240 bytes left: level 2. Packet 7
    /// has 9780 bytes left, 10,060 B on the wire with its 7 headers: scheduled, level 6.
    /// Packets 8-13 (8320, 6860, 5400, 3940, 2480, 1020 left; 8560 B on the wire from packet
    /// 8) go at the unscheduled level of what is left: 2, 2, 2, 1, 1, 0. Under
    /// `message-size` the first 7 take the message's level (2) and the rest level 6.
    #[test]
    fn bytes_left_sets_the_levels_of_a_message_nearing_its_end() {
        let mut p = params(8, 5, vec![2000, 5000]);
        let m = Message {
            size_bytes: 20_000,
            n_pkts: 14,
            unscheduled_level: p.unscheduled_level(20_000),
            scheduled_level: 6,
            ..Message::default()
        };
        let levels = |p: &HomaParams| (0..14).map(|seq| p.packet_level(&m, seq)).collect::<Vec<u8>>();
        assert_eq!(levels(&p), [2, 2, 2, 2, 2, 2, 2, 6, 6, 6, 6, 6, 6, 6]);
        p.bytes_left = true;
        assert_eq!(levels(&p), [2, 2, 2, 2, 2, 2, 2, 6, 2, 2, 2, 1, 1, 0]);
        // A one-packet message of 1460 B: its bytes left fit the first cutoff.
        let one = Message { size_bytes: 1460, n_pkts: 1, ..Message::default() };
        assert_eq!(p.packet_level(&one, 0), 0);
    }

    /// Issue 18, item 2 (scheduled priorities): k messages granted at once use the k lowest
    /// of the scheduled levels, the best-ranked the highest of them; beyond the scheduled
    /// levels the rest share the lowest.
    #[test]
    fn scheduled_levels_are_the_lowest_the_best_ranked_highest() {
        let p = params(8, 4, vec![]);
        assert_eq!(p.scheduled_level(0, 1), 7);
        assert_eq!((p.scheduled_level(0, 2), p.scheduled_level(1, 2)), (6, 7));
        let four: Vec<u8> = (0..4).map(|r| p.scheduled_level(r, 4)).collect();
        assert_eq!(four, [4, 5, 6, 7]);
        let six: Vec<u8> = (0..6).map(|r| p.scheduled_level(r, 6)).collect();
        assert_eq!(six, [4, 5, 6, 7, 7, 7]);
    }
}
