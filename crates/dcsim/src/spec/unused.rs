//! Which fields a run reads: a field the user's spec sets that the run does not read (a
//! fat-tree's `topology.oversubscription`, `[pfabric]` in a DCTCP run, a trace's
//! `workload.load`) is reported with the reason, so that no setting is silently without
//! effect (`dcsim run`, `validate`, `show` and `sweep --dry-run` warn; `--strict` refuses).
//!
//! This module is the one place that knows which fields apply to which run. It asks the
//! protocol registry ([`crate::protocols`]) which sections a protocol reads
//! ([`Protocol::sections`]) and whether it reads `[transport]`'s window fields
//! ([`Protocol::reads_window_fields`]); the rules for the topology kinds, the workload and
//! within sections are below. A field counts as set when the user's tree holds it, even at
//! its default value. `tests/it/unused.rs` checks the rules against runs: changing a field
//! reported unused leaves the run bit-identical.

use super::reader::{show, Fields, Kind};
use super::transport::WINDOW_FIELDS;
use super::{Arrivals, FlowSizes, Matrix, Protocol, RateControl, RtoMode, Spec, TopologyKind};
use crate::choice::Choice;
use serde_json::{Map, Value};

/// A set field, or a table, that has no effect on the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unused {
    /// Its dotted path (`topology.oversubscription`; a table: `pfabric`).
    pub field: String,
    /// The value as the spec writes it (empty for a table).
    pub value: String,
    /// Why the run does not read it.
    pub reason: String,
}

/// Topology fields that only some kinds read, with a hint on what applies instead.
const KIND_FIELDS: &[(&str, &[TopologyKind], &str)] = &[
    ("racks", &[TopologyKind::LeafSpine], ""),
    ("hosts_per_rack", &[TopologyKind::LeafSpine], ""),
    ("spines", &[TopologyKind::LeafSpine], ""),
    (
        "oversubscription",
        &[TopologyKind::LeafSpine, TopologyKind::FatTree],
        "; other kinds have no oversubscribed tier (their switch-to-switch links run at `topology.core_link_gbps`)",
    ),
    ("k", &[TopologyKind::FatTree], ""),
    ("hosts", &[TopologyKind::Star], ""),
    ("hosts_per_side", &[TopologyKind::Dumbbell], ""),
    (
        "core_link_gbps",
        &[TopologyKind::LeafSpine, TopologyKind::FatTree, TopologyKind::Dumbbell],
        "; this topology has no switch-to-switch link",
    ),
    ("switching", SWITCHED, "; this topology has no switch"),
    ("shared_buffer_bytes", SWITCHED, "; this topology has no switch"),
    ("buffer_alpha", SWITCHED, "; this topology has no switch"),
];

/// The kinds with a switch.
const SWITCHED: &[TopologyKind] = &[
    TopologyKind::LeafSpine,
    TopologyKind::FatTree,
    TopologyKind::Star,
    TopologyKind::Dumbbell,
    TopologyKind::File,
];

/// Workload fields a trace replaces (it lists every flow's size, hosts and start time).
const TRACE_REPLACES: &[&str] = &[
    "flow_sizes",
    "tenants",
    "tenant_weights",
    "size_sampling",
    "load",
    "mean_size_bytes",
    "arrivals",
    "incast_senders",
];

/// `"a", "b" or "c"`.
fn or_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// Protocols for which `reads` holds, by name.
fn protocols_where(reads: impl Fn(Protocol) -> bool) -> Vec<&'static str> {
    Protocol::OPTIONS.iter().filter(|(_, p)| reads(*p)).map(|(n, _)| *n).collect()
}

/// The value at dotted `path` of `tree`, if set.
fn lookup<'a>(tree: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(tree, |v, key| v.get(key))
}

/// A list that is given and not empty.
fn non_empty_list(v: Option<&Value>) -> bool {
    v.and_then(Value::as_array).is_some_and(|a| !a.is_empty())
}

impl Spec {
    /// Tables that do not apply to this run, with why: the protocol sections its protocol does
    /// not read, and `workload.bimodal` without bimodal flow sizes (`dcsim show` marks them).
    pub fn unused_sections(&self) -> Vec<Unused> {
        let protocol = self.transport.protocol;
        let mut all: Vec<&'static str> = Vec::new();
        for (_, p) in Protocol::OPTIONS {
            for s in p.sections() {
                if !all.contains(s) {
                    all.push(s);
                }
            }
        }
        let mut out: Vec<Unused> = all
            .into_iter()
            .filter(|s| !protocol.sections().contains(s))
            .map(|s| Unused {
                field: s.to_string(),
                value: String::new(),
                reason: format!(
                    "read only when `transport.protocol` is {} (this run's is \"{}\")",
                    or_list(&protocols_where(|p| p.sections().contains(&s))),
                    protocol.name()
                ),
            })
            .collect();
        if !self.sizes_in_use().iter().any(|s| matches!(s, FlowSizes::Bimodal)) {
            out.push(Unused {
                field: "workload.bimodal".into(),
                value: String::new(),
                reason: "read only when `workload.flow_sizes` (or a tenant's) is \"bimodal\""
                    .into(),
            });
        }
        out
    }

    /// Every field `tree` (the spec this one was resolved from) sets that the run does not
    /// read, in the schema's order, with the reason.
    pub fn unused_fields(&self, tree: &Value) -> Vec<Unused> {
        let mut out = Vec::new();
        if let Value::Object(top) = tree {
            let sections = self.unused_sections();
            self.walk(super::fields(), "", top, tree, &sections, &mut out);
        }
        out
    }

    fn walk(
        &self,
        fields: &Fields,
        path: &str,
        table: &Map<String, Value>,
        tree: &Value,
        sections: &[Unused],
        out: &mut Vec<Unused>,
    ) {
        for f in fields.of(path) {
            let Some(value) = table.get(f.key) else { continue };
            let dotted =
                if path.is_empty() { f.key.to_string() } else { format!("{path}.{}", f.key) };
            if f.kind == Kind::Table {
                if let Value::Object(sub) = value {
                    self.walk(fields, &dotted, sub, tree, sections, out);
                }
                continue;
            }
            let in_unused_section = sections
                .iter()
                .find(|s| dotted.starts_with(&format!("{}.", s.field)))
                .map(|s| format!("`[{}]` is {}", s.field, s.reason));
            if let Some(reason) = in_unused_section.or_else(|| self.field_reason(&dotted, tree)) {
                out.push(Unused { field: dotted, value: show(value), reason });
            }
        }
    }

    /// The flow-size choices the run draws from (none for a trace).
    fn sizes_in_use(&self) -> Vec<&FlowSizes> {
        let w = &self.workload;
        match (&w.matrix, w.tenants.is_empty()) {
            (Matrix::Trace(_), _) => Vec::new(),
            (_, true) => vec![&w.flow_sizes],
            (_, false) => w.tenants.iter().collect(),
        }
    }

    /// Why the run does not read `field` (in a section that applies), if it does not.
    fn field_reason(&self, field: &str, tree: &Value) -> Option<String> {
        let (section, key) = field.split_once('.')?;
        match section {
            "topology" => self.topology_reason(key),
            "workload" => self.workload_reason(key),
            "transport" => self.transport_reason(key),
            "pfabric" => self.pfabric_reason(key, tree),
            "pase" if key == "late_flows" && self.pase.order != super::PaseOrder::Edf => {
                Some(format!(
                    "read only when `pase.order` = \"edf\" (this run's is \"{}\")",
                    self.pase.order.name()
                ))
            }
            "pias"
                if key == "threshold_method" && non_empty_list(lookup(tree, "pias.thresholds")) =>
            {
                Some("`pias.thresholds` is given".into())
            }
            "homa" => self.homa_reason(key, tree),
            _ => None,
        }
    }

    fn topology_reason(&self, key: &str) -> Option<String> {
        let kind = self.topology.kind;
        if kind == TopologyKind::File && matches!(key, "core_link_gbps" | "link_delay_ns") {
            return Some("`topology.file` gives every link's rate and delay".into());
        }
        if let Some((_, kinds, hint)) = KIND_FIELDS.iter().find(|(k, ..)| *k == key) {
            if !kinds.contains(&kind) {
                let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
                return Some(format!(
                    "read only when `topology.kind` is {} (this run's is \"{}\"){hint}",
                    or_list(&names),
                    kind.name()
                ));
            }
        }
        if key == "buffer_alpha" && self.topology.shared_buffer_bytes == 0 {
            return Some(
                "read only with a shared switch memory (`topology.shared_buffer_bytes` > 0)".into(),
            );
        }
        if key == "buffer_bytes" {
            if self.transport.buffer_bytes > 0 {
                return Some(format!(
                    "`transport.buffer_bytes` = {} replaces it",
                    self.transport.buffer_bytes
                ));
            }
            return self.pfabric_buffer_replaces();
        }
        None
    }

    /// Why a `[transport]`/`[topology]` buffer is not read: the run's `[pfabric]` gives one.
    fn pfabric_buffer_replaces(&self) -> Option<String> {
        let reads_pfabric = self.transport.protocol.sections().contains(&"pfabric");
        (reads_pfabric && self.pfabric.buffer_bytes > 0)
            .then(|| format!("`pfabric.buffer_bytes` = {} replaces it", self.pfabric.buffer_bytes))
    }

    fn transport_reason(&self, key: &str) -> Option<String> {
        let protocol = self.transport.protocol;
        if key == "buffer_bytes" {
            return self.pfabric_buffer_replaces();
        }
        if key == "ideal_order" {
            return (protocol != Protocol::Ideal).then(|| {
                format!(
                    "read only when `transport.protocol` is \"ideal\" (this run's is \"{}\")",
                    protocol.name()
                )
            });
        }
        if !WINDOW_FIELDS.contains(&key) || protocol.reads_window_fields() {
            return None;
        }
        let readers = protocols_where(Protocol::reads_window_fields);
        let own = if protocol.sections().contains(&"pfabric") {
            "; its hosts take their window and RTO from `[pfabric]`"
        } else {
            ""
        };
        Some(format!(
            "read only when `transport.protocol` is {} (this run's is \"{}\"{own})",
            or_list(&readers),
            protocol.name()
        ))
    }

    fn workload_reason(&self, key: &str) -> Option<String> {
        let w = &self.workload;
        if matches!(w.matrix, Matrix::Trace(_)) {
            return TRACE_REPLACES.contains(&key).then(|| {
                "`workload.matrix` is a trace, which gives every flow's size, hosts and start time"
                    .to_string()
            });
        }
        match key {
            "flow_sizes" if !w.tenants.is_empty() => {
                Some("`workload.tenants` replaces it (each tenant has its own flow sizes)".into())
            }
            "size_sampling"
                if !self
                    .sizes_in_use()
                    .iter()
                    .any(|s| matches!(s, FlowSizes::Named(_) | FlowSizes::File(_))) =>
            {
                Some("read only when flow sizes come from a CDF (a named workload or a CDF file)".into())
            }
            "load" | "mean_size_bytes" if w.arrivals == Arrivals::AtStart => Some(
                "every flow starts at time 0 (`workload.arrivals` = \"at-start\"), so no arrival rate is derived"
                    .into(),
            ),
            "incast_senders" if w.matrix != Matrix::Incast => {
                Some("read only when `workload.matrix` is \"incast\"".into())
            }
            "query_rate_per_s" | "query_fanout" | "query_bytes" if w.queries == 0 => {
                Some("read only when `workload.queries` > 0".into())
            }
            _ => None,
        }
    }

    fn homa_reason(&self, key: &str, tree: &Value) -> Option<String> {
        let h = &self.homa;
        match key {
            "unscheduled_cutoffs" | "cutoff_method" if h.unscheduled_levels() == 1 => Some(format!(
                "one level is left for unscheduled data (`homa.priority_levels` {} − `homa.scheduled_levels` {}), so there is nothing to cut",
                h.priority_levels, h.scheduled_levels
            )),
            "cutoff_method" if non_empty_list(lookup(tree, "homa.unscheduled_cutoffs")) => {
                Some("`homa.unscheduled_cutoffs` is given".into())
            }
            _ => None,
        }
    }

    fn pfabric_reason(&self, key: &str, tree: &Value) -> Option<String> {
        let p = &self.pfabric;
        let las = self.transport.protocol == Protocol::Las;
        match key {
            "priority" | "classify" | "thresholds" | "threshold_method" if las => Some(
                "LAS gives every packet its flow's bytes sent as priority, in one queue".into(),
            ),
            "classify" | "thresholds" | "threshold_method" | "reserved_bytes" if p.queues == 0 => {
                Some("read only with `pfabric.queues` > 0 (pFabric over a few queues)".into())
            }
            "ties" | "dequeue" if p.queues > 0 && !las => Some(
                "read only with `pfabric.queues` = 0: the few-queue ports serve each queue first in, first out".into(),
            ),
            "threshold_method" if non_empty_list(lookup(tree, "pfabric.thresholds")) => {
                Some("`pfabric.thresholds` is given".into())
            }
            "max_rto_us" if p.rto == RtoMode::Fixed => Some(
                "read only with `pfabric.rto` = \"adaptive\" (a fixed RTO is always `pfabric.rto_us`)".into(),
            ),
            "initial_window_pkts" | "probe_after_timeouts"
                if p.rate_control == RateControl::Linerate =>
            {
                Some("read only with `pfabric.rate_control` = \"mintcp\" (LineRate starts at the window cap and never probes)".into())
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unused(toml: &str) -> Vec<(String, String)> {
        let tree = super::super::parse_toml(toml).unwrap();
        let spec = Spec::resolve(&tree).unwrap();
        spec.unused_fields(&tree).into_iter().map(|u| (u.field, u.reason)).collect()
    }

    fn fields(toml: &str) -> Vec<String> {
        unused(toml).into_iter().map(|(f, _)| f).collect()
    }

    /// Issue 15 item 1: the settings the issue saw accepted without a word are reported.
    #[test]
    fn the_issues_examples_are_reported_with_the_reason() {
        // (`oversubscription` on a fat-tree, the issue's other example, now divides its
        // aggregation–core rate; on a star it is still without effect.)
        let u = unused("[topology]\nkind = \"fat-tree\"\nk = 8\nspines = 3\nracks = 3");
        assert_eq!(
            u.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(),
            ["topology.racks", "topology.spines"]
        );
        assert_eq!(
            fields("[topology]\nkind = \"star\"\noversubscription = 3"),
            ["topology.oversubscription"]
        );
        assert!(fields("[topology]\nkind = \"fat-tree\"\noversubscription = 3").is_empty());
        assert!(
            u[1].1.contains(
                "read only when `topology.kind` is \"leaf-spine\" (this run's is \"fat-tree\")"
            ),
            "{}",
            u[1].1
        );
        let u = fields(
            "[transport]\nprotocol = \"dctcp\"\n[pfabric]\nqueues = 4\n[phost]\nfree_tokens = 2",
        );
        assert_eq!(u, ["pfabric.queues", "phost.free_tokens"]);
        let u = unused("[pfabric]\nqueues = 4");
        assert!(u[0].1.starts_with("`[pfabric]` is read only when `transport.protocol` is \"pfabric\" or \"las\" (this run's is \"dctcp\")"), "{}", u[0].1);
    }

    /// Issue 17 item 3.4: `pfabric.ties` is read by the priority-dropping ports only (not by
    /// pFabric over a few queues); `pfabric.sack_window` by every pFabric or LAS host.
    #[test]
    fn pfabric_ties_is_reported_with_a_few_queues() {
        let u = unused("[transport]\nprotocol = \"pfabric\"\n[pfabric]\nqueues = 4\nties = \"queue-order\"\nsack_window = true");
        assert_eq!(u.len(), 1, "{u:?}");
        assert_eq!(u[0].0, "pfabric.ties");
        assert!(u[0].1.contains("`pfabric.queues` = 0"), "{}", u[0].1);
        for protocol in ["pfabric", "las"] {
            let toml = format!("[transport]\nprotocol = \"{protocol}\"\n[pfabric]\nties = \"queue-order\"\nsack_window = true");
            assert!(fields(&toml).is_empty(), "{protocol}");
        }
        assert_eq!(
            fields(
                "[transport]\nprotocol = \"las\"\n[pfabric]\nqueues = 4\nties = \"queue-order\""
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn fields_the_run_reads_are_not_reported() {
        // Explicit defaults and fields of the run's own sections and kind.
        assert!(fields("seed = 1\n[topology]\nracks = 9\noversubscription = 1\n[workload]\nload = 0.6\n[dctcp]\ng = 0.0625").is_empty());
        assert!(fields(
            "[transport]\nprotocol = \"pfabric\"\n[pfabric]\nqueues = 4\nreserved_bytes = 1000"
        )
        .is_empty());
        assert!(fields("[transport]\nprotocol = \"pase\"\n[pase]\nqueues = 4\n[dctcp]\ng = 0.1")
            .is_empty());
        assert!(fields("[topology]\nkind = \"star\"\nhosts = 8\n[workload]\nflow_sizes = \"bimodal\"\n[workload.bimodal]\np_small = 0.9").is_empty());
    }

    #[test]
    fn l2dct_is_read_only_by_l2dct() {
        let dctcp = "[transport]\nprotocol = \"dctcp\"\n[l2dct]\nincrease = \"authors-code\"";
        assert_eq!(fields(dctcp), ["l2dct.increase"]);
        let l2dct = "[transport]\nprotocol = \"l2dct\"\n[l2dct]\nincrease = \"authors-code\"";
        assert!(fields(l2dct).is_empty());
    }

    #[test]
    fn conditional_fields_are_reported_when_their_condition_fails() {
        assert_eq!(
            fields("[workload]\nflow_sizes = 1000\nsize_sampling = \"step\"\nincast_senders = 3\nquery_bytes = 10\n[workload.bimodal]\np_small = 0.1"),
            [
                "workload.bimodal.p_small",
                "workload.incast_senders",
                "workload.size_sampling",
                "workload.query_bytes"
            ]
        );
        assert_eq!(
            fields("[workload]\narrivals = \"at-start\"\nflows = 100\nload = 0.3"),
            ["workload.load"]
        );
        assert_eq!(
            fields("[transport]\nprotocol = \"pfabric\"\nmin_rto_us = 10\nbuffer_bytes = 100000\n[pfabric]\nbuffer_bytes = 50000\nclassify = \"remaining\""),
            ["transport.min_rto_us", "transport.buffer_bytes", "pfabric.classify"]
        );
        assert_eq!(
            fields("[topology]\nbuffer_bytes = 50000\n[transport]\nbuffer_bytes = 60000"),
            ["topology.buffer_bytes"]
        );
        assert_eq!(fields("[topology]\nkind = \"pair\"\ncore_link_gbps = 5\nswitching = \"store-and-forward\""), ["topology.core_link_gbps", "topology.switching"]);
        // Issue 18: Homa's cutoffs with one unscheduled level, its method with cutoffs given.
        let homa = "[transport]\nprotocol = \"homa\"\n[homa]\n";
        assert_eq!(
            fields(&format!("{homa}cutoff_method = \"cbf-graduated\"\nunscheduled_cutoffs = []")),
            ["homa.cutoff_method", "homa.unscheduled_cutoffs"]
        );
        assert_eq!(
            fields(&format!("{homa}scheduled_levels = 4\ncutoff_method = \"explicit\"\nunscheduled_cutoffs = [100, 1000]")),
            ["homa.cutoff_method"]
        );
        assert_eq!(fields("[homa]\novercommit = 2"), ["homa.overcommit"]);
    }
}
