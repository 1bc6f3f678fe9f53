//! Micro-benchmarks: the event queue (timing wheel vs 4-ary heap vs std's binary heap, at the
//! pending-event counts a run sees) and one port's offer/departure cycle on both port paths and
//! through pFabric's priority-dropping discipline.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use dcsim::packet::{Packet, PacketKind, PacketPool};
use dcsim::queue::{
    AnyQueue, DropTail, EcnMarking, Fifo, HopKind, Offer, Port, PortQueue, PriorityDropQueue,
};
use dcsim::units::BitRate;
use dcsim_engine::{EventQueue, HeapQueue, Rng, SimTime};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;

/// Hold model (ns-3 bench-scheduler style): keep `n` events pending; each step pops the
/// earliest and inserts one a random delay later. Delays are drawn like a packet simulation's:
/// mostly 0.2-1.4 µs ahead, one in 64 far ahead (a 200 µs timer).
fn delay(rng: &mut Rng) -> u64 {
    if rng.below(64) == 0 {
        200_000_000
    } else {
        200_000 + rng.below(1_200_000)
    }
}

/// The two engine queues behind one interface, so the hold loop is written once.
trait Hold {
    fn put(&mut self, t: SimTime, e: u32);
    fn take(&mut self) -> (SimTime, u32);
}

impl Hold for EventQueue<u32> {
    fn put(&mut self, t: SimTime, e: u32) {
        self.insert(t, e)
    }
    fn take(&mut self) -> (SimTime, u32) {
        self.pull().unwrap()
    }
}

impl Hold for HeapQueue<u32> {
    fn put(&mut self, t: SimTime, e: u32) {
        self.insert(t, e)
    }
    fn take(&mut self) -> (SimTime, u32) {
        self.pull().unwrap()
    }
}

/// std's binary heap with an explicit FIFO tie-break, for reference.
#[derive(Default)]
struct StdHeap {
    heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
    seq: u64,
}

impl Hold for StdHeap {
    fn put(&mut self, t: SimTime, e: u32) {
        self.heap.push(Reverse((t.0, self.seq, e)));
        self.seq += 1;
    }
    fn take(&mut self) -> (SimTime, u32) {
        let Reverse((t, _, e)) = self.heap.pop().unwrap();
        (SimTime(t), e)
    }
}

fn hold<Q: Hold>(b: &mut criterion::Bencher, mut q: Q, n: usize) {
    let mut rng = Rng::new(1);
    for i in 0..n {
        q.put(SimTime(delay(&mut rng)), i as u32);
    }
    b.iter(|| {
        let (t, e) = q.take();
        q.put(SimTime(t.0 + delay(&mut rng)), black_box(e));
    })
}

fn event_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_hold");
    for &n in &[1_000usize, 100_000, 1_000_000] {
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::new("wheel", n), &n, |b, &n| hold(b, EventQueue::new(), n));
        g.bench_with_input(BenchmarkId::new("heap4", n), &n, |b, &n| hold(b, HeapQueue::new(), n));
        g.bench_with_input(BenchmarkId::new("std_binary_heap", n), &n, |b, &n| {
            hold(b, StdHeap::default(), n)
        });
    }
    g.finish();
}

fn packet(pool: &mut PacketPool, i: u32) -> u32 {
    pool.alloc(Packet {
        ecn: 1,
        ..Packet::new(PacketKind::DATA, i, i, 0, 1, 0, 1500, SimTime::ZERO)
    })
}

fn port(queue: PortQueue) -> Port {
    Port::new(
        0,
        1,
        false,
        false,
        BitRate::from_gbps(10.0),
        SimTime::from_ns(200),
        HopKind::Core,
        queue,
        EcnMarking::Instantaneous { threshold_bytes: 22_500 },
    )
}

/// A port kept about 8 packets deep: each step offers one packet and lets one leave.
fn port_offer_depart(c: &mut Criterion) {
    let mut g = c.benchmark_group("port");
    g.throughput(Throughput::Elements(1));
    g.bench_function("timeline_fifo", |b| {
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(1);
        let mut p = port(PortQueue::Timeline(DropTail::new(36_864)));
        let ids: Vec<u32> = (0..16).map(|i| packet(&mut pool, i)).collect();
        let mut now = SimTime::ZERO;
        let mut k = 0;
        for _ in 0..8 {
            p.offer(ids[k % 16], now, &mut pool, &mut rng);
            k += 1;
        }
        b.iter(|| {
            now += SimTime::from_ns(1200); // one departure per packet time keeps the depth
            let o = p.offer(ids[k % 16], now, &mut pool, &mut rng);
            k += 1;
            black_box(matches!(o, Offer::Depart { .. }))
        })
    });
    g.bench_function("event_driven_fifo", |b| {
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(1);
        let mut p = port(PortQueue::Scheduled(AnyQueue::Fifo(Fifo::new(36_864))));
        p.busy_until = SimTime::MAX; // always busy: every offer goes through the discipline
        let ids: Vec<u32> = (0..16).map(|i| packet(&mut pool, i)).collect();
        for &id in &ids[..8] {
            p.offer(id, SimTime::ZERO, &mut pool, &mut rng);
        }
        let mut k = 8;
        b.iter(|| {
            let out = p.next_departure(SimTime::ZERO, &pool, &mut rng).unwrap();
            black_box(out);
            p.busy_until = SimTime::MAX;
            p.offer(ids[k % 16], SimTime::ZERO, &mut pool, &mut rng);
            k += 1;
        })
    });
    // pFabric's port (HotNets'12 §2.2), 20 packets deep as on the pHost fabric's 36 KB ports: each
    // step sends the most urgent flow's earliest packet and offers it again with a new priority
    // number, drawn so that a quarter are 0 (ACKs, which tie) and the rest spread over a
    // flow's remaining bytes.
    g.bench_function("pfabric", |b| {
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(1);
        let mut p =
            port(PortQueue::Scheduled(AnyQueue::PriorityDrop(PriorityDropQueue::new(36_864))));
        p.busy_until = SimTime::MAX;
        let mut draw = Rng::new(2);
        let mut urgency = move || match draw.below(4) {
            0 => 0,
            _ => 1_460 * (1 + draw.below(1_000)),
        };
        for i in 0..20 {
            let id = packet(&mut pool, i % 6);
            pool.get_mut(id).priority = urgency();
            p.offer(id, SimTime::ZERO, &mut pool, &mut rng);
        }
        b.iter(|| {
            let (id, _) = p.next_departure(SimTime::ZERO, &pool, &mut rng).unwrap();
            p.busy_until = SimTime::MAX;
            pool.get_mut(id).priority = urgency();
            black_box(p.offer(id, SimTime::ZERO, &mut pool, &mut rng));
        })
    });
    g.finish();
}

criterion_group!(benches, event_queue, port_offer_depart);
criterion_main!(benches);
