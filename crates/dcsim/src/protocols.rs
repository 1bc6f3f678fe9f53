//! The protocol registry: the one list of dcsim's protocols.
//!
//! Each line gives the protocol's variant, its `transport.protocol` name, its module's
//! definition type (a [`crate::transport::Protocol`] in `transport/<module>.rs`), with a doc
//! line, then what it reads of the spec besides `[topology]`, `[workload]`, `[output]`,
//! `[engine]` and `transport.protocol`: its `sections`, and whether its hosts take the
//! window and timer settings of `[transport]` (`window`). The spec's protocol choice (names,
//! parsing, documentation), which sections and fields apply to a run (the spec's unused-field
//! report, `dcsim show`'s marks) and the transport dispatch are generated from this list;
//! nothing else lists protocols. Adding a protocol is its module plus one line here (see
//! `crates/README.md`, "Adding a protocol").
//!
//! This module imports nothing: `for_each_protocol!` hands the list to a macro of the
//! caller's, so the spec and the transports can both derive from it without importing each
//! other.

/// Calls `$callback! { … }` with the registry's list.
macro_rules! for_each_protocol {
    ($callback:ident) => {
        $callback! {
            /// DCTCP over DropTail with ECN marking (see `[dctcp]`).
            Dctcp = "dctcp" => dctcp::DctcpProtocol,
                sections ["dctcp"], window true,
            /// TCP NewReno over DropTail.
            Tcp = "tcp" => tcp::TcpProtocol,
                sections [], window true,
            /// pFabric: priority-dropping switches with MinTCP or LineRate (see `[pfabric]`).
            Pfabric = "pfabric" => pfabric::PfabricProtocol,
                sections ["pfabric"], window false,
            /// Ideal: flow-level end-to-end SRPT over the same flows (pFabric HotNets'12 §3).
            Ideal = "ideal" => ideal::IdealProtocol,
                sections [], window false,
            /// pHost: receiver-driven tokens (see `[phost]`).
            Phost = "phost" => phost::PhostProtocol,
                sections ["phost"], window false,
            /// Fastpass: a centralised arbiter schedules every packet (see `[fastpass]`).
            Fastpass = "fastpass" => fastpass::FastpassProtocol,
                sections ["fastpass"], window false,
            /// PIAS: MLFQ tagging by bytes sent, strict-priority queues with ECN, DCTCP (see
            /// `[pias]`).
            Pias = "pias" => pias::PiasProtocol,
                sections ["dctcp", "pias"], window true,
            /// LAS: pFabric's priority-dropping switch keyed by bytes sent, MinTCP hosts (see
            /// `[pfabric]` for the host and buffer settings).
            Las = "las" => las::LasProtocol,
                sections ["pfabric"], window false,
            /// L2DCT: DCTCP with size-aware weights from bytes sent (see `[dctcp]`).
            L2dct = "l2dct" => l2dct::L2dctProtocol,
                sections ["dctcp"], window true,
            /// D2TCP: DCTCP whose back-off depends on deadline imminence (see `[dctcp]`).
            D2tcp = "d2tcp" => d2tcp::D2tcpProtocol,
                sections ["dctcp"], window true,
            /// PASE: arbitration, a few strict-priority queues and self-adjusting endpoints
            /// (see `[pase]`).
            Pase = "pase" => pase::PaseProtocol,
                sections ["pase", "dctcp"], window true,
            /// Homa: receiver-driven grants, unscheduled first RTTbytes and network priorities
            /// (see `[homa]`).
            Homa = "homa" => homa::HomaProtocol,
                sections ["homa"], window false,
            /// dcPIM: per-epoch matching rounds, then receiver tokens on the matched channels
            /// (see `[dcpim]`).
            Dcpim = "dcpim" => dcpim::DcpimProtocol,
                sections ["dcpim"], window false,
        }
    };
}

pub(crate) use for_each_protocol;
