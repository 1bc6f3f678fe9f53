//! PIAS, LAS and L2DCT on hand-sized scenarios: two long flows and, later, a short flow into
//! the same host of a 4-host star (10 Gbps, 200 ns links, cut-through), so a queue builds at
//! the shared downlink.

use super::common::*;

// Flows are numbered in arrival order: 0 and 1 are the long ones, 2 the short one.
const ROWS: [&str; 3] = ["0,0,2,1460000,0", "1,3,2,1460000,0", "2,1,2,14600,0.0002"];

fn star(extra: &str) -> dcsim::Spec {
    spec_with_trace(
        &format!("[topology]\nkind = \"star\"\nhosts = 4\nbuffer_bytes = 2000000\n{extra}"),
        &ROWS,
    )
}

#[test]
fn the_mlfq_lets_a_new_flow_pass_a_demoted_one() {
    // The 1000-packet flows have long passed the 10-packet threshold when the 10-packet flow
    // starts, so at the shared downlink the short flow's packets (queue 0) go before the long
    // flows' backlog (queue 1): it finishes within a few packet times of its ideal FCT. With
    // one queue (DCTCP's FIFO, no marking) it waits behind that backlog.
    let common = "initial_window_pkts = 70\nmax_window_pkts = 1000\n[dctcp]\nmarking_threshold_bytes = 100000000\n";
    let pias = run(
        star(&format!(
            "[transport]\nprotocol = \"pias\"\n{common}[pias]\nqueues = 2\nthresholds = [14600]\necn = \"off\"\n"
        )),
        &[],
    );
    let fifo = run(star(&format!("[transport]\nprotocol = \"dctcp\"\n{common}")), &[]);
    let ideal = pias.records.ideal_ps[2];
    assert!(
        fct_ps(&pias, 2) < ideal + ns(3_000),
        "PIAS short flow {} vs ideal {ideal}",
        fct_ps(&pias, 2)
    );
    assert!(fct_ps(&fifo, 2) > ideal + ns(20_000), "FIFO short flow {}", fct_ps(&fifo, 2));
    // The long flows lose only about the short flow's 10 packets of time.
    assert!(fct_ps(&pias, 0) < fct_ps(&fifo, 0) + ns(15_000));
}

#[test]
fn las_serves_the_flow_with_the_least_attained_service() {
    // LAS: pFabric's switch keyed by bytes sent. The short flow's packets (offsets < 14.6 KB)
    // beat the long flow's (offsets > 200 KB by then).
    let las = run(
        star("[transport]\nprotocol = \"las\"\n[pfabric]\nbuffer_bytes = 2000000\nmax_window_pkts = 1000\n"),
        &[],
    );
    assert!(fct_ps(&las, 2) < las.records.ideal_ps[2] + ns(3_000));
}

#[test]
fn l2dct_runs_to_completion_with_marking() {
    let out = run(
        star("[transport]\nprotocol = \"l2dct\"\n[dctcp]\nmarking_threshold_bytes = 30000\n"),
        &[],
    );
    assert!(out.summary.counters.marks_by_hop.values().sum::<u64>() > 0, "no ECN marks");
}

#[test]
fn a_reset_after_timeouts_lifts_a_starved_flow_back_to_the_top_queue() {
    // Flow A (2000 packets, host 0 → 2, window 50) is past the 610-packet threshold, in queue
    // 1, when flow B (600 packets, host 1 → 2) starts at 1 ms and takes the downlink in queue 0
    // for ≈ 720 µs. A's ACKs stop and its fixed 300 µs RTO fires twice. With a reset after 2
    // timeouts A's resent packets are tagged as a new flow's (queue 0) and share the link with
    // B, so B finishes later than without the reset. (A, the last to finish either way, ends
    // when the link has carried both flows' bytes.)
    let rows = ["0,0,2,2920000,0", "1,1,2,876000,0.001"];
    let toml = |reset: u32| {
        format!(
            "[topology]\nkind = \"star\"\nhosts = 3\nbuffer_bytes = 4000000\n[transport]\nprotocol = \"pias\"\ninitial_window_pkts = 50\nmax_window_pkts = 50\nrto = \"fixed\"\nmin_rto_us = 300\n[pias]\nqueues = 2\nthresholds = [890600]\necn = \"off\"\nreset_after_timeouts = {reset}\n"
        )
    };
    let plain = run(spec_with_trace(&toml(0), &rows), &[]);
    let reset = run(spec_with_trace(&toml(2), &rows), &[]);
    assert!(plain.records.timeouts[0] >= 2, "A must time out while starved");
    assert!(
        fct_ps(&reset, 1) > fct_ps(&plain, 1) + ns(20_000),
        "B: {} vs {}",
        fct_ps(&reset, 1),
        fct_ps(&plain, 1)
    );
}
