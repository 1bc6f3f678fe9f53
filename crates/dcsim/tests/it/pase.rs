//! PASE (SIGCOMM'14) on hand-sized scenarios: arbitration decides who sends, control packets
//! are real and accounted for (the invariants checked by `run` include them).

use super::common::*;

const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 3\n[transport]\nprotocol = \"pase\"\n";

/// 1500-byte packets at 10 Gbps.
const PKT_NS: u64 = 1200;

#[test]
fn the_shorter_flow_takes_the_link_and_the_longer_one_waits_until_it_is_done() {
    // Hosts 1 and 2 send 1 MB and 100 KB to host 0 at time 0: host 0's downlink is shared.
    // With two queues the long flow, once the destination's arbitrator answers, is in the
    // lowest queue and probes; the short one has the link. Both start at line rate on their
    // sources' local answers, so until the answers arrive the long flow's initial window (12
    // packets) shares the downlink.
    let spec = format!("{STAR}[pase]\nqueues = 2\n");
    let out = run(spec_with_trace(&spec, &["0,1,0,1000000,0", "1,2,0,100000,0"]), &[]);
    let (long, short) = (fct_ps(&out, 0), fct_ps(&out, 1));
    let (ideal_long, ideal_short) = (out.records.ideal_ps[0], out.records.ideal_ps[1]);
    assert!(short < long, "SRPT: the short flow first");
    assert!(short <= ideal_short + ns(24 * PKT_NS), "short {short} vs ideal {ideal_short}");
    // The long flow: after the short one, at line rate: the downlink carries both.
    let both = ns((685 + 69) * PKT_NS);
    assert!(long >= both, "long {long} below the downlink's work {both}");
    assert!(long <= both + ns(30 * PKT_NS), "long {long} vs {both} (ideal alone {ideal_long})");
    // Arbitration is real traffic: a request and a response per flow per RTT, plus probes.
    let c = &out.summary.counters;
    assert!(c.control_packets_injected > c.data_packets_injected, "{c:?}");
}

#[test]
fn every_queue_count_and_variant_runs_clean() {
    for pase in [
        "queues = 2",
        "queues = 8",
        "arbitration = \"local\"",
        "rate_control = \"dctcp\"",
        "probing = false",
        "pruning_queue = 0",
        "order = \"edf\"",
    ] {
        let spec = format!("{STAR}[pase]\n{pase}\n");
        let rows = [
            "0,1,0,300000,0",
            "1,2,0,50000,0.00001",
            "2,0,1,20000,0.00002,0.001",
            "3,2,1,800000,0.00003",
        ];
        let out = run(spec_with_trace(&spec, &rows), &[]);
        assert_eq!(out.summary.flows_completed, 4, "{pase}");
    }
}
