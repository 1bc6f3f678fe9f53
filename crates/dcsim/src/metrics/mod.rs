//! Metrics: the ideal (idle-network) FCT, per-flow records and the run summary.
//!
//! See `docs/metrics.md` for the conventions.

mod ideal;
mod records;
mod summary;

pub use ideal::{ideal_fct, path_hops, Hop};
pub use records::FlowRecords;
pub use summary::{summarize, BinStats, RunCounters, Summary, Timeseries, BINS, MAX_SAMPLES};
