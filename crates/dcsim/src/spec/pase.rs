//! `[pase]`: PASE's arbitration and end hosts (Munir et al., SIGCOMM'14). The paper's design
//! section is not in the text available here, so every value it does not state is a field
//! with a documented default (`docs/model.md` gives the reasons and a sensitivity table).

use super::reader::Section;
use crate::error::SpecError;
use serde::Serialize;

crate::choice! {
    /// Which arbitrators a flow consults.
    pub enum PaseArbitration {
        /// Every link of the path, bottom up: the end hosts for their access links, the
        /// switches' arbitrators for the fabric's links (SIGCOMM'14 §3).
        EndToEnd = "end-to-end",
        /// Only the end hosts, for their own access links (the "local arbitration" of
        /// Fig. 12a).
        Local = "local",
    }
}

crate::choice! {
    /// The order arbitrators serve flows in.
    pub enum PaseOrder {
        /// Fewest bytes left first.
        Srpt = "srpt",
        /// Earliest deadline first (flows without one last).
        Edf = "edf",
    }
}

crate::choice! {
    /// Where earliest-deadline-first arbitration puts a flow that can no longer meet its
    /// deadline.
    pub enum PaseLateFlows {
        /// After every flow that still can (among themselves, by deadline): a flow past its
        /// deadline, or whose bytes left take longer than the time left at its host's line
        /// rate. pFabric's rule for such flows in the pFabric ns-2 patch; PASE's text does
        /// not say (`docs/model.md`).
        Last = "last",
        /// Plain EDF: a flow keeps its deadline's place after the deadline has passed.
        Ahead = "ahead",
    }
}

crate::choice! {
    /// How a flow's window follows its arbitration.
    pub enum PaseRateControl {
        /// PASE: the top queue sends at the reference rate (window = rate × RTT), the middle
        /// queues run DCTCP, the lowest queue holds its data and probes.
        Pase = "pase",
        /// PASE-DCTCP (Fig. 13a): every flow a plain DCTCP source, still put in the queue
        /// arbitration gives it.
        Dctcp = "dctcp",
    }
}

/// `[pase]`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PaseSpec {
    /// Strict-priority queues per port, 2-8 (8: the testbed's).
    pub queues: u32,
    /// `end-to-end` (default) or `local`.
    pub arbitration: PaseArbitration,
    /// `srpt` (default) or `edf`.
    pub order: PaseOrder,
    /// Under `edf`: `last` (default) or `ahead`, where a flow that can no longer meet its
    /// deadline is arbitrated.
    pub late_flows: PaseLateFlows,
    /// `pase` (default) or `dctcp` (PASE-DCTCP).
    pub rate_control: PaseRateControl,
    /// Early pruning: a request whose queue so far is this deep or deeper stops at the first
    /// switch arbitrator, which answers it (the flow is low priority whatever the links
    /// above say). 0 = off; default half the queues.
    pub pruning_queue: u32,
    /// Re-arbitration period, in the path's base round-trip times (1).
    pub rearbitrate_rtts: f64,
    /// A flow keeps one request out: one not answered after this many base RTTs is sent
    /// again, and each further miss doubles the wait, up to 64 times (8).
    pub request_timeout_rtts: f64,
    /// Base rate of a flow not in the top queue of some link: packets per base RTT (1).
    pub base_rate_pkts_per_rtt: f64,
    /// Lowest-queue flows send a header-only probe every RTT instead of data (true); false:
    /// they send data with a window of one packet.
    pub probing: bool,
    /// Delegation: links above the racks are arbitrated by the racks' arbitrators on shares
    /// of the link their parent delegates to them (true).
    pub delegation: bool,
    /// Delegated shares are resized every this many base RTTs of the longest path (10).
    pub delegation_period_rtts: f64,
    /// Wire size of arbitration requests, responses and releases, bytes (40: a header; at
    /// most 200, a header and a few fields: a request per flow per RTT of a full packet's
    /// size would take a loaded link from the data).
    pub control_bytes: u32,
}

/// Resolves `[pase]`.
pub fn resolve(p: &Section<'_>) -> Result<PaseSpec, SpecError> {
    let queues = p.u32_in("queues", 8, 2, 8)?;
    let spec = PaseSpec {
        queues,
        arbitration: p.choice("arbitration", PaseArbitration::EndToEnd)?,
        order: p.choice("order", PaseOrder::Srpt)?,
        late_flows: p.choice("late_flows", PaseLateFlows::Last)?,
        rate_control: p.choice("rate_control", PaseRateControl::Pase)?,
        pruning_queue: p.u32_in("pruning_queue", queues / 2, 0, 8)?,
        rearbitrate_rtts: p.f64_in(
            "rearbitrate_rtts",
            1.0,
            0.1,
            1e4,
            "must be a positive number of RTTs",
        )?,
        request_timeout_rtts: p.f64_in(
            "request_timeout_rtts",
            8.0,
            0.1,
            1e4,
            "must be a positive number of RTTs",
        )?,
        base_rate_pkts_per_rtt: p.f64_in(
            "base_rate_pkts_per_rtt",
            1.0,
            0.01,
            1e4,
            "must be a positive number of packets per RTT",
        )?,
        probing: p.bool("probing", true)?,
        delegation: p.bool("delegation", true)?,
        delegation_period_rtts: p.f64_in(
            "delegation_period_rtts",
            10.0,
            0.1,
            1e4,
            "must be a positive number of RTTs",
        )?,
        control_bytes: p.u32_in("control_bytes", 40, 40, 200)?,
    };
    if spec.pruning_queue >= queues {
        return Err(SpecError::new(
            p.field("pruning_queue"),
            format!("{} must be below `pase.queues` = {queues} (or 0 = off)", spec.pruning_queue),
        ));
    }
    Ok(spec)
}
