//! Workloads: flow sizes, arrival processes and traffic matrices (pFabric SIGCOMM'13 §5, pHost §4, PIAS §5).
//!
//! Flows are generated lazily, in arrival order, one at a time: the simulator holds only the
//! next arrival, so memory does not grow with the number of flows still to come.
//!
//! Load follows the papers' definition (pFabric SIGCOMM'13 §5, as the ns-2 scripts compute it): the offered load on each host link,
//! counting a 40-byte header per 1460 bytes of payload,
//! `λ_host = C·ρ / (E[S]·8·1500/1460)`. Left-right puts it on its bottleneck instead: the
//! narrower of the senders' links together and the links out of the left half of the fabric
//! (PASE SIGCOMM'14 §4.2, Fig. 10a's load is the aggregation–core links').

mod sizes;

pub use sizes::FlowSizeSampler;

use crate::error::SpecError;
use crate::spec::{Matrix, Spec};
use crate::streams::Stream;
use crate::topology::{Network, NodeKind};
use crate::trace;
use crate::units::{HEADER_BYTES, MSS_BYTES};
use dcsim_engine::{Rng, SimTime};
use std::collections::VecDeque;

/// No request / no deadline marker.
pub const NONE: u32 = u32::MAX;

/// The id of the first long-lived flow (`workload.long_lived_flows`); flow k has this id + k.
/// Above every id the run's flows take (those count up from 0), so a transport, the fabric and
/// the simulation tell the two apart by id alone.
pub const LONG_LIVED_ID: u32 = u32::MAX - 1 - crate::spec::MAX_LONG_LIVED_FLOWS;

/// Whether flow `id` is one of the long-lived flows.
#[inline]
pub fn is_long_lived(id: u32) -> bool {
    id >= LONG_LIVED_ID
}

/// A flow to start.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FlowArrival {
    /// Sequential id in arrival order (0, 1, 2, …).
    pub id: u32,
    /// The id to report (the trace's own id for traces, else `id`).
    pub label: u64,
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Payload bytes.
    pub size_bytes: u64,
    /// Arrival time.
    pub start: SimTime,
    /// Absolute deadline, or `SimTime::MAX` for none.
    pub deadline: SimTime,
    /// Tenant number.
    pub tenant: u32,
    /// Incast request this flow answers, or [`NONE`].
    pub request: u32,
}

/// Flow (or request) `k`'s tenant among `n`: by turns, or drawn from the cumulative weights
/// `cdf` when there are any.
fn tenant_of(k: u32, n: usize, cdf: &[f64], rng: &mut Rng) -> u32 {
    if cdf.is_empty() {
        return k % n as u32;
    }
    let u = rng.next_f64();
    cdf.iter().position(|&c| u < c).unwrap_or(cdf.len() - 1) as u32
}

/// Per-host arrival rate in flows per second for link rate `bps`, load `rho` and mean payload
/// `mean_bytes` (the ns-2 scripts' rule).
pub fn per_host_rate(bps: f64, rho: f64, mean_bytes: f64) -> f64 {
    bps * rho / (mean_bytes * 8.0 * (MSS_BYTES + HEADER_BYTES) as f64 / MSS_BYTES as f64)
}

#[derive(serde::Serialize, serde::Deserialize)]
enum Source {
    /// Poisson arrivals between the pairs `pairs` draws.
    Poisson {
        pairs: Pairs,
    },
    Incast {
        senders: u32,
    },
    Trace {
        rows: Vec<trace::TraceRow>,
        pos: usize,
    },
}

/// How a Poisson flow's source and destination are drawn.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
enum Pairs {
    /// Any two distinct hosts.
    AllToAll,
    /// Each source's one partner.
    Permutation(Vec<u32>),
    /// Every flow to this host from another (fan-in).
    To(u32),
    /// From a host of `left` to one of `right`.
    LeftRight { left: Vec<u32>, right: Vec<u32> },
    /// Within `hosts`: to the next in round robin, from another.
    IntraRack { hosts: Vec<u32>, next: usize },
}

/// The hosts of the left and the right half of the racks (by rack number; with a single rack,
/// the halves of the hosts), for [`Matrix::LeftRight`].
fn halves(racks: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let n_racks = racks.iter().max().map_or(1, |r| r + 1);
    let hosts = 0..racks.len() as u32;
    if n_racks >= 2 {
        hosts.partition(|&h| racks[h as usize] < n_racks / 2)
    } else {
        hosts.partition(|&h| h < racks.len() as u32 / 2)
    }
}

impl Pairs {
    /// The next flow's (source, destination) among `n_hosts` hosts, drawn from `rng`.
    fn draw(&mut self, rng: &mut Rng, n_hosts: u32) -> (u32, u32) {
        match self {
            Pairs::To(d) => (other(rng, n_hosts, *d), *d),
            Pairs::Permutation(p) => {
                let src = rng.below(n_hosts as u64) as u32;
                (src, p[src as usize])
            }
            Pairs::AllToAll => {
                let src = rng.below(n_hosts as u64) as u32;
                (src, other(rng, n_hosts, src))
            }
            Pairs::LeftRight { left, right } => {
                let src = left[rng.below(left.len() as u64) as usize];
                (src, right[rng.below(right.len() as u64) as usize])
            }
            Pairs::IntraRack { hosts, next } => {
                let d = *next % hosts.len();
                *next += 1;
                let s = other(rng, hosts.len() as u32, d as u32) as usize;
                (hosts[s], hosts[d])
            }
        }
    }
}

/// The `n` long-lived flows (`workload.long_lived_flows`): their pairs are drawn from the run's
/// matrix (`source`; an incast flow's pair is a random sender and receiver) with a stream of
/// their own, so the run's flows are the same with or without them; they start at time 0, with
/// no deadline, and carry the largest flow dcsim simulates (1 TB: 800 s at 10 Gbps), so they do
/// not finish during a run.
fn long_lived_flows(n: u32, source: &Source, n_hosts: u32, seed: u64) -> Vec<FlowArrival> {
    let mut pairs = match source {
        Source::Poisson { pairs } => pairs.clone(),
        Source::Incast { .. } => Pairs::AllToAll,
        Source::Trace { .. } => {
            assert_eq!(n, 0, "the spec rejects long-lived flows with a trace");
            return Vec::new();
        }
    };
    let mut rng = Stream::LongLivedFlows.rng(seed);
    (0..n)
        .map(|k| {
            let (src, dst) = pairs.draw(&mut rng, n_hosts);
            FlowArrival {
                id: LONG_LIVED_ID + k,
                label: (LONG_LIVED_ID + k) as u64,
                src,
                dst,
                size_bytes: crate::units::MAX_FLOW_BYTES,
                start: SimTime::ZERO,
                deadline: SimTime::MAX,
                tenant: 0,
                request: NONE,
            }
        })
        .collect()
}

/// A uniformly random index below `n` other than `not`.
fn other(rng: &mut Rng, n: u32, not: u32) -> u32 {
    let d = rng.below(n as u64 - 1) as u32;
    if d >= not {
        d + 1
    } else {
        d
    }
}

/// Produces the run's flows in arrival order.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Generator {
    source: Source,
    /// One sampler per tenant (flow k, or incast request k, belongs to tenant k mod n, or to
    /// one drawn with `tenant_cdf`).
    sizes: Vec<FlowSizeSampler>,
    /// Cumulative tenant weights, normalised (empty: tenants take turns).
    tenant_cdf: Vec<f64>,
    rng_tenant: Rng,
    at_start: bool,
    n_hosts: u32,
    /// Mean time between arrivals (flows or incast requests) over the whole fabric, s.
    mean_gap_s: f64,
    /// Mean bytes a flow (or incast request) carries.
    mean_bytes: f64,
    /// `workload.load`, what [`Generator::offered_load`] is measured against.
    load: f64,
    /// Payload bytes of the flows (or incast requests) drawn so far, query responses and
    /// long-lived flows left out: what [`Generator::offered_load`] measures.
    offered_payload_bytes: u64,
    now_s: f64,
    limit: u64,
    /// The flows the run is about: `limit`, or with `stop_when = "n-finished"` the number
    /// that must finish (the arrivals themselves are then unbounded).
    target: u64,
    issued: u64,
    rng_time: Rng,
    rng_size: Rng,
    rng_pair: Rng,
    rng_deadline: Rng,
    deadline_mean_s: f64,
    pending: VecDeque<FlowArrival>,
    /// Background flows produced so far (ids are given at emission, in arrival order).
    bg_issued: u64,
    bg_peek: Option<FlowArrival>,
    queries: Option<Queries>,
    query_pending: VecDeque<FlowArrival>,
    next_request: u32,
    /// The long-lived flows (`workload.long_lived_flows`), apart from the run's flows.
    long_lived: Vec<FlowArrival>,
}

/// Partition/aggregate queries on top of the background traffic (PIAS §5.1, Figs. 8-9): host 0
/// asks `fanout` distinct other hosts for `bytes` each; queries arrive as a Poisson process.
#[derive(serde::Serialize, serde::Deserialize)]
struct Queries {
    left: u64,
    next: SimTime,
    mean_gap_s: f64,
    fanout: u32,
    bytes: u64,
    rng: Rng,
}

/// Placeholder label: replaced by the flow's id when it is emitted.
const LABEL_FROM_ID: u64 = u64::MAX;

impl Generator {
    /// The generator for `spec` over the fabric `net` built from it, drawing from sub-streams
    /// of `spec.seed`.
    pub fn new(spec: &Spec, net: &Network) -> Result<Self, SpecError> {
        let w = &spec.workload;
        let n_hosts = spec.topology.n_hosts();
        let racks = &net.host_racks(n_hosts);
        let sizes = if w.tenants.is_empty() {
            vec![FlowSizeSampler::from_spec(w)?]
        } else {
            w.tenants.iter().map(|t| FlowSizeSampler::new(t, w)).collect::<Result<Vec<_>, _>>()?
        };
        // The mean over tenants, weighted by their share of flows.
        let weights: Vec<f64> = if w.tenant_weights.is_empty() {
            vec![1.0; sizes.len()]
        } else {
            w.tenant_weights.clone()
        };
        let total_weight: f64 = weights.iter().sum();
        let mean = if w.mean_size_bytes > 0 {
            w.mean_size_bytes as f64
        } else {
            sizes.iter().zip(&weights).map(|(s, x)| s.mean_bytes() * x).sum::<f64>() / total_weight
        };
        let tenant_cdf: Vec<f64> = if w.tenant_weights.is_empty() {
            Vec::new()
        } else {
            weights
                .iter()
                .scan(0.0, |acc, x| {
                    *acc += x / total_weight;
                    Some(*acc)
                })
                .collect()
        };
        let bps = spec.topology.host_link_gbps * 1e9;
        let mut rng_pair = Stream::HostPairs.rng(spec.seed);
        let (source, mean_gap_s, limit) = match &w.matrix {
            Matrix::AllToAll => (
                Source::Poisson { pairs: Pairs::AllToAll },
                1.0 / (n_hosts as f64 * per_host_rate(bps, w.load, mean)),
                w.flows,
            ),
            Matrix::Permutation => {
                // Sattolo's algorithm: a uniformly random cyclic permutation, so no host is
                // its own partner and every host receives from exactly one (pHost §4.4).
                let mut p: Vec<u32> = (0..n_hosts).collect();
                for i in (1..n_hosts as usize).rev() {
                    let j = rng_pair.below(i as u64) as usize;
                    p.swap(i, j);
                }
                (
                    Source::Poisson { pairs: Pairs::Permutation(p) },
                    1.0 / (n_hosts as f64 * per_host_rate(bps, w.load, mean)),
                    w.flows,
                )
            }
            // Every host its own partner, at the permutation's rate (each host link carries the
            // load once in each direction). The flows turn at the host's switch, so there must
            // be one.
            Matrix::ToSelf => {
                if let Some(h) = (0..n_hosts)
                    .find(|&h| net.kind(net.ports[net.nic(h) as usize].peer) == NodeKind::Host)
                {
                    return Err(SpecError::new(
                        "workload.matrix",
                        format!(
                            "\"self\" sends each host's flows through its switch and back, and host {h} is linked straight to another host: use a topology with switches (not \"pair\")"
                        ),
                    ));
                }
                (
                    Source::Poisson { pairs: Pairs::Permutation((0..n_hosts).collect()) },
                    1.0 / (n_hosts as f64 * per_host_rate(bps, w.load, mean)),
                    w.flows,
                )
            }
            // One receiver's link carries the load: flows arrive at one host link's rate.
            Matrix::FanIn => (
                Source::Poisson { pairs: Pairs::To(0) },
                1.0 / per_host_rate(bps, w.load, mean),
                w.flows,
            ),
            // The load is on the bottleneck: the narrower of the senders' links together and
            // the links out of the left half (oversubscribed uplinks; PASE SIGCOMM'14 §4.2).
            Matrix::LeftRight => {
                let (left, right) = halves(racks);
                let hosts_bps = left.len() as f64 * bps;
                let out_bps = net.capacity_out_of(&left, n_hosts).0 as f64;
                // Equal capacities (no oversubscription, up to the rounding of a derived core
                // rate to whole bits per second) keep the senders' links.
                let gap = if out_bps < hosts_bps * (1.0 - 1e-9) {
                    1.0 / per_host_rate(out_bps, w.load, mean)
                } else {
                    1.0 / (left.len() as f64 * per_host_rate(bps, w.load, mean))
                };
                (Source::Poisson { pairs: Pairs::LeftRight { left, right } }, gap, w.flows)
            }
            // Each host of the rack is the destination of one flow in n: its link carries the
            // load.
            Matrix::IntraRack => {
                let hosts: Vec<u32> =
                    (0..n_hosts).filter(|&h| racks[h as usize] == racks[0]).collect();
                let gap = 1.0 / (hosts.len() as f64 * per_host_rate(bps, w.load, mean));
                (Source::Poisson { pairs: Pairs::IntraRack { hosts, next: 0 } }, gap, w.flows)
            }
            Matrix::Incast => {
                // Each request delivers a whole sampled size to one receiver, so receivers see
                // load ρ: requests arrive at n_hosts · λ(ρ, E[request size]).
                (
                    Source::Incast { senders: w.incast_senders },
                    1.0 / (n_hosts as f64 * per_host_rate(bps, w.load, mean)),
                    w.flows,
                )
            }
            Matrix::Trace(path) => {
                let rows = trace::read_trace(path, n_hosts)?;
                let limit =
                    if w.flows == 0 { rows.len() as u64 } else { w.flows.min(rows.len() as u64) };
                (Source::Trace { rows, pos: 0 }, 0.0, limit)
            }
        };
        // The arrivals must fit inside the simulated horizon (a tiny load stretches them).
        let span_s = limit as f64 * mean_gap_s;
        if span_s >= crate::units::HORIZON_S {
            return Err(SpecError::new(
                "workload.load",
                format!(
                    "at load {} the {limit} flows would arrive over about {span_s:.3e} s of simulated time, beyond the horizon of {} s: raise `workload.load` or lower `workload.flows`",
                    w.load,
                    crate::units::HORIZON_S
                ),
            ));
        }
        if w.queries as f64 / w.query_rate_per_s >= crate::units::HORIZON_S {
            return Err(SpecError::new(
                "workload.query_rate_per_s",
                format!(
                    "{} queries at {} per second would arrive beyond the simulated horizon of {} s",
                    w.queries,
                    w.query_rate_per_s,
                    crate::units::HORIZON_S
                ),
            ));
        }
        // Run until `flows` have finished: the arrivals never run out (the simulation stops).
        let n_finished = w.stop_when == crate::spec::StopWhen::NFinished;
        let (limit, target) = if n_finished { (u64::MAX, limit) } else { (limit, limit) };
        let long_lived = long_lived_flows(w.long_lived_flows, &source, n_hosts, spec.seed);
        Ok(Generator {
            source,
            sizes,
            tenant_cdf,
            rng_tenant: Stream::Tenants.rng(spec.seed),
            at_start: w.arrivals == crate::spec::Arrivals::AtStart,
            n_hosts,
            mean_gap_s,
            mean_bytes: mean,
            load: w.load,
            offered_payload_bytes: 0,
            now_s: 0.0,
            limit,
            target,
            issued: 0,
            rng_time: Stream::ArrivalTimes.rng(spec.seed),
            rng_size: Stream::FlowSizes.rng(spec.seed),
            rng_pair,
            rng_deadline: Stream::Deadlines.rng(spec.seed),
            deadline_mean_s: w.deadline_mean_us / 1e6,
            pending: VecDeque::new(),
            bg_issued: 0,
            bg_peek: None,
            queries: (w.queries > 0).then(|| {
                let mut rng = Stream::Queries.rng(spec.seed);
                let mean_gap_s = 1.0 / w.query_rate_per_s;
                let first = rng.exponential(mean_gap_s);
                Queries {
                    left: w.queries,
                    next: SimTime::from_secs_f64(first),
                    mean_gap_s,
                    fanout: w.query_fanout,
                    bytes: w.query_bytes,
                    rng,
                }
            }),
            query_pending: VecDeque::new(),
            next_request: 0,
            long_lived,
        })
    }

    /// The long-lived flows, to start at time 0 (not among the flows [`Generator::next_flow`]
    /// produces, nor counted by [`Generator::total`]).
    pub fn long_lived(&self) -> &[FlowArrival] {
        &self.long_lived
    }

    /// How many flows the run is about: all this generator produces, or with `stop_when =
    /// "n-finished"` how many must finish (it then produces flows without end).
    pub fn total(&self) -> u64 {
        self.target + self.queries.as_ref().map_or(0, |q| q.left * q.fanout as u64)
    }

    /// The load the arrivals drawn so far offer, in `workload.load`'s terms: the load times their
    /// bytes per second up to the latest arrival, over the bytes per second the arrival rate
    /// was set for (the mean bytes of an arrival over the mean gap). A draw from a heavy-tailed
    /// distribution brings more or fewer bytes than its mean, so this moves with the seed
    /// (docs/metrics.md). `None` where arrivals have no rate: a trace, every flow at time 0,
    /// or nothing drawn.
    pub fn offered_load(&self) -> Option<f64> {
        let has_rate = matches!(self.source, Source::Poisson { .. } | Source::Incast { .. });
        (has_rate && !self.at_start && self.now_s > 0.0 && self.mean_bytes > 0.0).then(|| {
            let offered_bytes_per_s = self.offered_payload_bytes as f64 / self.now_s;
            self.load * offered_bytes_per_s / (self.mean_bytes / self.mean_gap_s)
        })
    }

    /// What the workload is expected to bring, for sizing recordings before a run: the span of
    /// its arrivals, s, and its data packets. Both are lower bounds of what a run sees (it
    /// drains after the last arrival, and may retransmit); long-lived flows are left out.
    pub fn expected_span_and_packets(&self) -> (f64, f64) {
        let (span_s, packets) = match &self.source {
            Source::Trace { rows, .. } => {
                let rows = &rows[..(self.target as usize).min(rows.len())];
                let packets: f64 =
                    rows.iter().map(|r| crate::units::Bytes(r.size_bytes).packets() as f64).sum();
                (rows.last().map_or(0.0, |r| r.start.as_secs_f64()), packets)
            }
            _ => {
                let span = if self.at_start { 0.0 } else { self.target as f64 * self.mean_gap_s };
                (span, self.target as f64 * self.mean_bytes / MSS_BYTES as f64)
            }
        };
        let (query_span_s, query_packets) = self.queries.as_ref().map_or((0.0, 0.0), |q| {
            let responses = q.left as f64 * q.fanout as f64;
            (
                q.left as f64 * q.mean_gap_s,
                responses * crate::units::Bytes(q.bytes).packets() as f64,
            )
        });
        (span_s.max(query_span_s), packets + query_packets)
    }

    /// The next flow, or `None` when all have been produced: background flows and query
    /// responses merged in time order.
    pub fn next_flow(&mut self) -> Option<FlowArrival> {
        if let Some(f) = self.query_pending.pop_front() {
            return Some(self.emit(f));
        }
        if self.bg_peek.is_none() {
            self.bg_peek = self.next_background();
        }
        let query_at = self.queries.as_ref().filter(|q| q.left > 0).map(|q| q.next);
        let query_first = match (&self.bg_peek, query_at) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(b), Some(t)) => t < b.start,
        };
        if query_first {
            self.spawn_query();
            let f = self.query_pending.pop_front().expect("a query has responders");
            return Some(self.emit(f));
        }
        let f = self.bg_peek.take()?;
        Some(self.emit(f))
    }

    /// The next query's responses go to `query_pending`; the following query is drawn.
    fn spawn_query(&mut self) {
        let n_hosts = self.n_hosts;
        let request = self.next_request;
        self.next_request += 1;
        let q = self.queries.as_mut().expect("queries configured");
        let start = q.next;
        q.left -= 1;
        q.next = start + SimTime::from_secs_f64(q.rng.exponential(q.mean_gap_s));
        let mut hosts: Vec<u32> = (1..n_hosts).collect();
        for k in 0..q.fanout as usize {
            let j = k + q.rng.below((hosts.len() - k) as u64) as usize;
            hosts.swap(k, j);
            self.query_pending.push_back(FlowArrival {
                id: 0,
                label: LABEL_FROM_ID,
                src: hosts[k],
                dst: 0,
                size_bytes: q.bytes,
                start,
                deadline: SimTime::MAX,
                tenant: 0,
                request,
            });
        }
    }

    /// Gives `f` the next id (arrival order) and its deadline draw.
    fn emit(&mut self, mut f: FlowArrival) -> FlowArrival {
        f.id = self.issued as u32;
        if f.label == LABEL_FROM_ID {
            f.label = f.id as u64;
        }
        self.issued += 1;
        self.with_deadline(f)
    }

    /// The next background flow (id and label given by [`Generator::emit`]).
    fn next_background(&mut self) -> Option<FlowArrival> {
        if self.bg_issued >= self.limit {
            return None;
        }
        if let Some(f) = self.pending.pop_front() {
            self.bg_issued += 1;
            return Some(f);
        }
        let id = self.bg_issued as u32;
        let flow = match &mut self.source {
            Source::Poisson { pairs } => {
                if !self.at_start {
                    self.now_s += self.rng_time.exponential(self.mean_gap_s);
                }
                let tenant =
                    tenant_of(id, self.sizes.len(), &self.tenant_cdf, &mut self.rng_tenant);
                let (src, dst) = pairs.draw(&mut self.rng_pair, self.n_hosts);
                let size = self.sizes[tenant as usize].sample(&mut self.rng_size);
                self.offered_payload_bytes += size;
                FlowArrival {
                    id,
                    label: LABEL_FROM_ID,
                    src,
                    dst,
                    size_bytes: size,
                    start: SimTime::from_secs_f64(self.now_s),
                    deadline: SimTime::MAX,
                    tenant,
                    request: NONE,
                }
            }
            Source::Incast { senders } => {
                if !self.at_start {
                    self.now_s += self.rng_time.exponential(self.mean_gap_s);
                }
                let (n, request) = (*senders, self.next_request);
                self.next_request += 1;
                let tenant =
                    tenant_of(request, self.sizes.len(), &self.tenant_cdf, &mut self.rng_tenant);
                let dst = self.rng_pair.below(self.n_hosts as u64) as u32;
                let total = self.sizes[tenant as usize].sample(&mut self.rng_size);
                self.offered_payload_bytes += total;
                let share = total.div_ceil(n as u64).max(1);
                // N distinct senders other than the receiver (partial Fisher-Yates).
                let mut hosts: Vec<u32> = (0..self.n_hosts).filter(|&h| h != dst).collect();
                let start = SimTime::from_secs_f64(self.now_s);
                for k in 0..n as usize {
                    let j = k + self.rng_pair.below((hosts.len() - k) as u64) as usize;
                    hosts.swap(k, j);
                    self.pending.push_back(FlowArrival {
                        id: id + k as u32,
                        label: LABEL_FROM_ID,
                        src: hosts[k],
                        dst,
                        size_bytes: share,
                        start,
                        deadline: SimTime::MAX,
                        tenant,
                        request,
                    });
                }
                self.pending.pop_front().expect("at least one sender")
            }
            Source::Trace { rows, pos } => {
                let r = &rows[*pos];
                *pos += 1;
                FlowArrival {
                    id,
                    label: r.id,
                    src: r.src,
                    dst: r.dst,
                    size_bytes: r.size_bytes,
                    start: r.start,
                    deadline: r.deadline.map_or(SimTime::MAX, |d| r.start + d),
                    tenant: r.tenant,
                    request: NONE,
                }
            }
        };
        self.bg_issued += 1;
        Some(flow)
    }

    /// Draws a generated flow's deadline draw X (pHost §4.3): deadline = start + X; the
    /// simulation later raises it to at least start + 1.25 × the flow's ideal FCT.
    fn with_deadline(&mut self, mut f: FlowArrival) -> FlowArrival {
        if self.deadline_mean_s > 0.0 && f.deadline == SimTime::MAX {
            let x = self.rng_deadline.exponential(self.deadline_mean_s);
            // Inside the simulated horizon (an exponential's far tail could pass it).
            f.deadline = (f.start + SimTime::from_secs_f64(x)).min(crate::units::HORIZON);
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(extra: &str) -> Generator {
        let spec = Spec::from_toml_str(extra).unwrap();
        let factory = |_| {
            (
                crate::queue::PortQueue::Timeline(crate::queue::DropTail::new(1 << 20)),
                crate::queue::EcnMarking::Off,
            )
        };
        let net = crate::topology::Network::build(&spec.topology, &factory);
        Generator::new(&spec, &net).unwrap()
    }

    #[test]
    fn arrival_rate_gives_the_requested_load() {
        // 144 hosts, web search, load 0.6: offered bytes per host per second ≈ 0.6 × 10 Gbps
        // (payload + headers).
        let mut g = gen("[workload]\nflows = 200000");
        let mut bytes = 0.0;
        let mut last = SimTime::ZERO;
        let mut srcs = vec![0u32; 144];
        while let Some(f) = g.next_flow() {
            assert_ne!(f.src, f.dst);
            bytes += crate::units::Bytes(f.size_bytes).wire_bytes() as f64;
            srcs[f.src as usize] += 1;
            assert!(f.start >= last);
            last = f.start;
        }
        let load = bytes * 8.0 / last.as_secs_f64() / (144.0 * 10e9);
        assert!((load - 0.6).abs() < 0.03, "measured load {load}");
        assert!(srcs.iter().all(|&c| c > 1100 && c < 1700), "{srcs:?}");
    }

    /// The load `flows` offer, counted by hand as the arrival rate is set: payload bytes ×
    /// 1500 / 1460 per second up to the last arrival, over `links` host links of 10 Gbps.
    fn offered_by_hand(flows: &[FlowArrival], links: f64) -> f64 {
        let payload: f64 = flows.iter().map(|f| f.size_bytes as f64).sum();
        let wire = payload * (MSS_BYTES + HEADER_BYTES) as f64 / MSS_BYTES as f64;
        wire * 8.0 / flows.last().unwrap().start.as_secs_f64() / (links * 10e9)
    }

    #[test]
    fn offered_load_is_what_the_drawn_flows_bring() {
        // All-to-all: the load is on the 144 host links. Data mining's heavy tail: 20,000
        // flows bring noticeably fewer or more bytes than the distribution's mean.
        let mut g = gen("[workload]\nflow_sizes = \"datamining\"\nflows = 20000\nload = 0.5");
        assert_eq!(g.offered_load(), None, "nothing drawn yet");
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        let (got, hand) = (g.offered_load().unwrap(), offered_by_hand(&flows, 144.0));
        assert!((got / hand - 1.0).abs() < 1e-9, "{got} against {hand} by hand");
        assert!((got - 0.5).abs() > 0.005, "a heavy-tailed draw is not the mean: {got}");
        // Fan-in: the load is on the receiver's one link.
        let mut g = gen("[workload]\nmatrix = \"fan-in\"\nflows = 2000\nload = 0.3");
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        let (got, hand) = (g.offered_load().unwrap(), offered_by_hand(&flows, 1.0));
        assert!((got / hand - 1.0).abs() < 1e-9, "{got} against {hand} by hand");
        // Incast: requests of 1 MB split over 7 senders (142,858 bytes each, 6 bytes more
        // than the request between them); the load is on the 144 receivers' links.
        let mut g = gen(
            "[workload]\nmatrix = \"incast\"\nflow_sizes = 1000000\nincast_senders = 7\nflows = 7000",
        );
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        assert_eq!(flows[0].size_bytes, 142_858);
        let requests = flows.len() as f64 / 7.0;
        let hand = offered_by_hand(&flows, 144.0) * 1_000_000.0 / (142_858.0 * 7.0);
        let got = g.offered_load().unwrap();
        assert!(
            (got / hand - 1.0).abs() < 1e-9,
            "{got} against {hand} by hand ({requests} requests)"
        );
    }

    #[test]
    fn offered_load_nears_the_load_for_a_light_tail_and_is_none_without_a_rate() {
        let mut g = gen("[workload]\nflow_sizes = { uniform = [100000, 500000] }\nflows = 200000");
        while g.next_flow().is_some() {}
        let got = g.offered_load().unwrap();
        assert!((got - 0.6).abs() < 0.006, "{got}");
        let mut g = gen("[workload]\narrivals = \"at-start\"\nflows = 100");
        while g.next_flow().is_some() {}
        assert_eq!(g.offered_load(), None, "every flow at time 0: no rate");
    }

    #[test]
    fn uniform_sizes_cover_the_range_with_its_mean() {
        let mut g = gen("[workload]\nflow_sizes = { uniform = [100000, 500000] }\nflows = 20000");
        let sizes: Vec<u64> = std::iter::from_fn(|| g.next_flow()).map(|f| f.size_bytes).collect();
        assert!(sizes.iter().all(|&b| (100_000..=500_000).contains(&b)));
        let mean = sizes.iter().sum::<u64>() as f64 / sizes.len() as f64;
        assert!((mean - 300_000.0).abs() < 3000.0, "{mean}");
        assert!(sizes.iter().any(|&b| b < 110_000) && sizes.iter().any(|&b| b > 490_000));
    }

    #[test]
    fn left_right_flows_cross_from_the_left_racks_to_the_right() {
        // 9 racks of 16: racks 0-3 (hosts 0-63) send, racks 4-8 (hosts 64-143) receive.
        let mut g = gen("[workload]\nmatrix = \"left-right\"\nflows = 4000");
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        assert!(flows.iter().all(|f| f.src < 64 && f.dst >= 64), "all left to right");
        let senders: std::collections::HashSet<u32> = flows.iter().map(|f| f.src).collect();
        let receivers: std::collections::HashSet<u32> = flows.iter().map(|f| f.dst).collect();
        assert_eq!((senders.len(), receivers.len()), (64, 80));
        // The load is on the 64 senders' links: 64 × λ flows per second.
        let all = gen("[workload]\nflows = 4000").mean_gap_s;
        assert!((g.mean_gap_s / all - 144.0 / 64.0).abs() < 1e-9);
    }

    /// Offered wire bytes per second of `g`'s flows.
    fn offered_bps(g: &mut Generator) -> f64 {
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        let bytes: f64 =
            flows.iter().map(|f| crate::units::Bytes(f.size_bytes).wire_bytes() as f64).sum();
        bytes * 8.0 / flows.last().unwrap().start.as_secs_f64()
    }

    #[test]
    fn left_right_load_is_on_an_oversubscribed_fabrics_uplinks() {
        // 4 racks of 8 hosts, 2 spines, 4:1 (10 Gbps uplinks): racks 0-1 send through their 4
        // uplinks, 40 Gbps, a quarter of their 16 host links' 160 Gbps.
        let toml = "[topology]\nracks = 4\nhosts_per_rack = 8\nspines = 2\noversubscription = 4\n[workload]\nmatrix = \"left-right\"\nload = 0.5\nflow_sizes = { uniform = [1000, 100000] }\nflows = 40000";
        let mut g = gen(toml);
        let offered = offered_bps(&mut g);
        assert!((offered / 40e9 - 0.5).abs() < 0.01, "load on the uplinks {}", offered / 40e9);
        // Without oversubscription the senders' links and the uplinks are equal: the load is
        // on both (160 Gbps).
        let mut g = gen(&toml.replace("oversubscription = 4", "oversubscription = 1"));
        let offered = offered_bps(&mut g);
        assert!((offered / 160e9 - 0.5).abs() < 0.01, "load {}", offered / 160e9);
        // A dumbbell's bottleneck (10 Gbps for 4 senders).
        let mut g = gen("[topology]\nkind = \"dumbbell\"\nhosts_per_side = 4\n[workload]\nmatrix = \"left-right\"\nload = 0.5\nflow_sizes = { uniform = [1000, 100000] }\nflows = 40000");
        let offered = offered_bps(&mut g);
        assert!((offered / 10e9 - 0.5).abs() < 0.01, "load on the bottleneck {}", offered / 10e9);
        // Core links faster than the senders' (100 Gbps uplinks): the senders' links.
        let mut g = gen(&toml.replace("oversubscription = 4", "core_link_gbps = 100"));
        let offered = offered_bps(&mut g);
        assert!((offered / 160e9 - 0.5).abs() < 0.01, "load {}", offered / 160e9);
    }

    #[test]
    fn intra_rack_flows_go_round_robin_to_the_racks_hosts() {
        let mut g = gen("[workload]\nmatrix = \"intra-rack\"\nflows = 320");
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        for (k, f) in flows.iter().enumerate() {
            assert_eq!(f.dst, k as u32 % 16, "aggregators in round robin");
            assert!(f.src < 16 && f.src != f.dst, "a sender of the same rack");
        }
    }

    #[test]
    fn permutation_pairs_each_host_once() {
        let mut g = gen("[workload]\nmatrix = \"permutation\"\nflows = 5000");
        let mut partner = vec![u32::MAX; 144];
        while let Some(f) = g.next_flow() {
            assert!(partner[f.src as usize] == u32::MAX || partner[f.src as usize] == f.dst);
            partner[f.src as usize] = f.dst;
        }
        let mut seen = partner.clone();
        seen.sort();
        assert_eq!(seen, (0..144).collect::<Vec<_>>());
    }

    /// Issue 17 item 3.4: `matrix = "self"` (the pHost authors' `PermutationTM` as first
    /// committed) sends every flow from a host to itself, every host in turn, at the
    /// permutation's load; a topology without a switch between a host and itself is refused.
    #[test]
    fn self_matrix_sends_every_flow_to_its_source_at_the_permutations_load() {
        let mut g = gen("[workload]\nmatrix = \"self\"\nflows = 200000");
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        assert!(flows.iter().all(|f| f.src == f.dst));
        let mut srcs = vec![0u32; 144];
        flows.iter().for_each(|f| srcs[f.src as usize] += 1);
        assert!(srcs.iter().all(|&c| c > 1100 && c < 1700), "{srcs:?}");
        let bytes: f64 =
            flows.iter().map(|f| crate::units::Bytes(f.size_bytes).wire_bytes() as f64).sum();
        let load = bytes * 8.0 / flows.last().unwrap().start.as_secs_f64() / (144.0 * 10e9);
        assert!((load - 0.6).abs() < 0.03, "measured load {load}");
        let spec =
            Spec::from_toml_str("[topology]\nkind = \"pair\"\n[workload]\nmatrix = \"self\"")
                .unwrap();
        let factory = |_| {
            (
                crate::queue::PortQueue::Timeline(crate::queue::DropTail::new(1 << 20)),
                crate::queue::EcnMarking::Off,
            )
        };
        let net = crate::topology::Network::build(&spec.topology, &factory);
        let e = Generator::new(&spec, &net).err().expect("a pair has no switch");
        assert_eq!(e.path, "workload.matrix");
        assert!(e.message.contains("host 0 is linked straight to another host"), "{e}");
    }

    #[test]
    fn tenants_take_turns_with_their_own_sizes_and_can_all_start_at_once() {
        let mut g =
            gen("[workload]\ntenants = [1000, \"50KB\"]\narrivals = \"at-start\"\nflows = 6");
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        let got: Vec<(u32, u64)> = flows.iter().map(|f| (f.tenant, f.size_bytes)).collect();
        assert_eq!(got, [(0, 1000), (1, 50_000), (0, 1000), (1, 50_000), (0, 1000), (1, 50_000)]);
        assert!(flows.iter().all(|f| f.start == SimTime::ZERO));
        // With Poisson arrivals the load counts both tenants' mean (25.5 KB).
        let mut g = gen("[workload]\ntenants = [1000, \"50KB\"]\nflows = 20000");
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        let bytes: f64 =
            flows.iter().map(|f| crate::units::Bytes(f.size_bytes).wire_bytes() as f64).sum();
        let load = bytes * 8.0 / flows.last().unwrap().start.as_secs_f64() / (144.0 * 10e9);
        assert!((load - 0.6).abs() < 0.03, "measured load {load}");
        // Weights: about three times as many flows for tenant 1.
        let mut g =
            gen("[workload]\ntenants = [1000, 2000]\ntenant_weights = [1, 3]\nflows = 8000");
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        let t1 = flows.iter().filter(|f| f.tenant == 1).count() as f64 / 8000.0;
        assert!((t1 - 0.75).abs() < 0.02, "tenant 1 share {t1}");
        assert!(flows.iter().all(|f| f.size_bytes == 1000 * (f.tenant as u64 + 1)));
    }

    #[test]
    fn fan_in_sends_everything_to_host_0_at_its_link_load() {
        let mut g = gen("[topology]\nkind = \"star\"\nhosts = 16\nhost_link_gbps = 1\n[workload]\nmatrix = \"fan-in\"\nflow_sizes = 10000\nload = 0.5\nflows = 20000");
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        assert!(flows.iter().all(|f| f.dst == 0 && f.src != 0));
        let srcs: std::collections::HashSet<u32> = flows.iter().map(|f| f.src).collect();
        assert_eq!(srcs.len(), 15);
        let bytes: f64 =
            flows.iter().map(|f| crate::units::Bytes(f.size_bytes).wire_bytes() as f64).sum();
        let load = bytes * 8.0 / flows.last().unwrap().start.as_secs_f64() / 1e9;
        assert!((load - 0.5).abs() < 0.02, "load on host 0's link {load}");
    }

    #[test]
    fn queries_interleave_with_the_background_in_time_order() {
        let toml = "[topology]\nkind = \"star\"\nhosts = 16\nhost_link_gbps = 1\n[workload]\nmatrix = \"fan-in\"\nflow_sizes = 100000\nflows = 300\nqueries = 40\nquery_rate_per_s = 400\nquery_fanout = 15\nquery_bytes = 1000";
        let mut g = gen(toml);
        assert_eq!(g.total(), 300 + 40 * 15);
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        assert_eq!(flows.len(), 900);
        for (i, f) in flows.iter().enumerate() {
            assert_eq!(f.id as usize, i, "ids follow arrival order");
            assert_eq!(f.label, i as u64);
        }
        assert!(flows.windows(2).all(|w| w[0].start <= w[1].start), "time order");
        let mut by_request: std::collections::BTreeMap<u32, Vec<&FlowArrival>> = Default::default();
        for f in flows.iter().filter(|f| f.request != NONE) {
            by_request.entry(f.request).or_default().push(f);
        }
        assert_eq!(by_request.len(), 40);
        for q in by_request.values() {
            let mut srcs: Vec<u32> = q.iter().map(|f| f.src).collect();
            srcs.sort();
            srcs.dedup();
            assert_eq!(srcs.len(), 15);
            assert!(q.iter().all(|f| f.dst == 0 && f.size_bytes == 1000 && f.start == q[0].start));
        }
        // The background is unchanged by the queries.
        let mut plain = gen(&toml.replace("queries = 40", "queries = 0"));
        let background: Vec<_> = std::iter::from_fn(|| plain.next_flow()).collect();
        let mixed: Vec<_> = flows.iter().filter(|f| f.request == NONE).collect();
        assert_eq!(background.len(), mixed.len());
        assert!(background
            .iter()
            .zip(&mixed)
            .all(|(a, b)| (a.src, a.dst, a.size_bytes, a.start)
                == (b.src, b.dst, b.size_bytes, b.start)));
    }

    #[test]
    fn incast_requests_split_bytes_over_distinct_senders() {
        let mut g = gen(
            "[workload]\nmatrix = \"incast\"\nincast_senders = 5\nflow_sizes = 100000\nflows = 10",
        );
        let flows: Vec<_> = std::iter::from_fn(|| g.next_flow()).collect();
        assert_eq!(flows.len(), 10);
        for req in flows.chunks(5) {
            let dst = req[0].dst;
            let mut srcs: Vec<u32> = req.iter().map(|f| f.src).collect();
            srcs.sort();
            srcs.dedup();
            assert_eq!(srcs.len(), 5);
            assert!(req.iter().all(|f| f.dst == dst
                && f.src != dst
                && f.size_bytes == 20_000
                && f.start == req[0].start));
            assert!(req.iter().all(|f| f.request == req[0].request));
        }
    }
}
