//! Analytic cross-checks: the forwarding path against queueing theory.

use dcsim::fabric::{Event, Fabric};
use dcsim::packet::{Packet, PacketKind};
use dcsim::queue::{AnyQueue, DropTail, EcnMarking, Fifo, PortQueue};
use dcsim::spec::{LoadBalancing, Spec};
use dcsim::topology::Network;
use dcsim_engine::{Rng, SimTime};

/// Mean queueing delay of Poisson arrivals of 1500-byte packets at utilisation `rho` on one
/// 10 Gbps link, measured through the real fabric (NIC port, link, delivery).
fn measured_wait_us(rho: f64, packets: u64, seed: u64, timeline: bool) -> f64 {
    let spec = Spec::from_toml_str("[topology]\nkind = \"pair\"").unwrap();
    let net = Network::build(&spec.topology, &|_| {
        let limit = u64::MAX / 4;
        let q = if timeline {
            PortQueue::Timeline(DropTail::new(limit))
        } else {
            PortQueue::Scheduled(AnyQueue::Fifo(Fifo::new(limit)))
        };
        (q, EcnMarking::Off)
    });
    let mut fab = Fabric::new(net, LoadBalancing::Spray, seed, false);
    let service_us = 1.2;
    let mean_gap_us = service_us / rho;
    let mut rng = Rng::new(seed);
    let mut t_us = 0.0;
    fab.schedule(SimTime::ZERO, Event::NextFlow);
    let (mut sent, mut got, mut total_wait_ps) = (0u64, 0u64, 0u128);
    let warmup = packets / 20;
    let fixed = SimTime::from_ns(1200 + 200); // serialization + propagation
    while let Some((now, ev)) = fab.sched.pop() {
        match ev {
            Event::NextFlow => {
                let p = Packet::new(PacketKind::DATA, sent as u32, 0, 0, 1, 0, 1500, now);
                fab.inject(0, p);
                sent += 1;
                if sent < packets {
                    t_us += rng.exponential(mean_gap_us);
                    fab.schedule(SimTime::from_us_f64(t_us).max(now), Event::NextFlow);
                }
            }
            Event::TxDone(port) => fab.on_tx_done(port),
            Event::Arrive(node, id) => {
                assert_eq!(node, 1);
                let p = *fab.pool.get(id);
                if got >= warmup {
                    total_wait_ps += (now - p.timestamp - fixed).as_ps() as u128;
                }
                got += 1;
                fab.deliver(id);
            }
            Event::Transport { .. } => unreachable!(),
        }
    }
    assert_eq!(got, packets);
    total_wait_ps as f64 / (packets - warmup) as f64 / 1e6
}

#[test]
fn single_fifo_link_matches_md1_mean_wait() {
    // M/D/1: W_q = ρ / (2μ(1 − ρ)), with 1/μ = 1.2 µs.
    for (rho, n) in [(0.5, 1_000_000u64), (0.8, 3_000_000)] {
        let expected = rho * 1.2 / (2.0 * (1.0 - rho));
        let got = measured_wait_us(rho, n, 7, true);
        let err = (got - expected).abs() / expected;
        println!(
            "M/D/1 rho={rho}: measured {got:.4} us, formula {expected:.4} us, error {:.2} %",
            err * 100.0
        );
        assert!(
            err < 0.03,
            "ρ = {rho}: measured {got:.4} µs, M/D/1 {expected:.4} µs ({:.1} %)",
            err * 100.0
        );
    }
}

#[test]
fn timeline_and_event_driven_fifo_ports_agree_exactly() {
    // The FIFO fast path and the generic event-driven port must give the same waiting times
    // (Poisson arrivals at picosecond resolution make exact ties with departures improbable).
    for rho in [0.3, 0.9] {
        let a = measured_wait_us(rho, 200_000, 11, true);
        let b = measured_wait_us(rho, 200_000, 11, false);
        assert_eq!(a, b, "ρ = {rho}");
    }
}
