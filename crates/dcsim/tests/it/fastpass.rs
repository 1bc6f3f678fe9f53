//! Fastpass on hand-sized scenarios: a star of two hosts plus the arbiter (host 2) on the same
//! switch; 10 Gbps, 200 ns links, cut-through. A 40-byte control packet crosses a hop in
//! 32 ns + 200 ns, so host → arbiter takes 464 ns. Epoch E = 8.5 × 1.2 µs = 10.2 µs, timeslot
//! E/8 = 1.275 µs. A one-packet flow's data arrives 1.632 µs after it leaves (1.2 µs
//! serialisation, two 200 ns links, one 32 ns header at the switch) and its ACK 464 ns later.

use super::common::*;
use dcsim::fabric::LossRule;
use dcsim::packet::PacketKind;

const STAR: &str = "[topology]\nkind = \"star\"\nhosts = 2\n[transport]\nprotocol = \"fastpass\"\n";

#[test]
fn the_first_packet_waits_for_rts_epoch_and_schedule() {
    // The RTS reaches the arbiter at 0.464 µs; the next epoch boundary is 10.2 µs, when the
    // arbiter schedules the epoch [20.4, 30.6) µs. The schedule arrives at 10.664 µs and the
    // packet leaves in slot 0 at 20.4 µs: FCT = 20.4 + 1.632 + 0.464 = 22.496 µs.
    let out = run(spec_with_trace(STAR, &["0,0,1,1460,0"]), &[]);
    assert_eq!(fct_ps(&out, 0), ns(22_496));
    // RTS, schedule, ACK, final RTS.
    assert_eq!(out.summary.counters.control_packets_injected, 4);
    // A flow whose RTS arrives just after a boundary (10.464 > 10.2 µs) waits for the next
    // one (20.4 µs) and sends at 30.6 µs: FCT = 30.6 + 2.096 − 10 = 22.696 µs.
    let out = run(spec_with_trace(STAR, &["0,0,1,1460,0.00001"]), &[]);
    assert_eq!(fct_ps(&out, 0), ns(22_696));
}

#[test]
fn with_slot_start_arrival_the_first_packet_leaves_when_the_schedule_arrives() {
    // As above, but the slots of the epoch [20.4, 30.6) µs start when its schedule arrives
    // (10.2 + 0.464 = 10.664 µs, the authors' clamp): FCT = 10.664 + 1.632 + 0.464 = 12.76 µs,
    // one epoch less the schedule's 464 ns of travel earlier than at the boundary.
    let spec =
        |extra: &str| spec_with_trace(&format!("{STAR}[fastpass]\n{extra}\n"), &["0,0,1,1460,0"]);
    assert_eq!(fct_ps(&run(spec("slot_start = \"arrival\""), &[]), 0), ns(12_760));
    assert_eq!(fct_ps(&run(spec("preset = \"authors-code\""), &[]), 0), ns(12_760));
    assert_eq!(fct_ps(&run(spec("slot_start = \"epoch\""), &[]), 0), ns(22_496));
    // 20 packets: schedules computed at 10.2, 20.4 and 30.6 µs arrive 464 ns later; packet 19
    // leaves in slot 3 of the third, at 31.064 + 3 × 1.275 = 34.889 µs: FCT = 34.889 + 2.096.
    let long = spec_with_trace(
        &format!("{STAR}[fastpass]\nslot_start = \"arrival\"\n"),
        &["0,0,1,29200,0"],
    );
    let out = run(long, &[]);
    assert_eq!(fct_ps(&out, 0), ns(36_985));
    assert_eq!(out.records.packets_sent[0], 20);
}

#[test]
fn a_watchdog_request_racing_a_schedule_is_ignored() {
    // Host 0 sends a 300-packet flow and a 127-packet one to host 1. The short one takes every
    // slot of the epochs computed at E..15E (E = 10.2 µs) and 7 of the one computed at 16E,
    // whose last slot goes to the long flow. The long flow's watchdog (idle since 0, 16
    // epochs) fires at 16E, before that schedule reaches it: its request (300 packets)
    // reaches the arbiter 464 ns after the arbiter granted one of them. Taking it would grant
    // that packet twice (301 sent); the arbiter ignores it.
    let spec = spec_with_trace(STAR, &["0,0,1,438000,0", "1,0,1,185420,0"]);
    let out = run(spec, &[]);
    let c = &out.summary.counters.transport_counters;
    assert_eq!((c["watchdog_requests"], c["watchdog_ignored"]), (1, 1));
    assert_eq!(out.records.packets_sent[0], 300);
    assert_eq!(out.records.retransmits[0], 0);
    // Slot 7 of [17E, 18E), then 37 full epochs and 3 slots of [55E, 56E): the last packet
    // leaves at 561 + 2 × 1.275 µs: FCT = 563.55 + 2.096 µs.
    assert_eq!(fct_ps(&out, 0), ns(565_646));
    // The same runs with the watchdog off, and the authors' code has none.
    let spec = spec_with_trace(
        &format!("{STAR}[fastpass]\nwatchdog_epochs = 0\n"),
        &["0,0,1,438000,0", "1,0,1,185420,0"],
    );
    let out = run(spec, &[]);
    let c = &out.summary.counters.transport_counters;
    assert_eq!((c["watchdog_requests"], c["watchdog_ignored"]), (0, 0));
    assert_eq!(fct_ps(&out, 0), ns(565_646));
}

#[test]
fn a_long_flow_sends_one_packet_per_granted_slot() {
    // 20 packets: 8 slots in each of the epochs starting 20.4 and 30.6 µs, the last 4 in the
    // epoch starting 40.8 µs; packet 19 leaves at 40.8 + 3 × 1.275 = 44.625 µs:
    // FCT = 44.625 + 1.632 + 0.464 = 46.721 µs.
    let out = run(spec_with_trace(STAR, &["0,0,1,29200,0"]), &[]);
    assert_eq!(fct_ps(&out, 0), ns(46_721));
    assert_eq!(out.records.packets_sent[0], 20);
    assert_eq!((out.records.retransmits[0], out.records.timeouts[0]), (0, 0));
    // RTS, 3 schedules, 20 ACKs, final RTS.
    assert_eq!(out.summary.counters.control_packets_injected, 25);
}

#[test]
fn a_lost_packet_is_re_requested_one_epoch_after_the_last_send() {
    // Packet 5 is lost at the source NIC. The last packet leaves at 44.625 µs; one epoch later
    // (54.825 µs) one packet is still unacknowledged, so the source asks again. The RTS reaches
    // the arbiter at 55.289 µs, the next boundary is 61.2 µs, which schedules the slot at
    // 71.4 µs for packet 5: FCT = 71.4 + 2.096 = 73.496 µs.
    let loss = LossRule { flow: 0, seq: 5, kind: PacketKind::DATA, hop: 0, count: 1 };
    let out = run(spec_with_trace(STAR, &["0,0,1,29200,0"]), &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(73_496));
    assert_eq!(out.records.packets_sent[0], 21);
    assert_eq!((out.records.retransmits[0], out.records.timeouts[0]), (1, 1));
}

#[test]
fn a_lost_schedule_is_recovered_by_the_re_request() {
    // The first schedule packet (sent at 10.2 µs) is lost: the source never learns of its
    // first 8 slots, but the arbiter counted them. The later epochs grant the other 12, the
    // source sends packets 0-11, and one epoch after its twelfth send it asks for the 8
    // still missing; the flow completes, late.
    let loss =
        LossRule { flow: 0, seq: 0, kind: dcsim::transport::fastpass::SCHEDULE, hop: 0, count: 1 };
    let out = run(spec_with_trace(STAR, &["0,0,1,29200,0"]), &[loss]);
    assert_eq!(out.records.timeouts[0], 1);
    assert_eq!(out.records.packets_sent[0], 20);
    assert!(fct_ps(&out, 0) > ns(60_000));
}

#[test]
fn a_flow_whose_only_schedule_is_lost_is_recovered_by_the_watchdog() {
    // A one-packet flow's only schedule (sent at 10.2 µs) is lost: the arbiter has nothing
    // left to schedule and the source never sends, so only the watchdog can help. It fires
    // 16 epochs after the start (163.2 µs); its request reaches the arbiter at 163.664 µs,
    // long after the lost schedule would have arrived, so the arbiter takes it. The next
    // boundary, 173.4 µs, schedules the slot at 183.6 µs: FCT = 183.6 + 2.096 µs.
    let loss =
        LossRule { flow: 0, seq: 0, kind: dcsim::transport::fastpass::SCHEDULE, hop: 0, count: 1 };
    let out = run(spec_with_trace(STAR, &["0,0,1,1460,0"]), &[loss]);
    assert_eq!(fct_ps(&out, 0), ns(185_696));
    let c = &out.summary.counters.transport_counters;
    assert_eq!((c["watchdog_requests"], c["watchdog_ignored"]), (1, 0));
}

#[test]
fn the_arbiter_serves_the_shorter_flow_first_at_a_shared_destination() {
    // Hosts 0 and 1 both send to host 2 (star of 3 + arbiter), 20 and 4 packets, same start.
    // Every slot can hold one of them (same destination): the 4-packet flow takes the first
    // 4 slots of the epoch at 20.4 µs, the long flow the next 4 and then 8 + 8.
    let spec = spec_with_trace(
        "[topology]\nkind = \"star\"\nhosts = 3\n[transport]\nprotocol = \"fastpass\"\n",
        &["0,0,2,29200,0", "1,1,2,5840,0"],
    );
    let out = run(spec, &[]);
    // Short: slots 0-3, last at 20.4 + 3 × 1.275 = 24.225 µs → 24.225 + 2.096.
    assert_eq!(fct_ps(&out, 1), ns(26_321));
    // Long: 4 slots at 20.4 µs epoch, 8 at 30.6, 8 at 40.8: last at 40.8 + 7 × 1.275.
    assert_eq!(fct_ps(&out, 0), ns(49_725 + 2_096));
}

#[test]
fn the_edf_arbiter_serves_the_earlier_deadline_first() {
    // As above, but the 20-packet flow has the earlier deadline: under EDF it takes the first
    // 16 slots (epochs at 20.4 and 30.6 µs) and the last 4 at 40.8 µs; the 4-packet flow
    // follows in the same epoch (slots 4-7).
    let spec = spec_with_trace(
        "[topology]\nkind = \"star\"\nhosts = 3\n[transport]\nprotocol = \"fastpass\"\n[fastpass]\npolicy = \"edf\"\n",
        &["0,0,2,29200,0,0.0001", "1,1,2,5840,0,0.001"],
    );
    let out = run(spec, &[]);
    assert_eq!(fct_ps(&out, 0), ns(40_800 + 3 * 1_275 + 2_096));
    assert_eq!(fct_ps(&out, 1), ns(40_800 + 7 * 1_275 + 2_096));
}

#[test]
fn the_authors_code_preset_sets_arrival_slots_no_watchdog_and_rounded_sizes() {
    use dcsim::cdf::SizeSampling;
    use dcsim::spec::{FastpassPreset, FastpassSlotStart, Spec};
    let spec = |text: &str| Spec::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"));
    let paper = spec("[transport]\nprotocol = \"fastpass\"\n");
    assert_eq!(paper.fastpass.preset, FastpassPreset::Paper);
    assert_eq!(paper.fastpass.slot_start, FastpassSlotStart::Epoch);
    assert_eq!(paper.fastpass.watchdog_epochs, 16);
    assert_eq!(paper.workload.size_sampling, SizeSampling::Interpolate);
    let code =
        spec("[transport]\nprotocol = \"fastpass\"\n[fastpass]\npreset = \"authors-code\"\n");
    assert_eq!(code.fastpass.slot_start, FastpassSlotStart::Arrival);
    assert_eq!(code.fastpass.watchdog_epochs, 0);
    assert_eq!(code.workload.size_sampling, SizeSampling::InterpolateRound);
    // Fields set on their own win over the preset.
    let mixed = spec(
        "[transport]\nprotocol = \"fastpass\"\n[workload]\nsize_sampling = \"interpolate\"\n[fastpass]\npreset = \"authors-code\"\nslot_start = \"epoch\"\nwatchdog_epochs = 4\n",
    );
    assert_eq!(mixed.fastpass.slot_start, FastpassSlotStart::Epoch);
    assert_eq!(mixed.fastpass.watchdog_epochs, 4);
    assert_eq!(mixed.workload.size_sampling, SizeSampling::Interpolate);
    // Another protocol ignores [fastpass] altogether.
    let other = spec("[transport]\nprotocol = \"phost\"\n[fastpass]\npreset = \"authors-code\"\n");
    assert_eq!(other.workload.size_sampling, SizeSampling::Interpolate);
}
