//! `[output]` and `[engine]`: what a run records, and implementation choices with no effect
//! on the modelled network.

use super::reader::Section;
use crate::error::SpecError;
use serde::Serialize;

/// `[output]`: optional recordings.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OutputSpec {
    /// Sample arrived / injected packets and finished flows every this many µs of simulated
    /// time into the summary's `timeseries`; 0 (default) = off.
    pub timeseries_us: f64,
}

/// `[engine]`: implementation choices with no effect on the modelled network.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EngineSpec {
    /// FIFO ports compute each packet's departure at enqueue (no transmit-complete events).
    /// `false` runs them through the generic event-driven port path instead: the same model,
    /// slower; kept as a cross-check. Default true.
    pub fifo_timeline: bool,
}

/// Resolves `[output]`.
pub fn resolve_output(o: &Section<'_>) -> Result<OutputSpec, SpecError> {
    Ok(OutputSpec {
        timeseries_us: o.f64_in("timeseries_us", 0.0, 0.0, 1e12, "must be >= 0 µs (0 = off)")?,
    })
}

/// Resolves `[engine]`.
pub fn resolve_engine(e: &Section<'_>) -> Result<EngineSpec, SpecError> {
    Ok(EngineSpec { fifo_timeline: e.bool("fifo_timeline", true)? })
}
