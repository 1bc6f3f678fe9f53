//! LAS, least attained service (PIAS NSDI'15 §5.1, its ideal baseline): pFabric's
//! priority-dropping switches with each packet's priority number set to the bytes its flow
//! sent before it, so the flow that has sent least goes first without knowing any flow size;
//! MinTCP hosts with pFabric's settings (`[pfabric]`), as the PIAS authors' ns-2 scripts run it.

use super::pfabric::{pfabric_hosts, pfabric_ports, PfabricRate};
use super::window::{ClassTag, PriorityTag, Tagger, WindowTransport};
use super::{Parts, Protocol};
use crate::spec::Spec;

/// `transport.protocol = "las"`.
#[derive(Debug)]
pub struct LasProtocol;

impl Protocol for LasProtocol {
    type Host = WindowTransport<PfabricRate>;

    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        let tagger = Tagger { priority: PriorityTag::BytesSent, class: ClassTag::Single };
        Parts::packets(pfabric_hosts(spec, tagger), pfabric_ports(spec, false))
    }
}
