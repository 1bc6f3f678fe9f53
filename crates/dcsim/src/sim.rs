//! A simulation run: builds the fabric, transport and workload from a [`Spec`] and drives
//! the event loop until every flow has finished (or the time limit, or with
//! `stop_when = "n-finished"` the `flows`-th completion).

use crate::config::{ClassifyBy, Protocol, Spec, StopWhen};
use crate::config::{DupAckThreshold, PriorityKey, RateControl, RtoMode};
use crate::error::{RunError, SpecError};
use crate::fabric::{Event, Fabric};
use crate::metrics::{ideal_fct, summarize, FlowRecords, Hop, RunCounters, Summary};
use crate::queue::{
    AnyQueue, DropTail, EcnMarking, Fifo, PortQueue, PriorityDropQueue, StrictPriorityQueue,
};
use crate::topology::{Network, PortInfo};
use crate::transport::fastpass::{FastpassParams, FastpassTransport};
use crate::transport::phost::{PhostParams, PhostTransport};
use crate::transport::window::{ClassBy, Completion, WindowParams, WindowTransport};
use crate::transport::{AnyCc, Dctcp, L2dct, LineRate, MinTcp, Reno};
use crate::workload::{FlowArrival, Generator};
use dcsim_engine::SimTime;
use std::collections::HashMap;
use std::time::Instant;

/// The window mechanism's settings and the policy for the spec's protocol.
fn transport_for(spec: &Spec) -> (WindowParams, AnyCc) {
    let t = &spec.transport;
    match t.protocol {
        Protocol::Pfabric | Protocol::Ideal | Protocol::Las => {
            // pFabric (reference §2.4): fixed RTO, no fast retransmit, SACK, probe mode.
            let p = &spec.pfabric;
            let max = p.max_window(p.buffer(t, &spec.topology));
            let rto = SimTime::from_us_f64(p.rto_us);
            let (initial, cc, probe) = match p.rate_control {
                RateControl::Mintcp => {
                    (p.initial_window_pkts, AnyCc::MinTcp(MinTcp), p.probe_after_timeouts)
                }
                RateControl::Linerate => (max, AnyCc::LineRate(LineRate), 0),
            };
            let mut params =
                WindowParams::tcp(initial, max, RtoMode::Fixed, rto, rto, DupAckThreshold::Off);
            params.sack_skip = true;
            params.probe_after = probe;
            params.class_thresholds = p.thresholds.clone();
            params.class_by = match p.classify {
                ClassifyBy::FlowSize => ClassBy::FlowSize,
                ClassifyBy::Remaining => ClassBy::Remaining,
            };
            if p.priority != PriorityKey::Remaining {
                params.deadline_priority = Some(spec.topology.host_rate());
                params.deadline_quench = p.priority == PriorityKey::Deadline;
            }
            // LAS (reference §7.4): pFabric with the bytes sent as the priority number.
            params.priority_bytes_sent = t.protocol == Protocol::Las;
            (params, cc)
        }
        // The TCP family (TCP, DCTCP, PIAS, L2DCT) on the window mechanism; pHost and Fastpass
        // have their own mechanisms and ignore these settings.
        Protocol::Tcp
        | Protocol::Dctcp
        | Protocol::Phost
        | Protocol::Fastpass
        | Protocol::Pias
        | Protocol::L2dct => {
            let params = WindowParams::tcp(
                t.initial_window_pkts,
                t.max_window_pkts,
                t.rto,
                SimTime::from_us_f64(t.min_rto_us),
                SimTime::from_us_f64(t.max_rto_us),
                t.dupack_threshold,
            );
            let mut params = params;
            params.sack_skip = t.sack;
            params.probe_after = t.probe_after_timeouts;
            if t.protocol == Protocol::Pias {
                // PIAS's MLFQ tags (§3.1): class from each packet's byte offset.
                params.class_thresholds = spec.pias.thresholds.clone();
                params.class_by = ClassBy::BytesSent;
                params.tag_reset_after_timeouts = spec.pias.reset_after_timeouts;
            }
            let cc = match t.protocol {
                Protocol::Tcp => AnyCc::Reno(Reno),
                Protocol::L2dct => AnyCc::L2dct(L2dct::new(spec.dctcp.g, spec.dctcp.initial_alpha)),
                _ => AnyCc::Dctcp(Dctcp::new(spec.dctcp.g, spec.dctcp.initial_alpha)),
            };
            (params, cc)
        }
    }
}

/// The transport mechanism a run uses (each protocol family is a mechanism; window protocols
/// share one, receiver-driven ones have their own).
enum Transport {
    Window(WindowTransport),
    Phost(PhostTransport),
    Fastpass(FastpassTransport),
}

impl Transport {
    fn start_flow(&mut self, f: &FlowArrival, fab: &mut Fabric) {
        match self {
            Transport::Window(t) => t.start_flow(f, fab),
            Transport::Phost(t) => t.start_flow(f, fab),
            Transport::Fastpass(t) => t.start_flow(f, fab),
        }
    }

    fn on_packet(&mut self, id: crate::packet::PacketId, fab: &mut Fabric) -> Option<Completion> {
        match self {
            Transport::Window(t) => t.on_packet(id, fab),
            Transport::Phost(t) => t.on_packet(id, fab),
            Transport::Fastpass(t) => t.on_packet(id, fab),
        }
    }

    /// Transport-owned events (timers and clocks).
    fn on_event(&mut self, ev: Event, fab: &mut Fabric) {
        match (self, ev) {
            (Transport::Window(t), Event::Timer(slot, gen)) => t.on_timer(slot, gen, fab),
            (Transport::Window(t), Event::StallCheck(slot, gen)) => {
                t.on_stall_check(slot, gen, fab)
            }
            (Transport::Phost(t), Event::SourceWake(host)) => t.on_source_wake(host, fab),
            (Transport::Phost(t), Event::TokenClock(host)) => t.on_token_clock(host, fab),
            (Transport::Fastpass(t), Event::Timer(slot, gen)) => t.on_timer(slot, gen, fab),
            (Transport::Fastpass(t), Event::SourceWake(host)) => t.on_slot(host, fab),
            (Transport::Fastpass(t), Event::ArbiterEpoch) => t.on_epoch(fab),
            (_, ev) => debug_assert!(false, "event {ev:?} has no handler in this transport"),
        }
    }
}

/// Fastpass's settings in absolute units; its arbiter is the first host after the workload's.
fn fastpass_params(spec: &Spec) -> FastpassParams {
    let f = &spec.fastpass;
    let t_mtu = spec.topology.host_rate().tx_time(crate::units::MTU_BYTES as u64);
    FastpassParams {
        slots_per_epoch: f.epoch_slots,
        epoch: SimTime((t_mtu.as_ps() as f64 * f.epoch_mtu).round() as u64),
        arbiter: spec.topology.n_hosts(),
        edf: f.policy == crate::config::FastpassPolicy::Edf,
    }
}

/// pHost's settings in absolute units.
fn phost_params(spec: &Spec) -> PhostParams {
    let p = &spec.phost;
    let rate = spec.topology.host_rate();
    let t_mtu = rate.tx_time(crate::units::MTU_BYTES as u64);
    let mtus = |k: f64| SimTime((t_mtu.as_ps() as f64 * k).round() as u64);
    PhostParams {
        rate,
        t_mtu,
        token_interval: rate.tx_time(p.token_interval_bytes as u64),
        hold: p.hold,
        free_tokens: p.free_tokens,
        free_tokens_only_short: p.free_tokens_only_short,
        token_expiry: mtus(p.token_expiry_mtu),
        downgrade_after: p.downgrade_after_tokens,
        downgrade_for: mtus(p.downgrade_mtu),
        reissue_after: mtus(p.reissue_mtu),
        short_flow_pkts: p.short_flow_pkts,
        data_priorities: p.data_priorities,
        policy: match p.policy {
            crate::config::PhostPolicy::Srpt => crate::transport::phost::Policy::Srpt,
            crate::config::PhostPolicy::Edf => crate::transport::phost::Policy::Edf,
            crate::config::PhostPolicy::TenantFair => crate::transport::phost::Policy::TenantFair,
        },
    }
}

/// A snapshot for progress reporting.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Simulated time now.
    pub sim_time: SimTime,
    /// Flows finished.
    pub flows_done: u64,
    /// Flows the run will generate.
    pub flows_total: u64,
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds since the loop started.
    pub wall_seconds: f64,
}

/// What a run produces.
#[derive(Debug)]
pub struct RunOutput {
    /// One row per flow.
    pub records: FlowRecords,
    /// The statistics.
    pub summary: Summary,
}

/// One simulation, ready to run.
pub struct Simulation {
    spec: Spec,
    fab: Fabric,
    transport: Transport,
    workload: Generator,
    records: FlowRecords,
    next: Option<FlowArrival>,
    stop_at: SimTime,
    /// With `stop_when = "n-finished"`: the run ends when this many flows have finished.
    finish_target: Option<u64>,
    completed: u64,
    fct_below_ideal: u64,
    paths: HashMap<(u32, u32), (Vec<Hop>, Vec<Hop>)>,
    /// Data packets of the flows started so far.
    arrived_packets: u64,
    /// Time of the first arrival, and (time, data bytes delivered) at the last one.
    first_arrival: Option<SimTime>,
    at_last_arrival: Option<(SimTime, u64)>,
    timeseries: crate::metrics::Timeseries,
}

impl Simulation {
    /// Builds everything `spec` describes. Fails only on spec problems.
    pub fn new(spec: Spec) -> Result<Self, SpecError> {
        let workload = Generator::new(&spec)?;
        let protocol = spec.transport.protocol;
        let buffer = match protocol {
            Protocol::Pfabric | Protocol::Ideal | Protocol::Las => {
                spec.pfabric.buffer(&spec.transport, &spec.topology)
            }
            _ => spec.transport.port_buffer(&spec.topology),
        };
        let k = spec.dctcp.marking_threshold_bytes;
        let marking = match protocol {
            Protocol::Dctcp | Protocol::L2dct => EcnMarking::Instantaneous { threshold_bytes: k },
            Protocol::Pias => match spec.pias.ecn {
                crate::config::PiasEcn::PerPort => EcnMarking::Instantaneous { threshold_bytes: k },
                crate::config::PiasEcn::PerQueue => EcnMarking::PerQueue { threshold_bytes: k },
                crate::config::PiasEcn::Off => EcnMarking::Off,
            },
            _ => EcnMarking::Off,
        };
        let pias_queues = spec.pias.queues as usize;
        let timeline = spec.engine.fifo_timeline;
        let (queues, reserved) = (spec.pfabric.queues as usize, spec.pfabric.reserved_bytes);
        let factory = move |_info: PortInfo| {
            let queue = match protocol {
                Protocol::Pfabric if queues > 0 => PortQueue::Scheduled(AnyQueue::StrictPriority(
                    StrictPriorityQueue::new(queues, buffer, reserved),
                )),
                // PIAS (reference §6.3): K strict-priority FIFOs over one shared buffer, plain
                // tail drop, at switches and NICs alike (§4.1.2 end-host queueing).
                Protocol::Pias => PortQueue::Scheduled(AnyQueue::StrictPriority(
                    StrictPriorityQueue::new(pias_queues, buffer, 0),
                )),
                Protocol::Pfabric | Protocol::Phost | Protocol::Fastpass | Protocol::Las => {
                    PortQueue::Scheduled(AnyQueue::PriorityDrop(PriorityDropQueue::new(buffer)))
                }
                _ if timeline => PortQueue::Timeline(DropTail::new(buffer)),
                _ => PortQueue::Scheduled(AnyQueue::Fifo(Fifo::new(buffer))),
            };
            (queue, marking)
        };
        // Fastpass's arbiter is one more host, on host 0's edge switch (reference §4.2).
        let service_hosts = u32::from(protocol == Protocol::Fastpass);
        let net = Network::build_with_service_hosts(&spec.topology, service_hosts, &factory);
        let fab = Fabric::new(net, spec.topology.load_balancing, spec.seed);
        let n_hosts = fab.net.n_hosts();
        let (params, cc) = transport_for(&spec);
        let stop_at = if spec.workload.duration_ms > 0.0 {
            SimTime::from_secs_f64(spec.workload.duration_ms / 1e3)
        } else {
            SimTime::MAX
        };
        Ok(Simulation {
            transport: match spec.transport.protocol {
                Protocol::Phost => {
                    Transport::Phost(PhostTransport::new(phost_params(&spec), n_hosts))
                }
                Protocol::Fastpass => {
                    Transport::Fastpass(FastpassTransport::new(fastpass_params(&spec), n_hosts))
                }
                _ => Transport::Window(WindowTransport::new(params, cc)),
            },
            fab,
            workload,
            records: FlowRecords::default(),
            next: None,
            stop_at,
            finish_target: (spec.workload.stop_when == StopWhen::NFinished)
                .then_some(spec.workload.flows),
            completed: 0,
            fct_below_ideal: 0,
            paths: HashMap::new(),
            arrived_packets: 0,
            first_arrival: None,
            at_last_arrival: None,
            timeseries: crate::metrics::Timeseries::default(),
            spec,
        })
    }

    /// Adds a scripted loss (see [`crate::fabric::LossRule`]).
    pub fn with_loss(mut self, rule: crate::fabric::LossRule) -> Self {
        self.fab.add_loss(rule);
        self
    }

    /// The resolved spec.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The network (for inspection in tests).
    pub fn network(&self) -> &Network {
        &self.fab.net
    }

    /// The ideal FCT of a `size_bytes` flow from `src` to `dst` in this fabric.
    ///
    /// Path profiles are cached per (source rack, destination rack): every topology here gives
    /// all hosts of a rack (edge switch) identical links, so the profile depends only on the
    /// racks, and the cache stays as small as the number of rack pairs however many flows run.
    pub fn ideal_fct(&mut self, src: u32, dst: u32, size_bytes: u64) -> SimTime {
        let net = &self.fab.net;
        let key = (net.rack(src), net.rack(dst));
        let (fwd, rev) = self.paths.entry(key).or_insert_with(|| {
            let hops = |a: u32, b: u32| -> Vec<Hop> {
                net.path(a, b)
                    .iter()
                    .map(|&p| {
                        let pt = &net.ports[p as usize];
                        Hop { rate: pt.rate, delay: pt.delay, header_lead: pt.cut_through }
                    })
                    .collect()
            };
            (hops(src, dst), hops(dst, src))
        });
        ideal_fct(size_bytes, fwd, rev)
    }

    /// A generated deadline is at least 1.25 × the flow's ideal FCT after its start (pHost §4.3).
    fn floor_deadline(&self, f: &mut FlowArrival, ideal: SimTime) {
        if self.spec.workload.deadline_mean_us > 0.0 && f.deadline != SimTime::MAX {
            let floor = f.start + SimTime(ideal.as_ps() + ideal.as_ps() / 4);
            f.deadline = f.deadline.max(floor);
        }
    }

    fn start_next_flow(&mut self) {
        let mut f = self.next.take().expect("a NextFlow event always has a flow");
        let ideal = self.ideal_fct(f.src, f.dst, f.size_bytes);
        self.floor_deadline(&mut f, ideal);
        self.records.push(&f, ideal);
        self.arrived_packets += crate::units::Bytes(f.size_bytes).packets() as u64;
        self.transport.start_flow(&f, &mut self.fab);
        let now = self.fab.now();
        self.first_arrival.get_or_insert(now);
        self.schedule_next_arrival();
        if self.next.is_none() {
            self.at_last_arrival = Some((now, self.fab.counters.data_bytes_delivered));
        }
    }

    fn schedule_next_arrival(&mut self) {
        self.next = self.workload.next_flow();
        if let Some(n) = &self.next {
            let at = n.start.max(self.fab.now());
            self.fab.schedule(at, Event::NextFlow);
        }
    }

    fn record(&mut self, c: Completion) {
        let i = c.flow as usize;
        let now = self.fab.now();
        let r = &mut self.records;
        r.finish_ps[i] = now.as_ps();
        r.retransmits[i] = c.retransmits;
        r.timeouts[i] = c.timeouts;
        r.packets_sent[i] = c.packets_sent;
        // Invariant: no flow beats the idle network.
        let fct = now.as_ps() - r.start_ps[i];
        if fct < r.ideal_ps[i] {
            self.fct_below_ideal += 1;
            debug_assert!(false, "flow {i}: FCT {fct} ps below ideal {} ps", r.ideal_ps[i]);
        }
        self.completed += 1;
    }

    /// Ideal (flow-level SRPT) instead of the packet-level loop: every flow of the workload,
    /// the same flows a packet-level run with this seed sees.
    ///
    /// With `stop_when = "n-finished"` the flows are drawn in growing batches until the
    /// `flows`-th completion comes before the last arrival drawn: SRPT is causal (no decision
    /// depends on a later arrival), so flows arriving after that completion cannot change it,
    /// and the run keeps exactly the flows that arrived by then, as a packet-level run does.
    fn run_ideal(mut self, wall: Instant) -> RunOutput {
        let rate = self.spec.topology.host_rate();
        let mut jobs: Vec<crate::ideal::Job> = Vec::new();
        let mut want = self.finish_target.map_or(u64::MAX, |n| n.saturating_mul(2).max(1024));
        let (done, end) = loop {
            while (jobs.len() as u64) < want {
                let Some(mut f) = self.workload.next_flow() else { break };
                let ideal = self.ideal_fct(f.src, f.dst, f.size_bytes);
                self.floor_deadline(&mut f, ideal);
                self.records.push(&f, ideal);
                jobs.push(crate::ideal::Job {
                    src: f.src,
                    dst: f.dst,
                    start_ps: f.start.as_ps(),
                    work_ps: rate
                        .tx_time(crate::units::Bytes(f.size_bytes).wire_bytes())
                        .as_ps()
                        .max(1),
                });
            }
            let mut done = crate::ideal::srpt(&jobs, self.fab.net.n_hosts());
            // Transmission per SRPT, plus the path latency an idle network adds (module docs).
            for (i, (job, finish)) in jobs.iter().zip(done.iter_mut()).enumerate() {
                if *finish != u64::MAX {
                    *finish += self.records.ideal_ps[i].saturating_sub(job.work_ps);
                }
            }
            let Some(n) = self.finish_target else { break (done, self.stop_at.as_ps()) };
            let mut sorted: Vec<u64> = done.iter().copied().filter(|&d| d != u64::MAX).collect();
            let nth = (n as usize)
                .checked_sub(1)
                .and_then(|k| (k < sorted.len()).then(|| *sorted.select_nth_unstable(k).1));
            let last_arrival = jobs.last().map_or(0, |j| j.start_ps);
            match nth {
                Some(t) if t < last_arrival => break (done, t.min(self.stop_at.as_ps())),
                _ => want = want.saturating_mul(2),
            }
        };
        if self.finish_target.is_some() {
            // The flows that had arrived when the run stopped, as in the packet-level loop.
            let keep = jobs.partition_point(|j| j.start_ps <= end);
            self.records.truncate(keep);
            jobs.truncate(keep);
        }
        let r = &mut self.records;
        for (i, &fin) in done.iter().take(jobs.len()).enumerate() {
            if fin > end {
                continue;
            }
            r.finish_ps[i] = fin;
            self.completed += 1;
        }
        let counters = RunCounters {
            wall_seconds: wall.elapsed().as_secs_f64(),
            sim_time_us: done.iter().copied().filter(|&d| d <= end).max().unwrap_or(0) as f64 / 1e6,
            drops_by_hop: self.fab.per_hop(|s| s.dropped_packets),
            marks_by_hop: self.fab.per_hop(|s| s.marked_packets),
            ..RunCounters::default()
        };
        let warmup =
            (self.spec.workload.warmup_fraction * self.records.len() as f64).floor() as usize;
        let summary = summarize(&self.records, warmup, counters);
        RunOutput { records: self.records, summary }
    }

    /// Runs to the end. `progress` is called about five times a second of wall time; return
    /// `false` from it to interrupt the run.
    pub fn run(
        mut self,
        progress: &mut dyn FnMut(&Progress) -> bool,
    ) -> Result<RunOutput, RunError> {
        let wall = Instant::now();
        if self.spec.transport.protocol == Protocol::Ideal {
            return Ok(self.run_ideal(wall));
        }
        let n_hosts = self.fab.net.n_hosts();
        let total = self.workload.total();
        self.schedule_next_arrival();
        let mut last_report = 0.0f64;
        let sample_every = SimTime::from_us_f64(self.spec.output.timeseries_us);
        let mut next_sample =
            if sample_every > SimTime::ZERO { SimTime::ZERO } else { SimTime::MAX };
        loop {
            if self.next.is_none() && self.completed == self.records.len() as u64 {
                break;
            }
            let Some((at, ev)) = self.fab.sched.pop_until(self.stop_at) else { break };
            while at >= next_sample {
                // The state just before the first event at or after the sample time.
                self.sample(next_sample);
                next_sample += sample_every;
            }
            match ev {
                Event::Arrive(node, pkt) => {
                    if node < n_hosts {
                        debug_assert_eq!(
                            self.fab.pool.get(pkt).dst,
                            node,
                            "packet delivered to the wrong host"
                        );
                        if let Some(c) = self.transport.on_packet(pkt, &mut self.fab) {
                            self.record(c);
                            // Checked per completion, not per event.
                            if self.finish_target == Some(self.completed) {
                                // ns-2's `sim_end`: the flows still open are left out.
                                self.at_last_arrival =
                                    Some((self.fab.now(), self.fab.counters.data_bytes_delivered));
                                break;
                            }
                        }
                    } else {
                        self.fab.on_arrive_at_switch(node, pkt);
                    }
                }
                Event::TxDone(port) => self.fab.on_tx_done(port),
                Event::NextFlow => self.start_next_flow(),
                ev => self.transport.on_event(ev, &mut self.fab),
            }
            if self.fab.sched.processed() & 0xFFFF == 0 {
                let secs = wall.elapsed().as_secs_f64();
                if secs - last_report >= 0.2 {
                    last_report = secs;
                    let p = Progress {
                        sim_time: self.fab.now(),
                        flows_done: self.completed,
                        flows_total: total,
                        events: self.fab.sched.processed(),
                        wall_seconds: secs,
                    };
                    if !progress(&p) {
                        return Err(RunError::Interrupted(self.fab.now()));
                    }
                }
            }
        }
        let wall_seconds = wall.elapsed().as_secs_f64();
        let conservation_error = self.conservation_error();
        debug_assert_eq!(conservation_error, 0, "packets were lost or invented");
        // Invariant: without a time limit a run ends only when every flow has finished; a
        // flow still open when the events ran out is stuck for good.
        let flows_stalled = if self.stop_at == SimTime::MAX && self.finish_target.is_none() {
            self.records.len() as u64 - self.completed
        } else {
            0
        };
        debug_assert_eq!(flows_stalled, 0, "flows stalled with no event left to move them");
        let fab = &self.fab;
        let counters = RunCounters {
            events: fab.sched.processed(),
            wall_seconds,
            sim_time_us: fab.now().as_us_f64(),
            data_packets_injected: fab.counters.data,
            control_packets_injected: fab.counters.control,
            packets_delivered: fab.counters.delivered,
            drops_by_hop: fab.per_hop(|s| s.dropped_packets),
            marks_by_hop: fab.per_hop(|s| s.marked_packets),
            peak_packets_in_flight: fab.pool.peak() as u64,
            fct_below_ideal: self.fct_below_ideal,
            flows_stalled,
            conservation_error,
            throughput_during_arrivals_gbps: match (self.first_arrival, self.at_last_arrival) {
                (Some(t0), Some((t1, bytes))) if t1 > t0 => {
                    bytes as f64 * 8.0 / (t1 - t0).as_secs_f64() / 1e9
                }
                _ => 0.0,
            },
            timeseries: std::mem::take(&mut self.timeseries),
        };
        let warmup =
            (self.spec.workload.warmup_fraction * self.records.len() as f64).floor() as usize;
        let summary = summarize(&self.records, warmup, counters);
        Ok(RunOutput { records: self.records, summary })
    }

    fn sample(&mut self, t: SimTime) {
        let c = &self.fab.counters;
        let ts = &mut self.timeseries;
        ts.t_us.push(t.as_us_f64());
        ts.arrived_packets.push(self.arrived_packets);
        ts.injected_packets.push(c.data - c.data_retransmitted);
        ts.flows_done.push(self.completed);
    }

    /// created − (delivered + dropped + queued + on a wire): zero when every packet is
    /// accounted for.
    fn conservation_error(&self) -> i64 {
        let fab = &self.fab;
        let on_wire =
            fab.sched.pending_events().filter(|e| matches!(e, Event::Arrive(..))).count() as u64;
        let queued = fab.packets_queued();
        let alive = fab.pool.live() as u64;
        let c = fab.counters;
        let accounted = c.delivered + c.dropped + queued + on_wire;
        if alive != queued + on_wire {
            return i64::MAX; // the pool disagrees with the queues and wires
        }
        c.created as i64 - accounted as i64
    }
}
