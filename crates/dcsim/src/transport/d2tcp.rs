//! D2TCP, deadline-aware datacenter TCP (Vamanan, Hasan and Vijaykumar, SIGCOMM'12 §3;
//! a baseline of the PASE paper, SIGCOMM'14 §5): DCTCP whose back-off depends on how close a
//! flow is to missing its deadline.
//!
//! * **Congestion estimate (§3.1.1).** DCTCP's α, updated once per window of data from the
//!   fraction of marked packets, α ← (1 − g)·α + g·F (`dctcp.g`, 1/16).
//! * **Deadline imminence (§3.1.2).** d = T_c / D, where D is the time left until the deadline
//!   and T_c the time the flow still needs at its current rate: the remaining bytes over the
//!   average window of DCTCP's sawtooth, ¾·W, in round trips, T_c = B / (¾·W) RTTs (B and W in
//!   packets; the RTT is the sender's smoothed estimate, B the data not yet acknowledged).
//!   d is clamped to [0.5, 2] (§3.1.3). A flow without a deadline, past its deadline, or
//!   without an RTT sample yet has d = 1: plain DCTCP.
//! * **Window (§3.1.2, eq. 3-4).** Penalty p = α^d; on a window with ECN marks
//!   W ← W·(1 − p/2), at most once per window as DCTCP does; otherwise normal growth. With
//!   α < 1, a near-deadline flow (d > 1) gets a smaller p and backs off less than DCTCP, a
//!   far-deadline flow (d < 1) backs off more.
//!
//! Ports are DCTCP's (DropTail with ECN marking at `dctcp.marking_threshold_bytes`).

use super::dctcp::{dctcp_family, Dctcp};
use super::window::{CongestionControl, FlowCtx, Window, WindowTransport};
use super::{Parts, Protocol};
use crate::spec::Spec;
use crate::units::MSS_BYTES;
use dcsim_engine::SimTime;

/// Smallest deadline imminence (§3.1.3).
pub const MIN_IMMINENCE: f64 = 0.5;
/// Largest deadline imminence (§3.1.3).
pub const MAX_IMMINENCE: f64 = 2.0;

/// The deadline imminence d of a flow with congestion window `cwnd` (packets).
pub fn imminence(ctx: &FlowCtx, cwnd: f64) -> f64 {
    if ctx.deadline == SimTime::MAX || ctx.now >= ctx.deadline || ctx.srtt == SimTime::ZERO {
        return 1.0;
    }
    let remaining_pkts = ctx.remaining_bytes() as f64 / MSS_BYTES as f64;
    let needed_ps = remaining_pkts / (0.75 * cwnd.max(1.0)) * ctx.srtt.as_ps() as f64;
    let left_ps = (ctx.deadline - ctx.now).as_ps() as f64;
    (needed_ps / left_ps).clamp(MIN_IMMINENCE, MAX_IMMINENCE)
}

/// D2TCP sender state: DCTCP's estimator and once-per-window cut.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct D2tcp {
    dctcp: Dctcp,
}

impl D2tcp {
    /// A new flow's state with DCTCP gain `g` and initial α.
    pub fn new(g: f64, initial_alpha: f64) -> Self {
        D2tcp { dctcp: Dctcp::new(g, initial_alpha) }
    }

    /// DCTCP's α.
    pub fn alpha(&self) -> f64 {
        self.dctcp.alpha
    }
}

impl CongestionControl for D2tcp {
    fn ecn_capable(&self) -> bool {
        true
    }

    fn on_ack_bookkeeping(&mut self, acked: u32, ece: bool, ctx: &FlowCtx) {
        self.dctcp.on_ack_bookkeeping(acked, ece, ctx);
    }

    fn on_ece(&mut self, w: &mut Window, ctx: &FlowCtx) -> bool {
        // Eq. 3-4: p = α^d, W ← W·(1 − p/2).
        let p = self.dctcp.alpha.powf(imminence(ctx, w.cwnd));
        self.dctcp.cut(w, p, ctx)
    }

    /// α belongs to the connection, as DCTCP's ([`Dctcp`]'s `carry_over`).
    fn carry_over(&mut self, previous: &Self) {
        self.dctcp.carry_over(&previous.dctcp);
    }
}

/// `transport.protocol = "d2tcp"`: D2TCP hosts over DCTCP's ports.
#[derive(Debug)]
pub struct D2tcpProtocol;

impl Protocol for D2tcpProtocol {
    type Host = WindowTransport<D2tcp>;

    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        dctcp_family(spec, D2tcp::new(spec.dctcp.g, spec.dctcp.initial_alpha))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(remaining_pkts: u64, srtt_us: u64, deadline_in_us: Option<u64>) -> FlowCtx {
        let now = SimTime::from_us(1000);
        FlowCtx {
            now,
            size_bytes: remaining_pkts * MSS_BYTES as u64,
            snd_una: 0,
            snd_nxt: 10,
            deadline: deadline_in_us.map_or(SimTime::MAX, |d| now + SimTime::from_us(d)),
            srtt: SimTime::from_us(srtt_us),
        }
    }

    #[test]
    fn imminence_is_the_time_needed_over_the_time_left() {
        // 10 packets left at W = 10: T_c = 10 / 7.5 RTTs = 133.33 µs at a 100 µs RTT; 100 µs
        // left: d = 4/3.
        let d = imminence(&ctx(10, 100, Some(100)), 10.0);
        assert!((d - 4.0 / 3.0).abs() < 1e-12, "{d}");
        // 200 µs left: d = 2/3.
        let d = imminence(&ctx(10, 100, Some(200)), 10.0);
        assert!((d - 2.0 / 3.0).abs() < 1e-12, "{d}");
        // Clamped to [0.5, 2]: 10 µs left gives 13.3, 10 ms left gives 0.013.
        assert_eq!(imminence(&ctx(10, 100, Some(10)), 10.0), 2.0);
        assert_eq!(imminence(&ctx(10, 100, Some(10_000)), 10.0), 0.5);
        // No deadline, or no RTT sample yet: plain DCTCP.
        assert_eq!(imminence(&ctx(10, 100, None), 10.0), 1.0);
        assert_eq!(imminence(&ctx(10, 0, Some(100)), 10.0), 1.0);
        // Past the deadline: plain DCTCP.
        let mut late = ctx(10, 100, Some(100));
        late.now = late.deadline;
        assert_eq!(imminence(&late, 10.0), 1.0);
    }

    #[test]
    fn the_penalty_is_alpha_to_the_imminence() {
        // α = 0.5 (g = 0 keeps it fixed), W = 40.
        let cut = |c: &FlowCtx| {
            let mut d2 = D2tcp::new(0.0, 0.5);
            let mut w = Window { cwnd: 40.0, ssthresh: 1e9, max: 1e9 };
            assert!(d2.on_ece(&mut w, c));
            w.cwnd
        };
        // d = 4/3 (W = 40, 40 packets left: T_c = 40/30 RTTs; 100 µs RTT, 100 µs left):
        // p = 0.5^(4/3) = 0.39685, W = 40·(1 − 0.19843) = 32.063.
        let near = ctx(40, 100, Some(100));
        assert!((imminence(&near, 40.0) - 4.0 / 3.0).abs() < 1e-12);
        assert!((cut(&near) - 40.0 * (1.0 - 0.5f64.powf(4.0 / 3.0) / 2.0)).abs() < 1e-9);
        assert!((cut(&near) - 32.063).abs() < 1e-3);
        // d = 2 at the cap: p = 0.25, W = 35. d = 0.5: p = 0.7071, W = 25.86.
        assert!((cut(&ctx(40, 100, Some(10))) - 35.0).abs() < 1e-12);
        assert!(
            (cut(&ctx(40, 100, Some(100_000))) - 40.0 * (1.0 - 0.5f64.sqrt() / 2.0)).abs() < 1e-9
        );
        // No deadline: DCTCP's cut, W·(1 − α/2) = 30.
        assert_eq!(cut(&ctx(40, 100, None)), 30.0);
    }

    #[test]
    fn cuts_once_per_window_and_grows_normally_otherwise() {
        let mut d2 = D2tcp::new(0.0, 0.5);
        let mut w = Window { cwnd: 40.0, ssthresh: 1e9, max: 1e9 };
        let c = ctx(40, 100, None);
        assert!(d2.on_ece(&mut w, &c));
        assert!(!d2.on_ece(&mut w, &FlowCtx { snd_una: 5, ..c }), "same window: no second cut");
        assert_eq!(w.cwnd, 30.0);
        // Without marks: TCP growth (+1/W per packet in congestion avoidance).
        w.ssthresh = 1.0;
        d2.on_ack(&mut w, 30, &c);
        assert!((w.cwnd - 31.0).abs() < 1e-12);
        assert!(d2.ecn_capable());
    }
}
