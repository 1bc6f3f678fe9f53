//! Fields reported as unused have no effect: for runs of every protocol, topology kind and
//! kind of workload, every field the spec can set is changed to another valid value, and
//! whenever the resolver reports the changed field as unused the run's flow table and summary
//! must be bit-identical to the unchanged run's (issue 15 item 1).

use crate::common::trace_file;
use crate::digests::flow_table_digest;
use dcsim::spec::reader::{Field, Kind};
use dcsim::spec::{apply_override, parse_toml};
use dcsim::{Simulation, Spec};
use serde_json::Value;

/// A small fabric and few small flows, so that every case runs in milliseconds.
const SMALL: &str = "seed = 3
[topology]
racks = 2
hosts_per_rack = 4
spines = 2
[workload]
flows = 30
load = 0.5
flow_sizes = { uniform = [1000, 200000] }
";

/// Base runs: `key=value` overrides on [`SMALL`] (`TRACE` stands for a trace file).
fn bases() -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for (name, _) in <dcsim::spec::Protocol as dcsim::choice::Choice>::OPTIONS {
        let mut base = vec![format!("transport.protocol=\"{name}\"")];
        if *name == "pias" {
            base.push("workload.flow_sizes=\"websearch\"".into()); // its thresholds need a CDF
        }
        out.push(base);
    }
    for kind in ["fat-tree", "star", "dumbbell", "pair"] {
        out.push(vec![format!("topology.kind=\"{kind}\""), "topology.k=4".into()]);
    }
    for extra in [
        &["workload.matrix=TRACE", "workload.flows=0"][..],
        &["workload.arrivals=\"at-start\"", "workload.flow_sizes=\"bimodal\""],
        &["workload.flow_sizes=20000", "workload.matrix=\"incast\"", "workload.incast_senders=3"],
        &["workload.tenants=[\"websearch\", 5000]", "workload.flows=10"],
        &["workload.flow_sizes=\"datamining\"", "workload.flows=10"],
        &["transport.buffer_bytes=60000"],
        &[
            "transport.protocol=\"pfabric\"",
            "pfabric.queues=4",
            "pfabric.thresholds=[5000, 50000, 100000]",
        ],
        &["transport.protocol=\"pfabric\"", "pfabric.rate_control=\"linerate\""],
        &["transport.protocol=\"pfabric\"", "pfabric.buffer_bytes=50000"],
        &[
            "transport.protocol=\"las\"",
            "pfabric.queues=4",
            "pfabric.thresholds=[5000, 50000, 100000]",
        ],
    ] {
        out.push(extra.iter().map(|s| s.to_string()).collect());
    }
    out
}

/// Another valid value for `field` than `default` (`None`: no generic choice).
fn changed(path: &str, f: &Field) -> Option<Value> {
    let pick_number = |candidates: &[f64], ok: &dyn Fn(f64) -> bool| {
        candidates.iter().copied().find(|&x| ok(x) && x != f.default.as_f64().unwrap_or(f64::NAN))
    };
    match &f.kind {
        Kind::Number { min, max, exclusive } => {
            let d = f.default.as_f64()?;
            let ok =
                |x: f64| if *exclusive { x > *min && x < *max } else { x >= *min && x <= *max };
            pick_number(&[d * 2.0, d / 2.0, 0.5, 3.0, 100.0], &ok).map(Value::from)
        }
        Kind::Integer { min, max } => {
            let d = f.default.as_u64()?;
            [d + 2, d * 2, d.saturating_sub(1), min + 1]
                .into_iter()
                .find(|x| x >= min && x <= max && *x != d)
                .map(Value::from)
        }
        Kind::Bytes => Some(Value::from(f.default.as_u64()? * 2 + 3000)),
        Kind::Bool => Some(Value::from(!f.default.as_bool()?)),
        Kind::Choice(names) => {
            names.iter().find(|n| Some(**n) != f.default.as_str()).map(|n| Value::from(*n))
        }
        Kind::String => Some(Value::from("changed")),
        Kind::Custom { .. } => match path {
            "workload.flow_sizes" => Some(Value::from(5000)),
            "workload.matrix" => Some(Value::from("permutation")),
            "workload.tenants" => {
                parse_toml("x = [\"datamining\", 3000]").ok().map(|t| t["x"].clone())
            }
            "transport.dupack_threshold" => Some(Value::from(5)),
            _ => None,
        },
        Kind::ByteList | Kind::Table => None,
    }
}

/// What a run produced: its flow table's digest and its summary, minus its wall-clock measures.
fn outcome(spec: Spec) -> String {
    let out = Simulation::new(spec).unwrap().run(&mut |_| true).unwrap();
    let mut summary = serde_json::to_value(&out.summary).unwrap();
    let measured = summary.as_object_mut().unwrap();
    measured.remove("events_per_sec");
    measured.remove("wall_seconds");
    format!("{} {summary}", flow_table_digest(&out.records))
}

#[test]
fn a_field_reported_unused_does_not_change_the_run() {
    let trace = trace_file(&[
        "1,0,5,20000,0.0,",
        "2,1,5,150000,0.000001,",
        "3,2,6,3000,0.000002,0.001",
        "4,6,0,1000000,0.000003,",
    ]);
    let fields = dcsim::spec::fields();
    let mut checked = 0;
    for base in bases() {
        let mut tree = parse_toml(SMALL).unwrap();
        for kv in &base {
            let (k, v) = kv.split_once('=').unwrap();
            let v = v.replace("TRACE", &format!("\"{}\"", trace.display()));
            apply_override(&mut tree, k, &v).unwrap();
        }
        let spec = Spec::resolve(&tree).unwrap_or_else(|e| panic!("{base:?}: {e}"));
        let expected = outcome(spec);
        for (table, list) in &fields.0 {
            for f in list {
                let path =
                    if table.is_empty() { f.key.to_string() } else { format!("{table}.{}", f.key) };
                let Some(value) = changed(&path, f) else { continue };
                let mut perturbed = tree.clone();
                apply_override(&mut perturbed, &path, &value.to_string()).unwrap();
                let Ok(spec) = Spec::resolve(&perturbed) else { continue };
                if !spec.unused_fields(&perturbed).iter().any(|u| u.field == path) {
                    continue;
                }
                assert_eq!(
                    outcome(spec),
                    expected,
                    "{base:?}: `{path}` = {value} is reported unused but changes the run"
                );
                checked += 1;
            }
        }
    }
    // Every protocol's run has other protocols' sections to check, so this is far above 0.
    assert!(checked > 1000, "only {checked} unused fields checked");
}
