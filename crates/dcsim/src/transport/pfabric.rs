//! pFabric's end-host rate control (HotNets'12 §3, SIGCOMM'13 §4.2; reference §2.4-2.5).
//!
//! pFabric leaves scheduling to the switches ([`crate::queue::PriorityDropQueue`]) and keeps
//! the hosts minimal. Both variants run on the shared window mechanism with: every data packet
//! tagged with the flow's remaining bytes, no fast retransmit, a fixed RTO without backoff,
//! and retransmissions that skip packets the receiver already holds (the SACK of the ns-2
//! agent, idealised as in the pHost authors' simulator, reference §2.4).
//!
//! * **MinTCP** ([`MinTcp`]): "12 packet initial window size; no fast-retransmission; no
//!   retransmission timeout estimation, RTO is fixed" (HotNets §3). Growth is TCP's (slow start,
//!   then +1 per window, capped at the maximum window); a timeout sets ssthresh to half the
//!   window and the window to 1. After `probe_after_timeouts` consecutive timeouts the flow
//!   enters probe mode: it sends only a 1-byte probe per RTO until an ACK arrives (reference
//!   §2.4, the ns-2 `prob_cap_`).
//! * **LineRate** ([`LineRate`]): "No rate control ... Flows constantly send at the NIC line
//!   rate" (HotNets §3): the window starts at its maximum and never shrinks; lost packets are
//!   resent after the fixed timeout. (Not in the public scripts; reference §2.5 suggests
//!   exactly this: MinTCP with no window reduction and no probe mode.)

use super::{CongestionControl, Window};

/// MinTCP: TCP's growth and timeout response, nothing else (the mechanism's settings do the
/// rest: fixed RTO, no fast retransmit, probe mode).
#[derive(Clone, Debug, Default)]
pub struct MinTcp;

impl CongestionControl for MinTcp {}

/// LineRate: the window never changes.
#[derive(Clone, Debug, Default)]
pub struct LineRate;

impl CongestionControl for LineRate {
    fn on_ack(&mut self, _w: &mut Window, _acked: u32) {}
    fn on_fast_retransmit(&mut self, _w: &mut Window, _flight: u32) {}
    fn on_timeout(&mut self, _w: &mut Window) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linerate_never_changes_its_window_and_mintcp_backs_off() {
        let mut w = Window { cwnd: 14.0, ssthresh: f64::INFINITY, max: 14.0 };
        let mut l = LineRate;
        l.on_ack(&mut w, 3);
        l.on_timeout(&mut w);
        assert_eq!(w.cwnd, 14.0);
        let mut m = MinTcp;
        m.on_timeout(&mut w);
        assert_eq!((w.cwnd, w.ssthresh), (1.0, 7.0));
        m.on_ack(&mut w, 1);
        assert_eq!(w.cwnd, 2.0);
    }
}
