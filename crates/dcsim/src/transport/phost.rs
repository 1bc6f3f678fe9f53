//! pHost (Gao et al., CoNEXT'15): receiver-driven transport with per-packet tokens over a
//! commodity fabric with a few priority levels (paper §3; the authors' simulator, NetSys/simulator on GitHub, for what the paper leaves open).
//!
//! * **Source (Algorithm 1).** On a flow's arrival the source sends a 40-byte RTS to the
//!   destination and adds the flow's free tokens (§3.2: "a few free tokens per flow (akin to
//!   TCP's initial congestion window)"). Whenever its NIC is free it drops expired tokens and,
//!   among flows holding a valid token, takes the flow with the fewest remaining packets (§3.3:
//!   SRPT at the source, ties to the earlier flow) and sends the packet its earliest-expiring
//!   token names, stamped with that token's sequence number. The source never times out.
//! * **Destination (Algorithm 2).** It keeps the flows it has an RTS (or data) for. Once per
//!   MTU transmission time it picks the flow with the fewest packets still missing (SRPT) that
//!   is not waiting for a re-issue timeout and not downgraded, and sends it one token naming the
//!   next missing packet (round robin over the missing ones) and the number still missing.
//!   A flow with more than `downgrade_after` tokens unanswered (tokens sent minus the highest
//!   token sequence seen in its data) is skipped until `downgrade_for` has passed since its last
//!   token (§3.2 "source downgrading"). Once every packet has a token, the destination waits
//!   `reissue_after` and then issues tokens again for the packets still missing — the only loss
//!   recovery. When every packet has arrived it sends one ACK; the FCT ends when that ACK reaches
//!   the source. Slots right after an RTS with free tokens are left unused (`hold`), so the
//!   destination's link is free for the unsolicited packets (the authors' simulator, reference
//!   §3.4).
//! * **Priorities (§3.3).** Control packets (RTS, tokens, ACKs) at priority 0; data of short
//!   flows (≤ `short_flow_pkts` packets) at 1 and of long flows at 2 (or all data at 1 when
//!   `data_priorities` is off). Switches are pFabric-style ports with these three numbers.
//!
//! Parameters default to the paper's §4.1 values; `phost.preset = "authors-code"` switches to the
//! public code's (NetSys/simulator).
//!
//! The partitioned model (`engine.partitioned`, [`PhostParams::partitioned`]) cannot let the two
//! ends of a flow share one table entry: they may run in different partitions, on different
//! threads ([`crate::partition`]). There the sources keep their flows in their own table and
//! the destinations theirs, indexed by the slot the packets carry, and each end learns what it
//! needs from packets only: the flow's size in packets from the RTS or any data packet (second
//! header word), the destination's re-issue count from the ACK (first header word). Each
//! partition numbers its sources' slots in its own residue class (`slot ≡ partition index`,
//! modulo the partition count), so a slot names one open flow in the whole run; a destination's
//! entry is replaced only by a later flow of the same slot (flow ids grow with arrival time).
//! The destination orders flows by their packets still missing, so only `policy = "srpt"`
//! runs partitioned (EDF and tenant-fair order by a flow's deadline or tenant, which its packets
//! do not carry; the spec refuses them).

use super::{
    entry_holding, nic_free_on_wake, receiving_entry, receiving_table, schedule_nic_wake, sending_entry,
    Completion, HostTransport, Parts, PortPlan, Protocol, SlotNumbering, SourceTimer,
    TransportEvent,
};
use crate::fabric::Fabric;
use crate::packet::{Packet, PacketId, PacketKind, SeqSet};
use crate::spec::{PhostPolicy, Spec};
use crate::units::{BitRate, CONTROL_BYTES, MTU_BYTES};
use crate::workload::FlowArrival;
use dcsim_engine::SimTime;

/// Request-to-send: a new flow announces itself to its destination. Header: the flow's free
/// tokens, its size in packets.
pub const RTS: PacketKind = PacketKind::control(0);
/// Token: the destination grants the source one packet (`seq`). Header: the token's sequence
/// number, the packets the destination still misses (the source's SRPT key).
pub const TOKEN: PacketKind = PacketKind::control(1);

/// Header word of a token (and of the data packet that used it): the token's sequence number;
/// of an RTS: the flow's free tokens.
const TOKEN_SEQ: usize = 0;
/// Header word of a token or RTS: the packets still missing at the destination; of a data
/// packet: the flow's size in packets (for a destination in the partitioned model, which learns
/// the flow from its first packet).
const REMAINING: usize = 1;
/// Header word of an ACK: the destination's re-issues of the flow (for its completion record).
const REISSUES: usize = 0;

crate::transport_events! {
    /// pHost's clocks.
    pub enum PhostEvent {
        /// Host `.0`'s sender may send its next packet (its NIC is free).
        SourceWake(host) = 0,
        /// Host `.0`'s token clock ticks (at most one token per MTU time).
        TokenClock(host) = 1,
        /// The source timer of the flow in slot `.0` (flow id `.1`), when `source_timeout_mtu`
        /// is set.
        SourceTimer(slot, flow) = 2,
    }
}

/// `transport.protocol = "phost"`.
#[derive(Debug)]
pub struct PhostProtocol;

impl Protocol for PhostProtocol {
    type Host = PhostTransport;

    /// pHost's hosts, and pFabric-style priority ports with three priority numbers (§3.3).
    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        let ports = PortPlan::priority_drop(spec);
        Parts::packets(
            PhostTransport::new(PhostParams::from_spec(spec), spec.topology.n_hosts()),
            ports,
        )
    }
}

impl PhostParams {
    /// The `[phost]` settings in absolute units.
    pub fn from_spec(spec: &Spec) -> Self {
        let p = &spec.phost;
        let rate = spec.topology.host_rate();
        let t_mtu = rate.tx_time(MTU_BYTES as u64);
        let mtus = |k: f64| SimTime((t_mtu.as_ps() as f64 * k).round() as u64);
        PhostParams {
            rate,
            t_mtu,
            token_interval: rate.tx_time(p.token_interval_bytes as u64),
            hold: p.hold,
            source_timeout: (p.source_timeout_mtu > 0.0).then(|| mtus(p.source_timeout_mtu)),
            free_tokens: p.free_tokens,
            free_tokens_only_short: p.free_tokens_only_short,
            token_expiry: mtus(p.token_expiry_mtu),
            downgrade_after: p.downgrade_after_tokens,
            downgrade_for: mtus(p.downgrade_mtu),
            reissue_after: mtus(p.reissue_mtu),
            short_flow_pkts: p.short_flow_pkts,
            data_priorities: p.data_priorities,
            policy: match p.policy {
                PhostPolicy::Srpt => Policy::Srpt,
                PhostPolicy::Edf => Policy::Edf,
                PhostPolicy::TenantFair => Policy::TenantFair,
            },
            partitioned: spec.engine.partitioned,
        }
    }
}

/// pHost's settings, in absolute units.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PhostParams {
    /// Host link rate.
    pub rate: BitRate,
    /// One MTU (1500 B) transmission time at the host rate: the unit of the timeouts.
    pub t_mtu: SimTime,
    /// The token clock's period (one MTU time in the paper; 1540 bytes' time in the authors'
    /// 2015 code).
    pub token_interval: SimTime,
    /// Leave the destination's token slots unused while a new flow's free-token packets
    /// arrive (`hold`).
    pub hold: bool,
    /// How long a source waits without sending or receiving a token before it sends its RTS
    /// again (`None`: never, as published).
    pub source_timeout: Option<SimTime>,
    /// Free tokens per flow.
    pub free_tokens: u32,
    /// Free tokens only for flows that fit in them entirely (the authors' code), instead of
    /// `min(size, free_tokens)` for every flow (the paper).
    pub free_tokens_only_short: bool,
    /// How long a token stays valid after it reaches the source.
    pub token_expiry: SimTime,
    /// Unanswered tokens that downgrade a flow.
    pub downgrade_after: u32,
    /// How long a downgraded flow waits after its last token.
    pub downgrade_for: SimTime,
    /// How long after its last token a flow waits before tokens are re-issued for the packets
    /// still missing.
    pub reissue_after: SimTime,
    /// Flows of at most this many packets send data at priority 1, longer ones at 2.
    pub short_flow_pkts: u32,
    /// Use the short/long data priorities (else all data at priority 1).
    pub data_priorities: bool,
    /// How both ends order flows.
    pub policy: Policy,
    /// The partitioned model's variant (`engine.partitioned`): separate source and destination
    /// tables (module docs).
    pub partitioned: bool,
}

/// pHost's scheduling policy (§3.3), applied at the source (which token to use) and at the
/// destination (which flow gets the next token).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Policy {
    /// Fewest remaining packets first.
    Srpt,
    /// Earliest deadline first (flows without one last).
    Edf,
    /// The tenant with fewer bytes scheduled so far at this host first, SRPT within a tenant
    /// (§4.4).
    TenantFair,
}

/// The policy's ordering key for a flow: smaller goes first (ties broken by flow id).
/// `remaining` is the flow's remaining packets as this end knows it; `tenant_bytes` the bytes
/// this end has scheduled for the flow's tenant so far.
fn policy_key(policy: Policy, fl: &Flow, remaining: u32, tenant_bytes: &[u64]) -> (u64, u64) {
    match policy {
        Policy::Srpt => (remaining as u64, 0),
        Policy::Edf => (fl.deadline.as_ps(), 0),
        Policy::TenantFair => {
            (tenant_bytes.get(fl.tenant as usize).copied().unwrap_or(0), remaining as u64)
        }
    }
}

fn add_tenant_bytes(counts: &mut Vec<u64>, tenant: u32, bytes: u64) {
    if counts.len() <= tenant as usize {
        counts.resize(tenant as usize + 1, 0);
    }
    counts[tenant as usize] += bytes;
}

/// A 40-byte control packet of flow `fl`.
fn control(kind: PacketKind, slot: u32, fl: &Flow, from: u32, to: u32, now: SimTime) -> Packet {
    Packet::new(kind, fl.id, slot, from, to, 0, CONTROL_BYTES, now)
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Token {
    expiry: SimTime,
    token_seq: u32,
    data_seq: u32,
}

/// One flow, both ends (the slot is shared, as in the window transport), except in the
/// partitioned model, where a source's entry and its destination's are apart (module docs).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Flow {
    id: u32,
    active: bool,
    src: u32,
    dst: u32,
    size_bytes: u64,
    n_pkts: u32,
    deadline: SimTime,
    tenant: u32,
    // source
    tokens: Vec<Token>,
    remaining_at_sender: u32,
    packets_sent: u32,
    /// The source's guard against a lost RTS or ACK (`source_timeout_mtu`).
    source_timer: SourceTimer,
    // destination
    known: bool,
    received: SeqSet,
    received_count: u32,
    tokens_sent: u32,
    goal: u32,
    responded: u32,
    last_token: SimTime,
    resend_deadline: Option<SimTime>,
    next_request: u32,
    reissues: u32,
}

impl Flow {
    fn has(&self, seq: u32) -> bool {
        self.received.contains(seq)
    }
}

// A destination's entry in the partitioned model: learned from the RTS or a data packet.
impl_receiving_entry!(Flow);

/// Per-host state: the flows it sends and receives, and its two clocks.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
struct Host {
    sending: Vec<u32>,
    receiving: Vec<u32>,
    /// Bytes this host has sent (as a source) per tenant, for the tenant-fair policy.
    sent_by_tenant: Vec<u64>,
    /// Bytes this host has granted tokens for (as a destination) per tenant.
    granted_by_tenant: Vec<u64>,
    sender_wake_pending: bool,
    clock_pending: bool,
    hold: u32,
}

/// The pHost transport: flow table, hosts, and the two algorithms.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct PhostTransport {
    params: PhostParams,
    flows: Vec<Flow>,
    free: Vec<u32>,
    /// The partitioned model's destinations, indexed by the slot the flow's packets carry.
    receivers: Vec<Flow>,
    /// How table entries are numbered on the wire (the partitioned model's residue classes).
    numbering: SlotNumbering,
    hosts: Vec<Host>,
    stats: PhostStats,
}

/// What the run's summary reports of pHost's tokens (`transport_counters`): how many the
/// destinations sent and how many expired unused at a source, whose link carried another
/// flow's packet (free tokens are counted apart).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct PhostStats {
    tokens_sent: u64,
    tokens_expired: u64,
    free_tokens: u64,
    free_tokens_expired: u64,
    rts_resent: u64,
    acks_resent: u64,
}

impl HostTransport for PhostTransport {
    /// Starts flow `f`: RTS, free tokens, and a wake-up for the source.
    fn start_flow(&mut self, f: &FlowArrival, fab: &mut Fabric) {
        let n = crate::units::Bytes(f.size_bytes).packets();
        let free = self.free_tokens(n);
        self.stats.free_tokens += u64::from(free);
        let p = &self.params;
        let slot = self.free.pop().unwrap_or_else(|| {
            self.flows.push(Flow::default());
            (self.flows.len() - 1) as u32
        });
        let now = fab.now();
        let fl = &mut self.flows[slot as usize];
        let mut received = std::mem::take(&mut fl.received);
        let mut tokens = std::mem::take(&mut fl.tokens);
        received.reset(n);
        tokens.clear();
        // Free tokens expire when the flow could have sent them all plus the usual margin
        // (start + (n + 1.5) T_mtu in the authors' code).
        let free_expiry = now + SimTime(p.t_mtu.as_ps() * free as u64) + p.token_expiry;
        tokens.extend((0..free).map(|i| Token { expiry: free_expiry, token_seq: i, data_seq: i }));
        *fl = Flow {
            id: f.id,
            active: true,
            src: f.src,
            dst: f.dst,
            size_bytes: f.size_bytes,
            n_pkts: n,
            deadline: f.deadline,
            tenant: f.tenant,
            tokens,
            remaining_at_sender: n,
            source_timer: SourceTimer::started(now),
            received,
            ..Flow::default()
        };
        fab.inject(f.src, self.rts(slot, now));
        self.hosts[f.src as usize].sending.push(slot);
        if let Some(timeout) = self.params.source_timeout {
            fab.schedule(now + timeout, PhostEvent::SourceTimer(slot, f.id).encode());
        }
        self.wake_sender(f.src, now, fab);
    }

    /// A packet of this transport reached its destination host; frees it. Returns the
    /// completion when an ACK finishes its flow.
    fn on_packet(&mut self, id: PacketId, fab: &mut Fabric) -> Option<Completion> {
        let p = *fab.pool.get(id);
        fab.deliver(id);
        let slot = if self.params.partitioned {
            self.apart_slot(&p)?
        } else {
            entry_holding(&self.flows, p.slot, p.flow)?
        };
        let now = fab.now();
        match p.kind {
            RTS => {
                let fl = &self.destinations()[slot as usize];
                if p.retransmit && fl.known && fl.received_count == fl.n_pkts {
                    // A source that lost the ACK asks again (`source_timeout_mtu`). A first
                    // RTS can arrive after all the data it announced (another path), and
                    // is ignored then, as published.
                    self.stats.acks_resent += 1;
                    self.send_ack(slot, fab);
                } else {
                    self.know(slot, p.header[TOKEN_SEQ], fab);
                }
            }
            PacketKind::DATA => {
                let n_pkts = self.destinations()[slot as usize].n_pkts;
                let free = self.free_tokens(n_pkts);
                self.know(slot, free, fab);
                let fl = &mut self.destinations()[slot as usize];
                fl.responded = fl.responded.max(p.header[TOKEN_SEQ] + 1);
                if fl.received.insert(p.seq) {
                    fl.received_count += 1;
                    if fl.received_count == fl.n_pkts {
                        let dst = fl.dst;
                        self.hosts[dst as usize].receiving.retain(|&s| s != slot);
                        self.send_ack(slot, fab);
                    }
                }
            }
            TOKEN => {
                let expiry = now + self.params.token_expiry;
                let fl = &mut self.flows[slot as usize];
                let token_seq = p.header[TOKEN_SEQ];
                fl.tokens.push(Token { expiry, token_seq, data_seq: p.seq });
                fl.remaining_at_sender = p.header[REMAINING];
                fl.source_timer.token(now);
                let src = fl.src;
                self.wake_sender(src, now, fab);
            }
            PacketKind::ACK => {
                let fl = &mut self.flows[slot as usize];
                let done = Completion::of(fl.id, fl.n_pkts, fl.packets_sent, p.header[REISSUES]);
                fl.active = false;
                let src = fl.src;
                self.hosts[src as usize].sending.retain(|&s| s != slot);
                self.free.push(slot);
                return Some(done);
            }
            _ => {}
        }
        None
    }

    fn on_event(&mut self, code: u8, a: u32, b: u32, fab: &mut Fabric) {
        match PhostEvent::decode(code, a, b) {
            PhostEvent::SourceWake(host) => self.on_source_wake(host, fab),
            PhostEvent::TokenClock(host) => self.on_token_clock(host, fab),
            PhostEvent::SourceTimer(slot, flow) => self.on_source_timer(slot, flow, fab),
        }
    }

    /// A flow waits for re-issued tokens `reissue_after` after its last token, a downgraded one
    /// `downgrade_for`, and a silent source `source_timeout` before it sends its RTS again.
    fn recovery_timeout(&self, _net: &crate::topology::Network) -> SimTime {
        let p = &self.params;
        p.reissue_after.max(p.downgrade_for).max(p.source_timeout.unwrap_or(SimTime::ZERO))
    }

    /// Numbers this transport's slots for partition `index` of `count` (module docs).
    fn set_partition(&mut self, index: u32, count: u32) {
        debug_assert!(self.params.partitioned, "only the partitioned model is partitioned");
        debug_assert!(self.flows.is_empty(), "set before any flow starts");
        self.numbering = SlotNumbering::of_partition(index, count);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let s = &self.stats;
        let mut counters = vec![
            ("tokens_sent", s.tokens_sent),
            ("tokens_expired", s.tokens_expired),
            ("free_tokens", s.free_tokens),
            ("free_tokens_expired", s.free_tokens_expired),
        ];
        if self.params.source_timeout.is_some() {
            counters.extend([("rts_resent", s.rts_resent), ("acks_resent", s.acks_resent)]);
        }
        counters
    }
}

impl PhostTransport {
    /// A transport for `n_hosts` hosts.
    pub fn new(params: PhostParams, n_hosts: u32) -> Self {
        PhostTransport {
            params,
            flows: Vec::new(),
            free: Vec::new(),
            receivers: Vec::new(),
            numbering: SlotNumbering::default(),
            hosts: vec![Host::default(); n_hosts as usize],
            stats: PhostStats::default(),
        }
    }


    /// The destinations' flows: the shared table, or the partitioned model's own.
    fn destinations(&mut self) -> &mut Vec<Flow> {
        receiving_table(self.params.partitioned, &mut self.flows, &mut self.receivers)
    }

    /// The partitioned model: the table entry of packet `p`'s flow at this end (`None`: a
    /// packet to ignore). An RTS or data packet goes to the destinations' table at the slot it
    /// carries, where its flow replaces an earlier one; a token or ACK to this partition's
    /// sources. Out of line and cold, as the window transport's (docs/performance.md).
    #[cold]
    #[inline(never)]
    fn apart_slot(&mut self, p: &Packet) -> Option<u32> {
        if matches!(p.kind, RTS | PacketKind::DATA) {
            return receiving_entry(&mut self.receivers, p, p.header[REMAINING]);
        }
        sending_entry(&self.flows, self.numbering, p)
    }

    #[inline(always)]
    fn wake_sender(&mut self, host: u32, at: SimTime, fab: &mut Fabric) {
        let wake = PhostEvent::SourceWake(host).encode();
        schedule_nic_wake(&mut self.hosts[host as usize].sender_wake_pending, at, wake, fab);
    }

    #[inline(always)]
    fn wake_clock(&mut self, host: u32, at: SimTime, fab: &mut Fabric) {
        let h = &mut self.hosts[host as usize];
        if !h.clock_pending {
            h.clock_pending = true;
            fab.schedule(at, PhostEvent::TokenClock(host).encode());
        }
    }

    /// The source's NIC is free: send one packet on the best valid token (Algorithm 1).
    fn on_source_wake(&mut self, host: u32, fab: &mut Fabric) {
        let wake = PhostEvent::SourceWake(host).encode();
        if !nic_free_on_wake(&mut self.hosts[host as usize].sender_wake_pending, host, wake, fab) {
            return;
        }
        let now = fab.now();
        let policy = self.params.policy;
        let h = &self.hosts[host as usize];
        let mut best: Option<((u64, u64), u32, u32)> = None; // (policy key, id, slot)
        for &slot in &h.sending {
            let fl = &mut self.flows[slot as usize];
            let free = free_token_count(&self.params, fl.n_pkts);
            let stats = &mut self.stats;
            // Expired tokens are dropped (§3.2); free ones are those numbered below the flow's
            // free-token count (the destination numbers its tokens from there).
            fl.tokens.retain(|t| {
                let valid = t.expiry >= now;
                if !valid && t.token_seq < free {
                    stats.free_tokens_expired += 1;
                } else if !valid {
                    stats.tokens_expired += 1;
                }
                valid
            });
            if !fl.tokens.is_empty() {
                let key = (
                    policy_key(policy, fl, fl.remaining_at_sender, &h.sent_by_tenant),
                    fl.id,
                    slot,
                );
                if best.is_none_or(|b| (key.0, key.1) < (b.0, b.1)) {
                    best = Some(key);
                }
            }
        }
        let Some((_, _, slot)) = best else { return };
        let wire = self.numbering.wire(slot);
        let p = &self.params;
        let fl = &mut self.flows[slot as usize];
        let i = (0..fl.tokens.len())
            .min_by_key(|&i| (fl.tokens[i].expiry, fl.tokens[i].token_seq))
            .expect("non-empty");
        let t = fl.tokens.swap_remove(i);
        let size = crate::units::Bytes(fl.size_bytes).packet_wire_bytes(t.data_seq);
        let priority = if p.data_priorities && fl.n_pkts > p.short_flow_pkts { 2 } else { 1 };
        fl.packets_sent += 1;
        fl.source_timer.sent(now);
        let mut header = [0; 2];
        (header[TOKEN_SEQ], header[REMAINING]) = (t.token_seq, fl.n_pkts);
        let data = Packet {
            priority,
            header,
            retransmit: fl.packets_sent > fl.n_pkts,
            ..Packet::new(PacketKind::DATA, fl.id, wire, fl.src, fl.dst, t.data_seq, size, now)
        };
        let tenant = fl.tenant;
        fab.inject(host, data);
        add_tenant_bytes(&mut self.hosts[host as usize].sent_by_tenant, tenant, size as u64);
        // Try again when the NIC has sent everything queued at it (this packet, and any
        // tokens or ACKs of this host's receiving side): a source sends only on an idle NIC
        // (Algorithm 1).
        let next = fab.nic_idle_at(host).max(now + p.rate.tx_time(size as u64));
        self.wake_sender(host, next, fab);
    }

    /// The destination's token clock: at most one token per MTU time (Algorithm 2).
    fn on_token_clock(&mut self, host: u32, fab: &mut Fabric) {
        let now = fab.now();
        let t_mtu = self.params.token_interval;
        let h = &mut self.hosts[host as usize];
        h.clock_pending = false;
        if h.receiving.is_empty() {
            return;
        }
        if h.hold > 0 {
            h.hold -= 1;
            self.wake_clock(host, now + t_mtu, fab);
            return;
        }
        // The first flow in policy order (SRPT: fewest packets missing; EDF: earliest deadline;
        // ties to the earlier flow) that may get a token: not complete, not waiting for its
        // re-issue timeout, with tokens left to send (counting a due re-issue), and not
        // downgraded. One pass, no sort: the answer is the minimum over the eligible flows.
        let p = &self.params;
        let flows = if p.partitioned { &self.receivers } else { &self.flows };
        let mut wake = SimTime::MAX;
        let mut best: Option<((u64, u64), u32, u32)> = None;
        let mut reissue_due = false;
        for &slot in &h.receiving {
            let fl = &flows[slot as usize];
            if fl.received_count == fl.n_pkts {
                continue;
            }
            let mut goal = fl.goal;
            if let Some(deadline) = fl.resend_deadline {
                if now < deadline {
                    wake = wake.min(deadline);
                    continue;
                }
                reissue_due = true;
                goal += fl.n_pkts - fl.received_count;
            }
            if fl.tokens_sent >= goal {
                continue;
            }
            if fl.tokens_sent - fl.responded.min(fl.tokens_sent) > p.downgrade_after {
                let until = fl.last_token + p.downgrade_for;
                if now < until {
                    wake = wake.min(until);
                    continue; // downgraded (§3.2)
                }
            }
            let key = policy_key(p.policy, fl, fl.n_pkts - fl.received_count, &h.granted_by_tenant);
            if best.is_none_or(|b| (key, fl.id) < (b.0, b.1)) {
                best = Some((key, fl.id, slot));
            }
        }
        if reissue_due {
            // Re-issue (§3.2; as the authors' code does it: tokens again for every packet still missing) for
            // each due flow that comes before the chosen one in policy order (or every due
            // flow if none is chosen): exactly the flows a walk in that order would visit.
            let policy = p.policy;
            let flows = if p.partitioned { &mut self.receivers } else { &mut self.flows };
            for &slot in &self.hosts[host as usize].receiving {
                let h = &self.hosts[host as usize];
                let fl = &flows[slot as usize];
                let due =
                    fl.received_count < fl.n_pkts && fl.resend_deadline.is_some_and(|d| now >= d);
                if !due {
                    continue;
                }
                let key =
                    policy_key(policy, fl, fl.n_pkts - fl.received_count, &h.granted_by_tenant);
                if best.is_none_or(|b| (key, fl.id) <= (b.0, b.1)) {
                    let fl = &mut flows[slot as usize];
                    fl.resend_deadline = None;
                    fl.goal += fl.n_pkts - fl.received_count;
                    fl.reissues += 1;
                }
            }
        }
        let Some((_, _, slot)) = best else {
            if wake != SimTime::MAX {
                self.wake_clock(host, wake.max(now), fab);
            }
            return;
        };
        let p = &self.params;
        let flows = if p.partitioned { &mut self.receivers } else { &mut self.flows };
        let fl = &mut flows[slot as usize];
        if fl.tokens_sent - fl.responded.min(fl.tokens_sent) > p.downgrade_after {
            fl.responded = fl.tokens_sent - p.downgrade_after; // relax after the period
        }
        // The next missing packet, round robin after the previous request.
        let n = fl.n_pkts;
        let mut seq = fl.next_request % n;
        while fl.has(seq) {
            seq = (seq + 1) % n;
        }
        fl.next_request = seq + 1;
        let mut header = [0; 2];
        (header[TOKEN_SEQ], header[REMAINING]) = (fl.tokens_sent, n - fl.received_count);
        let token = Packet {
            seq,
            header,
            ..Packet::new(TOKEN, fl.id, slot, fl.dst, fl.src, 0, CONTROL_BYTES, now)
        };
        fl.tokens_sent += 1;
        self.stats.tokens_sent += 1;
        fl.last_token = now;
        let tenant = fl.tenant;
        add_tenant_bytes(
            &mut self.hosts[host as usize].granted_by_tenant,
            tenant,
            MTU_BYTES as u64,
        );
        let flows = if p.partitioned { &mut self.receivers } else { &mut self.flows };
        let fl = &mut flows[slot as usize];
        if fl.tokens_sent == fl.goal {
            fl.resend_deadline = Some(now + p.reissue_after);
        }
        fab.inject(host, token);
        self.wake_clock(host, now + t_mtu, fab);
    }

    /// The RTS of the source's flow in `slot`: its free tokens and its size in packets.
    fn rts(&self, slot: u32, now: SimTime) -> Packet {
        let fl = &self.flows[slot as usize];
        let mut header = [0; 2];
        (header[TOKEN_SEQ], header[REMAINING]) = (free_token_count(&self.params, fl.n_pkts), fl.n_pkts);
        Packet { header, ..control(RTS, self.numbering.wire(slot), fl, fl.src, fl.dst, now) }
    }

    /// The destination has every packet of the flow in `slot`: one ACK to the source, carrying
    /// the flow's re-issues (for its completion record).
    fn send_ack(&mut self, slot: u32, fab: &mut Fabric) {
        let now = fab.now();
        let fl = &self.destinations()[slot as usize];
        let mut ack = control(PacketKind::ACK, slot, fl, fl.dst, fl.src, now);
        ack.header[REISSUES] = fl.reissues;
        fab.inject(fl.dst, ack);
    }

    /// The source timer of flow `flow` in `slot` (`source_timeout_mtu`; [`SourceTimer`] says
    /// when it sends the RTS again). It runs until the flow's ACK arrives.
    fn on_source_timer(&mut self, slot: u32, flow: u32, fab: &mut Fabric) {
        let now = fab.now();
        let Some(timeout) = self.params.source_timeout else { return };
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
        fab.schedule(next, PhostEvent::SourceTimer(slot, flow).encode());
    }

    /// A destination learns of a flow (its RTS, or its first data packet).
    fn know(&mut self, slot: u32, free: u32, fab: &mut Fabric) {
        let now = fab.now();
        let reissue_after = self.params.reissue_after;
        let fl = &mut self.destinations()[slot as usize];
        if fl.known {
            return;
        }
        fl.known = true;
        fl.tokens_sent = free;
        fl.goal = fl.n_pkts;
        fl.next_request = free;
        if free == fl.n_pkts {
            fl.resend_deadline = Some(now + reissue_after);
        }
        let dst = fl.dst;
        let h = &mut self.hosts[dst as usize];
        h.receiving.push(slot);
        if self.params.hold {
            h.hold += free; // leave the downlink free for the unsolicited packets
        }
        self.wake_clock(dst, now, fab);
    }

    fn free_tokens(&self, n: u32) -> u32 {
        free_token_count(&self.params, n)
    }
}

/// The free tokens of a flow of `n` packets (§3.2: a BDP's worth; the authors' code gives them
/// only to flows of at most that many packets).
fn free_token_count(p: &PhostParams, n: u32) -> u32 {
    if p.free_tokens_only_short {
        if n <= p.free_tokens {
            n
        } else {
            0
        }
    } else {
        n.min(p.free_tokens)
    }
}
