//! Per-flow records, stored by column.

use crate::workload::FlowArrival;
use dcsim_engine::SimTime;

/// One column per field, one row per flow (indexed by the flow's sequential id). Columnar so
/// the Python side can hand each column to Arrow without copying row by row.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct FlowRecords {
    /// Reported id.
    pub id: Vec<u64>,
    /// Source host.
    pub src: Vec<u32>,
    /// Destination host.
    pub dst: Vec<u32>,
    /// Payload bytes.
    pub size_bytes: Vec<u64>,
    /// Arrival, ps.
    pub start_ps: Vec<u64>,
    /// Completion (last ACK at the sender), ps; `u64::MAX` if unfinished.
    pub finish_ps: Vec<u64>,
    /// Ideal FCT, ps.
    pub ideal_ps: Vec<u64>,
    /// Data packets retransmitted.
    pub retransmits: Vec<u32>,
    /// Retransmission timeouts.
    pub timeouts: Vec<u32>,
    /// Data packets sent (first transmissions and retransmissions).
    pub packets_sent: Vec<u32>,
    /// Absolute deadline, ps; `u64::MAX` if none.
    pub deadline_ps: Vec<u64>,
    /// Tenant.
    pub tenant: Vec<u32>,
    /// Incast request, or `u32::MAX`.
    pub request: Vec<u32>,
}

impl FlowRecords {
    /// Adds a row for a new flow; returns its index.
    pub fn push(&mut self, f: &FlowArrival, ideal: SimTime) -> usize {
        self.id.push(f.label);
        self.src.push(f.src);
        self.dst.push(f.dst);
        self.size_bytes.push(f.size_bytes);
        self.start_ps.push(f.start.as_ps());
        self.finish_ps.push(u64::MAX);
        self.ideal_ps.push(ideal.as_ps());
        self.retransmits.push(0);
        self.timeouts.push(0);
        self.packets_sent.push(0);
        self.deadline_ps.push(f.deadline.as_ps());
        self.tenant.push(f.tenant);
        self.request.push(f.request);
        self.id.len() - 1
    }

    /// Keeps the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.id.truncate(n);
        self.src.truncate(n);
        self.dst.truncate(n);
        self.size_bytes.truncate(n);
        self.start_ps.truncate(n);
        self.finish_ps.truncate(n);
        self.ideal_ps.truncate(n);
        self.retransmits.truncate(n);
        self.timeouts.truncate(n);
        self.packets_sent.truncate(n);
        self.deadline_ps.truncate(n);
        self.tenant.truncate(n);
        self.request.truncate(n);
    }

    /// Number of flows recorded.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// True if no flow was recorded.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }

    /// FCT of flow `i`, if it finished.
    pub fn fct(&self, i: usize) -> Option<SimTime> {
        (self.finish_ps[i] != u64::MAX).then(|| SimTime(self.finish_ps[i] - self.start_ps[i]))
    }
}
