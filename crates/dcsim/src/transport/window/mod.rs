//! The window-based transport mechanism shared by TCP, DCTCP and the later window protocols.
//!
//! * Sequence numbers count packets of a flow (packet `i` carries payload bytes
//!   `i·1460 .. min((i+1)·1460, size)`).
//! * The receiver acknowledges every data packet with a cumulative ACK (the next packet it
//!   expects), echoes CE as ECN-Echo and echoes the data packet's timestamp, so every ACK
//!   gives an RTT sample (RFC 7323 style, which also makes Karn's rule unnecessary).
//! * Fast retransmit on the `k`-th duplicate ACK (`k` fixed, max(3, 0.75·cwnd) or never),
//!   followed by NewReno recovery (RFC 6582): window inflation per duplicate ACK, partial
//!   ACKs retransmit the next hole, a full ACK deflates to ssthresh.
//! * One retransmission timer per flow: adaptive (RFC 6298 with a minimum and exponential
//!   backoff) or fixed (MinTCP). On expiry: the policy's `on_timeout`, then go-back-N from
//!   the first unacknowledged packet.
//! * Every packet the window allows enters the host's NIC queue at once; NIC-clocked senders
//!   ([`WindowParams::nic_clocked`], pFabric's `sending = "nic-clocked"`) instead keep each
//!   host's ready flows in a list and hand the NIC one packet each time it goes idle, from the
//!   most urgent flow (`on_nic_free`), starting its timer then. (Probes, and the one packet a
//!   stall check resends, go to the NIC queue directly in both.)
//! * FCT ends when the sender receives the ACK of the last packet (as the pFabric ns-2 agents and the pHost authors' simulator measure it).
//!
//! Timers are lazy, with at most one event pending per flow. The event is scheduled at
//! `min(deadline, now + min_rto)`. Every later deadline is (a later ACK's time) + rto ≥
//! now + min_rto, so the pending event is never after the true deadline: a deadline that
//! moves (earlier or later) never needs a new event. An event that fires before the deadline
//! re-arms itself the same way; one that fires at the deadline is the timeout — exactly when
//! a timer reset on every ACK would fire.
//!
//! With SACK the sender skips packets the receiver already holds, read from the receiver's
//! state (the idealised SACK of the pHost authors' simulator). A real SACK never covers the
//! first unacknowledged packet, so this can see what a real sender cannot: every packet its
//! window allows (after a go-back-N, or after an ACK that moved the window) may already be at
//! the receiver with only the ACKs on their way, and then nothing is sent and no timer runs.
//! The flow waits one RTO for those ACKs (a stall check); if none has moved `snd_una` by then
//! (they were lost), it times out and resends `snd_una` itself, as a real sender's RTO does,
//! and that duplicate draws a fresh cumulative ACK. Without this a flow whose ACKs were all
//! lost would stall for good.
//!
//! The partitioned model (`engine.partitioned`, [`WindowParams::partitioned`]) cannot let a
//! sender read its receiver's state: the two ends may run in different partitions, on
//! different threads ([`crate::partition`]). There the two ends keep separate state (the
//! sender's flow table, and a receivers' table indexed by the slot the packets carry), and
//! with SACK every ACK also names the data packet that drew it (a one-block selective
//! acknowledgement, in the second header word): the sender skips the packets so
//! acknowledged. It learns later than the idealised sender (an ACK's flight later, and a
//! lost ACK's block never), so the stall check above applies unchanged. Each partition's
//! transport numbers its slots in its own residue class (`slot ≡ partition index`, modulo
//! the partition count), so a slot names one open flow in the whole run, and a receiver's
//! entry is overwritten only by a later flow (flow ids grow with arrival time); a receiver
//! cannot tell that a flow finished, so it answers a finished flow's stragglers too.

pub mod policy;
pub mod tagging;

pub use policy::{CongestionControl, FlowCtx, Window};
pub use tagging::{ClassTag, PriorityTag, Tagger};

use super::{Completion, HostTransport, TransportEvent};
use crate::fabric::Fabric;
use crate::packet::{ecn, Packet, PacketId, PacketKind, SeqSet};
use crate::spec::{Connections, DupAckThreshold, RtoMode, Spec};
use crate::units::{CONTROL_BYTES, HEADER_BYTES};
use crate::workload::FlowArrival;
use dcsim_engine::SimTime;
use std::collections::{HashMap, VecDeque};
use tagging::TagCtx;

/// MinTCP's probe: a 1-byte segment the receiver answers with its cumulative ACK.
pub const PROBE: PacketKind = PacketKind::control(0);

crate::transport_events! {
    /// The window mechanism's timers.
    pub enum WindowEvent {
        /// The retransmission timer of flow slot `.0`, generation `.1`.
        Timer(slot, gen) = 0,
        /// Re-check flow slot `.0` (generation `.1`), which found everything its window allows
        /// already at the receiver and has no timer running (module docs).
        StallCheck(slot, gen) = 1,
        /// Host `.0`'s NIC may be free: send its most urgent ready flow's next packet
        /// ([`WindowParams::nic_clocked`]). Codes 2-6 are left to the protocols that wrap
        /// this mechanism with events of their own (PASE).
        NicFree(host) = 7,
    }
}

impl WindowEvent {
    /// Whether event `code` is this mechanism's (for protocols that wrap it).
    pub(crate) fn owns(code: u8) -> bool {
        code < 2 || code == 7
    }
}

/// Settings of the mechanism (the policy has its own).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct WindowParams {
    /// Initial congestion window, packets.
    pub initial_window: u32,
    /// Largest congestion window, packets.
    pub max_window: u32,
    /// Adaptive or fixed RTO.
    pub rto_mode: RtoMode,
    /// Minimum (adaptive) or fixed RTO.
    pub min_rto: SimTime,
    /// Largest backed-off RTO.
    pub max_rto: SimTime,
    /// Fast-retransmit trigger.
    #[serde(with = "crate::spec::dupack_state")]
    pub dupack: DupAckThreshold,
    /// Retransmissions skip packets the receiver already holds (SACK, idealised: the sender
    /// reads the receiver's state, as the pHost authors' simulator does).
    pub sack_skip: bool,
    /// The window also admits one packet per packet the receiver holds beyond the first
    /// unacknowledged one, as the latest ACK reports them (the pHost authors' pFabric:
    /// window = cwnd · MSS + SACKed bytes, `Flow::send_pending_data`).
    pub sack_window: bool,
    /// The partitioned model's variant (`engine.partitioned`): separate sender and receiver
    /// state, SACK learned from ACKs (module docs). False: one entry holds both ends and SACK
    /// reads the receiver's state (idealised).
    pub partitioned: bool,
    /// Enter probe mode after this many consecutive timeouts (0 = never): send only a
    /// 1-byte probe per RTO until an ACK arrives (MinTCP: pFabric HotNets'12 §3 and the
    /// authors' ns-2 agent's `prob_cap_`).
    pub probe_after: u32,
    /// How data packets are tagged with a priority number and a class.
    pub tagger: Tagger,
    /// Flows reuse their host pair's idle connections (`transport.connections =
    /// "per-host-pair"`): see [`Connection`].
    pub persistent: bool,
    /// Senders clocked by their NIC (`pfabric.sending = "nic-clocked"`): a host hands its NIC
    /// one data packet each time the NIC goes idle, from the ready flow whose packet is the
    /// most urgent (its class, then the lowest priority number: fewest remaining bytes), so no window's
    /// burst overflows the NIC's queue, and a packet's timer starts when it leaves the host.
    /// False: every packet the window allows enters the NIC's queue at once.
    pub nic_clocked: bool,
}

impl WindowParams {
    /// The `[transport]` section's settings (and the model's, `engine.partitioned`), plain
    /// tagging.
    pub fn from_spec(spec: &Spec) -> Self {
        let t = &spec.transport;
        WindowParams {
            initial_window: t.initial_window_pkts,
            max_window: t.max_window_pkts,
            rto_mode: t.rto,
            min_rto: SimTime::from_us_f64(t.min_rto_us),
            max_rto: SimTime::from_us_f64(t.max_rto_us),
            dupack: t.dupack_threshold,
            sack_skip: t.sack,
            sack_window: false,
            partitioned: spec.engine.partitioned,
            probe_after: t.probe_after_timeouts,
            tagger: Tagger::PLAIN,
            persistent: t.connections == Connections::PerHostPair,
            nic_clocked: false,
        }
    }
}

/// What a flow's receiving end holds.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Receiver {
    /// The next packet expected in order.
    rcv_nxt: u32,
    received: SeqSet,
    /// Distinct data packets received: those beyond `rcv_nxt` number `n_received - rcv_nxt`.
    n_received: u32,
}

impl Receiver {
    /// Records data packet `seq` of a flow of at most `n_pkts` packets.
    #[inline(always)]
    fn accept(&mut self, seq: u32, n_pkts: u32) {
        if seq >= self.rcv_nxt && self.received.insert(seq) {
            self.n_received += 1;
            while self.rcv_nxt < n_pkts && self.received.contains(self.rcv_nxt) {
                self.rcv_nxt += 1;
            }
        }
    }
}

/// A receiving end of the partitioned model, in the receivers' table.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct ApartReceiver {
    /// Its flow (`u32::MAX`: none yet).
    flow: u32,
    rx: Receiver,
}

/// What an idle persistent connection keeps for its host pair's next flow
/// (`transport.connections = "per-host-pair"`, the pFabric and PIAS authors' ns-2 scripts: one
/// `FullTcp` agent per host pair carries flow after flow, and a new flow only resets the
/// window to the initial one, `advance-bytes`). Sequence numbers and everything of the flow
/// itself start afresh.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Connection<C> {
    /// The policy's connection state (DCTCP's α: [`CongestionControl::carry_over`]).
    cc: C,
    ssthresh: f64,
    srtt_ps: f64,
    rttvar_ps: f64,
}

/// One flow: its sender, and its receiver too except in the partitioned model.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Flow<C> {
    id: u32,
    active: bool,
    /// Bumped when the slot is freed or reused, so events of an earlier flow are ignored.
    gen: u32,
    src: u32,
    dst: u32,
    size_bytes: u64,
    n_pkts: u32,
    /// Priority class of the flow's data packets.
    class: u8,
    /// Absolute deadline (`SimTime::MAX`: none).
    deadline: SimTime,
    // sender
    snd_una: u32,
    snd_nxt: u32,
    high_tx: u32,
    win: Window,
    cc: C,
    dupacks: u32,
    in_recovery: bool,
    recover: u32,
    srtt_ps: f64,
    rttvar_ps: f64,
    backoff: u32,
    rto_deadline: SimTime,
    timer_at: SimTime,
    consecutive_timeouts: u32,
    /// MLFQ offsets are counted from this packet (moved by a PIAS reset).
    tag_base: u32,
    probing: bool,
    /// Held by its protocol: no data goes out (probes only) until released.
    held: bool,
    /// In its host's ready list, waiting for the NIC (`nic_clocked` only).
    ready: bool,
    /// `snd_una` and due time of the latest stall check: scheduled when sending found
    /// everything the window allows already at the receiver, with no timer pending.
    stall_una: u32,
    stall_at: SimTime,
    /// Packets beyond `snd_una` the receiver holds, as the latest ACK reported them (read
    /// with `sack_window`).
    sacked: u32,
    /// The packets selectively acknowledged so far (the partitioned model with SACK).
    sack_blocks: SeqSet,
    /// The slot its packets carry (its table index in the partition's slot numbering).
    wire_slot: u32,
    /// Its receiving end (not in the partitioned model, where receivers have their own table).
    rx: Receiver,
    // statistics
    retransmits: u32,
    timeouts: u32,
    packets_sent: u32,
}

impl<C: CongestionControl> Flow<C> {
    /// What the policy's hooks see of this flow now.
    #[inline]
    fn ctx(&self, now: SimTime) -> FlowCtx {
        FlowCtx {
            now,
            size_bytes: self.size_bytes,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            deadline: self.deadline,
            srtt: SimTime(self.srtt_ps as u64),
        }
    }

    /// An idle flow state (slot generation `gen`, bitmap storage `received` and
    /// `sack_blocks`).
    fn fresh(cc: C, gen: u32, received: SeqSet, sack_blocks: SeqSet) -> Self {
        Flow {
            id: 0,
            active: false,
            gen,
            src: 0,
            dst: 0,
            size_bytes: 0,
            n_pkts: 0,
            class: 0,
            deadline: SimTime::MAX,
            snd_una: 0,
            snd_nxt: 0,
            high_tx: 0,
            win: Window { cwnd: 0.0, ssthresh: 0.0, max: 0.0 },
            cc,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            srtt_ps: 0.0,
            rttvar_ps: 0.0,
            backoff: 0,
            rto_deadline: SimTime::ZERO,
            timer_at: SimTime::MAX,
            consecutive_timeouts: 0,
            tag_base: 0,
            probing: false,
            held: false,
            ready: false,
            stall_una: u32::MAX,
            stall_at: SimTime::MAX,
            sacked: 0,
            sack_blocks,
            wire_slot: 0,
            rx: Receiver { rcv_nxt: 0, received, n_received: 0 },
            retransmits: 0,
            timeouts: 0,
            packets_sent: 0,
        }
    }
}

/// The flow table and the mechanism, with policy `C` (statically dispatched).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct WindowTransport<C> {
    params: WindowParams,
    template: C,
    flows: Vec<Flow<C>>,
    free: Vec<u32>,
    /// The partitioned model's receivers, indexed by the slot the flow's packets carry.
    receivers: Vec<ApartReceiver>,
    /// Slot numbering: table index `i` is slot `i · slot_stride + slot_offset` on the wire
    /// (the partition count and index in a partitioned run; 1 and 0 otherwise).
    slot_stride: u32,
    slot_offset: u32,
    /// Idle persistent connections by host pair (`src << 32 | dst`), idle longest first
    /// (`params.persistent` only).
    idle: HashMap<u64, VecDeque<Connection<C>>>,
    /// The NIC-clocked senders' hosts, by host index (`params.nic_clocked` only).
    nics: Nics,
}

/// The hosts of NIC-clocked senders ([`WindowParams::nic_clocked`]).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Nics {
    hosts: Vec<NicHost>,
}

/// A NIC-clocked host: its flows with a packet their window allows, and whether its NIC's
/// wake-up is pending.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct NicHost {
    /// (slot, generation) of each ready flow.
    ready: Vec<(u32, u32)>,
    wake_pending: bool,
}

impl Nics {
    /// Puts the flow in `slot` in its host's ready list (once) and wakes the host's NIC.
    fn ready<C: CongestionControl>(&mut self, slot: u32, fl: &mut Flow<C>, fab: &mut Fabric) {
        if fl.ready {
            return;
        }
        fl.ready = true;
        let host = fl.src as usize;
        if self.hosts.len() <= host {
            self.hosts.resize_with(host + 1, NicHost::default);
        }
        let h = &mut self.hosts[host];
        h.ready.push((slot, fl.gen));
        let at = fab.nic_idle_at(fl.src);
        super::schedule_nic_wake(
            &mut h.wake_pending,
            at,
            WindowEvent::NicFree(fl.src).encode(),
            fab,
        );
    }
}

impl<C: CongestionControl> WindowTransport<C> {
    /// A transport whose flows start with a clone of `template` as their policy.
    pub fn new(params: WindowParams, template: C) -> Self {
        WindowTransport {
            params,
            template,
            flows: Vec::new(),
            free: Vec::new(),
            receivers: Vec::new(),
            slot_stride: 1,
            slot_offset: 0,
            idle: HashMap::new(),
            nics: Nics::default(),
        }
    }

    /// The table index of the flow whose packets carry `wire_slot`, if it is this
    /// partition's.
    pub(crate) fn local_slot(&self, wire_slot: u32) -> Option<u32> {
        let off = wire_slot.checked_sub(self.slot_offset)?;
        (off % self.slot_stride == 0).then_some(off / self.slot_stride)
    }

    /// Starts flow `f` now: allocates its slot, sends its initial window, returns the slot.
    pub fn start(&mut self, f: &FlowArrival, fab: &mut Fabric) -> u32 {
        let cc = self.template.clone();
        self.start_with(f, cc, fab)
    }

    /// Starts flow `f` now with policy `cc` (its protocol's initial decision).
    pub fn start_with(&mut self, f: &FlowArrival, cc: C, fab: &mut Fabric) -> u32 {
        let slot = self.open(f, cc);
        self.pump(slot, fab);
        slot
    }

    /// Sets up flow `f` with policy `cc` and returns its slot, without sending anything: the
    /// caller sets its window (or holds it) first, then [`Self::pump`]s.
    pub fn open(&mut self, f: &FlowArrival, cc: C) -> u32 {
        let n_pkts = crate::units::Bytes(f.size_bytes).packets();
        let init = self.params.initial_window as f64;
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                let (received, blocks) = (SeqSet::default(), SeqSet::default());
                self.flows.push(Flow::fresh(self.template.clone(), 0, received, blocks));
                (self.flows.len() - 1) as u32
            }
        };
        let wire_slot = self.wire_slot(slot);
        let fl = &mut self.flows[slot as usize];
        // The flow's own receiver (sequential model) or what SACK tells it (partitioned).
        let apart = self.params.partitioned;
        let mut received = std::mem::take(&mut fl.rx.received);
        received.reset(if apart { 0 } else { n_pkts });
        let mut blocks = std::mem::take(&mut fl.sack_blocks);
        blocks.reset(if apart && self.params.sack_skip { n_pkts } else { 0 });
        let mut new = Flow::fresh(cc, fl.gen.wrapping_add(1), received, blocks);
        new.wire_slot = wire_slot;
        new.id = f.id;
        new.active = true;
        new.src = f.src;
        new.dst = f.dst;
        new.size_bytes = f.size_bytes;
        new.n_pkts = n_pkts;
        new.deadline = f.deadline;
        new.class = self.params.tagger.flow_class(f.size_bytes);
        new.win =
            Window { cwnd: init, ssthresh: f64::INFINITY, max: self.params.max_window as f64 };
        if self.params.persistent {
            // The pair's connection idle longest, as the scripts hand a pair's next arrival to
            // the first of its connections to finish.
            let idle = self.idle.get_mut(&host_pair(f.src, f.dst)).and_then(|q| q.pop_front());
            if let Some(c) = idle {
                new.cc.carry_over(&c.cc);
                new.win.ssthresh = c.ssthresh;
                (new.srtt_ps, new.rttvar_ps) = (c.srtt_ps, c.rttvar_ps);
            }
        }
        *fl = new;
        slot
    }

    /// The policy and window of the active flow in `slot` whose id is `flow`.
    pub fn flow_mut(&mut self, slot: u32, flow: u32) -> Option<(&mut C, &mut Window)> {
        self.flows
            .get_mut(slot as usize)
            .filter(|f| f.active && f.id == flow)
            .map(|f| (&mut f.cc, &mut f.win))
    }

    /// The slot the packets of the flow in table entry `slot` carry (the same in the
    /// sequential model).
    pub(crate) fn wire_slot(&self, slot: u32) -> u32 {
        slot * self.slot_stride + self.slot_offset
    }

    /// Bytes of the flow in `slot` not yet acknowledged.
    pub fn remaining_bytes(&self, slot: u32) -> u64 {
        let fl = &self.flows[slot as usize];
        fl.size_bytes.saturating_sub(fl.snd_una as u64 * crate::units::MSS_BYTES as u64)
    }

    /// The smoothed RTT of the flow in `slot` (zero before its first sample).
    pub fn srtt(&self, slot: u32) -> SimTime {
        SimTime(self.flows[slot as usize].srtt_ps as u64)
    }

    /// Holds (`true`) or releases the flow in `slot`: a held flow sends no data, only the
    /// probes its protocol asks for, and does not time out; a released one restarts its timer
    /// and sends what its window allows at once, from where it was (resending everything in
    /// flight would duplicate packets merely queued behind higher priorities: PASE
    /// left-right at load 0.9 retransmitted 11,643 packets with no drop).
    pub fn hold(&mut self, slot: u32, held: bool, fab: &mut Fabric) {
        let fl = &mut self.flows[slot as usize];
        fl.held = held;
        if !held {
            // Packets sent before the hold may still be queued behind higher priorities, not
            // lost: the flow resumes where it was, and its restarted timer and duplicate ACKs
            // recover what was lost.
            fl.win.cwnd = fl.win.cwnd.clamp(1.0, fl.win.max);
            fl.backoff = 0;
            fl.consecutive_timeouts = 0;
            fl.in_recovery = false;
            fl.dupacks = 0;
            fl.rto_deadline = fab.now() + rto(&self.params, fl);
            // A held flow's timer lapsed without re-arming: arm it again, or a flow whose
            // packets in flight were lost would wait for ACKs that never come.
            if fl.snd_una < fl.snd_nxt {
                arm_timer(&self.params, slot, fl, fab);
            }
            pump(&self.params, &mut self.nics, slot, fl, fab);
        }
    }

    /// Sends what the window of the flow in `slot` allows now (after its policy changed it).
    pub fn pump(&mut self, slot: u32, fab: &mut Fabric) {
        pump(&self.params, &mut self.nics, slot, &mut self.flows[slot as usize], fab);
    }

    /// Sends a header-only probe of the flow in `slot`; the receiver answers with its
    /// cumulative ACK.
    pub fn probe(&mut self, slot: u32, fab: &mut Fabric) {
        send_probe(&mut self.flows[slot as usize], fab);
    }
}

impl<C: CongestionControl> HostTransport for WindowTransport<C> {
    /// Starts flow `f` now: allocates its slot and sends its initial window.
    fn start_flow(&mut self, f: &FlowArrival, fab: &mut Fabric) {
        self.start(f, fab);
    }

    /// A packet of this transport reached host `pkt.dst`. Frees the packet; returns the
    /// completion if this ACK finished its flow. Always inlined, as its receiver's part is: the
    /// partitioned loop calls it too, and with two callers the compiler stopped inlining it
    /// into the sequential loop (callgrind; docs/performance.md, "Parallel runs").
    #[inline(always)]
    fn on_packet(&mut self, id: PacketId, fab: &mut Fabric) -> Option<Completion> {
        let p = *fab.pool.get(id);
        fab.deliver(id);
        let slot = if self.params.partitioned { self.apart_slot(&p, fab)? } else { p.slot };
        let fl = self.flows.get_mut(slot as usize)?;
        if !fl.active || fl.id != p.flow {
            return None; // a straggler of a finished flow
        }
        match p.kind {
            PacketKind::DATA | PROBE => {
                // The sequential model: the flow's entry holds its receiver too.
                let n_pkts = fl.n_pkts;
                receive(&self.params, &mut fl.rx, n_pkts, &p, 0, fab);
                None
            }
            PacketKind::ACK => {
                if on_ack(&self.params, &mut self.nics, slot, fl, &p, fab) {
                    let done = Completion {
                        flow: fl.id,
                        retransmits: fl.retransmits,
                        timeouts: fl.timeouts,
                        packets_sent: fl.packets_sent,
                    };
                    fl.active = false;
                    fl.gen = fl.gen.wrapping_add(1); // any pending timer is now stale
                    self.free.push(slot);
                    if self.params.persistent {
                        let c = Connection {
                            cc: fl.cc.clone(),
                            ssthresh: fl.win.ssthresh,
                            srtt_ps: fl.srtt_ps,
                            rttvar_ps: fl.rttvar_ps,
                        };
                        self.idle.entry(host_pair(fl.src, fl.dst)).or_default().push_back(c);
                    }
                    Some(done)
                } else {
                    None
                }
            }
            _ => None, // not this transport's
        }
    }

    /// The largest backed-off RTO (pFabric's and LAS's fixed one).
    fn recovery_timeout(&self, _net: &crate::topology::Network) -> SimTime {
        self.params.max_rto
    }

    /// Numbers this transport's slots for partition `index` of `count` (module docs).
    fn set_partition(&mut self, index: u32, count: u32) {
        debug_assert!(self.params.partitioned, "only the partitioned model is partitioned");
        debug_assert!(self.flows.is_empty(), "set before any flow starts");
        (self.slot_offset, self.slot_stride) = (index, count);
    }

    fn on_event(&mut self, code: u8, a: u32, b: u32, fab: &mut Fabric) {
        match WindowEvent::decode(code, a, b) {
            WindowEvent::Timer(slot, gen) => self.on_timer(slot, gen, fab),
            WindowEvent::StallCheck(slot, gen) => self.on_stall_check(slot, gen, fab),
            WindowEvent::NicFree(host) => self.on_nic_free(host, fab),
        }
    }
}

impl<C: CongestionControl> WindowTransport<C> {
    /// The partitioned model's `on_packet`, first part: a data packet or probe goes to the
    /// receivers' table (`None`: nothing more to do); an ACK's slot becomes this partition's
    /// table index (`None`: not a flow of this partition), and its flow notes the ACK's SACK
    /// block (before `on_ack`, which does not read the blocks). Out of line and cold, so the
    /// sequential model's `on_packet` stays as small as it was (callgrind,
    /// docs/performance.md).
    #[cold]
    #[inline(never)]
    fn apart_slot(&mut self, p: &Packet, fab: &mut Fabric) -> Option<u32> {
        if matches!(p.kind, PacketKind::DATA | PROBE) {
            self.on_data_apart(p, fab);
            return None;
        }
        let slot = self.local_slot(p.slot)?;
        if let Some(fl) = self.flows.get_mut(slot as usize).filter(|f| f.active && f.id == p.flow) {
            note_sack_block(&self.params, fl, p);
        }
        Some(slot)
    }

    /// The partitioned model: a data packet or probe reached its receiver, whose entry in the
    /// receivers' table is found by the slot the packet carries (module docs).
    fn on_data_apart(&mut self, p: &Packet, fab: &mut Fabric) {
        let i = p.slot as usize;
        if self.receivers.len() <= i {
            self.receivers
                .resize_with(i + 1, || ApartReceiver { flow: u32::MAX, rx: Receiver::default() });
        }
        let r = &mut self.receivers[i];
        if r.flow != p.flow {
            if r.flow != u32::MAX && p.flow < r.flow {
                return; // a straggler of an earlier flow of this slot (ids grow with time)
            }
            // The slot's next flow: its first packet to arrive.
            r.flow = p.flow;
            r.rx.rcv_nxt = 0;
            r.rx.n_received = 0;
            r.rx.received.reset(0);
        }
        // The ACK names the data packet that drew it: a one-block SACK (module docs).
        let block = if p.kind == PacketKind::DATA { p.seq + 1 } else { 0 };
        receive(&self.params, &mut r.rx, u32::MAX, p, block, fab);
    }

    /// The timer event `(slot, gen)` fired.
    fn on_timer(&mut self, slot: u32, gen: u32, fab: &mut Fabric) {
        let params = &self.params;
        let fl = &mut self.flows[slot as usize];
        if !fl.active || fl.gen != gen {
            return;
        }
        let now = fab.now();
        fl.timer_at = SimTime::MAX;
        if fl.snd_una >= fl.snd_nxt && fl.snd_una >= fl.high_tx {
            return; // nothing outstanding
        }
        if fl.held {
            return; // a held flow does not time out: it resends when released
        }
        if now < fl.rto_deadline {
            arm_timer(params, slot, fl, fab);
            return;
        }
        timeout(params, &mut self.nics, slot, fl, fab, false);
    }

    /// Host `host`'s NIC wake-up ([`WindowParams::nic_clocked`]): once the NIC is idle, send
    /// one packet of the ready flow whose packet is the most urgent (the most urgent class,
    /// which few-queue ports serve first, then the lowest priority number, then the earliest
    /// flow), and wake again when that packet has left while any flow is ready. Flows that
    /// finished, or whose window no longer allows a packet, leave the list.
    fn on_nic_free(&mut self, host: u32, fab: &mut Fabric) {
        let wake = WindowEvent::NicFree(host).encode();
        let h = &mut self.nics.hosts[host as usize];
        if !super::nic_free_on_wake(&mut h.wake_pending, host, wake, fab) {
            return;
        }
        let mut ready = std::mem::take(&mut h.ready);
        let params = &self.params;
        let now = fab.now();
        let mut best: Option<((u8, u64, u32), usize)> = None; // ((class, priority, id), index)
        let mut i = 0;
        while i < ready.len() {
            let (slot, gen) = ready[i];
            let fl = &mut self.flows[slot as usize];
            if !fl.active || fl.gen != gen {
                ready.swap_remove(i); // finished (its slot may serve another flow now)
                continue;
            }
            if !window_allows(params, fl) {
                fl.ready = false;
                ready.swap_remove(i);
                if !fl.held && !fl.probing {
                    await_acks(params, slot, fl, fab); // as `pump` does, which returns first
                }
                continue;
            }
            let (priority, class) = tag(params, fl, fl.snd_nxt, now);
            let key = (fl.cc.class().unwrap_or(class), priority, fl.id);
            if best.is_none_or(|(k, _)| key < k) {
                best = Some((key, i));
            }
            i += 1;
        }
        if let Some((_, i)) = best {
            let slot = ready[i].0;
            let fl = &mut self.flows[slot as usize];
            let seq = fl.snd_nxt;
            fl.snd_nxt += 1;
            send_data(params, fl, seq, fab);
            if seq == fl.snd_una {
                // Nothing of the flow was in flight: its timer runs from this departure, not
                // from the ACK that emptied the flight before it waited here (an event still
                // pending for an earlier deadline re-arms itself for this one).
                fl.rto_deadline = now + rto(params, fl);
                arm_timer(params, slot, fl, fab);
            } else {
                start_timer(params, slot, fl, fab);
            }
            if !window_allows(params, fl) {
                fl.ready = false;
                ready.swap_remove(i);
            }
        }
        let h = &mut self.nics.hosts[host as usize];
        debug_assert!(h.ready.is_empty(), "nothing joins the list while it is scanned");
        h.ready = ready;
        if !h.ready.is_empty() {
            let at = fab.nic_idle_at(host);
            super::schedule_nic_wake(&mut h.wake_pending, at, wake, fab);
        }
    }

    /// The stall check `(slot, gen)` fired: if the flow has had no ACK progress and no timer
    /// for an RTO since it found nothing to send, its ACKs were lost — time out and resend
    /// the first unacknowledged packet (module docs).
    fn on_stall_check(&mut self, slot: u32, gen: u32, fab: &mut Fabric) {
        let fl = &mut self.flows[slot as usize];
        if !fl.active || fl.gen != gen || fl.stall_at != fab.now() {
            return; // finished, reused, or superseded by a later check
        }
        fl.stall_at = SimTime::MAX;
        if fl.stall_una != fl.snd_una || fl.timer_at != SimTime::MAX || fl.probing {
            return; // the ACKs came, or sending resumed and its timer covers it
        }
        timeout(&self.params, &mut self.nics, slot, fl, fab, true);
    }
}

/// The key of a host pair's idle connections.
fn host_pair(src: u32, dst: u32) -> u64 {
    (src as u64) << 32 | dst as u64
}

/// A retransmission timeout: RFC 6298 §5.5-5.7 / MinTCP: back off (adaptive only), shrink the
/// window, go back N. With `resend_una` the first unacknowledged packet goes out even if the
/// receiver holds it (a stall check, module docs).
fn timeout<C: CongestionControl>(
    params: &WindowParams,
    nics: &mut Nics,
    slot: u32,
    fl: &mut Flow<C>,
    fab: &mut Fabric,
    resend_una: bool,
) {
    let now = fab.now();
    fl.timeouts += 1;
    fl.consecutive_timeouts += 1;
    fl.cc.on_timeout(&mut fl.win);
    fl.in_recovery = false;
    fl.dupacks = 0;
    fl.snd_nxt = fl.snd_una;
    if params.rto_mode == RtoMode::Adaptive {
        fl.backoff = (fl.backoff + 1).min(30);
    }
    fl.rto_deadline = now + rto(params, fl);
    if params.tagger.resets_after(fl.consecutive_timeouts) {
        fl.tag_base = fl.snd_una; // PIAS: the flow starts over in the top queue
    }
    if params.probe_after > 0 && fl.consecutive_timeouts >= params.probe_after {
        // MinTCP probe mode: the window is one byte, so only a probe goes out per RTO; the
        // ACK that answers it ends probe mode and sending resumes from snd_una.
        fl.probing = true;
        send_probe(fl, fab);
        arm_timer(params, slot, fl, fab);
        return;
    }
    if resend_una {
        let seq = fl.snd_una;
        fl.snd_nxt = seq + 1;
        send_data(params, fl, seq, fab);
        arm_timer(params, slot, fl, fab);
    }
    pump(params, nics, slot, fl, fab);
}

fn rto<C: CongestionControl>(params: &WindowParams, fl: &Flow<C>) -> SimTime {
    match params.rto_mode {
        RtoMode::Fixed => params.min_rto,
        RtoMode::Adaptive => {
            let base = if fl.srtt_ps == 0.0 {
                params.min_rto
            } else {
                SimTime((fl.srtt_ps + 4.0 * fl.rttvar_ps) as u64).max(params.min_rto)
            };
            SimTime(base.as_ps().saturating_mul(1u64 << fl.backoff)).min(params.max_rto)
        }
    }
}

/// Makes sure a timer event is pending, no later than `rto_deadline` (see the module docs).
#[inline(always)]
fn arm_timer<C: CongestionControl>(
    params: &WindowParams,
    slot: u32,
    fl: &mut Flow<C>,
    fab: &mut Fabric,
) {
    if fl.timer_at != SimTime::MAX {
        return; // the pending event is never after the deadline; it re-arms itself
    }
    let at = fl.rto_deadline.min(fab.now() + params.min_rto);
    fl.timer_at = at;
    fab.schedule(at, WindowEvent::Timer(slot, fl.gen).encode());
}

/// Whether the sender takes packet `seq` to be at the receiver (SACK): read from the
/// receiver's state (idealised), or in the partitioned model from the ACKs' blocks.
#[inline]
fn received<C: CongestionControl>(params: &WindowParams, fl: &Flow<C>, seq: u32) -> bool {
    if params.partitioned {
        fl.sack_blocks.contains(seq)
    } else {
        fl.rx.received.contains(seq)
    }
}

/// Sends what the window allows (NIC-clocked: puts the flow in its host's ready list).
fn pump<C: CongestionControl>(
    params: &WindowParams,
    nics: &mut Nics,
    slot: u32,
    fl: &mut Flow<C>,
    fab: &mut Fabric,
) {
    if fl.probing || fl.held {
        return;
    }
    if params.nic_clocked {
        if window_allows(params, fl) {
            nics.ready(slot, fl, fab);
        } else {
            await_acks(params, slot, fl, fab);
        }
        return;
    }
    let wnd = window(params, fl);
    let mut sent = false;
    while fl.snd_nxt < fl.n_pkts && fl.snd_nxt < fl.snd_una.saturating_add(wnd) {
        let seq = fl.snd_nxt;
        fl.snd_nxt += 1;
        if params.sack_skip && seq < fl.high_tx && received(params, fl, seq) {
            continue; // the receiver has it (SACK)
        }
        send_data(params, fl, seq, fab);
        sent = true;
    }
    if sent {
        start_timer(params, slot, fl, fab);
    } else {
        await_acks(params, slot, fl, fab);
    }
}

/// After sending: starts the flow's timer unless one is pending.
#[inline(always)]
fn start_timer<C: CongestionControl>(
    params: &WindowParams,
    slot: u32,
    fl: &mut Flow<C>,
    fab: &mut Fabric,
) {
    if fl.timer_at == SimTime::MAX {
        fl.rto_deadline = fab.now() + rto(params, fl);
        arm_timer(params, slot, fl, fab);
    }
}

/// When the window allows nothing to be sent: if no timer is pending, everything the window
/// allows is already at the receiver (SACK); wait one RTO for its ACKs (module docs).
#[inline(always)]
fn await_acks<C: CongestionControl>(
    params: &WindowParams,
    slot: u32,
    fl: &mut Flow<C>,
    fab: &mut Fabric,
) {
    if fl.timer_at == SimTime::MAX && fl.snd_una < fl.n_pkts {
        fl.stall_una = fl.snd_una;
        fl.stall_at = fab.now() + rto(params, fl);
        fab.schedule(fl.stall_at, WindowEvent::StallCheck(slot, fl.gen).encode());
    }
}

/// The window of the flow: cwnd packets (at least one), with `sack_window` also one per
/// packet the receiver holds beyond the first unacknowledged one. It may exceed
/// `max_window` only while inflated during NewReno recovery.
#[inline(always)]
fn window<C: CongestionControl>(params: &WindowParams, fl: &Flow<C>) -> u32 {
    let wnd = (fl.win.cwnd.floor() as u32).max(1);
    if params.sack_window {
        wnd.saturating_add(fl.sacked)
    } else {
        wnd
    }
}

/// Whether the window allows the flow to send packet `snd_nxt` now, after moving `snd_nxt`
/// past the packets the receiver already holds (SACK), as [`pump`]'s loop does. (That loop
/// keeps its own copy of the test: written with this function it cost DCTCP 2.7 % more
/// instructions, callgrind, 1,000 flows of `benchmarks/phost-default.toml`.)
fn window_allows<C: CongestionControl>(params: &WindowParams, fl: &mut Flow<C>) -> bool {
    if fl.probing || fl.held {
        return false;
    }
    let wnd = window(params, fl);
    while fl.snd_nxt < fl.n_pkts && fl.snd_nxt < fl.snd_una.saturating_add(wnd) {
        if params.sack_skip && fl.snd_nxt < fl.high_tx && received(params, fl, fl.snd_nxt) {
            fl.snd_nxt += 1;
            continue;
        }
        return true;
    }
    false
}

/// The priority number and class of the flow's data packet `seq` sent at `now`.
#[inline(always)]
fn tag<C: CongestionControl>(
    params: &WindowParams,
    fl: &Flow<C>,
    seq: u32,
    now: SimTime,
) -> (u64, u8) {
    params.tagger.tag(&TagCtx {
        now,
        seq,
        remaining: fl.size_bytes.saturating_sub(fl.snd_una as u64 * crate::units::MSS_BYTES as u64),
        flow_class: fl.class,
        tag_base: fl.tag_base,
        deadline: fl.deadline,
    })
}

fn send_data<C: CongestionControl>(
    params: &WindowParams,
    fl: &mut Flow<C>,
    seq: u32,
    fab: &mut Fabric,
) {
    let size = crate::units::Bytes(fl.size_bytes).packet_wire_bytes(seq);
    let retransmit = seq < fl.high_tx;
    if retransmit {
        fl.retransmits += 1;
    } else {
        fl.high_tx = seq + 1;
    }
    fl.packets_sent += 1;
    let (priority, class) = tag(params, fl, seq, fab.now());
    let p = Packet {
        priority,
        ecn: if fl.cc.ecn_capable() { ecn::ECT } else { 0 },
        class: fl.cc.class().unwrap_or(class),
        retransmit,
        ..Packet::new(PacketKind::DATA, fl.id, fl.wire_slot, fl.src, fl.dst, seq, size, fab.now())
    };
    fab.inject(fl.src, p);
}

/// MinTCP's probe: one byte of payload; the receiver answers with its cumulative ACK.
fn send_probe<C: CongestionControl>(fl: &mut Flow<C>, fab: &mut Fabric) {
    let (slot, una) = (fl.wire_slot, fl.snd_una);
    let p = Packet {
        priority: fl.size_bytes.saturating_sub(una as u64 * crate::units::MSS_BYTES as u64),
        class: fl.cc.class().unwrap_or(0),
        ..Packet::new(PROBE, fl.id, slot, fl.src, fl.dst, una, HEADER_BYTES + 1, fab.now())
    };
    fab.inject(fl.src, p);
}

/// A data packet or probe `p` reached the receiving end `rx` (of a flow of at most `n_pkts`
/// packets): record it and answer with the cumulative ACK, echoing CE and the timestamp, and
/// carrying `sack_block` (the partitioned model's one-block SACK; 0: none) in its second
/// header word.
#[inline(always)]
fn receive(
    params: &WindowParams,
    rx: &mut Receiver,
    n_pkts: u32,
    p: &Packet,
    sack_block: u32,
    fab: &mut Fabric,
) {
    let data = p.kind == PacketKind::DATA;
    if data {
        rx.accept(p.seq, n_pkts);
    }
    // With `sack_window` the ACK reports how many packets beyond it the receiver holds.
    let sacked = if params.sack_window { rx.n_received - rx.rcv_nxt } else { 0 };
    let ack = Packet {
        ecn: if p.ecn & ecn::CE != 0 { ecn::ECE } else { 0 },
        header: [sacked, sack_block],
        // The data packet's send time, echoed for the sender's RTT sample.
        ..Packet::new(
            PacketKind::ACK,
            p.flow,
            p.slot,
            p.dst,
            p.src,
            rx.rcv_nxt,
            CONTROL_BYTES,
            p.timestamp,
        )
    };
    fab.inject(p.dst, ack);
}

/// The partitioned model: the sender notes the SACK block ACK `p` carries (module docs).
fn note_sack_block<C: CongestionControl>(params: &WindowParams, fl: &mut Flow<C>, p: &Packet) {
    if params.sack_skip && p.header[1] > 0 {
        fl.sack_blocks.insert(p.header[1] - 1);
    }
}

/// Handles an ACK at the sender; returns true if the flow is complete.
fn on_ack<C: CongestionControl>(
    params: &WindowParams,
    nics: &mut Nics,
    slot: u32,
    fl: &mut Flow<C>,
    p: &Packet,
    fab: &mut Fabric,
) -> bool {
    let now = fab.now();
    let ack = p.seq;
    let ece = p.ecn & ecn::ECE != 0;
    // Any ACK ends a run of timeouts and probe mode (the ns-2 agent of the pFabric patch).
    fl.consecutive_timeouts = 0;
    if params.sack_window {
        fl.sacked = p.header[0]; // every ACK, duplicates included, as the authors' code
    }
    if fl.probing {
        fl.probing = false;
        fl.rto_deadline = now + rto(params, fl);
    }
    if ack > fl.snd_una {
        let acked = ack - fl.snd_una;
        // RFC 6298 §2: RTT estimation from the echoed timestamp.
        let r = (now - p.timestamp).as_ps() as f64;
        if fl.srtt_ps == 0.0 {
            fl.srtt_ps = r;
            fl.rttvar_ps = r / 2.0;
        } else {
            fl.rttvar_ps = 0.75 * fl.rttvar_ps + 0.25 * (fl.srtt_ps - r).abs();
            fl.srtt_ps = 0.875 * fl.srtt_ps + 0.125 * r;
        }
        fl.backoff = 0;
        fl.snd_una = ack;
        if fl.snd_nxt < ack {
            fl.snd_nxt = ack; // after go-back-N the receiver may be ahead
        }
        let ctx = fl.ctx(now);
        fl.cc.on_ack_bookkeeping(acked, ece, &ctx);
        if fl.in_recovery {
            if ack >= fl.recover {
                // RFC 6582 §3.2 step 3: full acknowledgement, deflate.
                fl.in_recovery = false;
                fl.win.cwnd = fl.win.ssthresh.min(fl.win.max);
                fl.dupacks = 0;
            } else {
                // Partial acknowledgement: retransmit the next hole, deflate by what was acked.
                send_data(params, fl, ack, fab);
                fl.win.cwnd = (fl.win.cwnd - acked as f64 + 1.0).max(1.0);
            }
        } else {
            fl.dupacks = 0;
            let cut = ece && fl.cc.on_ece(&mut fl.win, &ctx);
            if !cut {
                fl.cc.on_ack(&mut fl.win, acked, &ctx);
            }
        }
        if fl.snd_una >= fl.n_pkts {
            return true;
        }
        fl.rto_deadline = now + rto(params, fl);
        if fl.snd_una < fl.snd_nxt {
            arm_timer(params, slot, fl, fab);
        }
    } else if ack == fl.snd_una && fl.snd_nxt > fl.snd_una && !fl.held {
        // (A held flow's duplicate ACKs answer its probes: no fast retransmit, no inflation.)
        fl.dupacks += 1;
        if ece {
            let ctx = fl.ctx(now);
            fl.cc.on_ece(&mut fl.win, &ctx);
        }
        if fl.in_recovery {
            fl.win.cwnd += 1.0; // RFC 6582 §3.2 step 4: inflate per duplicate ACK
        } else {
            let threshold = match params.dupack {
                DupAckThreshold::Fixed(k) => k,
                DupAckThreshold::Dynamic(f) => ((f * fl.win.cwnd).floor() as u32).max(3),
                DupAckThreshold::Off => u32::MAX,
            };
            if fl.dupacks == threshold {
                // RFC 6582 §3.2 step 2: enter recovery, retransmit the first hole.
                let flight = fl.snd_nxt - fl.snd_una;
                fl.cc.on_fast_retransmit(&mut fl.win, flight);
                fl.win.cwnd += 3.0;
                fl.recover = fl.snd_nxt;
                fl.in_recovery = true;
                send_data(params, fl, fl.snd_una, fab);
                fl.rto_deadline = now + rto(params, fl);
            }
        }
    }
    pump(params, nics, slot, fl, fab);
    false
}
