//! PASE (SIGCOMM'14) on hand-sized scenarios: arbitration decides who sends, control packets
//! are real and accounted for (the invariants checked by `run` include them).

use super::common::*;
use dcsim::fabric::LossRule;
use dcsim::transport::pase::REQUEST;

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
fn under_edf_a_flow_that_cannot_meet_its_deadline_goes_after_one_that_can() {
    // Hosts 1 and 2 send 1 MB each to host 0 at time 0 (800 µs of the downlink each). Flow 0's
    // deadline, 100 µs, cannot be met even alone; flow 1's, 1.2 ms, can, if it goes first.
    // Plain EDF (`late_flows = "ahead"`) serves flow 0 first: flow 1 ends after both, about
    // 1.6 ms, and misses too. With `"last"` flow 0 is late from the start and waits: flow 1
    // ends in about 0.82 ms and meets its deadline.
    let rows = ["0,1,0,1000000,0,0.0001", "1,2,0,1000000,0,0.0012"];
    let run_with = |late: &str| {
        let spec = format!("{STAR}[pase]\nqueues = 2\norder = \"edf\"\nlate_flows = \"{late}\"\n");
        run(spec_with_trace(&spec, &rows), &[])
    };
    let both = ns(2 * 800_000);
    let ahead = run_with("ahead");
    assert!(fct_ps(&ahead, 0) < fct_ps(&ahead, 1), "plain EDF: the earlier deadline first");
    assert!(fct_ps(&ahead, 1) >= both, "flow 1 after flow 0: {}", fct_ps(&ahead, 1));
    assert_eq!(ahead.summary.deadline_met_fraction, 0.0);
    let last = run_with("last");
    assert!(fct_ps(&last, 1) < fct_ps(&last, 0), "the flow that can still meet its deadline first");
    assert!(fct_ps(&last, 1) <= ns(1_200_000), "flow 1 meets 1.2 ms: {}", fct_ps(&last, 1));
    assert!(fct_ps(&last, 0) >= both, "flow 0 after flow 1: {}", fct_ps(&last, 0));
    assert_eq!(last.summary.deadline_met_fraction, 0.5);
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

#[test]
fn on_one_link_the_short_flow_has_the_line_rate_and_the_long_one_probes_until_promoted() {
    // Two hosts, one 10 Gbps link (200 ns): flow 0 (10 packets) and flow 1 (20 packets) from
    // host 0 to host 1 at time 0, two queues, re-arbitration every 10 base RTTs. Hand-computed
    // timeline (packets 1500 B = 1.2 µs, control packets and probes 40 B = 32 ns; base RTT
    // = 1.2 + 0.2 + 0.032 + 0.2 = 1.632 µs):
    // * Flow 0's local answer: queue 0 at 10 Gbps, window ⌈10 Gbps × 1.632 µs / 1500 B⌉ = 2.
    //   Flow 1's: 10 Gbps of demand ahead = C, so queue 1 at the base rate: it holds its data
    //   and sends one probe (queue 1, behind every packet of flow 0).
    // * Source NIC: data 1 (0-1.2), data 2 (1.2-2.4), both requests (queue 0, enqueued at
    //   time 0, 2.4-2.464), then data 3..10 back to back (each enqueued by an ACK while the
    //   previous one is on the wire): the last ends at 2.464 + 8 × 1.2 = 12.064; its ACK is
    //   back at 12.064 + 0.2 + 0.032 + 0.2 = 12.496 µs: the ideal 12.432 plus the two
    //   requests' 64 ns.
    // * Flow 1 learns it is alone at its first re-arbitration, 10 × 1.632 = 16.32 µs: request
    //   16.32-16.352, at host 1 at 16.552, response 16.552-16.584, back at 16.784. (Its first answer, back at about 2.9 µs, left it in queue 1, which alone would make it
    //   skip a period; flow 0's end at their common source, 12.5 µs, lets it ask at the next.)
    //   Promoted to queue 0 at 10 Gbps, it sends from its first packet (it sent none before,
    //   probes carry no data): 20 packets back to back end at 16.784 + 24 = 40.784, plus one re-arbitration
    //   request (32.64 µs) between them: 40.816; the last ACK is back at 41.248 µs.
    let spec = "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pase\"\n\
                [pase]\nqueues = 2\nrearbitrate_rtts = 10\n";
    let out = run(spec_with_trace(spec, &["0,0,1,14600,0", "1,0,1,29200,0"]), &[]);
    assert_eq!(out.records.ideal_ps[0], ns(12_432));
    assert_eq!(fct_ps(&out, 0), ns(12_496), "flow 0: line rate from the start");
    assert_eq!(fct_ps(&out, 1), ns(41_248), "flow 1: promoted at its first re-arbitration");
    // No data packet was sent twice: the held flow sent nothing but probes before promotion.
    assert_eq!(out.summary.counters.data_packets_injected, 30);
    let t = &out.summary.counters.transport_counters;
    // Requests: both flows at 0, flow 1 at 16.32 and 32.64 µs.
    assert_eq!(t["arbitration_requests"], 4, "{t:?}");
    assert_eq!(t["arbitration_switch_messages"], 0, "no switch on this path");
}

#[test]
fn delegation_keeps_requests_at_the_racks() {
    // One inter-pod flow on a k = 4 fat-tree: its path has four switch arbitrators' links
    // (ToR → aggregation at the ToR, aggregation → core at the aggregation switch, core →
    // aggregation and aggregation → ToR where they end). Without delegation every request is
    // processed four times; with it only at the two racks, plus delegation's own messages: a
    // demand report and a share answer for each of the two delegated links when the racks
    // first know them (a lone rack's share is the whole link: its flow need not ask again)
    // and at the first periodic resize (after 10 base RTTs); the later ones (20 and 30) find
    // no demand changed and cost nothing. The flow ends about 32 base RTTs after it starts; a
    // flow keeps one request out, and each of its requests queues behind its own window of
    // data at the source (both in the top queue), so an answer comes back after the next period
    // has passed and the flow asks at every other period or so: 18 requests. The last release
    // is still in flight when the run ends. Delegated shares leave a lone flow the whole link:
    // the same FCT.
    let counters = |delegation: bool| {
        let spec = format!(
            "[topology]\nkind = \"fat-tree\"\nk = 4\n[transport]\nprotocol = \"pase\"\n\
             [pase]\ndelegation = {delegation}\n"
        );
        let out = run(spec_with_trace(&spec, &["0,0,15,146000,0"]), &[]);
        (fct_ps(&out, 0), out.summary.counters.transport_counters.clone())
    };
    let (fct_off, off) = counters(false);
    let (fct_on, on) = counters(true);
    assert_eq!(fct_on, fct_off);
    let requests = off["arbitration_requests"];
    assert_eq!(requests, 18);
    assert_eq!(on["arbitration_requests"], requests);
    assert_eq!(off["arbitration_switch_messages"], 4 * requests);
    assert_eq!(on["arbitration_switch_messages"], 2 * requests + 2 * 2 * (1 + 1));
}

#[test]
fn a_lost_request_is_sent_again_after_its_timeout_and_the_wait_doubles() {
    // The two flows of the test above, re-arbitrating every base RTT (1.632 µs). Flow 0 ends
    // at 12.624 µs at the source they share, which lets flow 1 (held in queue 1) ask at the
    // next period, 8 × 1.632 = 13.056 µs: promoted then, it ends at 38.2408 µs.
    // Now flow 1's first two requests are dropped at its source's port. A flow keeps one
    // request out: the periodic clock sends none while it is unanswered and resends it once
    // it is 8 base RTTs old (13.056 µs: lost again), then 16 base RTTs after that (39.168 µs),
    // the first answered. Everything after the answered request is as before, 16 periods
    // later: flow 1 ends exactly 26.112 µs later.
    let spec =
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pase\"\n[pase]\nqueues = 2\n";
    let rows = ["0,0,1,14600,0", "1,0,1,29200,0"];
    let on_time = run(spec_with_trace(spec, &rows), &[]);
    assert_eq!(fct_ps(&on_time, 0), ns(12_624), "the ideal 12.432 µs and six requests of 32 ns");
    assert_eq!(fct_ps(&on_time, 1), 38_240_800);
    let lost = LossRule { flow: 1, seq: 0, kind: REQUEST, hop: 0, count: 2 };
    let late = run(spec_with_trace(spec, &rows), &[lost]);
    assert_eq!(fct_ps(&late, 1), fct_ps(&on_time, 1) + ns(16 * 1632));
}

#[test]
fn a_destination_with_hundreds_of_waiting_flows_still_gets_their_data() {
    // 300 flows of 10 packets from hosts 1-3 to host 0 of a 4-host star (10 Gbps, default
    // PASE), all at time 0: host 0's downlink has 3,000 packets of work, 3.6 ms. Requests sent
    // open loop every base RTT (a few µs here), 300 flows' 40-byte requests and the answers'
    // probes filled that downlink and its buffer, and no flow finished in 650 ms. With one
    // request out per flow, waiting flows asking ever less often and releases nudging the
    // next flows, the incast ends within a quarter of its work.
    let rows: Vec<String> = (0..300).map(|i| format!("{i},{},0,14600,0", 1 + i % 3)).collect();
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let spec = "[topology]\nkind = \"star\"\nhosts = 4\n[transport]\nprotocol = \"pase\"\n";
    let out = run(spec_with_trace(spec, &rows), &[]);
    assert_eq!(out.summary.flows_completed, 300);
    let last = (0..300).map(|i| fct_ps(&out, i)).max().unwrap();
    let work = ns(3_000 * PKT_NS);
    assert!(last <= work + work / 4, "the incast took {last} ps for {work} ps of work");
}
