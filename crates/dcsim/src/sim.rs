//! A simulation run: builds the fabric, transport and workload from a [`Spec`] and drives
//! the event loop until every flow has finished (or the time limit, or with
//! `stop_when = "n-finished"` the `flows`-th completion). Long-lived flows
//! (`workload.long_lived_flows`) run beside the run's flows from time 0 and never end it.

mod checkpoint;
mod partitioned;

pub use checkpoint::{Checkpoints, MODEL_SOURCE_HASH};

use crate::error::{RunError, SpecError};
use crate::fabric::{Event, Fabric, FlowMeter};
use crate::metrics::{
    ideal_fct, path_hops, summarize, FlowRecords, Hop, PacketTrace, PacketTracer, PortDescription,
    PortSampler, PortSamples, RunCounters, Summary, Timeseries,
};
use crate::partition::PartitionMap;
use crate::queue::{
    AnyQueue, DropTail, Fifo, HopKind, PortQueue, PriorityDropQueue, StrictPriorityQueue,
};
use crate::spec::{LoadBalancing, Spec, StopWhen};
use crate::topology::{Network, PortInfo};
use crate::transport::{AnyHost, Completion, HostTransport, Model, QueuePlan};
use crate::units::HORIZON;
use crate::workload::{is_long_lived, FlowArrival, Generator, LONG_LIVED_ID};
use dcsim_engine::SimTime;
use std::collections::HashMap;
use std::time::Instant;

/// What a flow's ideal FCT depends on besides its size: (source rack, destination rack, source
/// host link delay ps, destination host link delay ps).
type PathClass = (u32, u32, u64, u64);

/// A snapshot for progress reporting.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Simulated time now.
    pub sim_time: SimTime,
    /// Flows finished.
    pub flows_done: u64,
    /// Flows that have arrived (started) so far: with `flows_total`, how far the arrivals
    /// are, which predicts the run's end better than the flows finished.
    pub flows_started: u64,
    /// Data packets of the flows started so far: the work that has arrived.
    pub packets_arrived: u64,
    /// Data packets sent for the first time (retransmissions left out), the long-lived
    /// flows' included: the work done. The time series sample the same two counts.
    pub packets_injected: u64,
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
    /// The fabric-wide counters sampled every `output.timeseries_us` (empty when off).
    pub timeseries: Timeseries,
    /// Port samples (`output.ports_sample_us`), if on.
    pub ports: Option<PortSamples>,
    /// The per-packet trace (`output.packet_trace`), if on.
    pub packets: Option<PacketTrace>,
    /// The ports the port samples and the packet trace refer to by index (empty when neither
    /// is on).
    pub port_descriptions: Vec<PortDescription>,
}

/// Declares [`Simulation`] in two parts: the state a checkpoint holds (the fields the run
/// changes), and the fields a fresh [`Simulation::new`] of the same spec rebuilds as they were
/// (`rebuilt`); with the two views of the state that a checkpoint writes and reads.
macro_rules! simulation {
    (
        $(#[$meta:meta])*
        state { $($(#[$fmeta:meta])* $field:ident: $ty:ty,)* }
        rebuilt { $($(#[$kmeta:meta])* $kept:ident: $kty:ty,)* }
    ) => {
        $(#[$meta])*
        pub struct Simulation {
            $($(#[$fmeta])* $field: $ty,)*
            $($(#[$kmeta])* $kept: $kty,)*
        }

        #[derive(serde::Serialize)]
        struct StateRef<'a> { $($field: &'a $ty),* }

        #[derive(serde::Deserialize)]
        struct StateOwned { $($field: $ty),* }

        impl Simulation {
            fn state_ref(&self) -> StateRef<'_> {
                StateRef { $($field: &self.$field),* }
            }

            fn restore(&mut self, state: StateOwned) {
                $(self.$field = state.$field;)*
            }
        }
    };
}

simulation! {
    /// One simulation, ready to run.
    state {
        fab: Fabric,
        transport: AnyHost,
        model: Model,
        workload: Generator,
        records: FlowRecords,
        next: Option<FlowArrival>,
        stop_at: SimTime,
        /// With `stop_when = "n-finished"`: the run ends when this many flows have finished.
        finish_target: Option<u64>,
        completed: u64,
        fct_below_ideal: u64,
        paths: HashMap<PathClass, (Vec<Hop>, Vec<Hop>)>,
        /// Data packets of the flows started so far.
        arrived_packets: u64,
        /// Time of the first arrival, and (time, data bytes delivered) at the last one.
        first_arrival: Option<SimTime>,
        at_last_arrival: Option<(SimTime, u64)>,
        timeseries: Timeseries,
        /// Port samples (`output.ports_sample_us`), if on.
        port_sampler: Option<PortSampler>,
    }
    // The spec (a checkpoint's must be this one), the single partition of a run that can
    // checkpoint, and how the run is driven.
    rebuilt {
        spec: Spec,
        /// The fabric's partitions ([`crate::partition`]): one unless the protocol runs
        /// partitioned and the topology divides.
        partitions: PartitionMap,
        /// One network replica per partition (none with one partition).
        replicas: Vec<Network>,
        /// Threads to run the partitions on.
        threads: usize,
        /// Where the run saves its state, and how often (none unless asked).
        checkpoints: Option<Checkpoints>,
        /// Events this sitting may process ([`Simulation::with_event_budget`]).
        event_budget: u64,
    }
}

/// The event loop's own state between two events.
#[derive(serde::Serialize, serde::Deserialize)]
struct LoopState {
    watch: StallWatch,
    clock: SampleClock,
    next_sample: SimTime,
    /// Wall seconds of the run's earlier sittings (resumed from a checkpoint).
    wall_before: f64,
}

impl Simulation {
    /// Builds everything `spec` describes. Fails only on spec problems.
    pub fn new(spec: Spec) -> Result<Self, SpecError> {
        let parts = crate::transport::assemble(&spec);
        let plan = parts.ports;
        let timeline = spec.engine.fifo_timeline;
        let shared = spec.topology.shared_buffer();
        let factory = move |info: PortInfo| {
            // A switch port of a shared memory is bounded by its dynamic threshold, which never
            // passes the memory; the per-port buffer is then the NICs'.
            let buffer = match shared {
                Some(memory) if info.hop != HopKind::SourceNic => memory.bytes,
                _ => plan.buffer_bytes,
            };
            let queue = match plan.queue {
                QueuePlan::Fifo if timeline => PortQueue::Timeline(DropTail::new(buffer)),
                QueuePlan::Fifo => PortQueue::Scheduled(AnyQueue::Fifo(Fifo::new(buffer))),
                QueuePlan::PriorityDrop { queue_order_ties, most_urgent_first } => {
                    let q = PriorityDropQueue::new(buffer);
                    let q = if queue_order_ties { q.with_queue_order_ties() } else { q };
                    let q = if most_urgent_first { q.with_most_urgent_first() } else { q };
                    PortQueue::Scheduled(AnyQueue::PriorityDrop(q))
                }
                QueuePlan::StrictPriority { queues, reserved_bytes } => {
                    PortQueue::Scheduled(AnyQueue::StrictPriority(StrictPriorityQueue::new(
                        queues,
                        buffer,
                        reserved_bytes,
                    )))
                }
            };
            (queue, plan.marking)
        };
        let net = Network::build_with_service_hosts(&spec.topology, parts.service_hosts, &factory);
        // The spec refuses `engine.partitioned` for a protocol that cannot run partitioned
        // (and so for the flow-level model).
        let partitions = if spec.engine.partitioned {
            PartitionMap::of(&spec.topology, &net)
        } else {
            PartitionMap::single(net.n_nodes())
        };
        let replicas = if partitions.count > 1 {
            (0..partitions.count)
                .map(|i| net.replica(&factory, &|node| partitions.of_node[node as usize] == i))
                .collect()
        } else {
            Vec::new()
        };
        let workload = Generator::new(&spec, &net)?;
        check_recording_sizes(&spec, &net, &workload, parts.model)?;
        let per_element = spec.engine.partitioned;
        let mut fab = Fabric::new(net, spec.topology.load_balancing, spec.seed, per_element);
        if spec.output.packet_trace {
            fab.tracer = Some(Box::new(PacketTracer::new(spec.output.packet_trace_max_rows)));
        }
        let port_sampler = (spec.output.ports_sample_us > 0.0)
            .then(|| PortSampler::new(fab.net.ports.len(), spec.output.ports_max_rows));
        // What the long-lived flows deliver is counted apart, for the summary.
        fab.meter = FlowMeter::new(LONG_LIVED_ID, spec.workload.long_lived_flows);
        let stop_at = if spec.workload.duration_ms > 0.0 {
            SimTime::from_secs_f64(spec.workload.duration_ms / 1e3)
        } else {
            SimTime::MAX
        };
        Ok(Simulation {
            transport: parts.host,
            model: parts.model,
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
            timeseries: Timeseries::default(),
            port_sampler,
            partitions,
            replicas,
            threads: 1,
            checkpoints: None,
            event_budget: u64::MAX,
            spec,
        })
    }

    /// Adds a scripted loss (see [`crate::fabric::LossRule`]). A rule counts its drops across
    /// the whole fabric, so [`Simulation::run`] refuses scripted losses in a fabric that
    /// `engine.partitioned` splits into several partitions.
    pub fn with_loss(mut self, rule: crate::fabric::LossRule) -> Self {
        self.fab.add_loss(rule);
        self
    }

    /// Runs a partitioned run's partitions (`engine.partitioned`) on `threads` threads (at
    /// least 1; at most one per partition is used). The results are the same for every thread
    /// count; a sequential run (the default model) uses one thread whatever this says. The
    /// default is 1 (docs/parallel.md: a run synchronised every window is slower on two
    /// threads than on one unless it has both cores to itself).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Saves the run's whole state to `path` every `every` of wall time (between events, at
    /// most every 2¹⁶ events) and when the run is interrupted, and, if `path` holds a
    /// checkpoint of this spec written by this build, goes on from it instead of starting
    /// again. The results are byte-identical to an uninterrupted run's ([`checkpoint`]); the
    /// file is left in place when the run ends (the caller deletes it once the results are
    /// safe). A run of several partitions (`engine.partitioned`) cannot checkpoint; the
    /// flow-level model (seconds per run) has no use for it and ignores it.
    pub fn with_checkpoints(
        mut self,
        path: impl Into<std::path::PathBuf>,
        every: std::time::Duration,
    ) -> Self {
        self.checkpoints = Some(Checkpoints::new(path.into(), every));
        self
    }

    /// Stops the run, as interrupted ([`RunError::Interrupted`]) and after saving its
    /// checkpoint if it has one, at the first mark of 2¹⁶ events at which this sitting has
    /// processed at least `events`: a run advanced by a known amount, whatever the machine's
    /// pace (a resumed run goes on to its end, or by the next budget). The sequential model
    /// only (the flow-level model and a partitioned run ignore it).
    pub fn with_event_budget(mut self, events: u64) -> Self {
        self.event_budget = events;
        self
    }

    /// The fabric's partitions for this run ([`crate::partition`]).
    pub fn partitions(&self) -> &PartitionMap {
        &self.partitions
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
    /// Path profiles are cached per (source rack, destination rack, the two hosts' link
    /// delays): equal-cost paths are alike (checked for topology files, true of the built-in
    /// kinds) and host links have one rate, so the profile depends only on those, and the cache
    /// stays as small as the number of rack pairs however many flows run.
    pub fn ideal_fct(&mut self, src: u32, dst: u32, size_bytes: u64) -> SimTime {
        let net = &self.fab.net;
        let host_delay = |h: u32| net.ports[net.nic(h) as usize].delay.as_ps();
        let key = (net.rack(src), net.rack(dst), host_delay(src), host_delay(dst));
        let sprayed = self.spec.topology.load_balancing != LoadBalancing::Ecmp;
        let (fwd, rev) = self.paths.entry(key).or_insert_with(|| {
            (path_hops(net, src, dst, sprayed), path_hops(net, dst, src, sprayed))
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

    /// Admits flow `f` to the run: its record (with its ideal FCT, and its deadline no
    /// earlier than the floor), its packets counted as arrived.
    fn admit(&mut self, mut f: FlowArrival) -> FlowArrival {
        let ideal = self.ideal_fct(f.src, f.dst, f.size_bytes);
        self.floor_deadline(&mut f, ideal);
        self.records.push(&f, ideal);
        self.arrived_packets += crate::units::Bytes(f.size_bytes).packets() as u64;
        self.first_arrival.get_or_insert(f.start);
        f
    }

    fn start_next_flow(&mut self) {
        let f = self.next.take().expect("a NextFlow event always has a flow");
        let f = self.admit(f);
        self.transport.start_flow(&f, &mut self.fab);
        let now = self.fab.now();
        self.schedule_next_arrival();
        if self.next.is_none() {
            self.at_last_arrival = Some((now, self.run_bytes_delivered()));
        }
    }

    /// Data bytes (on the wire) delivered so far of the run's flows (the long-lived flows' left
    /// out).
    /// The bytes delivered from the first flow arrival to the last, over that time (Gbps; 0
    /// without two distinct arrival times): the summary's `throughput_during_arrivals_gbps`.
    fn throughput_during_arrivals_gbps(&self) -> f64 {
        match (self.first_arrival, self.at_last_arrival) {
            (Some(t0), Some((t1, bytes))) if t1 > t0 => {
                bytes as f64 * 8.0 / (t1 - t0).as_secs_f64() / 1e9
            }
            _ => 0.0,
        }
    }

    fn run_bytes_delivered(&self) -> u64 {
        self.fab.counters.data_bytes_delivered - self.fab.meter.wire_bytes
    }

    fn schedule_next_arrival(&mut self) {
        self.next = self.workload.next_flow();
        if let Some(n) = &self.next {
            let at = n.start.max(self.fab.now());
            self.fab.schedule(at, Event::NextFlow);
        }
    }

    fn record(&mut self, c: Completion) {
        self.record_at(self.fab.now(), c);
    }

    /// Flow `c.flow` finished at `now`.
    fn record_at(&mut self, now: SimTime, c: Completion) {
        let i = c.flow as usize;
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

    /// The flow-level SRPT model instead of the packet-level loop: every flow of the workload,
    /// the same flows a packet-level run with this seed sees.
    ///
    /// With `stop_when = "n-finished"` the flows are drawn in growing batches until the
    /// `flows`-th completion comes before the last arrival drawn: SRPT is causal (no decision
    /// depends on a later arrival), so flows arriving after that completion cannot change it,
    /// and the run keeps exactly the flows that arrived by then, as a packet-level run does.
    fn run_flow_level(mut self, wall: Instant) -> RunOutput {
        let rate = self.spec.topology.host_rate();
        let mut jobs: Vec<crate::flow_level::Job> = Vec::new();
        let mut want = self.finish_target.map_or(u64::MAX, |n| n.saturating_mul(2).max(1024));
        let (done, end) = loop {
            while (jobs.len() as u64) < want {
                let Some(mut f) = self.workload.next_flow() else { break };
                let ideal = self.ideal_fct(f.src, f.dst, f.size_bytes);
                self.floor_deadline(&mut f, ideal);
                self.records.push(&f, ideal);
                jobs.push(crate::flow_level::Job {
                    src: f.src,
                    dst: f.dst,
                    start_ps: f.start.as_ps(),
                    work_ps: rate
                        .tx_time(crate::units::Bytes(f.size_bytes).wire_bytes())
                        .as_ps()
                        .max(1),
                });
            }
            let order = self.spec.transport.ideal_order;
            let mut done = crate::flow_level::greedy(&jobs, self.fab.net.n_hosts(), order);
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
            partitions: 1,
            offered_load: self.workload.offered_load(),
            ..RunCounters::default()
        };
        let warmup =
            (self.spec.workload.warmup_fraction * self.records.len() as f64).floor() as usize;
        let summary = summarize(&self.records, warmup, counters);
        RunOutput {
            records: self.records,
            summary,
            timeseries: Timeseries::default(),
            ports: None,
            packets: None,
            port_descriptions: Vec::new(),
        }
    }

    /// Runs to the end. `progress` is called about five times a second of wall time; return
    /// `false` from it to interrupt the run.
    pub fn run(
        mut self,
        progress: &mut dyn FnMut(&Progress) -> bool,
    ) -> Result<RunOutput, RunError> {
        let wall = Instant::now();
        if self.partitions.count > 1 && self.fab.has_losses() {
            return Err(RunError::Spec(SpecError::new(
                "engine.partitioned",
                format!(
                    "true splits this fabric into {} partitions, but the run has scripted losses (`Simulation::with_loss`), whose rules count their drops across the whole fabric: set engine.partitioned = false, or use a topology of one partition (pair, star)",
                    self.partitions.count
                ),
            )));
        }
        if self.model == Model::FlowLevelSrpt {
            return Ok(self.run_flow_level(wall));
        }
        if self.partitions.count > 1 {
            if self.checkpoints.is_some() {
                return Err(RunError::Spec(SpecError::new(
                    "engine.partitioned",
                    format!(
                        "true splits this fabric into {} partitions, whose runs cannot be checkpointed (a checkpoint holds one event queue): set engine.partitioned = false to checkpoint the run, or run it without checkpoints",
                        self.partitions.count
                    ),
                )));
            }
            let threads = self.threads;
            return partitioned::run(self, threads, progress);
        }
        if let Some(state) = self.load_checkpoint()? {
            return self.event_loop(state, wall, progress);
        }
        self.run_sequential(wall, progress)
    }

    /// The sequential event loop (one partition), from `wall`. Kept apart from the dispatch
    /// above so that its code, and the compiler's inlining into it, are those of the
    /// sequential engine alone.
    fn run_sequential(
        mut self,
        wall: Instant,
        progress: &mut dyn FnMut(&Progress) -> bool,
    ) -> Result<RunOutput, RunError> {
        // The long-lived flows start at time 0, before any flow of the run.
        for f in self.workload.long_lived().to_vec() {
            self.transport.start_flow(&f, &mut self.fab);
        }
        // A stalled flow need not end the run by running out of events (long-lived flows'
        // events never do, nor do a protocol's clocks while a flow waits, as dcPIM's matching
        // rounds), so the run also stops, counting its open flows as stalled, once no data of
        // its flows has been delivered and no flow has arrived for the stall window
        // (`StallWatch`; checked every 2¹⁶ events).
        let watch = StallWatch::new(&self.transport, &self.fab.net);
        self.schedule_next_arrival();
        // Samples are taken between events (the state just before the first event at or after
        // the sample time), not as events of their own: the run's events, and so its results,
        // are the same whether it samples or not. Off, a series waits at `SimTime::MAX`.
        let clock = SampleClock::new(&self.spec, self.port_sampler.is_some());
        let next_sample = clock.next();
        let state = LoopState { watch, clock, next_sample, wall_before: 0.0 };
        self.event_loop(state, wall, progress)
    }

    /// The event loop from `state` (a fresh run's, or a checkpoint's) until the run ends.
    fn event_loop(
        mut self,
        state: LoopState,
        wall: Instant,
        progress: &mut dyn FnMut(&Progress) -> bool,
    ) -> Result<RunOutput, RunError> {
        let n_hosts = self.fab.net.n_hosts();
        let total = self.workload.total();
        // Plain locals in the loop (the next sample time is read at every event); a checkpoint
        // gathers them again.
        let LoopState { mut watch, mut clock, mut next_sample, wall_before } = state;
        let mut stalled = false;
        let mut last_report = 0.0f64;
        let sitting_from = self.fab.sched.processed();
        // Nothing is simulated past the horizon (and no time computation can overflow).
        let limit = self.stop_at.min(HORIZON);
        loop {
            if self.next.is_none() && self.completed == self.records.len() as u64 {
                break;
            }
            let Some((at, ev)) = self.fab.sched.pop_until(limit) else { break };
            if at >= next_sample {
                next_sample = self.take_samples(at, &mut clock);
            }
            match ev {
                Event::Arrive(node, pkt) => {
                    if node < n_hosts {
                        debug_assert_eq!(
                            self.fab.pool.get(pkt).dst,
                            node,
                            "packet delivered to the wrong host"
                        );
                        // A long-lived flow is no flow of the run (and 1 TB never ends in one).
                        let done = self.transport.on_packet(pkt, &mut self.fab);
                        if let Some(c) = done.filter(|c| !is_long_lived(c.flow)) {
                            self.record(c);
                            // Checked per completion, not per event.
                            if self.finish_target == Some(self.completed) {
                                // `n-finished`: the flows still open are left out.
                                self.at_last_arrival =
                                    Some((self.fab.now(), self.run_bytes_delivered()));
                                break;
                            }
                        }
                    } else if !self.fab.pool.get(pkt).inspect
                        || self.transport.on_switch(node, pkt, &mut self.fab)
                    {
                        self.fab.on_arrive_at_switch(node, pkt);
                    }
                }
                Event::TxDone(port) => self.fab.on_tx_done(port),
                Event::NextFlow => self.start_next_flow(),
                Event::Transport { code, a, b } => {
                    self.transport.on_event(code, a, b, &mut self.fab)
                }
            }
            if self.fab.sched.processed() & 0xFFFF == 0 {
                let open = self.completed < self.records.len() as u64;
                let so_far = self.run_bytes_delivered() + self.records.len() as u64;
                if watch.stalled(self.fab.now(), so_far, open) {
                    stalled = true;
                    break;
                }
                let secs = wall.elapsed().as_secs_f64();
                // Between events, and only at this 2¹⁶-event mark, so a run writes the same
                // checkpoint contents whatever its wall-clock pace (the run itself never
                // depends on when they are written).
                if self.checkpoints.as_ref().is_some_and(|c| c.due(secs)) {
                    self.save_checkpoint(
                        &LoopState { watch, clock, next_sample, wall_before },
                        secs,
                    )?;
                }
                if self.fab.sched.processed() - sitting_from >= self.event_budget {
                    let state = LoopState { watch, clock, next_sample, wall_before };
                    return Err(self.interrupt(&state, secs));
                }
                if secs - last_report >= 0.2 {
                    last_report = secs;
                    let p = Progress {
                        sim_time: self.fab.now(),
                        flows_done: self.completed,
                        flows_started: self.records.len() as u64,
                        packets_arrived: self.arrived_packets,
                        packets_injected: self.fab.counters.data
                            - self.fab.counters.data_retransmitted,
                        flows_total: total,
                        events: self.fab.sched.processed(),
                        wall_seconds: wall_before + secs,
                    };
                    if !progress(&p) {
                        let state = LoopState { watch, clock, next_sample, wall_before };
                        return Err(self.interrupt(&state, secs));
                    }
                }
            }
        }
        let open = self.records.len() as u64 - self.completed;
        let done =
            self.finish_target.map_or(open == 0 && self.next.is_none(), |n| self.completed >= n);
        if !done && limit == HORIZON && self.fab.sched.peek_time().is_some_and(|t| t > HORIZON) {
            return Err(RunError::Horizon { open });
        }
        let wall_seconds = wall_before + wall.elapsed().as_secs_f64();
        let conservation_error = check_conservation(&self.fab);
        debug_assert_eq!(conservation_error, 0, "packets were lost or invented");
        // Invariant: without a time limit a run ends only when every flow has finished; a
        // flow still open when the events ran out is stuck for good.
        let flows_stalled =
            if stalled || (self.stop_at == SimTime::MAX && self.finish_target.is_none()) {
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
            partitions: 1,
            windows: 0,
            fct_below_ideal: self.fct_below_ideal,
            flows_stalled,
            conservation_error,
            throughput_during_arrivals_gbps: self.throughput_during_arrivals_gbps(),
            offered_load: self.workload.offered_load(),
            transport_counters: self
                .transport
                .counters()
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value))
                .collect(),
            long_lived_bytes_delivered: fab.meter.payload_bytes,
            long_lived_goodput_gbps: match fab.now().as_secs_f64() {
                secs if secs > 0.0 => fab.meter.payload_bytes as f64 * 8.0 / secs / 1e9,
                _ => 0.0,
            },
            timeseries_rows: self.timeseries.t_us.len() as u64,
            timeseries_truncated: self.timeseries.truncated,
            ports_rows: self.port_sampler.as_ref().map_or(0, |s| s.rows.time_ps.len() as u64),
            ports_truncated: self.port_sampler.as_ref().is_some_and(|s| s.rows.truncated),
            packets_rows: fab.tracer.as_ref().map_or(0, |t| t.rows.time_ps.len() as u64),
            packets_truncated: fab.tracer.as_ref().is_some_and(|t| t.rows.truncated),
        };
        let warmup =
            (self.spec.workload.warmup_fraction * self.records.len() as f64).floor() as usize;
        let summary = summarize(&self.records, warmup, counters);
        let recorded = self.port_sampler.is_some() || self.fab.tracer.is_some();
        let port_descriptions = if recorded {
            self.fab.net.ports.iter().map(PortDescription::of).collect()
        } else {
            Vec::new()
        };
        Ok(RunOutput {
            records: self.records,
            summary,
            timeseries: self.timeseries,
            port_descriptions,
            ports: self.port_sampler.map(|s| s.rows),
            packets: self.fab.tracer.map(|t| t.rows),
        })
    }

    /// Takes every sample due at or before `at` (the next event's time); returns when the next
    /// one is due. Out of line: the event loop only compares times.
    #[cold]
    #[inline(never)]
    fn take_samples(&mut self, at: SimTime, clock: &mut SampleClock) -> SimTime {
        while at >= clock.next() {
            // Both series due now are sampled at this time, never later than `at` (a port sample
            // ahead of the next event would let its FIFO queues forget packets too early).
            let due = clock.next();
            // A full series stops (and says so).
            if clock.series_at == due {
                clock.series_at = if self.sample(clock.series_at) {
                    clock.series_at + clock.series_every
                } else {
                    SimTime::MAX
                };
            }
            if clock.ports_at == due {
                let sampler = self.port_sampler.as_mut().expect("sampling ports");
                clock.ports_at = if sampler.sample(clock.ports_at, &mut self.fab.net.ports) {
                    clock.ports_at + clock.ports_every
                } else {
                    SimTime::MAX
                };
            }
        }
        clock.next()
    }

    /// Records one sample; false (and the series marked truncated) once it is full.
    fn sample(&mut self, t: SimTime) -> bool {
        let c = &self.fab.counters;
        let ts = &mut self.timeseries;
        if ts.t_us.len() >= crate::metrics::MAX_SAMPLES {
            ts.truncated = true; // bounded memory: the series stops here, and says so
            return false;
        }
        ts.t_us.push(t.as_us_f64());
        ts.arrived_packets.push(self.arrived_packets);
        ts.injected_packets.push(c.data - c.data_retransmitted);
        ts.flows_done.push(self.completed);
        true
    }
}

/// Ends a run whose flows no longer progress. A flow that can never finish ends a run by
/// leaving no event only when nothing else runs; long-lived flows and protocols with clocks of
/// their own (dcPIM's matching rounds go on while a host's requests cannot get through,
/// `experiments/transports/side-by-side/README.md`) would otherwise run forever. Both models
/// ask it now and then.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct StallWatch {
    /// How long the run's flows may go without progress while some are open: eight of the
    /// longest timeout after which the run's protocol resends or asks again
    /// ([`HostTransport::recovery_timeout`]: the window protocols' largest backed-off RTO,
    /// pFabric's and LAS's fixed one, Homa's RESEND timeout, pHost's re-issue and downgrade,
    /// dcPIM's token window and resend timeouts, Fastpass's watchdog) or of the fabric's
    /// longest round trip ([`Network::round_trip_bound`]), at least 1 ms.
    after: SimTime,
    /// The progress count last seen and when it was first seen.
    mark: (u64, SimTime),
}

impl StallWatch {
    pub(crate) fn new(transport: &impl HostTransport, net: &Network) -> Self {
        // No progress is possible within a round trip either (found by the fuzz harness: a 1 s
        // host delay made every run "stall" after 8 ms).
        let longest = transport.recovery_timeout(net).max(net.round_trip_bound());
        let after = SimTime::from_ps(8 * longest.as_ps()).max(SimTime::from_ms(1));
        StallWatch { after, mark: (0, SimTime::ZERO) }
    }

    /// True once `progress` (data bytes of the run's flows delivered plus flows arrived) has
    /// not moved for the stall window at `now` while flows are `open`.
    pub(crate) fn stalled(&mut self, now: SimTime, progress: u64, open: bool) -> bool {
        if progress != self.mark.0 {
            self.mark = (progress, now);
            return false;
        }
        open && now - self.mark.1 > self.after
    }
}

/// created + received − (delivered + dropped + queued + on a wire + sent away) of one fabric (a
/// partition's, in a partitioned run): zero when every packet is accounted for.
fn check_conservation(fab: &Fabric) -> i64 {
    let on_wire =
        fab.sched.pending_events().filter(|e| matches!(e, Event::Arrive(..))).count() as u64;
    let queued = fab.packets_queued();
    let alive = fab.pool.live() as u64;
    let c = fab.counters;
    let accounted = c.delivered + c.dropped + queued + on_wire + c.sent_away;
    if alive != queued + on_wire {
        return i64::MAX; // the pool disagrees with the queues and wires
    }
    (c.created + c.received) as i64 - accounted as i64
}

/// When the sampled recordings (the time series, the port samples) are next due; a recording
/// that is off (or full) waits at `SimTime::MAX`.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
struct SampleClock {
    series_at: SimTime,
    series_every: SimTime,
    ports_at: SimTime,
    ports_every: SimTime,
}

impl SampleClock {
    fn new(spec: &Spec, sampling_ports: bool) -> Self {
        let series_every = SimTime::from_us_f64(spec.output.timeseries_us);
        let first = |on: bool| if on { SimTime::ZERO } else { SimTime::MAX };
        SampleClock {
            series_at: first(series_every > SimTime::ZERO),
            series_every,
            ports_at: first(sampling_ports),
            ports_every: SimTime::from_us_f64(spec.output.ports_sample_us),
        }
    }

    fn next(&self) -> SimTime {
        self.series_at.min(self.ports_at)
    }
}

/// Refuses, before a run, recordings that would pass their row limits: the port samples
/// (ports × samples over the workload's arrival span, or `workload.duration_ms`) and the
/// packet trace (at least an enqueue and a dequeue per port crossed and a delivery for every
/// data packet the workload brings). Both estimates are lower bounds: a run also drains, and
/// sends ACKs; one that reaches a limit stops recording there and says so in its summary.
fn check_recording_sizes(
    spec: &Spec,
    net: &Network,
    workload: &Generator,
    model: Model,
) -> Result<(), SpecError> {
    let out = &spec.output;
    if model == Model::FlowLevelSrpt && (out.ports_sample_us > 0.0 || out.packet_trace) {
        let field = if out.packet_trace { "output.packet_trace" } else { "output.ports_sample_us" };
        return Err(SpecError::new(
            field,
            "transport.protocol = \"ideal\" runs the flow-level model, which has no ports or packets to record; turn it off or choose a packet-level protocol",
        ));
    }
    let (span_s, data_packets) = workload.expected_span_and_packets();
    if out.ports_sample_us > 0.0 {
        let span_s =
            if spec.workload.duration_ms > 0.0 { spec.workload.duration_ms / 1e3 } else { span_s };
        let samples = (span_s * 1e6 / out.ports_sample_us).floor() + 1.0;
        let rows = samples * net.ports.len() as f64;
        if rows > out.ports_max_rows as f64 {
            return Err(SpecError::new(
                "output.ports_max_rows",
                format!(
                    "{} rows are too few for ports.parquet: {} ports sampled every {} µs over the {:.1} µs {} make at least {rows:.0} rows; raise output.ports_max_rows or output.ports_sample_us",
                    out.ports_max_rows,
                    net.ports.len(),
                    out.ports_sample_us,
                    span_s * 1e6,
                    if spec.workload.duration_ms > 0.0 {
                        "of workload.duration_ms"
                    } else {
                        "the flows take to arrive"
                    },
                ),
            ));
        }
    }
    if out.packet_trace {
        // A data packet crosses at least one port (two wherever hosts hang off switches).
        let hops = if (0..net.n_nodes()).any(|n| net.kind(n) == crate::topology::NodeKind::Switch) {
            2.0
        } else {
            1.0
        };
        let rows = data_packets * (2.0 * hops + 1.0);
        if rows > out.packet_trace_max_rows as f64 {
            return Err(SpecError::new(
                "output.packet_trace_max_rows",
                format!(
                    "{} rows are too few for packets.parquet: the workload brings about {data_packets:.0} data packets, each at least {rows_per:.0} rows (an enqueue and a dequeue per port crossed, a delivery), so at least {rows:.0} rows; raise output.packet_trace_max_rows or run fewer flows (the trace is meant for small runs)",
                    out.packet_trace_max_rows,
                    rows_per = 2.0 * hops + 1.0,
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(toml: &str) -> StallWatch {
        let sim = Simulation::new(Spec::from_toml_str(toml).unwrap()).unwrap();
        StallWatch::new(&sim.transport, &sim.fab.net)
    }

    /// The window is eight of the longest resend timeout, or of the longest round trip where
    /// that is longer (found by the fuzz harness: a 1 s host delay with a 1 ms RTO cap ended
    /// runs after 8 ms with every flow "stalled"; a 1 s link delay and a 1 Mbps core did the
    /// same).
    #[test]
    fn the_stall_window_outlasts_eight_timeouts_and_eight_round_trips() {
        let rto = "[transport]\nprotocol = \"dctcp\"\nmin_rto_us = 200\nmax_rto_us = 1000\n";
        // Short round trips: eight RTO caps.
        assert_eq!(watch(rto).after, SimTime::from_ms(8));
        // A pair of hosts on a 1 s link (and 0.5 s host delay on each host link): a round trip
        // is 3 s and two serializations of 1.2 µs, the window 8 of it.
        let slow = format!("{rto}[topology]\nkind = \"pair\"\nlink_delay_ns = 1000000000\n");
        let slow_host = format!("{slow}host_delay_ns = 500000000\n");
        let mtu = SimTime::from_ns(1200);
        assert_eq!(
            watch(&slow).after,
            SimTime::from_ps(16 * (SimTime::from_ms(1000) + mtu).as_ps())
        );
        let mut w = watch(&slow_host);
        assert_eq!(w.after, SimTime::from_ps(16 * (SimTime::from_ms(1500) + mtu).as_ps()));
        // No progress for 23 s is no stall; for over 24 s, with flows open, it is.
        assert!(!w.stalled(SimTime::from_ms(1), 7, true));
        assert!(!w.stalled(SimTime::from_ms(23_001), 7, true));
        assert!(!w.stalled(SimTime::from_ms(30_000), 7, false));
        assert!(w.stalled(SimTime::from_ms(24_002), 7, true));
        // Progress moves the mark.
        assert!(!w.stalled(SimTime::from_ms(24_003), 8, true));
        // The receiver-driven protocols' timers count too: pHost re-issuing tokens after a
        // million MTU times (1.2 µs at 10 Gbps), Fastpass's watchdog after 100,000 epochs.
        let phost = "[transport]\nprotocol = \"phost\"\n[phost]\nreissue_mtu = 1000000\n";
        assert_eq!(watch(phost).after, SimTime::from_ms(8 * 1200));
        let sim = Simulation::new(Spec::from_toml_str(phost).unwrap()).unwrap();
        assert_eq!(sim.transport.recovery_timeout(&sim.fab.net), SimTime::from_ms(1200));
        let fastpass =
            "[transport]\nprotocol = \"fastpass\"\n[fastpass]\nwatchdog_epochs = 100000\n";
        let sim = Simulation::new(Spec::from_toml_str(fastpass).unwrap()).unwrap();
        let watchdog = sim.transport.recovery_timeout(&sim.fab.net);
        assert!(watchdog > SimTime::from_ms(100), "{watchdog:?}");
        assert_eq!(watch(fastpass).after, SimTime::from_ps(8 * watchdog.as_ps()));
        // At least 1 ms whatever the protocol and fabric.
        let fast =
            "[transport]\nprotocol = \"phost\"\n[topology]\nkind = \"pair\"\nlink_delay_ns = 0\n";
        assert_eq!(watch(fast).after, SimTime::from_ms(1));
    }
}
