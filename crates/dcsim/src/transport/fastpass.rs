//! Fastpass (Perry et al., SIGCOMM'14) as the pHost paper simulates it (pHost §4.1;
//! the details as in the pHost authors' simulator, NetSys/simulator): a centralised arbiter decides which flow every source sends in every
//! timeslot.
//!
//! * **Arbiter.** A service host attached to host 0's edge switch by a host-rate link; its
//!   requests and schedules cross the fabric as real 40-byte packets at the highest priority.
//!   Every epoch (8 timeslots, 8.5 MTU times: a slot is slightly longer than one MTU so slot
//!   packets never queue behind each other at the NIC) it computes, instantly (§4.1: "zero
//!   processing overhead"), the schedule of the *next* epoch: for each of its timeslots, a
//!   greedy maximal matching of sources to destinations that walks the flows in ascending
//!   order of the packets it still has to schedule for them (SRPT; ties to the earlier flow)
//!   and takes a flow when neither its source nor its destination is used in that slot. Only
//!   edge links are constrained: the fabric is non-blocking and sprays packets. One schedule
//!   packet goes to every source with at least one slot. Epochs run on a global grid
//!   (multiples of the epoch length, perfect clock synchronisation, §4.1) while any flow has
//!   packets left to schedule.
//! * **Source.** A new flow sends an RTS with its size in packets to the arbiter. In each
//!   granted slot it sends one data packet at priority 1: the next not-yet-acknowledged packet
//!   after the last one sent (round robin). Once it has sent as many packets as it requested
//!   it waits one epoch; if packets are still unacknowledged it requests that many again (the
//!   only loss recovery). When every packet is acknowledged the flow is complete and a final
//!   RTS tells the arbiter to forget it. A schedule that arrives after its epoch began shifts
//!   that epoch's slots to start at the arrival; with `fastpass.slot_start = "arrival"` (the
//!   authors' code) every epoch's slots start when its schedule arrives.
//! * **Destination.** ACKs every data packet (40 B, priority 0).
//!
//! Flow state lives in reusable slots (no allocation per packet): a slot is released once the
//! source is done *and* the arbiter has dropped the flow; every schedule entry and timer
//! carries the flow's id or generation, so a late one for a reused slot is ignored.
//!
//! The partitioned model (`engine.partitioned`, [`FastpassParams::partitioned`]): the arbiter,
//! a flow's source and its destination may run in different partitions, on different threads
//! ([`crate::partition`]; the arbiter's partition is host 0's rack), so they share no table and
//! learn from packets only. A source keeps its flows in its own table and numbers their slots
//! in its partition's residue class (`slot ≡ partition index`, modulo the partition count), so a
//! slot names one open flow in the whole run; it releases a slot when its flow completes. The
//! arbiter keeps its own table indexed by that slot: an RTS brings the flow's source, its
//! destination (in the RTS's sequence number) and its count, and replaces the entry of an
//! earlier flow of the slot (flow ids grow with arrival time; an RTS of an earlier flow is a
//! straggler). A schedule travels in the packets themselves: one schedule packet per flow
//! granted slots in the epoch (per 32 timeslots of it), naming the flow and its slot, with the
//! granted timeslots as a bit mask and the epoch's number on the global grid. So a source with
//! several flows granted in one epoch gets several schedule packets where the sequential model
//! sends one. A destination ACKs every data packet from the packet's own fields. The arbiter
//! orders flows by packets left to schedule; `policy = "edf"` needs the flow's deadline, which
//! an RTS does not carry, and is refused partitioned.

use super::{Completion, HostTransport, Parts, PortPlan, Protocol, SlotNumbering, TransportEvent};
use crate::fabric::Fabric;
use crate::packet::{Packet, PacketId, PacketKind, SeqSet};
use crate::spec::{FastpassPolicy, FastpassSlotStart, Spec};
use crate::units::{Bytes, CONTROL_BYTES, MTU_BYTES};
use crate::workload::FlowArrival;
use dcsim_engine::SimTime;
use std::collections::VecDeque;

/// Request: a source tells the arbiter how many packets a flow needs (header word
/// `COUNT`; `FINISHED` when it is done).
pub const RTS: PacketKind = PacketKind::control(0);
/// Schedule: the arbiter tells a source which flow sends in which timeslot of an epoch
/// (`seq` names the schedule message).
pub const SCHEDULE: PacketKind = PacketKind::control(1);

/// Header word of an RTS: the packets requested.
const COUNT: usize = 0;
/// Header word of an RTS: [`BY_WATCHDOG`] when the watchdog sent it, else 0.
const ORIGIN: usize = 1;
/// Header word of a partitioned model's schedule packet: its flow's timeslots, bit `i` for
/// timeslot `32 · seq + i` of the epoch.
const TIMESLOTS: usize = 0;
/// Header word of a partitioned model's schedule packet: the epoch's number on the global grid
/// (its start over the epoch length).
const EPOCH: usize = 1;
/// An RTS the watchdog sent.
const BY_WATCHDOG: u32 = 1;

crate::transport_events! {
    /// Fastpass's clocks and timers.
    pub enum FastpassEvent {
        /// Host `.0`'s next granted timeslot begins.
        Slot(host) = 0,
        /// The arbiter computes the next epoch's schedule.
        ArbiterEpoch = 1,
        /// Flow slot `.0`'s (generation `.1`) re-request timer or loss watchdog.
        Timer(slot, generation) = 2,
    }
}

/// `transport.protocol = "fastpass"`.
#[derive(Debug)]
pub struct FastpassProtocol;

impl Protocol for FastpassProtocol {
    type Host = FastpassTransport;

    /// The hosts and the arbiter, one more host on host 0's edge switch (pHost §4.1); ports
    /// are pFabric priority queues (control at priority 0, data at 1).
    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        let f = &spec.fastpass;
        let t_mtu = spec.topology.host_rate().tx_time(MTU_BYTES as u64);
        let arbiter = spec.topology.n_hosts();
        let params = FastpassParams {
            slots_per_epoch: f.epoch_slots,
            epoch: SimTime((t_mtu.as_ps() as f64 * f.epoch_mtu).round() as u64),
            arbiter,
            edf: f.policy == FastpassPolicy::Edf,
            slots_at_arrival: f.slot_start == FastpassSlotStart::Arrival,
            watchdog_epochs: f.watchdog_epochs,
            partitioned: spec.engine.partitioned,
        };
        let ports = PortPlan::priority_drop(spec);
        Parts {
            service_hosts: 1,
            ..Parts::packets(FastpassTransport::new(params, arbiter + 1), ports)
        }
    }
}

/// Fastpass's settings, in absolute units.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct FastpassParams {
    /// Timeslots per epoch (8).
    pub slots_per_epoch: u32,
    /// Epoch length (8.5 MTU times at the host rate).
    pub epoch: SimTime,
    /// Host id of the arbiter (the first service host).
    pub arbiter: u32,
    /// Order in which the arbiter serves flows: fewest packets left to schedule (SRPT), or
    /// earliest deadline first (flows without one last).
    pub edf: bool,
    /// Slots start when the schedule arrives (the authors' code) instead of at the epoch
    /// boundary (`fastpass.slot_start`).
    pub slots_at_arrival: bool,
    /// Epochs without a slot before a source asks again; 0 = never (`fastpass.watchdog_epochs`).
    pub watchdog_epochs: u32,
    /// The partitioned model's variant (`engine.partitioned`): the arbiter, the sources and
    /// the destinations keep separate tables and learn from packets only (module docs).
    pub partitioned: bool,
}

impl FastpassParams {
    /// Length of one timeslot.
    pub fn slot(&self) -> SimTime {
        SimTime(self.epoch.as_ps() / self.slots_per_epoch as u64)
    }
    /// How long a source with packets requested waits without any slot before asking again
    /// (`watchdog_epochs`, 16 by default): recovers lost schedule packets, which the authors'
    /// code never does. `None` when off.
    pub fn watchdog(&self) -> Option<SimTime> {
        (self.watchdog_epochs > 0)
            .then(|| SimTime(self.epoch.as_ps() * self.watchdog_epochs as u64))
    }
}

/// The RTS value that tells the arbiter a flow is done ("−1" in the authors' code).
const FINISHED: u32 = u32::MAX;

/// One flow: the source's state and the arbiter's view of it.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Flow {
    id: u32,
    generation: u32,
    src: u32,
    dst: u32,
    size_bytes: u64,
    n_pkts: u32,
    /// Absolute deadline (carried in the RTS; used by the EDF arbiter).
    deadline: SimTime,
    // source
    sending: bool,
    acked: SeqSet,
    acked_count: u32,
    acked_until: u32,
    last_sent: Option<u32>,
    /// Packets requested from the arbiter and not yet sent.
    requested: u32,
    packets_sent: u32,
    requests: u32,
    /// Last time the source sent a packet of the flow or was granted a slot for it.
    last_activity: SimTime,
    /// When the loss watchdog fires next.
    watchdog_at: SimTime,
    // arbiter
    arbiter_known: bool,
    arbiter_done: bool,
    /// Packets the arbiter still has to schedule.
    to_schedule: u32,
    /// When the arbiter last sent the flow a schedule.
    last_grant_at: Option<SimTime>,
    in_demand: bool,
}

impl Flow {
    fn is_acked(&self, seq: u32) -> bool {
        self.acked.contains(seq)
    }

    /// The next packet to send: round robin over the unacknowledged ones, starting after the
    /// last one sent (wrapping to the first unacknowledged).
    fn next_to_send(&self) -> Option<u32> {
        if self.acked_count == self.n_pkts {
            return None;
        }
        let mut seq = self.last_sent.map_or(0, |s| s + 1);
        loop {
            if seq >= self.n_pkts {
                seq = self.acked_until;
            }
            if !self.is_acked(seq) {
                return Some(seq);
            }
            seq += 1;
        }
    }
}

/// A granted timeslot at a source.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Grant {
    at: SimTime,
    slot: u32,
    flow: u32,
}

/// One epoch's schedule for one source, carried (by index) in a schedule packet.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct ScheduleMsg {
    epoch_start: SimTime,
    /// (timeslot index, flow slot, flow id)
    entries: Vec<(u32, u32, u32)>,
}

/// The Fastpass transport: flows, hosts' granted slots, and the arbiter.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct FastpassTransport {
    params: FastpassParams,
    flows: Vec<Flow>,
    free: Vec<u32>,
    /// Per host: granted slots in time order.
    grants: Vec<VecDeque<Grant>>,
    /// Per host: the time of the pending slot wake-up, if any.
    wake_at: Vec<Option<SimTime>>,
    /// Schedules in flight (indexed by the schedule packet's `seq`), reused.
    messages: Vec<ScheduleMsg>,
    free_messages: Vec<u32>,
    /// How table entries are numbered on the wire (the partitioned model's residue classes).
    numbering: SlotNumbering,
    // arbiter
    /// The partitioned model's arbiter table, indexed by the slot the RTS carries (in the
    /// sequential model the arbiter shares `flows`).
    arbiter_flows: Vec<Flow>,
    /// Slots (on the wire) of the flows the arbiter may schedule.
    demand: Vec<u32>,
    epoch_pending: bool,
    src_used: Vec<u32>,
    dst_used: Vec<u32>,
    stamp: u32,
    /// (source, timeslot, flow slot) of the epoch being computed; reused.
    matched: Vec<(u32, u32, u32)>,
    stats: FastpassStats,
}

/// What Fastpass's mechanisms cost, for the summary's `transport_counters`.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
struct FastpassStats {
    /// Re-requests one epoch after a source sent all it had asked for (the authors' loss
    /// recovery).
    rerequests: u64,
    /// Re-requests by the watchdog (a source with slots requested and none for
    /// `watchdog_epochs`).
    watchdog_requests: u64,
    /// Watchdog requests the arbiter ignored because it had sent the flow a schedule less
    /// than an epoch before (the schedule was on its way).
    watchdog_ignored: u64,
}

impl HostTransport for FastpassTransport {
    /// Starts flow `f`: its RTS goes to the arbiter.
    fn start_flow(&mut self, f: &FlowArrival, fab: &mut Fabric) {
        let n = Bytes(f.size_bytes).packets();
        let slot = self.free.pop().unwrap_or_else(|| {
            self.flows.push(Flow::default());
            (self.flows.len() - 1) as u32
        });
        let fl = &mut self.flows[slot as usize];
        let mut acked = std::mem::take(&mut fl.acked);
        acked.reset(n);
        let now = fab.now();
        let watchdog = self.params.watchdog();
        let watchdog_at = watchdog.map_or(SimTime::MAX, |w| now + w);
        *fl = Flow {
            id: f.id,
            generation: fl.generation.wrapping_add(1),
            last_activity: now,
            watchdog_at,
            src: f.src,
            dst: f.dst,
            size_bytes: f.size_bytes,
            n_pkts: n,
            deadline: f.deadline,
            sending: true,
            acked,
            requested: n,
            ..Flow::default()
        };
        let generation = fl.generation;
        if watchdog.is_some() {
            fab.schedule(watchdog_at, FastpassEvent::Timer(slot, generation).encode());
        }
        self.request(slot, n, 0, fab);
    }

    /// A packet of this transport reached its host; frees it. Returns the completion when the
    /// last ACK reaches the source.
    fn on_packet(&mut self, id: PacketId, fab: &mut Fabric) -> Option<Completion> {
        let p = *fab.pool.get(id);
        fab.deliver(id);
        if p.kind == SCHEDULE {
            if self.params.partitioned {
                self.on_schedule_apart(&p, fab);
            } else {
                self.on_schedule(&p, fab);
            }
            return None;
        }
        if !self.params.partitioned {
            // One table for all three: a packet of a flow its slot no longer holds, or of a
            // flow both ends are done with, is a straggler.
            let fl = self.flows.get(p.slot as usize)?;
            if fl.id != p.flow || (fl.arbiter_done && !fl.sending) {
                return None;
            }
        }
        match p.kind {
            RTS => self.on_rts(&p, fab),
            PacketKind::DATA => {
                // The destination ACKs every data packet.
                let ack = Packet::new(
                    PacketKind::ACK,
                    p.flow,
                    p.slot,
                    p.dst,
                    p.src,
                    p.seq,
                    CONTROL_BYTES,
                    fab.now(),
                );
                fab.inject(p.dst, ack);
            }
            PacketKind::ACK => return self.on_ack(&p, fab),
            _ => {}
        }
        None
    }

    /// Numbers this transport's slots for partition `index` of `count` (module docs).
    /// A source asks again after the re-request watchdog's epochs without a slot.
    fn recovery_timeout(&self, _net: &crate::topology::Network) -> SimTime {
        self.params.watchdog().unwrap_or(SimTime::ZERO)
    }
    fn set_partition(&mut self, index: u32, count: u32) {
        debug_assert!(self.params.partitioned, "only the partitioned model is partitioned");
        debug_assert!(self.flows.is_empty(), "set before any flow starts");
        self.numbering = SlotNumbering::of_partition(index, count);
    }

    fn on_event(&mut self, code: u8, a: u32, b: u32, fab: &mut Fabric) {
        match FastpassEvent::decode(code, a, b) {
            FastpassEvent::Slot(host) => self.on_slot(host, fab),
            FastpassEvent::ArbiterEpoch => self.on_epoch(fab),
            FastpassEvent::Timer(slot, generation) => self.on_timer(slot, generation, fab),
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("rerequests", self.stats.rerequests),
            ("watchdog_requests", self.stats.watchdog_requests),
            ("watchdog_ignored", self.stats.watchdog_ignored),
        ]
    }
}

impl FastpassTransport {
    /// A transport for `n_hosts` hosts (the arbiter included).
    pub fn new(params: FastpassParams, n_hosts: u32) -> Self {
        let n = n_hosts as usize;
        FastpassTransport {
            params,
            flows: Vec::new(),
            free: Vec::new(),
            grants: vec![VecDeque::new(); n],
            wake_at: vec![None; n],
            messages: Vec::new(),
            free_messages: Vec::new(),
            numbering: SlotNumbering::default(),
            arbiter_flows: Vec::new(),
            demand: Vec::new(),
            epoch_pending: false,
            src_used: vec![0; n],
            dst_used: vec![0; n],
            stamp: 0,
            matched: Vec::new(),
            stats: FastpassStats::default(),
        }
    }

    /// The source asks the arbiter for `count` packets (or, with [`FINISHED`], says it is
    /// done); `origin` is 0 or [`BY_WATCHDOG`].
    fn request(&mut self, slot: u32, count: u32, origin: u32, fab: &mut Fabric) {
        let wire = self.numbering.wire(slot);
        let fl = &mut self.flows[slot as usize];
        fl.requests += 1;
        let mut header = [0; 2];
        header[COUNT] = count;
        header[ORIGIN] = origin;
        // The partitioned model's arbiter learns the flow's destination from its RTS.
        let dst = if self.params.partitioned { fl.dst } else { 0 };
        let rts = Packet {
            header,
            ..Packet::new(
                RTS,
                fl.id,
                wire,
                fl.src,
                self.params.arbiter,
                dst,
                CONTROL_BYTES,
                fab.now(),
            )
        };
        fab.inject(fl.src, rts);
    }

    /// The arbiter's epoch: schedule the next epoch's timeslots and send the schedules.
    fn on_epoch(&mut self, fab: &mut Fabric) {
        self.epoch_pending = false;
        let now = fab.now();
        let partitioned = self.params.partitioned;
        let flows = if partitioned { &mut self.arbiter_flows } else { &mut self.flows };
        let free = &mut self.free;
        self.demand.retain(|&s| {
            let fl = &mut flows[s as usize];
            let keep = fl.to_schedule > 0 && !fl.arbiter_done;
            if !keep {
                fl.in_demand = false;
                // The shared table's slot, released only once no list refers to it (the
                // partitioned model's sources release theirs themselves).
                if !partitioned && fl.arbiter_done && !fl.sending {
                    free.push(s);
                }
            }
            keep
        });
        self.matched.clear();
        for ts in 0..self.params.slots_per_epoch {
            self.match_timeslot(ts);
        }
        if partitioned {
            self.send_schedules_apart(now + self.params.epoch, fab);
        } else {
            self.send_schedules(now + self.params.epoch, fab);
        }
        let flows = if partitioned { &self.arbiter_flows } else { &self.flows };
        if self.demand.iter().any(|&s| flows[s as usize].to_schedule > 0) {
            self.epoch_pending = true;
            fab.schedule(now + self.params.epoch, FastpassEvent::ArbiterEpoch.encode());
        }
    }

    /// One timeslot: a greedy maximal matching in SRPT (or EDF) order (the pHost authors' `fastpass` arbiter).
    fn match_timeslot(&mut self, ts: u32) {
        // Stable sort of an almost sorted list (only the previous slot's matches changed by
        // one): close to linear.
        let flows = if self.params.partitioned { &mut self.arbiter_flows } else { &mut self.flows };
        if self.params.edf {
            self.demand.sort_by_key(|&s| (flows[s as usize].deadline, flows[s as usize].id));
        } else {
            self.demand
                .sort_by_key(|&s| (flows[s as usize].to_schedule as u64, flows[s as usize].id));
        }
        self.stamp = self.stamp.wrapping_add(1);
        let stamp = self.stamp;
        for &s in &self.demand {
            let fl = &mut flows[s as usize];
            if fl.to_schedule == 0
                || self.src_used[fl.src as usize] == stamp
                || self.dst_used[fl.dst as usize] == stamp
            {
                continue;
            }
            self.src_used[fl.src as usize] = stamp;
            self.dst_used[fl.dst as usize] = stamp;
            fl.to_schedule -= 1;
            self.matched.push((fl.src, ts, s));
        }
    }

    /// One schedule packet per source with at least one slot in the epoch at `epoch_start`.
    fn send_schedules(&mut self, epoch_start: SimTime, fab: &mut Fabric) {
        self.matched.sort_unstable();
        let now = fab.now();
        let mut i = 0;
        while i < self.matched.len() {
            let src = self.matched[i].0;
            let m = self.free_messages.pop().unwrap_or_else(|| {
                self.messages.push(ScheduleMsg::default());
                (self.messages.len() - 1) as u32
            });
            let msg = &mut self.messages[m as usize];
            msg.epoch_start = epoch_start;
            msg.entries.clear();
            while i < self.matched.len() && self.matched[i].0 == src {
                let (_, ts, slot) = self.matched[i];
                let fl = &mut self.flows[slot as usize];
                fl.last_grant_at = Some(now);
                msg.entries.push((ts, slot, fl.id));
                i += 1;
            }
            let first = msg.entries[0].1;
            let fl = &self.flows[first as usize];
            let pkt = Packet::new(
                SCHEDULE,
                fl.id,
                first,
                self.params.arbiter,
                src,
                m,
                CONTROL_BYTES,
                now,
            );
            fab.inject(self.params.arbiter, pkt);
        }
    }

    /// The partitioned model's schedules: one packet per flow granted slots in the epoch at
    /// `epoch_start` (and per 32 of its timeslots), naming the flow and carrying its timeslots
    /// and the epoch's number (module docs); in order of source, slot and timeslots.
    fn send_schedules_apart(&mut self, epoch_start: SimTime, fab: &mut Fabric) {
        self.matched.sort_unstable_by_key(|&(src, ts, slot)| (src, slot, ts));
        let now = fab.now();
        let epoch = self.params.epoch.as_ps();
        debug_assert_eq!(epoch_start.as_ps() % epoch, 0, "epochs run on the global grid");
        let number = u32::try_from(epoch_start.as_ps() / epoch).expect("fewer than 2^32 epochs");
        let mut i = 0;
        while i < self.matched.len() {
            let (src, first_ts, slot) = self.matched[i];
            let group = first_ts / 32;
            let mut timeslots = 0u32;
            while let Some(&(s, ts, f)) = self.matched.get(i) {
                if (s, f, ts / 32) != (src, slot, group) {
                    break;
                }
                timeslots |= 1 << (ts % 32);
                i += 1;
            }
            let fl = &mut self.arbiter_flows[slot as usize];
            fl.last_grant_at = Some(now);
            let mut header = [0; 2];
            (header[TIMESLOTS], header[EPOCH]) = (timeslots, number);
            let arbiter = self.params.arbiter;
            let pkt = Packet {
                header,
                ..Packet::new(SCHEDULE, fl.id, slot, arbiter, src, group, CONTROL_BYTES, now)
            };
            fab.inject(arbiter, pkt);
        }
    }

    /// The arbiter hears from a flow.
    fn on_rts(&mut self, p: &Packet, fab: &mut Fabric) {
        let partitioned = self.params.partitioned;
        if partitioned && !self.arbiter_takes(p) {
            return;
        }
        let flows = if partitioned { &mut self.arbiter_flows } else { &mut self.flows };
        let fl = &mut flows[p.slot as usize];
        fl.arbiter_known = true;
        if p.header[COUNT] == FINISHED {
            fl.arbiter_done = true;
            fl.to_schedule = 0;
            if !partitioned {
                self.release_if_done(p.slot);
            }
            return;
        }
        let in_flight = fl.last_grant_at.is_some_and(|t| fab.now() < t + self.params.epoch);
        if p.header[ORIGIN] == BY_WATCHDOG && in_flight {
            // The source asked before the schedule sent at the arbiter's last epoch reached
            // it: its count still includes those slots, and taking it would grant them twice.
            self.stats.watchdog_ignored += 1;
            return;
        }
        fl.to_schedule = p.header[COUNT];
        if !fl.in_demand {
            fl.in_demand = true;
            self.demand.push(p.slot);
        }
        if !self.epoch_pending {
            // The next epoch boundary on the global grid.
            let e = self.params.epoch.as_ps();
            let next = fab.now().as_ps().div_ceil(e) * e;
            self.epoch_pending = true;
            fab.schedule(SimTime(next), FastpassEvent::ArbiterEpoch.encode());
        }
    }

    /// The partitioned model: whether the arbiter takes RTS `p` (`false` for a straggler: an
    /// RTS of an earlier flow of its slot, or of a flow it has finished). An RTS of a later flow
    /// makes the slot's entry that flow's: a source reuses a slot only once its flow is
    /// complete. The entry keeps its place in the demand list, if it has one.
    fn arbiter_takes(&mut self, p: &Packet) -> bool {
        let i = p.slot as usize;
        if self.arbiter_flows.len() <= i {
            self.arbiter_flows.resize_with(i + 1, Flow::default);
        }
        let e = &mut self.arbiter_flows[i];
        if e.arbiter_known && p.flow <= e.id {
            return p.flow == e.id && !e.arbiter_done;
        }
        *e = Flow { id: p.flow, src: p.src, dst: p.seq, in_demand: e.in_demand, ..Flow::default() };
        true
    }

    /// A source receives its schedule: queue the granted slots.
    fn on_schedule(&mut self, p: &Packet, fab: &mut Fabric) {
        let now = fab.now();
        let msg = &self.messages[p.seq as usize];
        let slot_len = self.params.slot().as_ps();
        let start = self.slots_start(msg.epoch_start, now);
        let q = &mut self.grants[p.dst as usize];
        for &(ts, slot, flow) in &msg.entries {
            let fl = &mut self.flows[slot as usize];
            if fl.id == flow {
                fl.last_activity = now;
            }
            queue_grant(q, Grant { at: SimTime(start.as_ps() + ts as u64 * slot_len), slot, flow });
        }
        self.free_messages.push(p.seq);
        self.arm(p.dst, fab);
    }

    /// The partitioned model: a source receives one flow's timeslots of an epoch (the
    /// packet's own fields, module docs): queue them.
    fn on_schedule_apart(&mut self, p: &Packet, fab: &mut Fabric) {
        let now = fab.now();
        let Some(slot) = self.numbering.entry(p.slot) else { return };
        if let Some(fl) = self.flows.get_mut(slot as usize).filter(|fl| fl.id == p.flow) {
            fl.last_activity = now;
        }
        let epoch_start = SimTime(p.header[EPOCH] as u64 * self.params.epoch.as_ps());
        let start = self.slots_start(epoch_start, now);
        let slot_len = self.params.slot().as_ps();
        let q = &mut self.grants[p.dst as usize];
        let mut timeslots = p.header[TIMESLOTS];
        while timeslots != 0 {
            let ts = p.seq * 32 + timeslots.trailing_zeros();
            timeslots &= timeslots - 1;
            let at = SimTime(start.as_ps() + ts as u64 * slot_len);
            queue_grant(q, Grant { at, slot, flow: p.flow });
        }
        self.arm(p.dst, fab);
    }

    /// When the timeslots of the epoch starting at `epoch_start` begin, for a schedule that
    /// arrives at `now`. `slot_start = "epoch"`: perfect synchronisation, slots at their
    /// absolute times, unless the schedule came late, in which case the epoch starts on
    /// arrival. `"arrival"`: the epoch starts on arrival (the authors' `receive_schedule_pkt`
    /// clamps its start to the current time).
    fn slots_start(&self, epoch_start: SimTime, now: SimTime) -> SimTime {
        if self.params.slots_at_arrival {
            now
        } else {
            epoch_start.max(now)
        }
    }

    /// An ACK reaches the source. Returns the completion when it is the flow's last.
    fn on_ack(&mut self, p: &Packet, fab: &mut Fabric) -> Option<Completion> {
        let slot = self.numbering.entry(p.slot)?;
        let fl = self.flows.get_mut(slot as usize)?;
        if fl.id != p.flow || !fl.sending || !fl.acked.insert(p.seq) {
            return None;
        }
        fl.acked_count += 1;
        while fl.acked_until < fl.n_pkts && fl.is_acked(fl.acked_until) {
            fl.acked_until += 1;
        }
        if fl.acked_count < fl.n_pkts {
            return None;
        }
        fl.sending = false;
        let done = Completion::of(fl.id, fl.n_pkts, fl.packets_sent, fl.requests - 1);
        self.request(slot, FINISHED, 0, fab);
        if self.params.partitioned {
            self.free.push(slot); // the arbiter keeps its own entry
        }
        Some(done)
    }

    /// Makes sure host `h` wakes for its earliest granted slot.
    fn arm(&mut self, h: u32, fab: &mut Fabric) {
        let Some(first) = self.grants[h as usize].front() else { return };
        if self.wake_at[h as usize].is_none_or(|w| first.at < w) {
            self.wake_at[h as usize] = Some(first.at);
            fab.schedule(first.at, FastpassEvent::Slot(h).encode());
        }
    }

    /// Host `h` reaches a granted slot: send one packet of the granted flow.
    fn on_slot(&mut self, h: u32, fab: &mut Fabric) {
        let now = fab.now();
        if self.wake_at[h as usize] == Some(now) {
            self.wake_at[h as usize] = None;
        }
        while let Some(&g) = self.grants[h as usize].front() {
            if g.at > now {
                break;
            }
            self.grants[h as usize].pop_front();
            self.send_in_slot(g.slot, g.flow, fab);
        }
        self.arm(h, fab);
    }

    fn send_in_slot(&mut self, slot: u32, flow: u32, fab: &mut Fabric) {
        let epoch = self.params.epoch;
        let wire = self.numbering.wire(slot);
        let fl = &mut self.flows[slot as usize];
        if fl.id != flow || !fl.sending {
            return; // the flow finished (or its slot was reused) after the grant
        }
        let Some(seq) = fl.next_to_send() else { return };
        fl.last_sent = Some(seq);
        fl.last_activity = fab.now();
        fl.packets_sent += 1;
        fl.requested = fl.requested.saturating_sub(1);
        let now = fab.now();
        let data = Packet {
            priority: 1,
            retransmit: fl.packets_sent > fl.n_pkts,
            ..Packet::new(
                PacketKind::DATA,
                fl.id,
                wire,
                fl.src,
                fl.dst,
                seq,
                Bytes(fl.size_bytes).packet_wire_bytes(seq),
                now,
            )
        };
        let (src, generation) = (fl.src, fl.generation);
        if fl.requested == 0 {
            // Everything asked for is out: check one epoch later (as the pHost authors' code does).
            fab.schedule(now + epoch, FastpassEvent::Timer(slot, generation).encode());
        }
        fab.inject(src, data);
    }

    /// A flow's timer: one epoch after the source sent all it had asked for, re-request what
    /// is unacknowledged (as the pHost authors' code does); and the watchdog, which asks again
    /// when slots were requested but none came for [`FastpassParams::watchdog`] (a lost
    /// schedule). Without a loss the watchdog's request repeats what the arbiter already has,
    /// unless the arbiter has just granted slots whose schedule is still on its way: the
    /// arbiter ignores a watchdog request within an epoch of its last schedule to the flow.
    fn on_timer(&mut self, slot: u32, generation: u32, fab: &mut Fabric) {
        let now = fab.now();
        let wait = self.params.watchdog().unwrap_or(SimTime::MAX);
        let fl = &mut self.flows[slot as usize];
        if fl.generation != generation || !fl.sending {
            return;
        }
        let watchdog = now == fl.watchdog_at;
        let ask = if watchdog {
            let idle = fl.last_activity + wait <= now;
            idle && !self.grants[fl.src as usize].iter().any(|g| g.slot == slot)
        } else {
            fl.requested == 0
        };
        let fl = &mut self.flows[slot as usize];
        if ask {
            if watchdog {
                self.stats.watchdog_requests += 1;
            } else {
                self.stats.rerequests += 1;
            }
            let missing = fl.n_pkts - fl.acked_count;
            fl.requested = missing;
            fl.last_activity = now;
            self.request(slot, missing, if watchdog { BY_WATCHDOG } else { 0 }, fab);
        }
        let fl = &mut self.flows[slot as usize];
        if now == fl.watchdog_at {
            let next = fl.last_activity + wait;
            fl.watchdog_at = if next > now { next } else { now + wait };
            fab.schedule(fl.watchdog_at, FastpassEvent::Timer(slot, generation).encode());
        }
    }

    fn release_if_done(&mut self, slot: u32) {
        let fl = &self.flows[slot as usize];
        if !fl.sending && fl.arbiter_done && !fl.in_demand {
            self.free.push(slot);
        }
    }
}

/// Queues grant `g` in time order, after the grants at or before its time.
fn queue_grant(q: &mut VecDeque<Grant>, g: Grant) {
    let pos = q.iter().rposition(|x| x.at <= g.at).map_or(0, |i| i + 1);
    q.insert(pos, g);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transport whose arbiter knows `demand`: (src, dst, packets to schedule) per flow.
    fn arbiter_with(demand: &[(u32, u32, u32)]) -> FastpassTransport {
        let params = FastpassParams {
            slots_per_epoch: 8,
            epoch: SimTime(10_200_000),
            arbiter: 0,
            edf: false,
            slots_at_arrival: false,
            watchdog_epochs: 16,
            partitioned: false,
        };
        let mut t = FastpassTransport::new(params, 64);
        for (i, &(src, dst, n)) in demand.iter().enumerate() {
            t.flows.push(Flow { id: i as u32, src, dst, to_schedule: n, ..Flow::default() });
            t.demand.push(i as u32);
        }
        t
    }

    /// The flows matched in timeslot `ts`, in the order taken.
    fn matched_in(t: &FastpassTransport, ts: u32) -> Vec<u32> {
        t.matched.iter().filter(|m| m.1 == ts).map(|m| m.2).collect()
    }

    #[test]
    fn each_timeslot_is_a_greedy_maximal_matching_in_srpt_order() {
        // Flows (src→dst, packets): 0: 0→1 ×5, 1: 0→2 ×2, 2: 3→1 ×3, 3: 3→2 ×9, 4: 4→1 ×1.
        let mut t = arbiter_with(&[(0, 1, 5), (0, 2, 2), (3, 1, 3), (3, 2, 9), (4, 1, 1)]);
        // Slot 0, in SRPT order 4, 1, 2, 0, 3: 4 (4→1) and 1 (0→2) are taken; 2 needs dst 1,
        // 0 needs src 0, 3 needs dst 2: all blocked, so the matching is maximal.
        t.match_timeslot(0);
        assert_eq!(matched_in(&t, 0), vec![4, 1]);
        // Slot 1: 4 is done; order 1 (1 left), 2, 0, 3: 1 and 2 are taken.
        t.match_timeslot(1);
        assert_eq!(matched_in(&t, 1), vec![1, 2]);
        // Slot 2: order 2 (2 left), 0, 3: 2 (3→1) blocks both 0 (dst 1) and 3 (src 3).
        t.match_timeslot(2);
        assert_eq!(matched_in(&t, 2), vec![2]);
        let left: Vec<u32> = t.flows.iter().map(|f| f.to_schedule).collect();
        assert_eq!(left, vec![5, 0, 1, 9, 0]);
    }

    #[test]
    fn random_demand_sets_give_maximal_srpt_ordered_matchings() {
        let mut rng = dcsim_engine::Rng::new(7);
        for _ in 0..200 {
            let n = 1 + rng.below(40) as usize;
            let demand: Vec<(u32, u32, u32)> = (0..n)
                .map(|_| {
                    let src = rng.below(8) as u32;
                    let dst = (src + 1 + rng.below(7) as u32) % 8;
                    (src, dst, rng.below(6) as u32)
                })
                .collect();
            let mut t = arbiter_with(&demand);
            for ts in 0..8 {
                let before: Vec<u32> = t.flows.iter().map(|f| f.to_schedule).collect();
                t.match_timeslot(ts);
                let taken = matched_in(&t, ts);
                let mut srcs = std::collections::HashSet::new();
                let mut dsts = std::collections::HashSet::new();
                for &f in &taken {
                    let fl = &t.flows[f as usize];
                    assert!(srcs.insert(fl.src) && dsts.insert(fl.dst), "not a matching");
                    assert!(before[f as usize] > 0, "a flow without demand was scheduled");
                }
                // Maximal and SRPT-ordered: every flow left out that still had demand shares a
                // source or destination with a taken flow that comes before it in SRPT order.
                for (f, fl) in t.flows.iter().enumerate() {
                    if before[f] == 0 || taken.contains(&(f as u32)) {
                        continue;
                    }
                    let blocked = taken.iter().any(|&g| {
                        let gl = &t.flows[g as usize];
                        (gl.src == fl.src || gl.dst == fl.dst)
                            && (before[g as usize], g) < (before[f], f as u32)
                    });
                    assert!(blocked, "flow {f} could have been scheduled in slot {ts}");
                }
            }
        }
    }
}
