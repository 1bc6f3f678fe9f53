//! Transports: how end hosts move a flow's bytes, one module per protocol.
//!
//! A protocol is a module here plus one line in the registry ([`crate::protocols`]). The
//! module implements [`Protocol`]: from the resolved spec it assembles a run's protocol
//! parts ([`Parts`]) — the host transport, the port plan (queue discipline, ECN marking,
//! buffer) and any service hosts (Fastpass's arbiter); the registry line names the spec
//! sections it reads.
//! The registry derives the `transport.protocol` choice, its names and the dispatch
//! ([`AnyHost`]) from that one list; the simulation loop and the fabric know no protocol.
//!
//! Host transports implement [`HostTransport`]. They own their events ([`TransportEvent`],
//! declared with [`crate::transport_events!`]) and their control packet kinds
//! ([`crate::packet::PacketKind::control`]) and header words. Window protocols share one
//! mechanism ([`window`]) and differ by their congestion-control policy and packet tagger;
//! receiver-driven ones (pHost, Fastpass) are mechanisms of their own. Dispatch is by `match`
//! over [`AnyHost`] and, inside the window mechanism, static (generic over the policy): never a
//! boxed trait object on the per-packet path.

pub mod arbitration;
pub mod window;

use crate::fabric::{Event, Fabric};
use crate::packet::{Packet, PacketId, SeqSet};
use crate::queue::EcnMarking;
use crate::spec::{Protocol as ProtocolChoice, Spec};
use crate::topology::Network;
use crate::workload::FlowArrival;
use dcsim_engine::SimTime;

/// A flow finished: what the records need.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The flow's sequential id.
    pub flow: u32,
    /// Data packets retransmitted.
    pub retransmits: u32,
    /// Timeouts.
    pub timeouts: u32,
    /// Data packets sent.
    pub packets_sent: u32,
}

impl Completion {
    /// The completion of flow `flow` of `n_pkts` packets that sent `packets_sent` data packets
    /// (every one beyond its `n_pkts` a retransmission) and timed out `timeouts` times.
    pub fn of(flow: u32, n_pkts: u32, packets_sent: u32, timeouts: u32) -> Self {
        Completion {
            flow,
            retransmits: packets_sent - n_pkts.min(packets_sent),
            timeouts,
            packets_sent,
        }
    }
}

/// Schedules a sender's "NIC free" wake-up `wake` at `at` unless one is pending (`pending`,
/// the host's flag): receiver-driven senders (pHost, Homa, dcPIM) send one packet each time
/// their NIC goes idle, so one pending wake-up per host is enough.
#[inline(always)]
pub(crate) fn schedule_nic_wake(pending: &mut bool, at: SimTime, wake: Event, fab: &mut Fabric) {
    if !*pending {
        *pending = true;
        fab.schedule(at, wake);
    }
}

/// On a sender's wake-up (see [`schedule_nic_wake`]): clears `pending`; while `host`'s NIC is
/// still busy, schedules the next wake-up for when it goes idle and returns false.
#[inline(always)]
pub(crate) fn nic_free_on_wake(
    pending: &mut bool,
    host: u32,
    wake: Event,
    fab: &mut Fabric,
) -> bool {
    *pending = false;
    let idle = fab.nic_idle_at(host);
    if idle > fab.now() {
        schedule_nic_wake(pending, idle, wake, fab);
        return false;
    }
    true
}

/// How the partitioned model's sources number their flows' table entries on the wire (pHost,
/// Homa, Fastpass; docs/parallel.md): partition `offset` of `stride` numbers entry `i` as
/// `i · stride + offset`, its own residue class, so a slot on the wire names one open flow in
/// the whole run and the receiving end can index its own table by it. The default (and the
/// sequential model's) is the identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SlotNumbering {
    stride: u32,
    offset: u32,
}

impl Default for SlotNumbering {
    fn default() -> Self {
        SlotNumbering { stride: 1, offset: 0 }
    }
}

impl SlotNumbering {
    /// The numbering of partition `index` of `count`.
    pub(crate) fn of_partition(index: u32, count: u32) -> Self {
        SlotNumbering { stride: count, offset: index }
    }

    /// The slot on the wire of table entry `entry`.
    #[inline]
    pub(crate) fn wire(self, entry: u32) -> u32 {
        entry * self.stride + self.offset
    }

    /// The table entry that slot `wire` names, if this numbering gave it.
    #[inline]
    pub(crate) fn entry(self, wire: u32) -> Option<u32> {
        (wire % self.stride == self.offset).then_some(wire / self.stride)
    }
}

/// A receiving end's table entry in the partitioned model (pHost's destinations, Homa's
/// receivers), which learns its flow from the flow's packets.
pub(crate) trait ReceivingEntry: Default {
    /// The flow the entry holds while it is in use.
    fn holds(&self) -> Option<u32>;
    /// Takes the entry's set of received packets, to be reused.
    fn take_received(&mut self) -> SeqSet;
    /// The entry of packet `p`'s flow of `n_pkts` packets, with `received` (empty, sized).
    fn receiving(p: &Packet, n_pkts: u32, received: SeqSet) -> Self;
}

/// Implements [`ReceivingEntry`] for a table entry type with the fields `id`, `active`, `src`,
/// `dst`, `n_pkts` and `received` (a [`SeqSet`]): it holds its flow while active, and a new
/// flow's entry takes those from the packet and is otherwise the default.
macro_rules! impl_receiving_entry {
    ($entry:ident) => {
        impl $crate::transport::ReceivingEntry for $entry {
            fn holds(&self) -> Option<u32> {
                self.active.then_some(self.id)
            }
            fn take_received(&mut self) -> $crate::packet::SeqSet {
                std::mem::take(&mut self.received)
            }
            fn receiving(
                p: &$crate::packet::Packet,
                n_pkts: u32,
                received: $crate::packet::SeqSet,
            ) -> Self {
                let (id, src, dst) = (p.flow, p.src, p.dst);
                $entry { id, active: true, src, dst, n_pkts, received, ..$entry::default() }
            }
        }
    };
}

/// The partitioned model's receiving end: the entry of `table` at the slot packet `p` carries
/// (grown as needed), made `p`'s flow's (of `n_pkts` packets) if it held an earlier flow of the
/// slot or none: flow ids grow with arrival time, and a source reuses a slot only once its flow
/// is complete. Returns the slot, or `None` for a straggler of an earlier flow.
pub(crate) fn receiving_entry<T: ReceivingEntry>(
    table: &mut Vec<T>,
    p: &Packet,
    n_pkts: u32,
) -> Option<u32> {
    let i = p.slot as usize;
    if table.len() <= i {
        table.resize_with(i + 1, T::default);
    }
    let entry = &mut table[i];
    match entry.holds() {
        Some(id) if id == p.flow => {}
        Some(id) if p.flow < id => return None,
        _ => {
            let mut received = entry.take_received();
            received.reset(n_pkts);
            *entry = T::receiving(p, n_pkts, received);
        }
    }
    Some(p.slot)
}

/// The receiving end's table: in the partitioned model its own (`receivers`), else the one both
/// ends share (`shared`).
pub(crate) fn receiving_table<'a, T>(
    partitioned: bool,
    shared: &'a mut Vec<T>,
    receivers: &'a mut Vec<T>,
) -> &'a mut Vec<T> {
    if partitioned {
        receivers
    } else {
        shared
    }
}

/// The partitioned model's sending end: the entry of `table` (of an entry type that also
/// serves the receiving end) that slot `p.slot` names under `numbering`, if it holds `p`'s
/// flow. `None`: a slot of another partition, or a straggler of an earlier flow.
pub(crate) fn sending_entry<T: ReceivingEntry>(
    table: &[T],
    numbering: SlotNumbering,
    p: &Packet,
) -> Option<u32> {
    entry_holding(table, numbering.entry(p.slot)?, p.flow)
}

/// A source's guard against a lost announcement (RTS) or a lost final ACK, for the
/// receiver-driven protocols whose papers and authors' simulators have none (pHost's
/// `source_timeout_mtu`, dcPIM's `source_timeout_bdp`): without it a flow whose RTS (and any
/// unscheduled packets) or whose ACK is dropped never finishes. The source sends its RTS
/// again after a silence of the timeout (no packet sent, no token received) if it has had no
/// token yet (its receiver may not know it) or has sent every packet (its ACK may be lost); a
/// flow that has had tokens and has packets left is only waiting for its turn at a receiver
/// that knows it. The receiver answers such an RTS of a flow it has complete with the ACK.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SourceTimer {
    last_activity: SimTime,
    heard: bool,
}

impl SourceTimer {
    /// A flow's timer, started with its RTS at `now`.
    pub(crate) fn started(now: SimTime) -> Self {
        SourceTimer { last_activity: now, heard: false }
    }

    /// The source sent a packet of the flow.
    pub(crate) fn sent(&mut self, now: SimTime) {
        self.last_activity = now;
    }

    /// A token of the flow arrived: its receiver knows it.
    pub(crate) fn token(&mut self, now: SimTime) {
        self.last_activity = now;
        self.heard = true;
    }

    /// The timer fired at `now`: whether to send the RTS again (`all_sent`: every packet has
    /// been sent at least once), and when to look again.
    pub(crate) fn fire(
        &mut self,
        now: SimTime,
        timeout: SimTime,
        all_sent: bool,
    ) -> (bool, SimTime) {
        let due = self.last_activity + timeout;
        if now < due {
            return (false, due);
        }
        let resend = !self.heard || all_sent;
        if resend {
            self.last_activity = now;
        }
        (resend, now + timeout)
    }
}

/// `slot`, if the entry of `table` there holds flow `flow` (`None`: it holds another flow,
/// or none: a straggler). The sequential model's check of every packet (pHost, Homa, dcPIM).
#[inline]
pub(crate) fn entry_holding<T: ReceivingEntry>(table: &[T], slot: u32, flow: u32) -> Option<u32> {
    (table.get(slot as usize)?.holds() == Some(flow)).then_some(slot)
}

/// The end hosts' side of a protocol: flows start, packets arrive, the transport's own events
/// fire.
pub trait HostTransport {
    /// Starts flow `f` now.
    fn start_flow(&mut self, f: &FlowArrival, fab: &mut Fabric);
    /// A packet reached its destination host (the fabric checked it is a host); the transport
    /// frees it. Returns the completion if the packet finished its flow.
    fn on_packet(&mut self, id: PacketId, fab: &mut Fabric) -> Option<Completion>;
    /// One of this transport's own events (encoded by its [`TransportEvent`] type) fired.
    fn on_event(&mut self, code: u8, a: u32, b: u32, fab: &mut Fabric);
    /// A packet marked `inspect` reached switch `node`, where the transport's in-network
    /// arbitrators read it. Returns false if the transport consumed (freed) it; true to
    /// forward it.
    fn on_switch(&mut self, _node: u32, _id: PacketId, _fab: &mut Fabric) -> bool {
        true
    }
    /// The transport's own counters at the end of a run (name, value), for the summary's
    /// `transport_counters`: what its mechanisms cost, e.g. PASE's arbitration messages.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// The longest a flow can wait, with none of its data delivered, before one of this
    /// transport's timers resends or asks again for what was lost on `net` (its largest RTO,
    /// resend, re-issue or watchdog timeout); zero when no timer does. A run counts its open
    /// flows as stalled only after eight of it without progress (`StallWatch`).
    fn recovery_timeout(&self, _net: &Network) -> SimTime {
        SimTime::ZERO
    }
    /// This instance serves partition `index` of `count` of a partitioned run (only its
    /// hosts' flows start here): a transport whose packets name table slots numbers them so
    /// they are unique in the run. Called before any flow starts; only transports the
    /// registry marks `partitioned` are ever partitioned.
    fn set_partition(&mut self, _index: u32, _count: u32) {}
}

/// A transport's event type: encodes into the fabric's [`Event::Transport`] and back.
/// Declare one with [`crate::transport_events!`].
pub trait TransportEvent: Copy {
    /// The fabric event carrying this one.
    fn encode(self) -> Event;
    /// This transport's event from the fabric event's code and arguments.
    fn decode(code: u8, a: u32, b: u32) -> Self;
}

/// Declares a transport's event enum (variants with up to two `u32` arguments, each with a
/// code unique within the enum) and its [`TransportEvent`] encoding.
///
/// ```ignore
/// transport_events! {
///     /// pHost's clocks.
///     pub enum PhostEvent {
///         /// The source's NIC is free.
///         SourceWake(host) = 0,
///         /// The destination's token clock ticks.
///         TokenClock(host) = 1,
///     }
/// }
/// ```
#[macro_export]
macro_rules! transport_events {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident $(($($arg:ident),+))? = $code:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$vmeta])* $variant $(($($crate::transport_events!(@u32 $arg)),+))?),+
        }

        impl $crate::transport::TransportEvent for $name {
            #[inline]
            fn encode(self) -> $crate::fabric::Event {
                match self {
                    $($name::$variant $(($($arg),+))? => {
                        let args: &[u32] = &[$($($arg),+)?];
                        $crate::fabric::Event::Transport {
                            code: $code,
                            a: args.first().copied().unwrap_or(0),
                            b: args.get(1).copied().unwrap_or(0),
                        }
                    })+
                }
            }

            #[inline]
            fn decode(code: u8, a: u32, b: u32) -> Self {
                let _ = (a, b);
                match code {
                    $($code => {
                        #[allow(unused_mut, unused_variables)]
                        let mut args = [a, b].into_iter();
                        $name::$variant $(($($crate::transport_events!(@next args $arg)),+))?
                    })+
                    _ => unreachable!("event code {code} is not one of {}'s", stringify!($name)),
                }
            }
        }
    };
    (@u32 $arg:ident) => { u32 };
    (@next $args:ident $arg:ident) => { $args.next().expect("two arguments at most") };
}

/// Which queue discipline every port (switch ports and NICs) of a run gets.
#[derive(Clone, Debug, PartialEq)]
pub enum QueuePlan {
    /// One FIFO with tail drop.
    Fifo,
    /// pFabric's priority dropping and scheduling on the packets' priority numbers.
    PriorityDrop {
        /// Ties by queue order (`pfabric.ties = "queue-order"`), else at random.
        queue_order_ties: bool,
        /// The most urgent packet itself is sent (`pfabric.dequeue = "most-urgent"`), else the
        /// earliest packet of its flow.
        most_urgent_first: bool,
    },
    /// Strict-priority FIFOs over one shared buffer, by the packets' classes.
    StrictPriority {
        /// Queues per port.
        queues: usize,
        /// Bytes reserved for each queue; the rest is shared first come, first served.
        reserved_bytes: u64,
    },
}

/// The ports a protocol needs.
#[derive(Clone, Debug, PartialEq)]
pub struct PortPlan {
    /// The queue discipline.
    pub queue: QueuePlan,
    /// ECN marking.
    pub marking: EcnMarking,
    /// Buffer per port, bytes.
    pub buffer_bytes: u64,
}

impl PortPlan {
    /// FIFO DropTail ports with `marking`, of the `[transport]`/`[topology]` buffer size.
    pub fn droptail(spec: &Spec, marking: EcnMarking) -> Self {
        PortPlan {
            queue: QueuePlan::Fifo,
            marking,
            buffer_bytes: spec.transport.port_buffer(&spec.topology),
        }
    }

    /// pFabric-style priority-dropping ports without ECN, of the `[transport]`/`[topology]`
    /// buffer size: what the scheduled transports (pHost, Fastpass, dcPIM) run over, as their
    /// authors' simulators use their pFabric queue.
    pub fn priority_drop(spec: &Spec) -> Self {
        PortPlan {
            queue: QueuePlan::PriorityDrop { queue_order_ties: false, most_urgent_first: false },
            marking: EcnMarking::Off,
            buffer_bytes: spec.transport.port_buffer(&spec.topology),
        }
    }
}

/// How a run is simulated.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Model {
    /// Packet by packet through the fabric.
    Packets,
    /// Flow-level SRPT over the hosts' links (no packets; pFabric's Ideal).
    FlowLevelSrpt,
}

/// What a protocol contributes to a run.
#[derive(Debug)]
pub struct Parts<H> {
    /// The hosts' transport.
    pub host: H,
    /// The port plan.
    pub ports: PortPlan,
    /// Hosts added to the topology for the protocol's own services (Fastpass's arbiter),
    /// attached to host 0's edge switch; their ids follow the workload's hosts.
    pub service_hosts: u32,
    /// Packet-level or flow-level.
    pub model: Model,
}

impl<H> Parts<H> {
    /// Packet-level parts without service hosts.
    pub fn packets(host: H, ports: PortPlan) -> Self {
        Parts { host, ports, service_hosts: 0, model: Model::Packets }
    }
}

/// A protocol module: assembles its parts of a run from the resolved spec.
pub trait Protocol {
    /// The hosts' transport.
    type Host: HostTransport;
    /// The run's protocol parts.
    fn assemble(spec: &Spec) -> Parts<Self::Host>;
}

/// Generates, from the registry's list, the protocol modules' declarations, the
/// host-transport enum and its dispatch.
macro_rules! dispatch {
    ($($(#[$doc:meta])* $variant:ident = $name:literal => $module:ident :: $def:ident,
        sections [$($section:literal),*], window $window:literal, partitioned $partitioned:literal $($why_not:literal)?,)+) => {
        $(pub mod $module;)+

        /// The host transport of every protocol, dispatched by `match`.
        // One per run: its size does not matter, and boxing would add a load per packet.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, serde::Serialize, serde::Deserialize)]
        pub enum AnyHost {
            $(
                #[doc = concat!("`", $name, "`.")]
                $variant(<$module::$def as Protocol>::Host),
            )+
        }

        impl HostTransport for AnyHost {
            #[inline]
            fn start_flow(&mut self, f: &FlowArrival, fab: &mut Fabric) {
                match self { $(AnyHost::$variant(h) => h.start_flow(f, fab),)+ }
            }
            #[inline]
            fn on_packet(&mut self, id: PacketId, fab: &mut Fabric) -> Option<Completion> {
                match self { $(AnyHost::$variant(h) => h.on_packet(id, fab),)+ }
            }
            #[inline]
            fn on_event(&mut self, code: u8, a: u32, b: u32, fab: &mut Fabric) {
                match self { $(AnyHost::$variant(h) => h.on_event(code, a, b, fab),)+ }
            }
            fn on_switch(&mut self, node: u32, id: PacketId, fab: &mut Fabric) -> bool {
                match self { $(AnyHost::$variant(h) => h.on_switch(node, id, fab),)+ }
            }
            fn counters(&self) -> Vec<(&'static str, u64)> {
                match self { $(AnyHost::$variant(h) => h.counters(),)+ }
            }
            fn recovery_timeout(&self, net: &Network) -> SimTime {
                match self { $(AnyHost::$variant(h) => h.recovery_timeout(net),)+ }
            }
            fn set_partition(&mut self, index: u32, count: u32) {
                match self { $(AnyHost::$variant(h) => h.set_partition(index, count),)+ }
            }
        }

        /// The parts of a run of the spec's protocol.
        pub fn assemble(spec: &Spec) -> Parts<AnyHost> {
            match spec.transport.protocol {
                $(ProtocolChoice::$variant => {
                    let p = <$module::$def as Protocol>::assemble(spec);
                    Parts {
                        host: AnyHost::$variant(p.host),
                        ports: p.ports,
                        service_hosts: p.service_hosts,
                        model: p.model,
                    }
                })+
            }
        }
    };
}

crate::protocols::for_each_protocol!(dispatch);

#[cfg(test)]
mod tests {
    use super::TransportEvent;

    crate::transport_events! {
        /// A test enum.
        enum Ev {
            /// No argument.
            Tick = 0,
            /// One.
            Wake(host) = 1,
            /// Two.
            Timer(slot, gen) = 7,
        }
    }

    #[test]
    fn transport_events_round_trip_through_the_fabric_event() {
        for ev in [Ev::Tick, Ev::Wake(42), Ev::Timer(3, u32::MAX)] {
            let crate::fabric::Event::Transport { code, a, b } = ev.encode() else {
                panic!("not a transport event")
            };
            assert_eq!(Ev::decode(code, a, b), ev);
        }
        assert_eq!(
            Ev::Timer(3, 9).encode(),
            crate::fabric::Event::Transport { code: 7, a: 3, b: 9 }
        );
        assert_eq!(std::mem::size_of::<crate::fabric::Event>(), 12);
    }
}
