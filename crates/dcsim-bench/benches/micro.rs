//! Micro-benchmarks: the event queue (4-ary heap vs std's binary heap, at the pending-event
//! counts a run sees) and one port's enqueue/dequeue.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use dcsim::packet::{Packet, PacketKind, PacketPool};
use dcsim::queue::{AnyQueue, EcnMarking, Fifo, HopKind, Port, PortQueue};
use dcsim::units::BitRate;
use dcsim_engine::{EventQueue, Rng, SimTime};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;

/// Hold-model benchmark: keep `n` events pending; each step pops the earliest and inserts one
/// a random delay later (the classic priority-queue benchmark, ns-3 bench-scheduler style).
fn event_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_hold");
    for &n in &[1_000usize, 100_000, 1_000_000] {
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::new("dary4", n), &n, |b, &n| {
            let mut q = EventQueue::new();
            let mut rng = Rng::new(1);
            for i in 0..n {
                q.insert(SimTime(rng.below(1_000_000)), i as u32);
            }
            b.iter(|| {
                let (t, e) = q.pull().unwrap();
                q.insert(SimTime(t.0 + rng.below(1_000_000)), black_box(e));
            })
        });
        g.bench_with_input(BenchmarkId::new("std_binary_heap", n), &n, |b, &n| {
            let mut q = BinaryHeap::new();
            let mut rng = Rng::new(1);
            let mut seq = 0u64;
            for i in 0..n {
                q.push(Reverse((rng.below(1_000_000), seq, i as u32)));
                seq += 1;
            }
            b.iter(|| {
                let Reverse((t, _, e)) = q.pop().unwrap();
                q.push(Reverse((t + rng.below(1_000_000), seq, black_box(e))));
                seq += 1;
            })
        });
    }
    g.finish();
}

fn port_enqueue_dequeue(c: &mut Criterion) {
    let mut g = c.benchmark_group("port");
    g.throughput(Throughput::Elements(1));
    g.bench_function("droptail_offer_dequeue", |b| {
        let mut pool = PacketPool::new();
        let mut rng = Rng::new(1);
        let mut port = Port::new(
            0,
            1,
            false,
            BitRate::from_gbps(10.0),
            SimTime::from_ns(200),
            HopKind::Core,
            PortQueue::Timeline(DropTail::new(36_864)),
            EcnMarking::Instantaneous { threshold_bytes: 22_500 },
        );
        port.busy_until = SimTime::MAX; // always busy: every offer goes through the queue
        let ids: Vec<u32> = (0..16)
            .map(|i| {
                pool.alloc(Packet {
                    flow: i,
                    slot: i,
                    src: 0,
                    dst: 1,
                    seq: 0,
                    size_bytes: 1500,
                    priority: 0,
                    timestamp: SimTime::ZERO,
                    kind: PacketKind::Data,
                    ecn: 1,
                    class: 0,
                    retransmit: false,
                })
            })
            .collect();
        for &id in &ids[..8] {
            port.offer(id, SimTime::ZERO, &mut pool, &mut rng);
        }
        let mut k = 8;
        b.iter(|| {
            let out = port.next_departure(SimTime::ZERO, &pool).unwrap();
            black_box(out);
            port.offer(ids[k % 16], SimTime::ZERO, &mut pool, &mut rng);
            k += 1;
        })
    });
    g.finish();
}

criterion_group!(benches, event_queue, port_enqueue_dequeue);
criterion_main!(benches);
