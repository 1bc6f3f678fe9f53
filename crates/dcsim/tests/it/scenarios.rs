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

#[test]
fn a_flow_whose_acks_are_all_lost_does_not_stall() {
    // One packet over one link, its ACK lost. The sender learns what the receiver holds only
    // from ACKs (SACK carried in them, never by reading the receiver), so the timeout at 40 µs
    // resends packet 0, and the duplicate draws a fresh ACK: 40 000 + 1200 + 200 + 32 + 200 ns.
    let ack_lost = LossRule { flow: 0, seq: 1, kind: PacketKind::ACK, hop: 0, count: 1 };
    let spec = spec_with_trace(
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrto_us = 40\n",
        &["0,0,1,1460,0"],
    );
    let out = run_both_port_paths(spec, &[ack_lost]);
    assert_eq!(fct_ps(&out, 0), ns(40_000 + 1632));
    assert_eq!((out.records.timeouts[0], out.records.retransmits[0]), (1, 1));
    // TCP with SACK and an adaptive RTO: timeout and resend at the 200 µs minimum.
    let spec = spec_with_trace(
        "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"tcp\"\nsack = true\nmin_rto_us = 200\n",
        &["0,0,1,1460,0"],
    );
    let out = run_both_port_paths(spec, &[ack_lost]);
    assert_eq!(fct_ps(&out, 0), ns(200_000 + 1632));
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
