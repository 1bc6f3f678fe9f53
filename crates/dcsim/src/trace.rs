//! Flow traces: a CSV of `id, src, dst, size_bytes, start_time_s[, deadline_s[, tenant]]`.
//!
//! A first line that does not start with a number is a header and is skipped. Rows are
//! sorted by start time (stably, so equal times keep file order).

use crate::error::SpecError;

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
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        if i == 0 && cols[0].parse::<f64>().is_err() {
            continue; // header
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
                .map_err(|_| at(format!("{name} \"{}\" is not a number", cols[k])))
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
        let src = host(1, "src")?;
        let dst = host(2, "dst")?;
        if src == dst {
            return Err(at(format!("src and dst are both {src}")));
        }
        let size = num(3, "size_bytes")?;
        if size <= 0.0 || size.fract() != 0.0 {
            return Err(at(format!("size_bytes {size} must be a positive whole number of bytes")));
        }
        let start_s = num(4, "start_time_s")?;
        if start_s < 0.0 || !start_s.is_finite() {
            return Err(at(format!("start_time_s {start_s} must be >= 0")));
        }
        let deadline_s =
            if cols.len() > 5 && !cols[5].is_empty() { num(5, "deadline_s")? } else { 0.0 };
        if deadline_s < 0.0 {
            return Err(at(format!("deadline_s {deadline_s} must be >= 0")));
        }
        let tenant = if cols.len() > 6 && !cols[6].is_empty() {
            let t = num(6, "tenant")?;
            if t < 0.0 || t.fract() != 0.0 {
                return Err(at(format!("tenant {t} must be a non-negative integer")));
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
