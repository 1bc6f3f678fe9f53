//! pHost on hand-sized scenarios (10 Gbps links, 200 ns, one MTU time T = 1.2 µs, control
//! packets 32 ns).

use super::common::*;
use dcsim::fabric::LossRule;
use dcsim::packet::PacketKind;

const PAIR: &str = "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"phost\"\n";

#[test]
fn free_tokens_then_paced_tokens() {
    // 20 packets. The RTS leaves first (32 ns); the 8 free-token packets follow back to back,
    // packet k starting at 32 ns + k·T. The RTS reaches the destination at 232 ns, which holds
    // its token clock for 8 slots (the free packets are using its link) and sends the first
    // token at 232 ns + 8T = 9.832 µs; it reaches the source 232 ns later, and from then on one
    // token, hence one packet, every T: packet 19 leaves at 10.064 + 11T = 23.264 µs, arrives
    // 1.4 µs later, and its ACK is back 232 ns after that: 24.896 µs.
    let out = run(spec_with_trace(PAIR, &["0,0,1,29200,0"]), &[]);
    assert_eq!(fct_ps(&out, 0), ns(24_896));
    assert_eq!(out.records.packets_sent[0], 20);
    assert_eq!((out.records.retransmits[0], out.records.timeouts[0]), (0, 0));
    // RTS, 12 tokens, ACK.
    assert_eq!(out.summary.counters.control_packets_injected, 14);
}

#[test]
fn a_lost_packet_is_recovered_by_token_reissue() {
    // Packet 10 is lost at the source NIC. The last token (for packet 19) leaves at 23.032 µs;
    // the re-issue timeout (24 T = 28.8 µs) expires at 51.832 µs, when the destination sends a
    // token for the one missing packet; it arrives at 52.064, the packet at 53.464 and the ACK
    // at 53.696 µs.
    let loss = LossRule { flow: 0, seq: 10, kind: PacketKind::DATA, hop: 0, count: 1 };
    let out = run(spec_with_trace(PAIR, &["0,0,1,29200,0"]), &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(53_696));
    assert_eq!((out.records.retransmits[0], out.records.timeouts[0]), (1, 1));
    // The authors' code re-issues after 9 T instead: 15 T = 18 µs earlier.
    let code = spec_with_trace(
        &format!(
            "{PAIR}[phost]\npreset = \"authors-code\"\nfree_tokens_only_short = false\nhold = true\ntoken_interval_bytes = 1500\n"
        ),
        &["0,0,1,29200,0"],
    );
    let out = run(code, &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(53_696 - 18_000));
}

#[test]
fn the_token_clock_runs_at_the_configured_interval() {
    // As the first test with one token per 1540 bytes' time (1.232 µs, the authors' 2015
    // code): the held 8 slots end at 232 ns + 8 × 1.232 = 10.088 µs, the first paced token
    // reaches the source at 10.320 µs and packet 19 leaves 11 slots later, at 23.872 µs:
    // FCT = 23.872 + 1.4 + 0.232 = 25.504 µs.
    let out = run(
        spec_with_trace(
            &format!("{PAIR}[phost]\ntoken_interval_bytes = 1540\n"),
            &["0,0,1,29200,0"],
        ),
        &[],
    );
    assert_eq!(fct_ps(&out, 0), ns(25_504));
}

#[test]
fn a_lost_token_is_recovered_the_same_way() {
    // The token for packet 12 is lost: the source never sends packet 12; the re-issue recovers
    // it exactly as for a lost data packet.
    let loss =
        LossRule { flow: 0, seq: 12, kind: dcsim::transport::phost::TOKEN, hop: 0, count: 1 };
    let out = run(spec_with_trace(PAIR, &["0,0,1,29200,0"]), &[loss]);
    assert_eq!(out.records.timeouts[0], 1);
    assert_eq!(out.records.packets_sent[0], 20, "packet 12 is sent once, after the re-issue");
    assert!(fct_ps(&out, 0) > ns(51_832));
}

#[test]
fn the_destination_grants_the_shorter_flow_first() {
    // Two flows into host 2 start together: 40 packets from host 0 and 16 from host 1. After
    // the free packets, the 16-packet flow misses fewer packets, so it gets every token until
    // it is done (SRPT at the destination) and finishes first; the destination's link stays
    // busy, so the long flow finishes about 56 packet times after the start.
    let spec = spec_with_trace(
        "[topology]\nkind = \"star\"\nhosts = 3\n[transport]\nprotocol = \"phost\"\n",
        &["0,0,2,58400,0", "1,1,2,23360,0"],
    );
    let out = run(spec, &[]);
    let (long, short) = (fct_ps(&out, 0), fct_ps(&out, 1));
    assert!(short < long);
    // Short flow: 8 free packets interleaved with the long flow's 8 (16 T), then its 8 paced
    // packets back to back: done within ~25 T.
    assert!(short < ns(25 * 1200 + 3_000), "short flow took {short} ps");
    assert!(long < ns(56 * 1200 + 4_000), "long flow took {long} ps");
}

#[test]
fn downgrading_stops_tokens_a_busy_source_does_not_use() {
    // Host 0 sends a 100-packet flow to host 1 and a 30-packet flow to host 2. The source
    // prefers the shorter flow, so host 1's tokens expire unused; with downgrading, host 1
    // stops granting after 8 unanswered tokens (for 8 T at a time) instead of every T.
    let rows = ["0,0,1,146000,0", "1,0,2,43800,0"];
    let base =
        "[topology]\nkind = \"star\"\nhosts = 3\n[transport]\nprotocol = \"phost\"\n[phost]\n";
    let on = run(spec_with_trace(base, &rows), &[]);
    let off =
        run(spec_with_trace(&format!("{base}downgrade_after_tokens = 1000000\n"), &rows), &[]);
    let tokens = |o: &dcsim::RunOutput| o.summary.counters.control_packets_injected;
    assert!(
        tokens(&on) < tokens(&off),
        "downgrade on: {} control packets, off: {}",
        tokens(&on),
        tokens(&off)
    );
    // Both still finish every flow (checked by `run`).
}

#[test]
fn edf_serves_the_earliest_deadline_instead_of_the_shortest_flow() {
    // The same two flows as the SRPT test, but the long flow's deadline (62 µs) is earlier
    // than the short flow's (1 ms): under EDF the long flow gets the tokens first and finishes
    // first (59.4 µs, in time); under SRPT the short one does and the long flow finishes at
    // 69.0 µs, too late.
    let rows = ["0,0,2,58400,0,0.000062", "1,1,2,23360,0,0.001"];
    let base = "[topology]\nkind = \"star\"\nhosts = 3\n[transport]\nprotocol = \"phost\"\n[phost]\npolicy = ";
    let edf = run(spec_with_trace(&format!("{base}\"edf\"\n"), &rows), &[]);
    let srpt = run(spec_with_trace(&format!("{base}\"srpt\"\n"), &rows), &[]);
    assert!(fct_ps(&edf, 0) < fct_ps(&edf, 1), "EDF: the earlier deadline finishes first");
    assert!(fct_ps(&srpt, 1) < fct_ps(&srpt, 0), "SRPT: the shorter flow finishes first");
    assert_eq!(edf.summary.deadline_met_fraction, 1.0);
    assert_eq!(
        srpt.summary.deadline_met_fraction, 0.5,
        "under SRPT the long flow misses its 62 µs"
    );
}

#[test]
fn tenant_fair_shares_the_destination_between_tenants() {
    // Tenant 1 sends 60 packets from host 0, tenant 2 sends 20 from host 1, both into host 2.
    // SRPT grants the 20-packet flow everything first; tenant-fair alternates grants between
    // the tenants (fewer bytes granted first), so the short flow gets half the link and takes
    // about twice as long, while the long flow is not held back.
    let rows = ["0,0,2,87600,0,0,1", "1,1,2,29200,0,0,2"];
    let base = "[topology]\nkind = \"star\"\nhosts = 3\n[transport]\nprotocol = \"phost\"\n[phost]\npolicy = ";
    let fair = run(spec_with_trace(&format!("{base}\"tenant-fair\"\n"), &rows), &[]);
    // The same end hosts except the policy: no free tokens, one data priority.
    let srpt = run(
        spec_with_trace(
            &format!("{base}\"srpt\"\nfree_tokens = 0\ndata_priorities = false\n"),
            &rows,
        ),
        &[],
    );
    let (fair_short, srpt_short) = (fct_ps(&fair, 1) as f64, fct_ps(&srpt, 1) as f64);
    assert!(
        fair_short > 1.6 * srpt_short,
        "short flow: fair {fair_short} ps vs SRPT {srpt_short} ps"
    );
    // Both keep the destination's link busy: the last flow ends after ~80 packet times either way.
    let end = |o: &dcsim::RunOutput| (0..2).map(|i| fct_ps(o, i)).max().unwrap();
    assert!(end(&fair) < ns(80 * 1200 + 6_000) && end(&srpt) < ns(80 * 1200 + 6_000));
    // Tenant-fair turns free tokens off: every packet is granted, so 2 RTS + 80 tokens + 2 ACKs.
    assert_eq!(fair.summary.counters.control_packets_injected, 84);
}

/// Issue 17 item 3.1: the pHost authors'-code preset samples CDF sizes as the authors' code does
/// (interpolated, rounded to the nearest packet), as Fastpass's preset does; a
/// `workload.size_sampling` set on its own wins, and the paper preset keeps the default.
#[test]
fn the_authors_code_preset_rounds_interpolated_sizes() {
    use dcsim::cdf::SizeSampling;
    use dcsim::spec::Spec;
    let spec = |text: &str| Spec::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"));
    let paper = spec(PAIR);
    assert_eq!(paper.workload.size_sampling, SizeSampling::Interpolate);
    let code = spec(&format!("{PAIR}[phost]\npreset = \"authors-code\"\n"));
    assert_eq!(code.workload.size_sampling, SizeSampling::InterpolateRound);
    let own = spec(&format!(
        "{PAIR}[workload]\nsize_sampling = \"step\"\n[phost]\npreset = \"authors-code\"\n"
    ));
    assert_eq!(own.workload.size_sampling, SizeSampling::Step);
}

/// Issue 17 item 3.5: pHost's token counters. One 20-packet flow alone (the scenario of
/// `free_tokens_then_paced_tokens`): 8 free tokens and 12 paced ones, none expiring. A source
/// with two flows to two destinations (`downgrading_stops_tokens_a_busy_source_does_not_use`)
/// lets the tokens of the flow it does not serve expire; every data packet it sent used a token
/// that had not expired.
#[test]
fn token_counters_count_tokens_sent_and_expired() {
    let counter = |o: &dcsim::RunOutput, name: &str| o.summary.counters.transport_counters[name];
    let alone = run(spec_with_trace(PAIR, &["0,0,1,29200,0"]), &[]);
    assert_eq!(counter(&alone, "free_tokens"), 8);
    assert_eq!(counter(&alone, "tokens_sent"), 12);
    assert_eq!(counter(&alone, "tokens_expired"), 0);
    assert_eq!(counter(&alone, "free_tokens_expired"), 0);

    let busy_source = run(
        spec_with_trace(
            "[topology]\nkind = \"star\"\nhosts = 3\n[transport]\nprotocol = \"phost\"\n",
            &["0,0,1,146000,0", "1,0,2,43800,0"],
        ),
        &[],
    );
    let expired = counter(&busy_source, "tokens_expired");
    let free_expired = counter(&busy_source, "free_tokens_expired");
    let issued = counter(&busy_source, "tokens_sent") + counter(&busy_source, "free_tokens");
    assert_eq!(counter(&busy_source, "free_tokens"), 16);
    assert!(expired > 0, "the unserved flow's tokens expire");
    let sent: u64 = busy_source.records.packets_sent.iter().map(|&n| u64::from(n)).sum();
    assert!(
        sent <= issued - expired - free_expired,
        "{sent} packets sent on {issued} tokens of which {expired} + {free_expired} expired"
    );
}

/// A one-packet flow whose RTS and only (free-token) data packet are both lost at the source's
/// NIC: its destination never learns of it.
fn rts_and_data_lost() -> [LossRule; 2] {
    [
        LossRule { flow: 0, seq: 0, kind: dcsim::transport::phost::RTS, hop: 0, count: 1 },
        LossRule { flow: 0, seq: 0, kind: PacketKind::DATA, hop: 0, count: 1 },
    ]
}

#[test]
#[cfg_attr(debug_assertions, should_panic(expected = "flows stalled"))]
fn a_lost_rts_with_its_free_packets_is_never_recovered_as_published() {
    // Neither the paper nor the authors' code has a source timeout: with
    // `source_timeout_mtu = 0` (default) the run ends with the flow open (debug builds assert).
    let out =
        run_leaving_flows_open(spec_with_trace(PAIR, &["0,0,1,1460,0"]), &rts_and_data_lost());
    let c = &out.summary.counters;
    assert_eq!((c.flows_stalled, out.summary.flows_completed), (1, 0));
}

#[test]
fn the_source_timeout_resends_a_lost_rts() {
    // Timeout 10 T = 12 µs. The data packet leaves (and is lost) at 0, the source's last
    // activity; the RTS goes again at 12 µs and reaches the destination at 12.232 µs. Its one
    // free token covers the whole flow, so the destination waits the re-issue timeout (24 T =
    // 28.8 µs) for that packet: the token leaves at 41.032 µs (meanwhile the silent source
    // resends its RTS at 24 and 36 µs, which the destination ignores), reaches the source at
    // 41.264, the packet arrives at 42.664 and the ACK at 42.896 µs.
    let spec =
        spec_with_trace(&format!("{PAIR}[phost]\nsource_timeout_mtu = 10\n"), &["0,0,1,1460,0"]);
    let out = run(spec, &rts_and_data_lost());
    assert_eq!(fct_ps(&out, 0), ns(42_896));
    let counter = |name: &str| out.summary.counters.transport_counters[name];
    assert_eq!((counter("rts_resent"), counter("acks_resent")), (3, 0));
    assert_eq!(out.summary.counters.flows_stalled, 0);
}

#[test]
fn the_source_timeout_recovers_a_lost_ack() {
    // The RTS leaves at 0 and the data packet, once the NIC is free, at 32 ns: the source's
    // last activity. The packet arrives at 1.432 µs and its ACK is lost at the destination's
    // NIC. 10 T after 32 ns the source resends the RTS (12.032 µs, at the destination 12.264);
    // the destination, which has every packet, answers with the ACK again: 12.496 µs.
    let ack_lost = LossRule { flow: 0, seq: 0, kind: PacketKind::ACK, hop: 0, count: 1 };
    let spec =
        spec_with_trace(&format!("{PAIR}[phost]\nsource_timeout_mtu = 10\n"), &["0,0,1,1460,0"]);
    let out = run(spec, &[ack_lost]);
    assert_eq!(fct_ps(&out, 0), ns(12_496));
    let counter = |name: &str| out.summary.counters.transport_counters[name];
    assert_eq!((counter("rts_resent"), counter("acks_resent")), (1, 1));
}

#[test]
fn the_source_timeout_changes_nothing_without_loss() {
    // The timer only fires after a silence: the first test's flow sends or hears something at
    // least every 10 µs (the held slots are 9.6 µs), so with a 10 T timeout it finishes exactly
    // as before, with no RTS sent again.
    let spec =
        spec_with_trace(&format!("{PAIR}[phost]\nsource_timeout_mtu = 10\n"), &["0,0,1,29200,0"]);
    let out = run(spec, &[]);
    assert_eq!(fct_ps(&out, 0), ns(24_896));
    assert_eq!(out.summary.counters.transport_counters["rts_resent"], 0);
    // Without the field the counters stay as they were.
    let off = run(spec_with_trace(PAIR, &["0,0,1,29200,0"]), &[]);
    assert!(!off.summary.counters.transport_counters.contains_key("rts_resent"));
}

#[test]
fn a_source_timeout_below_one_packet_time_is_refused() {
    let e = dcsim::Spec::from_toml_str(&format!("{PAIR}[phost]\nsource_timeout_mtu = 0.5\n"))
        .unwrap_err();
    assert_eq!(e.path, "phost.source_timeout_mtu");
    assert!(e.message.contains("0.5") && e.message.contains("at least 1"), "{e}");
}
