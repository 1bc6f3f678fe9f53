//! Invariants (conservation, FCT ≥ ideal, completion) across topologies, switching modes,
//! load balancers, matrices and protocols; and determinism.

use super::common::*;
use dcsim::{Simulation, Spec};

fn spec(toml: &str) -> Spec {
    Spec::from_toml_str(toml).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

#[test]
fn flows_never_stall_when_acks_are_lost() {
    // Few-queue pFabric with tiny shared buffers drops ACKs; with the idealised SACK a flow
    // can then find everything its window allows already at the receiver, with its ACKs
    // lost. Before the stall check this configuration left flows unfinished for good (seed 1:
    // 1 of 1,500 after a check on timeouts only, more before); `run` checks every flow
    // completes, and debug builds assert `flows_stalled == 0`.
    let toml = "seed = 1\n[topology]\nracks = 2\nhosts_per_rack = 4\nspines = 1\nswitching = \"store-and-forward\"\n\
                [workload]\nflows = 1500\nload = 0.9\n[transport]\nprotocol = \"pfabric\"\n\
                [pfabric]\nqueues = 2\nbuffer_bytes = 30000\nreserved_bytes = 3000\nmax_window_pkts = 23\nrto_us = 45\n";
    let out = run(spec(toml), &[]);
    assert_eq!(out.summary.counters.flows_stalled, 0);
    assert!(out.summary.counters.drops_by_hop.values().sum::<u64>() > 0);
}

#[test]
fn invariants_hold_across_configurations() {
    let small_ls = "[topology]\nracks = 3\nhosts_per_rack = 4\nspines = 2\n";
    let cases = [
        format!("{small_ls}[workload]\nflows = 400\nload = 0.7\n"),
        format!("{small_ls}switching = \"store-and-forward\"\nload_balancing = \"ecmp\"\n[workload]\nflows = 400\n[transport]\nprotocol = \"tcp\"\n"),
        format!("{small_ls}load_balancing = \"spray-random\"\nhost_delay_ns = 2500\n[workload]\nflows = 300\nflow_sizes = \"datamining\"\n"),
        format!("{small_ls}[workload]\nflows = 300\nmatrix = \"permutation\"\nflow_sizes = \"imc10\"\n[transport]\nprotocol = \"tcp\"\n"),
        format!("{small_ls}[workload]\nflows = 200\nmatrix = \"incast\"\nincast_senders = 8\nflow_sizes = \"400KB\"\nload = 0.5\n"),
        "[topology]\nkind = \"fat-tree\"\nk = 4\nswitching = \"store-and-forward\"\n[workload]\nflows = 300\nload = 0.6\n".into(),
        "[topology]\nkind = \"dumbbell\"\nhosts_per_side = 4\ncore_link_gbps = 10\n[workload]\nflows = 200\nload = 0.3\nflow_sizes = \"bimodal\"\n".into(),
        "[topology]\nkind = \"star\"\nhosts = 8\nbuffer_bytes = 6000\n[workload]\nflows = 300\nload = 0.8\n[transport]\nprotocol = \"tcp\"\n".into(),
        format!("{small_ls}[workload]\nflows = 400\nload = 0.8\n[transport]\nprotocol = \"pfabric\"\n"),
        format!("{small_ls}[workload]\nflows = 300\nload = 0.8\nflow_sizes = \"datamining\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrate_control = \"linerate\"\nbuffer_bytes = 22500\n"),
        "[topology]\nkind = \"fat-tree\"\nk = 4\n[workload]\nflows = 300\nload = 0.9\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nbuffer_bytes = 9000\nrto_us = 20\n".into(),
        format!("{small_ls}[workload]\nflows = 400\nload = 0.7\n[transport]\nprotocol = \"ideal\"\n"),
        format!("{small_ls}[workload]\nflows = 500\nload = 0.8\n[transport]\nprotocol = \"phost\"\n"),
        format!("{small_ls}buffer_bytes = 6000\n[workload]\nflows = 300\nload = 0.8\nflow_sizes = \"imc10\"\n[transport]\nprotocol = \"phost\"\n[phost]\npreset = \"authors-code\"\n"),
        format!("{small_ls}[workload]\nflows = 500\nload = 0.8\n[transport]\nprotocol = \"fastpass\"\n"),
        format!("{small_ls}buffer_bytes = 4000\n[workload]\nflows = 300\nload = 0.8\nflow_sizes = \"imc10\"\n[transport]\nprotocol = \"fastpass\"\n"),
        "[topology]\nkind = \"fat-tree\"\nk = 4\n[workload]\nflows = 300\nload = 0.7\nmatrix = \"incast\"\nincast_senders = 5\n[transport]\nprotocol = \"fastpass\"\n".into(),
    ];
    for toml in &cases {
        let out = run(spec(toml), &[]);
        assert!(out.summary.mean_slowdown >= 1.0, "{toml}");
        // The flow-level Ideal has no packet events.
        assert_eq!(out.summary.counters.events > 0, !toml.contains("\"ideal\""), "{toml}");
    }
}

#[test]
fn tiny_buffers_force_timeouts_and_still_conserve_packets() {
    let out = run(
        spec("[topology]\nkind = \"star\"\nhosts = 6\nbuffer_bytes = 3000\n[workload]\nflows = 150\nload = 0.9\nflow_sizes = \"200KB\"\n[transport]\nprotocol = \"tcp\"\nmin_rto_us = 50\n"),
        &[],
    );
    let drops: u64 = out.summary.counters.drops_by_hop.values().sum();
    assert!(drops > 0);
    assert!(out.records.timeouts.iter().sum::<u32>() > 0);
    assert!(out.records.retransmits.iter().sum::<u32>() > 0);
}

#[test]
fn a_time_limit_stops_the_run_with_packets_in_flight() {
    let s = spec("[topology]\nracks = 2\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 5000\nduration_ms = 2\n");
    let out = Simulation::new(s).unwrap().run(&mut |_| true).unwrap();
    assert!(out.summary.flows_completed < out.summary.flows_total);
    assert_eq!(out.summary.counters.conservation_error, 0);
    assert!(out.summary.counters.sim_time_us <= 2000.0);
}

#[test]
fn same_seed_same_result_other_seed_other_result() {
    let toml = "[topology]\nracks = 3\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 300\n";
    let a = run(spec(toml), &[]);
    let b = run(spec(toml), &[]);
    assert_eq!(a.records.finish_ps, b.records.finish_ps);
    assert_eq!(a.records.size_bytes, b.records.size_bytes);
    assert_eq!(a.summary.counters.events, b.summary.counters.events);
    let c = run(spec(&format!("seed = 2\n{toml}")), &[]);
    assert_ne!(a.records.size_bytes, c.records.size_bytes);
}

#[test]
fn the_workload_does_not_depend_on_the_protocol() {
    // Flow sizes, endpoints and arrival times come from their own random streams, so TCP and
    // DCTCP see exactly the same flows (what makes protocol comparisons like with like).
    let toml = "[topology]\nracks = 2\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 200\n";
    let a = run(spec(&format!("{toml}[transport]\nprotocol = \"tcp\"\n")), &[]);
    for other in ["dctcp", "pfabric", "ideal", "phost", "fastpass"] {
        let b = run(spec(&format!("{toml}[transport]\nprotocol = \"{other}\"\n")), &[]);
        assert_eq!(a.records.start_ps, b.records.start_ps);
        assert_eq!(a.records.src, b.records.src);
        assert_eq!(a.records.dst, b.records.dst);
        assert_eq!(a.records.size_bytes, b.records.size_bytes);
        assert_eq!(a.records.ideal_ps, b.records.ideal_ps);
    }
}

#[test]
fn progress_callback_can_interrupt() {
    let s = spec("[workload]\nflows = 20000\n");
    let mut calls = 0;
    let r = Simulation::new(s).unwrap().run(&mut |_| {
        calls += 1;
        false
    });
    assert!(matches!(r, Err(dcsim::RunError::Interrupted(_))));
    assert_eq!(calls, 1);
}

#[test]
fn event_driven_fifo_ports_reproduce_the_fast_path() {
    // Whole runs through the generic port path agree with the FIFO timeline statistically
    // (exact ties between an arrival and a departure may be ordered differently).
    let toml = "[topology]\nracks = 3\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 600\nload = 0.6\n";
    let a = run(spec(toml), &[]);
    let b = run(spec(&format!("{toml}[engine]\nfifo_timeline = false\n")), &[]);
    let (x, y) = (a.summary.mean_slowdown, b.summary.mean_slowdown);
    assert!((x - y).abs() / x < 0.05, "timeline {x} vs events {y}");
    assert!(
        b.summary.counters.events > a.summary.counters.events,
        "the event path needs transmit-complete events"
    );
}

#[test]
fn generated_deadlines_follow_the_phost_rule_and_do_not_depend_on_the_protocol() {
    // deadline = start + max(1.25 × ideal FCT, X), X ~ Exp(mean 1000 µs) (pHost §4.3).
    let toml = "[topology]\nracks = 3\nhosts_per_rack = 4\nspines = 2\n[workload]\nflows = 2000\nload = 0.5\ndeadline_mean_us = 1000\n";
    let a = run(spec(&format!("{toml}[transport]\nprotocol = \"dctcp\"\n")), &[]);
    let b = run(
        spec(&format!(
            "{toml}[transport]\nprotocol = \"pfabric\"\n[pfabric]\npriority = \"deadline\"\n"
        )),
        &[],
    );
    assert_eq!(a.records.deadline_ps, b.records.deadline_ps);
    let r = &a.records;
    let (mut short_sum, mut short_n, mut floored) = (0.0, 0, 0);
    for i in 0..r.len() {
        let rel = r.deadline_ps[i] - r.start_ps[i];
        assert!(rel >= r.ideal_ps[i] + r.ideal_ps[i] / 4, "flow {i} below the 1.25 × ideal floor");
        floored += usize::from(rel == r.ideal_ps[i] + r.ideal_ps[i] / 4);
        // For flows whose ideal FCT is ≤ 50 µs the floor (≤ 62.5 µs) almost never binds, so
        // their relative deadlines are the exponential draw: mean ≈ 1000 µs.
        if r.ideal_ps[i] <= 50_000_000 {
            short_sum += rel as f64 / 1e6;
            short_n += 1;
        }
    }
    let mean = short_sum / short_n as f64;
    assert!(
        short_n > 500 && (900.0..1100.0).contains(&mean),
        "{short_n} short flows, mean relative deadline {mean} µs"
    );
    assert!(floored > 100, "large flows sit on the 1.25 × ideal floor");
    assert_eq!(a.summary.deadline_flows, 2000);
    assert!(b.summary.deadline_met_fraction > 0.0 && b.summary.deadline_met_fraction <= 1.0);
}

#[test]
fn the_timeseries_samples_arrived_and_injected_packets() {
    // Two 20-packet flows on one link, the second starting at 30 µs; samples every 5 µs.
    let out = run(
        spec_with_trace(
            "[topology]\nkind = \"pair\"\n[output]\ntimeseries_us = 5\n",
            &["0,0,1,29200,0", "1,0,1,29200,0.00003"],
        ),
        &[],
    );
    let ts = &out.timeseries;
    assert_eq!(ts.t_us[..3], [0.0, 5.0, 10.0]);
    let at = |t: f64| ts.t_us.iter().position(|&x| x == t).unwrap();
    // Just before the first event at 0, nothing has arrived. By 5 µs flow 0 has; its initial
    // window of 12 went out at once and slow start has added some (not all: the 20th packet
    // needs two round trips).
    assert_eq!((ts.arrived_packets[0], ts.injected_packets[0]), (0, 0));
    assert_eq!(ts.arrived_packets[at(5.0)], 20);
    assert!(ts.injected_packets[at(5.0)] > 12 && ts.injected_packets[at(5.0)] < 20);
    assert_eq!(ts.arrived_packets[at(35.0)], 40);
    assert_eq!(*ts.injected_packets.last().unwrap(), 40);
    assert!(ts.injected_packets.iter().zip(&ts.arrived_packets).all(|(i, a)| i <= a));
    assert!(ts.flows_done.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn delivered_throughput_during_arrivals_matches_the_offered_load() {
    // 8 hosts on one switch, 100 KB flows at load 0.5: while flows arrive, receivers take in
    // about 0.5 × 8 × 10 Gbps of data on the wire (the load counts headers too).
    let out = run(
        spec("[topology]\nkind = \"star\"\nhosts = 8\n[workload]\nflow_sizes = 100000\nload = 0.5\nflows = 4000\n"),
        &[],
    );
    let g = out.summary.counters.throughput_during_arrivals_gbps;
    assert!((g - 40.0).abs() < 4.0, "delivered {g} Gbps during arrivals");
}

#[test]
fn n_finished_stops_at_the_nth_completion_and_changes_nothing_before_it() {
    // `stop_when = "n-finished"`: arrivals go on and the run ends at the
    // N-th completion. Nothing after that moment can change what happened before it, so each
    // flow that finished must have exactly the FCT it has in a longer all-finished run with
    // the same seed, and the flows still open must finish later there.
    let base = "[topology]\nracks = 2\nhosts_per_rack = 4\nspines = 2\n[workload]\nload = 0.5\n";
    for protocol in ["dctcp", "pfabric", "ideal"] {
        let proto = format!("[transport]\nprotocol = \"{protocol}\"\n");
        let long = run(spec(&format!("{base}flows = 1500\n{proto}")), &[]);
        let s = spec(&format!("{base}flows = 300\nstop_when = \"n-finished\"\n{proto}"));
        let out = Simulation::new(s).unwrap().run(&mut |_| true).unwrap();
        let r = &out.records;
        assert_eq!(out.summary.flows_completed, 300, "{protocol}");
        assert!(r.len() > 300 && r.len() < 1500, "{protocol}: {} flows arrived", r.len());
        assert_eq!(out.summary.counters.conservation_error, 0);
        let stop = (0..r.len()).filter_map(|i| r.fct(i).map(|_| r.finish_ps[i])).max().unwrap();
        for i in 0..r.len() {
            assert_eq!(r.start_ps[i], long.records.start_ps[i], "{protocol}: same arrivals");
            if r.finish_ps[i] == u64::MAX {
                assert!(long.records.finish_ps[i] >= stop, "{protocol}: flow {i} open at the stop");
            } else {
                assert_eq!(r.finish_ps[i], long.records.finish_ps[i], "{protocol}: flow {i}");
            }
        }
        // The statistics are over the 300 finished flows only.
        let counted: u64 = out.summary.bins.values().map(|b| b.count).sum();
        assert_eq!(counted, 300, "{protocol}");
    }
}

#[test]
fn n_finished_needs_arrivals_that_go_on() {
    let e =
        Spec::from_toml_str("[workload]\nstop_when = \"n-finished\"\narrivals = \"at-start\"\n")
            .unwrap_err()
            .to_string();
    assert!(e.contains("workload.stop_when") && e.contains("at-start"), "{e}");
    let e = Spec::from_toml_str("[workload]\nstop_when = \"sometimes\"\n").unwrap_err().to_string();
    assert!(e.contains("workload.stop_when") && e.contains("n-finished"), "{e}");
}
