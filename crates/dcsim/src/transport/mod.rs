//! Transports: a shared mechanism with pluggable policies.
//!
//! The window mechanism ([`window`]) is written once: sequence numbers, cumulative ACKs with
//! ECN echo, duplicate-ACK fast retransmit with NewReno recovery, the retransmission timer
//! and go-back-N after a timeout. A protocol is a [`CongestionControl`] policy that reacts to
//! named events (`on_ack`, `on_ece`, `on_fast_retransmit`, `on_timeout`); policies are
//! dispatched through the [`AnyCc`] enum, never a boxed trait object, on the per-packet path.
//!
//! Later protocols plug in at two levels: window protocols (MinTCP, L2DCT, PIAS tagging) as
//! new policies and packet taggers on this mechanism; receiver-driven ones (pHost, Fastpass)
//! as sibling mechanisms next to [`window`], dispatched by the simulation like this one.

pub mod dctcp;
pub mod fastpass;
pub mod l2dct;
pub mod pfabric;
pub mod phost;
pub mod tcp;
pub mod window;

pub use dctcp::Dctcp;
pub use l2dct::L2dct;
pub use pfabric::{LineRate, MinTcp};
pub use tcp::Reno;

/// The congestion window a policy manipulates, in packets.
#[derive(Copy, Clone, Debug, PartialEq)]
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

/// A congestion-control policy: event hooks with default NewReno behaviour.
pub trait CongestionControl {
    /// True if the policy's packets are ECN-capable (ECT).
    fn ecn_capable(&self) -> bool {
        false
    }
    /// `acked` new packets were acknowledged outside fast recovery, without ECE.
    fn on_ack(&mut self, w: &mut Window, acked: u32) {
        w.grow(acked);
    }
    /// Called for every ACK that acknowledges new data (with or without ECE) before
    /// `on_ack`/`on_ece`: bookkeeping such as DCTCP's marked fraction.
    fn on_ack_bookkeeping(&mut self, _acked: u32, _ece: bool, _snd_una: u32, _snd_nxt: u32) {}
    /// An ACK carried ECN-Echo. Returns true if the window was reduced (growth is then
    /// skipped for this ACK).
    fn on_ece(&mut self, _w: &mut Window, _snd_una: u32, _snd_nxt: u32) -> bool {
        false
    }
    /// Fast retransmit is starting with `flight` packets outstanding (RFC 5681 §3.2).
    fn on_fast_retransmit(&mut self, w: &mut Window, flight: u32) {
        w.ssthresh = (flight as f64 / 2.0).max(2.0);
        w.cwnd = w.ssthresh;
    }
    /// The retransmission timer expired (RFC 5681 §3.1: ssthresh = max(flight/2, 2), cwnd = 1).
    fn on_timeout(&mut self, w: &mut Window) {
        w.ssthresh = (w.cwnd / 2.0).max(2.0);
        w.cwnd = 1.0;
    }
}

/// Every window policy, dispatched by `match`.
#[derive(Clone, Debug)]
pub enum AnyCc {
    /// TCP NewReno.
    Reno(Reno),
    /// DCTCP.
    Dctcp(Dctcp),
    /// pFabric's MinTCP.
    MinTcp(MinTcp),
    /// pFabric's LineRate.
    LineRate(LineRate),
    /// L2DCT.
    L2dct(L2dct),
}

/// Forwards a call to whichever policy `self` holds (static dispatch).
macro_rules! each_cc {
    ($self:expr, $c:ident => $body:expr) => {
        match $self {
            AnyCc::Reno($c) => $body,
            AnyCc::Dctcp($c) => $body,
            AnyCc::MinTcp($c) => $body,
            AnyCc::LineRate($c) => $body,
            AnyCc::L2dct($c) => $body,
        }
    };
}

impl CongestionControl for AnyCc {
    #[inline]
    fn ecn_capable(&self) -> bool {
        each_cc!(self, c => c.ecn_capable())
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u32) {
        each_cc!(self, c => c.on_ack(w, acked))
    }
    #[inline]
    fn on_ack_bookkeeping(&mut self, acked: u32, ece: bool, snd_una: u32, snd_nxt: u32) {
        each_cc!(self, c => c.on_ack_bookkeeping(acked, ece, snd_una, snd_nxt))
    }
    #[inline]
    fn on_ece(&mut self, w: &mut Window, snd_una: u32, snd_nxt: u32) -> bool {
        each_cc!(self, c => c.on_ece(w, snd_una, snd_nxt))
    }
    fn on_fast_retransmit(&mut self, w: &mut Window, flight: u32) {
        each_cc!(self, c => c.on_fast_retransmit(w, flight))
    }
    fn on_timeout(&mut self, w: &mut Window) {
        each_cc!(self, c => c.on_timeout(w))
    }
}
