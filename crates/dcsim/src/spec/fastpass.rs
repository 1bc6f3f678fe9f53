//! `[fastpass]`: Fastpass as the pHost paper simulates it (pHost §4.1).

use super::reader::Section;
use super::topology::{TopologyKind, TopologySpec};
use super::transport::Protocol;
use crate::error::SpecError;
use serde::Serialize;

/// `[fastpass]` (pHost §4.1): the arbiter's epoch.
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

crate::choice! {
    /// The Fastpass arbiter's flow order.
    pub enum FastpassPolicy {
        /// Fewest packets left to schedule first.
        Srpt = "srpt",
        /// Earliest deadline first.
        Edf = "edf",
    }
}

/// Resolves `[fastpass]`; a Fastpass run needs a switch for its arbiter.
pub fn resolve(
    fp: &Section<'_>,
    protocol: Protocol,
    topology: &TopologySpec,
) -> Result<FastpassSpec, SpecError> {
    let spec = FastpassSpec {
        epoch_slots: fp.u32_in("epoch_slots", 8, 1, 1024)?,
        epoch_mtu: fp.f64_in(
            "epoch_mtu",
            8.5,
            0.01,
            1e6,
            "must be a positive number of MTU times",
        )?,
        policy: fp.choice("policy", FastpassPolicy::Srpt)?,
    };
    if protocol == Protocol::Fastpass && topology.kind == TopologyKind::Pair {
        return Err(SpecError::new(
            "transport.protocol",
            "\"fastpass\" needs a switch to attach its arbiter to; topology.kind = \"pair\" has none",
        ));
    }
    Ok(spec)
}
