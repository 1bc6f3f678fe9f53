//! dcPIM (issue 18) on hand-sized scenarios: a star of 10 Gbps links with 200 ns of delay,
//! cut-through towards the switch. One MTU time T = 1.2 µs; a 40-byte control packet takes
//! 32 ns per link, so host to host it arrives 464 ns after it is sent (32 + 200 to the switch,
//! 32 + 200 on). The matching is fixed by `[dcpim]`: cRTT = 6 µs and β = 1, so a round lasts
//! R = 6 µs; r = 2 rounds, α = 1, so an epoch's matching runs [12e, 12e + 12) µs and its
//! links carry data for the next 12 µs; BDP = 2 packets. With k = 1 a channel carries
//! ⌊12 / 1.2⌋ = 10 packets per data phase (k = 2: 5).

use super::common::*;
use dcsim::fabric::LossRule;
use dcsim::packet::PacketKind;
use dcsim::transport::dcpim::{ACCEPT, GRANT, REQUEST};
use dcsim::{Simulation, Spec};

fn star(hosts: u32, extra: &str) -> String {
    format!(
        "[topology]\nkind = \"star\"\nhosts = {hosts}\nhost_link_gbps = 10\nlink_delay_ns = 200\n\
         [transport]\nprotocol = \"dcpim\"\n\
         [dcpim]\ncontrol_rtt_us = 6.0\nbeta = 1.0\nrounds = 2\nbdp_packets = 2\n{extra}"
    )
}

/// Runs `spec` until `until_us` and returns the flows of the `kind` packets delivered by then.
fn delivered(spec: Spec, kind: PacketKind, until_us: f64) -> Vec<u32> {
    let mut spec = spec;
    spec.output.packet_trace = true;
    spec.workload.duration_ms = until_us / 1000.0;
    let out = Simulation::new(spec).unwrap().run(&mut |_| true).unwrap();
    let t = out.packets.as_ref().unwrap();
    let mut flows: Vec<u32> = (0..t.time_ps.len())
        .filter(|&i| t.kind[i] == kind.code() && t.event[i] == DELIVER)
        .map(|i| t.flow[i])
        .collect();
    flows.sort_unstable();
    flows
}

/// The packet trace's code for a delivery.
const DELIVER: u8 = dcsim::metrics::HopEvent::Deliver as u8;

/// Issue 18, dcPIM "one matching round, hand-computed": senders 0, 1, 2 and receivers 3, 4,
/// k = 1. Flows (all scheduled, each needing one channel): 0: 0→3, 30 packets; 1: 1→3, 10;
/// 2: 1→4, 20; 3: 2→4, 40, all starting at 10 µs. Their RTSs arrive by 11 µs, so the
/// receivers' first round starts at 12 µs: receiver 3 requests from senders 0 (flow 0) and 1
/// (flow 1), receiver 4 from 1 (flow 2) and 2 (flow 3): four requests. At 15 µs (round 1,
/// shortest first) sender 0 grants its only request (flow 0), sender 1 the shorter of flows 1
/// (10) and 2 (20), i.e. flow 1, sender 2 flow 3: three grants. At 18 µs receiver 3 accepts the
/// shorter of its grants (flow 1 over flow 0), receiver 4 its only one (flow 3): two accepts,
/// and with their one channel used neither requests in round 2. Nothing else is sent before
/// the data phase begins at 24 µs.
#[test]
fn one_matching_round_by_hand() {
    let spec = spec_with_trace(
        &star(5, "channels = 1\n"),
        &[
            "0,0,3,43800,0.00001",
            "1,1,3,14600,0.00001",
            "2,1,4,29200,0.00001",
            "3,2,4,58400,0.00001",
        ],
    );
    assert_eq!(delivered(spec.clone(), REQUEST, 23.9), [0, 1, 2, 3]);
    assert_eq!(delivered(spec.clone(), GRANT, 23.9), [0, 1, 3]);
    assert_eq!(delivered(spec, ACCEPT, 23.9), [1, 3]);
}

/// Issue 18, dcPIM "k channels limit the matches": three senders each with one flow to
/// receiver 3 (5, 4 and 3 packets: each needs one channel, ⌈n / 10⌉ at k = 1 and ⌈n / 5⌉ at
/// k = 2). Every sender grants its request; the receiver accepts shortest first: at k = 1 only
/// flow 2 (3 packets), at k = 2 flows 2 and 1, and flow 0 waits for a later epoch.
#[test]
fn channels_limit_the_matches() {
    let rows = ["0,0,3,7300,0.00001", "1,1,3,5840,0.00001", "2,2,3,4380,0.00001"];
    for (k, accepted) in [(1, vec![2]), (2, vec![1, 2])] {
        let spec = spec_with_trace(&star(4, &format!("channels = {k}\n")), &rows);
        assert_eq!(delivered(spec.clone(), GRANT, 23.9), [0, 1, 2], "k = {k}");
        assert_eq!(delivered(spec, ACCEPT, 23.9), accepted, "k = {k}");
    }
    // All three finish, whatever the matching.
    let out = run(spec_with_trace(&star(4, "channels = 2\n"), &rows), &[]);
    assert!(out.records.finish_ps.iter().all(|&f| f != u64::MAX));
}

/// Issue 18, dcPIM "a long flow's FCT on an idle path, epoch alignment included": 10 packets
/// (needs one channel, k = 1) from host 0 to host 1 starting at 10 µs. Its RTS arrives at
/// 10.464 µs; the receiver's clock starts at the next boundary, 12 µs (epoch 1, round 1): its
/// request reaches the sender at 12.464, the grant goes at 15 µs, the accept at 18 µs, and the
/// link is installed at 24 µs. Tokens leave at 24 + 1.2i µs (i = 0…9), each reaching the sender
/// 464 ns later; packet i leaves at 24.464 + 1.2i and arrives 1.632 µs later (32 + 200 to the
/// switch, 1200 + 200 on), packet 9 at 36.896 µs; the ACK is back at 37.360 µs: FCT 27.360 µs.
/// (At 24 µs the flow's 10 packets fit its channel's 10, so epoch 2 requests nothing; its last
/// token at 34.8 µs starts the 2.4 µs re-send wait, so epoch 3 at 36 µs requests nothing.)
///
/// Starting at 12.5 µs instead, the RTS arrives after the boundary: the receiver joins epoch
/// 1 at its second round (18 µs), the grant goes at 21 µs and the accept at 24 µs, at the same
/// boundary as the install, ahead of the first token on the receiver's NIC (32 ns): every
/// packet is 32 ns later and the FCT is 37.392 − 12.5 = 24.892 µs.
#[test]
fn a_long_flow_on_an_idle_path_by_hand() {
    let out = run(spec_with_trace(&star(2, "channels = 1\n"), &["0,0,1,14600,0.00001"]), &[]);
    assert_eq!(fct_ps(&out, 0), ns(27_360));
    assert_eq!(out.records.packets_sent[0], 10);
    // RTS, request, grant, accept, 10 tokens, ACK.
    assert_eq!(out.summary.counters.control_packets_injected, 15);
    let out = run(spec_with_trace(&star(2, "channels = 1\n"), &["0,0,1,14600,0.0000125"]), &[]);
    assert_eq!(fct_ps(&out, 0), ns(24_892));
}

/// Issue 18, dcPIM "a short flow goes at once, unscheduled, with its priority": flows of at
/// most `unscheduled_bdp` · BDP packets (here 3 · 2 = 6) send everything with their RTS, data at
/// priority 1 up to 2 packets, 2 up to 4, 3 up to 8. Flows 0 (host 0) and 1 (host 1) of 6
/// packets each (priority 3) start at 0 into host 2: its downlink carries one packet per T
/// from 296 ns on while both send, so a queue builds. Flow 2 (host 3, 2 packets, priority 1)
/// starts at 5 µs: its RTS reaches the switch at 5.232 µs, waits for the packet in service
/// (5.096-6.296 µs) and goes first; its packet 0 (at the switch at 6.264) follows at
/// 6.328-7.528, arriving at 7.728 µs; packet 1 (at the switch at 6.464) overtakes every queued
/// packet of flows 0 and 1: 7.528-8.728, at 8.928 µs; the ACK is back at 9.392 µs: FCT
/// 4.392 µs, although 6 packets of flows 0 and 1 were waiting.
#[test]
fn short_flows_go_unscheduled_at_their_size_priority() {
    let spec = spec_with_trace(
        &star(4, "unscheduled_bdp = 3\n"),
        &["0,0,2,8760,0", "1,1,2,8760,0", "2,3,2,2920,0.000005"],
    );
    let out = run(spec, &[]);
    assert_eq!(fct_ps(&out, 2), ns(4_392));
    // Three RTSs and three ACKs; and flows 0 and 1, still unfinished when their re-send wait
    // ends (6 T + 2.4 µs after their RTS arrived, ≈ 10.1 µs), are requested at 12 µs like any
    // flow (the artifact's recovery path): two requests, two grants (both finish before the
    // accepts at 18 µs).
    assert_eq!(out.summary.counters.control_packets_injected, 10);
    // Flows 0 and 1 share the downlink: the last of their 12 packets leaves the switch at
    // 0.296 µs + 14 T + 32 ns (flow 2's RTS and two packets went between) and arrives 200 ns
    // later; its ACK takes 464 ns.
    let last = out.records.finish_ps[0].max(out.records.finish_ps[1]);
    assert_eq!(last, ns(296 + 14 * 1200 + 32 + 200 + 464));
}

/// Issue 18, dcPIM "loss recovery as the artifact": the flow of the idle-path test loses
/// packet 3 once at the sender's NIC. Its last token (packet 9, 34.8 µs) starts the re-send
/// wait (1 BDP time = 2.4 µs, to 37.2 µs); the epoch-2 link is gone at 36 µs and epoch 3's first
/// round comes before the wait ends, so the receiver requests again in its second round (42
/// µs): grant at 45 µs, accept and install at 48 µs, the token (behind the accept, 48.032 µs)
/// reaches the sender at 48.496, packet 3 arrives at 50.128 and the ACK at 50.592 µs: FCT
/// 40.592 µs, one retransmission, one re-issue.
#[test]
fn a_lost_packet_is_recovered_after_the_resend_wait() {
    let loss = LossRule { flow: 0, seq: 3, kind: PacketKind::DATA, hop: 0, count: 1 };
    let out = run(spec_with_trace(&star(2, "channels = 1\n"), &["0,0,1,14600,0.00001"]), &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(40_592));
    assert_eq!((out.records.retransmits[0], out.records.timeouts[0]), (1, 1));
    assert_eq!(out.records.packets_sent[0], 11);
}

/// A packet that is lost every time it is sent: dcPIM's receiver keeps re-issuing its token
/// and requesting channels every round, so the run's events never run out. The run ends
/// once no data has been delivered for the stall window (1 ms for dcPIM, `StallWatch`),
/// at its first check after that (every 2¹⁶ events), with the flow counted as stalled (debug
/// builds assert on it); before the window existed it ran on (here: until the progress
/// callback's limit of 50 M events interrupted it, an error).
#[test]
#[cfg_attr(debug_assertions, should_panic(expected = "flows stalled"))]
fn a_flow_that_can_never_finish_ends_the_run_as_stalled() {
    let spec = spec_with_trace(&star(2, "channels = 1\n"), &["0,0,1,14600,0.00001"]);
    let lose_always = LossRule { flow: 0, seq: 3, kind: PacketKind::DATA, hop: 0, count: u32::MAX };
    let out = Simulation::new(spec)
        .unwrap()
        .with_loss(lose_always)
        .run(&mut |p| p.events < 50_000_000)
        .expect("the run ends before the callback's limit");
    let c = &out.summary.counters;
    assert_eq!((c.flows_stalled, out.summary.flows_completed), (1, 0));
    // Packets 0-2 and 4-9 arrive by about 35 µs, then no data: the run ends at the first
    // check (every 2¹⁶ events) after 1 ms, which on a 2-host star is 196.5 ms in.
    assert!(c.sim_time_us > 1000.0 && c.sim_time_us < 1_000_000.0, "{}", c.sim_time_us);
    assert_eq!(c.conservation_error, 0);
}

/// A long resend timeout is no stall: with `resend_timeout_bdp` at its largest (a million
/// BDP times, seconds) a run whose lost packets wait for it still finishes every flow, as
/// the stall window is eight of the protocol's longest recovery timeout. Found by the fuzz
/// harness: the window ignored dcPIM's timers and ended this run at 62 ms with 8 flows
/// "stalled" (debug builds asserted).
#[test]
fn a_resend_timeout_of_seconds_is_waited_for_not_taken_for_a_stall() {
    let spec = Spec::from_toml_str(
        "[dcpim]\nresend_timeout_bdp = 1000000\n[topology]\nracks = 3\nhosts_per_rack = 4\n\
         spines = 2\n[transport]\nprotocol = \"dcpim\"\n[workload]\nflow_sizes = \"websearch\"\n\
         flows = 30\n",
    )
    .unwrap();
    let out = Simulation::new(spec).unwrap().run(&mut |_| true).unwrap();
    check_invariants(&out);
    assert_eq!(out.summary.flows_completed, 30);
    // Some flow did wait for the timeout: the run lasts seconds.
    assert!(out.summary.counters.sim_time_us > 1e6, "{}", out.summary.counters.sim_time_us);
}

/// A long data phase is no stall: with α = 87.6 a new matching starts every 1.26 ms on a k = 4
/// fat-tree, and the flows to a host left out of one matching wait that long with no data
/// delivered anywhere. Found by the fuzz harness in the partitioned model, whose stall check
/// runs at every barrier (the sequential model's, every 2¹⁶ events, came too late to see it):
/// the run ended at 13.9 ms with 2 flows "stalled" (debug builds asserted). The stall window
/// now covers a period and a matching phase.
#[test]
fn a_data_phase_over_a_millisecond_is_waited_for_not_taken_for_a_stall() {
    for partitioned in [false, true] {
        let spec = Spec::from_toml_str(&format!(
            "seed = 14
[dcpim]
alpha = 87.56
[engine]
partitioned = {partitioned}
             [topology]
kind = \"fat-tree\"
k = 4
[transport]
protocol = \"dcpim\"
             [workload]
flow_sizes = \"websearch\"
flows = 30
"
        ))
        .unwrap();
        let out = Simulation::new(spec).unwrap().run(&mut |_| true).unwrap();
        check_invariants(&out);
        assert_eq!(out.summary.flows_completed, 30, "partitioned = {partitioned}");
    }
}

/// Issue 18, dcPIM "runs on every topology kind": a loaded run on each kind finishes every
/// flow with packets conserved and no FCT below the ideal (`check_invariants`), and the
/// matching carries data (channels matched, tokens sent).
#[test]
fn dcpim_runs_on_every_topology_kind() {
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/two-tier.json");
    for topo in [
        "kind = \"leaf-spine\"\nracks = 3\nhosts_per_rack = 4\nspines = 2".to_string(),
        "kind = \"fat-tree\"\nk = 4".to_string(),
        "kind = \"star\"\nhosts = 8".to_string(),
        "kind = \"dumbbell\"\nhosts_per_side = 3".to_string(),
        "kind = \"pair\"".to_string(),
        format!("kind = \"file\"\nfile = \"{}\"", file.display()),
    ] {
        let toml = format!(
            "seed = 3\n[topology]\n{topo}\n[workload]\nflows = 300\nload = 0.7\n[transport]\nprotocol = \"dcpim\"\n"
        );
        let spec = Spec::from_toml_str(&toml).unwrap_or_else(|e| panic!("{topo}: {e}"));
        let out = Simulation::new(spec).unwrap().run(&mut |_| true).unwrap();
        check_invariants(&out);
        let counters = &out.summary.counters.transport_counters;
        assert!(counters["matched_channels"] > 0 && counters["tokens"] > 0, "{topo}");
    }
}

/// A scheduled flow (10 packets, more than the BDP of 2) whose RTS is lost at its sender's NIC.
fn lost_rts() -> LossRule {
    LossRule { flow: 0, seq: 0, kind: dcsim::transport::dcpim::RTS, hop: 0, count: 1 }
}

#[test]
#[cfg_attr(debug_assertions, should_panic(expected = "flows stalled"))]
fn a_lost_rts_is_never_recovered_as_in_the_artifact() {
    // The artifact has no sender timeout: with `source_timeout_bdp = 0` (default) the receiver
    // never learns of the flow (debug builds assert on the stalled flow).
    let out = run_leaving_flows_open(
        spec_with_trace(&star(2, ""), &["0,0,1,14600,0.00001"]),
        &[lost_rts()],
    );
    assert_eq!((out.summary.counters.flows_stalled, out.summary.flows_completed), (1, 0));
}

#[test]
fn the_source_timeout_resends_a_lost_rts() {
    // Timeout 5 BDP times = 12 µs. Without loss the RTS (sent at 10 µs) reaches the receiver
    // at 10.464, in time for the matching of the epoch at 12 µs. Lost, it goes again at 22 µs
    // (arriving 22.464) and the flow is matched in the epoch at 24 µs instead: everything one
    // period (12 µs) later. The silent sender sends it a second time at 34 µs, before its
    // first token (the data phase begins at 36 µs); the receiver ignores that one. Without
    // the loss the sender, unheard until its data phase at 24 µs, also sends one at 22 µs.
    let rows = ["0,0,1,14600,0.00001"];
    let timeout = star(2, "source_timeout_bdp = 5\n");
    let clean = run(spec_with_trace(&timeout, &rows), &[]);
    let lossy = run(spec_with_trace(&timeout, &rows), &[lost_rts()]);
    assert_eq!(fct_ps(&lossy, 0), fct_ps(&clean, 0) + 12_000_000);
    let counter = |o: &dcsim::RunOutput, name: &str| o.summary.counters.transport_counters[name];
    assert_eq!((counter(&lossy, "rts_resent"), counter(&lossy, "acks_resent")), (2, 0));
    assert_eq!(counter(&clean, "rts_resent"), 1);
}

#[test]
fn the_source_timeout_recovers_a_lost_ack() {
    // The ACK is lost at the receiver's NIC. The sender sent its last packet at `last`; 12 µs
    // later it sends the RTS again, and the receiver, holding every packet, answers with the
    // ACK: the flow finishes 12 µs + two control-packet trips (2 × 0.464 µs) after `last`.
    // Without the loss the ACK arrives 2.096 µs after `last` (1.232 µs to put the packet and
    // its lead on the wires, 2 × 200 ns of links, 0.464 µs for the ACK).
    let rows = ["0,0,1,14600,0.00001"];
    let timeout = star(2, "source_timeout_bdp = 5\n");
    let ack_lost = LossRule { flow: 0, seq: 0, kind: PacketKind::ACK, hop: 0, count: 1 };
    let clean = run(spec_with_trace(&timeout, &rows), &[]);
    let lossy = run(spec_with_trace(&timeout, &rows), &[ack_lost]);
    let counter = |o: &dcsim::RunOutput, name: &str| o.summary.counters.transport_counters[name];
    // As without the loss, one RTS again at 22 µs, before the first token.
    assert_eq!(counter(&clean, "rts_resent"), 1);
    assert_eq!((counter(&lossy, "rts_resent"), counter(&lossy, "acks_resent")), (2, 1));
    assert_eq!(fct_ps(&lossy, 0), fct_ps(&clean, 0) - ns(2_096) + ns(12_000 + 2 * 464));
}

#[test]
fn a_source_timeout_below_one_bdp_is_refused() {
    let e = Spec::from_toml_str(&star(2, "source_timeout_bdp = 0.5\n")).unwrap_err();
    assert_eq!(e.path, "dcpim.source_timeout_bdp");
    assert!(e.message.contains("0.5") && e.message.contains("at least 1"), "{e}");
}
