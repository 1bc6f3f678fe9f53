//! TCP NewReno (RFC 5681 congestion control, RFC 6582 recovery): the policy is the trait's
//! defaults; the recovery logic lives in the shared mechanism ([`super::window`]).
//! In the pFabric evaluation this is "TCP-DropTail" (SIGCOMM'13 §5).

use super::window::{CongestionControl, WindowParams, WindowTransport};
use super::{Parts, PortPlan, Protocol};
use crate::queue::EcnMarking;
use crate::spec::Spec;

/// NewReno: slow start, congestion avoidance, halving on fast retransmit, cwnd = 1 on timeout.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Reno;

impl CongestionControl for Reno {}

/// `transport.protocol = "tcp"`: NewReno hosts over DropTail ports.
#[derive(Debug)]
pub struct TcpProtocol;

impl Protocol for TcpProtocol {
    type Host = WindowTransport<Reno>;

    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        let host = WindowTransport::new(WindowParams::from_spec(spec), Reno);
        Parts::packets(host, PortPlan::droptail(spec, EcnMarking::Off))
    }
}

#[cfg(test)]
mod tests {
    use super::super::window::{FlowCtx, Window};
    use super::*;

    const CTX: FlowCtx = FlowCtx {
        now: dcsim_engine::SimTime::ZERO,
        size_bytes: 0,
        snd_una: 0,
        snd_nxt: 0,
        deadline: dcsim_engine::SimTime::MAX,
        srtt: dcsim_engine::SimTime::ZERO,
    };

    #[test]
    fn slow_start_then_avoidance_then_loss() {
        let mut r = Reno;
        let mut w = Window { cwnd: 2.0, ssthresh: 4.0, max: 100.0 };
        r.on_ack(&mut w, 1, &CTX);
        r.on_ack(&mut w, 1, &CTX);
        assert_eq!(w.cwnd, 4.0); // slow start: +1 per ACKed packet
        r.on_ack(&mut w, 1, &CTX);
        assert_eq!(w.cwnd, 4.25); // avoidance: +1/cwnd
        r.on_fast_retransmit(&mut w, 10);
        assert_eq!((w.cwnd, w.ssthresh), (5.0, 5.0));
        r.on_timeout(&mut w);
        assert_eq!((w.cwnd, w.ssthresh), (1.0, 2.5));
        let mut capped = Window { cwnd: 99.5, ssthresh: 1e9, max: 100.0 };
        r.on_ack(&mut capped, 5, &CTX);
        assert_eq!(capped.cwnd, 100.0);
    }
}
