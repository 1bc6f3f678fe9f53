//! pFabric's end-host rate control (HotNets'12 §3, SIGCOMM'13 §4.2).
//!
//! pFabric leaves scheduling to the switches ([`crate::queue::PriorityDropQueue`]) and keeps
//! the hosts minimal. Both variants run on the shared window mechanism with: every data packet
//! tagged with the flow's remaining bytes, no fast retransmit, a fixed RTO without backoff
//! (or, with `pfabric.rto = "adaptive"`, TCP's estimate over that floor with backoff: HotNets
//! §3 removes timeout estimation from MinTCP only, and calls LineRate's 40 µs a "minRTO"),
//! and retransmissions that skip packets the receiver already holds (the SACK of the ns-2
//! agent, idealised as in the pHost authors' simulator).
//! With `pfabric.sack_window` the window also counts the packets the receiver holds beyond
//! the first unacknowledged one, as the pHost authors' pFabric does (`Flow::send_pending_data`
//! in their simulator).
//! Every packet the window allows enters the NIC's priority-dropping queue at once, as in the
//! pFabric ns-2 scripts and the pHost authors' simulator; with `pfabric.sending =
//! "nic-clocked"` the host hands its NIC one packet each time it goes idle, from the most
//! urgent flow (HotNets §3 says only that LineRate's flows "send at the NIC line rate").
//!
//! * **MinTCP** ([`MinTcp`]): "12 packet initial window size; no fast-retransmission; no
//!   retransmission timeout estimation, RTO is fixed" (HotNets §3). Growth is TCP's (slow start,
//!   then +1 per window, capped at the maximum window); a timeout sets ssthresh to half the
//!   window and the window to 1. After `probe_after_timeouts` consecutive timeouts the flow
//!   enters probe mode: it sends only a 1-byte probe per RTO until an ACK arrives (reference
//!   §2.4, the ns-2 `prob_cap_`).
//! * **LineRate** ([`LineRate`]): "No rate control ... Flows constantly send at the NIC line
//!   rate" (HotNets §3): the window starts at its maximum and never shrinks; lost packets are
//!   resent after the fixed timeout. (Not in the public scripts; the HotNets text describes
//!   exactly this: MinTCP with no window reduction and no probe mode.)

use super::window::{
    ClassTag, CongestionControl, FlowCtx, PriorityTag, Tagger, Window, WindowParams,
    WindowTransport,
};
use super::{Parts, PortPlan, Protocol, QueuePlan};
use crate::queue::EcnMarking;
use crate::spec::{
    ClassifyBy, Dequeue, DupAckThreshold, PriorityKey, RateControl, RtoMode, Sending, Spec,
    TieBreak,
};
use dcsim_engine::SimTime;

/// MinTCP: TCP's growth and timeout response, nothing else (the mechanism's settings do the
/// rest: fixed RTO, no fast retransmit, probe mode).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct MinTcp;

impl CongestionControl for MinTcp {}

/// LineRate: the window never changes.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct LineRate;

impl CongestionControl for LineRate {
    fn on_ack(&mut self, _w: &mut Window, _acked: u32, _ctx: &FlowCtx) {}
    fn on_fast_retransmit(&mut self, _w: &mut Window, _flight: u32) {}
    fn on_timeout(&mut self, _w: &mut Window) {}
}

/// pFabric's host rate control, chosen by `pfabric.rate_control`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum PfabricRate {
    /// MinTCP.
    MinTcp(MinTcp),
    /// LineRate.
    LineRate(LineRate),
}

impl CongestionControl for PfabricRate {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u32, ctx: &FlowCtx) {
        match self {
            PfabricRate::MinTcp(c) => c.on_ack(w, acked, ctx),
            PfabricRate::LineRate(c) => c.on_ack(w, acked, ctx),
        }
    }
    fn on_fast_retransmit(&mut self, w: &mut Window, flight: u32) {
        match self {
            PfabricRate::MinTcp(c) => c.on_fast_retransmit(w, flight),
            PfabricRate::LineRate(c) => c.on_fast_retransmit(w, flight),
        }
    }
    fn on_timeout(&mut self, w: &mut Window) {
        match self {
            PfabricRate::MinTcp(c) => c.on_timeout(w),
            PfabricRate::LineRate(c) => c.on_timeout(w),
        }
    }
}

/// pFabric's hosts (SIGCOMM'13 §4.2, HotNets'12 §3): fixed RTO, no fast retransmit, SACK,
/// MinTCP's probe mode, the window cap of `[pfabric]`, tagged by `tagger`. LAS uses the same
/// hosts with another tagger.
pub fn pfabric_hosts(spec: &Spec, tagger: Tagger) -> WindowTransport<PfabricRate> {
    let p = &spec.pfabric;
    let max = p.max_window(p.buffer(&spec.transport, &spec.topology));
    let rto = SimTime::from_us_f64(p.rto_us);
    let (initial, cc, probe_after) = match p.rate_control {
        RateControl::Mintcp => {
            (p.initial_window_pkts, PfabricRate::MinTcp(MinTcp), p.probe_after_timeouts)
        }
        RateControl::Linerate => (max, PfabricRate::LineRate(LineRate), 0),
    };
    let params = WindowParams {
        initial_window: initial,
        max_window: max,
        rto_mode: p.rto,
        min_rto: rto,
        max_rto: match p.rto {
            RtoMode::Fixed => rto,
            RtoMode::Adaptive => SimTime::from_us_f64(p.max_rto_us),
        },
        dupack: DupAckThreshold::Off,
        sack_skip: true,
        sack_window: p.sack_window,
        partitioned: spec.engine.partitioned,
        probe_after,
        tagger,
        persistent: false,
        nic_clocked: p.sending == Sending::NicClocked,
    };
    WindowTransport::new(params, cc)
}

/// pFabric's ports: priority dropping (SIGCOMM'13 §4.1), or with `pfabric.queues` > 0 that
/// many strict-priority queues (§6), over `pfabric.buffer_bytes`.
pub fn pfabric_ports(spec: &Spec, few_queues: bool) -> PortPlan {
    let p = &spec.pfabric;
    let queue = if few_queues && p.queues > 0 {
        QueuePlan::StrictPriority { queues: p.queues as usize, reserved_bytes: p.reserved_bytes }
    } else {
        QueuePlan::PriorityDrop {
            queue_order_ties: p.ties == TieBreak::QueueOrder,
            most_urgent_first: p.dequeue == Dequeue::MostUrgent,
        }
    };
    PortPlan {
        queue,
        marking: EcnMarking::Off,
        buffer_bytes: p.buffer(&spec.transport, &spec.topology),
    }
}

/// `transport.protocol = "pfabric"`.
#[derive(Debug)]
pub struct PfabricProtocol;

impl Protocol for PfabricProtocol {
    type Host = WindowTransport<PfabricRate>;

    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        let p = &spec.pfabric;
        let priority = match p.priority {
            PriorityKey::Remaining => PriorityTag::Remaining,
            key => PriorityTag::Deadline {
                rate: spec.topology.host_rate(),
                quench: key == PriorityKey::Deadline,
            },
        };
        let class = match p.classify {
            _ if p.thresholds.is_empty() => ClassTag::Single,
            ClassifyBy::FlowSize => ClassTag::FlowSize(p.thresholds.clone()),
            ClassifyBy::Remaining => ClassTag::Remaining(p.thresholds.clone()),
        };
        Parts::packets(pfabric_hosts(spec, Tagger { priority, class }), pfabric_ports(spec, true))
    }
}

#[cfg(test)]
mod tests {
    use super::super::dctcp::tests::seqs;
    use super::*;

    #[test]
    fn linerate_never_changes_its_window_and_mintcp_backs_off() {
        let mut w = Window { cwnd: 14.0, ssthresh: f64::INFINITY, max: 14.0 };
        let mut l = LineRate;
        l.on_ack(&mut w, 3, &seqs(0, 0));
        l.on_timeout(&mut w);
        assert_eq!(w.cwnd, 14.0);
        let mut m = MinTcp;
        m.on_timeout(&mut w);
        assert_eq!((w.cwnd, w.ssthresh), (1.0, 7.0));
        m.on_ack(&mut w, 1, &seqs(0, 0));
        assert_eq!(w.cwnd, 2.0);
    }
}
