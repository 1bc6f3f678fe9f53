//! Hand-computed scenarios: exact FCTs for one flow, and exact recovery from one loss.
//!
//! All links are 10 Gbps with 200 ns propagation unless noted: a 1500-byte packet serializes
//! in 1200 ns at 10 G and 300 ns at 40 G; a 40-byte ACK in 32 ns at 10 G and 8 ns at 40 G.

use super::common::*;
use dcsim::fabric::LossRule;
use dcsim::packet::PacketKind;

const PAIR: &str =
    "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"tcp\"\ndupack_threshold = 3\n";

#[test]
fn one_flow_over_one_link() {
    // 10 packets in the initial window of 12: back to back, so the last arrives at
    // 10 × 1200 + 200 and its ACK returns in 32 + 200.
    let out = run_both_port_paths(spec_with_trace(PAIR, &["0,0,1,14600,0"]), &[]);
    assert_eq!(fct_ps(&out, 0), ns(10 * 1200 + 200 + 32 + 200));
    assert_eq!(fct_ps(&out, 0), out.records.ideal_ps[0]);
    // 20 packets (more than the initial window): the ACK clock keeps the NIC busy (slow start
    // adds two packets per ACK), so the FCT is still the ideal 20 × 1200 + 432.
    let out = run_both_port_paths(spec_with_trace(PAIR, &["0,0,1,29200,0"]), &[]);
    assert_eq!(fct_ps(&out, 0), ns(20 * 1200 + 432));
    assert_eq!(out.records.retransmits[0], 0);
    assert_eq!(out.records.packets_sent[0], 20);
}

/// 2 racks × 1 host, 1 spine: host → ToR → spine → ToR → host, 10/40/40/10 Gbps.
fn four_hops(switching: &str) -> String {
    format!(
        "[topology]\nkind = \"leaf-spine\"\nracks = 2\nhosts_per_rack = 1\nspines = 1\n\
         core_link_gbps = 40\nswitching = \"{switching}\"\n[transport]\nprotocol = \"tcp\"\n"
    )
}

#[test]
fn one_flow_over_four_hops_store_and_forward() {
    // First packet: 1200 + 300 + 300 + 1200 of serialization and 4 × 200 of propagation;
    // the other 4 follow at the bottleneck's 1200 each. ACK: 32 + 8 + 8 + 32 + 4 × 200.
    let out = run_both_port_paths(
        spec_with_trace(&four_hops("store-and-forward"), &["0,0,1,7300,0"]),
        &[],
    );
    let data = 3000 + 4 * 1200 + 800;
    let ack = 80 + 800;
    assert_eq!(fct_ps(&out, 0), ns(data + ack));
}

#[test]
fn one_flow_over_four_hops_cut_through() {
    // Cut-through: each switch forwards once the 40-byte header is in (32 ns at 10 G, 8 at
    // 40 G); the last hop serializes fully. First packet: 232 + 208 + 208 + 1400 = 2048;
    // 4 more at 1200 each; ACK 880. Equals the YAPS oracle 1200·n + 1728 ns.
    let out =
        run_both_port_paths(spec_with_trace(&four_hops("cut-through"), &["0,0,1,7300,0"]), &[]);
    assert_eq!(fct_ps(&out, 0), ns(2048 + 4 * 1200 + 880));
    assert_eq!(fct_ps(&out, 0), ns(1200 * 5 + 1728));
}

#[test]
fn fast_retransmit_recovers_one_dropped_packet() {
    // Star with 2 hosts, store-and-forward, threshold 3. 10 packets leave the NIC back to
    // back; packet 2 is dropped at the switch. Packet k reaches the receiver at
    // 1200(k+2) + 400; ACKs take 464 back. The ACKs of packets 3, 4, 5 are duplicates; the
    // third arrives at 1200·7 + 400 + 464 = 9264 ns and triggers the retransmission, which
    // queues behind packet 9 at the NIC (busy until 12000), reaches the switch at 13400 and
    // the receiver at 14800; the final ACK is back at 15264 ns.
    let spec = spec_with_trace(
        "[topology]\nkind = \"star\"\nhosts = 2\nswitching = \"store-and-forward\"\n\
         [transport]\nprotocol = \"tcp\"\ndupack_threshold = 3\n",
        &["0,0,1,14600,0"],
    );
    let loss = LossRule { flow: 0, seq: 2, kind: PacketKind::DATA, hop: 1, count: 1 };
    let out = run_both_port_paths(spec, &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(15264));
    assert_eq!((out.records.retransmits[0], out.records.timeouts[0]), (1, 0));
    assert_eq!(
        out.summary.counters.drops_by_hop.values().sum::<u64>(),
        0,
        "scripted losses are not queue drops"
    );
}

#[test]
fn retransmission_timeout_recovers_a_lost_tail() {
    // 3 packets over one link; the last is lost at the NIC, so no duplicate ACK can come.
    // ACKs of packets 0 and 1 arrive at 1632 and 2832 ns and push the timer to
    // 2832 + 200 µs (min RTO; srtt + 4·rttvar is only ~5 µs). The retransmission leaves at
    // 202832 ns and is acknowledged 1200 + 200 + 32 + 200 later.
    let spec = spec_with_trace(
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"tcp\"\nmin_rto_us = 200\n",
        &["0,0,1,4380,0"],
    );
    let loss = LossRule { flow: 0, seq: 2, kind: PacketKind::DATA, hop: 0, count: 1 };
    let out = run_both_port_paths(spec, &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(202_832 + 1632));
    assert_eq!((out.records.retransmits[0], out.records.timeouts[0]), (1, 1));
}

#[test]
fn fixed_rto_does_not_back_off() {
    // The same flow loses its last packet twice. Adaptive RTO doubles the second wait;
    // a fixed RTO (MinTCP) does not.
    let rows = ["0,0,1,4380,0"];
    let loss = LossRule { flow: 0, seq: 2, kind: PacketKind::DATA, hop: 0, count: 2 };
    let adaptive = run_both_port_paths(
        spec_with_trace(
            "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"tcp\"\nmin_rto_us = 100\n",
            &rows,
        ),
        &[loss],
    );
    let fixed = run_both_port_paths(
        spec_with_trace(
            "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"tcp\"\nmin_rto_us = 100\nrto = \"fixed\"\n",
            &rows,
        ),
        &[loss],
    );
    // First timeout at 2832 + 100 µs. Adaptive: the retransmission (sent at 102832) is lost
    // too and the backed-off timer fires 200 µs later; fixed: 100 µs later.
    assert_eq!(fct_ps(&fixed, 0), ns(102_832 + 100_000 + 1632));
    assert_eq!(fct_ps(&adaptive, 0), ns(102_832 + 200_000 + 1632));
    assert_eq!(fixed.records.timeouts[0], 2);
}

#[test]
fn dctcp_keeps_the_queue_short_where_tcp_overflows() {
    // Two 3 MB flows into one receiver through a 100 KB buffer: TCP fills the buffer and
    // loses packets; DCTCP (K = 30 KB) holds the queue near K without loss.
    let base = "[topology]\nkind = \"star\"\nhosts = 3\nbuffer_bytes = 100000\n\
                [dctcp]\nmarking_threshold_bytes = 30000\n[transport]\nmax_window_pkts = 1000\nprotocol = ";
    let rows = ["0,0,2,3000000,0", "1,1,2,3000000,0"];
    let tcp = run(spec_with_trace(&format!("{base}\"tcp\"\n"), &rows), &[]);
    let dctcp = run(spec_with_trace(&format!("{base}\"dctcp\"\n"), &rows), &[]);
    let drops = |o: &dcsim::RunOutput| o.summary.counters.drops_by_hop.values().sum::<u64>();
    let marks = |o: &dcsim::RunOutput| o.summary.counters.marks_by_hop.values().sum::<u64>();
    assert!(drops(&tcp) > 0, "TCP should overflow the buffer");
    assert_eq!(marks(&tcp), 0, "TCP packets are not ECN-capable");
    assert_eq!(drops(&dctcp), 0, "DCTCP should not lose packets");
    assert!(marks(&dctcp) > 0);
    // Both keep the bottleneck busy: completion within 10 % of 6 MB at 10 Gbps.
    for o in [&tcp, &dctcp] {
        let last = (0..2).map(|i| fct_ps(o, i)).max().unwrap() as f64 / 1e6;
        let ideal = 6e6 * 1500.0 / 1460.0 * 8.0 / 10e9 * 1e6;
        assert!(last < ideal * 1.1, "finished at {last} µs, ideal {ideal} µs");
    }
}

#[test]
fn a_flow_to_itself_is_rejected_and_hosts_are_checked() {
    let path = trace_file(&["0,0,0,1000,0"]);
    let e = dcsim::Spec::from_toml_str(&format!(
        "[topology]\nkind = \"pair\"\n[workload]\nmatrix = \"{}\"",
        path.display()
    ))
    .unwrap_err();
    assert!(e.message.contains("line 2") && e.message.contains("src and dst"), "{e}");
    let path = trace_file(&["0,0,5,1000,0"]);
    let e = dcsim::Spec::from_toml_str(&format!(
        "[topology]\nkind = \"pair\"\n[workload]\nmatrix = \"{}\"",
        path.display()
    ))
    .unwrap_err();
    assert!(e.message.contains("dst 5 is out of range"), "{e}");
    let path = trace_file(&["0,0,1,-5,0"]);
    let e = dcsim::Spec::from_toml_str(&format!(
        "[topology]\nkind = \"pair\"\n[workload]\nmatrix = \"{}\"",
        path.display()
    ))
    .unwrap_err();
    assert!(e.message.contains("size_bytes -5"), "{e}");
}

/// pFabric on a 3-host star, store-and-forward, a buffer large enough for no loss.
const PFABRIC_STAR: &str = "[topology]\nkind = \"star\"\nhosts = 3\nswitching = \"store-and-forward\"\n\
    [transport]\nprotocol = \"pfabric\"\n[pfabric]\nbuffer_bytes = 200000\nmax_window_pkts = 1000\n";

#[test]
fn pfabric_small_flow_preempts_a_large_one_at_the_bottleneck() {
    // A 5-packet flow (host 1 → 2) and a 50-packet flow (host 0 → 2) start together and meet
    // at the switch port to host 2. The small flow's packets carry smaller remaining sizes, so
    // the port always sends them first: the small flow finishes at exactly its ideal time and
    // the large one exactly 5 packet times (5 × 1.2 µs) after its own ideal time, the
    // bottleneck never idling.
    let out = run(spec_with_trace(PFABRIC_STAR, &["0,1,2,7300,0", "1,0,2,73000,0"]), &[]);
    assert_eq!(fct_ps(&out, 0), out.records.ideal_ps[0]);
    assert_eq!(fct_ps(&out, 1), out.records.ideal_ps[1] + ns(5 * 1200));
    assert_eq!(out.summary.counters.drops_by_hop.values().sum::<u64>(), 0);
    // The same pair under DCTCP (FIFO) shares the port instead: the small flow is slower.
    let fifo = run(
        spec_with_trace(
            &PFABRIC_STAR
                .replace("protocol = \"pfabric\"", "protocol = \"dctcp\"\nbuffer_bytes = 200000"),
            &["0,1,2,7300,0", "1,0,2,73000,0"],
        ),
        &[],
    );
    assert!(fct_ps(&fifo, 0) > fct_ps(&out, 0));
}

#[test]
fn mintcp_times_out_on_a_fixed_rto_then_probes() {
    // 3 packets over one link, fixed RTO 40 µs, probe mode after 5 consecutive timeouts.
    // Packet 2 is lost 5 times (first transmission and 4 retransmissions). ACKs of packets 0
    // and 1 return at 1632 and 2832 ns; timeouts fire every 40 µs from 42 832 ns: the 1st-4th
    // resend packet 2 (lost), the 5th (at 202 832 ns) enters probe mode and sends a 41-byte
    // probe (32.8 ns + 200 ns; its ACK 232 ns back, at 203 296.8 ns); that ACK ends probe
    // mode and packet 2 goes out once more, acknowledged 1632 ns later.
    let spec = spec_with_trace(
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrto_us = 40\nprobe_after_timeouts = 5\n",
        &["0,0,1,4380,0"],
    );
    let loss = LossRule { flow: 0, seq: 2, kind: PacketKind::DATA, hop: 0, count: 5 };
    let out = run(spec, &[loss]);
    assert_eq!(fct_ps(&out, 0), 202_832_000 + 32_800 + 200_000 + 232_000 + 1_632_000);
    assert_eq!((out.records.timeouts[0], out.records.retransmits[0]), (5, 5));
    // Without probe mode the 5th timeout resends the packet itself: 40 µs earlier than the
    // probe path's resend would be impossible; it finishes at 202 832 + 1632 ns.
    let no_probe = spec_with_trace(
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrto_us = 40\nprobe_after_timeouts = 0\n",
        &["0,0,1,4380,0"],
    );
    let out = run(no_probe, &[loss]);
    assert_eq!(fct_ps(&out, 0), 202_832_000 + 1_632_000);
}

/// Issue 16 (the opt-in partitioned model), SACK learned from ACKs: five packets over one
/// link (1.2 µs each, 200 ns), pFabric with a fixed 40 µs RTO. Packets 0 and 2 are lost at
/// the source NIC, so 1, 3 and 4 go out back to back and arrive at 1.4, 2.6 and 3.8 µs; the
/// (duplicate, cumulative 0) ACKs of 1 and 3 are lost, the one of 4 gets back. At 40 µs the
/// timeout resends packet 0 (window 1); its ACK (cumulative 2) returns at 41.632 µs and slow
/// start opens the window to 3: packets 2, 3 and 4. Packet 2 goes out; packet 4 is skipped
/// by both models (the receiver holds it, and its ACK said so). Packet 3 tells them apart:
/// the idealised sender reads the receiver's state and skips it, the partitioned one has
/// not heard of it (its ACK was lost) and resends it. Packet 2's ACK (cumulative 5) ends the
/// flow at 41.632 + 1.2 + 0.2 + 0.032 + 0.2 = 43.264 µs in both.
#[test]
fn the_partitioned_model_learns_sack_from_acks() {
    let losses = [
        LossRule { flow: 0, seq: 0, kind: PacketKind::DATA, hop: 0, count: 1 },
        LossRule { flow: 0, seq: 2, kind: PacketKind::DATA, hop: 0, count: 1 },
        LossRule { flow: 0, seq: 0, kind: PacketKind::ACK, hop: 0, count: 2 },
    ];
    for (partitioned, retransmits) in [(false, 2), (true, 3)] {
        let spec = spec_with_trace(
            &format!(
                "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrto_us = 40\n[engine]\npartitioned = {partitioned}\n"
            ),
            &["0,0,1,7300,0"],
        );
        let out = run(spec, &losses);
        assert_eq!(fct_ps(&out, 0), ns(43_264), "partitioned = {partitioned}");
        assert_eq!(out.records.timeouts[0], 1, "partitioned = {partitioned}");
        assert_eq!(out.records.retransmits[0], retransmits, "partitioned = {partitioned}");
    }
}

/// Issue 16 (the opt-in partitioned model): with SACK learned from ACKs a sender never
/// skips a packet before an ACK names it. One packet, its ACK lost: the idealised sender's
/// timeout at 40 µs finds the packet at the receiver and waits an RTO (a stall check) before
/// resending it at 80 µs (`a_flow_whose_acks_are_all_lost_does_not_stall`); the partitioned
/// one has no such knowledge and resends at 40 µs: 40 000 + 1200 + 200 + 32 + 200 ns, one
/// timeout. TCP with SACK likewise resends at its 200 µs minimum RTO instead of 600 µs.
#[test]
fn a_partitioned_sender_resends_what_no_ack_named() {
    let ack_lost = LossRule { flow: 0, seq: 1, kind: PacketKind::ACK, hop: 0, count: 1 };
    let spec = spec_with_trace(
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrto_us = 40\n[engine]\npartitioned = true\n",
        &["0,0,1,1460,0"],
    );
    let out = run_both_port_paths(spec, &[ack_lost]);
    assert_eq!(fct_ps(&out, 0), ns(40_000 + 1632));
    assert_eq!((out.records.timeouts[0], out.records.retransmits[0]), (1, 1));
    let spec = spec_with_trace(
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"tcp\"\nsack = true\nmin_rto_us = 200\n[engine]\npartitioned = true\n",
        &["0,0,1,1460,0"],
    );
    let out = run_both_port_paths(spec, &[ack_lost]);
    assert_eq!(fct_ps(&out, 0), ns(200_000 + 1632));
}

#[test]
fn a_flow_whose_acks_are_all_lost_does_not_stall() {
    // One packet over one link, its ACK lost. The receiver holds the packet, so the timeout
    // at 40 µs finds nothing to resend (the idealised SACK skips it) and waits one RTO for
    // the ACK; none has come by 80 µs, so the flow times out again and resends packet 0
    // itself. The duplicate draws a fresh ACK: 80 000 + 1200 + 200 + 32 + 200 ns.
    let ack_lost = LossRule { flow: 0, seq: 1, kind: PacketKind::ACK, hop: 0, count: 1 };
    let spec = spec_with_trace(
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrto_us = 40\n",
        &["0,0,1,1460,0"],
    );
    let out = run_both_port_paths(spec, &[ack_lost]);
    assert_eq!(fct_ps(&out, 0), ns(80_000 + 1632));
    assert_eq!((out.records.timeouts[0], out.records.retransmits[0]), (2, 1));
    // TCP with SACK and an adaptive RTO: timeout at the 200 µs minimum, backed off to 400 µs
    // for the check, resend at 600 µs.
    let spec = spec_with_trace(
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"tcp\"\nsack = true\nmin_rto_us = 200\n",
        &["0,0,1,1460,0"],
    );
    let out = run_both_port_paths(spec, &[ack_lost]);
    assert_eq!(fct_ps(&out, 0), ns(600_000 + 1632));
    // When the ACK is only late, not lost, nothing is resent: ten packets, the ACKs of the
    // last three lost; the ACK of packet 9 is a cumulative ACK for all of them.
    let spec = spec_with_trace(
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrto_us = 40\n",
        &["0,0,1,14600,0"],
    );
    let late = [8, 9].map(|seq| LossRule { flow: 0, seq, kind: PacketKind::ACK, hop: 0, count: 1 });
    let out = run_both_port_paths(spec, &late);
    assert_eq!(out.records.retransmits[0], 0);
    assert_eq!(out.records.timeouts[0], 0);
}

#[test]
fn linerate_keeps_its_window_through_losses() {
    // LineRate sends its whole (maximum) window at once and resends on the fixed timeout
    // without shrinking it: with the 13th packet lost once, packets 13-19 still go out in the
    // first window (no slow start after the loss), unlike MinTCP.
    let base = "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrto_us = 40\nbuffer_bytes = 100000\nmax_window_pkts = 20\nrate_control = ";
    let loss = LossRule { flow: 0, seq: 12, kind: PacketKind::DATA, hop: 0, count: 1 };
    let lr = run(spec_with_trace(&format!("{base}\"linerate\"\n"), &["0,0,1,29200,0"]), &[loss]);
    let mt = run(spec_with_trace(&format!("{base}\"mintcp\"\n"), &["0,0,1,29200,0"]), &[loss]);
    // Both need exactly one timeout and one retransmission (the receiver keeps the rest).
    assert_eq!((lr.records.timeouts[0], lr.records.retransmits[0]), (1, 1));
    assert_eq!(mt.records.timeouts[0], 1);
    assert!(fct_ps(&lr, 0) <= fct_ps(&mt, 0));
}

/// `pfabric.rto = "adaptive"`: TCP's estimate over the `rto_us` floor, doubled per
/// consecutive timeout. Three packets, packet 2 lost on its first two sends. The ACKs of
/// packets 0 and 1 return at 1632 and 2832 ns (RTT samples far below the 40 µs floor) and
/// restart the timer: the first timeout fires at 42 832 ns in both modes. The fixed RTO fires
/// again at 82 832 and 122 832 ns; the adaptive one waits 80 µs, then 160 µs: 122 832 and
/// 282 832 ns. The third resend gets through, acknowledged 1632 ns later.
#[test]
fn pfabric_adaptive_rto_backs_off_per_consecutive_timeout() {
    let loss = LossRule { flow: 0, seq: 2, kind: PacketKind::DATA, hop: 0, count: 3 };
    for (rto, last_timeout_ns) in [("fixed", 122_832), ("adaptive", 282_832)] {
        let spec = spec_with_trace(
            &format!(
                "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrate_control = \"linerate\"\nrto_us = 40\nrto = \"{rto}\"\n"
            ),
            &["0,0,1,4380,0"],
        );
        let out = run(spec, &[loss]);
        assert_eq!(fct_ps(&out, 0), ns(last_timeout_ns + 1632), "rto = {rto}");
        assert_eq!((out.records.timeouts[0], out.records.retransmits[0]), (3, 3), "rto = {rto}");
    }
    // The backoff stops at `max_rto_us`: with 60 µs the second wait is 60 µs, not 160.
    let spec = spec_with_trace(
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrate_control = \"linerate\"\nrto_us = 40\nrto = \"adaptive\"\nmax_rto_us = 60\n",
        &["0,0,1,4380,0"],
    );
    let out = run(spec, &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(42_832 + 60_000 + 60_000 + 1632));
}

/// `pfabric.sending = "nic-clocked"`: host 0 of the 3-host star sends a 50-packet flow to
/// host 2 from 0 µs and a 40-packet flow to host 1 from 6.6 µs (LineRate, windows that never
/// limit, a 40 µs RTO). The NIC sends the first flow's packets 0-5 back to back; at 7.2 µs,
/// when packet 5 has left, it takes the second flow's (58,400 bytes left against the first's
/// 64,240 or more), all 40 back to back, then the first flow's last 44: the second flow
/// finishes exactly 0.6 µs after its ideal time and the first exactly 40 packet times
/// (48 µs) after its own, with no loss, no timeout and no packet sent twice. The first flow
/// has nothing in flight while it waits 48 µs, so no timer fires. With `sending = "queue"`
/// its 50 packets wait in the NIC's queue instead, its timer runs from its last ACK (packet
/// 5's, at 9.264 µs), and it times out while they wait there (40 µs later, at 49.264 µs): it
/// sends packets twice.
#[test]
fn pfabric_nic_clocked_hosts_send_the_most_urgent_flow_and_time_from_departure() {
    let trace = ["0,0,2,73000,0", "1,0,1,58400,0.0000066"];
    let spec = |sending: &str| {
        spec_with_trace(
            &format!(
                "{PFABRIC_STAR}rate_control = \"linerate\"\nrto_us = 40\nsending = \"{sending}\"\n"
            ),
            &trace,
        )
    };
    let out = run(spec("nic-clocked"), &[]);
    assert_eq!(fct_ps(&out, 1), out.records.ideal_ps[1] + ns(600));
    assert_eq!(fct_ps(&out, 0), out.records.ideal_ps[0] + ns(40 * 1200));
    assert_eq!(out.records.timeouts[..2], [0, 0]);
    assert_eq!(out.records.retransmits[..2], [0, 0]);
    assert_eq!(out.records.packets_sent[..2], [50, 40]);
    assert_eq!(out.summary.counters.drops_by_hop.values().sum::<u64>(), 0);
    let queued = run(spec("queue"), &[]);
    assert_eq!(fct_ps(&queued, 1), fct_ps(&out, 1), "the second flow is served the same");
    assert!(queued.records.timeouts[0] >= 1);
    assert!(queued.records.retransmits[0] >= 1);
}

/// `pfabric.sending = "nic-clocked"`: a packet's timer runs from when it leaves the host. EDF
/// (`pfabric.priority = "deadline"`): a 7-packet flow without a deadline (the lowest
/// priority) sends packets 0-5 from 0 µs; a 20-packet flow with a deadline takes the NIC from
/// 7.2 to 31.2 µs; then packet 6 leaves and is lost at the NIC. The last ACK (packet 5's) came
/// at 9.264 µs, so a timer run from it would fire at 49.264 µs (FCT 52.528 µs); run from the
/// departure it fires at 71.2 µs, and the resent packet's ACK is back 3.264 µs later.
#[test]
fn pfabric_nic_clocked_timer_runs_from_the_departure() {
    let spec = spec_with_trace(
        &format!(
            "{PFABRIC_STAR}rate_control = \"linerate\"\nrto_us = 40\npriority = \"deadline\"\nsending = \"nic-clocked\"\n"
        ),
        &["0,0,2,10220,0", "1,0,1,29200,0.0000066,0.001"],
    );
    let loss = LossRule { flow: 0, seq: 6, kind: PacketKind::DATA, hop: 0, count: 1 };
    let out = run(spec, &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(71_200 + 3_264));
    assert_eq!((out.records.timeouts[0], out.records.retransmits[0]), (1, 1));
    assert_eq!(fct_ps(&out, 1), out.records.ideal_ps[1] + ns(600));
}

/// `pfabric.sending = "nic-clocked"` with a NIC buffer of 3 packets: a LineRate flow of 20
/// packets (window 20) goes out back to back at exactly its ideal time; with `"queue"` its
/// window overflows the NIC's buffer, the host drops its own packets and the flow waits for
/// its timeout.
#[test]
fn pfabric_nic_clocked_hosts_do_not_drop_their_own_packets() {
    let spec = |sending: &str| {
        spec_with_trace(
            &format!(
                "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrate_control = \"linerate\"\nrto_us = 40\nbuffer_bytes = 4500\nmax_window_pkts = 20\nsending = \"{sending}\"\n"
            ),
            &["0,0,1,29200,0"],
        )
    };
    let out = run(spec("nic-clocked"), &[]);
    assert_eq!(fct_ps(&out, 0), out.records.ideal_ps[0]);
    assert_eq!(fct_ps(&out, 0), ns(20 * 1200 + 432));
    assert_eq!((out.records.timeouts[0], out.records.packets_sent[0]), (0, 20));
    assert_eq!(out.summary.counters.drops_by_hop.values().sum::<u64>(), 0);
    let queued = run(spec("queue"), &[]);
    assert!(queued.summary.counters.drops_by_hop["source_nic"] > 0);
    assert!(queued.records.timeouts[0] >= 1);
    assert!(fct_ps(&queued, 0) > ns(40_000));
}

#[test]
fn pfabric_deadline_mode_serves_the_earliest_deadline_first() {
    // The same two flows as the preemption test, but the large flow has the earlier deadline
    // (200 µs vs 1 ms). Both first packets reach the switch at 1.4 µs; the small flow's (sent
    // first) finds the port idle and leaves at once — a link never preempts a packet on the
    // wire. From then on EDF serves the large flow's packets first: it finishes exactly one
    // packet time (1.2 µs) after its ideal, and the small flow's other 4 packets wait for all
    // 50 of them. A large flow whose deadline cannot be met (1 µs for 50 packets) is quenched
    // to the lowest priority instead, so the small flow goes first.
    let spec = |mode: &str| {
        spec_with_trace(
            &format!("{PFABRIC_STAR}priority = \"{mode}\"\n"),
            &["0,1,2,7300,0,0.001", "1,0,2,73000,0,0.0002"],
        )
    };
    let edf = run(spec("deadline"), &[]);
    assert_eq!(fct_ps(&edf, 1), edf.records.ideal_ps[1] + ns(1200));
    assert_eq!(fct_ps(&edf, 0), edf.records.ideal_ps[0] + ns(50 * 1200));
    assert_eq!(edf.summary.deadline_flows, 2);
    assert_eq!(edf.summary.deadline_met_fraction, 1.0);
    let srpt = run(spec("remaining"), &[]);
    assert_eq!(fct_ps(&srpt, 0), srpt.records.ideal_ps[0]);
    let hopeless = run(
        spec_with_trace(
            &format!("{PFABRIC_STAR}priority = \"deadline\"\n"),
            &["0,1,2,7300,0,0.001", "1,0,2,73000,0,0.000001"],
        ),
        &[],
    );
    assert_eq!(fct_ps(&hopeless, 0), hopeless.records.ideal_ps[0], "the feasible flow goes first");
    assert_eq!(hopeless.summary.deadline_met_fraction, 0.5);
}

#[test]
fn few_queue_pfabric_classifies_by_flow_size_or_by_remaining_bytes() {
    // Two queues, threshold 50 packets (73,000 B). A 60-packet flow (host 1 → 2) and a
    // 200-packet flow (host 0 → 2) start together. By flow size both are above the threshold
    // and share the low queue (FIFO) at the port to host 2 for the whole of the short flow's
    // life. By remaining bytes (the authors' ns-2 `calPrio`), the 60-packet flow moves to the
    // high queue once 10 of its packets are acknowledged and then has the port to itself.
    let toml = |classify: &str| {
        format!("{PFABRIC_STAR}queues = 2\nthresholds = [73000]\nreserved_bytes = 15000\nclassify = \"{classify}\"\n")
    };
    let rows = ["0,1,2,87600,0", "1,0,2,292000,0"];
    let by_size = run(spec_with_trace(&toml("flow-size"), &rows), &[]);
    let by_left = run(spec_with_trace(&toml("remaining"), &rows), &[]);
    let pkt = ns(1200);
    let ideal = by_size.records.ideal_ps[0];
    let (fs, fr) = (fct_ps(&by_size, 0), fct_ps(&by_left, 0));
    // Sharing one FIFO: both windows grow in lock step (same RTT, same slow start), so the
    // port alternates the two flows and 59 long-flow packets cross it before the short
    // flow's last one.
    assert_eq!(fs, ideal + 59 * pkt, "flow-size");
    // By remaining bytes the short flow shares only until its 10th ACK, after which its
    // packets jump the long flow's backlog: measured 40 long-flow packets ahead of its last
    // (the ones both flows sent in slow start before the switch), so 19 packet times sooner.
    assert_eq!(fr, ideal + 40 * pkt, "remaining");
    // Neither mode wastes the port: the long flow ends when all 260 packets have crossed it,
    // 60 packet times after its own ideal time.
    for out in [&by_size, &by_left] {
        assert_eq!(out.summary.counters.drops_by_hop.values().sum::<u64>(), 0);
        assert_eq!(fct_ps(out, 1), out.records.ideal_ps[1] + 60 * pkt);
    }
}

/// Issue 17 item 3.4: under `workload.matrix = "self"` (the pHost authors' `PermutationTM` as
/// first committed) a flow's ACKs leave through the NIC its data is queued at. pFabric's
/// dequeue rule (the most urgent packet's flow sends its *earliest* queued packet) then sends
/// the flow's queued data before its own ACKs, so a flow longer than its window waits for its
/// ACKs behind its own data, at the NIC and again at the switch port back to the host.
#[test]
fn a_flow_to_itself_waits_for_its_acks_behind_its_own_data() {
    // One 13-packet flow on a 2-host star, store-and-forward, window 12. Data packet k leaves
    // the NIC in [1200k, 1200(k+1)] ns, crosses the switch port in [1400 + 1200k, 2600 +
    // 1200k] and reaches the host at 2800 + 1200k, whose ACK is queued at the same NIC. The
    // NIC sends data until 14 400 (ACKs 0-9 queued by then), then ACKs 0-9 (32 ns each) and
    // ACK 10 (at 14 800); at the switch port they queue behind data packet 11 (14 600-15 800),
    // so ACK k reaches the sender at 16 032 + 32k. ACK 0 opens the window for packet 12: the
    // NIC (ACK 11 in 16 000-16 032) sends it in 16 032-17 232, the switch port in 17 432-18 632,
    // and its ACK returns in 32 + 200 + 32 + 200 ns: FCT 19 296 ns, 1632 ns above the ideal
    // 13 × 1200 + 200 + 1200 + 200 + 464 = 17 664 ns.
    let spec = |matrix: &str| {
        dcsim::Spec::from_toml_str(&format!(
            "[topology]\nkind = \"star\"\nhosts = 2\nswitching = \"store-and-forward\"\n\
             [transport]\nprotocol = \"pfabric\"\n\
             [workload]\nmatrix = \"{matrix}\"\narrivals = \"at-start\"\nflows = 1\nflow_sizes = 18980\n"
        ))
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let out = run(spec("self"), &[]);
    assert_eq!(out.records.ideal_ps[0], ns(17_664));
    assert_eq!(fct_ps(&out, 0), ns(19_296));
    assert_eq!((out.records.retransmits[0], out.records.timeouts[0]), (0, 0));
    // To the other host the ACKs return through that host's NIC: ACK 0 is back at 3264 ns,
    // packet 12 follows packet 11 back to back, and the flow takes exactly its ideal time.
    let out = run(spec("permutation"), &[]);
    assert_eq!(fct_ps(&out, 0), out.records.ideal_ps[0]);
    assert_eq!(out.records.ideal_ps[0], ns(17_664));
}

/// Issue 17 item 3.4: `pfabric.sack_window` (the pHost authors' pFabric window, cwnd plus
/// the packets the receiver holds beyond the first unacknowledged one) lets a flow with a
/// hole go on sending until its timeout.
#[test]
fn pfabric_sack_window_keeps_a_flow_with_a_hole_sending() {
    // 8 packets over one link, window 4, fixed RTO 40 µs; packet 0 is lost at the source.
    // Packets 1-3 go out in [0, 3600] ns and their duplicate ACKs return at 1632, 2832 and
    // 4032 ns. Without `sack_window` the window (packets 0-3) is spent: the timeout at 40 µs
    // resends packet 0 (window 1), whose ACK (cumulative 4, at 41 632) opens the window to
    // min(1 + 4, 4) = 4, and packets 4-7 go out back to back in [41 632, 46 432]; the ACK of
    // packet 7 returns at 46 864 ns.
    let toml = |sack_window: bool| {
        format!(
            "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\n\
             rto_us = 40\ninitial_window_pkts = 4\nmax_window_pkts = 4\nprobe_after_timeouts = 0\n\
             sack_window = {sack_window}\n"
        )
    };
    let loss = LossRule { flow: 0, seq: 0, kind: PacketKind::DATA, hop: 0, count: 1 };
    let out = run(spec_with_trace(&toml(false), &["0,0,1,11680,0"]), &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(46_864));
    assert_eq!((out.records.timeouts[0], out.records.retransmits[0]), (1, 1));
    // With it each duplicate ACK reports one more packet held and admits one more: packets
    // 4, 5, 6 on the ACKs of 1, 2, 3 and packet 7 on the ACK of 4 (at 5232 ns) go out in
    // [3600, 8400]. The timeout at 40 µs (not moved: no new cumulative ACK) finds a window of
    // 1 + 7, resends packet 0 only (1-7 are held), and its ACK acknowledges all 8 at
    // 40 000 + 1632 ns.
    let out = run(spec_with_trace(&toml(true), &["0,0,1,11680,0"]), &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(41_632));
    assert_eq!((out.records.timeouts[0], out.records.retransmits[0]), (1, 1));
    assert_eq!(out.records.packets_sent[0], 9);
}

/// TCP flows `rows` over a pair with 20 µs links (a 40 µs round trip holds about 35 packets)
/// and `min_rto_us` 200, flow 0 losing its packet 2 at its NIC: run on connections of their
/// own and on persistent connections. (The timeline port path only: on the event-driven one
/// 100-packet flows here lose a packet at a tie,
/// `the_fifo_paths_differ_only_when_a_departure_and_an_arrival_coincide`.)
fn per_flow_and_persistent(rows: &[&str]) -> (dcsim::RunOutput, dcsim::RunOutput) {
    let base = "[topology]\nkind = \"pair\"\nlink_delay_ns = 20000\n\
                [transport]\nprotocol = \"tcp\"\nmin_rto_us = 200\n";
    let loss = LossRule { flow: 0, seq: 2, kind: PacketKind::DATA, hop: 0, count: 1 };
    let per_flow = run(spec_with_trace(base, rows), &[loss]);
    let persistent =
        run(spec_with_trace(&format!("{base}connections = \"per-host-pair\"\n"), rows), &[loss]);
    (per_flow, persistent)
}

#[test]
fn a_persistent_connection_keeps_its_slow_start_threshold() {
    // Flow 0 (3 packets) loses its last one and times out with a window of 14 (12 + two
    // slow-start ACKs): ssthresh 7. Flows 1 (0 → 1) and 2 (1 → 0, its own host pair) are the
    // same size and start after everything before them has finished, each from the initial
    // window of 12, over a 40 µs round trip that holds about 35 packets. On connections of
    // their own (`per-flow`) both slow-start and finish alike. On persistent connections
    // (`per-host-pair`) flow 1 takes flow 0's connection and its threshold of 7, so it grows
    // by one packet per round trip and is slower; flow 2's pair had no connection yet.
    let (per_flow, persistent) =
        per_flow_and_persistent(&["0,0,1,4380,0", "1,0,1,146000,0.001", "2,1,0,146000,0.003"]);
    assert_eq!(per_flow.records.timeouts[0], 1);
    assert_eq!(fct_ps(&per_flow, 1), fct_ps(&per_flow, 2), "two fresh connections");
    assert_eq!(fct_ps(&persistent, 2), fct_ps(&per_flow, 2), "flow 2's pair had none idle");
    assert_eq!(fct_ps(&persistent, 0), fct_ps(&per_flow, 0));
    // 100 packets from a window of 12: slow start needs 4 round trips (12, 24, 48, 16 more),
    // linear growth from 12 takes 7 (12 + 13 + ... + 18 = 105).
    let rtt = ns(2 * 20_000 + 1200 + 32);
    let (fresh, kept) = (fct_ps(&per_flow, 1), fct_ps(&persistent, 1));
    assert!(kept >= fresh + 2 * rtt, "kept {kept} ps, fresh {fresh} ps");
}

#[test]
fn concurrent_flows_of_a_pair_open_more_connections() {
    // With persistent connections, flows of one host pair that overlap each take a
    // connection of their own (the scripts open one when every connection of the pair is
    // busy): two simultaneous flows with nothing before them run as on `per-flow`.
    let rows = ["0,0,1,146000,0", "1,0,1,146000,0"];
    let base = "[topology]\nkind = \"pair\"\nlink_delay_ns = 20000\n\
                [transport]\nprotocol = \"dctcp\"\n";
    let per_flow = run(spec_with_trace(base, &rows), &[]);
    let persistent =
        run(spec_with_trace(&format!("{base}connections = \"per-host-pair\"\n"), &rows), &[]);
    assert_eq!(per_flow.records.finish_ps, persistent.records.finish_ps);
}

#[test]
fn the_fifo_paths_differ_only_when_a_departure_and_an_arrival_coincide() {
    // One TCP flow of 100 packets over a pair with 20 µs links (`min_rto_us` 200): in slow
    // start its ACKs come back exactly when the NIC finishes a packet, and the NIC's buffer is
    // full then. The timeline (default) lets the packet whose transmission starts at that
    // instant leave the queue first, so the packets the ACK releases fit; the event-driven path
    // runs same-instant events in the order they were scheduled, the ACK's arrival (scheduled
    // when the ACK left, 20 µs earlier) before the transmit completion (scheduled 1.2 µs
    // earlier), and one packet is dropped and timed out (docs/model.md, "FIFO fast path").
    let base = "[topology]\nkind = \"pair\"\nlink_delay_ns = 20000\n\
                [transport]\nprotocol = \"tcp\"\nmin_rto_us = 200\n";
    let on_both_paths = |base: &str| {
        [true, false].map(|timeline| {
            run_mode(spec_with_trace(base, &["0,0,1,146000,0"]), &[], Some(timeline))
        })
    };
    let [timeline, events] = on_both_paths(base);
    assert_eq!((fct_ps(&timeline, 0), timeline.records.timeouts[0]), (ns(199_296), 0));
    assert_eq!((fct_ps(&events, 0), events.records.timeouts[0]), (ns(420_128), 1));
    // With 5 µs links the same flow loses packets to the full NIC on both paths alike.
    let [timeline, events] = on_both_paths(&base.replace("20000", "5000"));
    assert_eq!(timeline.records.finish_ps, events.records.finish_ps);
    assert_eq!(timeline.records.timeouts[0], 1);
}

#[test]
fn a_flow_takes_its_pairs_connection_idle_longest() {
    // Flows 0 and 1 start together on host pair 0 → 1, so they open two connections. Flow 1
    // (20 packets) finishes first with no slow-start threshold; flow 0 (3 packets) loses its
    // last packet and finishes after its timeout, leaving a threshold of 7. Flow 2 then takes
    // the connection idle longest, flow 1's, and runs as on a connection of its own; flow 3,
    // after flow 2 has finished, takes flow 0's (flow 2's went to the back) and is slower.
    let (per_flow, persistent) = per_flow_and_persistent(&[
        "0,0,1,4380,0",
        "1,0,1,29200,0",
        "2,0,1,146000,0.001",
        "3,0,1,146000,0.003",
    ]);
    assert!(fct_ps(&per_flow, 1) < fct_ps(&per_flow, 0), "flow 1 finishes first");
    assert_eq!(persistent.records.timeouts[0], 1);
    assert_eq!(fct_ps(&persistent, 2), fct_ps(&per_flow, 2));
    assert_eq!(fct_ps(&per_flow, 3), fct_ps(&per_flow, 2));
    assert!(fct_ps(&persistent, 3) > fct_ps(&per_flow, 3));
}
#[test]
fn an_idle_connection_goes_to_one_flow_only() {
    // Flow 0 leaves its pair's one connection idle with a threshold of 7. Flows 1 (one packet)
    // and 2 (100 packets) start together on the same pair: flow 1 takes that connection (a
    // single packet does not care), so flow 2 must open a new one and finish exactly as on
    // connections of its own; had both taken the idle connection's state, flow 2 would grow
    // linearly from its first window and be slower.
    let (per_flow, persistent) =
        per_flow_and_persistent(&["0,0,1,4380,0", "1,0,1,1460,0.001", "2,0,1,146000,0.001"]);
    assert_eq!(fct_ps(&persistent, 1), fct_ps(&per_flow, 1));
    assert_eq!(fct_ps(&persistent, 2), fct_ps(&per_flow, 2));
}
