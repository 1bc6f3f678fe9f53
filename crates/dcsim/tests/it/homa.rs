//! Homa on hand-sized scenarios (Issue 18): 10 Gbps links with 200 ns of propagation, so a
//! full packet (1500 B on the wire) takes T = 1.2 µs to send and 1.4 µs to cross one link, and
//! a 40-byte grant or ACK 32 ns + 200 ns = 232 ns.

use super::common::*;
use dcsim::fabric::LossRule;
use dcsim::packet::PacketKind;

const PAIR: &str = "[topology]\nkind = \"pair\"\n[transport]\nprotocol = \"homa\"\n";

/// Issue 18, item 2 (a single message): 20 packets (29,200 B) between two hosts. The first
/// 7 (RTTbytes = 10,000 B, rounded up to packets) go unscheduled at once; packet 0 arrives at
/// 1.4 µs and its grant (for 8 packets) is back at 1.632 µs, long before packet 7 may leave
/// (8.4 µs), and each later arrival grants one more: the sender never waits, packet 19 leaves
/// at 19 T = 22.8 µs, arrives at 24.2 µs and its ACK is back at 24.432 µs, the ideal FCT.
/// Grants: one per arrival while fewer than 20 packets are granted, for packets 0-12: 13,
/// plus one ACK.
#[test]
fn a_single_message_goes_at_line_rate_on_rtt_bytes_of_grants() {
    let out = run(spec_with_trace(PAIR, &["0,0,1,29200,0"]), &[]);
    assert_eq!(fct_ps(&out, 0), ns(24_432));
    assert_eq!(out.records.ideal_ps[0], ns(24_432));
    assert_eq!(out.records.packets_sent[0], 20);
    assert_eq!(out.summary.counters.control_packets_injected, 14);
    assert_eq!(out.summary.counters.transport_counters["grants"], 13);
}

/// Issue 18, item 2 (grants keep RTTbytes outstanding): with RTTbytes = 1460 B (one packet)
/// the sender may have one packet outstanding: packet k leaves when the grant its predecessor
/// triggered arrives, one round trip (1.4 + 0.232 µs) later. Packet 19 leaves at
/// 19 × 1.632 = 31.008 µs and the ACK is back at 31.008 + 1.632 = 32.640 µs. With two packets
/// (2920 B) the round trip (1.632 µs) is shorter than two packet times: line rate again.
#[test]
fn grants_keep_rtt_bytes_outstanding() {
    let one =
        run(spec_with_trace(&format!("{PAIR}[homa]\nrtt_bytes = 1460\n"), &["0,0,1,29200,0"]), &[]);
    assert_eq!(fct_ps(&one, 0), ns(32_640));
    assert_eq!(one.summary.counters.transport_counters["grants"], 19);
    let two =
        run(spec_with_trace(&format!("{PAIR}[homa]\nrtt_bytes = 2920\n"), &["0,0,1,29200,0"]), &[]);
    assert_eq!(fct_ps(&two, 0), ns(24_432));
}

const TWO_INTO_ONE: [&str; 2] = ["0,0,2,29200,0", "1,1,2,14600,0"];

fn star(extra: &str) -> String {
    format!("[topology]\nkind = \"star\"\nhosts = 3\n[transport]\nprotocol = \"homa\"\n[homa]\n{extra}\n")
}

/// Issue 18, item 2 (two senders into one receiver, SRPT-first grants, overcommit 1 vs 2).
/// Star of 3 hosts, cut-through: a full packet reaches the receiver 1.632 µs after it leaves
/// its sender, a grant or ACK the sender 0.464 µs after the receiver sends it. A (host 0, 20
/// packets) and B (host 1, 10 packets) start together; each sends its 7 unscheduled packets at
/// once, at the one unscheduled level, and they take turns on the receiver's downlink
/// (A0, B0, A1, …, B6: positions 0-13, position j leaving the switch at 0.232 + 1.2 j µs).
/// The receiver hears of A at 1.632 µs and grants it (packet 8); from B0's arrival (2.832 µs)
/// B misses fewer packets, so B alone is granted, up to all 10 packets at B2's arrival
/// (7.632 µs), when A is granted again. Both senders therefore send at line rate, and the
/// downlink, busy from 0.232 µs, carries 30 packets back to back: the last, A19, arrives at
/// 0.232 + 30 × 1.2 + 0.2 = 36.432 µs, and A's ACK is back at 36.896 µs.
/// * Overcommit 1: each message is alone when granted, so both use the lowest level (7); at
///   the downlink the scheduled packets queue behind the unscheduled ones (level 0) in arrival
///   order A7, B7, A8, B8, A9, B9: B9 is at position 19, arrives at 0.232 + 19 × 1.2 + 1.4 =
///   24.432 µs and B's ACK is back at 24.896 µs.
/// * Overcommit 2: B (ranked first) is granted at level 6 and A at level 7, so B7-B9 pass A's
///   scheduled packets: B9 is at position 16 and B ends 3 × 1.2 µs earlier, at 21.296 µs; A
///   still ends at 36.896 µs.
#[test]
fn grants_go_srpt_first_and_overcommitment_adds_a_level() {
    let one = run(spec_with_trace(&star("overcommit = 1"), &TWO_INTO_ONE), &[]);
    assert_eq!((fct_ps(&one, 0), fct_ps(&one, 1)), (ns(36_896), ns(24_896)));
    let two = run(spec_with_trace(&star("overcommit = 2"), &TWO_INTO_ONE), &[]);
    assert_eq!((fct_ps(&two, 0), fct_ps(&two, 1)), (ns(36_896), ns(21_296)));
}

/// Issue 18, item 2 (the sender's order: fewest bytes left, the authors' `SRBF`). Host 0
/// sends X (one packet, 1460 B) at 0, A (two packets, 2920 B) at 0.1 µs and B (two packets,
/// 1500 B: 1460 + 40) at 0.2 µs, all to host 1, all unscheduled (RTTbytes 10,000 B). When X
/// has left (1.2 µs) A and B both have two packets left, but B has fewer bytes: B0 goes at
/// 1.2 µs, B1 (80 B on the wire, 64 ns) at 2.4 µs, A0 at 2.464 µs and A1 at 3.664 µs. B1
/// arrives at 2.664 µs and B's ACK is back at 2.896 µs (FCT 2.696 µs); A1 arrives at
/// 5.064 µs, its ACK is back at 5.296 µs (FCT 5.196 µs). Ranked by packets left, A (the
/// earlier) would go first and B would end at 5.296 µs.
#[test]
fn the_sender_sends_the_message_with_the_fewest_bytes_left_first() {
    let rows = ["0,0,1,1460,0", "1,0,1,2920,0.0000001", "2,0,1,1500,0.0000002"];
    let out = run(spec_with_trace(PAIR, &rows), &[]);
    assert_eq!(fct_ps(&out, 0), ns(1_632));
    assert_eq!(fct_ps(&out, 2), ns(2_696));
    assert_eq!(fct_ps(&out, 1), ns(5_196));
}

/// Issue 18, item 2 (a dropped packet recovered by RESEND): packet 10 of the single message
/// is lost on the wire. The sender still sends all 20 at line rate (the arrivals that remain
/// grant up to packet 20 by the 13th arrival); the receiver's last arrival is packet 19 at
/// 24.2 µs. Its resend timer (1 ms) fires at 1024.2 µs and asks for packet 10; the RESEND
/// reaches the sender at 1024.432 µs, packet 10 arrives at 1025.832 µs and the ACK is back at
/// 1026.064 µs.
#[test]
fn a_lost_packet_is_recovered_by_resend() {
    let loss = LossRule { flow: 0, seq: 10, kind: PacketKind::DATA, hop: 0, count: 1 };
    let out = run(spec_with_trace(PAIR, &["0,0,1,29200,0"]), &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(1_026_064));
    assert_eq!((out.records.retransmits[0], out.records.timeouts[0]), (1, 1));
    assert_eq!(out.summary.counters.transport_counters["resends"], 1);
    assert_eq!(out.summary.counters.transport_counters["sender_timeouts"], 0);
}

/// Issue 18, item 2 (loss recovery, the sender's side): the ACK is lost. The sender's last
/// activity is packet 19 at 22.8 µs; twice the resend timeout later (2022.8 µs) it sends
/// packet 0 again; the receiver, which holds the whole message, acknowledges again: the ACK is
/// back at 2022.8 + 1.4 + 0.232 = 2024.432 µs.
#[test]
fn a_lost_ack_is_recovered_by_the_senders_timeout() {
    let loss = LossRule { flow: 0, seq: 0, kind: PacketKind::ACK, hop: 0, count: 1 };
    let out = run(spec_with_trace(PAIR, &["0,0,1,29200,0"]), &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(2_024_432));
    assert_eq!((out.records.retransmits[0], out.records.timeouts[0]), (1, 1));
    assert_eq!(out.summary.counters.transport_counters["sender_timeouts"], 1);
}

/// Issue 18, item 2 (unscheduled priority in the fabric): A and C (20 packets each, hosts 0
/// and 1) start at 0 into host 2 and build a queue at its downlink (two arrivals per packet
/// time, one departure): A0 leaves the switch at 0.232 µs, C0 at 1.432, A1 at 2.632, and C1,
/// A2, C2 wait. B (2 packets, 2920 B, host 3) starts at 3.0 µs; B0 reaches the switch at
/// 3.232 µs and B1 at 4.432 µs.
/// * One unscheduled level: B waits its turn. B0 leaves after C1, A2 and C2, at 7.432 µs; B1
///   after A3 and C3 (queued at 3.832 µs), at 11.032 µs; it arrives at 12.432 µs and the ACK
///   is back at 12.896 µs: FCT 9.896 µs.
/// * Two unscheduled levels with the cutoff at 5000 B: B's packets (level 0) pass A's and C's
///   (level 1): B0 leaves at 3.832 µs, B1 right after it at 5.032 µs, arrives at 6.432 µs, and
///   the ACK is back at 6.896 µs: FCT 3.896 µs.
#[test]
fn a_short_message_passes_longer_ones_on_its_unscheduled_level() {
    let rows = ["0,0,2,29200,0", "1,1,2,29200,0", "2,3,2,2920,0.000003"];
    let base = "[topology]\nkind = \"star\"\nhosts = 4\n[transport]\nprotocol = \"homa\"\n";
    let one_level = run(spec_with_trace(base, &rows), &[]);
    assert_eq!(fct_ps(&one_level, 2), ns(9_896));
    let two_levels = run(
        spec_with_trace(
            &format!("{base}[homa]\nscheduled_levels = 6\nunscheduled_cutoffs = [5000]\n"),
            &rows,
        ),
        &[],
    );
    assert_eq!(fct_ps(&two_levels, 2), ns(3_896));
}

/// Issue 18, item 1 (every topology kind): Homa at 70 % load of web search on each kind, with
/// four unscheduled levels from the workload's CDF, finishes every message with packets and
/// bytes conserved and no FCT below the ideal (`run` checks the invariants), and sends grants.
#[test]
fn homa_runs_on_every_topology_kind() {
    let dir = std::env::temp_dir().join(format!("dcsim-it-homa-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("two-racks.json");
    std::fs::write(
        &file,
        r#"{"hosts": ["h0", "h1", "h2", "h3"], "switches": ["t0", "t1", "s0"],
 "links": [{"a": "h0", "b": "t0", "gbps": 10, "delay_ns": 200},
           {"a": "h1", "b": "t0", "gbps": 10, "delay_ns": 200},
           {"a": "h2", "b": "t1", "gbps": 10, "delay_ns": 200},
           {"a": "h3", "b": "t1", "gbps": 10, "delay_ns": 200},
           {"a": "t0", "b": "s0", "gbps": 20, "delay_ns": 200},
           {"a": "t1", "b": "s0", "gbps": 20, "delay_ns": 200}]}"#,
    )
    .unwrap();
    for topology in [
        "kind = \"leaf-spine\"\nracks = 3\nhosts_per_rack = 4\nspines = 2".to_string(),
        "kind = \"fat-tree\"\nk = 4".to_string(),
        "kind = \"star\"\nhosts = 6".to_string(),
        "kind = \"dumbbell\"\nhosts_per_side = 3".to_string(),
        "kind = \"pair\"".to_string(),
        format!("kind = \"file\"\nfile = \"{}\"", file.display()),
    ] {
        let toml = format!(
            "[topology]\n{topology}\nbuffer_bytes = 200000\n[transport]\nprotocol = \"homa\"\n[homa]\nscheduled_levels = 4\n[workload]\nflows = 300\nload = 0.7\n"
        );
        let spec = dcsim::Spec::from_toml_str(&toml).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec.homa.unscheduled_cutoffs.len(), 3, "{topology}");
        let out = run(spec, &[]);
        assert_eq!(out.summary.flows_completed, 300, "{topology}");
        assert!(out.summary.counters.transport_counters["grants"] > 0, "{topology}");
    }
}

/// Issue 18, item 2 (three senders into one receiver, overcommit 1 vs 2). RTTbytes is one
/// packet, so each message sends one unscheduled packet and every other packet waits for a
/// grant. A (host 0, 4 packets), B (host 1, 3) and C (host 2, 2) start together into host 3
/// (star, cut-through: a packet reaches the switch 0.232 µs after it leaves, its receiver
/// 1.4 µs after it leaves the switch; a grant or ACK takes 0.464 µs). The unscheduled A0, B0,
/// C0 leave the switch at 0.232, 1.432 and 2.632 µs and arrive at 1.632, 2.832 and 4.032 µs.
/// * Overcommit 1 — the receiver grants one message, the one missing fewest packets: A at
///   1.632 µs (A1 reaches the switch at 2.328), B from 2.832 (B1 at 3.528), C from 4.032
///   (C1 at 4.728), then at A1's arrival (5.232) A and B both miss 2 and the earlier, A, gets
///   A2 (switch 5.928); at B1's (6.432) B gets B2 (switch 7.128). All at the lowest level, the
///   downlink serves them in arrival order: A1, B1, C1 (arrives 7.632: C ends at 8.096 µs),
///   A2 (arrives 8.832, granting A3, at the switch at 9.528), B2 (arrives 10.032: B ends at
///   10.496 µs), A3 (arrives 11.232: A ends at 11.696 µs).
/// * Overcommit 2 — two messages granted at once on levels 6 (the better-ranked) and 7: B1
///   (level 6) passes the waiting A1 (level 7) at 3.832 µs, C1 (granted at level 6 from 4.032,
///   when B moves to level 7) at 5.032, and B2 (level 6 again from 5.232) at 6.232: C ends at
///   6.896 µs and B at 8.096 µs, each 1.2 µs or more earlier, while A1 leaves last, at 7.432;
///   A2 and A3 then cross an idle fabric one round trip apart (A2 arrives 10.928 µs, A3
///   13.024 µs): A ends at 13.488 µs, later than with overcommit 1.
#[test]
fn three_senders_overcommitment_grants_the_two_best_at_two_levels() {
    let rows = ["0,0,3,5840,0", "1,1,3,4380,0", "2,2,3,2920,0"];
    let base = "[topology]\nkind = \"star\"\nhosts = 4\n[transport]\nprotocol = \"homa\"\n[homa]\nrtt_bytes = 1460\n";
    let fcts = |o: &dcsim::RunOutput| (fct_ps(o, 0), fct_ps(o, 1), fct_ps(o, 2));
    let one = run(spec_with_trace(&format!("{base}overcommit = 1\n"), &rows), &[]);
    assert_eq!(fcts(&one), (ns(11_696), ns(10_496), ns(8_096)));
    let two = run(spec_with_trace(&format!("{base}overcommit = 2\n"), &rows), &[]);
    assert_eq!(fcts(&two), (ns(13_488), ns(8_096), ns(6_896)));
}

/// `homa.priority_rule`: a message nearing its end passes a smaller one under `"bytes-left"`.
/// Star of 4 hosts, RTTbytes 2920 B (2 packets unscheduled), two unscheduled levels cut at
/// 1000 B, into host 2. A (host 0, 6340 B: four full packets and one of 500 B, 540 B on the
/// wire) from 0; D (host 1) at 3.0 µs and E (host 3) at 5.2 µs, one packet of 1200 B each
/// (1240 B on the wire, 0.992 µs), level 1 under both rules. A's grants reach host 0 before
/// its NIC frees, so A0-A3 reach the switch at 0.232, 1.432, 2.632 and 3.832 µs and A4 at
/// 5.032; the port to host 2 sends A0-A2 back to back until 3.832.
/// * `"message-size"`: A0 and A1 at level 1, A2-A4 at their grant's level 7. D (queued since
///   3.232) goes before A3 (3.832-4.824), then A3 (4.824-6.024); E (queued at 5.432, level 1)
///   before A4 (6.024-7.016), then A4 (7.016-7.448): A's last packet arrives at 7.648 µs and
///   its ACK is back at 8.112 µs; E arrives at 7.216 and its ACK is back at 7.68 (FCT 2.48).
/// * `"bytes-left"`: A3 (1960 B left, 2040 B on the wire: under RTTbytes) goes at level 1,
///   behind D, which was queued first; A4 (500 B left) at level 0, so it passes E at 6.024
///   and arrives at 6.656: A's ACK is back at 7.12 µs, E's at 8.112 (FCT 2.912).
///
/// D is the same under both (3.832-4.824, ACK back at 5.488 µs: FCT 2.488).
#[test]
fn bytes_left_lets_a_message_nearing_its_end_pass_a_smaller_one() {
    let rows = ["0,0,2,6340,0", "1,1,2,1200,0.000003", "2,3,2,1200,0.0000052"];
    let base = "[topology]\nkind = \"star\"\nhosts = 4\n[transport]\nprotocol = \"homa\"\n[homa]\nrtt_bytes = 2920\nscheduled_levels = 6\nunscheduled_cutoffs = [1000]\n";
    let fcts = |o: &dcsim::RunOutput| (fct_ps(o, 0), fct_ps(o, 1), fct_ps(o, 2));
    let size =
        run(spec_with_trace(&format!("{base}priority_rule = \"message-size\"\n"), &rows), &[]);
    assert_eq!(fcts(&size), (ns(8_112), ns(2_488), ns(2_480)));
    let left = run(spec_with_trace(&format!("{base}priority_rule = \"bytes-left\"\n"), &rows), &[]);
    assert_eq!(fcts(&left), (ns(7_120), ns(2_488), ns(2_912)));
}
