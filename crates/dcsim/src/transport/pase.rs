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
//!   (its uplink's queue and rate) and sends a request (`control_bytes`, 40 by default) along its path; each switch
//!   arbitrator on the way adds its link, the destination adds its downlink and answers the
//!   source with a 40-byte response: after about one RTT the flow has its global priority
//!   (§4.2). Requests repeat every `rearbitrate_rtts` base RTTs with the bytes left; a
//!   finished flow sends a release along its path. With `arbitration = "local"` only the end
//!   hosts arbitrate (Fig. 12a).
//! * **Request pacing (dcsim's; the paper does not say how often a flow asks).** A flow keeps
//!   one request out: one unanswered after `request_timeout_rtts` base RTTs is sent again, the
//!   wait doubling per miss up to 64 times. A flow below the top queue whose answer leaves its
//!   queue unchanged asks every 2, 4 … 64 periods, and a release reaching its destination
//!   nudges the sources of the flows it leaves in that downlink's top queue to ask at once.
//!   Sent open loop every base RTT, the requests of hundreds of flows waiting for one
//!   destination took its whole downlink from the data (a 300-flow incast on a 4-host star
//!   finished no flow in 650 ms; `docs/model.md`).
//! * **Late flows under EDF (dcsim's choice; the available text does not say).** With
//!   `order = "edf"`, a flow that can no longer meet its deadline (past it, or more bytes left
//!   than its host's line rate sends in the time left) is arbitrated after every flow that
//!   still can (`late_flows = "last"`, pFabric's rule for hopeless flows in the pFabric ns-2
//!   patch); `"ahead"` keeps plain EDF, where such a flow stays ahead of flows that can still
//!   meet theirs (measured in `docs/model.md`).
//! * **Early pruning (§4.3.1).** A request whose queue so far is `pruning_queue` or deeper
//!   stops at the first switch arbitrator that finds so, which answers it: the links above
//!   never hear of low-priority flows.
//! * **End hosts (§4.3.2).** Packets carry the arbitrated queue. A top-queue flow sends at its
//!   reference rate (window = rate × base RTT); a middle-queue flow is a DCTCP source; a
//!   lowest-queue flow holds its data and sends a header-only probe every base RTT until it
//!   is promoted (with `probing`; without, it sends data with a window of one packet). `rate_control = "dctcp"` makes every flow a DCTCP source in
//!   its arbitrated queue (PASE-DCTCP, Fig. 13a). Loss recovery is the window mechanism's.
//! * **Switches.** `pase.queues` strict-priority queues over a shared buffer with ECN marking
//!   at `dctcp.marking_threshold_bytes` on the port (DCTCP's threshold).
//!
//! * **Delegation (§4.3.1).** With `delegation`, a link above the racks is not arbitrated by
//!   the switch above: each rack's arbitrator (the source's rack for an upward link, the
//!   destination's for a downward one) arbitrates a virtual link, its delegated share of the
//!   parent link, resized every `delegation_period_rtts` by the racks' demands. Requests are
//!   then processed at the racks only: fewer messages reach the higher levels (Fig. 11b).
//!
//! The partitioned model (`engine.partitioned`, [`PaseParams::partitioned`]; docs/parallel.md):
//! the source, the switches and the destination of a flow may run in different partitions, on
//! different threads. Every arbitrator already lives where its link is arbitrated (the source
//! for its uplink, a switch for the links it arbitrates, the destination for its downlink;
//! with delegation, a rack's switch for its virtual links, whose parent links' other racks are
//! in the same partition in the built-in fabrics: a fat-tree's pod), so only what they read of
//! the source changes: in the sequential model an arbitrator away from the source reads the
//! flow's path and bytes left from the source's entry; in the partitioned model it derives the
//! path from the flow's ends (and, under ECMP, its id) and takes the bytes left when the
//! request was sent from the request's `seq`. So only SRPT runs partitioned (a request carries
//! no deadline). Packets carry the window mechanism's slot numbering, unique in the run. A
//! partition's delegation clock also runs while one of its virtual links holds a flow (which
//! may come from another partition).

use super::arbitration::{Assignment, FlowMap, LinkArbitrator};
use super::dctcp::Dctcp;
use super::window::{
    CongestionControl, FlowCtx, Window, WindowEvent, WindowParams, WindowTransport,
};
use super::{
    Completion, HostTransport, Parts, PortPlan, Protocol, QueuePlan, TransportEvent,
};
use crate::fabric::Fabric;
use crate::packet::{Packet, PacketId, PacketKind};
use crate::queue::EcnMarking;
use crate::spec::{PaseArbitration, PaseLateFlows, PaseOrder, PaseRateControl, Spec};
use crate::units::{BitRate, MTU_BYTES};
use crate::workload::FlowArrival;
use dcsim_engine::SimTime;
use std::collections::{BTreeMap, HashMap};

/// An arbitration request, from the source along the path; its header collects the answer.
pub const REQUEST: PacketKind = PacketKind::control(1);
/// The answer to a request, to the source.
pub const RESPONSE: PacketKind = PacketKind::control(2);
/// A finished flow's release, along its path (its header counts the switches visited).
pub const RELEASE: PacketKind = PacketKind::control(3);
/// From a destination to the source of a flow a release moved into its downlink's top queue:
/// ask now.
pub const NUDGE: PacketKind = PacketKind::control(4);

/// A waiting flow's request period grows to at most 2^this periods, and a lost request's wait
/// to at most 2^this timeouts.
const MAX_BACKOFF: u8 = 6;

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

/// The full number of the request whose low 16 bits (the wire's) are `wire`, given the
/// latest request sent, `latest`: answers come only to requests already sent, and a flow has
/// at most a few out, so the one at or below `latest` with those bits is it.
fn request_number(latest: u32, wire: u16) -> u32 {
    latest.saturating_sub(u32::from((latest as u16).wrapping_sub(wire)))
}

crate::transport_events! {
    /// PASE's timers (codes after the window mechanism's).
    pub enum PaseEvent {
        /// Re-arbitrate flow slot `.0` (generation `.1`).
        Rearbitrate(slot, gen) = 2,
        /// A held flow's next probe, slot `.0` (generation `.1`).
        Probe(slot, gen) = 3,
        /// Delegation: every parent link's shares are resized by its children's demands.
        Delegate(unused_a, unused_b) = 4,
    }
}

/// PASE's settings in absolute units.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PaseParams {
    /// Queues per port.
    pub queues: u8,
    /// Switch arbitrators take part.
    pub end_to_end: bool,
    /// Order by deadline instead of bytes left.
    pub edf: bool,
    /// Under EDF, a flow that can no longer meet its deadline goes after every flow that can
    /// ([`PaseTransport::edf_key`]).
    pub late_last: bool,
    /// PASE's rate control (false: PASE-DCTCP).
    pub reference_rate: bool,
    /// Requests this deep stop at the first switch arbitrator (0 = never).
    pub pruning_queue: u8,
    /// Re-arbitration period in base RTTs.
    pub rearbitrate_rtts: f64,
    /// An unanswered request is sent again after this many base RTTs (doubling per miss).
    pub request_timeout_rtts: f64,
    /// Base rate in packets per base RTT.
    pub base_rate_pkts_per_rtt: f64,
    /// Lowest-queue flows probe instead of sending data.
    pub probing: bool,
    /// The hosts' link rate (a flow's demand).
    pub host_rate: BitRate,
    /// Packets are sprayed over equal-cost links.
    pub sprayed: bool,
    /// Links above the racks are arbitrated by the racks' arbitrators on delegated shares.
    pub delegation: bool,
    /// Delegated shares are resized every this many base RTTs (of the longest path).
    pub delegation_period_rtts: f64,
    /// Wire size of requests, responses and releases, bytes.
    pub control_bytes: u32,
    /// The partitioned model's variant (`engine.partitioned`, module docs): switches and
    /// destinations learn a flow's path and bytes left from its requests.
    pub partitioned: bool,
}

/// The answer before any arbitrator: the top queue at any rate.
const UNCONSTRAINED: Assignment = Assignment { queue: 0, rate_bps: f64::INFINITY };

/// Where a link of a path is arbitrated.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum At {
    Source,
    /// The switch visited `.0`-th (0 = the source's edge switch).
    Switch(u32),
    Destination,
}

/// A path's arbitrated links.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct PathPlan {
    /// (link, where it is arbitrated), source side first.
    stages: Vec<(u32, At)>,
    /// One full packet and its ACK on the idle path.
    base_rtt: SimTime,
}

/// PASE's view of one flow (by the window mechanism's slot).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct PaseFlow {
    id: u32,
    gen: u32,
    active: bool,
    src: u32,
    dst: u32,
    deadline: SimTime,
    plan: usize,
    /// The latest request's number, and the newest answered (the wire carries their low 16
    /// bits: [`request_number`]).
    request: u32,
    answered: u32,
    /// When the latest request was sent.
    request_sent: SimTime,
    /// Requests missed in a row: the next resend waits 2^this timeouts.
    missed: u8,
    /// The queue of the latest answer applied.
    queue: u8,
    /// Answers in a row that left the flow in the same queue below the top (capped at
    /// [`MAX_BACKOFF`]): it asks every 2^this periods.
    unchanged: u8,
    /// Periods to let pass before the next request.
    skip: u8,
    held: bool,
    /// A probe is out and not yet answered (one at a time: a probe stuck behind
    /// higher-priority traffic must not be joined by more).
    probe_out: bool,
}

/// The window policy of a PASE flow: its arbitrated queue and rate.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PaseCc {
    dctcp: Dctcp,
    queue: u8,
    reference_rate: bool,
    /// The lowest queue.
    lowest: u8,
    /// The reference rate as a window, packets: rate × base RTT (one full packet and its ACK),
    /// rounded up so that a line-rate flow keeps its path busy.
    rate_window: f64,
}

impl PaseCc {
    /// The window PASE's rate control sets, if the queue has one: the reference rate's in the
    /// top queue, one packet in the lowest (when it sends data: without probing). Middle
    /// queues (and PASE-DCTCP) are DCTCP sources.
    fn pinned_window(&self) -> Option<f64> {
        match self.queue {
            _ if !self.reference_rate => None,
            0 => Some(self.rate_window.ceil()),
            q if q == self.lowest => Some(1.0),
            _ => None,
        }
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
        match self.pinned_window() {
            Some(win) => w.cwnd = win.clamp(1.0, w.max),
            None => w.grow(acked),
        }
    }
    fn on_ece(&mut self, w: &mut Window, ctx: &FlowCtx) -> bool {
        // The top and lowest queues keep their set windows; the others are DCTCP sources.
        self.pinned_window().is_none() && self.dctcp.cut(w, self.dctcp.alpha, ctx)
    }

    /// α belongs to the connection, as DCTCP's ([`Dctcp`]'s `carry_over`).
    fn carry_over(&mut self, previous: &Self) {
        self.dctcp.carry_over(&previous.dctcp);
    }
}

/// The PASE hosts and arbitrators.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct PaseTransport {
    params: PaseParams,
    window: WindowTransport<PaseCc>,
    template: PaseCc,
    flows: Vec<PaseFlow>,
    arbitrators: Vec<LinkArbitrator>,
    link_ids: HashMap<Vec<u32>, u32>,
    plans: Vec<PathPlan>,
    /// Plans by path: (u32::MAX, src, dst) when sprayed, the ports of the flow's path under
    /// ECMP.
    plan_of: HashMap<Vec<u32>, usize>,
    /// Sprayed plans by `src · hosts + dst` (`u32::MAX`: not computed yet): the partitioned
    /// model looks a plan up at every arbitrator a control packet visits.
    sprayed_plan_of: Vec<u32>,
    /// Arbitrators forget a flow not refreshed for this long: three times the longest a
    /// waiting flow goes without asking (64 periods, or a request timeout if longer) on the
    /// longest path seen.
    expiry: SimTime,
    /// The longest base RTT seen.
    longest_rtt: SimTime,
    /// Delegation: each parent link's children (virtual links, one per rack), in link order.
    delegated: BTreeMap<u32, Vec<u32>>,
    /// The virtual link of (parent link, rack).
    virtual_link: HashMap<(u32, u32), u32>,
    /// The parent link of each virtual link.
    parent_of: HashMap<u32, u32>,
    /// Each virtual link's demand at the last periodic resize.
    reported_demand: HashMap<u32, f64>,
    /// The delegation clock is running.
    delegating: bool,
    /// Flows active now.
    active_flows: u32,
    /// At a destination: the source and wire slot of each flow that asked it (a release's
    /// nudges go to them), until its release arrives.
    requesters: FlowMap<(u32, u32)>,
    /// At a source: the slot of each of its active flows (a finished flow's source lets the
    /// flows it leaves in its uplink's top queue ask at their next period).
    slot_of: FlowMap<u32>,
    /// What arbitration cost.
    stats: ArbitrationStats,
}

/// What arbitration cost over a run (the overhead of Fig. 11b).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArbitrationStats {
    /// Requests sources sent (first requests and re-arbitrations).
    pub requests: u64,
    /// Messages switch arbitrators processed: requests and releases that reached an
    /// arbitrator with a link of their path, and delegation's demand reports and share
    /// answers (two per child link and resize).
    pub switch_messages: u64,
    /// Requests answered early by a switch arbitrator (early pruning).
    pub pruned: u64,
    /// Nudges destinations sent after a release.
    pub nudges: u64,
}

impl PaseTransport {
    /// PASE over the window mechanism with `window` settings.
    pub fn new(params: PaseParams, window: WindowParams, dctcp: Dctcp) -> Self {
        let template = PaseCc {
            dctcp,
            queue: 0,
            reference_rate: params.reference_rate,
            lowest: params.queues - 1,
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
            sprayed_plan_of: Vec::new(),
            expiry: SimTime::ZERO,
            longest_rtt: SimTime::ZERO,
            delegated: BTreeMap::new(),
            virtual_link: HashMap::new(),
            parent_of: HashMap::new(),
            reported_demand: HashMap::new(),
            delegating: false,
            active_flows: 0,
            requesters: FlowMap::default(),
            slot_of: FlowMap::default(),
            stats: ArbitrationStats::default(),
        }
    }

    /// The arbitrated links of flow `flow`'s path from `src` to `dst` (computed once per
    /// path): sprayed, every equal-cost link of a hop as one; under ECMP, the links its hash
    /// picks, so arbitrators count only the flows that really cross their link.
    fn plan(&mut self, src: u32, dst: u32, flow: u32, fab: &Fabric) -> usize {
        let net = &fab.net;
        let (key, ports) = if self.params.sprayed {
            (vec![u32::MAX, src, dst], net.parallel_ports(src, dst))
        } else {
            let path = net.ecmp_ports(src, dst, flow);
            let hops = path.iter().map(|&p| vec![p]).collect();
            (path, hops)
        };
        if let Some(&i) = self.plan_of.get(&key) {
            return i;
        }
        let hops = ports.len();
        let switches = hops as u32 - 1;
        let mut stages = Vec::new();
        for (i, set) in ports.iter().enumerate() {
            let (at, delegate_to) = if i == 0 {
                (At::Source, None)
            } else if i == hops - 1 {
                (At::Destination, None)
            } else if !self.params.end_to_end {
                continue;
            } else if 2 * i as u32 <= switches {
                // Upward: where it starts; above the source's rack, delegated to it.
                let v = i as u32 - 1;
                if v >= 1 && self.params.delegation {
                    (At::Switch(0), Some(net.rack(src)))
                } else {
                    (At::Switch(v), None)
                }
            } else {
                // Downward: where it ends; above the destination's rack, delegated to it.
                let v = i as u32;
                if v + 1 < switches && self.params.delegation {
                    (At::Switch(switches - 1), Some(net.rack(dst)))
                } else {
                    (At::Switch(v), None)
                }
            };
            let set = set.clone();
            let capacity: f64 = set.iter().map(|&p| net.ports[p as usize].rate.0 as f64).sum();
            let next = self.arbitrators.len() as u32;
            let mut id = *self.link_ids.entry(set).or_insert(next);
            if id == next {
                self.arbitrators.push(LinkArbitrator::new(capacity));
            }
            if let Some(rack) = delegate_to {
                id = self.child_link(id, rack);
            }
            stages.push((id, at));
        }
        let fwd = crate::metrics::path_hops(net, src, dst, false);
        let rev = crate::metrics::path_hops(net, dst, src, false);
        let base_rtt = crate::metrics::ideal_fct(crate::units::MSS_BYTES as u64, &fwd, &rev);
        let rtt = base_rtt.as_ps() as f64;
        let period = rtt * self.params.rearbitrate_rtts;
        let quiet = (period * f64::from(1u32 << MAX_BACKOFF)).max(rtt * self.params.request_timeout_rtts);
        self.expiry = self.expiry.max(SimTime((3.0 * quiet).round() as u64));
        self.longest_rtt = self.longest_rtt.max(base_rtt);
        self.plans.push(PathPlan { stages, base_rtt });
        self.plan_of.insert(key, self.plans.len() - 1);
        self.plans.len() - 1
    }

    /// The virtual link `rack` arbitrates of `parent` (delegation), created on first use with
    /// the parent's shares resized to include it.
    fn child_link(&mut self, parent: u32, rack: u32) -> u32 {
        if let Some(&id) = self.virtual_link.get(&(parent, rack)) {
            return id;
        }
        let id = self.arbitrators.len() as u32;
        self.arbitrators.push(LinkArbitrator::new(0.0));
        self.virtual_link.insert((parent, rack), id);
        self.parent_of.insert(id, parent);
        self.delegated.entry(parent).or_default().push(id);
        self.resize(parent);
        id
    }

    /// Resizes `parent`'s delegated shares by its children's demands ([`delegated_share`]).
    /// Each child reports its demand and hears its share: two messages per child.
    fn resize(&mut self, parent: u32) {
        let c = self.arbitrators[parent as usize].capacity_bps();
        let children = &self.delegated[&parent];
        let n = children.len() as f64;
        let total: f64 =
            children.iter().map(|&v| self.arbitrators[v as usize].total_demand_bps()).sum();
        for &v in children {
            let a = &mut self.arbitrators[v as usize];
            a.set_capacity_bps(delegated_share(c, a.total_demand_bps(), total, n));
        }
        self.stats.switch_messages += 2 * children.len() as u64;
    }

    /// Resizes every delegated share, and keeps the clock going while flows are active.
    fn delegate(&mut self, fab: &mut Fabric) {
        let parents: Vec<u32> = self.delegated.keys().copied().collect();
        let oldest = SimTime(fab.now().as_ps().saturating_sub(self.expiry.as_ps()));
        for parent in parents {
            let mut changed = false;
            for &v in &self.delegated[&parent] {
                let a = &mut self.arbitrators[v as usize];
                a.expire(oldest);
                let demand = a.total_demand_bps();
                let reported = self.reported_demand.entry(v).or_insert(f64::NAN);
                changed |= *reported != demand;
                *reported = demand;
            }
            if changed {
                self.resize(parent); // racks report only a changed demand
            }
        }
        self.delegating = self.active_flows > 0
            || (self.params.partitioned && self.delegated_flows());
        if self.delegating {
            fab.schedule(fab.now() + self.delegation_period(), PaseEvent::Delegate(0, 0).encode());
        }
    }

    /// Starts the delegation clock unless it runs (or nothing is delegated here).
    fn start_delegation(&mut self, fab: &mut Fabric) {
        if self.params.delegation && !self.delegating && !self.delegated.is_empty() {
            self.delegating = true;
            fab.schedule(fab.now() + self.delegation_period(), PaseEvent::Delegate(0, 0).encode());
        }
    }

    /// Some virtual link of this transport arbitrates a flow (the partitioned model keeps the
    /// delegation clock going while one does: its flows may come from other partitions).
    fn delegated_flows(&self) -> bool {
        self.parent_of.keys().any(|&v| self.arbitrators[v as usize].flows() > 0)
    }

    fn delegation_period(&self) -> SimTime {
        let rtt = self.longest_rtt.as_ps() as f64;
        SimTime((rtt * self.params.delegation_period_rtts).round().max(1.0) as u64)
    }

    /// True if some link of `plan` is arbitrated `at`.
    fn arbitrates(&self, plan: usize, at: At) -> bool {
        self.plans[plan].stages.iter().any(|&(_, w)| w == at)
    }

    /// What arbitration cost so far.
    pub fn stats(&self) -> ArbitrationStats {
        self.stats
    }

    fn base_rate_bps(&self, plan: usize) -> f64 {
        let rtt = self.plans[plan].base_rtt.as_secs_f64();
        self.params.base_rate_pkts_per_rtt * MTU_BYTES as f64 * 8.0 / rtt
    }

    /// Arbitrates flow `slot`'s links arbitrated `at`, combined with `so_far`.
    fn arbitrate(&mut self, slot: u32, at: At, so_far: Assignment, now: SimTime) -> Assignment {
        let (flow, plan, key) = self.view(slot, now);
        self.arbitrate_key(flow, plan, key, at, so_far, now)
    }

    /// The source's view of its flow in `slot`: its id, path plan and arbitration key (its
    /// deadline under EDF, else its bytes not yet acknowledged).
    fn view(&self, slot: u32, now: SimTime) -> (u32, usize, u64) {
        let fl = &self.flows[slot as usize];
        let remaining = self.window.remaining_bytes(slot);
        let key = if self.params.edf { self.edf_key(fl.deadline, remaining, now) } else { remaining };
        (fl.id, fl.plan, key)
    }

    /// EDF's key: the deadline. With `late_last`, a flow that can no longer meet it (past it,
    /// or with more bytes left than its host's line rate sends in the time left: pFabric's
    /// test for a hopeless flow in the pFabric ns-2 patch) comes after every flow that still
    /// can, the late ones among themselves by deadline, and before flows without a deadline.
    fn edf_key(&self, deadline: SimTime, remaining_bytes: u64, now: SimTime) -> u64 {
        const LATE: u64 = 1 << 62;
        let late = self.params.late_last
            && deadline != SimTime::MAX
            && now + self.params.host_rate.tx_time(remaining_bytes) > deadline;
        if late {
            deadline.as_ps() | LATE
        } else {
            deadline.as_ps()
        }
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
        let nic = self.params.host_rate.0 as f64;
        let oldest = SimTime(now.as_ps().saturating_sub(self.expiry.as_ps()));
        let mut out = so_far;
        for i in 0..self.plans[plan].stages.len() {
            let (link, where_) = self.plans[plan].stages[i];
            if where_ == at {
                let a = &mut self.arbitrators[link as usize];
                a.expire(oldest);
                let want = nic.min(out.rate_bps);
                let first = a.flows() == 0;
                // Bottom up, a flow asks each link for what the links before it granted: one
                // held back below does not crowd out the flows a link could serve.
                a.update(flow, key, want, now);
                if first && a.capacity_bps() < want {
                    // A rack's first flow on a delegated link, its share too small for it: the
                    // rack asks its parent now rather than at the next resize.
                    if let Some(&parent) = self.parent_of.get(&link) {
                        self.resize(parent);
                    }
                }
                let a = &self.arbitrators[link as usize];
                out = out.combine(a.assign_recorded(flow, key, want, self.params.queues, base));
            }
        }
        out
    }

    /// Removes `flow` (path `plan`) from its links arbitrated `at`.
    fn release(&mut self, flow: u32, plan: usize, at: At) {
        for &(link, where_) in &self.plans[plan].stages {
            if where_ == at {
                self.arbitrators[link as usize].remove(flow);
            }
        }
    }

    /// The flows in the top queue of the links of `plan` arbitrated `at` (after a release
    /// there: the flows it let in, and those already in).
    fn top_queue_flows(&self, plan: usize, at: At) -> Vec<u32> {
        let stages = self.plans[plan].stages.iter().filter(|&&(_, w)| w == at);
        stages.flat_map(|&(link, _)| self.arbitrators[link as usize].top_queue_flows()).collect()
    }

    /// After a flow of path `plan` finished at its source: the source's flows now in the top
    /// queue of its uplink (or of another link it arbitrates) ask at their next period, not
    /// after a backed-off wait. The source knows at once; no packet is needed.
    fn wake_local(&mut self, plan: usize) {
        for flow in self.top_queue_flows(plan, At::Source) {
            if let Some(&slot) = self.slot_of.get(&flow) {
                let fl = &mut self.flows[slot as usize];
                (fl.unchanged, fl.skip) = (0, 0);
            }
        }
    }

    /// After a release at destination `dst`: each flow now in the top queue of a link of
    /// `plan` arbitrated there (its downlink) hears it may ask at once, rather than at its
    /// next, possibly backed-off, request.
    fn nudge(&mut self, plan: usize, dst: u32, fab: &mut Fabric) {
        let now = fab.now();
        for flow in self.top_queue_flows(plan, At::Destination) {
            let Some(&(src, wire)) = self.requesters.get(&flow) else { continue };
            self.stats.nudges += 1;
            let nudge = Packet::new(NUDGE, flow, wire, dst, src, 0, self.params.control_bytes, now);
            fab.inject(dst, nudge);
        }
    }

    /// A control packet of flow `slot` (its entry here; the packet carries its slot on the
    /// wire).
    fn control(&self, kind: PacketKind, slot: u32, from: u32, to: u32, now: SimTime) -> Packet {
        let fl = &self.flows[slot as usize];
        let wire = self.window.wire_slot(slot);
        Packet::new(kind, fl.id, wire, from, to, 0, self.params.control_bytes, now)
    }

    /// The response to request `p` (at its destination, or at a switch that prunes it), with
    /// arbitration header `header`.
    fn response(&self, p: &Packet, header: [u32; 2], now: SimTime) -> Packet {
        Packet {
            header,
            ..Packet::new(RESPONSE, p.flow, p.slot, p.dst, p.src, 0, self.params.control_bytes, now)
        }
    }

    /// The table entry of the flow of this partition whose packets carry `wire` (the same slot
    /// in the sequential model).
    fn local_slot(&self, wire: u32) -> Option<u32> {
        if self.params.partitioned {
            self.window.local_slot(wire)
        } else {
            Some(wire)
        }
    }

    /// What an arbitrator away from the source needs of request `p`: its flow, path plan and
    /// key. In the sequential model the source's view ([`Self::view`]; `None`: the slot holds
    /// another flow or a finished one); in the partitioned model from the packet: the plan
    /// from its ends (and flow, under ECMP) and the key (bytes left when it was sent) from its
    /// `seq`.
    fn far_view(&mut self, p: &Packet, fab: &Fabric) -> Option<(u32, usize, u64)> {
        if self.params.partitioned {
            let plan = self.plan_of_ends(p, fab);
            return Some((p.flow, plan, p.seq as u64));
        }
        let fl = self.flows.get(p.slot as usize)?;
        (fl.id == p.flow && fl.active).then(|| self.view(p.slot, fab.now()))
    }

    /// The plan a release names: its header's (the sequential model), or from its ends.
    fn release_plan(&mut self, p: &Packet, fab: &Fabric) -> usize {
        if self.params.partitioned {
            self.plan_of_ends(p, fab)
        } else {
            p.header[1] as usize
        }
    }

    /// The partitioned model: the plan of control packet `p`'s flow, from its ends (and its
    /// id, under ECMP). Sprayed plans are kept by ends in a flat table: a lookup per
    /// arbitrator visited must not hash and allocate a path key (the first version did, and
    /// took 1.8-1.9 times the sequential model's wall time on one thread).
    fn plan_of_ends(&mut self, p: &Packet, fab: &Fabric) -> usize {
        if !self.params.sprayed {
            return self.plan(p.src, p.dst, p.flow, fab);
        }
        let hosts = fab.net.n_hosts() as usize;
        let i = p.src as usize * hosts + p.dst as usize;
        if self.sprayed_plan_of.is_empty() {
            self.sprayed_plan_of = vec![u32::MAX; hosts * hosts];
        }
        if self.sprayed_plan_of[i] == u32::MAX {
            self.sprayed_plan_of[i] = self.plan(p.src, p.dst, p.flow, fab) as u32;
        }
        self.sprayed_plan_of[i] as usize
    }

    /// The source arbitrates its uplink and sends a request along the path.
    fn request(&mut self, slot: u32, fab: &mut Fabric) {
        let local = self.arbitrate(slot, At::Source, UNCONSTRAINED, fab.now());
        self.stats.requests += 1;
        let fl = &mut self.flows[slot as usize];
        fl.request += 1;
        fl.request_sent = fab.now();
        let header = ArbHeader { seq: fl.request as u16, visits: 0, answer: local }.pack();
        let (src, dst) = (fl.src, fl.dst);
        let mut p = Packet {
            header,
            inspect: self.params.end_to_end,
            ..self.control(REQUEST, slot, src, dst, fab.now())
        };
        if self.params.partitioned {
            // The far arbitrators' key: the bytes left now (SRPT only, module docs).
            p.seq = self.window.remaining_bytes(slot).min(u32::MAX as u64) as u32;
        }
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
        if let Some(win) = cc.pinned_window() {
            w.cwnd = win.clamp(1.0, w.max);
        }
        let hold = self.params.reference_rate && self.params.probing && a.queue == lowest;
        let fl = &mut self.flows[slot as usize];
        fl.queue = a.queue;
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
        let plan = self.plan(f.src, f.dst, f.id, fab);
        // The local answer first (§4.2): the source's uplink, before any packet leaves.
        let key = if self.params.edf {
            self.edf_key(f.deadline, f.size_bytes, fab.now())
        } else {
            f.size_bytes
        };
        let local = self.arbitrate_key(f.id, plan, key, At::Source, UNCONSTRAINED, fab.now());
        let rtt = self.plans[plan].base_rtt;
        let mut cc = self.template.clone();
        cc.queue = local.queue;
        cc.rate_window = local.rate_bps * rtt.as_secs_f64() / (MTU_BYTES as f64 * 8.0);
        // Nothing leaves before the local answer is applied: a flow the uplink's arbitrator
        // puts in the lowest queue holds its data from the start.
        let slot = self.window.open(f, cc);
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
        self.slot_of.insert(f.id, slot);
        self.active_flows += 1;
        self.start_delegation(fab);
        self.apply(slot, local, fab);
        self.request(slot, fab);
        let period = SimTime((rtt.as_ps() as f64 * self.params.rearbitrate_rtts).round() as u64);
        fab.schedule(fab.now() + period, PaseEvent::Rearbitrate(slot, gen).encode());
    }

    fn on_packet(&mut self, id: PacketId, fab: &mut Fabric) -> Option<Completion> {
        let p = *fab.pool.get(id);
        if !matches!(p.kind, REQUEST | RESPONSE | RELEASE | NUDGE) {
            let local = if p.kind == PacketKind::ACK { self.local_slot(p.slot) } else { None };
            if let Some(slot) = local {
                if let Some(fl) = self.flows.get_mut(slot as usize).filter(|f| f.id == p.flow) {
                    fl.probe_out = false; // whatever it answers, the path delivers again
                }
            }
            let done = self.window.on_packet(id, fab)?;
            // The flow finished: its source forgets it and sends a release along the path.
            let slot = local.expect("only an ACK of this partition's flow finishes it");
            let fl = &mut self.flows[slot as usize];
            fl.active = false;
            self.active_flows -= 1;
            let (src, dst, plan) = (fl.src, fl.dst, fl.plan);
            self.release(p.flow, plan, At::Source);
            self.slot_of.remove(&p.flow);
            self.wake_local(plan);
            // The release carries its path's plan: the slot may hold another flow by the
            // time it arrives.
            let rel = Packet {
                inspect: self.params.end_to_end,
                header: [0, plan as u32],
                ..self.control(RELEASE, slot, src, dst, fab.now())
            };
            fab.inject(src, rel);
            return Some(done);
        }
        fab.deliver(id);
        let now = fab.now();
        match p.kind {
            RELEASE => {
                // Releases name the flow and its plan, whatever its slot holds now.
                let plan = self.release_plan(&p, fab);
                self.release(p.flow, plan, At::Destination);
                self.requesters.remove(&p.flow);
                self.nudge(plan, p.dst, fab);
            }
            REQUEST => {
                // The destination arbitrates its downlink and answers the source.
                let (flow, plan, key) = self.far_view(&p, fab)?;
                self.requesters.insert(flow, (p.src, p.slot));
                let mut h = ArbHeader::unpack(p.header);
                h.answer = self.arbitrate_key(flow, plan, key, At::Destination, h.answer, now);
                fab.inject(p.dst, self.response(&p, h.pack(), now));
            }
            NUDGE => {
                let slot = self.local_slot(p.slot)?;
                let fl = self.flows.get_mut(slot as usize)?;
                if fl.id == p.flow && fl.active {
                    // The destination's downlink has room for it now: ask at once (even with
                    // a request out, whose answer may predate the release), then every period.
                    (fl.unchanged, fl.skip, fl.missed) = (0, 0, 0);
                    self.request(slot, fab);
                }
            }
            _ => {
                let slot = self.local_slot(p.slot)?;
                let fl = self.flows.get_mut(slot as usize)?;
                let h = ArbHeader::unpack(p.header);
                let number = request_number(fl.request, h.seq);
                if fl.id == p.flow && fl.active && number > fl.answered {
                    fl.answered = number;
                    fl.missed = 0;
                    if h.answer.queue > 0 && h.answer.queue == fl.queue {
                        // Still waiting where it was: ask half as often, down to every 64
                        // periods (a release nudges it sooner).
                        fl.unchanged = (fl.unchanged + 1).min(MAX_BACKOFF);
                        fl.skip = (1u8 << fl.unchanged) - 1;
                    } else {
                        (fl.unchanged, fl.skip) = (0, 0);
                    }
                    self.apply(slot, h.answer, fab);
                }
            }
        }
        None
    }

    fn on_event(&mut self, code: u8, a: u32, b: u32, fab: &mut Fabric) {
        if WindowEvent::owns(code) {
            return self.window.on_event(code, a, b, fab);
        }
        match PaseEvent::decode(code, a, b) {
            PaseEvent::Rearbitrate(slot, gen) => {
                let fl = &self.flows[slot as usize];
                if !fl.active || fl.gen != gen {
                    return;
                }
                let rtt = self.plans[fl.plan].base_rtt;
                let fl = &mut self.flows[slot as usize];
                if fl.answered < fl.request {
                    // One request out: sent again only once it is overdue.
                    let timeout = rtt.as_ps() as f64 * self.params.request_timeout_rtts;
                    let wait = SimTime((timeout * f64::from(1u32 << fl.missed)).round() as u64);
                    if fab.now() >= fl.request_sent + wait {
                        fl.missed = (fl.missed + 1).min(MAX_BACKOFF);
                        self.request(slot, fab);
                    }
                } else if fl.skip > 0 {
                    fl.skip -= 1;
                } else {
                    self.request(slot, fab);
                }
                let period =
                    SimTime((rtt.as_ps() as f64 * self.params.rearbitrate_rtts).round() as u64);
                fab.schedule(fab.now() + period, PaseEvent::Rearbitrate(slot, gen).encode());
            }
            PaseEvent::Delegate(..) => self.delegate(fab),
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

    /// Numbers the window mechanism's slots for partition `index` of `count`.
    /// The window mechanism's largest backed-off RTO.
    fn recovery_timeout(&self, net: &crate::topology::Network) -> SimTime {
        self.window.recovery_timeout(net)
    }
    fn set_partition(&mut self, index: u32, count: u32) {
        debug_assert!(self.params.partitioned, "only the partitioned model is partitioned");
        self.window.set_partition(index, count);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let s = self.stats;
        vec![
            ("arbitration_requests", s.requests),
            ("arbitration_switch_messages", s.switch_messages),
            ("arbitration_pruned", s.pruned),
            ("arbitration_nudges", s.nudges),
        ]
    }

    fn on_switch(&mut self, node: u32, id: PacketId, fab: &mut Fabric) -> bool {
        let p = *fab.pool.get(id);
        // Every control packet counts the switches it visits in its first word's low byte.
        let visit = p.header[0] & 0xFF;
        fab.pool.get_mut(id).header[0] = (p.header[0] & !0xFF) | ((visit + 1) & 0xFF);
        let at = At::Switch(visit);
        if p.kind == RELEASE {
            let plan = self.release_plan(&p, fab);
            self.stats.switch_messages += u64::from(self.arbitrates(plan, at));
            self.release(p.flow, plan, at);
            return true;
        }
        if p.kind != REQUEST {
            return true;
        }
        let Some((flow, plan, key)) = self.far_view(&p, fab) else { return true };
        if !self.arbitrates(plan, at) {
            return true; // no arbitrator here for this path: the switch forwards it
        }
        self.stats.switch_messages += 1;
        let mut h = ArbHeader::unpack(fab.pool.get(id).header);
        let before = h.answer;
        h.answer = self.arbitrate_key(flow, plan, key, at, before, fab.now());
        fab.pool.get_mut(id).header = h.pack();
        if self.params.partitioned {
            // A rack's arbitrator may hold virtual links of flows from other partitions only.
            self.start_delegation(fab);
        }
        let prune = self.params.pruning_queue;
        if prune > 0 && h.answer.queue >= prune && h.answer != before {
            // Early pruning: this arbitrator answers; the links above never hear.
            self.stats.pruned += 1;
            fab.deliver(id); // consumed here
            let resp = self.response(&p, h.pack(), fab.now());
            fab.send_from_switch(node, resp);
            return false;
        }
        true
    }
}

/// A child's delegated share of a parent link of capacity `c` shared by `n` children asking
/// for `total` in all, `demand` of it. While the demands fit, each child gets its demand and
/// an equal part of what is left; beyond, shares are proportional to demand. The shares sum
/// to c and a lone flow keeps the whole link; a child asking for nothing gets nothing under
/// load, and asks its parent at once when its first flow comes ([`PaseTransport::child_link`]).
fn delegated_share(c: f64, demand: f64, total: f64, n: f64) -> f64 {
    if total <= c {
        demand + (c - total) / n
    } else {
        c * demand / total
    }
}

/// `transport.protocol = "pase"`.
#[derive(Debug)]
pub struct PaseProtocol;

impl Protocol for PaseProtocol {
    type Host = PaseTransport;

    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        let p = &spec.pase;
        let params = PaseParams {
            queues: p.queues as u8,
            end_to_end: p.arbitration == PaseArbitration::EndToEnd,
            edf: p.order == PaseOrder::Edf,
            late_last: p.late_flows == PaseLateFlows::Last,
            reference_rate: p.rate_control == PaseRateControl::Pase,
            pruning_queue: p.pruning_queue as u8,
            rearbitrate_rtts: p.rearbitrate_rtts,
            request_timeout_rtts: p.request_timeout_rtts,
            base_rate_pkts_per_rtt: p.base_rate_pkts_per_rtt,
            probing: p.probing,
            host_rate: spec.topology.host_rate(),
            sprayed: spec.topology.load_balancing != crate::spec::LoadBalancing::Ecmp,
            delegation: p.delegation,
            delegation_period_rtts: p.delegation_period_rtts,
            control_bytes: p.control_bytes,
            partitioned: spec.engine.partitioned,
        };
        let dctcp = Dctcp::new(spec.dctcp.g, spec.dctcp.initial_alpha);
        let ports = PortPlan {
            queue: QueuePlan::StrictPriority { queues: p.queues as usize, reserved_bytes: 0 },
            marking: EcnMarking::Instantaneous { threshold_bytes: spec.dctcp.marking_threshold_bytes },
            buffer_bytes: spec.transport.port_buffer(&spec.topology),
        };
        let window = WindowParams::from_spec(spec);
        Parts::packets(PaseTransport::new(params, window, dctcp), ports)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delegated_shares_give_demand_and_spare_then_proportions() {
        let c = 40.0;
        // Nobody asks: equal shares. A lone line-rate flow: the whole rest of the link.
        assert_eq!(delegated_share(c, 0.0, 0.0, 4.0), 10.0);
        let lone: Vec<f64> = [10.0, 0.0].iter().map(|&d| delegated_share(c, d, 10.0, 2.0)).collect();
        assert_eq!(lone, vec![25.0, 15.0]);
        assert_eq!(delegated_share(c, 40.0, 40.0, 2.0), 40.0, "demand exactly fills the link");
        assert_eq!(delegated_share(c, 0.0, 40.0, 2.0), 0.0);
        // Demands 60, 20, 0, 0 (total 80 > 40): proportional, 30, 10, 0, 0.
        let shares: Vec<f64> =
            [60.0, 20.0, 0.0, 0.0].iter().map(|&d| delegated_share(c, d, 80.0, 4.0)).collect();
        assert_eq!(shares, vec![30.0, 10.0, 0.0, 0.0]);
        assert_eq!(shares.iter().sum::<f64>(), c);
    }

    #[test]
    fn arbitration_headers_survive_the_wire() {
        let h = ArbHeader {
            seq: 65535,
            visits: 5,
            answer: Assignment { queue: 7, rate_bps: 1.25e9 },
        };
        assert_eq!(ArbHeader::unpack(h.pack()), h);
        // Full request numbers from the wire's 16 bits, past a wrap and at the start.
        assert_eq!(request_number(65_537, 65_535), 65_535);
        assert_eq!(request_number(65_537, 1), 65_537);
        assert_eq!(request_number(200_000, 200_000u32 as u16), 200_000);
        assert_eq!(request_number(3, 1), 1);
    }
}
