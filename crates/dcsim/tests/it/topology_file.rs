//! Topologies read from files (`topology.kind = "file"`, issue 15 item 10).

use crate::digests::flow_table_digest;
use dcsim::{Simulation, Spec};
use std::fmt::Write;
use std::path::PathBuf;

/// Writes `json` to a fresh file named `name` in this test process's temporary folder.
fn topology_file(name: &str, json: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dcsim-it-topology-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, json).unwrap();
    path
}

/// The built-in leaf-spine written out as a file, nodes and links in the order the built-in
/// kind creates them (so ports, routes and load-balancer state are numbered the same).
fn leaf_spine_json(
    racks: u32,
    per_rack: u32,
    spines: u32,
    host_gbps: f64,
    core_gbps: f64,
) -> String {
    let hosts: Vec<String> = (0..racks * per_rack).map(|h| format!("\"h{h}\"")).collect();
    let tors: Vec<String> = (0..racks).map(|r| format!("\"tor{r}\"")).collect();
    let cores: Vec<String> = (0..spines).map(|s| format!("\"spine{s}\"")).collect();
    let mut links = Vec::new();
    for r in 0..racks {
        for i in 0..per_rack {
            let h = r * per_rack + i;
            links.push(format!(
                r#"{{"a": "h{h}", "b": "tor{r}", "gbps": {host_gbps}, "delay_ns": 200}}"#
            ));
        }
    }
    for r in 0..racks {
        for s in 0..spines {
            links.push(format!(
                r#"{{"a": "tor{r}", "b": "spine{s}", "gbps": {core_gbps}, "delay_ns": 200}}"#
            ));
        }
    }
    let mut json = String::new();
    write!(
        json,
        "{{\"hosts\": [{}],\n \"switches\": [{}],\n \"links\": [\n  {}\n]}}\n",
        hosts.join(", "),
        [tors, cores].concat().join(", "),
        links.join(",\n  ")
    )
    .unwrap();
    json
}

fn run_digest(toml: &str, overrides: &[String]) -> String {
    let spec = dcsim::spec::spec_with_overrides(toml, overrides).unwrap_or_else(|e| panic!("{e}"));
    let out = Simulation::new(spec).unwrap().run(&mut |_| true).unwrap();
    assert_eq!(out.summary.counters.conservation_error, 0);
    assert_eq!(out.summary.counters.fct_below_ideal, 0);
    assert!(out.summary.flows_completed > 0);
    flow_table_digest(&out.records)
}

/// Issue 15 item 10: a file describing the same leaf-spine as the built-in kind gives the
/// same flow table, bit for bit, for protocols that use the topology in different ways
/// (pFabric's and pHost's line rate, Fastpass's arbiter attached to host 0's ToR, PASE's
/// per-link arbitration and racks), under spraying and ECMP.
#[test]
fn a_file_leaf_spine_runs_exactly_as_the_built_in_one() {
    let path = topology_file("leaf-spine.json", &leaf_spine_json(3, 4, 2, 10.0, 20.0));
    let common = "seed = 7\n[workload]\nflows = 150\nload = 0.6\n";
    let built_in = format!(
        "{common}[topology]\nkind = \"leaf-spine\"\nracks = 3\nhosts_per_rack = 4\nspines = 2\n"
    );
    let from_file = format!("{common}[topology]\nkind = \"file\"\nfile = \"{}\"\n", path.display());
    for protocol in ["dctcp", "pfabric", "phost", "fastpass", "pase", "pias"] {
        for lb in ["spray", "ecmp"] {
            let o = vec![
                format!("transport.protocol={protocol}"),
                format!("topology.load_balancing={lb}"),
            ];
            assert_eq!(
                run_digest(&from_file, &o),
                run_digest(&built_in, &o),
                "{protocol} with {lb}: the file topology differs from the built-in one"
            );
        }
    }
    // The file sets the host rate, and the resolved spec (which repeats it) resolves again.
    let spec = Spec::from_toml_str(&from_file).unwrap();
    assert_eq!(spec.topology.host_link_gbps, 10.0);
    assert_eq!(spec.topology.n_hosts(), 12);
    assert_eq!(Spec::from_toml_str(&spec.to_toml_string()).unwrap(), spec);
}

/// Issue 15 item 10: spec-level errors of a file topology name the field.
#[test]
fn file_topology_spec_errors_name_the_field() {
    let path = topology_file("star.json", &leaf_spine_json(1, 3, 0, 10.0, 10.0));
    let err = |toml: &str| Spec::from_toml_str(toml).unwrap_err();
    let e = err("[topology]\nkind = \"file\"");
    assert_eq!(e.path, "topology.file");
    assert!(e.message.contains("needs the path of a topology file"), "{e}");
    let e = err(&format!("[topology]\nfile = \"{}\"", path.display()));
    assert_eq!(e.path, "topology.file");
    assert!(e.message.contains("set topology.kind = \"file\""), "{e}");
    let e = err("[topology]\nkind = \"file\"\nfile = \"/no/such/topology.json\"");
    assert_eq!(e.path, "topology.file");
    assert!(e.message.contains("cannot read topology file /no/such/topology.json"), "{e}");
    let e = err(&format!(
        "[topology]\nkind = \"file\"\nfile = \"{}\"\nhost_link_gbps = 25",
        path.display()
    ));
    assert_eq!(e.path, "topology.host_link_gbps");
    assert!(e.message.contains("disagrees with the host links of topology.file (10 Gbps)"), "{e}");
    let bad = topology_file(
        "bad.json",
        r#"{"hosts": ["a", "b"], "switches": ["s"], "links": [
        {"a": "a", "b": "s", "gbps": 10, "delay_ns": 1}, {"a": "b", "b": "x", "gbps": 10, "delay_ns": 1}]}"#,
    );
    let e = err(&format!("[topology]\nkind = \"file\"\nfile = \"{}\"", bad.display()));
    assert_eq!(e.path, "topology.file");
    assert!(e.message.contains("links[1]: `x` is neither a host nor a switch"), "{e}");
    assert!(e.message.contains(&bad.display().to_string()), "the message names the file: {e}");
}

/// Issue 15 item 10: with a topology file, the fields the file replaces are reported unused.
#[test]
fn the_fields_a_topology_file_replaces_are_reported_unused() {
    let path = topology_file("unused.json", &leaf_spine_json(2, 2, 1, 10.0, 10.0));
    let toml = format!(
        "[topology]\nkind = \"file\"\nfile = \"{}\"\nlink_delay_ns = 300\ncore_link_gbps = 40\nracks = 3\nswitching = \"store-and-forward\"\n",
        path.display()
    );
    let tree = dcsim::spec::parse_toml(&toml).unwrap();
    let spec = Spec::resolve(&tree).unwrap();
    let unused: Vec<(String, String)> =
        spec.unused_fields(&tree).into_iter().map(|u| (u.field, u.reason)).collect();
    let reason = |f: &str| unused.iter().find(|u| u.0 == f).map(|u| u.1.clone());
    for f in ["topology.link_delay_ns", "topology.core_link_gbps"] {
        assert_eq!(reason(f).as_deref(), Some("`topology.file` gives every link's rate and delay"));
    }
    assert!(reason("topology.racks").unwrap().contains("read only when `topology.kind` is"));
    assert_eq!(reason("topology.switching"), None, "a file's switches do switch");
}
