//! What the long-lived flows (`workload.long_lived_flows`) delivered: they are not the run's
//! flows, so no record has them; the summary reports their goodput instead.

use crate::packet::{Packet, SeqSet};
use crate::units::HEADER_BYTES;
use crate::workload::LONG_LIVED_ID;

/// The distinct data packets each long-lived flow's receiver got.
#[derive(Debug, Default)]
pub struct LongLivedMeter {
    received: Vec<SeqSet>,
    /// Distinct payload bytes delivered (goodput: a packet delivered twice counts once).
    pub payload_bytes: u64,
    /// Wire bytes of every data packet delivered, duplicates included: the long-lived flows'
    /// part of the fabric's delivered data bytes.
    pub wire_bytes: u64,
}

impl LongLivedMeter {
    /// A meter for `n` long-lived flows.
    pub fn new(n: usize) -> Self {
        LongLivedMeter { received: vec![SeqSet::default(); n], ..LongLivedMeter::default() }
    }

    /// Whether the run has no long-lived flow.
    pub fn is_empty(&self) -> bool {
        self.received.is_empty()
    }

    /// Packet `p` of a long-lived flow reached its destination host; only data counts.
    #[inline]
    pub fn on_delivered(&mut self, p: &Packet) {
        if p.is_control() {
            return;
        }
        self.wire_bytes += p.size_bytes as u64;
        if self.received[(p.flow - LONG_LIVED_ID) as usize].insert(p.seq) {
            self.payload_bytes += (p.size_bytes - HEADER_BYTES) as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use dcsim_engine::SimTime;

    #[test]
    fn counts_distinct_payload_and_every_wire_byte() {
        let mut m = LongLivedMeter::new(2);
        let data = |flow, seq| {
            Packet::new(PacketKind::DATA, LONG_LIVED_ID + flow, 0, 0, 1, seq, 1500, SimTime::ZERO)
        };
        for (flow, seq) in [(0, 0), (0, 1), (0, 1), (1, 1)] {
            m.on_delivered(&data(flow, seq));
        }
        m.on_delivered(&Packet::new(PacketKind::ACK, LONG_LIVED_ID, 0, 1, 0, 2, 40, SimTime::ZERO));
        assert_eq!((m.payload_bytes, m.wire_bytes), (3 * 1460, 4 * 1500));
    }
}
