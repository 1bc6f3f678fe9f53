//! Partitioned runs on several threads (issue 16 lever 1): the same spec and seed give the same
//! bytes with 1, 2 and 3 threads.

use super::digests::flow_table_digest;
use dcsim::partition::PartitionMap;
use dcsim::spec::spec_with_overrides;
use dcsim::{RunOutput, Simulation};

/// 3 racks × 4 hosts, 2 spines: 5 partitions; 80 IMC10 flows (mostly short: a short run, every
/// window is a barrier for each thread).
const SMALL: &str = "seed = 11\n[topology]\nracks = 3\nhosts_per_rack = 4\nspines = 2\n\
                     [workload]\nflows = 80\nload = 0.6\nflow_sizes = \"imc10\"\n";

fn run(toml: &str, overrides: &[&str], threads: usize) -> RunOutput {
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    let spec = spec_with_overrides(toml, &overrides).unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(spec).unwrap().with_threads(threads).run(&mut |_| true).unwrap()
}

/// The summary as JSON without the wall-clock time and the event rate derived from it, the
/// only things threads may change.
fn summary_without_wall(out: &RunOutput) -> serde_json::Value {
    let mut v = serde_json::to_value(&out.summary).unwrap();
    let fields = v.as_object_mut().unwrap();
    for wall in ["wall_seconds", "events_per_sec"] {
        assert!(fields.remove(wall).is_some(), "the summary has {wall}");
    }
    v
}

/// Everything a run writes, in a comparable form (the flow table by digest).
fn fingerprint(out: &RunOutput) -> String {
    format!(
        "{}\n{}\n{:?}\n{:?}\n{:?}",
        flow_table_digest(&out.records),
        summary_without_wall(out),
        out.timeseries,
        out.ports,
        out.packets,
    )
}

/// Issue 16 item 8: a set of specs (every protocol; leaf-spine, fat-tree, dumbbell, star, a
/// topology file; spraying, random spraying and ECMP; long-lived flows, `n-finished`,
/// `duration_ms`; every recording) gives byte-identical flow tables, summaries (wall time
/// aside) and recordings with 1, 2 and 3 threads. The partitioned ones have several
/// partitions (else the test would prove nothing), and every run conserves packets per
/// partition and globally and never beats the idle network.
#[test]
fn every_thread_count_gives_the_same_bytes() {
    let topo_file = format!("{}/../../examples/two-tier.json", env!("CARGO_MANIFEST_DIR"));
    let file_override = format!("topology.file={topo_file}");
    let mut cases: Vec<(String, Vec<String>)> = Vec::new();
    for protocol in [
        "tcp", "dctcp", "pfabric", "ideal", "phost", "fastpass", "pias", "las", "l2dct", "d2tcp",
        "pase",
    ] {
        cases.push((protocol.into(), vec![format!("transport.protocol={protocol}")]));
    }
    let more: &[(&str, &[&str])] = &[
        ("ecmp", &["topology.load_balancing=ecmp", "transport.protocol=dctcp"]),
        ("spray-random", &["topology.load_balancing=spray-random", "transport.protocol=pfabric"]),
        ("fat-tree", &["topology.kind=fat-tree", "topology.k=4", "transport.protocol=pfabric"]),
        ("dumbbell", &["topology.kind=dumbbell", "topology.hosts_per_side=4"]),
        ("star", &["topology.kind=star", "topology.hosts=6"]),
        ("file", &["topology.kind=file", &file_override, "transport.protocol=tcp"]),
        ("long-lived", &["workload.long_lived_flows=2", "transport.protocol=dctcp"]),
        ("n-finished", &["workload.stop_when=n-finished", "workload.flows=40"]),
        ("duration", &["workload.duration_ms=0.05", "transport.protocol=pfabric"]),
        (
            "recordings",
            &[
                "transport.protocol=pfabric",
                "output.timeseries_us=5",
                "output.ports_sample_us=20",
                "output.packet_trace=true",
                "workload.flows=30",
            ],
        ),
    ];
    for (name, o) in more {
        cases.push((name.to_string(), o.iter().map(|s| s.to_string()).collect()));
    }
    for (name, overrides) in &cases {
        let o: Vec<&str> = overrides.iter().map(|s| s.as_str()).collect();
        let one = run(SMALL, &o, 1);
        let c = &one.summary.counters;
        assert_eq!(c.conservation_error, 0, "{name}: packets unaccounted for");
        assert_eq!(c.fct_below_ideal, 0, "{name}: a flow beat the idle network");
        assert!(one.summary.flows_completed > 0, "{name}: nothing finished");
        let expect = fingerprint(&one);
        for threads in [2, 3] {
            let other = run(SMALL, &o, threads);
            let got = fingerprint(&other);
            if got != expect {
                let diff: Vec<(&str, &str)> =
                    expect.lines().zip(got.lines()).filter(|(a, b)| a != b).collect();
                panic!("{name}: {threads} threads differ from 1: {diff:?}");
            }
        }
    }
}

/// Issue 16 item 2: the protocols whose ends talk only through packets run partitioned; the
/// others (and a star, and runs with scripted losses) run as one partition.
#[test]
fn which_runs_are_partitioned() {
    let partitions = |o: &[&str]| {
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        Simulation::new(spec_with_overrides(SMALL, &o).unwrap()).unwrap().partitions().count
    };
    for p in ["tcp", "dctcp", "pfabric", "pias", "las", "l2dct", "d2tcp"] {
        assert_eq!(partitions(&[&format!("transport.protocol={p}")]), 5, "{p}");
    }
    for p in ["ideal", "phost", "fastpass", "pase"] {
        assert_eq!(partitions(&[&format!("transport.protocol={p}")]), 1, "{p}");
    }
    assert_eq!(partitions(&["topology.kind=star"]), 1);
    let spec = spec_with_overrides(SMALL, &[]).unwrap();
    let rule = dcsim::fabric::LossRule {
        flow: 0,
        seq: 0,
        kind: dcsim::packet::PacketKind::DATA,
        hop: 0,
        count: 1,
    };
    let sim = Simulation::new(spec).unwrap().with_loss(rule);
    assert_eq!(sim.partitions(), &PartitionMap::single(sim.network().n_nodes()));
}
