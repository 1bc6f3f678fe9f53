//! Result digests: a fixed set of small runs covering every protocol, topology kind, traffic
//! matrix and port discipline, each reduced to the SHA-256 of its flow table. A refactoring
//! must leave every digest unchanged; a change that alters results updates
//! `tests/digests.txt` knowingly (`DCSIM_BLESS_DIGESTS=1 cargo test -p dcsim --test it
//! digests`) and says why in its commit message.
//!
//! The digest covers exactly the columns of `flows.parquet`'s source, in the core's own
//! representation (every column little-endian, one after another, in the order below), so it
//! does not depend on the Arrow/Parquet library's version or metadata.

use dcsim::metrics::FlowRecords;
use dcsim::{Simulation, Spec};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A small leaf-spine fabric (3 racks × 4 hosts, 2 spines, 20 Gbps core), 300 web-search flows.
const BASE: &str = r#"
seed = 7
[topology]
kind = "leaf-spine"
racks = 3
hosts_per_rack = 4
spines = 2
[workload]
flows = 300
load = 0.6
"#;

/// A fixed trace (id, src, dst, size, start s, deadline s) for the trace-matrix case.
const TRACE: &str = "id,src,dst,size_bytes,start_s,deadline_s
1,0,5,20000,0.0,
2,1,5,150000,0.000001,
3,2,5,3000,0.000002,0.001
4,6,0,1000000,0.000003,
5,7,1,1460,0.000010,
6,3,11,500000,0.000020,0.002
7,11,3,64000,0.000021,
8,4,8,9000,0.000050,
";

/// Every case: a name and the `key=value` overrides applied to [`BASE`].
pub(crate) fn cases() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        // Every protocol on the default leaf-spine (spray, cut-through).
        ("tcp", vec!["transport.protocol=tcp"]),
        ("dctcp", vec!["transport.protocol=dctcp"]),
        ("pfabric", vec!["transport.protocol=pfabric"]),
        ("ideal", vec!["transport.protocol=ideal"]),
        ("phost", vec!["transport.protocol=phost"]),
        ("fastpass", vec!["transport.protocol=fastpass"]),
        ("pias", vec!["transport.protocol=pias"]),
        ("las", vec!["transport.protocol=las"]),
        ("l2dct", vec!["transport.protocol=l2dct"]),
        ("d2tcp", vec!["transport.protocol=d2tcp"]),
        ("pase", vec!["transport.protocol=pase"]),
        (
            "pase-local-q4",
            vec!["transport.protocol=pase", "pase.arbitration=local", "pase.queues=4"],
        ),
        (
            "pase-dctcp-edf",
            vec![
                "transport.protocol=pase",
                "pase.rate_control=dctcp",
                "pase.order=edf",
                "workload.deadline_mean_us=1000",
            ],
        ),
        (
            "fat-tree-pase",
            vec![
                "topology.kind=fat-tree",
                "topology.k=4",
                "transport.protocol=pase",
                "workload.matrix=left-right",
                "pase.delegation=false",
            ],
        ),
        (
            "fat-tree-pase-ecmp",
            vec![
                "topology.kind=fat-tree",
                "topology.k=4",
                "topology.load_balancing=ecmp",
                "transport.protocol=pase",
                "workload.matrix=left-right",
            ],
        ),
        (
            "fat-tree-pase-delegation",
            vec![
                "topology.kind=fat-tree",
                "topology.k=4",
                "transport.protocol=pase",
                "workload.matrix=left-right",
            ],
        ),
        (
            "intra-rack-pase",
            vec![
                "workload.matrix=intra-rack",
                "transport.protocol=pase",
                "workload.flow_sizes={ uniform = [100000, 500000] }",
                "workload.flows=100",
            ],
        ),
        ("d2tcp-deadlines", vec!["transport.protocol=d2tcp", "workload.deadline_mean_us=500"]),
        // Protocol variants.
        ("pfabric-linerate", vec!["transport.protocol=pfabric", "pfabric.rate_control=linerate"]),
        ("pfabric-q4", vec!["transport.protocol=pfabric", "pfabric.queues=4"]),
        (
            "pfabric-q2-remaining",
            vec!["transport.protocol=pfabric", "pfabric.queues=2", "pfabric.classify=remaining"],
        ),
        (
            "pfabric-q3-equal",
            vec![
                "transport.protocol=pfabric",
                "pfabric.queues=3",
                "pfabric.threshold_method=equal-split",
            ],
        ),
        (
            "pfabric-edf",
            vec![
                "transport.protocol=pfabric",
                "pfabric.priority=deadline",
                "workload.deadline_mean_us=1000",
            ],
        ),
        (
            "pfabric-edf-strict",
            vec![
                "transport.protocol=pfabric",
                "pfabric.priority=deadline-strict",
                "workload.deadline_mean_us=1000",
            ],
        ),
        ("phost-code", vec!["transport.protocol=phost", "phost.preset=authors-code"]),
        ("fastpass-code", vec!["transport.protocol=fastpass", "fastpass.preset=authors-code"]),
        (
            "phost-edf",
            vec!["transport.protocol=phost", "phost.policy=edf", "workload.deadline_mean_us=1000"],
        ),
        (
            "phost-tenants",
            vec![
                "transport.protocol=phost",
                "phost.policy=tenant-fair",
                "workload.tenants=[\"websearch\", \"imc10\"]",
            ],
        ),
        (
            "fastpass-edf",
            vec![
                "transport.protocol=fastpass",
                "fastpass.policy=edf",
                "workload.deadline_mean_us=1000",
            ],
        ),
        ("pias-per-queue", vec!["transport.protocol=pias", "pias.ecn=per-queue"]),
        ("pias-no-ecn", vec!["transport.protocol=pias", "pias.ecn=off", "pias.queues=2"]),
        (
            "pias-equal-reset",
            vec![
                "transport.protocol=pias",
                "pias.threshold_method=equal-split",
                "pias.reset_after_timeouts=2",
                "pias.queues=4",
            ],
        ),
        (
            "tcp-sack-probe",
            vec![
                "transport.protocol=tcp",
                "transport.sack=true",
                "transport.probe_after_timeouts=5",
            ],
        ),
        (
            "tcp-fixed-rto",
            vec!["transport.protocol=tcp", "transport.rto=fixed", "transport.dupack_threshold=3"],
        ),
        // Topology kinds.
        ("fat-tree-dctcp", vec!["topology.kind=fat-tree", "topology.k=4"]),
        (
            "fat-tree-pfabric",
            vec!["topology.kind=fat-tree", "topology.k=4", "transport.protocol=pfabric"],
        ),
        (
            "fat-tree-phost",
            vec!["topology.kind=fat-tree", "topology.k=4", "transport.protocol=phost"],
        ),
        (
            "fat-tree-fastpass",
            vec!["topology.kind=fat-tree", "topology.k=4", "transport.protocol=fastpass"],
        ),
        ("star-tcp", vec!["topology.kind=star", "topology.hosts=8", "transport.protocol=tcp"]),
        ("star-pias", vec!["topology.kind=star", "topology.hosts=8", "transport.protocol=pias"]),
        ("dumbbell-dctcp", vec!["topology.kind=dumbbell", "topology.hosts_per_side=3"]),
        (
            "dumbbell-phost",
            vec!["topology.kind=dumbbell", "topology.hosts_per_side=3", "transport.protocol=phost"],
        ),
        ("pair-dctcp", vec!["topology.kind=pair", "workload.flows=60"]),
        // Traffic matrices.
        ("permutation-dctcp", vec!["workload.matrix=permutation"]),
        ("permutation-phost", vec!["workload.matrix=permutation", "transport.protocol=phost"]),
        (
            "incast-pfabric",
            vec![
                "workload.matrix=incast",
                "workload.incast_senders=6",
                "transport.protocol=pfabric",
            ],
        ),
        ("incast-dctcp", vec!["workload.matrix=incast", "workload.incast_senders=6"]),
        ("fan-in-pias", vec!["workload.matrix=fan-in", "transport.protocol=pias"]),
        ("trace-dctcp", vec!["workload.matrix=TRACE", "workload.flows=0"]),
        (
            "trace-pfabric-edf",
            vec![
                "workload.matrix=TRACE",
                "workload.flows=0",
                "transport.protocol=pfabric",
                "pfabric.priority=deadline",
            ],
        ),
        (
            "queries-pias",
            vec![
                "transport.protocol=pias",
                "workload.queries=5",
                "workload.query_rate_per_s=20000",
                "workload.query_fanout=4",
            ],
        ),
        (
            "left-right-dctcp",
            vec!["workload.matrix=left-right", "workload.flow_sizes={ uniform = [2000, 198000] }"],
        ),
        ("intra-rack-tcp", vec!["workload.matrix=intra-rack", "transport.protocol=tcp"]),
        // Port disciplines and forwarding.
        ("event-ports-tcp", vec!["transport.protocol=tcp", "engine.fifo_timeline=false"]),
        ("event-ports-dctcp", vec!["engine.fifo_timeline=false"]),
        (
            "store-forward-ecmp",
            vec!["topology.switching=store-and-forward", "topology.load_balancing=ecmp"],
        ),
        (
            "spray-random-pfabric",
            vec!["topology.load_balancing=spray-random", "transport.protocol=pfabric"],
        ),
        (
            "spray-per-source-pfabric",
            vec!["topology.load_balancing=spray-per-source", "transport.protocol=pfabric"],
        ),
        (
            "oversubscribed-dctcp",
            vec!["topology.oversubscription=2", "topology.buffer_bytes=20000"],
        ),
        // Workloads and run endings.
        (
            "datamining-dctcp",
            vec!["workload.flow_sizes=datamining", "workload.flows=80", "workload.load=0.3"],
        ),
        (
            "imc10-phost-step",
            vec![
                "workload.flow_sizes=imc10",
                "workload.size_sampling=step",
                "transport.protocol=phost",
            ],
        ),
        (
            "bimodal-tcp",
            vec!["workload.flow_sizes=bimodal", "workload.flows=60", "transport.protocol=tcp"],
        ),
        (
            "fixed-at-start-phost",
            vec![
                "workload.flow_sizes=100000",
                "workload.arrivals=at-start",
                "workload.flows=24",
                "transport.protocol=phost",
            ],
        ),
        (
            "n-finished-pfabric",
            vec![
                "workload.stop_when=n-finished",
                "transport.protocol=pfabric",
                "workload.load=0.8",
            ],
        ),
        (
            "n-finished-ideal",
            vec!["workload.stop_when=n-finished", "transport.protocol=ideal", "workload.load=0.8"],
        ),
        ("duration-dctcp", vec!["workload.duration_ms=2", "workload.load=0.9"]),
        // The opt-in partitioned model (issue 16, `engine.partitioned`; on one thread here,
        // the same bytes on any number: tests/it/parallel.rs): a window protocol, pFabric,
        // pHost, SACK learned from ACKs, pFabric's SACK window, PIAS, Fastpass, Homa, dcPIM,
        // PASE, random spraying on a fat-tree.
        ("partitioned-dctcp", vec!["engine.partitioned=true"]),
        ("partitioned-pfabric", vec!["engine.partitioned=true", "transport.protocol=pfabric"]),
        ("partitioned-phost", vec!["engine.partitioned=true", "transport.protocol=phost"]),
        (
            "partitioned-tcp-sack",
            vec!["engine.partitioned=true", "transport.protocol=tcp", "transport.sack=true"],
        ),
        (
            "partitioned-pfabric-sack-window",
            vec![
                "engine.partitioned=true",
                "transport.protocol=pfabric",
                "pfabric.sack_window=true",
            ],
        ),
        ("partitioned-pias", vec!["engine.partitioned=true", "transport.protocol=pias"]),
        ("partitioned-fastpass", vec!["engine.partitioned=true", "transport.protocol=fastpass"]),
        ("partitioned-homa", vec!["engine.partitioned=true", "transport.protocol=homa"]),
        ("partitioned-dcpim", vec!["engine.partitioned=true", "transport.protocol=dcpim"]),
        ("partitioned-pase", vec!["engine.partitioned=true", "transport.protocol=pase"]),
        (
            "partitioned-fat-tree-spray-random",
            vec![
                "engine.partitioned=true",
                "topology.kind=fat-tree",
                "topology.k=4",
                "topology.load_balancing=spray-random",
                "transport.protocol=pfabric",
            ],
        ),
        // dcPIM (issue 18): the default matching, random later rounds with fewer channels, a
        // fat-tree, and flows below the BDP all unscheduled under an incast.
        ("dcpim", vec!["transport.protocol=dcpim"]),
        (
            "dcpim-r2-k1-random",
            vec![
                "transport.protocol=dcpim",
                "dcpim.rounds=2",
                "dcpim.channels=1",
                "dcpim.shortest_first_rounds=0",
                "workload.load=0.8",
            ],
        ),
        (
            "fat-tree-dcpim",
            vec!["topology.kind=fat-tree", "topology.k=4", "transport.protocol=dcpim"],
        ),
        (
            "incast-dcpim",
            vec![
                "workload.matrix=incast",
                "workload.incast_senders=6",
                "transport.protocol=dcpim",
                "dcpim.unscheduled_bdp=4",
            ],
        ),
        (
            "warmup-tenant-weights",
            vec![
                "workload.warmup_fraction=0.1",
                "workload.tenants=[\"websearch\", 5000]",
                "workload.tenant_weights=[1, 3]",
            ],
        ),
        // Homa (Issue 18): one and four unscheduled levels, and a three-tier fabric.
        ("homa", vec!["transport.protocol=homa"]),
        (
            "homa-levels",
            vec!["transport.protocol=homa", "homa.scheduled_levels=4", "homa.overcommit=2"],
        ),
        (
            "homa-w2",
            vec![
                "transport.protocol=homa",
                "workload.flow_sizes=homa-w2",
                "homa.scheduled_levels=3",
                "workload.load=0.8",
            ],
        ),
        (
            "fat-tree-homa",
            vec!["topology.kind=fat-tree", "topology.k=4", "transport.protocol=homa"],
        ),
    ]
}

/// SHA-256 over the flow table's columns, each little-endian, in a fixed order.
pub fn flow_table_digest(r: &FlowRecords) -> String {
    let mut h = Sha256::new();
    for col in [&r.id, &r.size_bytes, &r.start_ps, &r.finish_ps, &r.ideal_ps, &r.deadline_ps] {
        h.update((col.len() as u64).to_le_bytes());
        for x in col.iter() {
            h.update(x.to_le_bytes());
        }
    }
    for col in [&r.src, &r.dst, &r.retransmits, &r.timeouts, &r.packets_sent, &r.tenant, &r.request]
    {
        h.update((col.len() as u64).to_le_bytes());
        for x in col.iter() {
            h.update(x.to_le_bytes());
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn digest_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/digests.txt")
}

pub(crate) fn trace_path() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dcsim-digests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("trace.csv");
    std::fs::write(&path, TRACE).unwrap();
    path
}

/// A case's spec.
pub(crate) fn case_spec(overrides: &[&str], trace: &std::path::Path) -> Spec {
    let overrides: Vec<String> =
        overrides.iter().map(|o| o.replace("TRACE", &format!("\"{}\"", trace.display()))).collect();
    dcsim::spec::spec_with_overrides(BASE, &overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// The lines of `tests/digests.txt` by case name: its digest and the protocol it names.
fn recorded_lines() -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(digest_file()).expect("tests/digests.txt exists");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut fields = l.split_whitespace().map(str::to_string);
            let name = fields.next().expect("`name digest protocol` lines");
            let digest = fields.next().expect("`name digest protocol` lines");
            (name, (digest, fields.next().unwrap_or_default()))
        })
        .collect()
}

/// The digests recorded in `tests/digests.txt`, by case name.
pub(crate) fn recorded_digests() -> BTreeMap<String, String> {
    recorded_lines().into_iter().map(|(name, (digest, _))| (name, digest)).collect()
}

/// The protocols of the cases as `tests/digests.txt` records them (its third column), by case
/// name: `dcsim.reproduce` reads them to tell which figures a changed digest makes stale.
fn recorded_protocols() -> BTreeMap<String, String> {
    recorded_lines().into_iter().map(|(name, (_, protocol))| (name, protocol)).collect()
}

/// A case's result class: its `transport.protocol` name, or `pase-edf` ([`dcsim::Spec::result_class`]).
fn case_protocol(overrides: &[&str], trace: &std::path::Path) -> String {
    case_spec(overrides, trace).result_class()
}

fn run_case(overrides: &[&str], trace: &std::path::Path) -> String {
    let spec = case_spec(overrides, trace);
    let out = Simulation::new(spec).unwrap().run(&mut |_| true).unwrap();
    let c = &out.summary.counters;
    assert_eq!(c.conservation_error, 0);
    assert_eq!(c.fct_below_ideal, 0);
    assert!(out.summary.flows_completed > 0);
    flow_table_digest(&out.records)
}

#[test]
fn result_digests_are_unchanged() {
    let trace = trace_path();
    let got: BTreeMap<String, String> =
        cases().into_iter().map(|(name, o)| (name.to_string(), run_case(&o, &trace))).collect();
    assert_eq!(got.len(), cases().len(), "case names are unique");
    // D2TCP without deadlines is DCTCP (imminence 1): the same flow table, bit for bit.
    assert_eq!(got["d2tcp"], got["dctcp"], "d2tcp without deadlines differs from dctcp");
    let path = digest_file();
    if std::env::var_os("DCSIM_BLESS_DIGESTS").is_some() {
        let mut text = String::from(
            "# SHA-256 of each digest case's flow table (crates/dcsim/tests/it/digests.rs), and the\n\
             # protocol it runs (pase-edf: PASE arbitrating by deadline; a figure is stale when a\n\
             # digest of one of its runs' protocols changes).\n\
             # Regenerate only for a change that is meant to alter results, and say why in the\n\
             # commit message: DCSIM_BLESS_DIGESTS=1 cargo test -p dcsim --test it digests\n",
        );
        let protocols: BTreeMap<&str, String> =
            cases().into_iter().map(|(name, o)| (name, case_protocol(&o, &trace))).collect();
        for (name, d) in &got {
            text.push_str(&format!("{name} {d} {}\n", protocols[name.as_str()]));
        }
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = recorded_digests();
    // Each line names its case's protocol: a figure is stale only when a digest of one of its
    // protocols changed (`dcsim.reproduce.results_unchanged_since`).
    let protocols = recorded_protocols();
    for (name, o) in cases() {
        let want_protocol = case_protocol(&o, &trace);
        assert_eq!(
            protocols.get(name).map(String::as_str),
            Some(want_protocol.as_str()),
            "tests/digests.txt: case {name} names another protocol than it runs"
        );
    }
    let changed: Vec<&String> = got.keys().filter(|k| want.get(*k) != got.get(*k)).collect();
    let stale: Vec<&String> = want.keys().filter(|k| !got.contains_key(*k)).collect();
    assert!(
        changed.is_empty() && stale.is_empty(),
        "results changed for {changed:?} (cases no longer run: {stale:?}); if intended, \
         regenerate with DCSIM_BLESS_DIGESTS=1 and give the reason in the commit message"
    );
}
