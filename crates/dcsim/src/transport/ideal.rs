//! Ideal (pFabric HotNets'12 §3, SIGCOMM'13 §5.1): the flows of the workload scheduled
//! end-to-end by SRPT over the hosts' links at the flow level, a lower bound no packet-level
//! transport reaches. The run uses the simulation's flow-level model
//! ([`crate::transport::Model::FlowLevelSrpt`], [`crate::flow_level`]); no packet moves.

use super::pfabric::pfabric_ports;
use super::{Completion, HostTransport, Model, Parts, Protocol};
use crate::fabric::Fabric;
use crate::packet::PacketId;
use crate::spec::Spec;
use crate::workload::FlowArrival;

/// The hosts of a flow-level run: they never see a packet or an event.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct FlowLevel;

impl HostTransport for FlowLevel {
    fn start_flow(&mut self, _f: &FlowArrival, _fab: &mut Fabric) {
        unreachable!("a flow-level run starts no packet-level flow")
    }
    fn on_packet(&mut self, _id: PacketId, _fab: &mut Fabric) -> Option<Completion> {
        unreachable!("a flow-level run sends no packet")
    }
    fn on_event(&mut self, _code: u8, _a: u32, _b: u32, _fab: &mut Fabric) {
        unreachable!("a flow-level run schedules no transport event")
    }
}

/// `transport.protocol = "ideal"`.
#[derive(Debug)]
pub struct IdealProtocol;

impl Protocol for IdealProtocol {
    type Host = FlowLevel;

    fn assemble(spec: &Spec) -> Parts<Self::Host> {
        // The ports only shape the ideal FCT's path profile (rates, delays, cut-through).
        Parts {
            model: Model::FlowLevelSrpt,
            ..Parts::packets(FlowLevel, pfabric_ports(spec, false))
        }
    }
}
