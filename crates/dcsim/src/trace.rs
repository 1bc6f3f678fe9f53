//! Flow traces: CSV files whose header line names the columns.
//!
//! Columns are matched by name, in any order; a quantity with a unit carries it in its name:
//!
//! | column | required | meaning |
//! |---|---|---|
//! | `id` | yes | the trace's own flow id, unique, a whole number from 0 to 2^53 |
//! | `src`, `dst` | yes | host numbers |
//! | `size_bytes` | yes | payload bytes |
//! | `start_s`, `start_ms`, `start_us` or `start_ns` | exactly one | arrival time |
//! | `deadline_s`, `deadline_ms`, `deadline_us` or `deadline_ns` | at most one | deadline relative to the flow's start (0 or empty: none) |
//! | `tenant` | no | tenant number (empty: 0) |
//!
//! Blank lines and lines starting with `#` are skipped; the first other line is the header.
//! Any other column name is an error listing these. Rows are sorted by start time (stably,
//! so equal times keep file order).

use crate::error::SpecError;
use crate::units::{HORIZON, MAX_FLOW_BYTES};
use dcsim_engine::SimTime;
use std::collections::HashMap;

/// Largest flow id a trace may use (every integer up to it is exact as a float).
const MAX_ID: f64 = 9_007_199_254_740_992.0; // 2^53
/// Largest tenant number.
const MAX_TENANT: f64 = 1_000_000.0;
/// The spec field that names the trace (every trace error is reported there).
const FIELD: &str = "workload.matrix";

/// One row of a trace.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TraceRow {
    /// The trace's own flow id.
    pub id: u64,
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Payload bytes.
    pub size_bytes: u64,
    /// Arrival time.
    pub start: SimTime,
    /// Deadline relative to `start` (`None`: no deadline).
    pub deadline: Option<SimTime>,
    /// Tenant number.
    pub tenant: u32,
}

/// A time column's unit: its name suffix and picoseconds per unit.
#[derive(Debug, Clone, Copy, PartialEq)]
struct TimeUnit {
    suffix: &'static str,
    ps: f64,
}

/// The units a time column may carry.
const TIME_UNITS: [TimeUnit; 4] = [
    TimeUnit { suffix: "s", ps: 1e12 },
    TimeUnit { suffix: "ms", ps: 1e9 },
    TimeUnit { suffix: "us", ps: 1e6 },
    TimeUnit { suffix: "ns", ps: 1e3 },
];

/// The trace columns: what a header may name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Column {
    Id,
    Src,
    Dst,
    SizeBytes,
    Start(TimeUnit),
    Deadline(TimeUnit),
    Tenant,
}

/// Every column name a header may use, in the order the docs list them.
pub const COLUMN_NAMES: [&str; 13] = [
    "id",
    "src",
    "dst",
    "size_bytes",
    "start_s",
    "start_ms",
    "start_us",
    "start_ns",
    "deadline_s",
    "deadline_ms",
    "deadline_us",
    "deadline_ns",
    "tenant",
];

impl Column {
    fn parse(name: &str) -> Option<Column> {
        let timed = |stem: &str| {
            let suffix = name.strip_prefix(stem)?.strip_prefix('_')?;
            TIME_UNITS.iter().copied().find(|u| u.suffix == suffix)
        };
        match name {
            "id" => Some(Column::Id),
            "src" => Some(Column::Src),
            "dst" => Some(Column::Dst),
            "size_bytes" => Some(Column::SizeBytes),
            "tenant" => Some(Column::Tenant),
            _ => timed("start")
                .map(Column::Start)
                .or_else(|| timed("deadline").map(Column::Deadline)),
        }
    }

    /// The header name of this column.
    fn name(self) -> String {
        match self {
            Column::Id => "id".into(),
            Column::Src => "src".into(),
            Column::Dst => "dst".into(),
            Column::SizeBytes => "size_bytes".into(),
            Column::Start(u) => format!("start_{}", u.suffix),
            Column::Deadline(u) => format!("deadline_{}", u.suffix),
            Column::Tenant => "tenant".into(),
        }
    }

    /// Columns that give the same quantity (the start in any unit is one quantity).
    fn same_quantity(self, other: Column) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

/// What the header names, for an unknown column: the name in lower case, or the
/// unit-carrying name the user meant (`start_time_us` → `start_us`; `start` → the
/// `start_<unit>` names). The error lists every name besides.
fn column_hint(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if COLUMN_NAMES.contains(&lower.as_str()) {
        return format!(" (column names are lower case: `{lower}`)");
    }
    for stem in ["start", "deadline", "size"] {
        if lower == stem {
            let with_units: Vec<&str> =
                COLUMN_NAMES.iter().copied().filter(|c| c.starts_with(stem)).collect();
            return format!(
                " (a column's name carries its unit: {})",
                with_units.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
            );
        }
    }
    // A known stem with extra words before a known unit, e.g. `start_time_us`.
    if let Some((stem, unit)) = lower.rsplit_once('_') {
        for known in ["start", "deadline"] {
            let candidate = format!("{known}_{unit}");
            if stem.starts_with(known) && COLUMN_NAMES.contains(&candidate.as_str()) {
                return format!(" (did you mean `{candidate}`?)");
            }
        }
    }
    String::new()
}

/// The header: which column each field holds.
fn read_header(
    fields: &csv::StringRecord,
    at: &dyn Fn(String) -> SpecError,
) -> Result<Vec<Column>, SpecError> {
    let allowed = "id, src, dst, size_bytes, one of start_s/start_ms/start_us/start_ns, \
                   optionally one of deadline_s/deadline_ms/deadline_us/deadline_ns, and tenant";
    if fields.iter().all(|f| f.parse::<f64>().is_ok()) {
        return Err(at(format!(
            "the first line must be a header naming the columns (they are matched by name), e.g. \
             `id,src,dst,size_bytes,start_us`; it holds numbers. The columns are {allowed}"
        )));
    }
    let mut columns: Vec<Column> = Vec::with_capacity(fields.len());
    for name in fields {
        let Some(col) = Column::parse(name) else {
            return Err(at(format!(
                "unknown column `{name}`{}; the columns are {allowed}",
                column_hint(name)
            )));
        };
        if let Some(j) = columns.iter().position(|c| c.same_quantity(col)) {
            let first = &fields[j];
            return Err(at(if first == name {
                format!("column `{name}` appears twice")
            } else {
                format!("columns `{first}` and `{name}` give the same quantity: keep one")
            }));
        }
        columns.push(col);
    }
    for (required, what) in [
        (Column::Id, "`id` column"),
        (Column::Src, "`src` column"),
        (Column::Dst, "`dst` column"),
        (Column::SizeBytes, "`size_bytes` column"),
        (
            Column::Start(TIME_UNITS[0]),
            "start time (`start_s`, `start_ms`, `start_us` or `start_ns`)",
        ),
    ] {
        if !columns.iter().any(|c| c.same_quantity(required)) {
            return Err(at(format!("the header has no {what}; the columns are {allowed}")));
        }
    }
    Ok(columns)
}

/// Reads and validates a trace file for a topology of `n_hosts` hosts.
pub fn read_trace(path: &str, n_hosts: u32) -> Result<Vec<TraceRow>, SpecError> {
    let bytes = std::fs::read(path)
        .map_err(|e| SpecError::new(FIELD, format!("cannot read trace file {path}: {e}")))?;
    if bytes.starts_with(b"PAR1") {
        return Err(SpecError::new(
            FIELD,
            format!(
                "{path} is a Parquet file, and the Rust core reads CSV traces: run it through the \
                 Python package (`dcsim run`, `dcsim.run`), which reads Parquet traces, or write it as CSV"
            ),
        ));
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        SpecError::new(
            FIELD,
            format!(
                "{path} is not a CSV text file (byte {} is not UTF-8); a trace is a CSV file with a header line",
                e.valid_up_to()
            ),
        )
    })?;
    parse_trace(text, path, n_hosts)
}

/// Parses and validates the CSV text of a trace read from `path` (named in errors).
pub fn parse_trace(text: &str, path: &str, n_hosts: u32) -> Result<Vec<TraceRow>, SpecError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text); // a UTF-8 byte-order mark
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut columns: Option<Vec<Column>> = None;
    let mut line_of_id: HashMap<u64, u64> = HashMap::new();
    let mut rows = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        let more = reader.read_record(&mut record).map_err(|e| {
            let line = e.position().map_or(String::new(), |p| format!(", line {}", p.line()));
            SpecError::new(FIELD, format!("{path}{line}: not valid CSV: {e}"))
        })?;
        if !more {
            break;
        }
        let line = record.position().map_or(0, |p| p.line());
        let at = |m: String| SpecError::new(FIELD, format!("{path}, line {line}: {m}"));
        let Some(cols) = &columns else {
            columns = Some(read_header(&record, &at)?);
            continue;
        };
        if record.len() != cols.len() {
            return Err(at(format!(
                "{} fields, but the header names {} columns",
                record.len(),
                cols.len()
            )));
        }
        let row = parse_row(&record, cols, n_hosts, &at)?;
        if let Some(first) = line_of_id.insert(row.id, line) {
            return Err(at(format!(
                "id {} is already used on line {first}: flow ids must be unique",
                row.id
            )));
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(SpecError::new(FIELD, format!("{path}: the trace has no flows")));
    }
    rows.sort_by_key(|r| r.start);
    Ok(rows)
}

/// One data row, every value range-checked.
fn parse_row(
    record: &csv::StringRecord,
    cols: &[Column],
    n_hosts: u32,
    at: &dyn Fn(String) -> SpecError,
) -> Result<TraceRow, SpecError> {
    let mut row = TraceRow {
        id: 0,
        src: 0,
        dst: 0,
        size_bytes: 0,
        start: SimTime::ZERO,
        deadline: None,
        tenant: 0,
    };
    let horizon_ps = HORIZON.as_ps() as f64;
    let mut deadline_ps = 0.0;
    let mut deadline_column = None;
    for (&col, cell) in cols.iter().zip(record.iter()) {
        let name = col.name();
        let optional = matches!(col, Column::Deadline(_) | Column::Tenant);
        if cell.is_empty() && optional {
            continue;
        }
        let v = cell
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| at(format!("{name} \"{cell}\" is not a finite number")))?;
        let whole = v.fract() == 0.0;
        match col {
            Column::Id => {
                if !(0.0..=MAX_ID).contains(&v) || !whole {
                    return Err(at(format!("id {v} must be a whole number from 0 to 2^53")));
                }
                row.id = v as u64;
            }
            Column::Src | Column::Dst => {
                if v < 0.0 || !whole || v >= n_hosts as f64 {
                    return Err(at(format!(
                        "{name} {v} is out of range: the topology has {n_hosts} hosts (0..{})",
                        n_hosts - 1
                    )));
                }
                *(if col == Column::Src { &mut row.src } else { &mut row.dst }) = v as u32;
            }
            Column::SizeBytes => {
                if v <= 0.0 || !whole || v > MAX_FLOW_BYTES as f64 {
                    return Err(at(format!(
                        "size_bytes {v} must be a whole number of bytes from 1 to {MAX_FLOW_BYTES} (1 TB)"
                    )));
                }
                row.size_bytes = v as u64;
            }
            Column::Start(unit) => {
                let ps = v * unit.ps;
                if !(0.0..horizon_ps).contains(&ps) {
                    return Err(at(format!(
                        "{name} {v} must be >= 0 and before the simulated horizon of 10^6 s"
                    )));
                }
                row.start = SimTime::from_ps(ps.round() as u64);
            }
            Column::Deadline(unit) => {
                deadline_column = Some(col);
                deadline_ps = v * unit.ps;
                if deadline_ps < 0.0 {
                    return Err(at(format!(
                        "{name} {v} must be >= 0 (0 = none; it is relative to the flow's start)"
                    )));
                }
            }
            Column::Tenant => {
                if !(0.0..=MAX_TENANT).contains(&v) || !whole {
                    return Err(at(format!(
                        "tenant {v} must be a whole number from 0 to {MAX_TENANT}"
                    )));
                }
                row.tenant = v as u32;
            }
        }
    }
    if row.src == row.dst {
        return Err(at(format!("src and dst are both {}", row.src)));
    }
    if deadline_ps > 0.0 {
        if row.start.as_ps() as f64 + deadline_ps >= horizon_ps {
            let name = deadline_column.expect("a deadline value has its column").name();
            return Err(at(format!(
                "{name} ends after the simulated horizon of 10^6 s (it is relative to the flow's start)"
            )));
        }
        row.deadline = Some(SimTime::from_ps(deadline_ps.round() as u64));
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_column_name_parses_back_to_itself() {
        for name in COLUMN_NAMES {
            let col = Column::parse(name).unwrap_or_else(|| panic!("{name} does not parse"));
            assert_eq!(col.name(), name);
        }
        for name in ["start", "start_h", "deadline_sec", "size", "start_time_us", "Id"] {
            assert_eq!(Column::parse(name), None, "{name}");
        }
    }
}
