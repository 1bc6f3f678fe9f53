//! Values derived during resolution that several sections share: few-queue thresholds given
//! or computed for the workload (pFabric SIGCOMM'13 §6.1, PIAS NSDI'15 §3.3).

use super::reader::Section;
use super::workload::WorkloadSpec;
use crate::cdf::Cdf;
use crate::error::SpecError;

/// Thresholds for `queues` queues in `s.thresholds`: as given (checked: `queues − 1` of them,
/// increasing), or computed by `compute` and rounded to whole, strictly increasing bytes. An
/// empty list (what a resolved spec shows when none apply) counts as not given.
pub fn given_or_computed(
    s: &Section<'_>,
    given: Option<Vec<u64>>,
    queues: usize,
    compute: impl FnOnce() -> Result<Vec<f64>, SpecError>,
) -> Result<Vec<u64>, SpecError> {
    let field = s.field("thresholds");
    if let Some(given) = given.filter(|v| !v.is_empty()) {
        if given.len() != queues - 1 {
            return Err(SpecError::new(
                &field,
                format!(
                    "{} thresholds given for {queues} queues; give {}",
                    given.len(),
                    queues - 1
                ),
            ));
        }
        if !given.windows(2).all(|w| w[0] < w[1]) {
            return Err(SpecError::new(&field, format!("{given:?} must increase")));
        }
        return Ok(given);
    }
    if queues <= 1 {
        return Ok(Vec::new());
    }
    Ok(increasing_bytes(&compute()?))
}

/// The workload's flow-size CDF, which computing thresholds needs (an error naming `s`'s
/// `thresholds` field otherwise).
pub fn cdf_of_workload(s: &Section<'_>, w: &WorkloadSpec) -> Result<Cdf, SpecError> {
    match w.flow_sizes.cdf() {
        Some(cdf) => cdf.map_err(|e| SpecError::new("workload.flow_sizes", e)),
        None => Err(SpecError::new(
            s.field("thresholds"),
            format!(
                "computing thresholds needs a flow-size CDF (`workload.flow_sizes` = a CDF); give `{}` instead",
                s.field("thresholds")
            ),
        )),
    }
}

/// Rounds computed thresholds to whole bytes, at least 1 and strictly increasing.
fn increasing_bytes(t: &[f64]) -> Vec<u64> {
    let mut out: Vec<u64> = t.iter().map(|x| x.round().max(1.0) as u64).collect();
    for i in 1..out.len() {
        out[i] = out[i].max(out[i - 1] + 1);
    }
    out
}
