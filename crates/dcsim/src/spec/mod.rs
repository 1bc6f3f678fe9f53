//! The run spec: what a user writes (TOML or a Python dict), resolved once into plain structs
//! with every default filled in.
//!
//! Resolution walks the user's tree section by section, one file per section, with the
//! generic reader of [`reader`] (which knows no field). Every field has a documented default;
//! an unknown or misspelt key, a value of the wrong type or out of range is rejected with a
//! [`SpecError`] naming the field, the value and what is allowed (with a "did you mean" for
//! near misses). The reader records every field it reads, so the list of allowed keys and the
//! JSON Schema ([`schema`], `dcsim schema`) come from the resolution code itself. The
//! resolved [`Spec`] serializes back to TOML with every default visible, which is what
//! `dcsim show` prints and every run directory stores.

pub mod dcpim;
pub mod dctcp;
pub mod derived;
pub mod fastpass;
pub mod homa;
pub mod l2dct;
pub mod output;
pub mod pase;
pub mod pfabric;
pub mod phost;
pub mod pias;
pub mod reader;
pub mod schema;
pub mod topology;
pub mod transport;
pub mod unused;
pub mod workload;

pub use dcpim::DcpimSpec;
pub use dctcp::DctcpSpec;
pub use fastpass::{FastpassPolicy, FastpassPreset, FastpassSlotStart, FastpassSpec};
pub use homa::{HomaCutoffMethod, HomaPriorityRule, HomaSpec};
pub use l2dct::{L2dctIncrease, L2dctSpec};
pub use output::{EngineSpec, OutputSpec};
pub use pase::{PaseArbitration, PaseLateFlows, PaseOrder, PaseRateControl, PaseSpec};
pub use pfabric::{
    ClassifyBy, Dequeue, PfabricSpec, PriorityKey, RateControl, Sending, ThresholdMethod, TieBreak,
};
pub use phost::{PhostPolicy, PhostPreset, PhostSpec};
pub use pias::{PiasEcn, PiasSpec, PiasThresholdMethod};
pub use reader::{apply_override, byte_count_error, parse_bytes, parse_toml, suggest, Fields};
pub use topology::{LoadBalancing, SharedBuffer, Switching, TopologyKind, TopologySpec};
pub(crate) use transport::dupack_state;
pub use transport::{Connections, DupAckThreshold, IdealOrder, Protocol, RtoMode, TransportSpec};
pub use unused::Unused;
pub use workload::{
    Arrivals, BimodalSpec, FlowSizes, Matrix, StopWhen, WorkloadSpec, MAX_LONG_LIVED_FLOWS,
};

use crate::cdf::SizeSampling;
use crate::choice::Choice;
use crate::error::SpecError;
use reader::Reader;
use serde::Serialize;
use serde_json::Value;
use std::sync::OnceLock;

/// A fully resolved run spec.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Spec {
    /// Master seed; every random stream of the run derives from it. Default 1.
    pub seed: u64,
    /// A free-form label for the run. Default "".
    pub name: String,
    /// The fabric.
    pub topology: TopologySpec,
    /// Flow sizes, arrivals and the traffic matrix.
    pub workload: WorkloadSpec,
    /// The transport protocol and its window/timer settings.
    pub transport: TransportSpec,
    /// DCTCP settings (used when `transport.protocol = "dctcp"`).
    pub dctcp: DctcpSpec,
    /// pFabric settings (used when `transport.protocol = "pfabric"`).
    pub pfabric: PfabricSpec,
    /// pHost settings (used when `transport.protocol = "phost"`).
    pub phost: PhostSpec,
    /// Fastpass settings (used when `transport.protocol = "fastpass"`).
    pub fastpass: FastpassSpec,
    /// PIAS settings (used when `transport.protocol = "pias"`).
    pub pias: PiasSpec,
    /// PASE settings (used when `transport.protocol = "pase"`).
    pub pase: PaseSpec,
    /// Homa settings (used when `transport.protocol = "homa"`).
    pub homa: HomaSpec,
    /// dcPIM settings (used when `transport.protocol = "dcpim"`).
    pub dcpim: DcpimSpec,
    /// L2DCT's own settings (used when `transport.protocol = "l2dct"`).
    pub l2dct: L2dctSpec,
    /// What a run records beyond the flow table and summary.
    pub output: OutputSpec,
    /// Simulator implementation choices that do not change the model.
    pub engine: EngineSpec,
}

/// Every field of every table, recorded once by resolving the empty spec: the allowed keys
/// and the schema's source.
pub fn fields() -> &'static Fields {
    static FIELDS: OnceLock<Fields> = OnceLock::new();
    FIELDS.get_or_init(|| {
        let reader = Reader::recording();
        Spec::read(&reader, &Value::Object(Default::default())).expect("the empty spec resolves");
        reader.into_fields()
    })
}

/// Parses a TOML spec and applies `key=value` overrides.
pub fn spec_with_overrides(text: &str, overrides: &[String]) -> Result<Spec, SpecError> {
    let mut tree = parse_toml(text)?;
    for kv in overrides {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| SpecError::new(kv.as_str(), "an override must be key=value"))?;
        apply_override(&mut tree, k, v.trim())?;
    }
    Spec::resolve(&tree)
}

impl Spec {
    /// The results a change of the model can touch apart from others, as the result digests'
    /// third column (`tests/digests.txt`) names each case's: the protocol's name, or
    /// `pase-edf` for PASE arbitrating by deadline, whose key is code of its own
    /// (`transport/pase.rs`). `dcsim.reproduce.result_class` reads a run's the same way, to
    /// tell which figures a changed digest makes stale.
    pub fn result_class(&self) -> String {
        use crate::choice::Choice;
        match self.transport.protocol {
            Protocol::Pase if self.pase.order == PaseOrder::Edf => "pase-edf".to_string(),
            p => p.name().to_string(),
        }
    }

    /// Resolves a spec tree (as parsed from TOML or handed over from Python).
    pub fn resolve(root: &Value) -> Result<Spec, SpecError> {
        let spec = Spec::read(&Reader::checking(fields()), root)?;
        spec.check_files()?;
        Ok(spec)
    }

    /// Reads every section of `root` with `reader`.
    fn read(reader: &Reader, root: &Value) -> Result<Spec, SpecError> {
        let top = reader.section("", Some(root))?;
        let seed = top.u64_in("seed", 1, 0, u64::MAX)?;
        let name = top.string("name")?.unwrap_or("").to_string();
        let topology = topology::resolve(&top.sub("topology")?)?;
        let workload_section = top.sub("workload")?;
        let mut workload = workload::resolve(&workload_section, &topology)?;
        let transport = transport::resolve(&top.sub("transport")?, &topology)?;
        if workload.long_lived_flows > 0 && transport.protocol == Protocol::Ideal {
            // SRPT would serve a never-ending flow last: it could delay none of the run's flows,
            // and the flow-level model moves no bytes to report for it.
            return Err(SpecError::new(
                "workload.long_lived_flows",
                format!(
                    "{} long-lived flows with transport.protocol = \"ideal\": the flow-level model simulates only the run's flows; use 0 (under SRPT a never-ending flow would delay none of them)",
                    workload.long_lived_flows
                ),
            ));
        }
        let dctcp = dctcp::resolve(&top.sub("dctcp")?)?;
        let pfabric = pfabric::resolve(&top.sub("pfabric")?, &transport, &topology, &workload)?;
        let phost = phost::resolve(&top.sub("phost")?)?;
        let fastpass = fastpass::resolve(&top.sub("fastpass")?, transport.protocol, &topology)?;
        let authors_code = match transport.protocol {
            Protocol::Fastpass => fastpass.preset == FastpassPreset::AuthorsCode,
            Protocol::Phost => phost.preset == PhostPreset::AuthorsCode,
            _ => false,
        };
        if authors_code && workload_section.raw("size_sampling").is_none() {
            // The authors' code (NetSys/simulator, `coresim/random_variable.cpp`) rounds an
            // interpolated CDF size to whole packets.
            workload.size_sampling = SizeSampling::InterpolateRound;
        }
        let pias =
            pias::resolve(&top.sub("pias")?, &workload, transport.protocol == Protocol::Pias)?;
        let pase = pase::resolve(&top.sub("pase")?)?;
        let homa =
            homa::resolve(&top.sub("homa")?, &workload, transport.protocol == Protocol::Homa)?;
        let dcpim = dcpim::resolve(&top.sub("dcpim")?)?;
        let l2dct = l2dct::resolve(&top.sub("l2dct")?)?;
        let output = output::resolve_output(&top.sub("output")?)?;
        let engine = output::resolve_engine(&top.sub("engine")?)?;
        if engine.partitioned && !transport.protocol.runs_partitioned() {
            return Err(SpecError::new(
                "engine.partitioned",
                format!(
                    "true, but transport.protocol = \"{}\" cannot run partitioned ({}); the protocols that can: {}. Set engine.partitioned = false (the default, sequential model)",
                    transport.protocol.name(),
                    transport.protocol.why_not_partitioned(),
                    Protocol::OPTIONS
                        .iter()
                        .filter(|(_, p)| p.runs_partitioned())
                        .map(|(name, _)| *name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        // A partitioned run's far end learns a flow only from its packets, which carry its
        // size but not its deadline or tenant (transport/phost.rs, transport/fastpass.rs,
        // transport/pase.rs).
        let srpt_only = match transport.protocol {
            Protocol::Phost if phost.policy != PhostPolicy::Srpt => Some((
                "phost.policy",
                "pHost",
                phost.policy.name(),
                "a destination learns a flow from its packets, which carry its size, not its deadline or tenant",
            )),
            Protocol::Fastpass if fastpass.policy != FastpassPolicy::Srpt => Some((
                "fastpass.policy",
                "Fastpass",
                fastpass.policy.name(),
                "the arbiter learns a flow from its RTS, which carries its size, not its deadline",
            )),
            Protocol::Pase if pase.order != PaseOrder::Srpt => Some((
                "pase.order",
                "PASE",
                pase.order.name(),
                "the arbitrators away from the source learn a flow from its requests, which carry its bytes left, not its deadline",
            )),
            _ => None,
        };
        if let Some((field, protocol, value, why)) = srpt_only.filter(|_| engine.partitioned) {
            let short = field.rsplit('.').next().unwrap_or(field);
            return Err(SpecError::new(
                field,
                format!(
                    "\"{value}\" with engine.partitioned = true: the partitioned model runs {protocol} with {short} = \"srpt\" only ({why}). Set {field} = \"srpt\" or engine.partitioned = false"
                ),
            ));
        }
        // Delegation resizes a parent link's shares from its racks' demands at once: in the
        // built-in fabrics those racks share a partition (a fat-tree's pod), in a topology file
        // they need not.
        if engine.partitioned
            && transport.protocol == Protocol::Pase
            && pase.delegation
            && topology.kind == TopologyKind::File
        {
            return Err(SpecError::new(
                "pase.delegation",
                "true with engine.partitioned = true and topology.kind = \"file\": delegation resizes a link's shares from the demands of every rack below it at once, and a topology file's racks run in partitions of their own. Set pase.delegation = false or engine.partitioned = false",
            ));
        }
        Ok(Spec {
            seed,
            name,
            topology,
            workload,
            transport,
            dctcp,
            pfabric,
            phost,
            fastpass,
            pias,
            pase,
            homa,
            dcpim,
            l2dct,
            output,
            engine,
        })
    }

    /// Parses and resolves a TOML document.
    pub fn from_toml_str(text: &str) -> Result<Spec, SpecError> {
        Spec::resolve(&parse_toml(text)?)
    }

    /// Parses and resolves a JSON document (what the Python layer hands over).
    pub fn from_json_str(text: &str) -> Result<Spec, SpecError> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| SpecError::new("<json>", e.to_string()))?;
        Spec::resolve(&v)
    }

    /// The resolved spec as TOML, every default filled in.
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).expect("a resolved spec always serializes")
    }

    /// The resolved spec as JSON.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).expect("a resolved spec always serializes")
    }

    /// Loads every file the spec names (CDFs, trace), so a bad file fails before the run.
    fn check_files(&self) -> Result<(), SpecError> {
        let w = &self.workload;
        for (i, sizes) in std::iter::once(&w.flow_sizes).chain(&w.tenants).enumerate() {
            if let Some(Err(e)) = sizes.cdf() {
                let field = if i == 0 {
                    "workload.flow_sizes".to_string()
                } else {
                    format!("workload.tenants[{}]", i - 1)
                };
                return Err(SpecError::new(field, e));
            }
        }
        if let Matrix::Trace(path) = &w.matrix {
            let rows = crate::trace::read_trace(path, self.topology.n_hosts())?.len() as u64;
            if w.flows > rows {
                return Err(SpecError::new(
                    "workload.flows",
                    format!(
                        "{} flows, but {path} has {rows} rows: set at most {rows}, or leave `workload.flows` unset (or 0) to run every row of a trace",
                        w.flows
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(toml: &str) -> SpecError {
        Spec::from_toml_str(toml).unwrap_err()
    }

    #[test]
    fn defaults_are_the_papers_fabric() {
        let s = Spec::from_toml_str("").unwrap();
        assert_eq!(s.topology.n_hosts(), 144);
        assert_eq!(s.topology.core_link_gbps, 40.0);
        assert_eq!(s.workload.load, 0.6);
        assert_eq!(s.transport.protocol, Protocol::Dctcp);
        assert_eq!(s.transport.dupack_threshold, DupAckThreshold::Dynamic(0.75));
        // The resolved spec round-trips through TOML.
        let again = Spec::from_toml_str(&s.to_toml_string()).unwrap();
        assert_eq!(again, s);
        // Also when an explicit core rate implies an oversubscription (PIAS Fig. 18: 3:1).
        let s = Spec::from_toml_str(
            "[topology]\nracks = 3\nhosts_per_rack = 48\nspines = 4\ncore_link_gbps = 40",
        )
        .unwrap();
        assert_eq!(s.topology.oversubscription, 3.0);
        assert_eq!(Spec::from_toml_str(&s.to_toml_string()).unwrap(), s);
    }

    #[test]
    fn pfabric_max_rto_below_its_rto_is_rejected_with_the_field() {
        let e = err("[transport]\nprotocol = \"pfabric\"\n[pfabric]\nrto = \"adaptive\"\nrto_us = 40\nmax_rto_us = 30\n");
        assert_eq!(e.path, "pfabric.max_rto_us");
        assert!(e.message.contains("30 is below `pfabric.rto_us` = 40"), "{}", e.message);
        // A fixed RTO above the (unread) default cap of 2 s is accepted.
        let s = Spec::from_toml_str("[pfabric]\nrto_us = 3000000\n").unwrap();
        assert_eq!(s.pfabric.rto_us, 3_000_000.0);
        let e = err("[pfabric]\nrto = \"backoff\"\n");
        assert_eq!(e.path, "pfabric.rto");
        assert!(
            e.message.contains("\"fixed\"") && e.message.contains("\"adaptive\""),
            "{}",
            e.message
        );
    }

    #[test]
    fn pias_thresholds_resolve_or_are_rejected_with_the_field() {
        let pias = "[transport]\nprotocol = \"pias\"\n";
        // auto: the authors' table at a tabulated load, the closed form elsewhere.
        let s = Spec::from_toml_str(pias).unwrap();
        assert_eq!(s.pias.threshold_method, PiasThresholdMethod::Table);
        assert_eq!(s.pias.thresholds[0], 956 * 1460);
        let s = Spec::from_toml_str(&format!("{pias}[workload]\nload = 0.65\n")).unwrap();
        assert_eq!(s.pias.threshold_method, PiasThresholdMethod::ClosedForm);
        assert_eq!(s.pias.thresholds.len(), 7);
        let e = Spec::from_toml_str(&format!(
            "{pias}[workload]\nload = 0.65\n[pias]\nthreshold_method = \"table\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.path, "pias.threshold_method");
        assert!(e.message.contains("websearch at load 0.65"), "{}", e.message);
        let e = Spec::from_toml_str(&format!("{pias}[pias]\nqueues = 3\nthresholds = [1000]\n"))
            .unwrap_err();
        assert_eq!(e.path, "pias.thresholds");
        // Other protocols need no thresholds, even with a fixed flow size.
        let s = Spec::from_toml_str("[workload]\nflow_sizes = 5000\n").unwrap();
        assert!(s.pias.thresholds.is_empty());
    }

    #[test]
    fn misspelt_keys_get_a_suggestion() {
        let e = err("[workload]\nlaod = 0.5");
        assert_eq!(e.path, "workload.laod");
        assert!(e.message.contains("did you mean `workload.load`"), "{e}");
        let e = err("[topolgy]\nkind = \"star\"");
        assert!(e.message.contains("did you mean `topology`"), "{e}");
        let e = err("[topology]\nkind = \"fat-tre\"");
        assert!(e.message.contains("did you mean \"fat-tree\""), "{e}");
    }

    #[test]
    fn bad_values_name_field_value_and_range() {
        for (toml, path, needle) in [
            ("[workload]\nload = 1.0", "workload.load", "must be > 0 and < 1"),
            ("[workload]\nload = 0", "workload.load", "must be > 0 and < 1"),
            (
                "[workload]\nload = \"high\"",
                "workload.load",
                "must be a number, got a string \"high\"",
            ),
            ("[topology]\nracks = -3", "topology.racks", "non-negative integer"),
            ("[topology]\nkind = \"fat-tree\"\nk = 5", "topology.k", "must be even"),
            ("[topology]\nbuffer_bytes = 100", "topology.buffer_bytes", "cannot hold"),
            (
                "[workload]\nmatrix = \"incast\"\nincast_senders = 144",
                "workload.incast_senders",
                "do not fit",
            ),
            ("[transport]\nprotocol = \"dctpc\"", "transport.protocol", "did you mean \"dctcp\""),
            (
                "[transport]\ndupack_threshold = \"sometimes\"",
                "transport.dupack_threshold",
                "\"dynamic\" or \"off\"",
            ),
        ] {
            let e = err(toml);
            assert_eq!(e.path, path, "{toml}");
            assert!(e.message.contains(needle), "{toml}: {e}");
        }
    }

    /// Issue 15 item 5: only unambiguous byte units; "36kb" (kilobits in networking) is
    /// refused with the units allowed, wherever a byte count is read.
    #[test]
    fn byte_counts_refuse_bit_units() {
        for s in ["36kb", "36Kb", "1mb", "2 gb", "36kbit", "10b"] {
            assert_eq!(parse_bytes(s), None, "{s}");
        }
        assert_eq!(parse_bytes("36kB"), Some(36_000));
        for (toml, path) in [
            ("[topology]\nbuffer_bytes = \"36kb\"", "topology.buffer_bytes"),
            ("[workload]\nflow_sizes = \"100kb\"", "workload.flow_sizes"),
            ("[transport]\nprotocol = \"pfabric\"\n[pfabric]\nqueues = 2\nthresholds = [\"50kb\"]", "pfabric.thresholds"),
        ] {
            let e = err(toml);
            assert_eq!(e.path, path, "{toml}");
            assert!(e.message.contains("reads as bits in networking"), "{e}");
            assert!(e.message.contains("kB or KB (1000 B), MB, GB, KiB (1024 B)"), "{e}");
        }
        let e = err("[topology]\nbuffer_bytes = \"36 KBytes\"");
        assert!(e.message.contains("\"KBytes\" is not a byte unit"), "{e}");
    }

    #[test]
    fn byte_counts_accept_units() {
        assert_eq!(parse_bytes("36KB"), Some(36_000));
        assert_eq!(parse_bytes("1.5 MB"), Some(1_500_000));
        assert_eq!(parse_bytes("64KiB"), Some(65_536));
        assert_eq!(parse_bytes("12"), Some(12));
        assert_eq!(parse_bytes("lots"), None);
        let s = Spec::from_toml_str("[workload]\nflow_sizes = \"100KB\"").unwrap();
        assert_eq!(s.workload.flow_sizes, FlowSizes::Fixed(100_000));
    }
}

#[cfg(test)]
mod round_trip {
    use super::*;

    /// Resolving a resolved spec changes nothing, through JSON (the Python path) and TOML (the
    /// stored `spec.toml`), down to the last bit of every float.
    #[test]
    fn resolution_is_idempotent_through_json_and_toml() {
        for toml in [
            "",
            "[topology]\nspines = 3",
            "[topology]\nspines = 7\nhosts_per_rack = 13\nhost_link_gbps = 3.3",
            "[topology]\ncore_link_gbps = 7.1\n[workload]\nload = 0.123456789012345",
            "[transport]\nprotocol = \"pias\"\n[workload]\nload = 0.65",
            "[transport]\nprotocol = \"pfabric\"\n[pfabric]\nqueues = 4\n[workload]\nload = 0.77",
        ] {
            let s = Spec::from_toml_str(toml).unwrap();
            let via_json = Spec::from_json_str(&s.to_json_string()).unwrap();
            assert_eq!(via_json, s, "{toml}");
            assert_eq!(via_json.to_json_string(), s.to_json_string(), "{toml}");
            let via_toml = Spec::from_toml_str(&s.to_toml_string()).unwrap();
            assert_eq!(via_toml, s, "{toml}");
        }
    }

    /// Every float survives JSON printing and parsing exactly (shortest representation out,
    /// correctly rounded parsing in).
    #[test]
    fn floats_round_trip_exactly_through_json() {
        let mut rng = dcsim_engine::Rng::new(5);
        for _ in 0..20_000 {
            let x = rng.next_f64() * 10f64.powi((rng.next_f64() * 20.0) as i32 - 10);
            let text = serde_json::to_string(&x).unwrap();
            let back: f64 = serde_json::from_str(&text).unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{x} printed as {text} parsed as {back}");
        }
    }
}
