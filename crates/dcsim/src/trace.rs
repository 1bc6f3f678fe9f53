//! Flow traces: a CSV of `id, src, dst, size_bytes, start_time_s[, deadline_s[, tenant]]`.
//!
//! A first line that does not start with a number is a header and is skipped. Rows are
//! sorted by start time (stably, so equal times keep file order).

use crate::error::SpecError;
use crate::units::{HORIZON_S, MAX_FLOW_BYTES};

/// Largest flow id a trace may use (every integer up to it is exact as a float).
const MAX_ID: f64 = 9_007_199_254_740_992.0; // 2^53
/// Largest tenant number.
const MAX_TENANT: f64 = 1_000_000.0;

/// One row of a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRow {
    /// The trace's own flow id.
    pub id: u64,
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Payload bytes.
    pub size_bytes: u64,
    /// Arrival time, seconds.
    pub start_s: f64,
    /// Relative deadline, seconds (0 = none).
    pub deadline_s: f64,
    /// Tenant number.
    pub tenant: u32,
}

/// Reads and validates a trace for a topology of `n_hosts` hosts.
pub fn read_trace(path: &str, n_hosts: u32) -> Result<Vec<TraceRow>, SpecError> {
    let field = "workload.matrix";
    let text = std::fs::read_to_string(path)
        .map_err(|e| SpecError::new(field, format!("cannot read trace file {path}: {e}")))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text); // a UTF-8 byte-order mark
    let mut rows = Vec::new();
    let mut first = true;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        if std::mem::take(&mut first) && cols[0].parse::<f64>().is_err() {
            continue; // the header: the first line that is neither blank nor a comment
        }
        let at = |m: String| SpecError::new(field, format!("{path}, line {}: {m}", i + 1));
        if cols.len() < 5 || cols.len() > 7 {
            return Err(at(format!(
                "expected 5 to 7 columns (id, src, dst, size_bytes, start_time_s[, deadline_s[, tenant]]), got {}",
                cols.len()
            )));
        }
        let num = |k: usize, name: &str| -> Result<f64, SpecError> {
            cols[k]
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| at(format!("{name} \"{}\" is not a finite number", cols[k])))
        };
        let host = |k: usize, name: &str| -> Result<u32, SpecError> {
            let v = num(k, name)?;
            if v < 0.0 || v.fract() != 0.0 || v >= n_hosts as f64 {
                return Err(at(format!(
                    "{name} {v} is out of range: the topology has {n_hosts} hosts (0..{})",
                    n_hosts - 1
                )));
            }
            Ok(v as u32)
        };
        let id = num(0, "id")?;
        if !(0.0..=MAX_ID).contains(&id) || id.fract() != 0.0 {
            return Err(at(format!("id {id} must be a whole number from 0 to 2^53")));
        }
        let src = host(1, "src")?;
        let dst = host(2, "dst")?;
        if src == dst {
            return Err(at(format!("src and dst are both {src}")));
        }
        let size = num(3, "size_bytes")?;
        if size <= 0.0 || size.fract() != 0.0 || size > MAX_FLOW_BYTES as f64 {
            return Err(at(format!(
                "size_bytes {size} must be a whole number of bytes from 1 to {MAX_FLOW_BYTES} (1 TB)"
            )));
        }
        let start_s = num(4, "start_time_s")?;
        if !(0.0..HORIZON_S).contains(&start_s) {
            return Err(at(format!(
                "start_time_s {start_s} must be >= 0 and before the simulated horizon of {HORIZON_S} s"
            )));
        }
        let deadline_s =
            if cols.len() > 5 && !cols[5].is_empty() { num(5, "deadline_s")? } else { 0.0 };
        if deadline_s < 0.0 || start_s + deadline_s >= HORIZON_S {
            return Err(at(format!(
                "deadline_s {deadline_s} must be >= 0 (0 = none, relative to the flow's start) and end before the simulated horizon of {HORIZON_S} s"
            )));
        }
        let tenant = if cols.len() > 6 && !cols[6].is_empty() {
            let t = num(6, "tenant")?;
            if !(0.0..=MAX_TENANT).contains(&t) || t.fract() != 0.0 {
                return Err(at(format!(
                    "tenant {t} must be a whole number from 0 to {MAX_TENANT}"
                )));
            }
            t as u32
        } else {
            0
        };
        rows.push(TraceRow {
            id: id as u64,
            src,
            dst,
            size_bytes: size as u64,
            start_s,
            deadline_s,
            tenant,
        });
    }
    if rows.is_empty() {
        return Err(SpecError::new(field, format!("{path}: the trace has no flows")));
    }
    rows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    Ok(rows)
}
