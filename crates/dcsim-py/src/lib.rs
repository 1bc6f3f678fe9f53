//! `dcsim._dcsim`: the thin PyO3 layer between the Python package and the Rust core.
//!
//! Everything crosses the boundary as plain data: specs as JSON text (Python builds them
//! from TOML and overrides), summaries as JSON text, per-flow columns as raw little-endian
//! bytes that Python views with `numpy.frombuffer` (no per-row conversion).

use dcsim::metrics::{FlowRecords, PacketTrace, PortDescription, PortSamples, Timeseries};
use dcsim::RunOutput;
use dcsim::{RunError, Simulation, Spec, SpecError};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

create_exception!(
    _dcsim,
    InvalidSpec,
    PyValueError,
    "A spec the simulator cannot run; the message names the field."
);

create_exception!(
    _dcsim,
    CheckpointError,
    pyo3::exceptions::PyRuntimeError,
    "A checkpoint that cannot be written or read, or that belongs to another spec or build."
);

/// Every error the core hands to Python, converted in one place: a bad spec or argument is
/// `InvalidSpec(message, field, detail)`, an interrupted run `KeyboardInterrupt`.
#[derive(Debug)]
enum CoreError {
    Spec(SpecError),
    Run(RunError),
}

impl From<SpecError> for CoreError {
    fn from(e: SpecError) -> Self {
        CoreError::Spec(e)
    }
}

impl From<RunError> for CoreError {
    fn from(e: RunError) -> Self {
        match e {
            RunError::Spec(e) => CoreError::Spec(e),
            e => CoreError::Run(e),
        }
    }
}

impl From<CoreError> for PyErr {
    fn from(e: CoreError) -> PyErr {
        match e {
            CoreError::Spec(e) => InvalidSpec::new_err((e.to_string(), e.path.clone(), e.message)),
            CoreError::Run(RunError::Interrupted(t)) => {
                pyo3::exceptions::PyKeyboardInterrupt::new_err(format!(
                    "run interrupted at simulated time {t}"
                ))
            }
            CoreError::Run(e @ RunError::Checkpoint(_)) => CheckpointError::new_err(e.to_string()),
            CoreError::Run(e) => pyo3::exceptions::PyRuntimeError::new_err(e.to_string()),
        }
    }
}

/// An argument error, raised as `InvalidSpec` naming the argument.
fn bad_arg(name: &str, message: String) -> PyErr {
    CoreError::Spec(SpecError::new(name, message)).into()
}

/// Resolves a spec given as JSON text. Returns `(resolved_toml, resolved_json)`.
#[pyfunction]
fn resolve_spec(spec_json: &str) -> PyResult<(String, String)> {
    let spec = Spec::from_json_str(spec_json).map_err(CoreError::from)?;
    Ok((spec.to_toml_string(), spec.to_json_string()))
}

/// `(field, value, reason)` triples for Python.
type UnusedList = Vec<(String, String, String)>;

fn unused_list(list: Vec<dcsim::spec::Unused>) -> UnusedList {
    list.into_iter().map(|u| (u.field, u.value, u.reason)).collect()
}

/// Resolves a spec given as JSON text and says what it sets without effect. Returns
/// `(resolved_toml, resolved_json, unused_fields, unused_sections)`: the fields the spec sets
/// that the run does not read, and the tables that do not apply to the run, each as
/// `(field, value as written, reason)` (a table's value is empty).
#[pyfunction]
fn resolve_spec_with_unused(spec_json: &str) -> PyResult<(String, String, UnusedList, UnusedList)> {
    let tree: serde_json::Value = serde_json::from_str(spec_json)
        .map_err(|e| CoreError::Spec(SpecError::new("<json>", e.to_string())))?;
    let spec = Spec::resolve(&tree).map_err(CoreError::from)?;
    Ok((
        spec.to_toml_string(),
        spec.to_json_string(),
        unused_list(spec.unused_fields(&tree)),
        unused_list(spec.unused_sections()),
    ))
}

fn column<'py, T: Copy>(
    py: Python<'py>,
    v: &[T],
    to_le: impl Fn(T) -> Vec<u8>,
) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(v));
    for &x in v {
        out.extend_from_slice(&to_le(x));
    }
    PyBytes::new(py, &out)
}

fn columns<'py>(py: Python<'py>, r: &FlowRecords) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let u64s: [(&str, &Vec<u64>); 6] = [
        ("id", &r.id),
        ("size_bytes", &r.size_bytes),
        ("start_ps", &r.start_ps),
        ("finish_ps", &r.finish_ps),
        ("ideal_ps", &r.ideal_ps),
        ("deadline_ps", &r.deadline_ps),
    ];
    for (name, v) in u64s {
        d.set_item(name, ("<u8", column(py, v, |x: u64| x.to_le_bytes().to_vec())))?;
    }
    let u32s: [(&str, &Vec<u32>); 7] = [
        ("src", &r.src),
        ("dst", &r.dst),
        ("retransmits", &r.retransmits),
        ("timeouts", &r.timeouts),
        ("packets_sent", &r.packets_sent),
        ("tenant", &r.tenant),
        ("request", &r.request),
    ];
    for (name, v) in u32s {
        d.set_item(name, ("<u4", column(py, v, |x: u32| x.to_le_bytes().to_vec())))?;
    }
    Ok(d)
}

/// Adds column `name` of little-endian `u64`s to `d`.
fn put_u64(py: Python<'_>, d: &Bound<'_, PyDict>, name: &str, v: &[u64]) -> PyResult<()> {
    d.set_item(name, ("<u8", column(py, v, |x: u64| x.to_le_bytes().to_vec())))
}

/// Adds column `name` of little-endian `u32`s to `d`.
fn put_u32(py: Python<'_>, d: &Bound<'_, PyDict>, name: &str, v: &[u32]) -> PyResult<()> {
    d.set_item(name, ("<u4", column(py, v, |x: u32| x.to_le_bytes().to_vec())))
}

fn timeseries_columns<'py>(py: Python<'py>, t: &Timeseries) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("t_us", ("<f8", column(py, &t.t_us, |x: f64| x.to_le_bytes().to_vec())))?;
    put_u64(py, &d, "arrived_packets", &t.arrived_packets)?;
    put_u64(py, &d, "injected_packets", &t.injected_packets)?;
    put_u64(py, &d, "flows_done", &t.flows_done)?;
    Ok(d)
}

fn port_columns<'py>(py: Python<'py>, s: &PortSamples) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    put_u64(py, &d, "time_ps", &s.time_ps)?;
    put_u32(py, &d, "port", &s.port)?;
    put_u64(py, &d, "queue_bytes", &s.queue_bytes)?;
    put_u32(py, &d, "queue_packets", &s.queue_packets)?;
    put_u64(py, &d, "tx_bytes", &s.tx_bytes)?;
    put_u64(py, &d, "dropped_packets", &s.dropped_packets)?;
    put_u64(py, &d, "marked_packets", &s.marked_packets)?;
    Ok(d)
}

fn packet_columns<'py>(py: Python<'py>, t: &PacketTrace) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    put_u64(py, &d, "time_ps", &t.time_ps)?;
    put_u64(py, &d, "packet", &t.packet)?;
    put_u32(py, &d, "flow", &t.flow)?;
    put_u32(py, &d, "seq", &t.seq)?;
    d.set_item("kind", ("<u1", PyBytes::new(py, &t.kind)))?;
    put_u32(py, &d, "size_bytes", &t.size_bytes)?;
    d.set_item("event", ("<u1", PyBytes::new(py, &t.event)))?;
    put_u32(py, &d, "node", &t.node)?;
    put_u32(py, &d, "port", &t.port)?;
    Ok(d)
}

/// The network's ports, one row each: what the port samples' and the packet trace's `port`
/// ids stand for (`hop`: the index in `HopKind::ALL`).
fn port_info_columns<'py>(
    py: Python<'py>,
    ports: &[PortDescription],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    put_u32(py, &d, "port", &(0..ports.len() as u32).collect::<Vec<_>>())?;
    put_u32(py, &d, "node", &ports.iter().map(|p| p.node).collect::<Vec<_>>())?;
    put_u32(py, &d, "peer", &ports.iter().map(|p| p.peer).collect::<Vec<_>>())?;
    put_u64(py, &d, "rate_bps", &ports.iter().map(|p| p.rate.0).collect::<Vec<_>>())?;
    let hops: Vec<u8> = ports
        .iter()
        .map(|p| {
            dcsim::queue::HopKind::ALL.iter().position(|h| *h == p.hop).expect("a hop kind") as u8
        })
        .collect();
    d.set_item("hop", ("<u1", PyBytes::new(py, &hops)))?;
    Ok(d)
}

/// The recordings a run made beyond its flow table, by file name (`timeseries`, `ports`,
/// `packets`, and `port_info` describing the ports when either of the last two is there).
fn recordings<'py>(py: Python<'py>, out: &RunOutput, spec: &Spec) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    if spec.output.timeseries_us > 0.0 {
        d.set_item("timeseries", timeseries_columns(py, &out.timeseries)?)?;
    }
    if let Some(s) = &out.ports {
        d.set_item("ports", port_columns(py, s)?)?;
    }
    if let Some(t) = &out.packets {
        d.set_item("packets", packet_columns(py, t)?)?;
    }
    if !out.port_descriptions.is_empty() {
        d.set_item("port_info", port_info_columns(py, &out.port_descriptions)?)?;
    }
    Ok(d)
}

/// Runs a spec given as JSON text.
///
/// `progress`, if given, is called about five times a second with a dict (`sim_time_us`,
/// `flows_done`, `flows_started`, `flows_total`, `packets_arrived`, `packets_injected`,
/// `events`, `wall_seconds`); if it returns `False` the run stops with `KeyboardInterrupt`.
/// Signals (Ctrl-C) are checked at the same points.
///
/// `threads` runs a partitioned run's partitions (`engine.partitioned`) on that many threads
/// (default 1); the results are the same for every count. A sequential run uses one.
///
/// Returns `(summary_json, columns, recordings)` where `columns` maps a flow column's name to
/// `(numpy dtype string, bytes)` and `recordings` maps a recording's name (`timeseries`,
/// `ports`, `packets`, `port_info`) to its columns in the same form.
#[pyfunction]
#[pyo3(signature = (spec_json, progress=None, threads=1, checkpoint=None, checkpoint_every_s=600.0))]
fn run_spec<'py>(
    py: Python<'py>,
    spec_json: &str,
    progress: Option<Py<PyAny>>,
    threads: usize,
    checkpoint: Option<std::path::PathBuf>,
    checkpoint_every_s: f64,
) -> PyResult<(String, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    if threads == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err("threads = 0: give at least 1"));
    }
    if !(checkpoint_every_s.is_finite() && checkpoint_every_s >= 0.0) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "checkpoint_every_s = {checkpoint_every_s}: give a number of seconds, 0 or more"
        )));
    }
    let spec = Spec::from_json_str(spec_json).map_err(CoreError::from)?;
    let mut sim = Simulation::new(spec.clone()).map_err(CoreError::from)?.with_threads(threads);
    if let Some(path) = checkpoint {
        sim = sim.with_checkpoints(path, std::time::Duration::from_secs_f64(checkpoint_every_s));
    }
    let mut pending: Option<PyErr> = None;
    let result = py.detach(|| {
        sim.run(&mut |p| {
            Python::attach(|py| {
                if let Err(e) = py.check_signals() {
                    pending = Some(e);
                    return false;
                }
                let Some(cb) = &progress else { return true };
                let d = PyDict::new(py);
                let ok = (|| -> PyResult<bool> {
                    d.set_item("sim_time_us", p.sim_time.as_us_f64())?;
                    d.set_item("flows_done", p.flows_done)?;
                    d.set_item("flows_started", p.flows_started)?;
                    d.set_item("packets_arrived", p.packets_arrived)?;
                    d.set_item("packets_injected", p.packets_injected)?;
                    d.set_item("flows_total", p.flows_total)?;
                    d.set_item("events", p.events)?;
                    d.set_item("wall_seconds", p.wall_seconds)?;
                    let r = cb.call1(py, (d,))?;
                    Ok(r.is_none(py) || r.is_truthy(py)?)
                })();
                match ok {
                    Ok(keep_going) => keep_going,
                    Err(e) => {
                        pending = Some(e);
                        false
                    }
                }
            })
        })
    });
    match result {
        Ok(out) => {
            let summary = serde_json::to_string(&out.summary).expect("summary serializes");
            Ok((summary, columns(py, &out.records)?, recordings(py, &out, &spec)?))
        }
        // A callback's own exception (or Ctrl-C) takes precedence over the interruption.
        Err(e) => Err(pending.unwrap_or_else(|| CoreError::from(e).into())),
    }
}

fn size_dist(workload: &str) -> PyResult<dcsim::thresholds::SizeDist> {
    let is_file = dcsim::cdf::named_cdf(workload).is_none();
    let cdf = dcsim::cdf::load(workload, is_file).map_err(|e| {
        bad_arg("workload", format!("\"{workload}\" is neither websearch, datamining, imc10 nor a readable CDF file: {e}"))
    })?;
    Ok(dcsim::thresholds::SizeDist::from_cdf(&cdf))
}

/// The model's fixed latency must be a finite number of bytes ≥ 0.
fn check_base_bytes(base_bytes: f64) -> PyResult<()> {
    if base_bytes >= 0.0 && base_bytes.is_finite() {
        return Ok(());
    }
    Err(bad_arg("base_bytes", format!("{base_bytes} must be a finite number >= 0")))
}

/// A load must be in (0, 1).
fn check_load(load: f64) -> PyResult<()> {
    if load > 0.0 && load < 1.0 {
        return Ok(());
    }
    Err(bad_arg("load", format!("{load} must be > 0 and < 1")))
}

/// A queue count must be in 1..=64.
fn check_queues(queues: usize) -> PyResult<()> {
    if (1..=64).contains(&queues) {
        return Ok(());
    }
    Err(bad_arg("queues", format!("{queues} must be between 1 and 64")))
}

/// Few-queue thresholds (bytes) for `queues` queues: `method` is "mg1" (the SIGCOMM'13 §6.1
/// M/G/1 model, optimised for `load`), "equal-split", "pias" (PIAS §3.3 closed form) or
/// "pias-table" (the PIAS authors' script values; web search and data mining, 8 queues,
/// loads 0.5-0.9). `base_bytes` (mg1 only): a fixed latency, in bytes at link rate, added to
/// every flow's FCT and ideal FCT in the model (0: the paper's formula).
#[pyfunction]
#[pyo3(signature = (workload, load, queues, method, base_bytes = 0.0))]
fn thresholds(
    workload: &str,
    load: f64,
    queues: usize,
    method: &str,
    base_bytes: f64,
) -> PyResult<Vec<f64>> {
    check_base_bytes(base_bytes)?;
    check_load(load)?;
    check_queues(queues)?;
    if method == "pias-table" {
        let t = dcsim::thresholds::pias_table_pkts(workload, load).filter(|_| queues == 8);
        return t
            .map(|t| t.iter().map(|&p| (p * dcsim::units::MSS_BYTES as u64) as f64).collect())
            .ok_or_else(|| {
                bad_arg("method", format!("the PIAS authors' table covers 8 queues for websearch and datamining at loads 0.5-0.9, not {queues} queues, {workload} at {load}"))
            });
    }
    let d = size_dist(workload)?;
    match method {
        "mg1" => Ok(dcsim::thresholds::optimise(&d, load, base_bytes, queues)),
        "equal-split" => Ok(dcsim::thresholds::equal_split(&d, queues)),
        "pias" => Ok(dcsim::thresholds::pias_closed_form(&d, load, queues)),
        other => Err(bad_arg(
            "method",
            format!("\"{other}\" is not one of \"mg1\", \"equal-split\", \"pias\", \"pias-table\""),
        )),
    }
}

/// PIAS §3.3: the share of flows each of `queues` MLFQ levels serves at `load` (sums to 1).
#[pyfunction]
fn pias_shares(load: f64, queues: usize) -> PyResult<Vec<f64>> {
    check_load(load)?;
    check_queues(queues)?;
    Ok(dcsim::thresholds::pias_shares(load, queues))
}

/// The M/G/1 model's mean normalized FCT for `thresholds` (bytes, increasing) at `load`, with
/// a fixed latency of `base_bytes` in every flow's FCT and ideal FCT (0: the paper's formula).
#[pyfunction]
#[pyo3(signature = (workload, load, thresholds, base_bytes = 0.0))]
fn threshold_fctn(
    workload: &str,
    load: f64,
    thresholds: Vec<f64>,
    base_bytes: f64,
) -> PyResult<f64> {
    check_base_bytes(base_bytes)?;
    check_load(load)?;
    if thresholds.iter().any(|t| !t.is_finite()) || !thresholds.windows(2).all(|w| w[0] < w[1]) {
        return Err(bad_arg("thresholds", format!("{thresholds:?} must be finite and increasing")));
    }
    Ok(dcsim::thresholds::fctn(&size_dist(workload)?, load, base_bytes, &thresholds))
}

/// The JSON Schema of a run spec (draft 2020-12), generated from the resolver's fields.
#[pyfunction]
fn spec_schema() -> String {
    serde_json::to_string_pretty(&dcsim::spec::schema::json_schema()).expect("a schema serializes")
}

/// The dcsim core version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Names of the shipped flow-size distributions.
#[pyfunction]
fn named_workloads() -> Vec<&'static str> {
    dcsim::cdf::NAMED_CDFS.to_vec()
}

/// The Python module.
#[pymodule]
fn _dcsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(resolve_spec, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_spec_with_unused, m)?)?;
    m.add_function(wrap_pyfunction!(run_spec, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(spec_schema, m)?)?;
    m.add_function(wrap_pyfunction!(named_workloads, m)?)?;
    m.add_function(wrap_pyfunction!(thresholds, m)?)?;
    m.add_function(wrap_pyfunction!(pias_shares, m)?)?;
    m.add_function(wrap_pyfunction!(threshold_fctn, m)?)?;
    m.add("InvalidSpec", m.py().get_type::<InvalidSpec>())?;
    m.add("CheckpointError", m.py().get_type::<CheckpointError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("build_profile", if cfg!(debug_assertions) { "debug" } else { "release" })?;
    Ok(())
}
