//! PASE (Munir et al., "Friends, not Foes", SIGCOMM'14): arbitration, in-network
//! prioritisation over a few commodity strict-priority queues, and self-adjusting endpoints.
//!
//! * **Arbitration (§3; [`super::arbitration`]).** Every link of a flow's path has an
//!   arbitrator that orders the flows wanting it (SRPT or EDF) and gives each a queue and a
//!   reference rate; the flow takes the lowest queue and the smallest rate over its path.
//!   Links are arbitrated as the fabric uses them: the equal-cost links a hop sprays over form
//!   one link of their summed capacity. End hosts arbitrate their access links (the source its
//!   uplink, the destination its downlink); the fabric's links are arbitrated by arbitrators at
//!   the switches, bottom up: an upward hop at the switch it leaves, a downward hop at the
//!   switch it enters.
//! * **Control traffic is real.** A new flow starts at once with its source's local answer
//!   (its uplink's queue and rate) and sends a 40-byte request along its path; each switch
//!   arbitrator on the way adds its link, the destination adds its downlink and answers the
//!   source with a 40-byte response: after about one RTT the flow has its global priority
//!   (§4.2). Requests repeat every `rearbitrate_rtts` base RTTs with the bytes left; a
//!   finished flow sends a release along its path. With `arbitration = "local"` only the end
//!   hosts arbitrate (Fig. 12a).
//! * **Early pruning (§4.3.1).** A request whose queue so far is `pruning_queue` or deeper
//!   stops at the first switch arbitrator that finds so, which answers it: the links above
//!   never hear of low-priority flows.
//! * **End hosts (§4.3.2).** Packets carry the arbitrated queue. A top-queue flow sends at its
//!   reference rate (window = rate × base RTT); a middle-queue flow is a DCTCP source; a
//!   lowest-queue flow holds its data and sends a header-only probe every base RTT until it
//!   is promoted (with `probing`). `rate_control = "dctcp"` makes every flow a DCTCP source in
//!   its arbitrated queue (PASE-DCTCP, Fig. 13a). Loss recovery is the window mechanism's.
//! * **Switches.** `pase.queues` strict-priority queues over a shared buffer with ECN marking
//!   at `dctcp.marking_threshold_bytes` on the port (DCTCP's threshold).
//!
//! Delegation (§4.3.1) is not modelled yet.

use super::arbitration::{Assignment, LinkArbitrator};
use super::dctcp::Dctcp;
use super::window::{CongestionControl, FlowCtx, Window, WindowParams, WindowTransport};
use super::{
    Completion, HostTransport, Parts, PortPlan, Protocol, QueuePlan, TransportEvent,
};
use crate::fabric::Fabric;
use crate::packet::{Packet, PacketId, PacketKind};
use crate::queue::EcnMarking;
use crate::spec::{PaseArbitration, PaseOrder, PaseRateControl, Spec};
use crate::units::{BitRate, CONTROL_BYTES, MTU_BYTES};
use crate::workload::FlowArrival;
use dcsim_engine::SimTime;
use std::collections::HashMap;

/// An arbitration request, from the source along the path; its header collects the answer.
pub const REQUEST: PacketKind = PacketKind::control(1);
/// The answer to a request, to the source.
pub const RESPONSE: PacketKind = PacketKind::control(2);
/// A finished flow's release, along its path (its header counts the switches visited).
pub const RELEASE: PacketKind = PacketKind::control(3);

/// The arbitration header of a request or response: the request's number (16 bits), the
/// queue and the reference rate collected so far, and the switches visited (8 bits).
#[derive(Copy, Clone, Debug, PartialEq)]
struct ArbHeader {
    seq: u16,
    visits: u8,
    answer: Assignment,
}

impl ArbHeader {
    fn pack(self) -> [u32; 2] {
        let word = (self.seq as u32) << 16 | (self.answer.queue as u32) << 8 | self.visits as u32;
        [word, (self.answer.rate_bps as f32).to_bits()]
    }

    fn unpack(h: [u32; 2]) -> Self {
        ArbHeader {
            seq: (h[0] >> 16) as u16,
            visits: h[0] as u8,
            answer: Assignment { queue: (h[0] >> 8) as u8, rate_bps: f32::from_bits(h[1]) as f64 },
        }
    }
}

/// True if request number `a` is newer than `b` (16-bit sequence space).
fn newer(a: u16, b: u16) -> bool {
    a != b && a.wrapping_sub(b) < 0x8000
}

crate::transport_events! {
    /// PASE's timers (codes after the window mechanism's).
    pub enum PaseEvent {
        /// Re-arbitrate flow slot `.0` (generation `.1`).
        Rearbitrate(slot, gen) = 2,
        /// A held flow's next probe, slot `.0` (generation `.1`).
        Probe(slot, gen) = 3,
    }
}

/// PASE's settings in absolute units.
#[derive(Clone, Debug)]
pub struct PaseParams {
    /// Queues per port.
    pub queues: u8,
    /// Switch arbitrators take part.
    pub end_to_end: bool,
    /// Order by deadline instead of bytes left.
    pub edf: bool,
    /// PASE's rate control (false: PASE-DCTCP).
    pub reference_rate: bool,
    /// Requests this deep stop at the first switch arbitrator (0 = never).
    pub pruning_queue: u8,
    /// Re-arbitration period in base RTTs.
    pub rearbitrate_rtts: f64,
    /// Base rate in packets per base RTT.
    pub base_rate_pkts_per_rtt: f64,
    /// Lowest-queue flows probe instead of sending data.
    pub probing: bool,
    /// The hosts' link rate (a flow's demand).
    pub host_rate: BitRate,
    /// Packets are sprayed over equal-cost links.
    pub sprayed: bool,
}

/// The answer before any arbitrator: the top queue at any rate.
const UNCONSTRAINED: Assignment = Assignment { queue: 0, rate_bps: f64::INFINITY };

/// Where a link of a path is arbitrated.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum At {
    Source,
    /// The switch visited `.0`-th (0 = the source's edge switch).
    Switch(u32),
    Destination,
}

/// A path's arbitrated links.
#[derive(Clone, Debug)]
struct PathPlan {
    /// (link, where it is arbitrated), source side first.
    stages: Vec<(u32, At)>,
    /// One full packet and its ACK on the idle path.
    base_rtt: SimTime,
}

/// PASE's view of one flow (by the window mechanism's slot).
#[derive(Clone, Debug, Default)]
struct PaseFlow {
    id: u32,
    gen: u32,
    active: bool,
    src: u32,
    dst: u32,
    deadline: SimTime,
    plan: usize,
    /// The latest request's number, and the newest answered.
    request: u16,
    answered: u16,
    held: bool,
    /// A probe is out and not yet answered (one at a time: a probe stuck behind
    /// higher-priority traffic must not be joined by more).
    probe_out: bool,
}

/// The window policy of a PASE flow: its arbitrated queue and rate.
#[derive(Clone, Debug)]
pub struct PaseCc {
    dctcp: Dctcp,
    queue: u8,
    reference_rate: bool,
    /// The reference rate as a window, packets: rate × base RTT (one full packet and its ACK),
    /// rounded up so that a line-rate flow keeps its path busy.
    rate_window: f64,
}

impl PaseCc {
    fn top(&self) -> bool {
        self.reference_rate && self.queue == 0
    }
}

impl CongestionControl for PaseCc {
    fn ecn_capable(&self) -> bool {
        true
    }
    fn class(&self) -> Option<u8> {
        Some(self.queue)
    }
    fn on_ack_bookkeeping(&mut self, acked: u32, ece: bool, ctx: &FlowCtx) {
        self.dctcp.on_ack_bookkeeping(acked, ece, ctx);
    }
    fn on_ack(&mut self, w: &mut Window, acked: u32, _ctx: &FlowCtx) {
        if self.top() {
            w.cwnd = self.rate_window.ceil().clamp(1.0, w.max);
        } else {
            w.grow(acked);
        }
    }
    fn on_ece(&mut self, w: &mut Window, ctx: &FlowCtx) -> bool {
        // The top queue follows its reference rate; the others are DCTCP sources.
        !self.top() && self.dctcp.cut(w, self.dctcp.alpha, ctx)
    }
}

/// The PASE hosts and arbitrators.
#[derive(Debug)]
pub struct PaseTransport {
    params: PaseParams,
    window: WindowTransport<PaseCc>,
    template: PaseCc,
    flows: Vec<PaseFlow>,
    arbitrators: Vec<LinkArbitrator>,
    link_ids: HashMap<Vec<u32>, u32>,
    plans: Vec<PathPlan>,
    plan_of: HashMap<(u32, u32), usize>,
    /// Arbitrators forget a flow not refreshed for this long: three re-arbitration periods of
    /// the longest path seen.
    expiry: SimTime,
}

impl PaseTransport {
    /// PASE over the window mechanism with `window` settings.
    pub fn new(params: PaseParams, window: WindowParams, dctcp: Dctcp) -> Self {
        let template = PaseCc {
            dctcp,
            queue: 0,
            reference_rate: params.reference_rate,
            rate_window: 1.0,
        };
        PaseTransport {
            window: WindowTransport::new(window, template.clone()),
            template,
            params,
            flows: Vec::new(),
            arbitrators: Vec::new(),
            link_ids: HashMap::new(),
            plans: Vec::new(),
            plan_of: HashMap::new(),
            expiry: SimTime::ZERO,
        }
    }

    /// The arbitrated links of the path from `src` to `dst` (computed once per pair).
    fn plan(&mut self, src: u32, dst: u32, fab: &Fabric) -> usize {
        if let Some(&i) = self.plan_of.get(&(src, dst)) {
            return i;
        }
        let net = &fab.net;
        let ports = net.parallel_ports(src, dst);
        let hops = ports.len();
        let switches = hops as u32 - 1;
        let mut stages = Vec::new();
        for (i, set) in ports.iter().enumerate() {
            let at = if i == 0 {
                At::Source
            } else if i == hops - 1 {
                At::Destination
            } else if !self.params.end_to_end {
                continue;
            } else if 2 * i as u32 <= switches {
                At::Switch(i as u32 - 1) // upward: where it starts
            } else {
                At::Switch(i as u32) // downward: where it ends
            };
            let set = if self.params.sprayed { set.clone() } else { vec![set[0]] };
            let capacity: f64 = set.iter().map(|&p| net.ports[p as usize].rate.0 as f64).sum();
            let next = self.arbitrators.len() as u32;
            let id = *self.link_ids.entry(set).or_insert(next);
            if id == next {
                self.arbitrators.push(LinkArbitrator::new(capacity));
            }
            stages.push((id, at));
        }
        let fwd = crate::metrics::path_hops(net, src, dst, false);
        let rev = crate::metrics::path_hops(net, dst, src, false);
        let base_rtt = crate::metrics::ideal_fct(crate::units::MSS_BYTES as u64, &fwd, &rev);
        let period = base_rtt.as_ps() as f64 * self.params.rearbitrate_rtts;
        self.expiry = self.expiry.max(SimTime((3.0 * period).round() as u64));
        self.plans.push(PathPlan { stages, base_rtt });
        self.plan_of.insert((src, dst), self.plans.len() - 1);
        self.plans.len() - 1
    }

    fn base_rate_bps(&self, plan: usize) -> f64 {
        let rtt = self.plans[plan].base_rtt.as_secs_f64();
        self.params.base_rate_pkts_per_rtt * MTU_BYTES as f64 * 8.0 / rtt
    }

    /// Arbitrates flow `slot`'s links arbitrated `at`, combined with `so_far`.
    fn arbitrate(&mut self, slot: u32, at: At, so_far: Assignment, now: SimTime) -> Assignment {
        let fl = &self.flows[slot as usize];
        let key = if self.params.edf {
            fl.deadline.as_ps()
        } else {
            self.window.remaining_bytes(slot)
        };
        let (flow, plan) = (fl.id, fl.plan);
        self.arbitrate_key(flow, plan, key, at, so_far, now)
    }

    /// Arbitrates `flow` (key `key`) on the links of `plan` arbitrated `at`.
    fn arbitrate_key(
        &mut self,
        flow: u32,
        plan: usize,
        key: u64,
        at: At,
        so_far: Assignment,
        now: SimTime,
    ) -> Assignment {
        let base = self.base_rate_bps(plan);
        let demand = self.params.host_rate.0 as f64;
        let oldest = SimTime(now.as_ps().saturating_sub(self.expiry.as_ps()));
        let mut out = so_far;
        for &(link, where_) in &self.plans[plan].stages {
            if where_ == at {
                let a = &mut self.arbitrators[link as usize];
                a.expire(oldest);
                a.update(flow, key, demand, now);
                out = out.combine(a.assign(flow, self.params.queues, base));
            }
        }
        out
    }

    /// Removes `flow` (from `src` to `dst`) from its links arbitrated `at`.
    fn release(&mut self, flow: u32, src: u32, dst: u32, at: At) {
        let Some(&plan) = self.plan_of.get(&(src, dst)) else { return };
        for &(link, where_) in &self.plans[plan].stages {
            if where_ == at {
                self.arbitrators[link as usize].remove(flow);
            }
        }
    }

    /// A control packet of flow `slot`.
    fn control(&self, kind: PacketKind, slot: u32, from: u32, to: u32, now: SimTime) -> Packet {
        let fl = &self.flows[slot as usize];
        Packet::new(kind, fl.id, slot, from, to, 0, CONTROL_BYTES, now)
    }

    /// The source arbitrates its uplink and sends a request along the path.
    fn request(&mut self, slot: u32, fab: &mut Fabric) {
        let local = self.arbitrate(slot, At::Source, UNCONSTRAINED, fab.now());
        let fl = &mut self.flows[slot as usize];
        fl.request = fl.request.wrapping_add(1);
        let header = ArbHeader { seq: fl.request, visits: 0, answer: local }.pack();
        let (src, dst) = (fl.src, fl.dst);
        let p = Packet {
            header,
            inspect: self.params.end_to_end,
            ..self.control(REQUEST, slot, src, dst, fab.now())
        };
        fab.inject(src, p);
    }

    /// Applies an arbitration answer at the source.
    fn apply(&mut self, slot: u32, a: Assignment, fab: &mut Fabric) {
        let fl = &self.flows[slot as usize];
        let (id, gen, plan) = (fl.id, fl.gen, fl.plan);
        let rtt = self.plans[plan].base_rtt;
        let lowest = self.params.queues - 1;
        let Some((cc, w)) = self.window.flow_mut(slot, id) else { return };
        cc.queue = a.queue;
        cc.rate_window = a.rate_bps * rtt.as_secs_f64() / (MTU_BYTES as f64 * 8.0);
        if cc.top() {
            w.cwnd = cc.rate_window.ceil().clamp(1.0, w.max);
        }
        let hold = self.params.reference_rate && self.params.probing && a.queue == lowest;
        let fl = &mut self.flows[slot as usize];
        let was_held = std::mem::replace(&mut fl.held, hold);
        if hold && !was_held {
            self.window.hold(slot, true, fab);
            fl.probe_out = true;
            self.window.probe(slot, fab);
            fab.schedule(fab.now() + rtt, PaseEvent::Probe(slot, gen).encode());
        } else if !hold && was_held {
            self.window.hold(slot, false, fab);
        } else {
            self.window.pump(slot, fab);
        }
    }
}

impl HostTransport for PaseTransport {
    fn start_flow(&mut self, f: &FlowArrival, fab: &mut Fabric) {
        let plan = self.plan(f.src, f.dst, fab);
        // The local answer first (§4.2): the source's uplink, before any packet leaves.
        let key = if self.params.edf { f.deadline.as_ps() } else { f.size_bytes };
        let local = self.arbitrate_key(f.id, plan, key, At::Source, UNCONSTRAINED, fab.now());
        let rtt = self.plans[plan].base_rtt;
        let mut cc = self.template.clone();
        cc.queue = local.queue;
        cc.rate_window = local.rate_bps * rtt.as_secs_f64() / (MTU_BYTES as f64 * 8.0);
        let slot = self.window.start_with(f, cc, fab);
        if self.flows.len() <= slot as usize {
            self.flows.resize(slot as usize + 1, PaseFlow::default());
        }
        let fl = &mut self.flows[slot as usize];
        *fl = PaseFlow {
            id: f.id,
            gen: fl.gen.wrapping_add(1),
            active: true,
            src: f.src,
            dst: f.dst,
            deadline: f.deadline,
            plan,
            ..PaseFlow::default()
        };
        let gen = fl.gen;
        self.apply(slot, local, fab);
        self.request(slot, fab);
        let period = SimTime((rtt.as_ps() as f64 * self.params.rearbitrate_rtts).round() as u64);
        fab.schedule(fab.now() + period, PaseEvent::Rearbitrate(slot, gen).encode());
    }

    fn on_packet(&mut self, id: PacketId, fab: &mut Fabric) -> Option<Completion> {
        let p = *fab.pool.get(id);
        if !matches!(p.kind, REQUEST | RESPONSE | RELEASE) {
            if p.kind == PacketKind::ACK {
                if let Some(fl) = self.flows.get_mut(p.slot as usize).filter(|f| f.id == p.flow) {
                    fl.probe_out = false; // whatever it answers, the path delivers again
                }
            }
            let done = self.window.on_packet(id, fab)?;
            // The flow finished: its source forgets it and sends a release along the path.
            let slot = p.slot;
            let fl = &mut self.flows[slot as usize];
            fl.active = false;
            let (src, dst) = (fl.src, fl.dst);
            self.release(p.flow, src, dst, At::Source);
            let rel = Packet {
                inspect: self.params.end_to_end,
                ..self.control(RELEASE, slot, src, dst, fab.now())
            };
            fab.inject(src, rel);
            return Some(done);
        }
        fab.deliver(id);
        if p.kind == RELEASE {
            // The source is `p.src`: releases name the flow, whatever its slot holds now.
            self.release(p.flow, p.src, p.dst, At::Destination);
            return None;
        }
        let fl = &self.flows[p.slot as usize];
        if fl.id != p.flow {
            return None; // the slot went to another flow
        }
        match p.kind {
            REQUEST => {
                if !fl.active {
                    return None;
                }
                let mut h = ArbHeader::unpack(p.header);
                h.answer = self.arbitrate(p.slot, At::Destination, h.answer, fab.now());
                let resp = Packet {
                    header: h.pack(),
                    ..self.control(RESPONSE, p.slot, p.dst, p.src, fab.now())
                };
                fab.inject(p.dst, resp);
            }
            RESPONSE => {
                let h = ArbHeader::unpack(p.header);
                if fl.active && newer(h.seq, fl.answered) {
                    self.flows[p.slot as usize].answered = h.seq;
                    self.apply(p.slot, h.answer, fab);
                }
            }
            _ => {}
        }
        None
    }

    fn on_event(&mut self, code: u8, a: u32, b: u32, fab: &mut Fabric) {
        if code < 2 {
            return self.window.on_event(code, a, b, fab);
        }
        match PaseEvent::decode(code, a, b) {
            PaseEvent::Rearbitrate(slot, gen) => {
                let fl = &self.flows[slot as usize];
                if !fl.active || fl.gen != gen {
                    return;
                }
                let rtt = self.plans[fl.plan].base_rtt;
                self.request(slot, fab);
                let period =
                    SimTime((rtt.as_ps() as f64 * self.params.rearbitrate_rtts).round() as u64);
                fab.schedule(fab.now() + period, PaseEvent::Rearbitrate(slot, gen).encode());
            }
            PaseEvent::Probe(slot, gen) => {
                let fl = &self.flows[slot as usize];
                if !fl.active || fl.gen != gen || !fl.held {
                    return;
                }
                let rtt = self.plans[fl.plan].base_rtt;
                if !fl.probe_out {
                    self.flows[slot as usize].probe_out = true;
                    self.window.probe(slot, fab);
                }
                fab.schedule(fab.now() + rtt, PaseEvent::Probe(slot, gen).encode());
            }
        }
    }

    fn on_switch(&mut self, node: u32, id: PacketId, fab: &mut Fabric) -> bool {
        let p = *fab.pool.get(id);
        let mut h = ArbHeader::unpack(p.header);
        let visit = u32::from(h.visits);
        h.visits = h.visits.wrapping_add(1);
        fab.pool.get_mut(id).header = h.pack();
        if p.kind == RELEASE {
            self.release(p.flow, p.src, p.dst, At::Switch(visit));
            return true;
        }
        let Some(fl) = self.flows.get(p.slot as usize) else { return true };
        if fl.id != p.flow {
            return true;
        }
        match p.kind {
            REQUEST if fl.active => {
                let before = h.answer;
                h.answer = self.arbitrate(p.slot, At::Switch(visit), before, fab.now());
                fab.pool.get_mut(id).header = h.pack();
                let prune = self.params.pruning_queue;
                if prune > 0 && h.answer.queue >= prune && h.answer != before {
                    // Early pruning: this arbitrator answers; the links above never hear.
                    fab.deliver(id); // consumed here
                    let resp = Packet {
                        header: h.pack(),
                        ..self.control(RESPONSE, p.slot, p.dst, p.src, fab.now())
                    };
                    fab.send_from_switch(node, resp);
                    return false;
                }
            }
            _ => {}
        }
        true
    }
}

/// `transport.protocol = "pase"`.
#[derive(Debug)]
pub struct PaseProtocol;

impl Protocol for PaseProtocol {
    type Host = PaseTransport;
    const SECTIONS: &'static [&'static str] = &["pase", "dctcp"];

    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        let p = &spec.pase;
        let params = PaseParams {
            queues: p.queues as u8,
            end_to_end: p.arbitration == PaseArbitration::EndToEnd,
            edf: p.order == PaseOrder::Edf,
            reference_rate: p.rate_control == PaseRateControl::Pase,
            pruning_queue: p.pruning_queue as u8,
            rearbitrate_rtts: p.rearbitrate_rtts,
            base_rate_pkts_per_rtt: p.base_rate_pkts_per_rtt,
            probing: p.probing,
            host_rate: spec.topology.host_rate(),
            sprayed: spec.topology.load_balancing != crate::spec::LoadBalancing::Ecmp,
        };
        let dctcp = Dctcp::new(spec.dctcp.g, spec.dctcp.initial_alpha);
        let ports = PortPlan {
            queue: QueuePlan::StrictPriority { queues: p.queues as usize, reserved_bytes: 0 },
            marking: EcnMarking::Instantaneous { threshold_bytes: spec.dctcp.marking_threshold_bytes },
            buffer_bytes: spec.transport.port_buffer(&spec.topology),
        };
        let window = WindowParams::from_transport(&spec.transport);
        Parts::packets(PaseTransport::new(params, window, dctcp), ports)
    }
}
