//! The run spec: what a user writes (TOML or a Python dict), resolved once into plain structs
//! with every default filled in.
//!
//! Resolution walks the user's tree section by section. Every field has a documented default;
//! an unknown or misspelt key, a value of the wrong type or out of range is rejected with a
//! [`SpecError`] naming the field, the value and what is allowed (with a "did you mean"
//! for near misses). The resolved [`Spec`] serializes back to TOML with every default
//! visible, which is what `dcsim show` prints and every run directory stores.

use crate::error::SpecError;
use crate::units::BitRate;
use serde::Serialize;
use serde_json::{Map, Value};

/// A fully resolved run spec.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Spec {
    /// Master seed; every random stream of the run derives from it. Default 1.
    pub seed: u64,
    /// A free-form label for the run. Default "".
    pub name: String,
    /// The fabric.
    pub topology: TopologySpec,
    /// Flow sizes, arrivals and the traffic matrix.
    pub workload: WorkloadSpec,
    /// The transport protocol and its window/timer settings.
    pub transport: TransportSpec,
    /// DCTCP settings (used when `transport.protocol = "dctcp"`).
    pub dctcp: DctcpSpec,
    /// pFabric settings (used when `transport.protocol = "pfabric"`).
    pub pfabric: PfabricSpec,
    /// pHost settings (used when `transport.protocol = "phost"`).
    pub phost: PhostSpec,
    /// Fastpass settings (used when `transport.protocol = "fastpass"`).
    pub fastpass: FastpassSpec,
    /// PIAS settings (used when `transport.protocol = "pias"`).
    pub pias: PiasSpec,
    /// What a run records beyond the flow table and summary.
    pub output: OutputSpec,
    /// Simulator implementation choices that do not change the model.
    pub engine: EngineSpec,
}

/// `[output]`: optional recordings.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OutputSpec {
    /// Sample arrived / injected packets and finished flows every this many µs of simulated
    /// time into the summary's `timeseries`; 0 (default) = off.
    pub timeseries_us: f64,
}

/// `[fastpass]` (pHost §4.1, reference §4.2): the arbiter's epoch.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FastpassSpec {
    /// Timeslots per epoch (8).
    pub epoch_slots: u32,
    /// Epoch length in MTU transmission times at the host rate (8.5: 10.2 µs at 10 Gbps; a
    /// timeslot is epoch / epoch_slots).
    pub epoch_mtu: f64,
    /// The arbiter's order: `srpt` (default: fewest packets left to schedule) or `edf`
    /// (earliest deadline first).
    pub policy: FastpassPolicy,
}

/// `[pias]` (PIAS NSDI'15 §3-4, reference §6).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PiasSpec {
    /// Strict-priority queues per port, 1-8 (8).
    pub queues: u32,
    /// `queues − 1` increasing demotion thresholds, bytes: a packet whose byte offset in its
    /// flow is ≤ `thresholds[k]` goes to queue k (resolved from `threshold_method` when not
    /// given).
    pub thresholds: Vec<u64>,
    /// How thresholds are chosen when not given: `table` (the PIAS authors' scripts; web search
    /// and data mining at loads 0.5-0.9 with 8 queues), `closed-form` (§3.3), `equal-split`,
    /// or `auto` (default: `table` where it has an entry, else `closed-form`); resolved to the
    /// method used.
    pub threshold_method: PiasThresholdMethod,
    /// ECN marking at the `dctcp.marking_threshold_bytes` threshold: `per-port` (default,
    /// §4.1.2), `per-queue`, or `off`.
    pub ecn: PiasEcn,
    /// After this many consecutive timeouts a flow's MLFQ count restarts (it is tagged as if
    /// new from its first unacknowledged packet; §3.2's starvation guard). 0 (default) = never.
    pub reset_after_timeouts: u32,
}

/// How PIAS thresholds are chosen.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PiasThresholdMethod {
    /// The table where it has an entry, else the closed form (resolved away).
    Auto,
    /// The PIAS authors' published script values.
    Table,
    /// The paper's §3.3 closed form.
    ClosedForm,
    /// Equal fractions of flows per queue.
    EqualSplit,
}

/// Where PIAS switches measure the queue for ECN marking.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PiasEcn {
    /// The whole port's occupancy.
    PerPort,
    /// The occupancy of the packet's own queue.
    PerQueue,
    /// No marking.
    Off,
}

/// The Fastpass arbiter's flow order.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum FastpassPolicy {
    /// Fewest packets left to schedule first.
    Srpt,
    /// Earliest deadline first.
    Edf,
}

/// `[engine]`: implementation choices with no effect on the modelled network.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EngineSpec {
    /// FIFO ports compute each packet's departure at enqueue (no transmit-complete events).
    /// `false` runs them through the generic event-driven port path instead: the same model,
    /// slower; kept as a cross-check. Default true.
    pub fifo_timeline: bool,
}

/// Topology kinds.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    /// Two-tier leaf-spine (the papers' 144-host fabric).
    LeafSpine,
    /// Three-tier k-ary fat-tree.
    FatTree,
    /// One switch.
    Star,
    /// Two switches joined by one bottleneck link.
    Dumbbell,
    /// Two hosts joined by one link, no switch (for tests and single-link studies).
    Pair,
}

/// Switching mode.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Switching {
    /// A switch forwards a packet once it has fully arrived (ns-2).
    StoreAndForward,
    /// A switch forwards a packet once its header has arrived (YAPS, pHost paper).
    CutThrough,
}

/// Load balancing over equal-cost paths.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum LoadBalancing {
    /// Per-packet round robin at every switch (ns-2 packet spraying).
    Spray,
    /// Per-packet uniformly random choice.
    SprayRandom,
    /// Per-flow hash (ECMP).
    Ecmp,
}

/// `[topology]`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TopologySpec {
    /// `leaf-spine` (default), `fat-tree`, `star`, `dumbbell` or `pair` (two hosts, one link).
    pub kind: TopologyKind,
    /// Leaf-spine: number of racks (ToR switches). Default 9.
    pub racks: u32,
    /// Leaf-spine: hosts per rack. Default 16.
    pub hosts_per_rack: u32,
    /// Leaf-spine: spine switches. Default 4.
    pub spines: u32,
    /// Fat-tree: the arity k (even). Default 6 (54 hosts).
    pub k: u32,
    /// Star: number of hosts. Default 16.
    pub hosts: u32,
    /// Dumbbell: hosts on each side. Default 1.
    pub hosts_per_side: u32,
    /// Host (edge) link rate in Gbps. Default 10.
    pub host_link_gbps: f64,
    /// Switch-to-switch link rate in Gbps. Default: leaf-spine 40 (host rate × hosts per rack
    /// / spines / oversubscription); fat-tree, star, dumbbell: the host rate.
    pub core_link_gbps: f64,
    /// Leaf-spine: oversubscription ratio used to derive `core_link_gbps` when that is not
    /// given. Default 1.
    pub oversubscription: f64,
    /// Propagation delay of every link, ns. Default 200.
    pub link_delay_ns: u64,
    /// Extra one-way delay on every host link, ns (2500 in the pFabric scripts). Default 0.
    pub host_delay_ns: u64,
    /// `cut-through` (default) or `store-and-forward`.
    pub switching: Switching,
    /// `spray` (default), `spray-random` or `ecmp`.
    pub load_balancing: LoadBalancing,
    /// Buffer per switch port and per NIC, bytes. Default 36864. `transport.buffer_bytes`
    /// overrides it.
    pub buffer_bytes: u64,
}

impl TopologySpec {
    /// Host link rate.
    pub fn host_rate(&self) -> BitRate {
        BitRate::from_gbps(self.host_link_gbps)
    }
    /// Switch-to-switch link rate.
    pub fn core_rate(&self) -> BitRate {
        BitRate::from_gbps(self.core_link_gbps)
    }
    /// Number of hosts this topology has.
    pub fn n_hosts(&self) -> u32 {
        match self.kind {
            TopologyKind::LeafSpine => self.racks * self.hosts_per_rack,
            TopologyKind::FatTree => self.k * self.k * self.k / 4,
            TopologyKind::Star => self.hosts,
            TopologyKind::Dumbbell => 2 * self.hosts_per_side,
            TopologyKind::Pair => 2,
        }
    }
}

/// Where flow sizes come from.
#[derive(Debug, Clone, PartialEq)]
pub enum FlowSizes {
    /// A shipped CDF: `websearch`, `datamining` or `imc10`.
    Named(String),
    /// A CDF file (`size_pkts ignored cdf` per line).
    File(String),
    /// Every flow has this many bytes.
    Fixed(u64),
    /// Two sizes, see `workload.bimodal`.
    Bimodal,
}

impl Serialize for FlowSizes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            FlowSizes::Named(n) | FlowSizes::File(n) => s.serialize_str(n),
            FlowSizes::Fixed(b) => s.serialize_u64(*b),
            FlowSizes::Bimodal => s.serialize_str("bimodal"),
        }
    }
}

/// How a CDF is sampled (reference §1.3).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SizeSampling {
    /// Linear interpolation between CDF points, rounded up to whole packets (ns-2, YAPS 2015).
    Interpolate,
    /// Linear interpolation rounded to the nearest packet (YAPS 2016).
    InterpolateRound,
    /// Step CDF: the size of the first point whose probability is ≥ u.
    Step,
}

/// Traffic matrices.
#[derive(Debug, Clone, PartialEq)]
pub enum Matrix {
    /// Every ordered pair is an independent Poisson process.
    AllToAll,
    /// Each host sends to one partner and receives from one.
    Permutation,
    /// Requests: `incast_senders` random senders answer one receiver, splitting the bytes.
    Incast,
    /// Every flow goes to host 0 from a random other host (the PIAS testbed's client fetching
    /// from its servers); the load is on host 0's link.
    FanIn,
    /// Flows read from a CSV trace.
    Trace(String),
}

impl Serialize for Matrix {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            Matrix::AllToAll => "all-to-all",
            Matrix::Permutation => "permutation",
            Matrix::Incast => "incast",
            Matrix::FanIn => "fan-in",
            Matrix::Trace(p) => p,
        })
    }
}

/// `[workload.bimodal]`: flows of `small_bytes` with probability `p_small`, else `large_bytes`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BimodalSpec {
    /// Default 3 packets (4380 B), as in pHost §4.
    pub small_bytes: u64,
    /// Default 700 packets (1,022,000 B).
    pub large_bytes: u64,
    /// Default 0.5.
    pub p_small: f64,
}

/// `[workload]`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WorkloadSpec {
    /// `websearch` (default), `datamining`, `imc10`, `bimodal`, a CDF file path, or a fixed
    /// size in bytes (an integer or a string such as "100KB").
    pub flow_sizes: FlowSizes,
    /// `interpolate` (default), `interpolate-round` or `step`.
    pub size_sampling: SizeSampling,
    /// Used when `flow_sizes = "bimodal"`.
    pub bimodal: BimodalSpec,
    /// Offered load on each host link, 0 < load < 1. Default 0.6.
    pub load: f64,
    /// Mean flow size used for the arrival rate, bytes; 0 (default) = the exact mean of the
    /// size distribution as sampled. The ns-2 scripts use 1138 × 1460 B for web search.
    pub mean_size_bytes: u64,
    /// `all-to-all` (default), `permutation`, `incast`, or a trace CSV path.
    pub matrix: Matrix,
    /// One flow-size choice per tenant (same forms as `flow_sizes`, which they replace); flow
    /// k belongs to tenant k mod n. Empty (default): one tenant.
    pub tenants: Vec<FlowSizes>,
    /// Relative share of flows per tenant (same length as `tenants`); each flow then draws its
    /// tenant at random with these weights. Empty (default): tenants take turns.
    pub tenant_weights: Vec<f64>,
    /// `poisson` (default: Poisson arrivals at the load) or `at-start` (every flow starts at
    /// time 0, as in pHost §4.4).
    pub arrivals: Arrivals,
    /// Incast: senders per request. Default 10.
    pub incast_senders: u32,
    /// Partition/aggregate queries on top of the other flows (PIAS §5.1): this many queries,
    /// each host 0 asking `query_fanout` distinct other hosts for `query_bytes`. Default 0.
    pub queries: u64,
    /// Query arrival rate (Poisson), per second. Default 20.
    pub query_rate_per_s: f64,
    /// Servers per query. Default 15.
    pub query_fanout: u32,
    /// Response size per server, bytes. Default 1000.
    pub query_bytes: u64,
    /// Number of flows to generate (for traces: at most this many rows; 0 = all). Default
    /// 20000.
    pub flows: u64,
    /// Stop the run at this simulated time, ms; 0 (default) = run until every flow finishes.
    pub duration_ms: f64,
    /// What ends the run: `all-finished` (default: `flows` flows arrive and the run goes on
    /// until every one has finished) or `n-finished` (arrivals go on past `flows` and the run
    /// ends as soon as `flows` flows have finished; the flows still open then are left out of
    /// the statistics, as in the pFabric and PIAS authors' ns-2 scripts, whose `sim_end` is a
    /// number of finished flows, reference §1.3).
    pub stop_when: StopWhen,
    /// Fraction of the first flows (by arrival) left out of the statistics. Default 0.
    pub warmup_fraction: f64,
    /// Give every generated flow a deadline: arrival + max(1.25 × its ideal FCT, X) with X
    /// exponential of this mean, µs (pHost §4.3, citing pFabric: mean 1000 µs). 0 (default):
    /// no deadlines (trace deadlines are used as given).
    pub deadline_mean_us: f64,
}

/// What ends a run (besides `duration_ms`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum StopWhen {
    /// Every generated flow has finished.
    AllFinished,
    /// `flows` flows have finished, with arrivals continuing until then.
    NFinished,
}

/// When flows start.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// A Poisson process at the rate that gives the load.
    Poisson,
    /// All flows at time 0.
    AtStart,
}

/// Generates the protocol choice from the registry's list ([`crate::protocols`]).
macro_rules! protocol_choice {
    ($($(#[$doc:meta])* $variant:ident = $name:literal => $module:ident :: $def:ident,)+) => {
        /// Protocols: the registry's list ([`crate::protocols`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Protocol {
            $($(#[$doc])* $variant,)+
        }

        impl Protocol {
            /// Every protocol with its `transport.protocol` name, in registry order.
            pub const ALL: &'static [(&'static str, Protocol)] = &[$(($name, Protocol::$variant),)+];

            /// The protocol's `transport.protocol` name.
            pub fn name(self) -> &'static str {
                match self {
                    $(Protocol::$variant => $name,)+
                }
            }
        }
    };
}

crate::protocols::for_each_protocol!(protocol_choice);

impl Serialize for Protocol {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Which reading of pHost's parameters (reference §3.3).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PhostPreset {
    /// The paper's §4.1: 8 free tokens per flow, expiry 1.5, downgrade 8, re-issue 24 MTU
    /// times, short/long data priorities.
    Paper,
    /// The authors' public code: free tokens only for flows of ≤ 8 packets, downgrade 25 and
    /// re-issue 9 MTU times, all data at one priority.
    AuthorsCode,
}

/// `[phost]` (pHost §3-4.1, reference §3). Times are in MTU transmission times at the host
/// rate (1.2 µs at 10 Gbps).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PhostSpec {
    /// `paper` (default) or `authors-code`: sets the defaults of the fields below.
    pub preset: PhostPreset,
    /// Free tokens per flow (paper and code: 8).
    pub free_tokens: u32,
    /// Free tokens only for flows of at most `free_tokens` packets (code: true; paper: false,
    /// every flow gets min(size, free_tokens)).
    pub free_tokens_only_short: bool,
    /// Token lifetime at the source (1.5).
    pub token_expiry_mtu: f64,
    /// Unanswered tokens that downgrade a flow (8, a BDP).
    pub downgrade_after_tokens: u32,
    /// Downgrade period (paper 8, code 25).
    pub downgrade_mtu: f64,
    /// Wait before re-issuing tokens for missing packets (paper 24, code 9).
    pub reissue_mtu: f64,
    /// Flows of at most this many packets send data at the second priority, longer ones at
    /// the third (8).
    pub short_flow_pkts: u32,
    /// Separate short/long data priorities (paper true; code false: all data at one).
    pub data_priorities: bool,
    /// The destination's token clock period, in bytes at the host rate (paper 1500: "every
    /// (MTU-sized) packet transmission time"; code 1540).
    pub token_interval_bytes: u32,
    /// After a flow's RTS, leave as many token slots unused as it has free tokens, so its
    /// unsolicited packets find the downlink free (paper preset true: our choice, the 2016
    /// code's `hold`; code false: the 2015 code compiles it out).
    pub hold: bool,
    /// `srpt` (default: fewest remaining packets first), `edf` (earliest deadline first) or
    /// `tenant-fair` (the tenant with fewer bytes scheduled first, SRPT within; turns data
    /// priorities and free tokens off unless they are set), at both ends (§3.3, §4.4).
    pub policy: PhostPolicy,
}

/// pHost's scheduling policy.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PhostPolicy {
    /// Shortest remaining processing time.
    Srpt,
    /// Earliest deadline first.
    Edf,
    /// Fair between tenants (the tenant with fewer bytes scheduled first), SRPT within one.
    TenantFair,
}

/// pFabric's end-host rate control.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RateControl {
    /// MinTCP: initial window 12, no fast retransmit, fixed RTO, window back to 1 and slow start
    /// after a timeout, probe mode after consecutive timeouts.
    Mintcp,
    /// LineRate: no rate control; the window stays at its maximum; fixed-RTO retransmission.
    Linerate,
}

/// `[pfabric]` (reference §2, §7.5).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PfabricSpec {
    /// `mintcp` (default) or `linerate`.
    pub rate_control: RateControl,
    /// Per-port buffer, bytes; 0 (default) = `transport.buffer_bytes` or `topology.buffer_bytes`.
    /// 22500 in HotNets'12, 36000 in the SIGCOMM'13 scripts.
    pub buffer_bytes: u64,
    /// Fixed RTO, µs. Default 45 (SIGCOMM'13 scripts); 40 in HotNets'12.
    pub rto_us: f64,
    /// Initial window, packets. Default 12.
    pub initial_window_pkts: u32,
    /// Largest window, packets; 0 (default) = what the flow's queue holds, in packets, minus 1,
    /// at least the initial window (the scripts' `maxcwnd` rule, reference §2.4); the resolved
    /// spec shows the value.
    pub max_window_pkts: u32,
    /// MinTCP enters probe mode after this many consecutive timeouts; 0 = never. Default 5.
    pub probe_after_timeouts: u32,
    /// 0 (default): pFabric's unlimited priorities (priority dropping). 1-8: pFabric over that
    /// many strict-priority FIFO queues sharing `buffer_bytes` (SIGCOMM'13 §6), flows mapped
    /// to queues by size with `thresholds`.
    pub queues: u32,
    /// Flow-size thresholds in bytes (`queues − 1` of them, increasing): a flow of size ≤
    /// thresholds[k] (and above the previous one) uses queue k. Computed from
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
    /// what the authors' ns-2 code does, `calPrio` on the priority number, reference §2.6).
    pub classify: ClassifyBy,
    /// What a packet's priority number is: `remaining` (default: the flow's remaining bytes,
    /// SRPT) or `deadline` (the flow's absolute deadline, EDF; a flow that can no longer make
    /// it, or has none, gets the lowest priority; reference §2.5).
    pub priority: PriorityKey,
}

/// How few-queue pFabric maps a packet to a queue.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ClassifyBy {
    /// The flow's size: one queue for the whole flow.
    FlowSize,
    /// The flow's remaining bytes at each packet.
    Remaining,
}

/// pFabric's priority number.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PriorityKey {
    /// Remaining flow size (SRPT).
    Remaining,
    /// Absolute deadline (EDF), quenching hopeless flows (pFabric's ns-2 patch).
    Deadline,
    /// Absolute deadline (EDF), hopeless flows included (the pHost authors' simulator).
    DeadlineStrict,
}

/// How few-queue thresholds are chosen.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ThresholdMethod {
    /// Minimise the M/G/1 priority-queue model's mean normalized FCT (SIGCOMM'13 §6.1).
    Mg1,
    /// Equal fractions of flows per queue.
    EqualSplit,
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
    /// scripts' `maxcwnd = queue − 1` rule, reference §2.4). With a few queues that is the
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

/// Retransmission timeout behaviour.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RtoMode {
    /// max(min_rto, srtt + 4·rttvar), doubled per consecutive timeout up to `max_rto_us`.
    Adaptive,
    /// Always `min_rto_us`, no backoff (MinTCP).
    Fixed,
}

/// Duplicate-ACK threshold for fast retransmit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DupAckThreshold {
    /// Fast retransmit after this many duplicate ACKs.
    Fixed(u32),
    /// max(3, factor · cwnd) (ns-2 `dynamic_dupack_`, for packet spraying).
    Dynamic(f64),
    /// No fast retransmit.
    Off,
}

impl Serialize for DupAckThreshold {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DupAckThreshold::Fixed(n) => s.serialize_u32(*n),
            DupAckThreshold::Dynamic(_) => s.serialize_str("dynamic"),
            DupAckThreshold::Off => s.serialize_str("off"),
        }
    }
}

/// `[transport]`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TransportSpec {
    /// `dctcp` (default), `tcp`, `pfabric`, `ideal`, `phost` or `fastpass`.
    pub protocol: Protocol,
    /// Initial congestion window, packets. Default 12 (pFabric scripts, reference §7.1).
    pub initial_window_pkts: u32,
    /// Largest congestion window, packets. Default 149 (reference §7.1).
    pub max_window_pkts: u32,
    /// `adaptive` (default) or `fixed`.
    pub rto: RtoMode,
    /// Minimum (adaptive) or fixed RTO, µs. Default 200.
    pub min_rto_us: f64,
    /// Largest backed-off RTO, µs. Default 2,000,000 (2 s).
    pub max_rto_us: f64,
    /// Duplicate ACKs that trigger fast retransmit: an integer, `dynamic` (max(3, 0.75 cwnd),
    /// the default under packet spraying) or `off`. Default under ECMP: 3.
    pub dupack_threshold: DupAckThreshold,
    /// Per-port buffer override, bytes; 0 (default) keeps `topology.buffer_bytes`.
    pub buffer_bytes: u64,
    /// Selective acknowledgements: after a timeout, resend only the packets the receiver does
    /// not hold (idealised SACK, the ns-2 `FullTcp/Sack` agents of the pFabric scripts).
    /// Default false (NewReno).
    pub sack: bool,
    /// MinTCP's probe mode after this many consecutive timeouts (the PIAS scripts' agents:
    /// 5); 0 (default) = never.
    pub probe_after_timeouts: u32,
}

/// `[dctcp]` (reference §7.1).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DctcpSpec {
    /// EWMA gain for α. Default 1/16.
    pub g: f64,
    /// Marking threshold K, bytes of instantaneous queue. Default 22500 (15 packets, the
    /// pFabric evaluation).
    pub marking_threshold_bytes: u64,
    /// α before the first update. Default 1 (a new flow assumes congestion, as Linux does).
    pub initial_alpha: f64,
}

impl TransportSpec {
    /// The buffer each port gets.
    pub fn port_buffer(&self, topo: &TopologySpec) -> u64 {
        if self.buffer_bytes > 0 {
            self.buffer_bytes
        } else {
            topo.buffer_bytes
        }
    }
}

// ---------------------------------------------------------------------------------------
// Resolution
// ---------------------------------------------------------------------------------------

/// Parses TOML into a JSON-like tree (the form [`Spec::resolve`] takes).
pub fn parse_toml(text: &str) -> Result<Value, SpecError> {
    toml::from_str(text).map_err(|e| SpecError::new("<toml>", e.to_string().trim().to_string()))
}

/// Sets the dotted path `key` (e.g. `workload.load`) in a spec tree to `raw`, parsed as a
/// TOML value (`0.7`, `true`, `"x"`) or else taken as a bare string (`dctcp`). This is the
/// `--set key=value` rule of every command line.
pub fn apply_override(tree: &mut Value, key: &str, raw: &str) -> Result<(), SpecError> {
    let value = parse_toml(&format!("x = {raw}"))
        .map(|mut t| t["x"].take())
        .unwrap_or_else(|_| Value::String(raw.to_string()));
    let parts: Vec<&str> = key.trim().split('.').collect();
    let mut cur = tree;
    for (i, part) in parts[..parts.len() - 1].iter().enumerate() {
        cur = cur
            .as_object_mut()
            .ok_or_else(|| SpecError::new(parts[..i].join("."), "is a value, not a table"))?
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    cur.as_object_mut()
        .ok_or_else(|| SpecError::new(key, "is inside a value, not a table"))?
        .insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

/// Parses a TOML spec and applies `key=value` overrides.
pub fn spec_with_overrides(text: &str, overrides: &[String]) -> Result<Spec, SpecError> {
    let mut tree = parse_toml(text)?;
    for kv in overrides {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| SpecError::new(kv.as_str(), "an override must be key=value"))?;
        apply_override(&mut tree, k, v.trim())?;
    }
    Spec::resolve(&tree)
}

/// Names of the shipped CDFs.
pub const NAMED_CDFS: [&str; 3] = ["websearch", "datamining", "imc10"];

/// Edit distance, for "did you mean" suggestions.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The closest of `candidates` to `word`, if close enough to be a likely typo.
pub fn suggest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (levenshtein(&word.to_lowercase(), c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table",
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

/// Reads one table of the user's spec, remembering which keys are allowed.
struct Section<'a> {
    path: String,
    map: Option<&'a Map<String, Value>>,
    allowed: &'static [&'static str],
}

impl<'a> Section<'a> {
    fn new(
        path: &str,
        value: Option<&'a Value>,
        allowed: &'static [&'static str],
    ) -> Result<Self, SpecError> {
        let map = match value {
            None => None,
            Some(Value::Object(m)) => Some(m),
            Some(v) => {
                return Err(SpecError::new(path, format!("must be a table, got {}", type_name(v))))
            }
        };
        let s = Section { path: path.to_string(), map, allowed };
        s.check_keys()?;
        Ok(s)
    }

    fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn check_keys(&self) -> Result<(), SpecError> {
        let Some(map) = self.map else { return Ok(()) };
        for key in map.keys() {
            if !self.allowed.contains(&key.as_str()) {
                let hint = match suggest(key, self.allowed) {
                    Some(s) => format!("; did you mean `{}`?", self.field(s)),
                    None => format!("; allowed keys: {}", self.allowed.join(", ")),
                };
                return Err(SpecError::new(self.field(key), format!("unknown key{hint}")));
            }
        }
        Ok(())
    }

    fn raw(&self, key: &str) -> Option<&'a Value> {
        self.map.and_then(|m| m.get(key))
    }

    fn f64(&self, key: &str, default: f64) -> Result<f64, SpecError> {
        match self.raw(key) {
            None => Ok(default),
            Some(Value::Number(n)) => Ok(n.as_f64().unwrap_or(default)),
            Some(v) => Err(SpecError::new(
                self.field(key),
                format!("must be a number, got {} {}", type_name(v), show(v)),
            )),
        }
    }

    fn f64_in(
        &self,
        key: &str,
        default: f64,
        lo: f64,
        hi: f64,
        what: &str,
    ) -> Result<f64, SpecError> {
        let x = self.f64(key, default)?;
        if !(x.is_finite() && x >= lo && x <= hi) {
            return Err(SpecError::new(self.field(key), format!("{x} is out of range: {what}")));
        }
        Ok(x)
    }

    fn u64(&self, key: &str, default: u64) -> Result<u64, SpecError> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => as_u64(v).ok_or_else(|| {
                SpecError::new(
                    self.field(key),
                    format!("must be a non-negative integer, got {} {}", type_name(v), show(v)),
                )
            }),
        }
    }

    fn u64_in(&self, key: &str, default: u64, lo: u64, hi: u64) -> Result<u64, SpecError> {
        let x = self.u64(key, default)?;
        if x < lo || x > hi {
            return Err(SpecError::new(
                self.field(key),
                format!("{x} is out of range: must be between {lo} and {hi}"),
            ));
        }
        Ok(x)
    }

    fn u32_in(&self, key: &str, default: u32, lo: u32, hi: u32) -> Result<u32, SpecError> {
        Ok(self.u64_in(key, default as u64, lo as u64, hi as u64)? as u32)
    }

    /// A byte count: an integer, or a string with a unit ("36KB", "1.5 MB", "64KiB").
    fn bytes(&self, key: &str, default: u64) -> Result<u64, SpecError> {
        match self.raw(key) {
            None => Ok(default),
            Some(Value::String(s)) => parse_bytes(s).ok_or_else(|| {
                SpecError::new(
                    self.field(key),
                    format!(
                        "\"{s}\" is not a byte count; write an integer or e.g. \"36KB\", \"1.5MB\""
                    ),
                )
            }),
            Some(v) => self.u64(key, default).map_err(|_| {
                SpecError::new(
                    self.field(key),
                    format!("must be a byte count, got {} {}", type_name(v), show(v)),
                )
            }),
        }
    }

    fn bool(&self, key: &str, default: bool) -> Result<bool, SpecError> {
        match self.raw(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(SpecError::new(
                self.field(key),
                format!("must be true or false, got {} {}", type_name(v), show(v)),
            )),
        }
    }

    fn string(&self, key: &str) -> Result<Option<&'a str>, SpecError> {
        match self.raw(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(SpecError::new(
                self.field(key),
                format!("must be a string, got {} {}", type_name(v), show(v)),
            )),
        }
    }

    fn choice<T: Copy>(
        &self,
        key: &str,
        default: T,
        options: &[(&'static str, T)],
    ) -> Result<T, SpecError> {
        let Some(s) = self.string(key)? else { return Ok(default) };
        if let Some((_, v)) = options.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)) {
            return Ok(*v);
        }
        let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
        let hint = match suggest(s, &names) {
            Some(n) => format!(" (did you mean \"{n}\"?)"),
            None => String::new(),
        };
        Err(SpecError::new(
            self.field(key),
            format!("\"{s}\" is not one of {}{hint}", quote_list(&names)),
        ))
    }
}

fn quote_list(names: &[&str]) -> String {
    names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
}

fn as_u64(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19).map(|f| f as u64)
        }),
        _ => None,
    }
}

/// Parses "36864", "36KB", "1.5 MB", "64KiB" (KB = 1000 B, KiB = 1024 B).
pub fn parse_bytes(s: &str) -> Option<u64> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num.parse().ok()?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1048576.0,
        "gib" => 1073741824.0,
        _ => return None,
    };
    let v = x * mult;
    (v.is_finite() && v >= 0.0).then(|| v.round() as u64)
}

const TOP_KEYS: &[&str] = &[
    "seed",
    "name",
    "topology",
    "workload",
    "transport",
    "dctcp",
    "pfabric",
    "phost",
    "fastpass",
    "pias",
    "output",
    "engine",
];
const OUTPUT_KEYS: &[&str] = &["timeseries_us"];
const PIAS_KEYS: &[&str] =
    &["queues", "thresholds", "threshold_method", "ecn", "reset_after_timeouts"];
const FASTPASS_KEYS: &[&str] = &["epoch_slots", "epoch_mtu", "policy"];
const PHOST_KEYS: &[&str] = &[
    "preset",
    "free_tokens",
    "free_tokens_only_short",
    "token_expiry_mtu",
    "downgrade_after_tokens",
    "downgrade_mtu",
    "reissue_mtu",
    "short_flow_pkts",
    "data_priorities",
    "token_interval_bytes",
    "hold",
    "policy",
];
const PFABRIC_KEYS: &[&str] = &[
    "rate_control",
    "buffer_bytes",
    "rto_us",
    "initial_window_pkts",
    "max_window_pkts",
    "probe_after_timeouts",
    "queues",
    "thresholds",
    "threshold_method",
    "reserved_bytes",
    "classify",
    "priority",
];
const ENGINE_KEYS: &[&str] = &["fifo_timeline"];
const TOPOLOGY_KEYS: &[&str] = &[
    "kind",
    "racks",
    "hosts_per_rack",
    "spines",
    "k",
    "hosts",
    "hosts_per_side",
    "host_link_gbps",
    "core_link_gbps",
    "oversubscription",
    "link_delay_ns",
    "host_delay_ns",
    "switching",
    "load_balancing",
    "buffer_bytes",
];
const WORKLOAD_KEYS: &[&str] = &[
    "flow_sizes",
    "tenants",
    "tenant_weights",
    "arrivals",
    "size_sampling",
    "bimodal",
    "load",
    "mean_size_bytes",
    "matrix",
    "incast_senders",
    "queries",
    "query_rate_per_s",
    "query_fanout",
    "query_bytes",
    "flows",
    "duration_ms",
    "stop_when",
    "warmup_fraction",
    "deadline_mean_us",
];
const BIMODAL_KEYS: &[&str] = &["small_bytes", "large_bytes", "p_small"];
const TRANSPORT_KEYS: &[&str] = &[
    "protocol",
    "initial_window_pkts",
    "max_window_pkts",
    "rto",
    "min_rto_us",
    "max_rto_us",
    "dupack_threshold",
    "buffer_bytes",
    "sack",
    "probe_after_timeouts",
];
const DCTCP_KEYS: &[&str] = &["g", "marking_threshold_bytes", "initial_alpha"];

impl Spec {
    /// Resolves a spec tree (as parsed from TOML or handed over from Python).
    pub fn resolve(root: &Value) -> Result<Spec, SpecError> {
        let top = Section::new("", Some(root), TOP_KEYS)?;
        let seed = top.u64("seed", 1)?;
        let name = top.string("name")?.unwrap_or("").to_string();
        let topology =
            resolve_topology(&Section::new("topology", top.raw("topology"), TOPOLOGY_KEYS)?)?;
        let workload = resolve_workload(
            &Section::new("workload", top.raw("workload"), WORKLOAD_KEYS)?,
            &topology,
        )?;
        let transport = resolve_transport(
            &Section::new("transport", top.raw("transport"), TRANSPORT_KEYS)?,
            &topology,
        )?;
        let d = Section::new("dctcp", top.raw("dctcp"), DCTCP_KEYS)?;
        let dctcp = DctcpSpec {
            g: d.f64_in("g", 1.0 / 16.0, 0.0, 1.0, "must be between 0 and 1")?,
            marking_threshold_bytes: d.bytes("marking_threshold_bytes", 22_500)?,
            initial_alpha: d.f64_in("initial_alpha", 1.0, 0.0, 1.0, "must be between 0 and 1")?,
        };
        let pf = Section::new("pfabric", top.raw("pfabric"), PFABRIC_KEYS)?;
        let pfabric = PfabricSpec {
            rate_control: pf.choice(
                "rate_control",
                RateControl::Mintcp,
                &[("mintcp", RateControl::Mintcp), ("linerate", RateControl::Linerate)],
            )?,
            buffer_bytes: pf.bytes("buffer_bytes", 0)?,
            rto_us: pf.f64_in("rto_us", 45.0, 0.001, 1e9, "must be a positive time in µs")?,
            initial_window_pkts: pf.u32_in("initial_window_pkts", 12, 1, 1_000_000)?,
            max_window_pkts: pf.u32_in("max_window_pkts", 0, 0, 1_000_000)?,
            probe_after_timeouts: pf.u32_in("probe_after_timeouts", 5, 0, 1_000_000)?,
            queues: pf.u32_in("queues", 0, 0, 8)?,
            thresholds: Vec::new(),
            threshold_method: pf.choice(
                "threshold_method",
                ThresholdMethod::Mg1,
                &[("mg1", ThresholdMethod::Mg1), ("equal-split", ThresholdMethod::EqualSplit)],
            )?,
            reserved_bytes: pf.bytes("reserved_bytes", 15_000)?,
            classify: pf.choice(
                "classify",
                ClassifyBy::FlowSize,
                &[("flow-size", ClassifyBy::FlowSize), ("remaining", ClassifyBy::Remaining)],
            )?,
            priority: pf.choice(
                "priority",
                PriorityKey::Remaining,
                &[
                    ("remaining", PriorityKey::Remaining),
                    ("deadline", PriorityKey::Deadline),
                    ("deadline-strict", PriorityKey::DeadlineStrict),
                ],
            )?,
        };
        if pfabric.buffer_bytes > 0 && pfabric.buffer_bytes < crate::units::MTU_BYTES as u64 {
            return Err(SpecError::new(
                "pfabric.buffer_bytes",
                format!("{} bytes cannot hold one 1500-byte packet", pfabric.buffer_bytes),
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
        let e = Section::new("engine", top.raw("engine"), ENGINE_KEYS)?;
        let engine = EngineSpec { fifo_timeline: e.bool("fifo_timeline", true)? };
        let o = Section::new("output", top.raw("output"), OUTPUT_KEYS)?;
        let output = OutputSpec {
            timeseries_us: o.f64_in(
                "timeseries_us",
                0.0,
                0.0,
                1e12,
                "must be >= 0 µs (0 = off)",
            )?,
        };
        let mut pfabric = pfabric;
        pfabric.thresholds = resolve_thresholds(&pf, &pfabric, &workload)?;
        // Resolve the derived window cap so the spec shows (and a run's identity covers) it.
        pfabric.max_window_pkts = pfabric.max_window(pfabric.buffer(&transport, &topology));
        let ph = Section::new("phost", top.raw("phost"), PHOST_KEYS)?;
        let preset = ph.choice(
            "preset",
            PhostPreset::Paper,
            &[("paper", PhostPreset::Paper), ("authors-code", PhostPreset::AuthorsCode)],
        )?;
        let code = preset == PhostPreset::AuthorsCode;
        let phost = PhostSpec {
            preset,
            free_tokens: ph.u32_in("free_tokens", 8, 0, 1_000_000)?,
            free_tokens_only_short: ph.bool("free_tokens_only_short", code)?,
            token_expiry_mtu: ph.f64_in(
                "token_expiry_mtu",
                1.5,
                0.01,
                1e6,
                "must be a positive number of MTU times",
            )?,
            downgrade_after_tokens: ph.u32_in("downgrade_after_tokens", 8, 1, 1_000_000)?,
            downgrade_mtu: ph.f64_in(
                "downgrade_mtu",
                if code { 25.0 } else { 8.0 },
                0.0,
                1e9,
                "must be >= 0 MTU times",
            )?,
            reissue_mtu: ph.f64_in(
                "reissue_mtu",
                if code { 9.0 } else { 24.0 },
                0.01,
                1e9,
                "must be a positive number of MTU times",
            )?,
            short_flow_pkts: ph.u32_in("short_flow_pkts", 8, 0, 1_000_000_000)?,
            data_priorities: ph.bool("data_priorities", !code)?,
            token_interval_bytes: ph.u32_in(
                "token_interval_bytes",
                if code { 1540 } else { 1500 },
                40,
                1_000_000,
            )?,
            hold: ph.bool("hold", !code)?,
            policy: PhostPolicy::Srpt, // set below: it changes other fields' defaults
        };
        let mut phost = phost;
        phost.policy = ph.choice(
            "policy",
            PhostPolicy::Srpt,
            &[
                ("srpt", PhostPolicy::Srpt),
                ("edf", PhostPolicy::Edf),
                ("tenant-fair", PhostPolicy::TenantFair),
            ],
        )?;
        if phost.policy == PhostPolicy::TenantFair {
            // §4.4: "we turn off data packet priorities ... and remove free token" (unless set).
            if ph.raw("data_priorities").is_none() {
                phost.data_priorities = false;
            }
            if ph.raw("free_tokens").is_none() {
                phost.free_tokens = 0;
            }
        }
        let fp = Section::new("fastpass", top.raw("fastpass"), FASTPASS_KEYS)?;
        let fastpass = FastpassSpec {
            epoch_slots: fp.u32_in("epoch_slots", 8, 1, 1024)?,
            epoch_mtu: fp.f64_in(
                "epoch_mtu",
                8.5,
                0.01,
                1e6,
                "must be a positive number of MTU times",
            )?,
            policy: fp.choice(
                "policy",
                FastpassPolicy::Srpt,
                &[("srpt", FastpassPolicy::Srpt), ("edf", FastpassPolicy::Edf)],
            )?,
        };
        let pi = Section::new("pias", top.raw("pias"), PIAS_KEYS)?;
        let pias = resolve_pias(&pi, &workload, transport.protocol == Protocol::Pias)?;
        if transport.protocol == Protocol::Fastpass && topology.kind == TopologyKind::Pair {
            return Err(SpecError::new(
                "transport.protocol",
                "\"fastpass\" needs a switch to attach its arbiter to; topology.kind = \"pair\" has none",
            ));
        }
        let spec = Spec {
            seed,
            name,
            topology,
            workload,
            transport,
            dctcp,
            pfabric,
            phost,
            fastpass,
            pias,
            output,
            engine,
        };
        spec.check_files()?;
        Ok(spec)
    }

    /// Parses and resolves a TOML document.
    pub fn from_toml_str(text: &str) -> Result<Spec, SpecError> {
        Spec::resolve(&parse_toml(text)?)
    }

    /// Parses and resolves a JSON document (what the Python layer hands over).
    pub fn from_json_str(text: &str) -> Result<Spec, SpecError> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| SpecError::new("<json>", e.to_string()))?;
        Spec::resolve(&v)
    }

    /// The resolved spec as TOML, every default filled in.
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).expect("a resolved spec always serializes")
    }

    /// The resolved spec as JSON.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).expect("a resolved spec always serializes")
    }

    /// Loads every file the spec names (CDF, trace), so a bad file fails before the run.
    fn check_files(&self) -> Result<(), SpecError> {
        crate::workload::FlowSizeSampler::from_spec(&self.workload)?;
        if let Matrix::Trace(path) = &self.workload.matrix {
            crate::workload::trace::read_trace(path, self.topology.n_hosts())?;
        }
        Ok(())
    }
}

/// `[pias]`; thresholds are derived only for PIAS runs (`used`), so other protocols' specs
/// need no CDF for them.
fn resolve_pias(pi: &Section<'_>, w: &WorkloadSpec, used: bool) -> Result<PiasSpec, SpecError> {
    let queues = pi.u32_in("queues", 8, 1, 8)?;
    let reset_after_timeouts = pi.u32_in("reset_after_timeouts", 0, 0, 1_000_000)?;
    let ecn = pi.choice(
        "ecn",
        PiasEcn::PerPort,
        &[("per-port", PiasEcn::PerPort), ("per-queue", PiasEcn::PerQueue), ("off", PiasEcn::Off)],
    )?;
    let mut method = pi.choice(
        "threshold_method",
        PiasThresholdMethod::Auto,
        &[
            ("auto", PiasThresholdMethod::Auto),
            ("table", PiasThresholdMethod::Table),
            ("closed-form", PiasThresholdMethod::ClosedForm),
            ("equal-split", PiasThresholdMethod::EqualSplit),
        ],
    )?;
    let field = pi.field("thresholds");
    let k = queues as usize;
    // An empty list (as a resolved non-PIAS spec shows) means "not given".
    if let Some(given) = byte_list(pi, "thresholds")?.filter(|v| !v.is_empty()) {
        if given.len() != k - 1 {
            return Err(SpecError::new(
                &field,
                format!("{} thresholds given for {k} queues; give {}", given.len(), k - 1),
            ));
        }
        if !given.windows(2).all(|w| w[0] < w[1]) {
            return Err(SpecError::new(&field, format!("{given:?} must increase")));
        }
        return Ok(PiasSpec {
            queues,
            thresholds: given,
            threshold_method: method,
            ecn,
            reset_after_timeouts,
        });
    }
    if k == 1 || !used {
        return Ok(PiasSpec {
            queues,
            thresholds: Vec::new(),
            threshold_method: method,
            ecn,
            reset_after_timeouts,
        });
    }
    let named = match &w.flow_sizes {
        FlowSizes::Named(n) if w.tenants.is_empty() => Some(n.as_str()),
        _ => None,
    };
    let table = named.and_then(|n| crate::thresholds::pias_table_pkts(n, w.load));
    if method == PiasThresholdMethod::Auto {
        method = if table.is_some() && k == 8 {
            PiasThresholdMethod::Table
        } else {
            PiasThresholdMethod::ClosedForm
        };
    }
    let thresholds: Vec<u64> = match method {
        PiasThresholdMethod::Table => {
            let t = table.filter(|_| k == 8).ok_or_else(|| {
                SpecError::new(
                    pi.field("threshold_method"),
                    format!(
                        "the authors' table covers 8 queues for web search and data mining at loads 0.5, 0.6, 0.7, 0.8, 0.9; this run has {k} queues, {} at load {}: use \"closed-form\", \"equal-split\" or give `pias.thresholds`",
                        named.unwrap_or("these flow sizes"),
                        w.load
                    ),
                )
            })?;
            t.iter().map(|p| p * crate::units::MSS_BYTES as u64).collect()
        }
        _ => {
            let cdf = match crate::workload::FlowSizeSampler::from_spec(w)? {
                crate::workload::FlowSizeSampler::Cdf(cdf, _) => cdf,
                _ => {
                    return Err(SpecError::new(
                        &field,
                        "computing thresholds needs a flow-size CDF (`workload.flow_sizes` = a CDF); give `pias.thresholds` instead",
                    ))
                }
            };
            let d = crate::thresholds::SizeDist::from_cdf(&cdf);
            let t = if method == PiasThresholdMethod::EqualSplit {
                crate::thresholds::equal_split(&d, k)
            } else {
                crate::thresholds::pias_closed_form(&d, w.load, k)
            };
            increasing_bytes(&t)
        }
    };
    Ok(PiasSpec { queues, thresholds, threshold_method: method, ecn, reset_after_timeouts })
}

/// Rounds computed thresholds to whole bytes, at least 1 and strictly increasing.
fn increasing_bytes(t: &[f64]) -> Vec<u64> {
    let mut out: Vec<u64> = t.iter().map(|x| x.round().max(1.0) as u64).collect();
    for i in 1..out.len() {
        out[i] = out[i].max(out[i - 1] + 1);
    }
    out
}

/// A list of positive byte counts (integers or strings with units), if the key is present.
fn byte_list(s: &Section<'_>, key: &str) -> Result<Option<Vec<u64>>, SpecError> {
    let field = s.field(key);
    match s.raw(key) {
        None => Ok(None),
        Some(Value::Array(items)) => {
            let mut v = Vec::new();
            for item in items {
                let b = match item {
                    Value::String(x) => parse_bytes(x),
                    other => as_u64(other),
                };
                v.push(b.filter(|&b| b > 0).ok_or_else(|| {
                    SpecError::new(&field, format!("{} is not a positive byte count", show(item)))
                })?);
            }
            Ok(Some(v))
        }
        Some(v) => Err(SpecError::new(
            &field,
            format!("must be a list of byte counts, got {} {}", type_name(v), show(v)),
        )),
    }
}

/// The few-queue thresholds: as given (checked), or computed for the workload and load.
fn resolve_thresholds(
    pf: &Section<'_>,
    p: &PfabricSpec,
    w: &WorkloadSpec,
) -> Result<Vec<u64>, SpecError> {
    let field = pf.field("thresholds");
    let given = byte_list(pf, "thresholds")?;
    let k = p.queues as usize;
    if k == 0 {
        return match given {
            Some(v) if !v.is_empty() => {
                Err(SpecError::new(&field, "thresholds need `pfabric.queues` of 1-8"))
            }
            _ => Ok(Vec::new()),
        };
    }
    if let Some(v) = given {
        if v.len() != k - 1 {
            return Err(SpecError::new(
                &field,
                format!("{} thresholds given for {k} queues; give {}", v.len(), k - 1),
            ));
        }
        if !v.windows(2).all(|w| w[0] < w[1]) {
            return Err(SpecError::new(&field, format!("{v:?} must increase")));
        }
        return Ok(v);
    }
    let cdf = match crate::workload::FlowSizeSampler::from_spec(w)? {
        crate::workload::FlowSizeSampler::Cdf(cdf, _) => cdf,
        _ => {
            return Err(SpecError::new(
                &field,
                "computing thresholds needs a flow-size CDF (`workload.flow_sizes` = a CDF); give `pfabric.thresholds` instead",
            ))
        }
    };
    let d = crate::thresholds::SizeDist::from_cdf(&cdf);
    let t = match p.threshold_method {
        ThresholdMethod::Mg1 => crate::thresholds::optimise(&d, w.load, 0.0, k),
        ThresholdMethod::EqualSplit => crate::thresholds::equal_split(&d, k),
    };
    Ok(increasing_bytes(&t))
}

fn resolve_topology(t: &Section<'_>) -> Result<TopologySpec, SpecError> {
    let kind = t.choice(
        "kind",
        TopologyKind::LeafSpine,
        &[
            ("leaf-spine", TopologyKind::LeafSpine),
            ("fat-tree", TopologyKind::FatTree),
            ("star", TopologyKind::Star),
            ("dumbbell", TopologyKind::Dumbbell),
            ("pair", TopologyKind::Pair),
        ],
    )?;
    let racks = t.u32_in("racks", 9, 1, 4096)?;
    let hosts_per_rack = t.u32_in("hosts_per_rack", 16, 1, 4096)?;
    let spines = t.u32_in("spines", 4, 1, 1024)?;
    let k = t.u32_in("k", 6, 2, 64)?;
    if kind == TopologyKind::FatTree && k % 2 != 0 {
        return Err(SpecError::new(
            t.field("k"),
            format!("{k} does not fit a fat-tree: k must be even"),
        ));
    }
    let hosts = t.u32_in("hosts", 16, 2, 65536)?;
    let hosts_per_side = t.u32_in("hosts_per_side", 1, 1, 65536)?;
    let host_link_gbps =
        t.f64_in("host_link_gbps", 10.0, 1e-3, 1e4, "must be a positive rate in Gbps")?;
    let oversubscription =
        t.f64_in("oversubscription", 1.0, 1e-3, 1e3, "must be a positive ratio")?;
    let default_core = match kind {
        TopologyKind::LeafSpine => {
            host_link_gbps * hosts_per_rack as f64 / spines as f64 / oversubscription
        }
        _ => host_link_gbps,
    };
    let core_link_gbps =
        t.f64_in("core_link_gbps", default_core, 1e-3, 1e5, "must be a positive rate in Gbps")?;
    // Both may be given (a resolved spec has both) as long as they agree.
    if kind == TopologyKind::LeafSpine
        && t.raw("core_link_gbps").is_some()
        && t.raw("oversubscription").is_some()
        && (core_link_gbps - default_core).abs() > 1e-9 * default_core
    {
        return Err(SpecError::new(
            t.field("oversubscription"),
            format!(
                "{oversubscription} disagrees with `topology.core_link_gbps` = {core_link_gbps} \
                 (which implies {}); give one of them",
                host_link_gbps * hosts_per_rack as f64 / spines as f64 / core_link_gbps
            ),
        ));
    }
    // A core rate given on its own sets the ratio, so the resolved spec (which shows both)
    // agrees with itself.
    let oversubscription = if kind == TopologyKind::LeafSpine && t.raw("oversubscription").is_none()
    {
        host_link_gbps * hosts_per_rack as f64 / spines as f64 / core_link_gbps
    } else {
        oversubscription
    };
    let spec = TopologySpec {
        kind,
        racks,
        hosts_per_rack,
        spines,
        k,
        hosts,
        hosts_per_side,
        host_link_gbps,
        core_link_gbps,
        oversubscription,
        link_delay_ns: t.u64_in("link_delay_ns", 200, 0, 1_000_000_000)?,
        host_delay_ns: t.u64_in("host_delay_ns", 0, 0, 1_000_000_000)?,
        switching: t.choice(
            "switching",
            Switching::CutThrough,
            &[
                ("cut-through", Switching::CutThrough),
                ("store-and-forward", Switching::StoreAndForward),
            ],
        )?,
        load_balancing: t.choice(
            "load_balancing",
            LoadBalancing::Spray,
            &[
                ("spray", LoadBalancing::Spray),
                ("spray-random", LoadBalancing::SprayRandom),
                ("ecmp", LoadBalancing::Ecmp),
            ],
        )?,
        buffer_bytes: t.bytes("buffer_bytes", 36_864)?,
    };
    if spec.buffer_bytes < crate::units::MTU_BYTES as u64 {
        return Err(SpecError::new(
            t.field("buffer_bytes"),
            format!("{} bytes cannot hold one 1500-byte packet", spec.buffer_bytes),
        ));
    }
    if spec.n_hosts() < 2 {
        return Err(SpecError::new(t.field("kind"), "the topology must have at least 2 hosts"));
    }
    if spec.n_hosts() > 1_000_000 {
        return Err(SpecError::new(
            t.field("kind"),
            format!("{} hosts do not fit: at most 1,000,000", spec.n_hosts()),
        ));
    }
    Ok(spec)
}

/// A flow-size choice: a named CDF, "bimodal", a byte count or a CDF file (`field` names it in
/// errors).
fn parse_flow_sizes(v: Option<&Value>, field: String) -> Result<FlowSizes, SpecError> {
    let flow_sizes = match v {
        None => FlowSizes::Named("websearch".into()),
        Some(Value::String(s)) => {
            let lower = s.to_ascii_lowercase();
            if NAMED_CDFS.contains(&lower.as_str()) {
                FlowSizes::Named(lower)
            } else if lower == "bimodal" {
                FlowSizes::Bimodal
            } else if let Some(b) = parse_bytes(s) {
                FlowSizes::Fixed(b)
            } else if std::path::Path::new(s).exists() {
                FlowSizes::File(s.clone())
            } else {
                let mut names: Vec<&str> = NAMED_CDFS.to_vec();
                names.push("bimodal");
                let hint = suggest(s, &names)
                    .map(|n| format!(" (did you mean \"{n}\"?)"))
                    .unwrap_or_default();
                return Err(SpecError::new(
                    field.clone(),
                    format!("\"{s}\" is neither one of {}, a byte count, nor an existing CDF file{hint}", quote_list(&names)),
                ));
            }
        }
        Some(v) => match as_u64(v) {
            Some(b) => FlowSizes::Fixed(b),
            None => {
                return Err(SpecError::new(
                    field.clone(),
                    format!(
                        "must be a workload name, a CDF path or a byte count, got {} {}",
                        type_name(v),
                        show(v)
                    ),
                ))
            }
        },
    };
    if flow_sizes == FlowSizes::Fixed(0) {
        return Err(SpecError::new(field.clone(), "a fixed flow size must be at least 1 byte"));
    }
    Ok(flow_sizes)
}

fn resolve_workload(w: &Section<'_>, topo: &TopologySpec) -> Result<WorkloadSpec, SpecError> {
    let flow_sizes = parse_flow_sizes(w.raw("flow_sizes"), w.field("flow_sizes"))?;
    let tenants = match w.raw("tenants") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| parse_flow_sizes(Some(v), format!("{}[{i}]", w.field("tenants"))))
            .collect::<Result<Vec<_>, _>>()?,
        Some(v) => {
            return Err(SpecError::new(
                w.field("tenants"),
                format!(
                    "must be a list of flow sizes (one per tenant), got {} {}",
                    type_name(v),
                    show(v)
                ),
            ))
        }
    };
    let tenant_weights: Vec<f64> = match w.raw("tenant_weights") {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                match v.as_f64() {
                    Some(x) if x > 0.0 && x.is_finite() => out.push(x),
                    _ => {
                        return Err(SpecError::new(
                            format!("{}[{i}]", w.field("tenant_weights")),
                            format!("{} is not a positive number", show(v)),
                        ))
                    }
                }
            }
            out
        }
        Some(v) => {
            return Err(SpecError::new(
                w.field("tenant_weights"),
                format!("must be a list of positive numbers, got {} {}", type_name(v), show(v)),
            ))
        }
    };
    if !tenant_weights.is_empty() && tenant_weights.len() != tenants.len() {
        return Err(SpecError::new(
            w.field("tenant_weights"),
            format!(
                "{} weights for {} tenants: give one weight per entry of `workload.tenants`",
                tenant_weights.len(),
                tenants.len()
            ),
        ));
    }
    let arrivals = w.choice(
        "arrivals",
        Arrivals::Poisson,
        &[("poisson", Arrivals::Poisson), ("at-start", Arrivals::AtStart)],
    )?;
    let b = Section::new("workload.bimodal", w.raw("bimodal"), BIMODAL_KEYS)?;
    let bimodal = BimodalSpec {
        small_bytes: b.bytes("small_bytes", 3 * 1460)?,
        large_bytes: b.bytes("large_bytes", 700 * 1460)?,
        p_small: b.f64_in("p_small", 0.5, 0.0, 1.0, "must be a probability between 0 and 1")?,
    };
    let load = w.f64("load", 0.6)?;
    if !(load > 0.0 && load < 1.0) {
        return Err(SpecError::new(
            w.field("load"),
            format!("{load} is out of range: load must be > 0 and < 1"),
        ));
    }
    let matrix = match w.string("matrix")? {
        None => Matrix::AllToAll,
        Some(s) => match s.to_ascii_lowercase().as_str() {
            "all-to-all" => Matrix::AllToAll,
            "permutation" => Matrix::Permutation,
            "incast" => Matrix::Incast,
            "fan-in" => Matrix::FanIn,
            _ if s.ends_with(".csv") || std::path::Path::new(s).exists() => {
                Matrix::Trace(s.to_string())
            }
            _ => {
                let names = ["all-to-all", "permutation", "incast", "fan-in"];
                let hint = suggest(s, &names)
                    .map(|n| format!(" (did you mean \"{n}\"?)"))
                    .unwrap_or_default();
                return Err(SpecError::new(
                    w.field("matrix"),
                    format!(
                        "\"{s}\" is not one of {} nor a trace CSV file{hint}",
                        quote_list(&names)
                    ),
                ));
            }
        },
    };
    let incast_senders = w.u32_in("incast_senders", 10, 1, 1_000_000)?;
    if matrix == Matrix::Incast && incast_senders >= topo.n_hosts() {
        return Err(SpecError::new(
            w.field("incast_senders"),
            format!(
                "{incast_senders} senders do not fit: the topology has {} hosts, so at most {}",
                topo.n_hosts(),
                topo.n_hosts() - 1
            ),
        ));
    }
    let queries = w.u64_in("queries", 0, 0, 1_000_000_000)?;
    let query_fanout = w.u32_in("query_fanout", 15, 1, 1_000_000)?;
    if queries > 0 && query_fanout >= topo.n_hosts() {
        return Err(SpecError::new(
            w.field("query_fanout"),
            format!(
                "{query_fanout} servers do not fit: host 0 can ask at most the {} other hosts",
                topo.n_hosts() - 1
            ),
        ));
    }
    let flows = w.u64_in("flows", 20_000, 0, 1_000_000_000)?;
    if flows == 0 && !matches!(matrix, Matrix::Trace(_)) {
        return Err(SpecError::new(
            w.field("flows"),
            "0 flows: give at least 1 (0 means \"all rows\" only for a trace)",
        ));
    }
    let stop_when = w.choice(
        "stop_when",
        StopWhen::AllFinished,
        &[("all-finished", StopWhen::AllFinished), ("n-finished", StopWhen::NFinished)],
    )?;
    if stop_when == StopWhen::NFinished {
        // Arrivals must go on past `flows`: a trace ends, and "at-start" would put an
        // unbounded number of flows at time 0.
        let why = match (&matrix, arrivals) {
            (Matrix::Trace(_), _) => Some("a trace has a fixed set of flows"),
            (_, Arrivals::AtStart) => {
                Some("with arrivals = \"at-start\" every flow starts at time 0")
            }
            _ => None,
        };
        if let Some(why) = why {
            return Err(SpecError::new(
                w.field("stop_when"),
                format!(
                    "\"n-finished\" needs arrivals that go on past `flows`, and {why}; use \"all-finished\""
                ),
            ));
        }
    }
    Ok(WorkloadSpec {
        flow_sizes,
        size_sampling: w.choice(
            "size_sampling",
            SizeSampling::Interpolate,
            &[
                ("interpolate", SizeSampling::Interpolate),
                ("interpolate-round", SizeSampling::InterpolateRound),
                ("step", SizeSampling::Step),
            ],
        )?,
        bimodal,
        load,
        mean_size_bytes: w.bytes("mean_size_bytes", 0)?,
        matrix,
        tenants,
        tenant_weights,
        arrivals,
        incast_senders,
        queries,
        query_rate_per_s: w.f64_in(
            "query_rate_per_s",
            20.0,
            1e-6,
            1e12,
            "must be a positive rate (queries per second)",
        )?,
        query_fanout,
        query_bytes: w.bytes("query_bytes", 1000)?.max(1),
        flows,
        duration_ms: w.f64_in("duration_ms", 0.0, 0.0, 1e9, "must be >= 0 (0 = no limit)")?,
        stop_when,
        warmup_fraction: w.f64_in("warmup_fraction", 0.0, 0.0, 0.99, "must be in [0, 0.99]")?,
        deadline_mean_us: w.f64_in(
            "deadline_mean_us",
            0.0,
            0.0,
            1e12,
            "must be >= 0 (0 = no deadlines)",
        )?,
    })
}

fn resolve_transport(t: &Section<'_>, topo: &TopologySpec) -> Result<TransportSpec, SpecError> {
    let protocol = t.choice("protocol", Protocol::Dctcp, Protocol::ALL)?;
    let dupack_threshold = match t.raw("dupack_threshold") {
        None => match topo.load_balancing {
            LoadBalancing::Ecmp => DupAckThreshold::Fixed(3),
            _ => DupAckThreshold::Dynamic(0.75),
        },
        Some(Value::String(s)) if s.eq_ignore_ascii_case("dynamic") => {
            DupAckThreshold::Dynamic(0.75)
        }
        Some(Value::String(s)) if s.eq_ignore_ascii_case("off") => DupAckThreshold::Off,
        Some(v) => match as_u64(v) {
            Some(n) if (1..=1_000_000).contains(&n) => DupAckThreshold::Fixed(n as u32),
            _ => {
                return Err(SpecError::new(
                    t.field("dupack_threshold"),
                    format!(
                        "{} is not allowed: use an integer >= 1, \"dynamic\" or \"off\"",
                        show(v)
                    ),
                ))
            }
        },
    };
    let initial_window_pkts = t.u32_in("initial_window_pkts", 12, 1, 1_000_000)?;
    let max_window_pkts = t.u32_in("max_window_pkts", 149, 1, 1_000_000)?;
    if max_window_pkts < initial_window_pkts {
        return Err(SpecError::new(
            t.field("max_window_pkts"),
            format!("{max_window_pkts} is below `transport.initial_window_pkts` = {initial_window_pkts}"),
        ));
    }
    let min_rto_us = t.f64_in("min_rto_us", 200.0, 0.001, 1e9, "must be a positive time in µs")?;
    let max_rto_us =
        t.f64_in("max_rto_us", 2_000_000.0, 0.001, 1e10, "must be a positive time in µs")?;
    if max_rto_us < min_rto_us {
        return Err(SpecError::new(
            t.field("max_rto_us"),
            format!("{max_rto_us} is below `transport.min_rto_us` = {min_rto_us}"),
        ));
    }
    let buffer_bytes = t.bytes("buffer_bytes", 0)?;
    if buffer_bytes > 0 && buffer_bytes < crate::units::MTU_BYTES as u64 {
        return Err(SpecError::new(
            t.field("buffer_bytes"),
            format!("{buffer_bytes} bytes cannot hold one 1500-byte packet"),
        ));
    }
    Ok(TransportSpec {
        protocol,
        initial_window_pkts,
        max_window_pkts,
        rto: t.choice(
            "rto",
            RtoMode::Adaptive,
            &[("adaptive", RtoMode::Adaptive), ("fixed", RtoMode::Fixed)],
        )?,
        min_rto_us,
        max_rto_us,
        dupack_threshold,
        buffer_bytes,
        sack: t.bool("sack", false)?,
        probe_after_timeouts: t.u32_in("probe_after_timeouts", 0, 0, 1_000_000)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(toml: &str) -> SpecError {
        Spec::from_toml_str(toml).unwrap_err()
    }

    #[test]
    fn defaults_are_the_papers_fabric() {
        let s = Spec::from_toml_str("").unwrap();
        assert_eq!(s.topology.n_hosts(), 144);
        assert_eq!(s.topology.core_link_gbps, 40.0);
        assert_eq!(s.workload.load, 0.6);
        assert_eq!(s.transport.protocol, Protocol::Dctcp);
        assert_eq!(s.transport.dupack_threshold, DupAckThreshold::Dynamic(0.75));
        // The resolved spec round-trips through TOML.
        let again = Spec::from_toml_str(&s.to_toml_string()).unwrap();
        assert_eq!(again, s);
        // Also when an explicit core rate implies an oversubscription (PIAS Fig. 18: 3:1).
        let s = Spec::from_toml_str(
            "[topology]\nracks = 3\nhosts_per_rack = 48\nspines = 4\ncore_link_gbps = 40",
        )
        .unwrap();
        assert_eq!(s.topology.oversubscription, 3.0);
        assert_eq!(Spec::from_toml_str(&s.to_toml_string()).unwrap(), s);
    }

    #[test]
    fn pias_thresholds_resolve_or_are_rejected_with_the_field() {
        let pias = "[transport]\nprotocol = \"pias\"\n";
        // auto: the authors' table at a tabulated load, the closed form elsewhere.
        let s = Spec::from_toml_str(pias).unwrap();
        assert_eq!(s.pias.threshold_method, PiasThresholdMethod::Table);
        assert_eq!(s.pias.thresholds[0], 956 * 1460);
        let s = Spec::from_toml_str(&format!("{pias}[workload]\nload = 0.65\n")).unwrap();
        assert_eq!(s.pias.threshold_method, PiasThresholdMethod::ClosedForm);
        assert_eq!(s.pias.thresholds.len(), 7);
        let e = Spec::from_toml_str(&format!(
            "{pias}[workload]\nload = 0.65\n[pias]\nthreshold_method = \"table\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.path, "pias.threshold_method");
        assert!(e.message.contains("websearch at load 0.65"), "{}", e.message);
        let e = Spec::from_toml_str(&format!("{pias}[pias]\nqueues = 3\nthresholds = [1000]\n"))
            .unwrap_err();
        assert_eq!(e.path, "pias.thresholds");
        // Other protocols need no thresholds, even with a fixed flow size.
        let s = Spec::from_toml_str("[workload]\nflow_sizes = 5000\n").unwrap();
        assert!(s.pias.thresholds.is_empty());
    }

    #[test]
    fn misspelt_keys_get_a_suggestion() {
        let e = err("[workload]\nlaod = 0.5");
        assert_eq!(e.path, "workload.laod");
        assert!(e.message.contains("did you mean `workload.load`"), "{e}");
        let e = err("[topolgy]\nkind = \"star\"");
        assert!(e.message.contains("did you mean `topology`"), "{e}");
        let e = err("[topology]\nkind = \"fat-tre\"");
        assert!(e.message.contains("did you mean \"fat-tree\""), "{e}");
    }

    #[test]
    fn bad_values_name_field_value_and_range() {
        for (toml, path, needle) in [
            ("[workload]\nload = 1.0", "workload.load", "must be > 0 and < 1"),
            ("[workload]\nload = 0", "workload.load", "must be > 0 and < 1"),
            (
                "[workload]\nload = \"high\"",
                "workload.load",
                "must be a number, got a string \"high\"",
            ),
            ("[topology]\nracks = -3", "topology.racks", "non-negative integer"),
            ("[topology]\nkind = \"fat-tree\"\nk = 5", "topology.k", "must be even"),
            ("[topology]\nbuffer_bytes = 100", "topology.buffer_bytes", "cannot hold"),
            (
                "[workload]\nmatrix = \"incast\"\nincast_senders = 144",
                "workload.incast_senders",
                "do not fit",
            ),
            ("[transport]\nprotocol = \"dctpc\"", "transport.protocol", "did you mean \"dctcp\""),
            (
                "[transport]\ndupack_threshold = \"sometimes\"",
                "transport.dupack_threshold",
                "\"dynamic\" or \"off\"",
            ),
        ] {
            let e = err(toml);
            assert_eq!(e.path, path, "{toml}");
            assert!(e.message.contains(needle), "{toml}: {e}");
        }
    }

    #[test]
    fn byte_counts_accept_units() {
        assert_eq!(parse_bytes("36KB"), Some(36_000));
        assert_eq!(parse_bytes("1.5 MB"), Some(1_500_000));
        assert_eq!(parse_bytes("64KiB"), Some(65_536));
        assert_eq!(parse_bytes("12"), Some(12));
        assert_eq!(parse_bytes("lots"), None);
        let s = Spec::from_toml_str("[workload]\nflow_sizes = \"100KB\"").unwrap();
        assert_eq!(s.workload.flow_sizes, FlowSizes::Fixed(100_000));
    }
}
