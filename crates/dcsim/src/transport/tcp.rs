//! TCP NewReno (RFC 5681 congestion control, RFC 6582 recovery): the policy is the trait's
//! defaults; the recovery logic lives in the shared mechanism ([`super::window`]).
//! In the pFabric evaluation this is "TCP-DropTail" (reference §7.2).

use super::CongestionControl;

/// NewReno: slow start, congestion avoidance, halving on fast retransmit, cwnd = 1 on timeout.
#[derive(Clone, Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {}

#[cfg(test)]
mod tests {
    use super::super::Window;
    use super::*;

    #[test]
    fn slow_start_then_avoidance_then_loss() {
        let mut r = Reno;
        let mut w = Window { cwnd: 2.0, ssthresh: 4.0, max: 100.0 };
        r.on_ack(&mut w, 1);
        r.on_ack(&mut w, 1);
        assert_eq!(w.cwnd, 4.0); // slow start: +1 per ACKed packet
        r.on_ack(&mut w, 1);
        assert_eq!(w.cwnd, 4.25); // avoidance: +1/cwnd
        r.on_fast_retransmit(&mut w, 10);
        assert_eq!((w.cwnd, w.ssthresh), (5.0, 5.0));
        r.on_timeout(&mut w);
        assert_eq!((w.cwnd, w.ssthresh), (1.0, 2.5));
        let mut capped = Window { cwnd: 99.5, ssthresh: 1e9, max: 100.0 };
        r.on_ack(&mut capped, 5);
        assert_eq!(capped.cwnd, 100.0);
    }
}
