//! Metrics: the ideal (idle-network) FCT, per-flow records, the run summary, and the views
//! inside the network (port samples, the per-packet trace).
//!
//! See `docs/metrics.md` for the conventions.

mod ideal;
mod packet_trace;
mod port_samples;
mod records;
mod summary;

pub use ideal::{ideal_fct, path_hops, Hop};
pub use packet_trace::{HopEvent, PacketTrace, PacketTracer, NO_PORT};
pub use port_samples::{PortDescription, PortSampler, PortSamples};
pub use records::FlowRecords;
pub use summary::{summarize, BinStats, RunCounters, Summary, Timeseries, BINS, MAX_SAMPLES};
