//! `[pias]`: PIAS's queues, demotion thresholds and ECN marking (PIAS NSDI'15 §3-4).

use super::derived::{cdf_of_workload, given_or_computed};
use super::reader::Section;
use super::workload::{FlowSizes, WorkloadSpec};
use crate::error::SpecError;
use serde::Serialize;

/// `[pias]` (PIAS NSDI'15 §3-4).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PiasSpec {
    /// Strict-priority queues per port, 1-8 (8).
    pub queues: u32,
    /// `queues − 1` increasing demotion thresholds, bytes: a packet whose byte offset in its
    /// flow is ≤ `thresholds[k]` goes to queue k (resolved from `threshold_method` when not
    /// given).
    pub thresholds: Vec<u64>,
    /// How thresholds are chosen when not given: `table` (the PIAS authors' scripts; web search
    /// and data mining at loads 0.5-0.9 with 8 queues), `closed-form` (§3.3), `equal-split`,
    /// or `auto` (default: `table` where it has an entry, else `closed-form`); resolved to the
    /// method used.
    pub threshold_method: PiasThresholdMethod,
    /// ECN marking at the `dctcp.marking_threshold_bytes` threshold: `per-port` (default,
    /// §4.1.2), `per-queue`, or `off`.
    pub ecn: PiasEcn,
    /// After this many consecutive timeouts a flow's MLFQ count restarts (it is tagged as if
    /// new from its first unacknowledged packet; §3.2's starvation guard). 0 (default) = never.
    pub reset_after_timeouts: u32,
}

crate::choice! {
    /// How PIAS thresholds are chosen.
    pub enum PiasThresholdMethod {
        /// The table where it has an entry, else the closed form (resolved away).
        Auto = "auto",
        /// The PIAS authors' published script values.
        Table = "table",
        /// The paper's §3.3 closed form.
        ClosedForm = "closed-form",
        /// Equal fractions of flows per queue.
        EqualSplit = "equal-split",
    }
}

crate::choice! {
    /// Where PIAS switches measure the queue for ECN marking.
    pub enum PiasEcn {
        /// The whole port's occupancy.
        PerPort = "per-port",
        /// The occupancy of the packet's own queue.
        PerQueue = "per-queue",
        /// No marking.
        Off = "off",
    }
}

/// Resolves `[pias]`; thresholds are derived only for PIAS runs (`used`), so other
/// protocols' specs need no CDF for them.
pub fn resolve(pi: &Section<'_>, w: &WorkloadSpec, used: bool) -> Result<PiasSpec, SpecError> {
    let queues = pi.u32_in("queues", 8, 1, 8)?;
    let reset_after_timeouts = pi.u32_in("reset_after_timeouts", 0, 0, 1_000_000)?;
    let ecn = pi.choice("ecn", PiasEcn::PerPort)?;
    let mut method = pi.choice("threshold_method", PiasThresholdMethod::Auto)?;
    let given = pi.byte_list("thresholds")?;
    let k = queues as usize;
    let thresholds = if used || given.as_ref().is_some_and(|v| !v.is_empty()) {
        given_or_computed(pi, given, k, || {
            let named = match &w.flow_sizes {
                FlowSizes::Named(n) if w.tenants.is_empty() => Some(n.as_str()),
                _ => None,
            };
            let table = named.and_then(|n| crate::thresholds::pias_table_pkts(n, w.load));
            if method == PiasThresholdMethod::Auto {
                method = if table.is_some() && k == 8 {
                    PiasThresholdMethod::Table
                } else {
                    PiasThresholdMethod::ClosedForm
                };
            }
            if method == PiasThresholdMethod::Table {
                let t = table.filter(|_| k == 8).ok_or_else(|| {
                    SpecError::new(
                        pi.field("threshold_method"),
                        format!(
                            "the authors' table covers 8 queues for web search and data mining at loads 0.5, 0.6, 0.7, 0.8, 0.9; this run has {k} queues, {} at load {}: use \"closed-form\", \"equal-split\" or give `pias.thresholds`",
                            named.unwrap_or("these flow sizes"),
                            w.load
                        ),
                    )
                })?;
                return Ok(t.iter().map(|p| (p * crate::units::MSS_BYTES as u64) as f64).collect());
            }
            let d = crate::thresholds::SizeDist::from_cdf(&cdf_of_workload(pi, w)?);
            Ok(if method == PiasThresholdMethod::EqualSplit {
                crate::thresholds::equal_split(&d, k)
            } else {
                crate::thresholds::pias_closed_form(&d, w.load, k)
            })
        })?
    } else {
        Vec::new()
    };
    Ok(PiasSpec { queues, thresholds, threshold_method: method, ecn, reset_after_timeouts })
}
