//! Long-lived background flows (`workload.long_lived_flows`; PASE SIGCOMM'14 §4: "2 long-lived
//! flows" in the simulations, one long-lived background flow on the testbed): they share the
//! fabric with the run's flows but are not among them.

use super::common::check_invariants;
use dcsim::choice::Choice;
use dcsim::spec::{spec_with_overrides, Protocol};
use dcsim::workload::{is_long_lived, LONG_LIVED_ID};
use dcsim::{RunOutput, Simulation, Spec};

fn run(toml: &str, overrides: &[&str]) -> RunOutput {
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    let spec = spec_with_overrides(toml, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let out = Simulation::new(spec).unwrap().run(&mut |_| true).unwrap();
    check_invariants(&out);
    assert_eq!(out.summary.counters.flows_stalled, 0);
    out
}

/// A 3-host star (10 Gbps links, 200 ns): one 2 MB flow to host 0 from host 1 or 2, starting
/// at time 0, under DCTCP.
const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 3\n[workload]\nmatrix = \"fan-in\"\nflow_sizes = 2000000\narrivals = \"at-start\"\nflows = 1\n";

#[test]
fn a_long_lived_flow_takes_half_the_bottleneck_from_a_dctcp_flow() {
    let alone = run(STAR, &[]);
    let shared = run(STAR, &["workload.long_lived_flows=1"]);
    // The run's flow is the same flow, and the only record.
    assert_eq!(shared.records.len(), 1);
    assert_eq!(
        (shared.records.src[0], shared.records.dst[0], shared.records.size_bytes[0]),
        (alone.records.src[0], alone.records.dst[0], alone.records.size_bytes[0])
    );
    // Alone, the flow needs its 2,054,800 wire bytes at 10 Gbps: 1644 µs, plus DCTCP's ramp
    // (measured: 1845 µs). Both flows start at time 0 with the same window and DCTCP shares
    // host 0's downlink evenly, so the flow gets about half the link and takes about twice as
    // long (measured: 3609 µs).
    let wire = 2_054_800.0 * 8.0 / 10e9 * 1e6;
    let (t_alone, t_shared) = (alone.summary.mean_fct_us, shared.summary.mean_fct_us);
    assert!(t_alone > wire && t_alone < 1.15 * wire, "alone {t_alone} µs");
    assert!(t_shared > 1.8 * t_alone && t_shared < 2.2 * t_alone, "{t_shared} vs {t_alone} µs");
    // The run ends when its flow is done, and the long-lived flow had the rest of the
    // bottleneck until then: 10 Gbps × the run's time, less the flow's wire bytes, in payload
    // (1460 of every 1500 bytes), within what queues and the start hold back (measured:
    // 2,390,020 of 2,391,109 bytes).
    let c = &shared.summary.counters;
    let end_us = c.sim_time_us;
    assert!((end_us - t_shared).abs() < 1.0, "the run ends at its flow's completion");
    let leftover = (10e9 / 8.0 * end_us / 1e6 - 2_054_800.0) * 1460.0 / 1500.0;
    let got = c.long_lived_bytes_delivered as f64;
    assert!((got - leftover).abs() < 0.01 * leftover, "delivered {got} B, leftover {leftover} B");
    let gbps = got * 8.0 / (end_us * 1e3);
    assert!((c.long_lived_goodput_gbps - gbps).abs() < 1e-9 * gbps);
    // Without long-lived flows nothing is reported.
    assert_eq!(alone.summary.counters.long_lived_bytes_delivered, 0);
    assert_eq!(alone.summary.counters.long_lived_goodput_gbps, 0.0);
}

/// A small leaf-spine (3 racks × 4 hosts, 2 spines): 40 flows at load 0.5, sizes uniform in
/// 2-100 KB (so PIAS needs its thresholds given).
const LEAF_SPINE: &str = "seed = 3\n[topology]\nracks = 3\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 40\nload = 0.5\nflow_sizes = { uniform = [2000, 100000] }\n[pias]\nqueues = 4\nthresholds = [10000, 30000, 60000]\n";

#[test]
fn every_protocol_runs_the_same_flows_beside_long_lived_ones_to_completion() {
    for &(name, protocol) in Protocol::OPTIONS {
        if protocol == Protocol::Ideal {
            continue; // rejected: see below
        }
        let p = format!("transport.protocol={name}");
        let plain = run(LEAF_SPINE, &[&p]);
        let out = run(LEAF_SPINE, &[&p, "workload.long_lived_flows=2"]);
        let (r, q) = (&out.records, &plain.records);
        // The records hold the run's 40 flows only, the same flows (ids, hosts, sizes, starts).
        assert_eq!(r.len(), 40, "{name}");
        assert_eq!(out.summary.flows_total, 40, "{name}");
        assert_eq!(out.summary.flows_completed, 40, "{name}");
        assert_eq!((&r.id, &r.src, &r.dst), (&q.id, &q.src, &q.dst), "{name}");
        assert_eq!((&r.size_bytes, &r.start_ps), (&q.size_bytes, &q.start_ps), "{name}");
        assert!(r.id.iter().all(|&id| id < 40 && !is_long_lived(id as u32)), "{name}");
        let c = &out.summary.counters;
        assert_eq!(c.conservation_error, 0, "{name}");
        // They ran: at least 1 Gbps together over the run.
        assert!(c.long_lived_goodput_gbps > 1.0, "{name}: {}", c.long_lived_goodput_gbps);
        assert!(c.long_lived_bytes_delivered > 0, "{name}");
    }
}

/// A flow that can never finish (its first packet is dropped every time it is sent) beside a
/// long-lived flow: the events never run out, so the stall watchdog ends the run after 8
/// maximum RTOs (8 ms here) without progress of the run's flow, give or take its check every
/// 2¹⁶ events, and reports it stalled (debug builds assert on it).
#[test]
#[cfg_attr(debug_assertions, should_panic(expected = "flows stalled"))]
fn a_stalled_flow_ends_the_run_beside_long_lived_flows() {
    let spec = spec_with_overrides(
        &STAR.replace("flow_sizes = 2000000", "flow_sizes = 10000"),
        &[
            "workload.long_lived_flows=1".into(),
            "transport.protocol=tcp".into(),
            "transport.max_rto_us=1000".into(),
        ],
    )
    .unwrap();
    let drop_first = dcsim::fabric::LossRule {
        flow: 0,
        seq: 0,
        kind: dcsim::packet::PacketKind::DATA,
        hop: 0,
        count: u32::MAX,
    };
    let out = Simulation::new(spec).unwrap().with_loss(drop_first).run(&mut |_| true).unwrap();
    let c = &out.summary.counters;
    assert_eq!((c.flows_stalled, out.summary.flows_completed), (1, 0));
    assert!(c.sim_time_us > 8000.0 && c.sim_time_us < 40_000.0, "{}", c.sim_time_us);
    assert_eq!(c.conservation_error, 0);
}

#[test]
fn n_finished_and_warm_up_count_the_runs_flows_only() {
    let overrides: Vec<String> = [
        "workload.long_lived_flows=2",
        "workload.stop_when=n-finished",
        "workload.warmup_fraction=0.1",
    ]
    .iter()
    .map(|o| o.to_string())
    .collect();
    let spec = spec_with_overrides(LEAF_SPINE, &overrides).unwrap();
    let out = Simulation::new(spec).unwrap().run(&mut |_| true).unwrap();
    let s = &out.summary;
    assert_eq!(s.flows_completed, 40);
    assert_eq!(s.flows_warmup, (0.1 * out.records.len() as f64).floor() as u64);
    assert!(out.records.id.iter().all(|&id| !is_long_lived(id as u32)));
    assert_eq!(s.counters.conservation_error, 0);
    assert!(s.counters.long_lived_bytes_delivered > 0);
}

#[test]
fn long_lived_pairs_follow_the_matrix_with_their_own_stream() {
    let seeded = |seed: u64, extra: &str| {
        let spec = Spec::from_toml_str(&format!(
            "seed = {seed}\n[topology]\nracks = 4\nhosts_per_rack = 4\nspines = 2\n[workload]\nlong_lived_flows = 50\n{extra}"
        ))
        .unwrap();
        let net = dcsim::topology::Network::build(&spec.topology, &|_| {
            (
                dcsim::queue::PortQueue::Timeline(dcsim::queue::DropTail::new(100_000)),
                dcsim::queue::EcnMarking::Off,
            )
        });
        let g = dcsim::workload::Generator::new(&spec, &net).unwrap();
        g.long_lived().to_vec()
    };
    let flows = |extra: &str| seeded(1, extra);
    let fan_in = flows("matrix = \"fan-in\"");
    assert!(fan_in.iter().all(|f| f.dst == 0 && f.src != 0));
    let lr = flows("matrix = \"left-right\"");
    assert!(lr.iter().all(|f| f.src < 8 && f.dst >= 8), "racks 0-1 to racks 2-3");
    for f in flows("").iter().chain(&flows("matrix = \"incast\"")) {
        assert_ne!(f.src, f.dst);
    }
    let all = flows("");
    for (k, f) in all.iter().enumerate() {
        assert_eq!(f.id, LONG_LIVED_ID + k as u32);
        assert_eq!((f.size_bytes, f.start.as_ps()), (dcsim::units::MAX_FLOW_BYTES, 0));
        assert_eq!(f.deadline.as_ps(), u64::MAX);
    }
    let srcs: std::collections::HashSet<u32> = all.iter().map(|f| f.src).collect();
    assert!(srcs.len() > 10, "pairs are drawn, not fixed");
    // A stream of their own: another seed draws other pairs, and the run's flows do not move
    // them.
    let pairs =
        |v: &[dcsim::workload::FlowArrival]| v.iter().map(|f| (f.src, f.dst)).collect::<Vec<_>>();
    assert_ne!(pairs(&seeded(2, "")), pairs(&all));
    assert_eq!(pairs(&flows("flows = 7\nload = 0.3\nflow_sizes = \"datamining\"")), pairs(&all));
}

#[test]
fn long_lived_flows_are_rejected_where_they_make_no_sense() {
    let trace = super::common::trace_file(&["0,0,1,1000,0"]);
    for (toml, needle) in [
        (
            format!(
                "[workload]\nmatrix = \"{}\"\nflows = 0\nlong_lived_flows = 2",
                trace.display()
            ),
            "trace",
        ),
        (
            "[workload]\nlong_lived_flows = 1\n[transport]\nprotocol = \"ideal\"".to_string(),
            "ideal",
        ),
        ("[workload]\nlong_lived_flows = 1001".to_string(), "1000"),
    ] {
        let e = Spec::from_toml_str(&toml).unwrap_err();
        assert_eq!(e.path, "workload.long_lived_flows", "{toml}");
        assert!(e.message.contains(needle), "{toml}: {e}");
    }
    let e =
        Spec::from_toml_str("[workload]\nlong_lived_flows = 2\n[transport]\nprotocol = \"ideal\"")
            .unwrap_err();
    assert!(e.message.contains('2'), "names the value: {e}");
}
