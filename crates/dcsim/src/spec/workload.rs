//! `[workload]`: flow sizes, arrivals and the traffic matrix.

use super::reader::{as_u64, quote_list, show, suggest, type_name, Kind, Section};
use super::topology::TopologySpec;
use crate::cdf::{Cdf, SizeSampling, NAMED_CDFS};
use crate::error::SpecError;
use crate::spec::reader::{byte_count_error, parse_bytes};
use crate::units::MAX_FLOW_BYTES;
use serde::Serialize;
use serde_json::Value;

/// Where flow sizes come from.
#[derive(Debug, Clone, PartialEq)]
pub enum FlowSizes {
    /// A shipped CDF: `websearch`, `datamining` or `imc10`.
    Named(String),
    /// A CDF file (`size_pkts ignored cdf` per line).
    File(String),
    /// Every flow has this many bytes.
    Fixed(u64),
    /// Two sizes, see `workload.bimodal`.
    Bimodal,
    /// Uniform in `[lo, hi]` bytes (PASE SIGCOMM'14 §4.3: `{ uniform = [100000, 500000] }`).
    Uniform(u64, u64),
}

impl Serialize for FlowSizes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            FlowSizes::Named(n) | FlowSizes::File(n) => s.serialize_str(n),
            FlowSizes::Fixed(b) => s.serialize_u64(*b),
            FlowSizes::Bimodal => s.serialize_str("bimodal"),
            FlowSizes::Uniform(lo, hi) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("uniform", &[lo, hi])?;
                m.end()
            }
        }
    }
}

impl FlowSizes {
    /// The CDF of a named or file distribution (`None` for fixed and bimodal sizes).
    pub fn cdf(&self) -> Option<Result<Cdf, String>> {
        match self {
            FlowSizes::Named(n) => Some(crate::cdf::load(n, false)),
            FlowSizes::File(p) => Some(crate::cdf::load(p, true)),
            FlowSizes::Fixed(_) | FlowSizes::Bimodal | FlowSizes::Uniform(..) => None,
        }
    }
}

/// The most long-lived flows a run can have (`workload.long_lived_flows`).
pub const MAX_LONG_LIVED_FLOWS: u32 = 1000;

/// Traffic matrices.
#[derive(Debug, Clone, PartialEq)]
pub enum Matrix {
    /// Every ordered pair is an independent Poisson process.
    AllToAll,
    /// Each host sends to one partner and receives from one.
    Permutation,
    /// Each host sends all its flows to itself: out through its NIC, back down its switch
    /// port, ACKs and other returning packets through the same two ports. The pHost authors'
    /// `PermutationTM` as first committed (NetSys/simulator `run/flow_generator.cpp`: the
    /// loop meant to draw a partner, `while (j != i && ...)` from `j = i`, never runs).
    ToSelf,
    /// Requests: `incast_senders` random senders answer one receiver, splitting the bytes.
    Incast,
    /// Every flow goes to host 0 from a random other host (the PIAS testbed's client fetching
    /// from its servers); the load is on host 0's link.
    FanIn,
    /// Senders in the left half of the racks (pods of a fat-tree; hosts, with one rack) send
    /// to receivers in the right half, so the fabric's core is the bottleneck (PASE
    /// SIGCOMM'14 §4.2, "left-right inter-rack"). The load is on the bottleneck: the narrower
    /// of the senders' links together and the links out of the left half toward the rest of
    /// the fabric (the left racks' uplinks to the spines, the left pods' links to the core, a
    /// dumbbell's middle link), as PASE's Fig. 10a loads the aggregation–core links. Without
    /// oversubscription the two are equal.
    LeftRight,
    /// All-to-all within rack 0: each flow goes to the next host of the rack in round robin
    /// (the aggregator) from a random other host of the rack (PASE SIGCOMM'14 §4.2,
    /// "all-to-all intra-rack"). The load is on each host's link.
    IntraRack,
    /// Flows read from a CSV trace (see [`crate::trace`]).
    Trace(String),
}

impl Serialize for Matrix {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            Matrix::AllToAll => "all-to-all",
            Matrix::Permutation => "permutation",
            Matrix::ToSelf => "self",
            Matrix::Incast => "incast",
            Matrix::FanIn => "fan-in",
            Matrix::LeftRight => "left-right",
            Matrix::IntraRack => "intra-rack",
            Matrix::Trace(p) => p,
        })
    }
}

/// `[workload.bimodal]`: flows of `small_bytes` with probability `p_small`, else `large_bytes`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BimodalSpec {
    /// Default 3 packets (4380 B), as in pHost §4.
    pub small_bytes: u64,
    /// Default 700 packets (1,022,000 B).
    pub large_bytes: u64,
    /// Default 0.5.
    pub p_small: f64,
}

/// `[workload]`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WorkloadSpec {
    /// `websearch` (default), `datamining`, `imc10`, `bimodal`, a CDF file path, or a fixed
    /// size in bytes (an integer or a string such as "100KB").
    pub flow_sizes: FlowSizes,
    /// `interpolate` (default), `interpolate-round` or `step`.
    pub size_sampling: SizeSampling,
    /// Used when `flow_sizes = "bimodal"`.
    pub bimodal: BimodalSpec,
    /// Offered load on each host link (fan-in: host 0's; left-right: the bottleneck's, see
    /// [`Matrix::LeftRight`]), 0 < load < 1. Default 0.6.
    pub load: f64,
    /// Mean flow size used for the arrival rate, bytes; 0 (default) = the exact mean of the
    /// size distribution as sampled. The ns-2 scripts use 1138 × 1460 B for web search.
    pub mean_size_bytes: u64,
    /// `all-to-all` (default), `permutation`, `self`, `incast`, `fan-in`, `left-right`,
    /// `intra-rack`, or a trace CSV path (see [`crate::trace`]; the Python layer also takes
    /// Parquet files and tables, which it writes as CSV).
    pub matrix: Matrix,
    /// One flow-size choice per tenant (same forms as `flow_sizes`, which they replace); flow
    /// k belongs to tenant k mod n. Empty (default): one tenant.
    pub tenants: Vec<FlowSizes>,
    /// Relative share of flows per tenant (same length as `tenants`); each flow then draws its
    /// tenant at random with these weights. Empty (default): tenants take turns.
    pub tenant_weights: Vec<f64>,
    /// `poisson` (default: Poisson arrivals at the load) or `at-start` (every flow starts at
    /// time 0, as in pHost §4.4).
    pub arrivals: Arrivals,
    /// Incast: senders per request. Default 10.
    pub incast_senders: u32,
    /// Partition/aggregate queries on top of the other flows (PIAS §5.1): this many queries,
    /// each host 0 asking `query_fanout` distinct other hosts for `query_bytes`. Default 0.
    pub queries: u64,
    /// Query arrival rate (Poisson), per second. Default 20.
    pub query_rate_per_s: f64,
    /// Servers per query. Default 15.
    pub query_fanout: u32,
    /// Response size per server, bytes. Default 1000.
    pub query_bytes: u64,
    /// Number of flows to generate. Default 20000. For a trace: its first `flows` rows by
    /// start time (at most as many as it has); 0, the default for a trace, runs every row.
    pub flows: u64,
    /// Long-lived background flows: this many flows start at time 0 between pairs drawn from
    /// the matrix and never finish (PASE SIGCOMM'14 §4: "2 long-lived flows"; the testbed's
    /// "one long-lived background flow"). They are not the run's flows: not in the records or
    /// any statistic, and the run ends when the run's flows are done; the summary reports what
    /// they delivered. Default 0, at most [`MAX_LONG_LIVED_FLOWS`].
    pub long_lived_flows: u32,
    /// Stop the run at this simulated time, ms; 0 (default) = run until every flow finishes.
    pub duration_ms: f64,
    /// What ends the run: `all-finished` (default: `flows` flows arrive and the run goes on
    /// until every one has finished) or `n-finished` (arrivals go on past `flows` and the run
    /// ends as soon as `flows` flows have finished; the flows still open then are left out of
    /// the statistics). The pFabric and PIAS authors' ns-2 scripts end as `all-finished` does:
    /// their `tcp-common-opt.tcl` starts no flow once `sim_end` flows have started and stops at
    /// the `sim_end`-th completion, so every flow they start finishes.
    pub stop_when: StopWhen,
    /// Fraction of the first flows (by arrival) left out of the statistics. Default 0.
    pub warmup_fraction: f64,
    /// Give every generated flow a deadline: arrival + max(1.25 × its ideal FCT, X) with X
    /// exponential of this mean, µs (pHost §4.3, citing pFabric: mean 1000 µs). 0 (default):
    /// no deadlines (trace deadlines are used as given).
    pub deadline_mean_us: f64,
}

crate::choice! {
    /// What ends a run (besides `duration_ms`).
    pub enum StopWhen {
        /// Every generated flow has finished.
        AllFinished = "all-finished",
        /// `flows` flows have finished, with arrivals continuing until then.
        NFinished = "n-finished",
    }
}

crate::choice! {
    /// When flows start.
    pub enum Arrivals {
        /// A Poisson process at the rate that gives the load.
        Poisson = "poisson",
        /// All flows at time 0.
        AtStart = "at-start",
    }
}

/// A flow-size choice: a named CDF, "bimodal", a byte count or a CDF file (`field` names it in
/// errors).
fn parse_flow_sizes(v: Option<&Value>, field: String) -> Result<FlowSizes, SpecError> {
    let flow_sizes = match v {
        None => FlowSizes::Named("websearch".into()),
        Some(Value::String(s)) => {
            let lower = s.to_ascii_lowercase();
            if NAMED_CDFS.contains(&lower.as_str()) {
                FlowSizes::Named(lower)
            } else if lower == "bimodal" {
                FlowSizes::Bimodal
            } else if let Some(b) = parse_bytes(s) {
                FlowSizes::Fixed(b)
            } else if std::path::Path::new(s).exists() {
                FlowSizes::File(s.clone())
            } else if s.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
                // A number with a unit that is not a byte unit ("36kb"): say which units are.
                return Err(SpecError::new(field, byte_count_error(s)));
            } else {
                let mut names: Vec<&str> = NAMED_CDFS.to_vec();
                names.push("bimodal");
                let hint = suggest(s, &names)
                    .map(|n| format!(" (did you mean \"{n}\"?)"))
                    .unwrap_or_default();
                return Err(SpecError::new(
                    field.clone(),
                    format!("\"{s}\" is neither one of {}, a byte count, nor an existing CDF file{hint}", quote_list(&names)),
                ));
            }
        }
        Some(Value::Object(m)) => {
            let range = match (m.len(), m.get("uniform")) {
                (1, Some(Value::Array(r))) if r.len() == 2 => {
                    let b = |v: &Value| match v {
                        Value::String(x) => parse_bytes(x),
                        other => as_u64(other),
                    };
                    b(&r[0]).zip(b(&r[1]))
                }
                _ => None,
            };
            match range {
                Some((lo, hi)) if 1 <= lo && lo <= hi && hi <= MAX_FLOW_BYTES => {
                    FlowSizes::Uniform(lo, hi)
                }
                _ => {
                    return Err(SpecError::new(
                        field,
                        format!(
                            "{} is not a size range: write {{ uniform = [lo, hi] }} with 1 <= lo <= hi <= {MAX_FLOW_BYTES} bytes",
                            show(&Value::Object(m.clone()))
                        ),
                    ))
                }
            }
        }
        Some(v) => match as_u64(v) {
            Some(b) => FlowSizes::Fixed(b),
            None => {
                return Err(SpecError::new(
                    field.clone(),
                    format!(
                        "must be a workload name, a CDF path, a byte count or {{ uniform = [lo, hi] }}, got {} {}",
                        type_name(v),
                        show(v)
                    ),
                ))
            }
        },
    };
    if flow_sizes == FlowSizes::Fixed(0) {
        return Err(SpecError::new(field.clone(), "a fixed flow size must be at least 1 byte"));
    }
    if let FlowSizes::Fixed(b) = flow_sizes {
        if b > MAX_FLOW_BYTES {
            return Err(SpecError::new(
                field,
                format!(
                    "{b} bytes is above the largest flow dcsim simulates, {MAX_FLOW_BYTES} (1 TB)"
                ),
            ));
        }
    }
    Ok(flow_sizes)
}

/// Resolves `[workload]` for `topo`.
pub fn resolve(w: &Section<'_>, topo: &TopologySpec) -> Result<WorkloadSpec, SpecError> {
    const SIZES: &[&str] = &["string", "integer", "object"];
    const SIZES_NOTE: &str = "\"websearch\", \"datamining\", \"imc10\", \"bimodal\", a CDF file path, a byte count, or { uniform = [lo, hi] }";
    w.declare("flow_sizes", Kind::Custom { types: SIZES, note: SIZES_NOTE }, "websearch".into());
    w.declare(
        "tenants",
        Kind::Custom { types: &["array"], note: "one flow-size choice per tenant" },
        Value::Array(Vec::new()),
    );
    w.declare(
        "tenant_weights",
        Kind::Custom { types: &["array"], note: "one positive weight per tenant" },
        Value::Array(Vec::new()),
    );
    w.declare(
        "matrix",
        Kind::Custom {
            types: &["string"],
            note: "\"all-to-all\", \"permutation\", \"self\", \"incast\", \"fan-in\", \"left-right\", \"intra-rack\", or a trace file path (CSV; Parquet through the Python package)",
        },
        "all-to-all".into(),
    );
    let flow_sizes = parse_flow_sizes(w.raw("flow_sizes"), w.field("flow_sizes"))?;
    let tenants = match w.raw("tenants") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| parse_flow_sizes(Some(v), format!("{}[{i}]", w.field("tenants"))))
            .collect::<Result<Vec<_>, _>>()?,
        Some(v) => {
            return Err(SpecError::new(
                w.field("tenants"),
                format!(
                    "must be a list of flow sizes (one per tenant), got {} {}",
                    type_name(v),
                    show(v)
                ),
            ))
        }
    };
    let tenant_weights: Vec<f64> = match w.raw("tenant_weights") {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                match v.as_f64() {
                    Some(x) if x > 0.0 && x.is_finite() => out.push(x),
                    _ => {
                        return Err(SpecError::new(
                            format!("{}[{i}]", w.field("tenant_weights")),
                            format!("{} is not a positive number", show(v)),
                        ))
                    }
                }
            }
            out
        }
        Some(v) => {
            return Err(SpecError::new(
                w.field("tenant_weights"),
                format!("must be a list of positive numbers, got {} {}", type_name(v), show(v)),
            ))
        }
    };
    if !tenant_weights.is_empty() && tenant_weights.len() != tenants.len() {
        return Err(SpecError::new(
            w.field("tenant_weights"),
            format!(
                "{} weights for {} tenants: give one weight per entry of `workload.tenants`",
                tenant_weights.len(),
                tenants.len()
            ),
        ));
    }
    let arrivals = w.choice("arrivals", Arrivals::Poisson)?;
    let b = w.sub("bimodal")?;
    let bimodal = BimodalSpec {
        small_bytes: b.bytes_in("small_bytes", 3 * 1460, 1, MAX_FLOW_BYTES)?,
        large_bytes: b.bytes_in("large_bytes", 700 * 1460, 1, MAX_FLOW_BYTES)?,
        p_small: b.f64_in("p_small", 0.5, 0.0, 1.0, "must be a probability between 0 and 1")?,
    };
    let load = w.f64_between("load", 0.6, 0.0, 1.0, "load must be > 0 and < 1")?;
    let matrix = match w.string_value("matrix")? {
        None => Matrix::AllToAll,
        Some(s) => match s.to_ascii_lowercase().as_str() {
            "all-to-all" => Matrix::AllToAll,
            "permutation" => Matrix::Permutation,
            "self" => Matrix::ToSelf,
            "incast" => Matrix::Incast,
            "fan-in" => Matrix::FanIn,
            "left-right" => Matrix::LeftRight,
            "intra-rack" => Matrix::IntraRack,
            _ if s.ends_with(".csv")
                || s.ends_with(".parquet")
                || std::path::Path::new(s).exists() =>
            {
                Matrix::Trace(s.to_string())
            }
            _ => {
                let names = [
                    "all-to-all",
                    "permutation",
                    "self",
                    "incast",
                    "fan-in",
                    "left-right",
                    "intra-rack",
                ];
                let hint = suggest(s, &names)
                    .map(|n| format!(" (did you mean \"{n}\"?)"))
                    .unwrap_or_default();
                return Err(SpecError::new(
                    w.field("matrix"),
                    format!(
                        "\"{s}\" is not one of {} nor a trace file (a .csv or .parquet path){hint}",
                        quote_list(&names)
                    ),
                ));
            }
        },
    };
    let incast_senders = w.u32_in("incast_senders", 10, 1, 1_000_000)?;
    if matrix == Matrix::Incast && incast_senders >= topo.n_hosts() {
        return Err(SpecError::new(
            w.field("incast_senders"),
            format!(
                "{incast_senders} senders do not fit: the topology has {} hosts, so at most {}",
                topo.n_hosts(),
                topo.n_hosts() - 1
            ),
        ));
    }
    let queries = w.u64_in("queries", 0, 0, 1_000_000_000)?;
    let query_fanout = w.u32_in("query_fanout", 15, 1, 1_000_000)?;
    if queries > 0 && query_fanout >= topo.n_hosts() {
        return Err(SpecError::new(
            w.field("query_fanout"),
            format!(
                "{query_fanout} servers do not fit: host 0 can ask at most the {} other hosts",
                topo.n_hosts() - 1
            ),
        ));
    }
    // A trace runs every row unless `flows` is set: a default must never cut a trace short.
    let is_trace = matches!(matrix, Matrix::Trace(_));
    let flows = w.u64_in("flows", if is_trace { 0 } else { 20_000 }, 0, 1_000_000_000)?;
    if flows == 0 && !is_trace {
        return Err(SpecError::new(
            w.field("flows"),
            "0 flows: give at least 1 (0 means \"all rows\" only for a trace)",
        ));
    }
    let long_lived_flows = w.u32_in("long_lived_flows", 0, 0, MAX_LONG_LIVED_FLOWS)?;
    if long_lived_flows > 0 && matches!(matrix, Matrix::Trace(_)) {
        return Err(SpecError::new(
            w.field("long_lived_flows"),
            format!(
                "{long_lived_flows} long-lived flows need a matrix to draw their hosts from, and a trace lists its flows: use 0, or a matrix such as \"all-to-all\""
            ),
        ));
    }
    let stop_when = w.choice("stop_when", StopWhen::AllFinished)?;
    if stop_when == StopWhen::NFinished {
        // Arrivals must go on past `flows`: a trace ends, and "at-start" would put an
        // unbounded number of flows at time 0.
        let why = match (&matrix, arrivals) {
            (Matrix::Trace(_), _) => Some("a trace has a fixed set of flows"),
            (_, Arrivals::AtStart) => {
                Some("with arrivals = \"at-start\" every flow starts at time 0")
            }
            _ => None,
        };
        if let Some(why) = why {
            return Err(SpecError::new(
                w.field("stop_when"),
                format!(
                    "\"n-finished\" needs arrivals that go on past `flows`, and {why}; use \"all-finished\""
                ),
            ));
        }
    }
    // The Homa paper's workloads are steps: its authors' simulator draws rows only.
    let step_by_default = matches!(&flow_sizes, FlowSizes::Named(n) if crate::cdf::is_homa_workload(n))
        && tenants.is_empty();
    let size_sampling = w.choice(
        "size_sampling",
        if step_by_default { SizeSampling::Step } else { SizeSampling::Interpolate },
    )?;
    Ok(WorkloadSpec {
        flow_sizes,
        size_sampling,
        bimodal,
        load,
        mean_size_bytes: w.bytes_in("mean_size_bytes", 0, 0, MAX_FLOW_BYTES)?,
        matrix,
        tenants,
        tenant_weights,
        arrivals,
        incast_senders,
        queries,
        query_rate_per_s: w.f64_in(
            "query_rate_per_s",
            20.0,
            1e-6,
            1e12,
            "must be a positive rate (queries per second)",
        )?,
        query_fanout,
        query_bytes: w.bytes_in("query_bytes", 1000, 1, MAX_FLOW_BYTES)?,
        flows,
        long_lived_flows,
        duration_ms: w.f64_in("duration_ms", 0.0, 0.0, 1e9, "must be >= 0 (0 = no limit)")?,
        stop_when,
        warmup_fraction: w.f64_in("warmup_fraction", 0.0, 0.0, 0.99, "must be in [0, 0.99]")?,
        deadline_mean_us: w.f64_in(
            "deadline_mean_us",
            0.0,
            0.0,
            1e12,
            "must be >= 0 (0 = no deadlines)",
        )?,
    })
}
