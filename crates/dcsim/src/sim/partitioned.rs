//! The partitioned run: one sequential sub-simulation per partition of the fabric
//! ([`crate::partition`]), advanced window by window with conservative synchronisation, on as
//! many threads as asked. Threads only execute partitions: the partitions, their event
//! sequences and what crosses between them at each barrier are the same for every thread
//! count, so the results are byte-identical for 1, 2 or N threads.
//!
//! Each window is `[start, start + lookahead)`. Within it every partition processes its own
//! events; a packet leaving by a port whose peer is in another partition goes into the
//! partition's outbox (it arrives at `lookahead` or later, so never within the window). Once
//! every thread finished the window, each delivers the crossings sent to its own partitions, in
//! order of source partition, then of sending, while one thread (the caller's) alone:
//! * applies the window's flow completions to the run's flow records in order of (time,
//!   partition, completion), ending the run at the `workload.flows`-th with
//!   `stop_when = "n-finished"`;
//! * builds the time-series rows due in the window (the partitions' injected packets at each
//!   sample time are added up at the end of the run);
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
use crate::fabric::{Crossing, Event, Fabric, FlowMeter, Outboxes, PacketCounters};
use crate::metrics::{
    summarize, PacketTrace, PacketTracer, PortDescription, PortSampler, PortSamples, RunCounters,
};
use crate::partition::PartitionMap;
use crate::sim::{Progress, RunOutput};
use crate::transport::{AnyHost, Completion, HostTransport};
use crate::units::HORIZON;
use crate::workload::{is_long_lived, FlowArrival, LONG_LIVED_ID};
use crossbeam_utils::CachePadded;
use dcsim_engine::SimTime;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
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

    /// Nothing to do before `end`: no event and no sample due (most partitions, most windows,
    /// at low load).
    fn idle_until(&self, end: SimTime) -> bool {
        self.next_event.is_none_or(|t| t >= end) && self.clock.next() >= end
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

/// Each partition's expected share of the work: the sum of its ports' rates (Mbit/s). A
/// node's events are mostly its packets' arrivals, and the packets a port carries grow with
/// its rate: in the 144-host leaf-spine a spine (9 × 40 Gbit/s) weighs 0.75 of a rack (16 ×
/// 10 + 4 × 40 Gbit/s of ToR ports and 16 × 10 Gbit/s of NICs), close to the 0.74 measured
/// from events per partition (docs/parallel.md, "Speed").
pub(super) fn partition_weights(map: &PartitionMap, ports: &[crate::queue::Port]) -> Vec<u64> {
    let mut weight = vec![0u64; map.count as usize];
    for port in ports {
        weight[map.of_node[port.owner as usize] as usize] += port.rate.0 / 1_000_000;
    }
    weight
}

/// The width of a partition's event-queue slots (log2 of picoseconds): about the time its
/// ports take to send 80 kbit (seven 1,500-byte packets) at their summed line rate
/// (`capacity_mbps`, its weight), never narrower than the sequential model's 8.2 ns.
///
/// Why: a slot turn costs about 50 instructions however many events the slot holds, and a
/// partition's queue holds only its own ports' events; with the sequential model's slots a
/// rack of the 144-host leaf-spine turned its wheel for almost every event (16.8 M turns for
/// 20.8 M events, against 6.1 M in the sequential model). The 80 kbit were measured
/// (docs/performance.md, "The partitioned model's own cost"): a rack of the leaf-spine gets
/// 131 ns and a pod of the k = 16 fat-tree 33 ns, the widths with the fewest instructions on
/// each. Only the speed depends on it.
fn slot_bits(capacity_mbps: u64) -> u32 {
    const BITS_PER_SLOT: f64 = 80_000.0;
    let slot_ps = BITS_PER_SLOT / (capacity_mbps.max(1) as f64 * 1e6) * 1e12;
    (slot_ps.log2().round() as u32).clamp(dcsim_engine::DEFAULT_SLOT_BITS, 18)
}

/// Which partitions each thread runs, each thread's in increasing order: the partitions in
/// order of decreasing weight, each to the least loaded thread (ties to the lower thread),
/// then single moves and swaps between the most and the least loaded thread while they lower
/// the larger of the two loads. Only the speed depends on it.
pub(super) fn assign(weight: &[u64], threads: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..weight.len()).collect();
    order.sort_by_key(|&p| (std::cmp::Reverse(weight[p]), p));
    let mut load = vec![0u64; threads];
    let mut out = vec![Vec::new(); threads];
    for p in order {
        let t = (0..threads).min_by_key(|&t| (load[t], t)).expect("at least one thread");
        load[t] += weight[p];
        out[t].push(p);
    }
    // Each step strictly lowers the larger load of a pair without raising any other thread's
    // load above it, so the sum of squared loads falls and the loop ends.
    loop {
        let hi = (0..threads).max_by_key(|&t| (load[t], std::cmp::Reverse(t))).expect("threads");
        let lo = (0..threads).min_by_key(|&t| (load[t], t)).expect("threads");
        let best_after = |moved_out: u64, moved_in: u64| {
            (load[hi] - moved_out + moved_in).max(load[lo] + moved_out - moved_in)
        };
        let mut best: Option<(u64, usize, Option<usize>)> = None;
        for (i, &a) in out[hi].iter().enumerate() {
            let candidates = std::iter::once(None).chain((0..out[lo].len()).map(Some));
            for j in candidates {
                let b = j.map_or(0, |j| weight[out[lo][j]]);
                if weight[a] <= b {
                    continue;
                }
                let after = best_after(weight[a], b);
                if after < load[hi] && best.is_none_or(|(x, _, _)| after < x) {
                    best = Some((after, i, j));
                }
            }
        }
        let Some((_, i, j)) = best.filter(|_| hi != lo) else { break };
        let a = out[hi].remove(i);
        load[hi] -= weight[a];
        load[lo] += weight[a];
        if let Some(j) = j {
            let b = out[lo].remove(j);
            load[lo] -= weight[b];
            load[hi] += weight[b];
            out[hi].push(b);
        }
        out[lo].push(a);
    }
    for ps in &mut out {
        ps.sort_unstable();
    }
    out
}

/// Spins until `ready()`. The expected waits are shorter than a window's work (a few
/// microseconds), less than what giving the core away costs (`yield_now` is a system call,
/// and on a virtual machine another thread may then run for a whole time slice), so it spins
/// with the processor's pause hint; a wait longer than a few windows (a thread descheduled
/// on an oversubscribed machine) falls back to yielding, which lets that thread run sooner.
fn spin_until(ready: impl Fn() -> bool) {
    /// About 7 µs of pause instructions on the project's machine (AMD EPYC); with 4,096
    /// (about 100 µs), 2 threads on a loaded machine took 2-8 times as long (docs/parallel.md).
    const SPINS_BEFORE_YIELD: u32 = 256;
    let mut spins = 0;
    while !ready() {
        if spins < SPINS_BEFORE_YIELD {
            spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// What a thread reports after each window about its partitions, for the coordinator (the
/// run's totals are sums over the threads).
#[derive(Default)]
struct Report {
    /// Their earliest pending event once the window's crossings are delivered: the earliest of
    /// their next events and of the crossings they sent (ps; `u64::MAX`: none).
    next_event: AtomicU64,
    /// Packets alive in them once the crossings are delivered: their pools' plus the
    /// crossings they sent.
    in_flight: AtomicU64,
    /// Completions they put in the thread's completion buffer.
    completions: AtomicU64,
    /// Data bytes (on the wire) of the run's flows delivered.
    bytes_delivered: AtomicU64,
    /// Data packets injected, retransmissions left out.
    injected: AtomicU64,
    /// Events processed.
    events: AtomicU64,
}

/// The run's totals after a window, summed from the threads' reports.
#[derive(Default)]
struct Totals {
    next_event: Option<SimTime>,
    in_flight: u64,
    bytes_delivered: u64,
    injected: u64,
    events: u64,
}

impl Totals {
    /// The totals of `parts` as they stand (before the first window).
    fn of(parts: &[Partition]) -> Self {
        let mut t = Totals::default();
        for p in parts {
            t.add_partition(p);
        }
        t
    }

    fn add_partition(&mut self, p: &Partition) {
        self.next_event = earliest(self.next_event, p.next_event);
        self.in_flight += p.fab.pool.live() as u64;
        self.bytes_delivered += p.fab.counters.data_bytes_delivered - p.fab.meter.wire_bytes;
        self.injected += p.fab.counters.data - p.fab.counters.data_retransmitted;
        self.events += p.fab.sched.processed();
    }

    fn publish(&self, r: &Report, completions: u64) {
        let next = self.next_event.map_or(u64::MAX, SimTime::as_ps);
        r.next_event.store(next, Ordering::Relaxed);
        r.in_flight.store(self.in_flight, Ordering::Relaxed);
        r.completions.store(completions, Ordering::Relaxed);
        r.bytes_delivered.store(self.bytes_delivered, Ordering::Relaxed);
        r.injected.store(self.injected, Ordering::Relaxed);
        r.events.store(self.events, Ordering::Relaxed);
    }

    /// The sum of the threads' reports.
    fn sum(reports: &[CachePadded<Report>]) -> Self {
        let mut t = Totals::default();
        for r in reports {
            let next = r.next_event.load(Ordering::Relaxed);
            if next != u64::MAX {
                t.next_event = Some(t.next_event.map_or(SimTime(next), |x| x.min(SimTime(next))));
            }
            t.in_flight += r.in_flight.load(Ordering::Relaxed);
            t.bytes_delivered += r.bytes_delivered.load(Ordering::Relaxed);
            t.injected += r.injected.load(Ordering::Relaxed);
            t.events += r.events.load(Ordering::Relaxed);
        }
        t
    }
}

/// A completion as the coordinator orders them: (time, partition, index in the partition's
/// window).
type Done = (SimTime, u32, usize, Completion);

/// A buffer one thread writes and another reads, on its own cache lines.
type Slot<T> = CachePadded<Mutex<Vec<T>>>;

/// What the threads share. Each buffer has one writer and one reader at a time, in turns set
/// by the window counters, so no lock is ever contended; each sits on its own cache lines.
struct Shared {
    threads: usize,
    /// Windows decided by the coordinator: window w may run once `decided >= w`.
    decided: AtomicU64,
    /// The decided window's end (ps, exclusive).
    end_ps: AtomicU64,
    /// The run is over (set with the last decision).
    stop: AtomicBool,
    /// Windows finished, summed over the threads: every thread finished window w once
    /// `finished >= threads · w`.
    finished: AtomicU64,
    reports: Vec<CachePadded<Report>>,
    /// Per thread: its partitions' completions of the window.
    completions: Vec<Slot<Done>>,
    /// Per thread: the flows arriving in the next window at its partitions' hosts, in arrival
    /// order, with their partition.
    arrivals: Vec<Slot<(u32, FlowArrival)>>,
    /// Per (window parity, source thread, destination thread): the crossings sent in the
    /// window by the source's partitions to the destination's, each with its source
    /// partition, in order of source partition then of sending. The parity lets a thread
    /// deliver window w's crossings while another already sends window w + 1's.
    crossings: Vec<Slot<Crossing>>,
}

impl Shared {
    fn new(threads: usize) -> Self {
        fn padded<T>(n: usize) -> Vec<Slot<T>> {
            (0..n).map(|_| CachePadded::new(Mutex::default())).collect()
        }
        Shared {
            threads,
            decided: AtomicU64::new(0),
            end_ps: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            finished: AtomicU64::new(0),
            reports: (0..threads).map(|_| CachePadded::new(Report::default())).collect(),
            completions: padded(threads),
            arrivals: padded(threads),
            crossings: padded(2 * threads * threads),
        }
    }

    fn crossings(&self, window: u64, from: usize, to: usize) -> MutexGuard<'_, Vec<Crossing>> {
        let k = ((window % 2) as usize * self.threads + from) * self.threads + to;
        self.crossings[k].lock().expect("no thread panicked")
    }

    /// The coordinator publishes its decision for window `w`.
    fn decide(&self, w: u64, step: &Step) {
        match step {
            Step::Window(end) => self.end_ps.store(end.as_ps(), Ordering::Relaxed),
            Step::Stop(_) => self.stop.store(true, Ordering::Relaxed),
        }
        self.decided.store(w, Ordering::Release);
    }
}

/// One thread's partitions, locked for the whole run (no other thread touches them).
struct Worker<'a> {
    thread: usize,
    shared: &'a Shared,
    mine: Vec<MutexGuard<'a, Partition>>,
    /// Each partition's position in `mine` (`usize::MAX`: another thread's).
    local: Vec<usize>,
    of_node: &'a [u32],
    n_hosts: u32,
    /// Scratch, kept from window to window: the crossing buffers being written or read, and
    /// the read positions.
    buffers: Vec<MutexGuard<'a, Vec<Crossing>>>,
    read_at: Vec<usize>,
}

impl Worker<'_> {
    /// Runs window `w` once decided, reports, waits until every thread finished it and
    /// delivers the crossings sent to this thread's partitions. False when the run is over.
    fn window(&mut self, w: u64) -> bool {
        let shared = self.shared;
        spin_until(|| shared.decided.load(Ordering::Acquire) >= w);
        if shared.stop.load(Ordering::Relaxed) {
            return false;
        }
        let end = SimTime(shared.end_ps.load(Ordering::Relaxed));
        // The flows arriving in the window, after the crossings (delivered at the end of the
        // previous window): the order in which they are scheduled decides ties.
        for (p, f) in shared.arrivals[self.thread].lock().expect("no thread panicked").drain(..) {
            let part = &mut self.mine[self.local[p as usize]];
            part.fab.schedule(f.start, Event::NextFlow);
            part.next_event = earliest(part.next_event, Some(f.start));
            part.arrivals.push_back(f);
        }
        // Run the partitions (in increasing order, so each destination's buffer holds the
        // crossings by source partition, then in sending order), each writing its crossings
        // straight into this thread's buffers for their destinations' threads.
        self.buffers.extend((0..shared.threads).map(|to| shared.crossings(w, self.thread, to)));
        let mut totals = Totals::default();
        for part in &mut self.mine {
            if part.idle_until(end) {
                continue;
            }
            lend(&mut part.fab.outboxes.buffers, &mut self.buffers);
            part.run_window(end, self.n_hosts);
            lend(&mut part.fab.outboxes.buffers, &mut self.buffers);
            let (sent, earliest_sent) = part.fab.outboxes.take_sent();
            totals.next_event = earliest(totals.next_event, earliest_sent);
            totals.in_flight += sent;
        }
        self.buffers.clear();
        let mut completions = 0;
        for part in &mut self.mine {
            totals.add_partition(part);
            if !part.completions.is_empty() {
                let index = part.index;
                let mut buf = shared.completions[self.thread].lock().expect("no thread panicked");
                completions += part.completions.len() as u64;
                buf.extend(
                    part.completions.drain(..).enumerate().map(|(k, (t, c))| (t, index, k, c)),
                );
            }
        }
        totals.publish(&shared.reports[self.thread], completions);
        shared.finished.fetch_add(1, Ordering::AcqRel);
        spin_until(|| shared.finished.load(Ordering::Acquire) >= shared.threads as u64 * w);
        true
    }

    /// Delivers window `w`'s crossings to this thread's partitions: by source partition, then
    /// in sending order (the destination's event queue orders events of one time by insertion,
    /// so this order decides ties, the same for every thread count).
    fn deliver(&mut self, w: u64) {
        let shared = self.shared;
        self.buffers.extend((0..shared.threads).map(|from| shared.crossings(w, from, self.thread)));
        let (mine, local, of_node) = (&mut self.mine, &self.local, self.of_node);
        merge_by_source(&mut self.buffers, &mut self.read_at, |c| {
            let part = &mut mine[local[of_node[c.node as usize] as usize]];
            part.next_event = earliest(part.next_event, Some(c.at));
            part.fab.receive(c);
        });
        self.buffers.clear();
    }
}

/// Swaps a partition's stand-in outboxes with the thread's crossing buffers (one per thread
/// of destination): before its window, so that it writes into them, and after, to give them
/// back.
fn lend<B>(outboxes: &mut [Vec<Crossing>], buffers: &mut [B])
where
    B: std::ops::DerefMut<Target = Vec<Crossing>>,
{
    for (out, buf) in outboxes.iter_mut().zip(buffers) {
        std::mem::swap(out, &mut **buf);
    }
}

/// Hands every crossing of `inboxes` (each in order of source partition, then of sending; one
/// source partition's crossings all in one inbox) to `receive`, in order of source partition,
/// then of sending, and empties the inboxes (`at`: scratch for the read positions).
fn merge_by_source<B>(inboxes: &mut [B], at: &mut Vec<usize>, mut receive: impl FnMut(&Crossing))
where
    B: std::ops::DerefMut<Target = Vec<Crossing>>,
{
    at.clear();
    at.resize(inboxes.len(), 0);
    loop {
        let next =
            (0..inboxes.len()).filter_map(|i| inboxes[i].get(at[i]).map(|c| (c.from, i))).min();
        let Some((src, i)) = next else { break };
        while let Some(c) = inboxes[i].get(at[i]) {
            if c.from != src {
                break;
            }
            receive(c);
            at[i] += 1;
        }
    }
    for inbox in inboxes {
        inbox.clear();
    }
}

/// Runs `sim` partitioned (its map has more than one partition) on `threads` threads.
///
/// Each window has one meeting point: every thread runs its partitions' window, hands their
/// crossings to the destinations' threads, reports and signals that it finished; once all
/// have, each thread delivers what was sent to its partitions while the coordinator (the
/// calling thread) alone applies the completions, checks the stop conditions, picks the next
/// window and hands out its arriving flows, then publishes its decision.
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
    let weights = partition_weights(&map, &sim.fab.net.ports);
    let plan = assign(&weights, threads);
    let mut thread_of = vec![0; n_parts];
    for (t, ps) in plan.iter().enumerate() {
        for &p in ps {
            thread_of[p] = t;
        }
    }
    // The partitions, each with its own fabric and transport.
    let mut parts: Vec<Partition> = Vec::with_capacity(n_parts);
    for (i, net) in std::mem::take(&mut sim.replicas).into_iter().enumerate() {
        let mut net = net;
        for p in net.ports.iter_mut() {
            p.remote = map.of_node[p.owner as usize] != map.of_node[p.peer as usize];
        }
        let mut fab = Fabric::new(net, spec.topology.load_balancing, spec.seed, true);
        fab.set_slot_bits(slot_bits(weights[i]));
        let thread_of_node = map.of_node.iter().map(|&p| thread_of[p as usize] as u32).collect();
        fab.outboxes = Outboxes::new(i as u32, thread_of_node, threads);
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
    let shared = Shared::new(threads);
    let mut coord = Coordinator::new(&mut sim, map.lookahead);
    // The first window.
    let hand = |p: usize, f: FlowArrival| {
        let mut inbox = shared.arrivals[thread_of[p]].lock().expect("no thread panicked");
        inbox.push((p as u32, f));
    };
    let first = coord.decide(&Totals::of(&parts), &mut Vec::new(), wall, progress, &hand);
    shared.decide(1, &first);
    let parts: Vec<CachePadded<Mutex<Partition>>> =
        parts.into_iter().map(|p| CachePadded::new(Mutex::new(p))).collect();
    let worker = |thread: usize| {
        let mut local = vec![usize::MAX; n_parts];
        for (k, &p) in plan[thread].iter().enumerate() {
            local[p] = k;
        }
        let mine = plan[thread].iter().map(|&p| parts[p].lock().expect("no thread panicked"));
        Worker {
            thread,
            shared: &shared,
            mine: mine.collect(),
            local,
            of_node: &map.of_node,
            n_hosts,
            buffers: Vec::with_capacity(threads),
            read_at: Vec::with_capacity(threads),
        }
    };
    let outcome = std::thread::scope(|scope| {
        for t in 1..threads {
            let worker = &worker;
            scope.spawn(move || {
                let mut me = worker(t);
                let mut w = 1;
                while me.window(w) {
                    me.deliver(w);
                    w += 1;
                }
            });
        }
        let mut me = worker(0);
        let mut step = first;
        let mut done = Vec::new();
        let mut w = 1;
        loop {
            if let Step::Stop(result) = step {
                break result;
            }
            me.window(w);
            for (t, r) in shared.reports.iter().enumerate() {
                if r.completions.load(Ordering::Relaxed) > 0 {
                    done.append(&mut shared.completions[t].lock().expect("no thread panicked"));
                }
            }
            step = coord.decide(&Totals::sum(&shared.reports), &mut done, wall, progress, &hand);
            shared.decide(w + 1, &step);
            me.deliver(w);
            w += 1;
        }
    });
    let parts: Vec<Partition> = parts
        .into_iter()
        .map(|p| CachePadded::into_inner(p).into_inner().expect("no thread panicked"))
        .collect();
    let end = outcome?;
    // Every window's crossings are delivered before the next: none should be left.
    let in_transit =
        shared.crossings.iter().map(|b| b.lock().expect("no thread panicked").len()).sum();
    Ok(coord.finish(parts, in_transit, end, wall))
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
    /// Ends the run once its flows stop progressing.
    stall_watch: super::StallWatch,
    last_report: f64,
    windows: u64,
    peak_in_flight: u64,
}

impl<'s> Coordinator<'s> {
    fn new(sim: &'s mut Simulation, lookahead: SimTime) -> Self {
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
            stall_watch: super::StallWatch::new(&sim.transport, &sim.fab.net),
            last_report: 0.0,
            windows: 0,
            peak_in_flight: 0,
            sim,
        }
    }

    /// Everything between two windows (module docs), from the run's totals after the window
    /// and its completions (`done`, in any order; left empty): returns the next window, or the
    /// end. The flows arriving in the next window go to `hand(partition, flow)`.
    fn decide(
        &mut self,
        totals: &Totals,
        done: &mut Vec<Done>,
        wall: Instant,
        progress: &mut dyn FnMut(&Progress) -> bool,
        hand: &dyn Fn(usize, FlowArrival),
    ) -> Step {
        let end = self.window_end;
        self.peak_in_flight = self.peak_in_flight.max(totals.in_flight);
        // Completions, in order of (time, partition, completion), then the time series.
        done.sort_unstable_by_key(|&(t, p, k, _)| (t, p, k));
        let mut applied = 0;
        while self.series_due < end {
            let s = self.series_due;
            while let Some(&(t, _, _, c)) = done.get(applied).filter(|d| d.0 < s) {
                self.complete(t, c);
                applied += 1;
            }
            self.sample_series(s);
        }
        for &(t, _, _, c) in &done[applied..] {
            self.complete(t, c);
        }
        done.clear();
        // 3. Stop conditions.
        let sim = &mut *self.sim;
        if let Some(t) = self.finished_at {
            // `n-finished`: the flows that had arrived by the deciding completion.
            let keep = sim.records.start_ps.partition_point(|&s| s <= t.as_ps());
            sim.records.truncate(keep);
            sim.at_last_arrival = Some((t, totals.bytes_delivered));
            return Step::Stop(Ok(End { stalled: false }));
        }
        if sim.next.is_none() && sim.completed == sim.records.len() as u64 {
            return Step::Stop(Ok(End { stalled: false }));
        }
        let open = sim.completed < sim.records.len() as u64;
        let so_far = totals.bytes_delivered + sim.records.len() as u64;
        if end > SimTime::ZERO && self.stall_watch.stalled(end, so_far, open) {
            return Step::Stop(Ok(End { stalled: true }));
        }
        if end > self.limit {
            return Step::Stop(Ok(End { stalled: false }));
        }
        // 4. Progress, now and then.
        if self.windows % 1024 == 1023 {
            let secs = wall.elapsed().as_secs_f64();
            if secs - self.last_report >= 0.2 {
                self.last_report = secs;
                let p = Progress {
                    sim_time: end,
                    flows_done: sim.completed,
                    flows_started: sim.records.len() as u64,
                    packets_arrived: sim.arrived_packets,
                    packets_injected: totals.injected,
                    flows_total: sim.workload.total(),
                    events: totals.events,
                    wall_seconds: secs,
                };
                if !progress(&p) {
                    return Step::Stop(Err(RunError::Interrupted(end)));
                }
            }
        }
        // 5. The next window: skip ahead over time in which nothing happens.
        let next_arrival = sim.next.as_ref().map(|f| f.start);
        let Some(start) = earliest(totals.next_event, next_arrival) else {
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
            let (start, src) = (f.start, f.src);
            hand(sim.partitions.of_node[src as usize] as usize, f);
            sim.next = sim.workload.next_flow();
            if sim.next.is_none() {
                sim.at_last_arrival = Some((start, totals.bytes_delivered));
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

    /// The time-series row of sample time `s`: the flows arrived before `s` and finished so
    /// far (the completions before `s` are applied); the partitions' injected packets then
    /// are added up at the end of the run.
    fn sample_series(&mut self, s: SimTime) {
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
        ts.injected_packets.push(0);
        ts.flows_done.push(self.sim.completed);
        self.series_due = s + self.series_every;
    }

    /// The run's output from the partitions' final state.
    fn finish(
        self,
        parts: Vec<Partition>,
        in_transit: usize,
        end: End,
        wall: Instant,
    ) -> RunOutput {
        let sim = self.sim;
        for (k, injected) in sim.timeseries.injected_packets.iter_mut().enumerate() {
            *injected = parts.iter().map(|p| p.injected_samples[k]).sum();
        }
        let c = PacketCounters::sum(parts.iter().map(|p| &p.fab.counters));
        let in_transit = in_transit as u64;
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
            throughput_during_arrivals_gbps: sim.throughput_during_arrivals_gbps(),
            offered_load: sim.workload.offered_load(),
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

/// The earlier of two optional times.
fn earliest(a: Option<SimTime>, b: Option<SimTime>) -> Option<SimTime> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        _ => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, PacketKind};

    fn crossing(from: u32, at_ns: u64, node: u32, flow: u32) -> Crossing {
        let packet = Packet::new(PacketKind::DATA, flow, 0, 0, 1, 0, 1500, SimTime::ZERO);
        let at = SimTime::from_ns(at_ns);
        Crossing { packet, at, trace_id: 0, trace_port: 0, node, from }
    }

    /// A crossing takes two cache lines (the packet's and one more).
    #[test]
    fn a_crossing_is_two_cache_lines() {
        assert_eq!(std::mem::size_of::<Crossing>(), 128);
    }

    /// Issue 16 item 8: crossings are delivered by source partition, then in sending order,
    /// whatever their times, destinations and the thread that sent them; the inboxes are left
    /// empty.
    #[test]
    fn crossings_are_delivered_by_source_then_sending_order() {
        // Thread 0 ran partitions 0 and 3, thread 1 partitions 1 and 2.
        let mut from_thread_0 =
            vec![crossing(0, 900, 2, 10), crossing(0, 300, 3, 11), crossing(3, 50, 2, 30)];
        let mut from_thread_1 = vec![
            crossing(1, 100, 2, 40),
            crossing(2, 300, 2, 20),
            crossing(2, 100, 0, 21),
            crossing(2, 300, 2, 22),
        ];
        let mut inboxes = [&mut from_thread_0, &mut from_thread_1];
        let mut seen = Vec::new();
        merge_by_source(&mut inboxes, &mut Vec::new(), |c| seen.push(c.packet.flow));
        assert_eq!(seen, vec![10, 11, 40, 20, 21, 22, 30]);
        assert!(from_thread_0.is_empty() && from_thread_1.is_empty());
    }

    /// Issue 16 lever 1: partitions go to threads largest first, each to the least loaded
    /// thread, then moves and swaps even out the loads; each thread's partitions are listed
    /// in increasing order; one thread takes everything.
    #[test]
    fn partitions_are_balanced_over_threads() {
        // Largest first gives [0, 3] (7 + 4 = 11) and [1, 2, 4] (7 + 3 + 2 = 12); no move or
        // swap lowers 12.
        assert_eq!(assign(&[7, 7, 3, 4, 2], 2), vec![vec![0, 3], vec![1, 2, 4]]);
        // The 144-host leaf-spine's weights (9 racks of 480, 4 spines of 360): largest first
        // gives 5 racks + 1 spine (2,760) and 4 racks + 3 spines (3,000); swapping a rack for a
        // spine (the first rack of the heavier thread, 1, for its only spine, 11) evens them at
        // 2,880.
        let mut leaf_spine = vec![480; 9];
        leaf_spine.extend([360; 4]);
        let plan = assign(&leaf_spine, 2);
        let load = |t: usize| plan[t].iter().map(|&p| leaf_spine[p]).sum::<u64>();
        assert_eq!((load(0), load(1)), (2880, 2880));
        assert_eq!(plan, vec![vec![0, 1, 2, 4, 6, 8], vec![3, 5, 7, 9, 10, 11, 12]]);
        assert_eq!(assign(&[7, 7, 3, 4, 2], 1), vec![vec![0, 1, 2, 3, 4]]);
        assert_eq!(assign(&[5, 5], 3), vec![vec![0], vec![1], vec![]]);
    }

    /// Issue 16 lever 1: a partition weighs the rates of its ports (Mbit/s): in the 144-host
    /// leaf-spine a rack is 16 NICs and 16 ToR ports at 10 Gbit/s plus 4 uplinks at 40, a
    /// spine 9 ports at 40.
    #[test]
    fn partitions_weigh_their_port_rates() {
        let spec = crate::spec::Spec::from_toml_str("[topology]\nkind = \"leaf-spine\"").unwrap();
        let net = crate::topology::Network::build_with_service_hosts(&spec.topology, 0, &|_| {
            (
                crate::queue::PortQueue::Timeline(crate::queue::DropTail::new(100_000)),
                crate::queue::EcnMarking::Off,
            )
        });
        let map = PartitionMap::of(&spec.topology, &net);
        let mut expected = vec![16 * 10_000 + 16 * 10_000 + 4 * 40_000; 9];
        expected.extend([9 * 40_000; 4]);
        assert_eq!(partition_weights(&map, &net.ports), expected);
    }
}
