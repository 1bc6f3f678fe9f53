//! `[pfabric]`: pFabric's hosts and ports (HotNets'12 §3, SIGCOMM'13 §4-6), also LAS's.

use super::derived::{cdf_of_workload, given_or_computed};
use super::reader::Section;
use super::reader::{MAX_BUFFER_BYTES, MAX_WINDOW_PKTS};
use super::topology::TopologySpec;
use super::transport::{RtoMode, TransportSpec};
use super::workload::WorkloadSpec;
use crate::error::SpecError;
use serde::Serialize;

crate::choice! {
    /// pFabric's end-host rate control.
    pub enum RateControl {
        /// MinTCP: initial window 12, no fast retransmit, fixed RTO, window back to 1 and slow
        /// start after a timeout, probe mode after consecutive timeouts.
        Mintcp = "mintcp",
        /// LineRate: no rate control; the window stays at its maximum; fixed-RTO
        /// retransmission.
        Linerate = "linerate",
    }
}

/// `[pfabric]` (pFabric HotNets'12 §3, SIGCOMM'13 §4-6).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PfabricSpec {
    /// `mintcp` (default) or `linerate`.
    pub rate_control: RateControl,
    /// Per-port buffer, bytes; 0 (default) = `transport.buffer_bytes` or `topology.buffer_bytes`.
    /// 22500 in HotNets'12, 36000 in the SIGCOMM'13 scripts.
    pub buffer_bytes: u64,
    /// The RTO, µs (with `rto = "adaptive"` its floor, the minRTO). Default 45 (SIGCOMM'13
    /// scripts); 40 in HotNets'12.
    pub rto_us: f64,
    /// `fixed` (default): always `rto_us`, no estimation, no backoff, as HotNets'12 §3 gives
    /// MinTCP. `adaptive`: TCP's estimate max(`rto_us`, srtt + 4·rttvar), doubled per
    /// consecutive timeout up to `max_rto_us`: a reading of HotNets'12 §3, which removes
    /// timeout estimation from MinTCP only and calls LineRate's 40 µs a "minRTO".
    pub rto: RtoMode,
    /// The largest RTO with `rto = "adaptive"`, µs. Default 2,000,000 (as `transport`'s).
    pub max_rto_us: f64,
    /// Initial window, packets. Default 12.
    pub initial_window_pkts: u32,
    /// Largest window, packets; 0 (default) = what the flow's queue holds, in packets, minus 1,
    /// at least the initial window (the `maxcwnd` rule of the pFabric authors' ns-2 scripts); the resolved
    /// spec shows the value.
    pub max_window_pkts: u32,
    /// MinTCP enters probe mode after this many consecutive timeouts; 0 = never. Default 5.
    pub probe_after_timeouts: u32,
    /// The window also admits one packet for each packet the receiver holds beyond the first
    /// unacknowledged one, as its latest ACK reports them (the pHost authors' simulator:
    /// window = cwnd · MSS + SACKed bytes, `Flow::send_pending_data`), so a flow with a hole
    /// keeps sending until its timeout. Default false: the window is cwnd packets from the
    /// first unacknowledged one.
    pub sack_window: bool,
    /// How the ports break ties between equally urgent packets: `random` (default, HotNets'12
    /// §2.2) or `queue-order` (the earliest of the most urgent is sent, the latest of the
    /// least urgent dropped: the pFabric ns-2 patch's `drop-tail.cc` and the pHost authors'
    /// `PFabricQueue`).
    pub ties: TieBreak,
    /// What the priority-dropping ports send: `flow-earliest` (default: the earliest packet
    /// of the flow holding the most urgent packet, SIGCOMM'13 §4.1's starvation rule) or
    /// `most-urgent` (that packet itself, as HotNets'12 §2.2 states the rule).
    pub dequeue: Dequeue,
    /// How a host hands its flows' packets to its NIC: `queue` (default: every packet the
    /// window allows enters the NIC's priority-dropping queue at once, where the least urgent
    /// are dropped when it overflows, as in the pFabric ns-2 scripts and the pHost authors'
    /// simulator) or `nic-clocked` (one packet each time the NIC goes idle, from the most
    /// urgent flow with room in its window: no host drops its own packets, and a packet's
    /// retransmission timer starts when it leaves the host).
    pub sending: Sending,
    /// 0 (default): pFabric's unlimited priorities (priority dropping). 1-8: pFabric over that
    /// many strict-priority FIFO queues sharing `buffer_bytes` (SIGCOMM'13 §6), flows mapped
    /// to queues by size with `thresholds`.
    pub queues: u32,
    /// Flow-size thresholds in bytes (`queues − 1` of them, increasing): a flow of size ≤
    /// `thresholds[k]` (and above the previous one) uses queue k. Computed from
    /// `threshold_method` when not given.
    pub thresholds: Vec<u64>,
    /// `mg1` (default: the paper's M/G/1 model, optimised for the workload and load) or
    /// `equal-split` (each queue gets the same fraction of flows).
    pub threshold_method: ThresholdMethod,
    /// Buffer reserved for each queue, bytes; the rest of `buffer_bytes` is shared first come
    /// first served. Default 15000 (SIGCOMM'13 §6.2).
    pub reserved_bytes: u64,
    /// How a packet's queue is chosen with `queues > 0`: `flow-size` (default: the flow's
    /// size against `thresholds`, the model of SIGCOMM'13 §6.1) or `remaining` (the flow's
    /// remaining bytes when the packet is sent, so a long flow moves up as it nears its end:
    /// what the authors' ns-2 code does, `calPrio` on the priority number, in the pFabric ns-2 patch).
    pub classify: ClassifyBy,
    /// What a packet's priority number is: `remaining` (default: the flow's remaining bytes,
    /// SRPT) or `deadline` (the flow's absolute deadline, EDF; a flow that can no longer make
    /// it, or has none, gets the lowest priority; pFabric SIGCOMM'13 §4.1 and the authors' ns-2 deadline patch).
    pub priority: PriorityKey,
}

crate::choice! {
    /// How pFabric's ports break ties between equally urgent packets.
    pub enum TieBreak {
        /// At random (HotNets'12 §2.2: "ties are broken at random").
        Random = "random",
        /// By queue order: the earliest most urgent packet is sent, the latest least urgent
        /// one dropped (the authors' ns-2 patch and the pHost authors' simulator).
        QueueOrder = "queue-order",
    }
}

crate::choice! {
    /// Which packet pFabric's priority-dropping ports send.
    pub enum Dequeue {
        /// The earliest packet of the flow that holds the most urgent one (SIGCOMM'13 §4.1).
        FlowEarliest = "flow-earliest",
        /// The most urgent packet (HotNets'12 §2.2).
        MostUrgent = "most-urgent",
    }
}

crate::choice! {
    /// How pFabric's hosts hand their packets to their NIC.
    pub enum Sending {
        /// Every packet the window allows enters the NIC's queue at once.
        Queue = "queue",
        /// One packet each time the NIC goes idle, from the most urgent flow.
        NicClocked = "nic-clocked",
    }
}

crate::choice! {
    /// How few-queue pFabric maps a packet to a queue.
    pub enum ClassifyBy {
        /// The flow's size: one queue for the whole flow.
        FlowSize = "flow-size",
        /// The flow's remaining bytes at each packet.
        Remaining = "remaining",
    }
}

crate::choice! {
    /// pFabric's priority number.
    pub enum PriorityKey {
        /// Remaining flow size (SRPT).
        Remaining = "remaining",
        /// Absolute deadline (EDF), quenching hopeless flows (pFabric's ns-2 patch).
        Deadline = "deadline",
        /// Absolute deadline (EDF), hopeless flows included (the pHost authors' simulator).
        DeadlineStrict = "deadline-strict",
    }
}

crate::choice! {
    /// How few-queue thresholds are chosen.
    pub enum ThresholdMethod {
        /// Minimise the M/G/1 priority-queue model's mean normalized FCT (SIGCOMM'13 §6.1).
        Mg1 = "mg1",
        /// Equal fractions of flows per queue.
        EqualSplit = "equal-split",
    }
}

impl PfabricSpec {
    /// The per-port buffer pFabric runs get.
    pub fn buffer(&self, transport: &TransportSpec, topo: &TopologySpec) -> u64 {
        if self.buffer_bytes > 0 {
            self.buffer_bytes
        } else {
            transport.port_buffer(topo)
        }
    }

    /// The window cap: as given, or one packet less than the queue a flow uses can hold (the
    /// `maxcwnd = queue − 1` rule of the pFabric authors' ns-2 scripts). With a few queues that is the
    /// queue's reservation plus the shared part, `buffer − (queues − 1)·reserved`: a larger
    /// window would overflow the flow's own NIC queue.
    pub fn max_window(&self, buffer: u64) -> u32 {
        if self.max_window_pkts > 0 {
            return self.max_window_pkts;
        }
        let usable = if self.queues > 0 {
            buffer.saturating_sub((self.queues as u64 - 1) * self.reserved_bytes)
        } else {
            buffer
        };
        ((usable / crate::units::MTU_BYTES as u64) as u32)
            .saturating_sub(1)
            .max(self.initial_window_pkts)
    }
}

/// Resolves `[pfabric]`; thresholds are computed for the workload when not given.
pub fn resolve(
    pf: &Section<'_>,
    transport: &TransportSpec,
    topology: &TopologySpec,
    workload: &WorkloadSpec,
) -> Result<PfabricSpec, SpecError> {
    let mut pfabric = PfabricSpec {
        rate_control: pf.choice("rate_control", RateControl::Mintcp)?,
        buffer_bytes: pf.bytes_in("buffer_bytes", 0, 0, MAX_BUFFER_BYTES)?,
        rto_us: pf.f64_in("rto_us", 45.0, 0.001, 1e9, "must be a positive time in µs")?,
        rto: pf.choice("rto", RtoMode::Fixed)?,
        max_rto_us: pf.f64_in(
            "max_rto_us",
            2_000_000.0,
            0.001,
            1e10,
            "must be a positive time in µs",
        )?,
        initial_window_pkts: pf.u32_in("initial_window_pkts", 12, 1, 1_000_000)?,
        max_window_pkts: pf.u32_in("max_window_pkts", 0, 0, MAX_WINDOW_PKTS)?,
        probe_after_timeouts: pf.u32_in("probe_after_timeouts", 5, 0, 1_000_000)?,
        sack_window: pf.bool("sack_window", false)?,
        ties: pf.choice("ties", TieBreak::Random)?,
        dequeue: pf.choice("dequeue", Dequeue::FlowEarliest)?,
        sending: pf.choice("sending", Sending::Queue)?,
        queues: pf.u32_in("queues", 0, 0, 8)?,
        thresholds: Vec::new(),
        threshold_method: pf.choice("threshold_method", ThresholdMethod::Mg1)?,
        reserved_bytes: pf.bytes("reserved_bytes", 15_000)?,
        classify: pf.choice("classify", ClassifyBy::FlowSize)?,
        priority: pf.choice("priority", PriorityKey::Remaining)?,
    };
    if pfabric.buffer_bytes > 0 && pfabric.buffer_bytes < crate::units::MTU_BYTES as u64 {
        return Err(SpecError::new(
            "pfabric.buffer_bytes",
            format!("{} bytes cannot hold one 1500-byte packet", pfabric.buffer_bytes),
        ));
    }
    // Only the adaptive RTO reads the cap: a fixed RTO above the default cap is no error.
    if pfabric.rto == RtoMode::Adaptive && pfabric.max_rto_us < pfabric.rto_us {
        return Err(SpecError::new(
            pf.field("max_rto_us"),
            format!("{} is below `pfabric.rto_us` = {}", pfabric.max_rto_us, pfabric.rto_us),
        ));
    }
    if pfabric.max_window_pkts > 0 && pfabric.max_window_pkts < pfabric.initial_window_pkts {
        return Err(SpecError::new(
            "pfabric.max_window_pkts",
            format!(
                "{} is below `pfabric.initial_window_pkts` = {}",
                pfabric.max_window_pkts, pfabric.initial_window_pkts
            ),
        ));
    }
    // The per-queue reservations must fit the buffer (SIGCOMM'13 §6.2: 15 KB per queue of a
    // 225 KB buffer). The default is 15 KB, or an equal split of a smaller buffer; a given
    // value that cannot fit is an error.
    if pfabric.queues > 0 {
        let buffer = pfabric.buffer(transport, topology);
        let fair = buffer / pfabric.queues as u64;
        if pf.raw("reserved_bytes").is_none() {
            pfabric.reserved_bytes = pfabric.reserved_bytes.min(fair);
        } else if pfabric.reserved_bytes > fair {
            return Err(SpecError::new(
                pf.field("reserved_bytes"),
                format!(
                    "{} queues × {} B reserved exceed the {buffer} B buffer: reserve at most {fair} B per queue, or enlarge `pfabric.buffer_bytes`",
                    pfabric.queues, pfabric.reserved_bytes
                ),
            ));
        }
    }
    let given = pf.byte_list("thresholds")?;
    let k = pfabric.queues as usize;
    pfabric.thresholds = if k == 0 {
        if given.is_some_and(|v| !v.is_empty()) {
            return Err(SpecError::new(
                pf.field("thresholds"),
                "thresholds need `pfabric.queues` of 1-8",
            ));
        }
        Vec::new()
    } else {
        let method = pfabric.threshold_method;
        given_or_computed(pf, given, k, || {
            let d = crate::thresholds::SizeDist::from_cdf(&cdf_of_workload(pf, workload)?);
            Ok(match method {
                ThresholdMethod::Mg1 => crate::thresholds::optimise(&d, workload.load, 0.0, k),
                ThresholdMethod::EqualSplit => crate::thresholds::equal_split(&d, k),
            })
        })?
    };
    // Resolve the derived window cap so the spec shows (and a run's identity covers) it.
    pfabric.max_window_pkts = pfabric.max_window(pfabric.buffer(transport, topology));
    Ok(pfabric)
}
