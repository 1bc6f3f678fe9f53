//! Quantities with units: bytes and bit rates, plus the packet-size constants of the papers.

use dcsim_engine::SimTime;
use serde::{Deserialize, Serialize};

/// TCP payload per full packet (the papers' simulators: 1460 B payload, 40 B header).
pub const MSS_BYTES: u32 = 1460;
/// Header bytes on every packet (the papers' simulators: 1460 B payload, 40 B header).
pub const HEADER_BYTES: u32 = 40;
/// A full data packet on the wire.
pub const MTU_BYTES: u32 = MSS_BYTES + HEADER_BYTES;
/// ACKs, and later RTS, tokens and grants, are header-only packets.
pub const CONTROL_BYTES: u32 = HEADER_BYTES;

/// The largest flow dcsim simulates: 1 TB (6.85·10⁸ packets, so a packet's index fits
/// `u32` with room to spare). Larger sizes are rejected where they enter (spec, CDF, trace).
pub const MAX_FLOW_BYTES: u64 = 1_000_000_000_000;

/// The simulated horizon: 10⁶ s (≈ 11.6 days; 10¹⁸ ps, well inside `u64`). Arrival times and
/// deadlines must fall before it, and a run stops with an error if an event would pass it.
pub const HORIZON: SimTime = SimTime(1_000_000_000_000_000_000);

/// [`HORIZON`] in seconds.
pub const HORIZON_S: f64 = 1e6;

/// A number of bytes.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Payload packets needed to carry `self` (at least one: a zero-byte flow still sends one).
    pub fn packets(self) -> u32 {
        debug_assert!(self.0 <= MAX_FLOW_BYTES, "flow of {} bytes above the limit", self.0);
        u32::try_from(self.0.div_ceil(MSS_BYTES as u64).max(1)).expect("flow sizes are bounded")
    }
    /// Bytes on the wire for a flow of this payload size: payload plus one header per packet.
    pub fn wire_bytes(self) -> u64 {
        self.0 + self.packets() as u64 * HEADER_BYTES as u64
    }
    /// Bytes on the wire of packet `seq` of a flow of this payload size: a full MTU, or the
    /// payload left plus a header for the last packet.
    pub fn packet_wire_bytes(self, seq: u32) -> u32 {
        if seq + 1 >= self.packets() {
            (self.0.saturating_sub(seq as u64 * MSS_BYTES as u64)) as u32 + HEADER_BYTES
        } else {
            MTU_BYTES
        }
    }
}

/// A link rate in bits per second.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct BitRate(pub u64);

impl BitRate {
    /// From gigabits per second (10 → 10 Gbps).
    pub fn from_gbps(g: f64) -> Self {
        BitRate((g * 1e9).round() as u64)
    }
    /// Gigabits per second, for reporting.
    pub fn as_gbps(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time to serialize `bytes` onto a link of this rate, rounded up to the picosecond.
    ///
    /// Exact for the papers' rates: 1500 B at 10 Gbps is 1.2 µs = 1,200,000 ps.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> SimTime {
        let bits_ps = bytes as u128 * 8 * 1_000_000_000_000u128;
        SimTime(bits_ps.div_ceil(self.0 as u128) as u64)
    }

    /// Picoseconds per byte when that is a whole number (every rate that divides 8 Tbps:
    /// 1, 2.5, 10, 25, 40, 100 Gbps, …), so the hot path can multiply instead of divide.
    pub fn exact_ps_per_byte(self) -> Option<u64> {
        let num = 8_000_000_000_000u64;
        (self.0 > 0 && num.is_multiple_of(self.0)).then(|| num / self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_times_are_exact() {
        let ten = BitRate::from_gbps(10.0);
        assert_eq!(ten.tx_time(1500), SimTime::from_ns(1200));
        assert_eq!(ten.tx_time(40), SimTime::from_ns(32));
        assert_eq!(BitRate::from_gbps(40.0).tx_time(1500), SimTime::from_ns(300));
        assert_eq!(BitRate::from_gbps(1.0).tx_time(1500), SimTime::from_us(12));
    }

    #[test]
    fn packets_and_wire_bytes() {
        assert_eq!(Bytes(1460).packets(), 1);
        assert_eq!(Bytes(1461).packets(), 2);
        assert_eq!(Bytes(0).packets(), 1);
        assert_eq!(Bytes(2920).wire_bytes(), 3000);
        assert_eq!(Bytes(100).wire_bytes(), 140);
    }
}
