//! The protocol registry: the one list of dcsim's protocols.
//!
//! Each line gives the protocol's variant, its `transport.protocol` name, its module's
//! definition type (a [`crate::transport::Protocol`] in `transport/<module>.rs`), with a doc
//! line, then what it reads of the spec besides `[topology]`, `[workload]`, `[output]`,
//! `[engine]` and `transport.protocol`: its `sections`, and whether its hosts take the
//! window and timer settings of `[transport]` (`window`), and whether it can run partitioned
//! (`partitioned`: its ends talk only through packets, so `engine.partitioned = true` can
//! split the fabric, see [`crate::partition`]; a protocol that cannot gives the reason after
//! `false`, and a spec asking for it partitioned is refused with it). The spec's protocol choice (names,
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
                sections ["dctcp"], window true, partitioned true,
            /// TCP NewReno over DropTail.
            Tcp = "tcp" => tcp::TcpProtocol,
                sections [], window true, partitioned true,
            /// pFabric: priority-dropping switches with MinTCP or LineRate (see `[pfabric]`).
            Pfabric = "pfabric" => pfabric::PfabricProtocol,
                sections ["pfabric"], window false, partitioned true,
            /// Ideal: flow-level end-to-end SRPT over the same flows (pFabric HotNets'12 §3).
            Ideal = "ideal" => ideal::IdealProtocol,
                sections [], window false, partitioned false
                    "a flow-level model, without packets",
            /// pHost: receiver-driven tokens (see `[phost]`).
            Phost = "phost" => phost::PhostProtocol,
                sections ["phost"], window false, partitioned true,
            /// Fastpass: a centralised arbiter schedules every packet (see `[fastpass]`).
            Fastpass = "fastpass" => fastpass::FastpassProtocol,
                sections ["fastpass"], window false, partitioned true,
            /// PIAS: MLFQ tagging by bytes sent, strict-priority queues with ECN, DCTCP (see
            /// `[pias]`).
            Pias = "pias" => pias::PiasProtocol,
                sections ["dctcp", "pias"], window true, partitioned true,
            /// LAS: pFabric's priority-dropping switch keyed by bytes sent, MinTCP hosts (see
            /// `[pfabric]` for the host and buffer settings).
            Las = "las" => las::LasProtocol,
                sections ["pfabric"], window false, partitioned true,
            /// L2DCT: DCTCP with size-aware weights from bytes sent (see `[dctcp]`).
            L2dct = "l2dct" => l2dct::L2dctProtocol,
                sections ["dctcp", "l2dct"], window true, partitioned true,
            /// D2TCP: DCTCP whose back-off depends on deadline imminence (see `[dctcp]`).
            D2tcp = "d2tcp" => d2tcp::D2tcpProtocol,
                sections ["dctcp"], window true, partitioned true,
            /// PASE: arbitration, a few strict-priority queues and self-adjusting endpoints
            /// (see `[pase]`).
            Pase = "pase" => pase::PaseProtocol,
                sections ["pase", "dctcp"], window true, partitioned true,
            /// Homa: receiver-driven grants, unscheduled first RTTbytes and network priorities
            /// (see `[homa]`).
            Homa = "homa" => homa::HomaProtocol,
                sections ["homa"], window false, partitioned true,
            /// dcPIM: per-epoch matching rounds, then receiver tokens on the matched channels
            /// (see `[dcpim]`).
            Dcpim = "dcpim" => dcpim::DcpimProtocol,
                sections ["dcpim"], window false, partitioned true,
        }
    };
}

pub(crate) use for_each_protocol;
