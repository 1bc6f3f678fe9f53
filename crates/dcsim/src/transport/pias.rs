//! PIAS (Bai et al., NSDI'15): information-agnostic flow scheduling with commodity switches.
//!
//! * **End hosts (§3.1).** DCTCP rate control; each packet is tagged with the queue its byte
//!   offset in the flow falls in (a multi-level feedback queue: a flow starts in the top queue
//!   and is demoted as it sends more, by the demotion thresholds `pias.thresholds`).
//! * **Switches (§3.2, §4.1.2).** `pias.queues` strict-priority FIFOs per port over one shared
//!   buffer with tail drop, at NICs too; ECN marking at DCTCP's threshold on the whole port
//!   (`per-port`), the packet's own queue (`per-queue`), or not at all.
//! * **Thresholds (§3.3).** Given, the authors' published values, the closed form, or equal
//!   split (resolved in the spec, `docs/thresholds.md`).

use super::dctcp::Dctcp;
use super::window::{ClassTag, PriorityTag, Tagger, WindowParams, WindowTransport};
use super::{Parts, PortPlan, Protocol, QueuePlan};
use crate::queue::EcnMarking;
use crate::spec::{PiasEcn, Spec};

/// `transport.protocol = "pias"`.
#[derive(Debug)]
pub struct PiasProtocol;

impl Protocol for PiasProtocol {
    type Host = WindowTransport<Dctcp>;

    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        let pi = &spec.pias;
        let mut params = WindowParams::from_spec(spec);
        params.tagger = Tagger {
            priority: PriorityTag::Remaining,
            class: ClassTag::BytesSent {
                thresholds: pi.thresholds.clone(),
                reset_after_timeouts: pi.reset_after_timeouts,
            },
        };
        let threshold_bytes = spec.dctcp.marking_threshold_bytes;
        let marking = match pi.ecn {
            PiasEcn::PerPort => EcnMarking::Instantaneous { threshold_bytes },
            PiasEcn::PerQueue => EcnMarking::PerQueue { threshold_bytes },
            PiasEcn::Off => EcnMarking::Off,
        };
        let ports = PortPlan {
            queue: QueuePlan::StrictPriority { queues: pi.queues as usize, reserved_bytes: 0 },
            marking,
            buffer_bytes: spec.transport.port_buffer(&spec.topology),
        };
        let cc = Dctcp::new(spec.dctcp.g, spec.dctcp.initial_alpha);
        Parts::packets(WindowTransport::new(params, cc), ports)
    }
}
