//! A switch memory shared by its ports under dynamic thresholds (`topology.shared_buffer_bytes`,
//! `topology.buffer_alpha`; Choudhury and Hahne, IEEE/ACM ToN 1998): a lone congested port
//! settles at α·B/(1 + α) of the memory B, the memory is never exceeded, and both port paths
//! (FIFO timeline and event-driven) agree.

use crate::common::{run, run_both_port_paths, spec_with_trace};
use dcsim::RunOutput;

/// TCP (no ECN), windows up to 1,000 packets, on a star of `hosts` 10 Gbps hosts; each port
/// has 1 MB of its own unless the switch shares a memory (`extra` adds to `[topology]`).
fn spec(hosts: u32, extra: &str, rows: &[&str]) -> dcsim::Spec {
    let toml = format!(
        "[topology]\nkind = \"star\"\nhosts = {hosts}\nbuffer_bytes = 1000000\n{extra}\n\
         [transport]\nprotocol = \"tcp\"\nmax_window_pkts = 1000\n\
         [output]\nports_sample_us = 1\n"
    );
    spec_with_trace(&toml, rows)
}

/// The largest queue sampled at the switch's port towards host `to`, and its drops.
fn port_toward(out: &RunOutput, to: u32) -> (u64, u64) {
    let port = out
        .port_descriptions
        .iter()
        .position(|d| d.peer == to && d.node != to)
        .expect("a switch port towards the host") as u32;
    let s = out.ports.as_ref().expect("port samples");
    let rows = (0..s.port.len()).filter(|&i| s.port[i] == port);
    let (mut peak, mut drops) = (0, 0);
    for i in rows {
        peak = peak.max(s.queue_bytes[i]);
        drops += s.dropped_packets[i];
    }
    (peak, drops)
}

/// Two 3 MB flows into host 2.
const FAN_IN: [&str; 2] = ["0,0,2,3000000,0", "1,1,2,3000000,0"];

#[test]
fn a_lone_congested_port_takes_alpha_over_one_plus_alpha_of_the_memory() {
    // Admission: q + 1500 <= α (B − q) before the packet, so the queue never passes
    // (α B + α·1500) / (1 + α): 100,750 bytes for α = 1, 150,375 for α = 3 with B = 200,000.
    let cases = [("1", 100_750), ("3", 150_375)];
    for (alpha, bound) in cases {
        let extra = format!("shared_buffer_bytes = 200000\nbuffer_alpha = {alpha}");
        let out = run_both_port_paths(spec(3, &extra, &FAN_IN), &[]);
        let (peak, drops) = port_toward(&out, 2);
        assert!(peak <= bound, "α = {alpha}: queue {peak} above {bound}");
        assert!(peak >= bound - 10_000, "α = {alpha}: queue {peak} never near {bound}");
        assert!(drops > 0, "α = {alpha}: TCP fills the threshold and loses packets");
    }
    // Without a shared memory the same flows fill far more of the port's own 1 MB.
    let (peak, _) = port_toward(&run(spec(3, "", &FAN_IN), &[]), 2);
    assert!(peak > 300_000, "the port's own buffer: {peak}");
}

#[test]
fn congested_ports_share_the_memory_and_never_exceed_it() {
    // Two fan-ins on one switch: hosts 0, 1 → 2 and 3, 4 → 5.
    let rows = ["0,0,2,3000000,0", "1,1,2,3000000,0", "2,3,5,3000000,0", "3,4,5,3000000,0"];
    let extra = "shared_buffer_bytes = 200000\nbuffer_alpha = 1";
    let out = run_both_port_paths(spec(6, extra, &rows), &[]);
    let s = out.ports.as_ref().expect("port samples");
    let mut at: std::collections::BTreeMap<u64, u64> = Default::default();
    for i in 0..s.port.len() {
        let d = &out.port_descriptions[s.port[i] as usize];
        if d.node == 6 {
            *at.entry(s.time_ps[i]).or_default() += s.queue_bytes[i];
        }
    }
    let fullest = at.values().copied().max().unwrap_or(0);
    assert!(fullest <= 200_000, "the switch held {fullest} bytes of a 200,000-byte memory");
    // Each port alone could take half (100,750); with two congested ports the memory is
    // shared, so together they hold more than one port's share.
    assert!(fullest > 110_000, "two congested ports held only {fullest} bytes");
    for to in [2, 5] {
        assert!(port_toward(&out, to).0 <= 100_750);
    }
}

#[test]
fn alpha_without_a_shared_memory_is_reported_unused() {
    let mut tree =
        dcsim::spec::parse_toml("[topology]\nkind = \"star\"\nbuffer_alpha = 2").unwrap();
    let spec = dcsim::Spec::resolve(&tree).unwrap();
    let unused: Vec<String> = spec.unused_fields(&tree).into_iter().map(|u| u.field).collect();
    assert_eq!(unused, ["topology.buffer_alpha"]);
    dcsim::spec::apply_override(&mut tree, "topology.shared_buffer_bytes", "4000000").unwrap();
    assert!(dcsim::Spec::resolve(&tree).unwrap().unused_fields(&tree).is_empty());
    // A memory smaller than one packet is refused, naming the field.
    dcsim::spec::apply_override(&mut tree, "topology.shared_buffer_bytes", "1000").unwrap();
    let err = dcsim::Spec::resolve(&tree).unwrap_err().to_string();
    assert!(err.contains("shared_buffer_bytes") && err.contains("1000"), "{err}");
}
