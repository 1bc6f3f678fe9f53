//! L2DCT (Munir et al., INFOCOM 2013) as the PIAS authors implement it in ns-2 (reference
//! §7.3): DCTCP whose reaction to congestion depends on how much the flow has sent, so young
//! (probably short) flows back off less and grab bandwidth faster — least-attained-service
//! approximated by rate control.
//!
//! * **Weight** from the bytes sent so far: w = w_max = 2.5 up to 200 KB, w = w_min = 0.125
//!   from 1 MB on, linear in between.
//! * **Decrease** on ECN-Echo, at most once per window: cwnd ← cwnd·(1 − b/2) with b = α^w
//!   (α is DCTCP's estimate), so a small α hurts a heavy-weight young flow least.
//! * **Increase** in congestion avoidance: w / w_max packets per round trip; slow start as
//!   usual. `l2dct.increase = "authors-code"` gives instead what the PIAS authors'
//!   agent does with `windowOption_ 0` (their `TcpAgent::opencwnd`: the L2DCT test and the
//!   standard test each advance the per-ACK counter, so the window grows by one every
//!   cwnd / 2 ACKs): two packets per round trip whatever the weight (docs/model.md).

use super::dctcp::{dctcp_family, Dctcp};
use super::window::{CongestionControl, FlowCtx, Window, WindowTransport};
use super::{Parts, Protocol};
use crate::spec::{L2dctIncrease, Spec};
use crate::units::MSS_BYTES;

/// Largest weight (young flows).
pub const W_MAX: f64 = 2.5;
/// Smallest weight (old flows).
pub const W_MIN: f64 = 0.125;
/// Bytes sent up to which the weight is `W_MAX`.
pub const YOUNG_BYTES: f64 = 204_800.0;
/// Bytes sent from which the weight is `W_MIN`.
pub const OLD_BYTES: f64 = 1_048_576.0;

/// The weight after `sent` bytes.
pub fn weight(sent: f64) -> f64 {
    if sent <= YOUNG_BYTES {
        W_MAX
    } else if sent >= OLD_BYTES {
        W_MIN
    } else {
        W_MAX - (W_MAX - W_MIN) * (sent - YOUNG_BYTES) / (OLD_BYTES - YOUNG_BYTES)
    }
}

/// L2DCT sender state: DCTCP's estimator plus the flow's progress.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct L2dct {
    dctcp: Dctcp,
    /// Bytes sent so far (the highest sequence sent, in bytes).
    sent_bytes: f64,
    /// The additive increase rule.
    increase: L2dctIncrease,
}

impl L2dct {
    /// A new flow's state with DCTCP gain `g` and initial α.
    pub fn new(g: f64, initial_alpha: f64) -> Self {
        L2dct { dctcp: Dctcp::new(g, initial_alpha), sent_bytes: 0.0, increase: L2dctIncrease::Weighted }
    }

    /// The same with additive increase rule `increase`.
    pub fn with_increase(self, increase: L2dctIncrease) -> Self {
        L2dct { increase, ..self }
    }

    /// Packets per round trip the window grows by in congestion avoidance.
    fn increase_per_rtt(&self) -> f64 {
        match self.increase {
            L2dctIncrease::Weighted => weight(self.sent_bytes) / W_MAX,
            L2dctIncrease::AuthorsCode => 2.0,
        }
    }

    /// DCTCP's α.
    pub fn alpha(&self) -> f64 {
        self.dctcp.alpha
    }
}

impl CongestionControl for L2dct {
    fn ecn_capable(&self) -> bool {
        true
    }

    fn on_ack(&mut self, w: &mut Window, acked: u32, _ctx: &FlowCtx) {
        if w.cwnd < w.ssthresh {
            w.grow(acked);
        } else {
            w.cwnd += self.increase_per_rtt() * acked as f64 / w.cwnd;
            w.cwnd = w.cwnd.min(w.max);
        }
    }

    fn on_ack_bookkeeping(&mut self, acked: u32, ece: bool, ctx: &FlowCtx) {
        // The weight follows the bytes sent as of the latest new acknowledgement (also for a
        // cut on a later duplicate ACK), as in the PIAS authors' ns-2 agent.
        self.sent_bytes = ctx.snd_nxt as f64 * MSS_BYTES as f64;
        self.dctcp.on_ack_bookkeeping(acked, ece, ctx);
    }

    fn on_ece(&mut self, w: &mut Window, ctx: &FlowCtx) -> bool {
        // DCTCP's once-per-window gate and cut, with b = α^w in place of α.
        let b = self.dctcp.alpha.powf(weight(self.sent_bytes));
        self.dctcp.cut(w, b, ctx)
    }

    /// α belongs to the connection, as DCTCP's; the weight follows this flow's bytes ([`Dctcp`]'s `carry_over`).
    fn carry_over(&mut self, previous: &Self) {
        self.dctcp.carry_over(&previous.dctcp);
    }
}

/// `transport.protocol = "l2dct"`: L2DCT hosts over DCTCP's ports.
#[derive(Debug)]
pub struct L2dctProtocol;

impl Protocol for L2dctProtocol {
    type Host = WindowTransport<L2dct>;

    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        let cc = L2dct::new(spec.dctcp.g, spec.dctcp.initial_alpha)
            .with_increase(spec.l2dct.increase);
        dctcp_family(spec, cc)
    }
}

#[cfg(test)]
mod tests {
    use super::super::dctcp::tests::seqs;
    use super::*;

    #[test]
    fn weight_falls_linearly_from_200kb_to_1mb() {
        assert_eq!(weight(0.0), 2.5);
        assert_eq!(weight(204_800.0), 2.5);
        assert_eq!(weight(1_048_576.0), 0.125);
        assert_eq!(weight(5e6), 0.125);
        let mid = (204_800.0 + 1_048_576.0) / 2.0;
        assert!((weight(mid) - (2.5 + 0.125) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn young_flows_cut_less_and_old_flows_grow_slower() {
        // α = 0.5; one ECN-Echo each.
        let mut young = L2dct::new(0.0, 0.5); // g = 0 keeps α fixed
        let mut old = L2dct::new(0.0, 0.5);
        young.on_ack_bookkeeping(0, false, &seqs(0, 10)); // 14.6 KB sent
        old.on_ack_bookkeeping(0, false, &seqs(0, 1000)); // 1.46 MB sent
        let mut wy = Window { cwnd: 40.0, ssthresh: 1.0, max: 1000.0 };
        let mut wo = wy;
        assert!(young.on_ece(&mut wy, &seqs(0, 10)));
        assert!(old.on_ece(&mut wo, &seqs(0, 1000)));
        // b = 0.5^2.5 = 0.1768 → 40·(1 − 0.0884); b = 0.5^0.125 = 0.917 → 40·(1 − 0.4585).
        assert!((wy.cwnd - 40.0 * (1.0 - 0.5f64.powf(2.5) / 2.0)).abs() < 1e-9);
        assert!((wo.cwnd - 40.0 * (1.0 - 0.5f64.powf(0.125) / 2.0)).abs() < 1e-9);
        // A second ECE in the same window does not cut again.
        assert!(!young.on_ece(&mut wy, &seqs(5, 10)));
        // Congestion avoidance: +w/w_max per window of ACKs.
        let mut wy = Window { cwnd: 10.0, ssthresh: 1.0, max: 1000.0 };
        let mut wo = wy;
        young.on_ack(&mut wy, 10, &seqs(0, 0));
        old.on_ack(&mut wo, 10, &seqs(0, 0));
        assert!((wy.cwnd - 11.0).abs() < 1e-9);
        assert!((wo.cwnd - 10.05).abs() < 1e-9);
    }

    #[test]
    fn the_authors_code_increase_is_two_packets_per_round_trip_whatever_the_weight() {
        // `l2dct.increase = "authors-code"`: a window of ACKs adds 2 packets to a young
        // and to an old flow alike; the cut keeps its weight (b = α^w).
        let authors = |sent: u32| {
            let mut cc = L2dct::new(0.0, 0.5).with_increase(L2dctIncrease::AuthorsCode);
            cc.on_ack_bookkeeping(0, false, &seqs(0, sent));
            cc
        };
        for sent in [10, 1000] {
            let mut cc = authors(sent);
            let mut w = Window { cwnd: 10.0, ssthresh: 1.0, max: 1000.0 };
            cc.on_ack(&mut w, 10, &seqs(0, 0));
            assert!((w.cwnd - 12.0).abs() < 1e-9, "{sent}: {}", w.cwnd);
            // Slow start is unchanged: +1 per packet acknowledged.
            let mut w = Window { cwnd: 10.0, ssthresh: 100.0, max: 1000.0 };
            cc.on_ack(&mut w, 3, &seqs(0, 0));
            assert!((w.cwnd - 13.0).abs() < 1e-9, "{sent}: {}", w.cwnd);
        }
        let mut old = authors(1000);
        let mut w = Window { cwnd: 40.0, ssthresh: 1.0, max: 1000.0 };
        assert!(old.on_ece(&mut w, &seqs(0, 1000)));
        assert!((w.cwnd - 40.0 * (1.0 - 0.5f64.powf(0.125) / 2.0)).abs() < 1e-9);
    }
}
