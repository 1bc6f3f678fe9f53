//! The congestion-control side of the window mechanism: the window a policy manipulates, the
//! flow context its hooks see, and the policy trait.

use crate::units::MSS_BYTES;
use dcsim_engine::SimTime;

/// The congestion window a policy manipulates, in packets.
#[derive(Copy, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    /// Congestion window.
    pub cwnd: f64,
    /// Slow-start threshold.
    pub ssthresh: f64,
    /// Upper bound on `cwnd`.
    pub max: f64,
}

impl Window {
    /// Standard growth (RFC 5681 §3.1): slow start below `ssthresh` (+1 per packet
    /// acknowledged), congestion avoidance above it (+1 per window).
    #[inline]
    pub fn grow(&mut self, acked: u32) {
        if self.cwnd < self.ssthresh {
            self.cwnd += acked as f64;
        } else {
            self.cwnd += acked as f64 / self.cwnd;
        }
        self.cwnd = self.cwnd.min(self.max);
    }
}

/// What a policy may know about its flow when a hook runs, so that size- and deadline-aware
/// laws need no state of their own beyond their estimators.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct FlowCtx {
    /// Now.
    pub now: SimTime,
    /// The flow's size, bytes.
    pub size_bytes: u64,
    /// First unacknowledged packet.
    pub snd_una: u32,
    /// Next packet to send.
    pub snd_nxt: u32,
    /// Absolute deadline (`SimTime::MAX`: none).
    pub deadline: SimTime,
    /// Smoothed RTT (`SimTime::ZERO` before the first sample).
    pub srtt: SimTime,
}

impl FlowCtx {
    /// Bytes not yet acknowledged.
    #[inline]
    pub fn remaining_bytes(&self) -> u64 {
        self.size_bytes.saturating_sub(self.snd_una as u64 * MSS_BYTES as u64)
    }
}

/// A congestion-control policy: event hooks with default NewReno behaviour.
pub trait CongestionControl: Clone {
    /// True if the policy's packets are ECN-capable (ECT).
    fn ecn_capable(&self) -> bool {
        false
    }
    /// The strict-priority class the policy puts its packets in, if it chooses one (PASE's
    /// arbitrated queue); `None` leaves it to the protocol's tagger.
    fn class(&self) -> Option<u8> {
        None
    }
    /// `acked` new packets were acknowledged outside fast recovery, without a window cut.
    fn on_ack(&mut self, w: &mut Window, acked: u32, _ctx: &FlowCtx) {
        w.grow(acked);
    }
    /// Called for every ACK that acknowledges new data (with or without ECE) before
    /// `on_ack`/`on_ece`: bookkeeping such as DCTCP's marked fraction.
    fn on_ack_bookkeeping(&mut self, _acked: u32, _ece: bool, _ctx: &FlowCtx) {}
    /// An ACK carried ECN-Echo. Returns true if the window was reduced (growth is then
    /// skipped for this ACK).
    fn on_ece(&mut self, _w: &mut Window, _ctx: &FlowCtx) -> bool {
        false
    }
    /// Fast retransmit is starting with `flight` packets outstanding (RFC 5681 §3.2).
    fn on_fast_retransmit(&mut self, w: &mut Window, flight: u32) {
        w.ssthresh = (flight as f64 / 2.0).max(2.0);
        w.cwnd = w.ssthresh;
    }
    /// This flow starts on a persistent connection whose previous flow ended with policy state
    /// `previous` (`transport.connections = "per-host-pair"`): keep what the connection, not
    /// the flow, holds. Default: nothing.
    fn carry_over(&mut self, _previous: &Self) {}
    /// The retransmission timer expired (RFC 5681 §3.1: ssthresh = max(flight/2, 2), cwnd = 1).
    fn on_timeout(&mut self, w: &mut Window) {
        w.ssthresh = (w.cwnd / 2.0).max(2.0);
        w.cwnd = 1.0;
    }
}
