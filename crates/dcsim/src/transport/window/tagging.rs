//! Packet tagging: the priority number and the strict-priority class a window protocol writes
//! into each data packet, chosen per protocol (no protocol flags in the mechanism).
//!
//! * Priority numbers (lower is more urgent) feed pFabric's priority-dropping ports: the
//!   flow's remaining bytes (pFabric SRPT, SIGCOMM'13 §4.1), the bytes sent before the packet
//!   (LAS, PIAS NSDI'15 §5), or the flow's deadline (pFabric EDF, SIGCOMM'13 §4.1).
//! * Classes feed strict-priority multi-queue ports: one class per flow from its size
//!   (few-queue pFabric, SIGCOMM'13 §6.1), from the remaining bytes at each packet (the pFabric
//!   authors' ns-2 `calPrio`), or PIAS's multi-level feedback queue from the bytes sent
//!   (PIAS NSDI'15 §3.1).

use crate::units::{BitRate, MSS_BYTES};
use dcsim_engine::SimTime;

/// The lowest pFabric priority (larger than any deadline in picoseconds).
pub const LOWEST_PRIORITY: u64 = u64::MAX / 2;

/// Where a data packet's priority number comes from.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum PriorityTag {
    /// The flow's remaining (unacknowledged) bytes.
    Remaining,
    /// The packet's byte offset in its flow: the bytes sent before it.
    BytesSent,
    /// The flow's absolute deadline ([`edf_priority`]).
    Deadline {
        /// The line rate at which "can it still make it" is judged.
        rate: BitRate,
        /// Give hopeless flows the lowest priority.
        quench: bool,
    },
}

/// Where a data packet's strict-priority class (its queue at multi-queue ports) comes from.
/// Thresholds are increasing byte counts: class k for values ≤ `thresholds[k]`, the last class
/// above them all.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ClassTag {
    /// Every packet in class 0.
    Single,
    /// One class per flow, from its size.
    FlowSize(Vec<u64>),
    /// From the flow's remaining bytes when the packet is sent: a long flow climbs as it
    /// nears its end.
    Remaining(Vec<u64>),
    /// PIAS's MLFQ: from the bytes the flow sent before this packet, counted from the last
    /// reset; a retransmission keeps its class.
    BytesSent {
        /// Demotion thresholds.
        thresholds: Vec<u64>,
        /// After this many consecutive timeouts the count restarts at the first
        /// unacknowledged packet (PIAS §3.2's guard against starvation); 0 = never.
        reset_after_timeouts: u32,
    },
}

/// A protocol's tagging rule.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tagger {
    /// The priority number.
    pub priority: PriorityTag,
    /// The class.
    pub class: ClassTag,
}

/// What the tagger needs to know about a data packet.
#[derive(Copy, Clone, Debug)]
pub struct TagCtx {
    /// Now.
    pub now: SimTime,
    /// The packet's sequence number.
    pub seq: u32,
    /// The flow's remaining (unacknowledged) bytes.
    pub remaining: u64,
    /// The flow's class from its size ([`Tagger::flow_class`]).
    pub flow_class: u8,
    /// The packet the MLFQ count starts from.
    pub tag_base: u32,
    /// The flow's absolute deadline.
    pub deadline: SimTime,
}

impl Tagger {
    /// Remaining bytes, class 0: what a single-queue port sees from TCP and DCTCP.
    pub const PLAIN: Tagger = Tagger { priority: PriorityTag::Remaining, class: ClassTag::Single };

    /// A flow's class fixed at its start (flow-size classes; 0 for the others).
    pub fn flow_class(&self, size_bytes: u64) -> u8 {
        match &self.class {
            ClassTag::FlowSize(t) => mlfq_class(t, size_bytes),
            _ => 0,
        }
    }

    /// The priority number and class of a data packet.
    #[inline(always)]
    pub fn tag(&self, c: &TagCtx) -> (u64, u8) {
        let priority = match &self.priority {
            PriorityTag::Remaining => c.remaining,
            PriorityTag::BytesSent => c.seq as u64 * MSS_BYTES as u64,
            PriorityTag::Deadline { rate, quench } => {
                edf_priority(c.now, c.deadline, c.remaining, *rate, *quench)
            }
        };
        let class = match &self.class {
            ClassTag::Single => 0,
            ClassTag::FlowSize(_) => c.flow_class,
            ClassTag::Remaining(t) => mlfq_class(t, c.remaining),
            ClassTag::BytesSent { thresholds, .. } => {
                mlfq_class(thresholds, c.seq.saturating_sub(c.tag_base) as u64 * MSS_BYTES as u64)
            }
        };
        (priority, class)
    }

    /// True if a flow with this many consecutive timeouts starts its MLFQ count over.
    #[inline]
    pub fn resets_after(&self, consecutive_timeouts: u32) -> bool {
        matches!(&self.class, ClassTag::BytesSent { reset_after_timeouts: r, .. }
            if *r > 0 && consecutive_timeouts >= *r)
    }
}

/// The MLFQ class of `value`: the first class whose threshold it does not exceed; the last
/// class beyond them all (PIAS §3.1).
#[inline]
pub fn mlfq_class(thresholds: &[u64], value: u64) -> u8 {
    thresholds.partition_point(|&t| t < value) as u8
}

/// pFabric's EDF priority (SIGCOMM'13 §4.1, the authors' ns-2 deadline patch): the flow's
/// absolute deadline, unless it has none, or (with `quench`) has passed it or cannot make it
/// even alone at line rate — then the lowest priority, so hopeless flows stop taking bandwidth
/// from flows that can still meet theirs. Without `quench` (the pHost authors' simulator) the
/// deadline stays the priority.
pub fn edf_priority(
    now: SimTime,
    deadline: SimTime,
    remaining_bytes: u64,
    rate: BitRate,
    quench: bool,
) -> u64 {
    let hopeless = now >= deadline || rate.tx_time(remaining_bytes) > deadline - now;
    if deadline == SimTime::MAX || (quench && hopeless) {
        LOWEST_PRIORITY
    } else {
        deadline.as_ps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mlfq_tags_follow_the_byte_offset() {
        // Thresholds α1 = 2 packets, α2 = 4 packets (bytes): offsets 0, 1460, 2920 are in
        // queue 0 (offset ≤ α1), 4380 and 5840 in queue 1, beyond in queue 2. The tag is a
        // function of the offset alone, so a retransmission of a packet gets the same tag.
        let t = [2 * 1460, 4 * 1460];
        let tags: Vec<u8> = (0..7u64).map(|seq| mlfq_class(&t, seq * 1460)).collect();
        assert_eq!(tags, vec![0, 0, 0, 1, 1, 2, 2]);
        assert_eq!(mlfq_class(&[], 1_000_000), 0, "no thresholds: one queue");
    }

    #[test]
    fn edf_priority_quenches_hopeless_flows() {
        let ten = BitRate::from_gbps(10.0);
        let us = SimTime::from_us;
        // 10 µs left, 10 000 bytes need 8 µs: the deadline is the priority.
        assert_eq!(edf_priority(us(100), us(110), 10_000, ten, true), us(110).as_ps());
        // 20 000 bytes need 16 µs > 10 µs left: lowest.
        assert_eq!(edf_priority(us(100), us(110), 20_000, ten, true), LOWEST_PRIORITY);
        // Past the deadline, or none at all: lowest.
        assert_eq!(edf_priority(us(120), us(110), 1, ten, true), LOWEST_PRIORITY);
        assert_eq!(edf_priority(us(0), SimTime::MAX, 1, ten, true), LOWEST_PRIORITY);
        // An earlier deadline is more urgent.
        assert!(
            edf_priority(us(0), us(50), 1000, ten, true)
                < edf_priority(us(0), us(60), 1000, ten, true)
        );
        // Without quenching, a hopeless flow keeps its deadline.
        assert_eq!(edf_priority(us(120), us(110), 1, ten, false), us(110).as_ps());
        assert_eq!(edf_priority(us(0), SimTime::MAX, 1, ten, false), LOWEST_PRIORITY);
    }

    #[test]
    fn each_tagger_tags_as_its_protocol_does() {
        let ctx = TagCtx {
            now: SimTime::ZERO,
            seq: 5,
            remaining: 10_000,
            flow_class: 2,
            tag_base: 2,
            deadline: SimTime::MAX,
        };
        let t = |priority, class| Tagger { priority, class };
        let th = vec![1460, 4380];
        assert_eq!(Tagger::PLAIN.tag(&ctx), (10_000, 0));
        assert_eq!(t(PriorityTag::BytesSent, ClassTag::Single).tag(&ctx), (7300, 0));
        assert_eq!(t(PriorityTag::Remaining, ClassTag::FlowSize(th.clone())).tag(&ctx).1, 2);
        assert_eq!(t(PriorityTag::Remaining, ClassTag::Remaining(th.clone())).tag(&ctx).1, 2);
        // MLFQ: (5 − 2) packets sent before this one = 4380 bytes ≤ 4380: class 1.
        let mlfq = t(
            PriorityTag::Remaining,
            ClassTag::BytesSent { thresholds: th.clone(), reset_after_timeouts: 3 },
        );
        assert_eq!(mlfq.tag(&ctx).1, 1);
        assert!(!mlfq.resets_after(2) && mlfq.resets_after(3));
        assert!(!Tagger::PLAIN.resets_after(100));
        assert_eq!(t(PriorityTag::Remaining, ClassTag::FlowSize(th)).flow_class(5000), 2);
    }
}
