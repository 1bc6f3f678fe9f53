//! The partitioned run: one sequential sub-simulation per partition of the fabric
//! ([`crate::partition`]), advanced window by window with conservative synchronisation, on as
//! many threads as asked. Threads only execute partitions: the partitions, their event
//! sequences and what crosses between them at each barrier are the same for every thread
//! count, so the results are byte-identical for 1, 2 or N threads.
//!
//! Each window is `[start, start + lookahead)`. Within it every partition processes its own
//! events; a packet leaving by a port whose peer is in another partition goes into the
//! partition's outbox (it arrives at `lookahead` or later, so never within the window). At the
//! barrier, one thread (the caller's) alone:
//! * delivers every outbox into its destination partition, in order of source partition, then
//!   of sending;
//! * applies the window's flow completions to the run's flow records in order of (time,
//!   partition, completion), ending the run at the `workload.flows`-th with
//!   `stop_when = "n-finished"`;
//! * builds the time-series rows due in the window from the partitions' samples;
//! * checks the stop conditions (every flow done, the time limit, no event left, the stall of
//!   a run with long-lived flows, time-based);
//! * hands the flows arriving in the next window to their sources' partitions (the workload
//!   generator runs once, here), and picks the next window: the next one, or, when no
//!   partition has an event before it and no flow arrives in it, the window starting at the
//!   earliest pending event or arrival.
//!
//! The run ends at the end of the window in which its end condition held; the summary's
//! simulated time is the latest event processed (with `n-finished`, the deciding completion).

use super::{check_conservation, SampleClock, Simulation};
use crate::error::RunError;
use crate::fabric::{Crossing, Event, Fabric, FlowMeter, PacketCounters};
use crate::metrics::{
    summarize, PacketTrace, PacketTracer, PortDescription, PortSampler, PortSamples, RunCounters,
};
use crate::partition::PartitionMap;
use crate::sim::{Progress, RunOutput};
use crate::transport::{AnyHost, Completion, HostTransport};
use crate::units::HORIZON;
use crate::workload::{is_long_lived, FlowArrival, LONG_LIVED_ID};
use dcsim_engine::SimTime;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// One partition: its fabric (a replica of the network whose own ports it drives), its
/// transport instance (only its own hosts' state) and what it reports at barriers.
pub(super) struct Partition {
    index: u32,
    fab: Fabric,
    host: AnyHost,
    /// The flows its hosts start, in arrival order (each has a `NextFlow` event pending).
    arrivals: VecDeque<FlowArrival>,
    /// The window's completions of the run's flows, in order.
    completions: Vec<(SimTime, Completion)>,
    /// Its samples: the time series' injected packets at each sample time, and its ports.
    injected_samples: Vec<u64>,
    port_sampler: Option<PortSampler>,
    clock: SampleClock,
    /// The time of the latest event processed.
    last_event: SimTime,
    /// Its earliest pending event (peeked by its own thread after each window, in parallel;
    /// lowered by the barrier for what it delivers and schedules).
    next_event: Option<SimTime>,
}

impl Partition {
    /// Processes every event before `end`, then takes the samples due before `end` (the state
    /// is that of the last event: nothing happens between it and `end`).
    fn run_window(&mut self, end: SimTime, n_hosts: u32) {
        if self.next_event.is_none_or(|t| t >= end) && self.clock.next() >= end {
            return; // nothing to do in this window (most partitions, most windows, at low load)
        }
        let last = SimTime(end.as_ps() - 1);
        while let Some((at, ev)) = self.fab.sched.pop_until(last) {
            if at >= self.clock.next() {
                self.take_samples(at);
            }
            self.last_event = at;
            match ev {
                Event::Arrive(node, pkt) => {
                    if node < n_hosts {
                        let done = self.host.on_packet(pkt, &mut self.fab);
                        if let Some(c) = done.filter(|c| !is_long_lived(c.flow)) {
                            self.completions.push((at, c));
                        }
                    } else if !self.fab.pool.get(pkt).inspect
                        || self.host.on_switch(node, pkt, &mut self.fab)
                    {
                        self.fab.on_arrive_at_switch(node, pkt);
                    }
                }
                Event::TxDone(port) => self.fab.on_tx_done(port),
                Event::NextFlow => {
                    let f = self.arrivals.pop_front().expect("a NextFlow event has its flow");
                    self.host.start_flow(&f, &mut self.fab);
                }
                Event::Transport { code, a, b } => self.host.on_event(code, a, b, &mut self.fab),
            }
        }
        if self.clock.next() < end {
            self.take_samples(last);
        }
        self.next_event = self.fab.sched.peek_time();
    }

    /// Takes every sample due at or before `at`.
    #[cold]
    #[inline(never)]
    fn take_samples(&mut self, at: SimTime) {
        while at >= self.clock.next() {
            let due = self.clock.next();
            if self.clock.series_at == due {
                let c = &self.fab.counters;
                self.injected_samples.push(c.data - c.data_retransmitted);
                self.clock.series_at = due + self.clock.series_every;
            }
            if self.clock.ports_at == due {
                let sampler = self.port_sampler.as_mut().expect("sampling ports");
                self.clock.ports_at = if sampler.sample(due, &mut self.fab.net.ports) {
                    due + self.clock.ports_every
                } else {
                    SimTime::MAX
                };
            }
        }
    }
}

/// Which partitions each thread runs: the partitions in order of decreasing host count, each
/// to the thread with the fewest hosts so far (ties to the lower thread). Only the speed
/// depends on it.
pub(super) fn assign(map: &PartitionMap, n_hosts: u32, threads: usize) -> Vec<Vec<usize>> {
    let mut weight = vec![0u64; map.count as usize];
    for (node, &p) in map.of_node.iter().enumerate() {
        // A switch's events are its packets' hops: count it as a few hosts' worth.
        weight[p as usize] += if (node as u32) < n_hosts { 1 } else { 4 };
    }
    let mut order: Vec<usize> = (0..map.count as usize).collect();
    order.sort_by_key(|&p| (std::cmp::Reverse(weight[p]), p));
    let mut load = vec![0u64; threads];
    let mut out = vec![Vec::new(); threads];
    for p in order {
        let t = (0..threads).min_by_key(|&t| (load[t], t)).expect("at least one thread");
        load[t] += weight[p];
        out[t].push(p);
    }
    out
}

/// A barrier for the few threads of one run that spins (with backoff) instead of sleeping:
/// a window is a few hundred events (microseconds of work), and waking a sleeping thread
/// through the OS costs about as much as the window itself (measured in docs/performance.md).
struct SpinBarrier {
    threads: usize,
    waiting: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn new(threads: usize) -> Self {
        SpinBarrier { threads, waiting: AtomicUsize::new(0), generation: AtomicUsize::new(0) }
    }

    /// Waits until every thread has called `wait` for this generation.
    fn wait(&self) {
        if self.threads == 1 {
            return;
        }
        let generation = self.generation.load(Ordering::Acquire);
        if self.waiting.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.waiting.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let backoff = crossbeam_utils::Backoff::new();
        while self.generation.load(Ordering::Acquire) == generation {
            backoff.snooze();
        }
    }
}

/// What the coordinator tells the threads for the next window.
struct Control {
    end_ps: std::sync::atomic::AtomicU64,
    stop: AtomicBool,
}

/// Runs `sim` partitioned (its map has more than one partition) on `threads` threads.
pub(super) fn run(
    mut sim: Simulation,
    threads: usize,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<RunOutput, RunError> {
    let wall = Instant::now();
    let map = sim.partitions.clone();
    let n_parts = map.count as usize;
    let n_hosts = sim.fab.net.n_hosts();
    let spec = sim.spec.clone();
    let threads = threads.clamp(1, n_parts);
    let members = map.members();
    // The partitions, each with its own fabric and transport.
    let mut parts: Vec<Partition> = Vec::with_capacity(n_parts);
    for (i, net) in std::mem::take(&mut sim.replicas).into_iter().enumerate() {
        let mut net = net;
        for p in net.ports.iter_mut() {
            p.remote = map.of_node[p.owner as usize] != map.of_node[p.peer as usize];
        }
        let mut fab = Fabric::new(net, spec.topology.load_balancing, spec.seed);
        fab.meter = FlowMeter::new(LONG_LIVED_ID, spec.workload.long_lived_flows);
        if spec.output.packet_trace {
            let tracer =
                PacketTracer::numbered(spec.output.packet_trace_max_rows, i as u64, n_parts as u64);
            fab.tracer = Some(Box::new(tracer));
        }
        let own_ports: Vec<u32> =
            members[i].iter().flat_map(|&n| fab.net.ports_of(n).iter().copied()).collect();
        let port_sampler = (spec.output.ports_sample_us > 0.0).then(|| {
            let mut own = own_ports.clone();
            own.sort_unstable();
            PortSampler::of_ports(own, fab.net.ports.len(), spec.output.ports_max_rows)
        });
        let mut host = crate::transport::assemble(&spec).host;
        host.set_partition(i as u32, n_parts as u32);
        parts.push(Partition {
            index: i as u32,
            fab,
            host,
            arrivals: VecDeque::new(),
            completions: Vec::new(),
            injected_samples: Vec::new(),
            clock: SampleClock::new(&spec, port_sampler.is_some()),
            port_sampler,
            last_event: SimTime::ZERO,
            next_event: None,
        });
    }
    // The long-lived flows start at time 0, before any flow of the run, at their sources.
    for f in sim.workload.long_lived().to_vec() {
        let p = &mut parts[map.of_node[f.src as usize] as usize];
        p.host.start_flow(&f, &mut p.fab);
    }
    for p in &mut parts {
        p.next_event = p.fab.sched.peek_time();
    }
    let parts: Vec<Mutex<Partition>> = parts.into_iter().map(Mutex::new).collect();
    let plan = assign(&map, n_hosts, threads);
    let barrier = SpinBarrier::new(threads);
    let control = Control { end_ps: 0.into(), stop: AtomicBool::new(false) };
    let mut coord = Coordinator::new(&mut sim, map.lookahead);
    let worker = |t: usize| {
        // Each thread locks its own partitions for the window; the coordinator locks all of
        // them only between the two barriers, so no lock is ever contended.
        loop {
            barrier.wait();
            if control.stop.load(Ordering::Acquire) {
                return;
            }
            let end = SimTime(control.end_ps.load(Ordering::Acquire));
            for &p in &plan[t] {
                parts[p].lock().expect("a partition's thread panicked").run_window(end, n_hosts);
            }
            barrier.wait();
        }
    };
    let outcome = std::thread::scope(|scope| {
        for t in 1..threads {
            let worker = &worker;
            scope.spawn(move || worker(t));
        }
        let result = loop {
            let mut guards: Vec<_> =
                parts.iter().map(|p| p.lock().expect("a partition's thread panicked")).collect();
            let step = coord.barrier(&mut guards, wall, progress);
            drop(guards);
            match step {
                Step::Window(end) => {
                    control.end_ps.store(end.as_ps(), Ordering::Release);
                    barrier.wait();
                    for &p in &plan[0] {
                        parts[p]
                            .lock()
                            .expect("a partition's thread panicked")
                            .run_window(end, n_hosts);
                    }
                    barrier.wait();
                }
                Step::Stop(result) => break result,
            }
        };
        control.stop.store(true, Ordering::Release);
        barrier.wait();
        result
    });
    let parts: Vec<Partition> =
        parts.into_iter().map(|p| p.into_inner().expect("no thread panicked")).collect();
    let end = outcome?;
    Ok(coord.finish(parts, end, wall))
}

/// What the barrier decided.
enum Step {
    /// Run the window ending (exclusively) at this time.
    Window(SimTime),
    /// The run is over: stalled or not (an error if it hit the horizon).
    Stop(Result<End, RunError>),
}

/// How the run ended.
struct End {
    stalled: bool,
}

/// The run's global state, kept by the thread that runs the barriers.
struct Coordinator<'s> {
    sim: &'s mut Simulation,
    lookahead: SimTime,
    /// The window that just ran ends here (exclusive); zero before the first.
    window_end: SimTime,
    limit: SimTime,
    /// Data packets of the flows handed out, by start time, not yet past a barrier (for the
    /// time series' arrived packets).
    recent_arrivals: VecDeque<(SimTime, u64)>,
    arrived_before: u64,
    /// Time-series rows built so far (one per sample time).
    series_due: SimTime,
    series_every: SimTime,
    /// With `n-finished`: the deciding completion's time.
    finished_at: Option<SimTime>,
    /// With long-lived flows: (progress count, when first seen).
    progress_mark: (u64, SimTime),
    stall_after: SimTime,
    last_report: f64,
    windows: u64,
    peak_in_flight: u64,
    /// Buffers kept from window to window: the outboxes being delivered, the completions.
    in_transit: Vec<Vec<Crossing>>,
    done: Vec<(SimTime, u32, usize, Completion)>,
}

impl<'s> Coordinator<'s> {
    fn new(sim: &'s mut Simulation, lookahead: SimTime) -> Self {
        let longest_rto_us = sim.spec.transport.max_rto_us.max(sim.spec.pfabric.rto_us);
        let series_every = SimTime::from_us_f64(sim.spec.output.timeseries_us);
        sim.next = sim.workload.next_flow();
        Coordinator {
            limit: sim.stop_at.min(HORIZON),
            lookahead,
            window_end: SimTime::ZERO,
            recent_arrivals: VecDeque::new(),
            arrived_before: 0,
            series_due: if series_every > SimTime::ZERO { SimTime::ZERO } else { SimTime::MAX },
            series_every,
            finished_at: None,
            progress_mark: (0, SimTime::ZERO),
            stall_after: SimTime::from_us_f64(8.0 * longest_rto_us).max(SimTime::from_ms(1)),
            last_report: 0.0,
            windows: 0,
            peak_in_flight: 0,
            in_transit: Vec::new(),
            done: Vec::new(),
            sim,
        }
    }

    /// Everything between two windows (module docs): returns the next window, or the end.
    fn barrier(
        &mut self,
        parts: &mut [std::sync::MutexGuard<'_, Partition>],
        wall: Instant,
        progress: &mut dyn FnMut(&Progress) -> bool,
    ) -> Step {
        let end = self.window_end;
        // 1. Packets crossing: by source partition, then in sending order.
        let mut in_transit = std::mem::take(&mut self.in_transit);
        in_transit.extend(parts.iter_mut().map(|p| std::mem::take(&mut p.fab.outbox)));
        let mut next_event = parts.iter().filter_map(|p| p.next_event).min();
        deliver(&mut in_transit, &self.sim.partitions.of_node, |dest, c| {
            next_event = Some(next_event.map_or(c.at, |t| t.min(c.at)));
            let p = &mut parts[dest];
            p.next_event = Some(p.next_event.map_or(c.at, |t| t.min(c.at)));
            p.fab.receive(c)
        });
        // Hand the (empty) buffers back, keeping their capacity.
        for (p, buf) in parts.iter_mut().zip(in_transit.drain(..)) {
            p.fab.outbox = buf;
        }
        self.in_transit = in_transit;
        let in_flight: u64 = parts.iter().map(|p| p.fab.pool.live() as u64).sum();
        self.peak_in_flight = self.peak_in_flight.max(in_flight);
        // 2. Completions, in order of (time, partition, completion), then the time series.
        let mut done = std::mem::take(&mut self.done);
        for p in parts.iter_mut() {
            let index = p.index;
            done.extend(p.completions.drain(..).enumerate().map(|(k, (t, c))| (t, index, k, c)));
        }
        done.sort_unstable_by_key(|&(t, p, k, _)| (t, p, k));
        let mut applied = 0;
        while self.series_due < end {
            let s = self.series_due;
            while let Some(&(t, _, _, c)) = done.get(applied).filter(|d| d.0 < s) {
                self.complete(t, c);
                applied += 1;
            }
            self.sample_series(s, parts);
        }
        for &(t, _, _, c) in &done[applied..] {
            self.complete(t, c);
        }
        done.clear();
        self.done = done;
        // 3. Stop conditions.
        let sim = &mut *self.sim;
        if let Some(t) = self.finished_at {
            // ns-2's `sim_end`: the flows that had arrived by the deciding completion.
            let keep = sim.records.start_ps.partition_point(|&s| s <= t.as_ps());
            sim.records.truncate(keep);
            sim.at_last_arrival = Some((t, run_bytes_delivered(parts)));
            return Step::Stop(Ok(End { stalled: false }));
        }
        if sim.next.is_none() && sim.completed == sim.records.len() as u64 {
            return Step::Stop(Ok(End { stalled: false }));
        }
        if sim.spec.workload.long_lived_flows > 0 && end > SimTime::ZERO {
            let delivered: u64 =
                parts.iter().map(|p| p.fab.counters.delivered - p.fab.meter.packets).sum();
            let count = delivered + sim.records.len() as u64;
            if count != self.progress_mark.0 {
                self.progress_mark = (count, end);
            } else if end - self.progress_mark.1 > self.stall_after
                && sim.completed < sim.records.len() as u64
            {
                return Step::Stop(Ok(End { stalled: true }));
            }
        }
        if end > self.limit {
            return Step::Stop(Ok(End { stalled: false }));
        }
        // 4. Progress, now and then.
        if self.windows % 1024 == 1023 {
            let secs = wall.elapsed().as_secs_f64();
            if secs - self.last_report >= 0.2 {
                self.last_report = secs;
                let c = PacketCounters::sum(parts.iter().map(|p| &p.fab.counters));
                let p = Progress {
                    sim_time: end,
                    flows_done: sim.completed,
                    flows_started: sim.records.len() as u64,
                    packets_arrived: sim.arrived_packets,
                    packets_injected: c.data - c.data_retransmitted,
                    flows_total: sim.workload.total(),
                    events: parts.iter().map(|p| p.fab.sched.processed()).sum(),
                    wall_seconds: secs,
                };
                if !progress(&p) {
                    return Step::Stop(Err(RunError::Interrupted(end)));
                }
            }
        }
        // 5. The next window: skip ahead over time in which nothing happens.
        let next_arrival = sim.next.as_ref().map(|f| f.start);
        let Some(start) = [next_event, next_arrival].into_iter().flatten().min() else {
            // No event and no arrival left: the flows still open are stuck for good.
            return Step::Stop(Ok(End { stalled: false }));
        };
        let start = start.max(end);
        if start > self.limit {
            if self.limit == HORIZON && sim.stop_at == SimTime::MAX {
                let open = sim.records.len() as u64 - sim.completed;
                return Step::Stop(Err(RunError::Horizon { open }));
            }
            return Step::Stop(Ok(End { stalled: false }));
        }
        let window_end = SimTime(start.as_ps().saturating_add(self.lookahead.as_ps()))
            .min(SimTime(self.limit.as_ps() + 1));
        // 6. The flows arriving in it, to their sources' partitions.
        while let Some(f) = sim.next.take_if(|f| f.start < window_end) {
            let f = sim.admit(f);
            let packets = crate::units::Bytes(f.size_bytes).packets() as u64;
            self.recent_arrivals.push_back((f.start, packets));
            let p = &mut parts[sim.partitions.of_node[f.src as usize] as usize];
            p.fab.schedule(f.start, Event::NextFlow);
            p.next_event = Some(p.next_event.map_or(f.start, |t| t.min(f.start)));
            p.arrivals.push_back(f);
            sim.next = sim.workload.next_flow();
            if sim.next.is_none() {
                sim.at_last_arrival = Some((f.start, run_bytes_delivered(parts)));
            }
        }
        self.window_end = window_end;
        self.windows += 1;
        Step::Window(window_end)
    }

    /// Applies a completion; with `n-finished`, notes the deciding one and ignores later ones.
    fn complete(&mut self, t: SimTime, c: Completion) {
        if self.finished_at.is_some() {
            return;
        }
        self.sim.record_at(t, c);
        if self.sim.finish_target == Some(self.sim.completed) {
            self.finished_at = Some(t);
        }
    }

    /// The time-series row of sample time `s`: the partitions' injected packets then, the
    /// flows arrived before `s` and finished so far (the completions before `s` are applied).
    fn sample_series(&mut self, s: SimTime, parts: &[std::sync::MutexGuard<'_, Partition>]) {
        while let Some(&(t, n)) = self.recent_arrivals.front() {
            if t >= s {
                break;
            }
            self.arrived_before += n;
            self.recent_arrivals.pop_front();
        }
        let k = self.sim.timeseries.t_us.len();
        let ts = &mut self.sim.timeseries;
        if k >= crate::metrics::MAX_SAMPLES {
            ts.truncated = true;
            self.series_due = SimTime::MAX;
            return;
        }
        ts.t_us.push(s.as_us_f64());
        ts.arrived_packets.push(self.arrived_before);
        ts.injected_packets.push(parts.iter().map(|p| p.injected_samples[k]).sum());
        ts.flows_done.push(self.sim.completed);
        self.series_due = s + self.series_every;
    }

    /// The run's output from the partitions' final state.
    fn finish(self, parts: Vec<Partition>, end: End, wall: Instant) -> RunOutput {
        let sim = self.sim;
        let c = PacketCounters::sum(parts.iter().map(|p| &p.fab.counters));
        let in_transit: u64 = parts.iter().map(|p| p.fab.outbox.len() as u64).sum();
        // Per partition: created + received = delivered + dropped + queued + on a wire + sent
        // away; globally, what was sent away was received or is still in transit.
        let mut conservation_error: i64 =
            parts.iter().map(|p| check_conservation(&p.fab).unsigned_abs() as i64).sum();
        conservation_error += (c.sent_away as i64 - c.received as i64 - in_transit as i64).abs();
        debug_assert_eq!(conservation_error, 0, "packets were lost or invented");
        let open = sim.records.len() as u64 - sim.completed;
        let flows_stalled =
            if end.stalled || (sim.stop_at == SimTime::MAX && sim.finish_target.is_none()) {
                open
            } else {
                0
            };
        debug_assert_eq!(flows_stalled, 0, "flows stalled with no event left to move them");
        let now = self
            .finished_at
            .unwrap_or_else(|| parts.iter().map(|p| p.last_event).max().unwrap_or_default());
        let mut per_hop_drops = parts[0].fab.per_hop(|s| s.dropped_packets);
        let mut per_hop_marks = parts[0].fab.per_hop(|s| s.marked_packets);
        for p in &parts[1..] {
            for (k, v) in p.fab.per_hop(|s| s.dropped_packets) {
                *per_hop_drops.entry(k).or_default() += v;
            }
            for (k, v) in p.fab.per_hop(|s| s.marked_packets) {
                *per_hop_marks.entry(k).or_default() += v;
            }
        }
        let mut transport_counters = std::collections::BTreeMap::new();
        for p in &parts {
            for (name, value) in p.host.counters() {
                *transport_counters.entry(name.to_owned()).or_default() += value;
            }
        }
        let long_lived_bytes: u64 = parts.iter().map(|p| p.fab.meter.payload_bytes).sum();
        let ports = sim.port_sampler.is_some().then(|| {
            let rows = parts
                .iter()
                .map(|p| p.port_sampler.as_ref().map(|s| s.rows.clone()).unwrap_or_default())
                .collect();
            PortSamples::merge(rows, sim.spec.output.ports_max_rows)
        });
        let packets = sim.spec.output.packet_trace.then(|| {
            let rows = parts
                .iter()
                .map(|p| p.fab.tracer.as_ref().map(|t| t.rows.clone()).unwrap_or_default())
                .collect::<Vec<PacketTrace>>();
            PacketTrace::merge(rows, sim.spec.output.packet_trace_max_rows)
        });
        let counters = RunCounters {
            events: parts.iter().map(|p| p.fab.sched.processed()).sum(),
            wall_seconds: wall.elapsed().as_secs_f64(),
            sim_time_us: now.as_us_f64(),
            data_packets_injected: c.data,
            control_packets_injected: c.control,
            packets_delivered: c.delivered,
            drops_by_hop: per_hop_drops,
            marks_by_hop: per_hop_marks,
            peak_packets_in_flight: self.peak_in_flight,
            partitions: parts.len() as u64,
            windows: self.windows,
            fct_below_ideal: sim.fct_below_ideal,
            flows_stalled,
            conservation_error,
            throughput_during_arrivals_gbps: match (sim.first_arrival, sim.at_last_arrival) {
                (Some(t0), Some((t1, bytes))) if t1 > t0 => {
                    bytes as f64 * 8.0 / (t1 - t0).as_secs_f64() / 1e9
                }
                _ => 0.0,
            },
            transport_counters,
            long_lived_bytes_delivered: long_lived_bytes,
            long_lived_goodput_gbps: match now.as_secs_f64() {
                secs if secs > 0.0 => long_lived_bytes as f64 * 8.0 / secs / 1e9,
                _ => 0.0,
            },
            timeseries_rows: sim.timeseries.t_us.len() as u64,
            timeseries_truncated: sim.timeseries.truncated,
            ports_rows: ports.as_ref().map_or(0, |p| p.time_ps.len() as u64),
            ports_truncated: ports.as_ref().is_some_and(|p| p.truncated),
            packets_rows: packets.as_ref().map_or(0, |p| p.time_ps.len() as u64),
            packets_truncated: packets.as_ref().is_some_and(|p| p.truncated),
        };
        let warmup =
            (sim.spec.workload.warmup_fraction * sim.records.len() as f64).floor() as usize;
        let summary = summarize(&sim.records, warmup, counters);
        let port_descriptions = if ports.is_some() || packets.is_some() {
            sim.fab.net.ports.iter().map(PortDescription::of).collect()
        } else {
            Vec::new()
        };
        RunOutput {
            records: std::mem::take(&mut sim.records),
            summary,
            timeseries: std::mem::take(&mut sim.timeseries),
            ports,
            packets,
            port_descriptions,
        }
    }
}

/// Hands every crossing to `receive(destination partition, crossing)`: by source partition,
/// then in sending order. The destination's event queue orders events of one time by
/// insertion, so this order decides ties, the same in every run.
fn deliver(
    outboxes: &mut [Vec<Crossing>],
    of_node: &[u32],
    mut receive: impl FnMut(usize, &Crossing),
) {
    for outbox in outboxes.iter_mut() {
        for c in outbox.drain(..) {
            receive(of_node[c.node as usize] as usize, &c);
        }
    }
}

/// Data bytes (on the wire) of the run's flows delivered so far, over every partition.
fn run_bytes_delivered(parts: &[std::sync::MutexGuard<'_, Partition>]) -> u64 {
    parts.iter().map(|p| p.fab.counters.data_bytes_delivered - p.fab.meter.wire_bytes).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, PacketKind};

    fn crossing(at_ns: u64, node: u32, flow: u32) -> Crossing {
        let packet = Packet::new(PacketKind::DATA, flow, 0, 0, 1, 0, 1500, SimTime::ZERO);
        Crossing { at: SimTime::from_ns(at_ns), node, packet, trace: (0, 0) }
    }

    /// Issue 16 item 8: crossings are delivered by source partition, then in sending order,
    /// whatever their times and destinations; the outboxes are left empty.
    #[test]
    fn crossings_are_delivered_by_source_then_sending_order() {
        // Nodes 0-1 are partition 0, node 2 partition 1, node 3 partition 2.
        let of_node = [0, 0, 1, 2];
        let mut outboxes = vec![
            vec![crossing(900, 2, 10), crossing(300, 3, 11)],
            vec![],
            vec![crossing(300, 2, 20), crossing(100, 0, 21), crossing(300, 2, 22)],
        ];
        let mut seen = Vec::new();
        deliver(&mut outboxes, &of_node, |dest, c| seen.push((dest, c.packet.flow)));
        assert_eq!(seen, vec![(1, 10), (2, 11), (1, 20), (0, 21), (1, 22)]);
        assert!(outboxes.iter().all(Vec::is_empty));
    }

    /// Issue 16 item 5: partitions go to threads largest first, each to the least loaded
    /// thread (ties to the lower thread); one thread takes everything.
    #[test]
    fn partitions_are_balanced_over_threads() {
        // Partition 0: 3 hosts + a switch (7); 1: 1 host + a switch (5); 2 and 3: a switch (4).
        let map = PartitionMap {
            of_node: vec![0, 0, 0, 1, 0, 1, 2, 3],
            count: 4,
            lookahead: SimTime::from_ns(200),
        };
        assert_eq!(assign(&map, 4, 2), vec![vec![0, 3], vec![1, 2]]);
        assert_eq!(assign(&map, 4, 1), vec![vec![0, 1, 2, 3]]);
    }
}
