//! `[transport]`: the protocol and the window mechanism's settings.

use super::reader::{as_u64, show, Kind, Section};
use super::reader::{MAX_BUFFER_BYTES, MAX_WINDOW_PKTS};
use super::topology::{LoadBalancing, TopologySpec};
use crate::error::SpecError;
use serde::Serialize;
use serde_json::Value;

/// Generates the protocol choice, and what each protocol reads of the spec, from the
/// registry's list ([`crate::protocols`]).
macro_rules! protocol_choice {
    ($($(#[$doc:meta])* $variant:ident = $name:literal => $module:ident :: $def:ident,
        sections [$($section:literal),*], window $window:literal, partitioned $partitioned:literal $($why_not:literal)?,)+) => {
        crate::choice! {
            /// Protocols: the registry's list ([`crate::protocols`]).
            pub enum Protocol {
                $($(#[$doc])* $variant = $name,)+
            }
        }

        impl Protocol {
            /// The spec sections the protocol reads besides `[topology]`, `[workload]`,
            /// `[transport]`, `[output]` and `[engine]`; a set field of another protocol's
            /// section has no effect on its run.
            pub fn sections(self) -> &'static [&'static str] {
                match self { $(Protocol::$variant => &[$($section),*],)+ }
            }

            /// Whether its hosts take `[transport]`'s window and timer settings
            /// ([`WINDOW_FIELDS`]).
            pub fn reads_window_fields(self) -> bool {
                match self { $(Protocol::$variant => $window,)+ }
            }

            /// Whether it can run in the partitioned model (`engine.partitioned`): its hosts
            /// share no state except through packets ([`crate::partition`]).
            pub fn runs_partitioned(self) -> bool {
                match self { $(Protocol::$variant => $partitioned,)+ }
            }

            /// Why it cannot run partitioned ("" when it can): the registry's reason.
            pub fn why_not_partitioned(self) -> &'static str {
                match self {
                    $(Protocol::$variant => {
                        let reasons: &[&'static str] = &[$($why_not)?];
                        reasons.first().copied().unwrap_or("")
                    },)+
                }
            }
        }
    };
}

/// The `[transport]` fields of the window mechanism (windows, timers, fast retransmit, SACK,
/// probe mode): read only by the protocols whose hosts use it
/// ([`Protocol::reads_window_fields`]).
pub const WINDOW_FIELDS: &[&str] = &[
    "initial_window_pkts",
    "max_window_pkts",
    "rto",
    "min_rto_us",
    "max_rto_us",
    "dupack_threshold",
    "sack",
    "probe_after_timeouts",
    "connections",
];

crate::protocols::for_each_protocol!(protocol_choice);

crate::choice! {
    /// Retransmission timeout behaviour.
    pub enum RtoMode {
        /// max(min_rto, srtt + 4·rttvar), doubled per consecutive timeout up to `max_rto_us`.
        Adaptive = "adaptive",
        /// Always `min_rto_us`, no backoff (MinTCP).
        Fixed = "fixed",
    }
}

crate::choice! {
    /// The order in which the flow-level Ideal serves flows.
    pub enum IdealOrder {
        /// Fewest bytes left first: end-to-end SRPT (pFabric HotNets'12 §3).
        Remaining = "remaining",
        /// Smallest flow first, by its original size (preemptive shortest job first).
        Size = "size",
    }
}

crate::choice! {
    /// Which connection a window protocol's flow runs on.
    pub enum Connections {
        /// Each flow opens a connection of its own: initial window, no slow-start threshold,
        /// the policy's initial state (DCTCP's `dctcp.initial_alpha`), no RTT sample.
        PerFlow = "per-flow",
        /// One persistent connection per host pair and flow at a time (the pFabric and PIAS
        /// authors' ns-2 scripts, `tcp-common-opt.tcl`): a flow takes the pair's connection
        /// idle longest, if any, and keeps its slow-start threshold, RTT estimate and DCTCP's
        /// α; its window starts at `initial_window_pkts` again. A flow that finds every
        /// connection of its pair busy opens a new one.
        PerHostPair = "per-host-pair",
    }
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

/// [`DupAckThreshold`] in a checkpoint, whole (the spec's own form above names `dynamic`
/// without its factor, which the spec gives apart).
pub(crate) mod dupack_state {
    use super::DupAckThreshold;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    enum Form {
        Fixed(u32),
        Dynamic(f64),
        Off,
    }

    pub fn serialize<S: Serializer>(v: &DupAckThreshold, s: S) -> Result<S::Ok, S::Error> {
        match *v {
            DupAckThreshold::Fixed(n) => Form::Fixed(n),
            DupAckThreshold::Dynamic(f) => Form::Dynamic(f),
            DupAckThreshold::Off => Form::Off,
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DupAckThreshold, D::Error> {
        Ok(match Form::deserialize(d)? {
            Form::Fixed(n) => DupAckThreshold::Fixed(n),
            Form::Dynamic(f) => DupAckThreshold::Dynamic(f),
            Form::Off => DupAckThreshold::Off,
        })
    }
}

/// `[transport]`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TransportSpec {
    /// `dctcp` (default), `tcp`, `pfabric`, `ideal`, `phost` or `fastpass`.
    pub protocol: Protocol,
    /// Initial congestion window, packets. Default 12 (the pFabric authors' ns-2 scripts).
    pub initial_window_pkts: u32,
    /// Largest congestion window, packets. Default 149 (the pFabric authors' ns-2 scripts).
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
    /// Selective acknowledgements: after a timeout, resend only the packets the receiver is
    /// not known to hold (one SACK block per ACK; the ns-2 `FullTcp/Sack` agents of the
    /// pFabric scripts).
    /// Default false (NewReno).
    pub sack: bool,
    /// MinTCP's probe mode after this many consecutive timeouts (the PIAS scripts' agents:
    /// 5); 0 (default) = never.
    pub probe_after_timeouts: u32,
    /// `per-flow` (default) or `per-host-pair` (persistent connections).
    pub connections: Connections,
    /// How the flow-level Ideal (`protocol = "ideal"`) orders the flows it serves:
    /// `remaining` (default: end-to-end SRPT, pFabric HotNets'12 §3) or `size` (their
    /// original sizes, a reading of §2.1's "in non-decreasing order of size").
    pub ideal_order: IdealOrder,
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

/// Resolves `[transport]` for `topo`.
pub fn resolve(t: &Section<'_>, topo: &TopologySpec) -> Result<TransportSpec, SpecError> {
    let protocol = t.choice("protocol", Protocol::Dctcp)?;
    t.declare(
        "dupack_threshold",
        Kind::Custom {
            types: &["integer", "string"],
            note: "an integer >= 1, \"dynamic\" (max(3, 0.75 cwnd)) or \"off\"; default \"dynamic\" under spraying, 3 under ECMP",
        },
        "dynamic".into(),
    );
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
    let max_window_pkts = t.u32_in("max_window_pkts", 149, 1, MAX_WINDOW_PKTS)?;
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
    let buffer_bytes = t.bytes_in("buffer_bytes", 0, 0, MAX_BUFFER_BYTES)?;
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
        rto: t.choice("rto", RtoMode::Adaptive)?,
        min_rto_us,
        max_rto_us,
        dupack_threshold,
        buffer_bytes,
        sack: t.bool("sack", false)?,
        probe_after_timeouts: t.u32_in("probe_after_timeouts", 0, 0, 1_000_000)?,
        connections: t.choice("connections", Connections::PerFlow)?,
        ideal_order: t.choice("ideal_order", IdealOrder::Remaining)?,
    })
}
