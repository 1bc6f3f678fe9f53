//! DCTCP (Alizadeh et al., SIGCOMM 2010), as the pFabric authors' ns-2 patch and scripts run it:
//! the receiver echoes CE on the ACK of every marked packet; the sender keeps the fraction F
//! of acknowledged bytes that were marked over each window and updates
//! α ← (1 − g)·α + g·F once per window; on an ECN-Echo, at most once per window, it sets
//! cwnd ← cwnd·(1 − α/2) and ssthresh ← cwnd. Otherwise it behaves as NewReno.

use super::window::{CongestionControl, FlowCtx, Window, WindowParams, WindowTransport};
use super::{Parts, PortPlan, Protocol};
use crate::queue::EcnMarking;
use crate::spec::Spec;

/// DCTCP sender state.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Dctcp {
    /// EWMA gain g.
    pub g: f64,
    /// The congestion estimate α.
    pub alpha: f64,
    /// α is next updated when `snd_una` reaches this sequence (Linux's `next_seq`).
    window_end: u32,
    acked: u64,
    marked: u64,
    /// No further cut until `snd_una` passes this (one cut per window).
    cut_until: u32,
    cut_once: bool,
}

impl Dctcp {
    /// A new flow's state.
    pub fn new(g: f64, initial_alpha: f64) -> Self {
        Dctcp {
            g,
            alpha: initial_alpha,
            window_end: 0,
            acked: 0,
            marked: 0,
            cut_until: 0,
            cut_once: false,
        }
    }
}

impl CongestionControl for Dctcp {
    fn ecn_capable(&self) -> bool {
        true
    }

    fn on_ack_bookkeeping(&mut self, acked: u32, ece: bool, ctx: &FlowCtx) {
        let (snd_una, snd_nxt) = (ctx.snd_una, ctx.snd_nxt);
        self.acked += acked as u64;
        if ece {
            self.marked += acked as u64;
        }
        // Once per window of data: α ← (1 − g)·α + g·F (DCTCP paper eq. 1).
        if snd_una >= self.window_end {
            let f = if self.acked > 0 { self.marked as f64 / self.acked as f64 } else { 0.0 };
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.acked = 0;
            self.marked = 0;
            self.window_end = snd_nxt;
        }
    }

    fn on_ece(&mut self, w: &mut Window, ctx: &FlowCtx) -> bool {
        self.cut(w, self.alpha, ctx)
    }

    /// α belongs to the connection (the ns-2 agent's `ecnhat_alpha_`); the per-window
    /// counters count this flow's sequence numbers and start afresh.
    fn carry_over(&mut self, previous: &Self) {
        self.alpha = previous.alpha;
    }
}

impl Dctcp {
    /// DCTCP's window cut with penalty `p` in place of α (size- and deadline-aware variants scale it): at most
    /// once per window of data, cwnd ← cwnd × (1 − p/2) (DCTCP paper eq. 2). Returns true if
    /// the window was cut.
    pub fn cut(&mut self, w: &mut Window, p: f64, ctx: &FlowCtx) -> bool {
        if self.cut_once && ctx.snd_una < self.cut_until {
            return false;
        }
        w.cwnd = (w.cwnd * (1.0 - p / 2.0)).max(1.0);
        w.ssthresh = w.cwnd;
        self.cut_until = ctx.snd_nxt;
        self.cut_once = true;
        true
    }
}

/// DCTCP's ports: DropTail with ECN marking at `dctcp.marking_threshold_bytes` of
/// instantaneous queue (DCTCP paper §3.1).
pub fn dctcp_ports(spec: &Spec) -> PortPlan {
    let k = spec.dctcp.marking_threshold_bytes;
    PortPlan::droptail(spec, EcnMarking::Instantaneous { threshold_bytes: k })
}

/// A DCTCP-family protocol's parts: hosts with policy `cc` on the `[transport]` window
/// mechanism over DCTCP's ports.
pub fn dctcp_family<C: CongestionControl>(spec: &Spec, cc: C) -> Parts<WindowTransport<C>> {
    let host = WindowTransport::new(WindowParams::from_spec(spec), cc);
    Parts::packets(host, dctcp_ports(spec))
}

/// `transport.protocol = "dctcp"`.
#[derive(Debug)]
pub struct DctcpProtocol;

impl Protocol for DctcpProtocol {
    type Host = WindowTransport<Dctcp>;

    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        dctcp_family(spec, Dctcp::new(spec.dctcp.g, spec.dctcp.initial_alpha))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use dcsim_engine::SimTime;

    /// A context with only the sequence numbers set.
    pub(crate) fn seqs(snd_una: u32, snd_nxt: u32) -> FlowCtx {
        FlowCtx {
            now: SimTime::ZERO,
            size_bytes: 0,
            snd_una,
            snd_nxt,
            deadline: SimTime::MAX,
            srtt: SimTime::ZERO,
        }
    }

    #[test]
    fn alpha_follows_the_marked_fraction_once_per_window() {
        let g = 1.0 / 16.0;
        let mut d = Dctcp::new(g, 0.0);
        // First ACK: snd_una 1 >= window_end 0, so α updates with F = 0, window_end = 10.
        d.on_ack_bookkeeping(1, false, &seqs(1, 10));
        assert_eq!(d.alpha, 0.0);
        // Window 2: 9 packets acked one by one, 3 of them marked; α updates when snd_una = 10.
        for k in 0..9u32 {
            d.on_ack_bookkeeping(1, k % 3 == 0, &seqs(2 + k, 20));
            if 2 + k < 10 {
                assert_eq!(d.alpha, 0.0, "no update inside the window");
            }
        }
        let expected = g * (3.0 / 9.0);
        assert!((d.alpha - expected).abs() < 1e-12, "{}", d.alpha);
        // Window 3: everything marked; α ← (1−g)α + g.
        for k in 0..10u32 {
            d.on_ack_bookkeeping(1, true, &seqs(11 + k, 30));
        }
        let expected = (1.0 - g) * expected + g;
        assert!((d.alpha - expected).abs() < 1e-12);
    }

    #[test]
    fn cuts_by_half_alpha_once_per_window() {
        let mut d = Dctcp::new(1.0 / 16.0, 0.5);
        let mut w = Window { cwnd: 40.0, ssthresh: 1e9, max: 1e9 };
        assert!(d.on_ece(&mut w, &seqs(100, 140)));
        assert_eq!(w.cwnd, 30.0); // 40 × (1 − 0.25)
        assert_eq!(w.ssthresh, 30.0);
        // More ECEs in the same window: no further cut.
        assert!(!d.on_ece(&mut w, &seqs(120, 150)));
        assert_eq!(w.cwnd, 30.0);
        // Once snd_una passes the window end, the next ECE cuts again.
        assert!(d.on_ece(&mut w, &seqs(140, 170)));
        assert_eq!(w.cwnd, 22.5);
    }

    #[test]
    fn a_persistent_connection_keeps_alpha_and_nothing_else() {
        // The previous flow on the connection ends with α = 0.2 and a cut pending in its window.
        let mut previous = Dctcp::new(1.0 / 16.0, 0.2);
        let mut w = Window { cwnd: 40.0, ssthresh: 1e9, max: 1e9 };
        assert!(previous.on_ece(&mut w, &seqs(100, 140)));
        let mut next = Dctcp::new(1.0 / 16.0, 1.0);
        next.carry_over(&previous);
        assert_eq!(next.alpha, 0.2);
        // Its sequence numbers start at 0: the first ECE cuts, by α / 2.
        let mut w = Window { cwnd: 40.0, ssthresh: 1e9, max: 1e9 };
        assert!(next.on_ece(&mut w, &seqs(0, 40)));
        assert_eq!(w.cwnd, 36.0);
    }
}
