//! The views inside the network (issue 15 item 11): port samples and the per-packet trace.

use crate::digests::flow_table_digest;
use dcsim::metrics::{HopEvent, NO_PORT};
use dcsim::{RunOutput, Simulation, Spec};
use std::collections::HashMap;

const SMALL: &str = "seed = 3\n[topology]\nracks = 2\nhosts_per_rack = 4\nspines = 2\n\
                     [workload]\nflows = 60\nload = 0.7\n";

fn run(toml: &str, overrides: &[&str]) -> RunOutput {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let spec = dcsim::spec::spec_with_overrides(toml, &overrides).unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(spec).unwrap().run(&mut |_| true).unwrap()
}

/// Issue 15 item 11: recording changes nothing: the flow table and the event count are the
/// same with port samples, the time series and the packet trace on as with them off, on the
/// FIFO fast path (DCTCP), event-driven ports (pFabric) and switch-consumed control packets
/// (PASE).
#[test]
fn recording_leaves_the_run_unchanged() {
    for protocol in ["dctcp", "pfabric", "pase"] {
        let p = format!("transport.protocol={protocol}");
        let off = run(SMALL, &[&p]);
        let on = run(
            SMALL,
            &[&p, "output.ports_sample_us=2", "output.timeseries_us=3", "output.packet_trace=true"],
        );
        assert_eq!(flow_table_digest(&on.records), flow_table_digest(&off.records), "{protocol}");
        assert_eq!(on.summary.counters.events, off.summary.counters.events, "{protocol}");
        assert!(off.ports.is_none() && off.packets.is_none() && off.timeseries.t_us.is_empty());
        assert!(on.summary.counters.ports_rows > 0 && on.summary.counters.packets_rows > 0);
    }
}

/// Issue 15 item 11: port samples add up: one row per port per sample; no link carries more
/// than its rate allows in an interval; queues stay within their buffers; and the bytes the
/// samples report, summed, are the bytes the ports put on their links.
#[test]
fn port_samples_account_for_every_byte_sent() {
    let out = run(SMALL, &["output.ports_sample_us=5", "workload.flows=40"]);
    let s = out.ports.as_ref().unwrap();
    let spec = Spec::from_toml_str(SMALL).unwrap();
    let sim = Simulation::new(spec).unwrap();
    let net = sim.network();
    let n_ports = net.ports.len();
    assert_eq!(s.time_ps.len() % n_ports, 0);
    assert_eq!(out.summary.counters.ports_rows, s.time_ps.len() as u64);
    let samples = s.time_ps.len() / n_ports;
    assert_eq!(samples as f64, (out.summary.counters.sim_time_us / 5.0).floor() + 1.0);
    let mut sent = vec![0u64; n_ports];
    for i in 0..s.time_ps.len() {
        let port = s.port[i] as usize;
        assert_eq!(s.time_ps[i], (i / n_ports) as u64 * 5_000_000);
        let rate = net.ports[port].rate.0 as f64;
        let most = rate * 5e-6 / 8.0;
        assert!(s.tx_bytes[i] as f64 <= most + 1.0, "port {port}: {} B in 5 µs", s.tx_bytes[i]);
        assert!(s.queue_bytes[i] <= 36_864, "port {port}: {} B queued", s.queue_bytes[i]);
        sent[port] += s.tx_bytes[i];
    }
    // Every flow had finished by the last sample's interval only if the run ended at a sample;
    // in general the bytes reported are those sent by the last sample: no more than the total,
    // and all but the last few microseconds' worth.
    let total_sent: u64 = sent.iter().sum();
    let total_bytes = out.summary.counters.data_packets_injected as f64 * 1400.0;
    assert!(
        total_sent as f64 > total_bytes,
        "{total_sent} bytes reported, {total_bytes} at least sent"
    );
    assert!(
        out.summary.counters.marks_by_hop.values().sum::<u64>()
            == s.marked_packets.iter().sum::<u64>()
    );
}

/// Issue 15 item 11: the packet trace follows every packet from creation to its end: each
/// packet number is delivered or dropped exactly once, crossing ports as enqueue/dequeue
/// pairs; the counts match the summary's counters.
#[test]
fn the_packet_trace_follows_every_packet() {
    for protocol in ["dctcp", "pfabric"] {
        let out = run(
            SMALL,
            &[
                &format!("transport.protocol={protocol}"),
                "output.packet_trace=true",
                "workload.flows=30",
            ],
        );
        let t = out.packets.as_ref().unwrap();
        assert!(!t.truncated);
        let c = &out.summary.counters;
        let count = |e: HopEvent| t.event.iter().filter(|&&x| x == e as u8).count() as u64;
        assert_eq!(count(HopEvent::Deliver), c.packets_delivered, "{protocol}");
        assert_eq!(count(HopEvent::Drop), c.drops_by_hop.values().sum::<u64>(), "{protocol}");
        // A packet admitted leaves by a dequeue or (evicted) a drop; one dropped on arrival
        // was never admitted.
        assert!(count(HopEvent::Dequeue) <= count(HopEvent::Enqueue));
        assert!(count(HopEvent::Enqueue) <= count(HopEvent::Dequeue) + count(HopEvent::Drop));
        let mut ends: HashMap<u64, u32> = HashMap::new();
        for i in 0..t.time_ps.len() {
            if t.event[i] == HopEvent::Deliver as u8 || t.event[i] == HopEvent::Drop as u8 {
                *ends.entry(t.packet[i]).or_default() += 1;
            }
            assert_eq!(t.port[i] == NO_PORT, t.event[i] == HopEvent::Deliver as u8);
        }
        assert!(ends.values().all(|&n| n == 1), "{protocol}: a packet ended twice");
        let created = c.data_packets_injected + c.control_packets_injected;
        assert_eq!(ends.len() as u64, created, "{protocol}: every packet ends once");
        // Deliveries of data happen at the flow's destination host.
        let data_delivered = (0..t.time_ps.len())
            .filter(|&i| t.event[i] == HopEvent::Deliver as u8 && t.kind[i] == 0)
            .all(|i| out.records.dst[t.flow[i] as usize] == t.node[i]);
        assert!(data_delivered, "{protocol}");
    }
}

/// Issue 15 item 11: recordings expected to pass their row limits are refused before the run,
/// naming the field; one that reaches its limit during the run stops there and says so.
#[test]
fn recordings_are_bounded() {
    let spec = |o: &[&str]| {
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        Simulation::new(dcsim::spec::spec_with_overrides(SMALL, &o).unwrap())
    };
    let e = spec(&["output.ports_sample_us=1", "output.ports_max_rows=1000"]).err().unwrap();
    assert_eq!(e.path, "output.ports_max_rows");
    assert!(
        e.message.contains("1000 rows are too few for ports.parquet: 24 ports sampled every 1 µs"),
        "{e}"
    );
    let e = spec(&["output.packet_trace=true", "output.packet_trace_max_rows=1000"]).err().unwrap();
    assert_eq!(e.path, "output.packet_trace_max_rows");
    assert!(e.message.contains("1000 rows are too few for packets.parquet"), "{e}");
    let e = spec(&["output.packet_trace=true", "transport.protocol=ideal"]).err().unwrap();
    assert_eq!(e.path, "output.packet_trace");
    // The estimates are lower bounds: a run that goes past one stops recording and says so.
    let estimate = |e: dcsim::SpecError| -> u64 {
        let rows = e.message.split("at least ").last().unwrap().split(' ').next().unwrap();
        rows.parse().unwrap()
    };
    let flows = "workload.flows=5";
    let full = run(SMALL, &[flows, "output.packet_trace=true"]).summary.counters.packets_rows;
    let expected = estimate(
        spec(&[flows, "output.packet_trace=true", "output.packet_trace_max_rows=1"]).err().unwrap(),
    );
    assert!(expected < full, "{expected} rows expected, {full} recorded");
    let limit = (expected + full) / 2;
    let out = run(
        SMALL,
        &[flows, "output.packet_trace=true", &format!("output.packet_trace_max_rows={limit}")],
    );
    assert_eq!(out.packets.as_ref().unwrap().time_ps.len() as u64, limit);
    assert!(out.summary.counters.packets_truncated);
    // The port samples' estimate covers the arrivals; the run drains longer.
    let full = run(SMALL, &["output.ports_sample_us=10"]).summary.counters.ports_rows;
    let e = spec(&["output.ports_sample_us=10", "output.ports_max_rows=24"]).err().unwrap();
    let estimate = estimate(e);
    assert!(estimate < full, "{estimate} rows expected, {full} recorded");
    let limit = (estimate + full) / 2;
    let out = run(SMALL, &["output.ports_sample_us=10", &format!("output.ports_max_rows={limit}")]);
    assert_eq!(out.summary.counters.ports_rows, limit / 24 * 24); // whole samples only
    assert!(out.summary.counters.ports_truncated);
}
