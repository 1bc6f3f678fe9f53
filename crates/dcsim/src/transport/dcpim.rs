//! dcPIM (Cai, Arashloo and Agarwal, "dcPIM: Near-Optimal Proactive Datacenter Transport",
//! SIGCOMM'22, doi:10.1145/3544216.3544235): receivers and senders match themselves in a few
//! rounds of parallel iterative matching per epoch, and the matched channels carry
//! token-scheduled data while the next matching runs. The paper's text was not available to
//! this implementation; the mechanism and every parameter follow the authors' artifact
//! (Terabit-Ethernet/dcPIM, `simulator/`, a YAPS derivative): `ext/pimhost.cpp` (epochs, rounds,
//! requests, grants, accepts, data links, tokens), `ext/pimflow.cpp` (RTS, short flows, token
//! expiry, re-sends), the topologies' parameter set-up (round, epoch, BDP, channel size) and
//! `run/params.cpp` (`packet_priority`); the run settings of its Figure 6 experiments
//! (`py/pim_k_iterations/`).
//!
//! * **Time.** Epochs run on one global grid (the artifact starts every host's epochs
//!   together). A round lasts β control-packet round trips (R = β·cRTT); an epoch's matching
//!   phase is r rounds, its data phase α·r rounds, and a new matching starts every P = α·r·R,
//!   so the matching of epoch e+1 overlaps the data phase of epoch e (the artifact's
//!   pipelining).
//! * **Matching.** A host has k channels as a receiver and k as a sender, each worth 1/k of
//!   its link. At the start of round j a receiver with channels left
//!   sends each sender it has a pending flow from one REQUEST for its shortest flow from that
//!   sender (fewest packets still missing), asking for the channels that flow needs for one data
//!   phase (⌈remaining / link_pkts⌉, link_pkts = P / (k·MTU time)) minus the channels it already
//!   has to that sender, at most its channels left. Half a round later a sender grants its
//!   channels left to the requests of that round: shortest flow first in the first
//!   `shortest_first_rounds` rounds, uniformly at random afterwards (each host draws from its own
//!   seeded stream, over the requests sorted by host, so a choice never depends on the order in
//!   which packets of different hosts arrived). At the end of the round the receiver accepts
//!   grants by the same rule and tells each sender (ACCEPT); a sender that finds itself
//!   accepted beyond k channels (an ACCEPT that arrived after it granted again) returns the
//!   excess (RELEASE). Only packets carry this: a host knows of another only what their
//!   requests, grants and accepts told it.
//! * **Data.** When its matching ends a receiver's accepted channels become its data
//!   links for the next P: the link to a sender with c channels sends a TOKEN every k/c MTU
//!   times, for the receiver's shortest unfinished flow from that sender, naming the next
//!   missing packet (round robin) and valid until the end of the data phase (plus half a
//!   control round trip and k MTU times, as the artifact). A flow keeps at most
//!   `token_window_bdp`·BDP·c/k tokens unanswered; a full window waits
//!   `token_window_timeout_bdp` BDP times after its last token and then slides. A sender
//!   sends, whenever its NIC is free, the packet of its best valid token (unscheduled first,
//!   then fewest packets remaining at the receiver, then the earlier flow). The artifact ranks
//!   a receiver's tokens first by the rank of its link there; dcsim's tokens carry no rank (a
//!   sender's accepted channels never ask for more than its line rate together, so the rank
//!   only orders tokens that wait at the same time).
//! * **Short flows.** A flow of at most `unscheduled_bdp`·BDP packets sends all its
//!   packets at once, unscheduled, with its announcement (RTS); its receiver leaves that many
//!   token slots unused (`hold`). Data carries a size-based priority: 1 for flows of at most a
//!   BDP, one more per factor of BDP (1 + ⌈log_BDP(size)⌉, at most 6, the artifact's
//!   `packet_priority`); control packets go at 0. Switches are pFabric-style priority ports.
//! * **Loss recovery.** Once every missing packet of a flow has had a token,
//!   the receiver waits `resend_timeout_bdp` BDP times, during which the flow neither gets tokens
//!   nor requests channels, and then issues tokens again for the packets still missing. A
//!   short flow enters that wait when its RTS (or first packet) arrives. When every packet has
//!   arrived the receiver sends one ACK; the flow completes when it reaches the sender.
//!
//! The round length, the BDP and the data phase derive from the fabric at the first flow or
//! packet (the artifact's formulas: cRTT from a 40-byte packet, BDP from an MTU packet,
//! store-and-forward over the longest path from host 0), unless `[dcpim]` fixes them.
//!
//! The partitioned model (`engine.partitioned`; docs/parallel.md): a flow's sender and
//! receiver may run in different partitions, on different threads, so they share no table
//! entry and learn from packets only. Every other piece of state is already a host's own (its
//! matching, links, tokens and random stream) and the epochs run on one global grid, so nothing
//! else changes. The senders keep their flows in their own table and number its slots in their
//! partition's residue class (as pHost's), so a slot names one open flow in the whole run; the
//! receivers keep theirs, indexed by that slot, and learn a flow from its RTS or any data
//! packet, both of which carry its length in packets (a data packet in its second header
//! word); an entry is replaced only by a later flow of the same slot. The ACK carries the
//! receiver's re-issue count (first header word), which the sender adds to the flow's record.

use super::{
    entry_holding, nic_free_on_wake, receiving_entry, receiving_table, schedule_nic_wake, sending_entry,
    Completion, HostTransport, Parts, PortPlan, Protocol, SlotNumbering, SourceTimer,
    TransportEvent,
};
use crate::fabric::Fabric;
use crate::packet::{Packet, PacketId, PacketKind, SeqSet};
use crate::spec::{DcpimSpec, Spec};
use crate::streams::Stream;
use crate::topology::Network;
use crate::units::{Bytes, CONTROL_BYTES, MTU_BYTES};
use crate::workload::FlowArrival;
use dcsim_engine::{Rng, SimTime};

/// A new flow announces itself to its receiver. Header: its size in packets.
pub const RTS: PacketKind = PacketKind::control(0);
/// Receiver → sender: channels for one flow. `seq`: the flow's packets still missing; header:
/// epoch, round << 16 | channels.
pub const REQUEST: PacketKind = PacketKind::control(1);
/// Sender → receiver: channels granted to a request (same fields).
pub const GRANT: PacketKind = PacketKind::control(2);
/// Receiver → sender: channels of a grant accepted. Header: epoch, round << 16 | channels.
pub const ACCEPT: PacketKind = PacketKind::control(3);
/// Sender → receiver: accepted channels beyond k given back. Header: epoch, channels.
pub const RELEASE: PacketKind = PacketKind::control(4);
/// Receiver → sender: send packet `seq`. Header: token number, packets still missing;
/// `timestamp`: when the token expires.
pub const TOKEN: PacketKind = PacketKind::control(5);

/// Header word of a data packet in the partitioned model: the flow's length in packets (the
/// first word is the token's number).
const LENGTH: usize = 1;
/// Header word of an ACK in the partitioned model: the receiver's token re-issues.
const RECEIVER_REISSUES: usize = 0;

/// Highest data priority (the artifact caps its size classes at 6).
const MAX_DATA_PRIORITY: u64 = 6;

crate::transport_events! {
    /// dcPIM's clocks.
    pub enum DcpimEvent {
        /// Host `.0`'s matching clock: a round boundary (accept, request, or install links).
        Round(host) = 0,
        /// Host `.0` grants the requests of the current round (half a round in).
        Grant(host) = 1,
        /// Host `.0`'s data link `.1 & 0xff` (tick number `.1 >> 8`) may send a token.
        Token(host, tag) = 2,
        /// Host `.0`'s NIC is free: send the next packet.
        SenderWake(host) = 3,
        /// The source timer of the flow in slot `.0` (flow id `.1`), when `source_timeout_bdp`
        /// is set.
        SourceTimer(slot, flow) = 4,
    }
}

/// `transport.protocol = "dcpim"`.
#[derive(Debug)]
pub struct DcpimProtocol;

impl Protocol for DcpimProtocol {
    type Host = DcpimTransport;

    /// dcPIM's hosts over pFabric-style priority ports (the artifact's `queue_type: 2`).
    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        let ports = PortPlan::priority_drop(spec);
        let mut host = DcpimTransport::new(&spec.dcpim, spec.topology.n_hosts(), spec.seed);
        host.partitioned = spec.engine.partitioned;
        Parts::packets(host, ports)
    }
}

/// dcPIM's timing in absolute units, from `[dcpim]` and the fabric.
#[derive(Copy, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Timing {
    /// One MTU transmission time at the host rate.
    pub t_pkt: SimTime,
    /// The control-packet round trip.
    pub control_rtt: SimTime,
    /// One matching round, β·cRTT.
    pub round: SimTime,
    /// Between two matchings (and one data phase), α·r rounds.
    pub period: SimTime,
    /// The bandwidth-delay product, packets.
    pub bdp: u32,
    /// Packets one channel carries in a data phase (P / (k·MTU time), at least 1).
    pub link_pkts: u32,
    /// Flows of at most this many packets go unscheduled.
    pub unscheduled_pkts: u32,
    /// Tokens outstanding per flow on a k-channel link.
    pub window_pkts: u32,
    /// How long a full window waits before it slides.
    pub window_timeout: SimTime,
    /// The wait before tokens are issued again for missing packets.
    pub resend_timeout: SimTime,
    /// How long a silent sender waits before it sends its RTS again (`None`: never, as the
    /// artifact).
    pub source_timeout: Option<SimTime>,
}

impl Timing {
    /// The timing for `host_rate`'s MTU time `t_pkt`, a control round trip `control_rtt` and an
    /// MTU round trip `mtu_rtt` (the fabric's, used unless `d` fixes the cRTT or the BDP).
    pub fn new(d: &DcpimSpec, t_pkt: SimTime, control_rtt: SimTime, mtu_rtt: SimTime) -> Self {
        let control_rtt = if d.control_rtt_us > 0.0 {
            SimTime((d.control_rtt_us * 1e6).round() as u64)
        } else {
            control_rtt
        };
        let bdp = if d.bdp_packets > 0 {
            d.bdp_packets
        } else {
            mtu_rtt.as_ps().div_ceil(t_pkt.as_ps().max(1)).max(1) as u32
        };
        let round = SimTime((d.beta * control_rtt.as_ps() as f64).round().max(1.0) as u64);
        let period = SimTime((d.alpha * d.rounds as f64 * round.as_ps() as f64).round() as u64);
        let bdp_time = |x: f64| SimTime((x * bdp as f64 * t_pkt.as_ps() as f64).round() as u64);
        Timing {
            t_pkt,
            control_rtt,
            round,
            period,
            bdp,
            link_pkts: (period.as_ps() / (t_pkt.as_ps() * d.channels as u64).max(1)).max(1) as u32,
            unscheduled_pkts: (d.unscheduled_bdp * bdp as f64).floor() as u32,
            window_pkts: (d.token_window_bdp * bdp as f64).floor() as u32,
            window_timeout: bdp_time(d.token_window_timeout_bdp),
            resend_timeout: bdp_time(d.resend_timeout_bdp),
            source_timeout: (d.source_timeout_bdp > 0.0).then(|| bdp_time(d.source_timeout_bdp)),
        }
    }

    /// From the fabric: the MTU time at host 0's NIC, and the round trips of a control and an
    /// MTU packet, store-and-forward, over the longest path from host 0 and back (the
    /// artifact's `get_control_pkt_rtt(143)` and `BDP`).
    pub fn of_fabric(d: &DcpimSpec, net: &Network) -> Self {
        let t_pkt = net.ports[net.nic(0) as usize].rate.tx_time(MTU_BYTES as u64);
        let (mut control, mut mtu) = (0u64, 0u64);
        for h in 1..net.n_hosts() {
            let trip = |bytes: u64| -> u64 {
                let there = net.path(0, h);
                let back = net.path(h, 0);
                there
                    .iter()
                    .chain(&back)
                    .map(|&p| {
                        let pt = &net.ports[p as usize];
                        pt.delay.as_ps() + pt.rate.tx_time(bytes).as_ps()
                    })
                    .sum()
            };
            control = control.max(trip(CONTROL_BYTES as u64));
            mtu = mtu.max(trip(MTU_BYTES as u64));
        }
        Timing::new(d, t_pkt, SimTime(control), SimTime(mtu))
    }

    /// When round `j` of epoch `e` begins.
    fn round_start(&self, e: u64, j: u32) -> SimTime {
        SimTime(e * self.period.as_ps() + j as u64 * self.round.as_ps())
    }

    /// A data packet's priority: 1 up to a BDP, one more per factor of BDP (at most 6).
    pub fn data_priority(&self, n_pkts: u32) -> u64 {
        let base = self.bdp.max(2) as u64;
        let (mut priority, mut size) = (1, base);
        while (n_pkts as u64) > size && priority < MAX_DATA_PRIORITY {
            size = size.saturating_mul(base);
            priority += 1;
        }
        priority
    }
}

/// `[dcpim]`'s matching settings the hosts use.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct MatchParams {
    rounds: u32,
    channels: u32,
    shortest_first_rounds: u32,
    hold: bool,
}

/// One flow, both ends (one slot, as in pHost); in the partitioned model, one end's.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Flow {
    id: u32,
    active: bool,
    src: u32,
    dst: u32,
    size_bytes: u64,
    n_pkts: u32,
    // sender
    packets_sent: u32,
    /// Packets still missing at the receiver, as its last token said.
    remaining_at_sender: u32,
    /// The sender's guard against a lost RTS or ACK (`source_timeout_bdp`).
    source_timer: SourceTimer,
    // receiver
    known: bool,
    done_at_receiver: bool,
    received: SeqSet,
    received_count: u32,
    tokens_sent: u32,
    /// Largest token number answered by a data packet, plus one.
    responded: u32,
    last_token: SimTime,
    /// While set and in the future: waiting before tokens are issued again.
    resend_at: Option<SimTime>,
    next_request: u32,
    reissues: u32,
}

// A receiver's entry in the partitioned model: learned from an RTS or a data packet.
impl_receiving_entry!(Flow);

impl Flow {
    fn missing(&self) -> u32 {
        self.n_pkts - self.received_count
    }

    /// The first missing packet at or after `from`, wrapping around.
    fn next_missing(&self, from: u32) -> u32 {
        let mut seq = from % self.n_pkts;
        while self.received.contains(seq) {
            seq = (seq + 1) % self.n_pkts;
        }
        seq
    }

    /// May it get tokens or request channels now?
    fn eligible(&self, now: SimTime) -> bool {
        self.known && !self.done_at_receiver && self.resend_at.is_none_or(|t| t <= now)
    }
}

/// A request or a grant a host holds for the current round.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Offer {
    peer: u32,
    slot: u32,
    flow: u32,
    channels: u32,
    remaining: u32,
}

/// Channels accepted from one sender in the matching under way.
#[derive(Copy, Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Accepted {
    sender: u32,
    channels: u32,
    shortest: u32,
}

/// What a data link's token clock is doing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum LinkState {
    Idle,
    Ticking,
    /// Waiting for a window timeout; an answered token may wake it early.
    Waiting,
}

/// A receiver's data link to one sender for the current data phase.
#[derive(Copy, Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Link {
    sender: u32,
    channels: u32,
    state: LinkState,
    tick: u32,
}

/// A token held by a sender.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct HeldToken {
    /// 0 for the free tokens of an unscheduled flow, 1 for a receiver's token.
    class: u8,
    flow: u32,
    order: u64,
    slot: u32,
    data_seq: u32,
    token_seq: u32,
    expiry: SimTime,
}

/// Per-host state, both roles.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Host {
    rng: Rng,
    // receiver
    receiving: Vec<u32>,
    clock_pending: bool,
    /// The epoch being matched and the round whose requests went out.
    matching: Option<(u64, u32)>,
    accepted: Vec<Accepted>,
    accepted_channels: u32,
    grants: Vec<Offer>,
    links: Vec<Link>,
    /// The epoch whose matching installed `links`.
    data_epoch: u64,
    ticks: u32,
    hold: u32,
    // sender
    requests: Vec<Offer>,
    requests_for: (u64, u32),
    grant_at: Option<SimTime>,
    sender_epoch: u64,
    sender_channels: u32,
    tokens: Vec<HeldToken>,
    wake_pending: bool,
}

/// What dcPIM's mechanisms cost, for the summary's `transport_counters`.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
struct DcpimStats {
    requests: u64,
    grants: u64,
    accepts: u64,
    releases: u64,
    matched_channels: u64,
    tokens: u64,
    tokens_expired: u64,
    rts_resent: u64,
    acks_resent: u64,
}

/// The dcPIM transport.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct DcpimTransport {
    spec: DcpimSpec,
    params: MatchParams,
    timing: Option<Timing>,
    /// The flows' table: both ends' in the sequential model, the senders' in the partitioned.
    flows: Vec<Flow>,
    free: Vec<u32>,
    /// The partitioned model's variant (`engine.partitioned`, module docs): separate sender and
    /// receiver tables.
    partitioned: bool,
    /// The partitioned model's receivers, indexed by the slot the flow's packets carry.
    receivers: Vec<Flow>,
    /// How table entries are numbered on the wire (the partitioned model's residue classes).
    numbering: SlotNumbering,
    hosts: Vec<Host>,
    token_order: u64,
    stats: DcpimStats,
}

impl HostTransport for DcpimTransport {
    fn start_flow(&mut self, f: &FlowArrival, fab: &mut Fabric) {
        self.set_timing(fab);
        let n = Bytes(f.size_bytes).packets();
        let slot = self.free.pop().unwrap_or_else(|| {
            self.flows.push(Flow::default());
            (self.flows.len() - 1) as u32
        });
        let fl = &mut self.flows[slot as usize];
        let mut received = std::mem::take(&mut fl.received);
        received.reset(n);
        *fl = Flow {
            id: f.id,
            active: true,
            src: f.src,
            dst: f.dst,
            size_bytes: f.size_bytes,
            n_pkts: n,
            remaining_at_sender: n,
            received,
            ..Flow::default()
        };
        let now = fab.now();
        fl.source_timer = SourceTimer::started(now);
        if let Some(timeout) = self.timing().source_timeout {
            fab.schedule(now + timeout, DcpimEvent::SourceTimer(slot, f.id).encode());
        }
        fab.inject(f.src, self.rts(slot, now));
        if n <= self.timing().unscheduled_pkts {
            let h = &mut self.hosts[f.src as usize];
            for seq in 0..n {
                self.token_order += 1;
                h.tokens.push(HeldToken {
                    class: 0,
                    flow: f.id,
                    order: self.token_order,
                    slot,
                    data_seq: seq,
                    token_seq: seq,
                    expiry: SimTime::MAX,
                });
            }
            self.wake_sender(f.src, now, fab);
        }
    }

    fn on_packet(&mut self, id: PacketId, fab: &mut Fabric) -> Option<Completion> {
        let p = *fab.pool.get(id);
        fab.deliver(id);
        // The slot of this end's entry: the receiving end indexes its table by the slot on the
        // wire (the same in the sequential model), the sending end by its own entry.
        let slot = if self.partitioned {
            self.set_timing(fab); // a partition may hear of a flow before it starts one
            self.apart_slot(&p)?
        } else {
            entry_holding(&self.flows, p.slot, p.flow)?
        };
        match p.kind {
            RTS => {
                let fl = &self.receiving_flows()[p.slot as usize];
                if p.retransmit && fl.known && fl.done_at_receiver {
                    // A sender that lost the ACK asks again (`source_timeout_bdp`). A first
                    // RTS can arrive after all the data it announced (another path), and is
                    // ignored then, as in the artifact.
                    self.stats.acks_resent += 1;
                    self.send_ack(p.slot, fab);
                } else {
                    self.know(p.slot, fab);
                }
            }
            PacketKind::DATA => self.on_data(&p, fab),
            REQUEST => self.on_request(&p, fab),
            GRANT => self.on_grant(&p),
            ACCEPT => self.on_accept(&p, fab),
            RELEASE => self.on_release(&p),
            TOKEN => {
                let fl = &mut self.flows[slot as usize];
                fl.remaining_at_sender = p.header[1];
                fl.source_timer.token(fab.now());
                let h = &mut self.hosts[p.dst as usize];
                self.token_order += 1;
                h.tokens.push(HeldToken {
                    class: 1,
                    flow: p.flow,
                    order: self.token_order,
                    slot,
                    data_seq: p.seq,
                    token_seq: p.header[0],
                    expiry: p.timestamp,
                });
                self.wake_sender(p.dst, fab.now(), fab);
            }
            PacketKind::ACK => {
                let fl = &mut self.flows[slot as usize];
                // The partitioned model's receiver counts its re-issues apart (0 otherwise).
                let reissues = fl.reissues + p.header[RECEIVER_REISSUES];
                let done = Completion::of(fl.id, fl.n_pkts, fl.packets_sent, reissues);
                fl.active = false;
                self.free.push(slot);
                return Some(done);
            }
            _ => {}
        }
        None
    }

    fn on_event(&mut self, code: u8, a: u32, b: u32, fab: &mut Fabric) {
        match DcpimEvent::decode(code, a, b) {
            DcpimEvent::Round(host) => self.on_round(host, fab),
            DcpimEvent::Grant(host) => self.on_grant_time(host, fab),
            DcpimEvent::Token(host, tag) => self.on_token_tick(host, tag, fab),
            DcpimEvent::SenderWake(host) => self.on_sender_wake(host, fab),
            DcpimEvent::SourceTimer(slot, flow) => self.on_source_timer(slot, flow, fab),
        }
    }

    /// A full token window slides after `window_timeout`; missing packets get tokens again
    /// after `resend_timeout`; a flow left out of a matching waits for the next one to end,
    /// up to a period and a matching phase (over a millisecond with α near its largest).
    fn recovery_timeout(&self, net: &Network) -> SimTime {
        let t = self.timing.unwrap_or_else(|| Timing::of_fabric(&self.spec, net));
        let next_matching = t.period + SimTime(t.round.as_ps() * u64::from(self.params.rounds));
        let source = t.source_timeout.unwrap_or(SimTime::ZERO);
        t.window_timeout.max(t.resend_timeout).max(next_matching).max(source)
    }

    /// Numbers this transport's slots for partition `index` of `count` (module docs).
    fn set_partition(&mut self, index: u32, count: u32) {
        debug_assert!(self.partitioned, "only the partitioned model is partitioned");
        debug_assert!(self.flows.is_empty(), "set before any flow starts");
        self.numbering = SlotNumbering::of_partition(index, count);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let s = &self.stats;
        let mut counters = vec![
            ("requests", s.requests),
            ("grants", s.grants),
            ("accepts", s.accepts),
            ("releases", s.releases),
            ("matched_channels", s.matched_channels),
            ("tokens", s.tokens),
            ("tokens_expired", s.tokens_expired),
        ];
        if self.spec.source_timeout_bdp > 0.0 {
            counters.extend([("rts_resent", s.rts_resent), ("acks_resent", s.acks_resent)]);
        }
        counters
    }
}

impl DcpimTransport {
    /// A transport for `n_hosts` hosts; host `h` draws its random choices from its own part
    /// of the `seed`'s matching stream.
    pub fn new(spec: &DcpimSpec, n_hosts: u32, seed: u64) -> Self {
        let host = |h: u32| Host {
            rng: Stream::DcpimMatching.host_rng(seed, h),
            receiving: Vec::new(),
            clock_pending: false,
            matching: None,
            accepted: Vec::new(),
            accepted_channels: 0,
            grants: Vec::new(),
            links: Vec::new(),
            data_epoch: 0,
            ticks: 0,
            hold: 0,
            requests: Vec::new(),
            requests_for: (0, 0),
            grant_at: None,
            sender_epoch: 0,
            sender_channels: 0,
            tokens: Vec::new(),
            wake_pending: false,
        };
        DcpimTransport {
            spec: spec.clone(),
            params: MatchParams {
                rounds: spec.rounds,
                channels: spec.channels,
                shortest_first_rounds: spec.shortest_first_rounds,
                hold: spec.hold,
            },
            timing: None,
            flows: Vec::new(),
            free: Vec::new(),
            partitioned: false,
            receivers: Vec::new(),
            numbering: SlotNumbering::default(),
            hosts: (0..n_hosts).map(host).collect(),
            token_order: 0,
            stats: DcpimStats::default(),
        }
    }

    /// The timing (set at the first flow or packet).
    pub fn timing(&self) -> &Timing {
        self.timing.as_ref().expect("set when the first flow starts")
    }

    /// Derives the timing from the fabric unless it is known.
    fn set_timing(&mut self, fab: &Fabric) {
        if self.timing.is_none() {
            self.timing = Some(Timing::of_fabric(&self.spec, &fab.net));
        }
    }

    /// The receiving end's table: the receivers' own in the partitioned model, else the shared
    /// one.
    fn receiving_flows(&mut self) -> &mut Vec<Flow> {
        receiving_table(self.partitioned, &mut self.flows, &mut self.receivers)
    }

    /// The partitioned model: the table entry of packet `p`'s flow at this end (`None`: a
    /// packet to ignore). An RTS or a data packet goes to the receivers' table at the slot it
    /// carries, where its flow replaces an earlier one; a grant or a release (sender to
    /// receiver) must find its flow there; a request, accept, token or ACK goes to this
    /// partition's senders. Out of line and cold, as pHost's.
    #[cold]
    #[inline(never)]
    fn apart_slot(&mut self, p: &Packet) -> Option<u32> {
        match p.kind {
            RTS => receiving_entry(&mut self.receivers, p, p.header[0]),
            PacketKind::DATA => receiving_entry(&mut self.receivers, p, p.header[LENGTH]),
            GRANT | RELEASE => entry_holding(&self.receivers, p.slot, p.flow),
            _ => {
                sending_entry(&self.flows, self.numbering, p)
            }
        }
    }

    // ---- receiver: learning flows, data, ACK ----

    /// The receiver learns of a flow (its RTS, or a first data packet).
    /// The RTS of the sender's flow in `slot`: its size in packets.
    fn rts(&self, slot: u32, now: SimTime) -> Packet {
        let fl = &self.flows[slot as usize];
        Packet {
            header: [fl.n_pkts, 0],
            ..Packet::new(RTS, fl.id, self.numbering.wire(slot), fl.src, fl.dst, 0, CONTROL_BYTES, now)
        }
    }

    /// The receiver has every packet of the flow in `slot`: one ACK to the sender (carrying the
    /// receiver's re-issues in the partitioned model, whose sender's entry is not this one).
    fn send_ack(&mut self, slot: u32, fab: &mut Fabric) {
        let now = fab.now();
        let partitioned = self.partitioned;
        let fl = &self.receiving_flows()[slot as usize];
        let mut ack = Packet::new(PacketKind::ACK, fl.id, slot, fl.dst, fl.src, 0, CONTROL_BYTES, now);
        if partitioned {
            ack.header[RECEIVER_REISSUES] = fl.reissues;
        }
        fab.inject(fl.dst, ack);
    }

    /// The source timer of flow `flow` in `slot` (`source_timeout_bdp`; [`SourceTimer`] says
    /// when it sends the RTS again). It runs until the flow's ACK arrives.
    fn on_source_timer(&mut self, slot: u32, flow: u32, fab: &mut Fabric) {
        let now = fab.now();
        let Some(timeout) = self.timing().source_timeout else { return };
        let fl = &mut self.flows[slot as usize];
        if !fl.active || fl.id != flow {
            return;
        }
        let (resend, next) = fl.source_timer.fire(now, timeout, fl.packets_sent >= fl.n_pkts);
        if resend {
            let src = fl.src;
            fab.inject(src, Packet { retransmit: true, ..self.rts(slot, now) });
            self.stats.rts_resent += 1;
        }
        fab.schedule(next, DcpimEvent::SourceTimer(slot, flow).encode());
    }

    fn know(&mut self, slot: u32, fab: &mut Fabric) {
        let now = fab.now();
        let t = *self.timing();
        let fl = &mut self.receiving_flows()[slot as usize];
        if fl.known {
            return;
        }
        fl.known = true;
        let (dst, src, n) = (fl.dst, fl.src, fl.n_pkts);
        if n <= t.unscheduled_pkts {
            // Every packet already had its (free) token: wait as after a full pass.
            fl.tokens_sent = n;
            fl.next_request = 0;
            fl.resend_at = Some(now + SimTime(t.t_pkt.as_ps() * n as u64) + t.resend_timeout);
            if self.params.hold {
                self.hosts[dst as usize].hold = n;
            }
        }
        self.hosts[dst as usize].receiving.push(slot);
        self.wake_clock(dst, fab);
        self.wake_link(dst, src, fab);
    }

    fn on_data(&mut self, p: &Packet, fab: &mut Fabric) {
        self.know(p.slot, fab);
        let window = self.timing().window_pkts;
        let fl = &mut self.receiving_flows()[p.slot as usize];
        fl.responded = fl.responded.max(p.header[0] + 1);
        if !fl.received.insert(p.seq) {
            return;
        }
        fl.received_count += 1;
        let (src, dst) = (fl.src, fl.dst);
        if fl.received_count == fl.n_pkts {
            fl.done_at_receiver = true;
            self.hosts[dst as usize].receiving.retain(|&s| s != p.slot);
            self.send_ack(p.slot, fab);
        } else if fl.tokens_sent - fl.responded.min(fl.tokens_sent) <= window {
            self.wake_link(dst, src, fab);
        }
    }

    // ---- receiver: the matching clock ----

    /// Starts the receiver's matching clock at the next round boundary, if it is not running.
    fn wake_clock(&mut self, host: u32, fab: &mut Fabric) {
        if self.hosts[host as usize].clock_pending {
            return;
        }
        let at = self.next_boundary(fab.now(), true);
        self.hosts[host as usize].clock_pending = true;
        fab.schedule(at, DcpimEvent::Round(host).encode());
    }

    /// The next round boundary (a round's start or a matching's end) after `t`, or at `t` when
    /// `inclusive`.
    fn next_boundary(&self, t: SimTime, inclusive: bool) -> SimTime {
        let tm = self.timing();
        let e = t.as_ps() / tm.period.as_ps();
        (0..=self.params.rounds)
            .map(|j| tm.round_start(e, j))
            .chain([tm.round_start(e + 1, 0)])
            .find(|&b| b > t || (inclusive && b == t))
            .expect("the next epoch's start is later")
    }

    /// A round boundary at the receiver: install the links of a finished matching, accept the
    /// grants of the round that ended, send the requests of the round that begins.
    fn on_round(&mut self, host: u32, fab: &mut Fabric) {
        let now = fab.now();
        let tm = *self.timing();
        let r = self.params.rounds;
        self.hosts[host as usize].clock_pending = false;
        let (p, rr) = (tm.period.as_ps(), tm.round.as_ps());
        // The end of a matching phase (r rounds after an epoch's start).
        let span = rr * r as u64;
        if now.as_ps() >= span && (now.as_ps() - span).is_multiple_of(p) {
            let e = (now.as_ps() - span) / p;
            if self.hosts[host as usize].matching.is_some_and(|(me, _)| me == e) {
                self.accept_grants(host, r - 1, fab);
                self.install(host, e, fab);
            }
        }
        // The start of round j of epoch e.
        let (e, offset) = (now.as_ps() / p, now.as_ps() % p);
        if offset.is_multiple_of(rr) && offset / rr < r as u64 {
            let j = (offset / rr) as u32;
            let h = &mut self.hosts[host as usize];
            match h.matching {
                Some((me, last)) if me == e && j > 0 && last + 1 == j => {
                    self.accept_grants(host, j - 1, fab);
                }
                _ => {
                    // A new epoch (or a clock that starts mid-epoch): nothing accepted yet.
                    h.accepted.clear();
                    h.accepted_channels = 0;
                    h.grants.clear();
                }
            }
            self.hosts[host as usize].matching = Some((e, j));
            self.send_requests(host, e, j, fab);
        }
        let h = &self.hosts[host as usize];
        if !h.receiving.is_empty() || h.matching.is_some() || !h.links.is_empty() {
            let at = self.next_boundary(now, false);
            self.hosts[host as usize].clock_pending = true;
            fab.schedule(at, DcpimEvent::Round(host).encode());
        }
    }

    /// Requests for round `j` of epoch `e`: one per sender, for the shortest eligible flow from
    /// it, for the channels it still needs.
    fn send_requests(&mut self, host: u32, e: u64, j: u32, fab: &mut Fabric) {
        let now = fab.now();
        let k = self.params.channels;
        let link_pkts = self.timing().link_pkts;
        let h = &self.hosts[host as usize];
        if h.accepted_channels >= k {
            return;
        }
        let avail = k - h.accepted_channels;
        let flows = if self.partitioned { &self.receivers } else { &self.flows };
        let mut best: Vec<(u32, u32, u32, u32)> = h
            .receiving
            .iter()
            .map(|&s| (s, &flows[s as usize]))
            .filter(|(_, fl)| fl.eligible(now))
            .map(|(s, fl)| (fl.src, fl.missing(), fl.id, s))
            .collect();
        best.sort_unstable();
        best.dedup_by_key(|b| b.0);
        for (src, remaining, flow, slot) in best {
            let h = &self.hosts[host as usize];
            let has: u32 = h.links.iter().filter(|l| l.sender == src).map(|l| l.channels).sum::<u32>()
                + h.accepted.iter().filter(|a| a.sender == src).map(|a| a.channels).sum::<u32>();
            if (has as u64) * (link_pkts as u64) >= remaining as u64 {
                continue;
            }
            let need = (remaining.div_ceil(link_pkts) - has).min(avail);
            self.stats.requests += 1;
            fab.inject(host, matching_packet(REQUEST, flow, slot, host, src, e, j, need, remaining, now));
        }
    }

    /// Accepts the grants of round `j`: shortest first in the first rounds, then at random.
    fn accept_grants(&mut self, host: u32, j: u32, fab: &mut Fabric) {
        let now = fab.now();
        let k = self.params.channels;
        let shortest_first = j < self.params.shortest_first_rounds;
        let h = &mut self.hosts[host as usize];
        let Some((e, _)) = h.matching else { return };
        let mut grants = std::mem::take(&mut h.grants);
        let mut avail = k - h.accepted_channels;
        for g in choose_in_order(&mut grants, shortest_first, &mut h.rng) {
            if avail == 0 {
                break;
            }
            let c = g.channels.min(avail);
            avail -= c;
            h.accepted_channels += c;
            match h.accepted.iter_mut().find(|a| a.sender == g.peer) {
                Some(a) => a.channels += c,
                None => h.accepted.push(Accepted { sender: g.peer, channels: c, shortest: g.remaining }),
            }
            self.stats.accepts += 1;
            fab.inject(host, matching_packet(ACCEPT, g.flow, g.slot, host, g.peer, e, j, c, 0, now));
        }
        grants.clear();
        self.hosts[host as usize].grants = grants;
    }

    /// The matching of epoch `e` ended: its accepted channels become the data links.
    fn install(&mut self, host: u32, e: u64, fab: &mut Fabric) {
        let h = &mut self.hosts[host as usize];
        let mut accepted = std::mem::take(&mut h.accepted);
        accepted.sort_by_key(|a| (a.shortest, a.sender));
        self.stats.matched_channels += accepted.iter().map(|a| a.channels as u64).sum::<u64>();
        h.links = accepted
            .iter()
            .map(|a| Link { sender: a.sender, channels: a.channels, state: LinkState::Idle, tick: 0 })
            .collect();
        accepted.clear();
        h.accepted = accepted;
        h.accepted_channels = 0;
        h.matching = None;
        h.data_epoch = e;
        for i in 0..self.hosts[host as usize].links.len() {
            self.schedule_tick(host, i, fab.now(), LinkState::Ticking, fab);
        }
    }

    fn on_grant(&mut self, p: &Packet) {
        let (e, j, channels) = (p.header[0] as u64, p.header[1] >> 16, p.header[1] & 0xffff);
        let h = &mut self.hosts[p.dst as usize];
        if h.matching == Some((e, j)) {
            h.grants.push(Offer { peer: p.src, slot: p.slot, flow: p.flow, channels, remaining: p.seq });
        }
    }

    fn on_release(&mut self, p: &Packet) {
        let (e, mut excess) = (p.header[0] as u64, p.header[1]);
        let h = &mut self.hosts[p.dst as usize];
        if h.matching.is_none_or(|(me, _)| me != e) {
            return;
        }
        if let Some(a) = h.accepted.iter_mut().find(|a| a.sender == p.src) {
            excess = excess.min(a.channels);
            a.channels -= excess;
            h.accepted_channels -= excess;
        }
        h.accepted.retain(|a| a.channels > 0);
    }

    // ---- sender: grants ----

    fn on_request(&mut self, p: &Packet, fab: &mut Fabric) {
        let now = fab.now();
        let (e, j, channels) = (p.header[0] as u64, p.header[1] >> 16, p.header[1] & 0xffff);
        let grant_at = self.timing().round_start(e, j) + SimTime(self.timing().round.as_ps() / 2);
        if grant_at < now {
            return; // too late for its round
        }
        let host = p.dst;
        let h = &mut self.hosts[host as usize];
        if (e, j) < h.requests_for {
            return;
        }
        if (e, j) > h.requests_for {
            h.requests.clear();
            h.requests_for = (e, j);
        }
        h.requests.push(Offer { peer: p.src, slot: p.slot, flow: p.flow, channels, remaining: p.seq });
        if h.grant_at != Some(grant_at) {
            h.grant_at = Some(grant_at);
            fab.schedule(grant_at, DcpimEvent::Grant(host).encode());
        }
    }

    /// Half a round in: grant the round's requests the sender's channels left.
    fn on_grant_time(&mut self, host: u32, fab: &mut Fabric) {
        let now = fab.now();
        let k = self.params.channels;
        let h = &mut self.hosts[host as usize];
        if h.grant_at != Some(now) {
            return;
        }
        h.grant_at = None;
        let (e, j) = h.requests_for;
        if h.sender_epoch != e {
            h.sender_epoch = e;
            h.sender_channels = 0;
        }
        let shortest_first = j < self.params.shortest_first_rounds;
        let mut requests = std::mem::take(&mut h.requests);
        let mut avail = k - h.sender_channels.min(k);
        for q in choose_in_order(&mut requests, shortest_first, &mut h.rng) {
            if avail == 0 {
                break;
            }
            let c = q.channels.min(avail);
            avail -= c;
            self.stats.grants += 1;
            fab.inject(host, matching_packet(GRANT, q.flow, q.slot, host, q.peer, e, j, c, q.remaining, now));
        }
        requests.clear();
        self.hosts[host as usize].requests = requests;
    }

    fn on_accept(&mut self, p: &Packet, fab: &mut Fabric) {
        let k = self.params.channels;
        let e = p.header[0] as u64;
        let channels = p.header[1] & 0xffff;
        let h = &mut self.hosts[p.dst as usize];
        if e > h.sender_epoch {
            h.sender_epoch = e;
            h.sender_channels = 0;
        } else if e < h.sender_epoch {
            return;
        }
        h.sender_channels += channels;
        if h.sender_channels > k {
            let excess = h.sender_channels - k;
            h.sender_channels = k;
            self.stats.releases += 1;
            let release = Packet {
                header: [e as u32, excess],
                ..Packet::new(RELEASE, p.flow, p.slot, p.dst, p.src, 0, CONTROL_BYTES, fab.now())
            };
            fab.inject(p.dst, release);
        }
    }

    // ---- receiver: tokens ----

    fn schedule_tick(&mut self, host: u32, link: usize, at: SimTime, state: LinkState, fab: &mut Fabric) {
        let h = &mut self.hosts[host as usize];
        h.ticks = (h.ticks + 1) & 0x00ff_ffff;
        let l = &mut h.links[link];
        l.state = state;
        l.tick = h.ticks;
        fab.schedule(at, DcpimEvent::Token(host, (h.ticks << 8) | link as u32).encode());
    }

    /// A flow from `sender` may want a token now: wake that data link unless it is ticking.
    fn wake_link(&mut self, host: u32, sender: u32, fab: &mut Fabric) {
        let links = &self.hosts[host as usize].links;
        if let Some(i) = links.iter().position(|l| l.sender == sender && l.state != LinkState::Ticking) {
            self.schedule_tick(host, i, fab.now(), LinkState::Ticking, fab);
        }
    }

    /// A data link's token slot: a token for the receiver's shortest eligible flow from the
    /// link's sender, unless its window is full.
    fn on_token_tick(&mut self, host: u32, tag: u32, fab: &mut Fabric) {
        let now = fab.now();
        let tm = *self.timing();
        let idx = (tag & 0xff) as usize;
        let h = &mut self.hosts[host as usize];
        match h.links.get(idx) {
            Some(l) if l.tick == tag >> 8 && l.state != LinkState::Idle => {}
            _ => return, // replaced or rescheduled
        }
        let k = self.params.channels;
        let Link { sender, channels, .. } = h.links[idx];
        h.links[idx].state = LinkState::Idle;
        let interval = SimTime(tm.t_pkt.as_ps() * k as u64 / channels as u64);
        if self.params.hold && h.hold > 0 {
            h.hold -= 1;
            self.schedule_tick(host, idx, now + interval, LinkState::Ticking, fab);
            return;
        }
        let flows = if self.partitioned { &self.receivers } else { &self.flows };
        let best = h
            .receiving
            .iter()
            .map(|&s| (s, &flows[s as usize]))
            .filter(|(_, fl)| fl.src == sender && fl.eligible(now))
            .min_by_key(|(_, fl)| (fl.missing(), fl.id))
            .map(|(s, _)| s);
        let Some(slot) = best else { return };
        let data_epoch = h.data_epoch;
        let window = tm.window_pkts / k * channels;
        let rounds = self.params.rounds;
        let fl = &mut self.receiving_flows()[slot as usize];
        if fl.resend_at.take().is_some() {
            fl.reissues += 1;
        }
        if fl.tokens_sent - fl.responded.min(fl.tokens_sent) > window {
            if now >= fl.last_token + tm.window_timeout {
                fl.responded = (fl.tokens_sent + 1).saturating_sub(window); // slide the window
            } else {
                let at = fl.last_token + tm.window_timeout;
                self.schedule_tick(host, idx, at, LinkState::Waiting, fab);
                return;
            }
        }
        let seq = fl.next_missing(fl.next_request);
        fl.next_request = seq + 1;
        if fl.next_missing(seq + 1) <= seq {
            // Every missing packet has had a token in this pass: wait before the next.
            fl.resend_at = Some(now + tm.resend_timeout);
        }
        let expiry = tm.round_start(data_epoch + 1, rounds)
            + SimTime(tm.control_rtt.as_ps() / 2 + tm.t_pkt.as_ps() * k as u64);
        let token = Packet {
            seq,
            header: [fl.tokens_sent, fl.missing()],
            ..Packet::new(TOKEN, fl.id, slot, host, sender, seq, CONTROL_BYTES, expiry)
        };
        fl.tokens_sent += 1;
        fl.last_token = now;
        self.stats.tokens += 1;
        fab.inject(host, token);
        self.schedule_tick(host, idx, now + interval, LinkState::Ticking, fab);
    }

    // ---- sender: data ----

    fn wake_sender(&mut self, host: u32, at: SimTime, fab: &mut Fabric) {
        let wake = DcpimEvent::SenderWake(host).encode();
        schedule_nic_wake(&mut self.hosts[host as usize].wake_pending, at, wake, fab);
    }

    /// The NIC is free: send the packet of the best valid token.
    fn on_sender_wake(&mut self, host: u32, fab: &mut Fabric) {
        let wake = DcpimEvent::SenderWake(host).encode();
        if !nic_free_on_wake(&mut self.hosts[host as usize].wake_pending, host, wake, fab) {
            return;
        }
        let now = fab.now();
        // Drop the tokens of finished flows and the expired ones, then take the best: free
        // tokens first, then the flow with the fewest packets missing (as its receiver last
        // said), then the earlier flow, then the older token.
        let flows = &self.flows;
        let h = &mut self.hosts[host as usize];
        let mut expired = 0;
        h.tokens.retain(|t| {
            let fl = &flows[t.slot as usize];
            let live = fl.active && fl.id == t.flow;
            expired += u64::from(live && t.expiry < now);
            live && t.expiry >= now
        });
        self.stats.tokens_expired += expired;
        let Some(i) = (0..h.tokens.len()).min_by_key(|&i| {
            let t = &h.tokens[i];
            (t.class, flows[t.slot as usize].remaining_at_sender, t.flow, t.order)
        }) else {
            return;
        };
        let token = h.tokens.swap_remove(i);
        let priority = self.timing().data_priority(self.flows[token.slot as usize].n_pkts);
        let wire = self.numbering.wire(token.slot);
        let fl = &mut self.flows[token.slot as usize];
        let size = Bytes(fl.size_bytes).packet_wire_bytes(token.data_seq);
        fl.packets_sent += 1;
        fl.source_timer.sent(now);
        let mut header = [token.token_seq, 0];
        if self.partitioned {
            header[LENGTH] = fl.n_pkts;
        }
        let data = Packet {
            priority,
            header,
            retransmit: fl.packets_sent > fl.n_pkts,
            ..Packet::new(PacketKind::DATA, fl.id, wire, fl.src, fl.dst, token.data_seq, size, now)
        };
        fab.inject(host, data);
        if !self.hosts[host as usize].tokens.is_empty() {
            let next = fab.nic_idle_at(host);
            self.wake_sender(host, next, fab);
        }
    }
}

/// A matching packet (request, grant or accept) of flow `flow` for round `j` of epoch `e`.
#[allow(clippy::too_many_arguments)]
fn matching_packet(
    kind: PacketKind,
    flow: u32,
    slot: u32,
    from: u32,
    to: u32,
    e: u64,
    j: u32,
    channels: u32,
    remaining: u32,
    now: SimTime,
) -> Packet {
    Packet {
        header: [e as u32, (j << 16) | channels],
        ..Packet::new(kind, flow, slot, from, to, remaining, CONTROL_BYTES, now)
    }
}

/// The order in which a host takes the offers of a round: fewest packets remaining first (ties
/// to the earlier flow, as the artifact's flow orders), or uniformly at random from `rng` over the offers sorted by host, so the
/// order never depends on the order in which they arrived.
fn choose_in_order(offers: &mut [Offer], shortest_first: bool, rng: &mut Rng) -> Vec<Offer> {
    if shortest_first {
        offers.sort_unstable_by_key(|o| (o.remaining, o.flow));
        return offers.to_vec();
    }
    offers.sort_unstable_by_key(|o| o.peer);
    let mut rest = offers.to_vec();
    let mut out = Vec::with_capacity(rest.len());
    while !rest.is_empty() {
        let i = rng.below(rest.len() as u64) as usize;
        out.push(rest.remove(i));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(toml: &str) -> DcpimSpec {
        Spec::from_toml_str(toml).unwrap().dcpim
    }

    /// Issue 18, dcPIM item "parameters": the artifact's setting (100/400 Gbps, 0.65 µs
    /// links, r = 4, k = 4, β = 1.3, α = 1): cRTT = (4·0.65 µs + 2.5·3.2 ns)·2 = 5.216 µs,
    /// round = 1.3·5.216 = 6.7808 µs, P = 4 rounds = 27.1232 µs, BDP = ⌈(4·0.65 + 2·(0.12 +
    /// 0.03))·2 µs / 0.12 µs⌉ = ⌈48.33⌉ = 49, link_pkts = ⌊27.1232 / (4·0.12)⌋ = 56.
    #[test]
    fn timing_at_the_artifacts_setting() {
        let d = spec("");
        let t_pkt = SimTime(120_000);
        let control = SimTime(5_216_000);
        let mtu = SimTime(5_800_000);
        let t = Timing::new(&d, t_pkt, control, mtu);
        assert_eq!(t.round, SimTime(6_780_800));
        assert_eq!(t.period, SimTime(27_123_200));
        assert_eq!((t.bdp, t.link_pkts, t.unscheduled_pkts, t.window_pkts), (49, 56, 49, 49));
        assert_eq!(t.window_timeout, SimTime(6_468_000)); // 1.1 · 49 · 0.12 µs
        assert_eq!(t.resend_timeout, SimTime(5_880_000));
        // Size classes: 1 up to 49 packets, 2 up to 49², 3 up to 49³ …
        let p: Vec<u64> = [1, 49, 50, 2401, 2402, 117_649, 117_650].map(|n| t.data_priority(n)).to_vec();
        assert_eq!(p, [1, 1, 2, 2, 3, 3, 4]);
        assert_eq!(t.data_priority(u32::MAX), 6);
        // Fixed values replace the fabric's.
        let d = spec("[dcpim]\nbdp_packets = 10\ncontrol_rtt_us = 2.0\nrounds = 2\nchannels = 1\nalpha = 1.5");
        let t = Timing::new(&d, t_pkt, control, mtu);
        assert_eq!((t.bdp, t.round, t.period, t.link_pkts), (10, SimTime(2_600_000), SimTime(7_800_000), 65));
    }

    /// Issue 18, dcPIM item "parameters derived from the fabric": on the artifact's leaf-spine
    /// (9 racks of 16, 4 spines, 100/400 Gbps, 0.65 µs links, store-and-forward) the longest
    /// path from host 0 crosses 4 links each way: cRTT = 2·(4·0.65 µs + 2·3.2 ns + 2·0.8 ns) =
    /// 5.216 µs and the MTU round trip 2·(4·0.65 + 2·0.12 + 2·0.03) = 5.8 µs, so BDP = 49.
    #[test]
    fn timing_from_the_artifacts_fabric() {
        let spec = Spec::from_toml_str(
            "[topology]\nracks = 9\nhosts_per_rack = 16\nspines = 4\nhost_link_gbps = 100\n\
             core_link_gbps = 400\nlink_delay_ns = 650\nswitching = \"store-and-forward\"",
        )
        .unwrap();
        let net = Network::build(&spec.topology, &|_| {
            (
                crate::queue::PortQueue::Timeline(crate::queue::DropTail::new(500_000)),
                crate::queue::EcnMarking::Off,
            )
        });
        let t = Timing::of_fabric(&spec.dcpim, &net);
        assert_eq!((t.t_pkt, t.control_rtt, t.bdp), (SimTime(120_000), SimTime(5_216_000), 49));
        assert_eq!(t, Timing::new(&spec.dcpim, SimTime(120_000), SimTime(5_216_000), SimTime(5_800_000)));
    }

    /// Issue 18, dcPIM item "matching": the first rounds take offers shortest first (ties to
    /// the earlier flow, not the lower host); later rounds draw a random order that depends only on the host's
    /// stream and the set of offers, not on their arrival order.
    #[test]
    fn offers_are_taken_shortest_first_then_at_random_whatever_their_order() {
        let o = |peer, remaining, flow| Offer { peer, slot: 0, flow, channels: 1, remaining };
        let mut a = vec![o(3, 10, 5), o(2, 7, 1), o(1, 7, 4), o(0, 50, 0)];
        let mut rng = Rng::new(1);
        let order: Vec<u32> =
            choose_in_order(&mut a, true, &mut rng).iter().map(|x| x.peer).collect();
        assert_eq!(order, [2, 1, 3, 0]);
        let mut b = vec![o(3, 10, 5), o(1, 7, 4), o(2, 7, 1), o(0, 50, 0)];
        let mut c = vec![o(0, 50, 0), o(2, 7, 1), o(3, 10, 5), o(1, 7, 4)];
        let (mut r1, mut r2) = (Rng::new(9), Rng::new(9));
        let x: Vec<u32> = choose_in_order(&mut b, false, &mut r1).iter().map(|x| x.peer).collect();
        let y: Vec<u32> = choose_in_order(&mut c, false, &mut r2).iter().map(|x| x.peer).collect();
        assert_eq!(x, y);
        let mut sorted = x.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2, 3]);
    }
}
