//! `[dctcp]`: DCTCP's settings, also used by the protocols built on DCTCP.

use super::reader::Section;
use crate::error::SpecError;
use serde::Serialize;

/// `[dctcp]` (DCTCP SIGCOMM'10 §3; the pFabric evaluation's settings, SIGCOMM'13 §5).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DctcpSpec {
    /// EWMA gain for α. Default 1/16.
    pub g: f64,
    /// Marking threshold K, bytes of instantaneous queue. Default 22500 (15 packets, the
    /// pFabric evaluation).
    pub marking_threshold_bytes: u64,
    /// α before the first update. Default 1 (a new flow assumes congestion, as Linux does).
    pub initial_alpha: f64,
}

/// Resolves `[dctcp]`.
pub fn resolve(d: &Section<'_>) -> Result<DctcpSpec, SpecError> {
    Ok(DctcpSpec {
        g: d.f64_in("g", 1.0 / 16.0, 0.0, 1.0, "must be between 0 and 1")?,
        marking_threshold_bytes: d.bytes("marking_threshold_bytes", 22_500)?,
        initial_alpha: d.f64_in("initial_alpha", 1.0, 0.0, 1.0, "must be between 0 and 1")?,
    })
}
