//! `[output]` and `[engine]`: what a run records, and implementation choices with no effect
//! on the modelled network.

use super::reader::Section;
use crate::error::SpecError;
use serde::Serialize;

/// `[output]`: optional recordings, each written to its own Parquet file.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OutputSpec {
    /// Sample arrived / injected packets and finished flows every this many µs of simulated
    /// time into `timeseries.parquet`; 0 (default) = off.
    pub timeseries_us: f64,
    /// Sample every port's queue and the bytes its link carried every this many µs of
    /// simulated time into `ports.parquet`; 0 (default) = off.
    pub ports_sample_us: f64,
    /// The most rows `ports.parquet` may hold (one per port per sample). A run whose expected
    /// rows exceed it is refused before it starts; one that reaches it stops sampling and says
    /// so. Default 5,000,000.
    pub ports_max_rows: u64,
    /// Record every packet's hop events (enqueue, dequeue, drop, deliver) into
    /// `packets.parquet`. Default false.
    pub packet_trace: bool,
    /// The most rows `packets.parquet` may hold. A run expected to exceed it is refused before
    /// it starts; one that reaches it stops tracing and says so. Default 1,000,000.
    pub packet_trace_max_rows: u64,
}

/// The largest row limit a recording may be given (rows are held in memory until the end).
const MAX_ROWS: u64 = 1_000_000_000;

/// `[engine]`: how the run is executed. `fifo_timeline` has no effect on the modelled
/// network; `partitioned` chooses the partitioned model, which does.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EngineSpec {
    /// FIFO ports compute each packet's departure at enqueue (no transmit-complete events).
    /// `false` runs them through the generic event-driven port path instead: the same model,
    /// slower; kept as a cross-check. Default true.
    pub fifo_timeline: bool,
    /// The partitioned model (docs/parallel.md): the fabric is split into partitions that can
    /// run on several threads (`--threads`) with results byte-identical for every thread
    /// count, at the price of a slightly different model (per-switch and per-port random
    /// streams, the partitions' order of simultaneous events, SACK learned from ACKs, separate
    /// tables at pHost's, Fastpass's and Homa's ends). Only
    /// the protocols whose ends talk through packets alone support it
    /// ([`crate::spec::Protocol::runs_partitioned`]). Default false: the sequential model.
    pub partitioned: bool,
}

/// Resolves `[output]`.
pub fn resolve_output(o: &Section<'_>) -> Result<OutputSpec, SpecError> {
    Ok(OutputSpec {
        timeseries_us: o.f64_in("timeseries_us", 0.0, 0.0, 1e12, "must be >= 0 µs (0 = off)")?,
        ports_sample_us: o.f64_in(
            "ports_sample_us",
            0.0,
            0.0,
            1e12,
            "must be >= 0 µs (0 = off)",
        )?,
        ports_max_rows: o.u64_in("ports_max_rows", 5_000_000, 1, MAX_ROWS)?,
        packet_trace: o.bool("packet_trace", false)?,
        packet_trace_max_rows: o.u64_in("packet_trace_max_rows", 1_000_000, 1, MAX_ROWS)?,
    })
}

/// Resolves `[engine]`.
pub fn resolve_engine(e: &Section<'_>) -> Result<EngineSpec, SpecError> {
    Ok(EngineSpec {
        fifo_timeline: e.bool("fifo_timeline", true)?,
        partitioned: e.bool("partitioned", false)?,
    })
}
