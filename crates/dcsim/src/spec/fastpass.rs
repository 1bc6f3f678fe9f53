//! `[fastpass]`: Fastpass as the pHost paper simulates it (pHost §4.1) and the authors'-code
//! preset.

use super::reader::Section;
use super::topology::{TopologyKind, TopologySpec};
use super::transport::Protocol;
use crate::error::SpecError;
use serde::Serialize;

crate::choice! {
    /// Which reading of the pHost paper's Fastpass.
    pub enum FastpassPreset {
        /// The paper's §4.1 ("perfect clock synchronisation"): slots at the epoch's absolute
        /// times, and dcsim's watchdog for lost schedules.
        Paper = "paper",
        /// The authors' public code (NetSys/simulator): slots start when the schedule
        /// arrives, no watchdog, flow sizes rounded to whole packets.
        AuthorsCode = "authors-code",
    }
}

crate::choice! {
    /// When a source's granted timeslots begin.
    pub enum FastpassSlotStart {
        /// At the epoch's boundary on the global grid, one epoch after the arbiter computed
        /// it (the slot's absolute time; a schedule that arrives late starts on arrival).
        Epoch = "epoch",
        /// When the schedule packet arrives (the authors' code clamps the epoch start to the
        /// arrival time).
        Arrival = "arrival",
    }
}

/// `[fastpass]` (pHost §4.1): the arbiter's epoch.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FastpassSpec {
    /// `paper` (default) or `authors-code`: sets the defaults of `slot_start`,
    /// `watchdog_epochs` and `workload.size_sampling`.
    pub preset: FastpassPreset,
    /// Timeslots per epoch (8).
    pub epoch_slots: u32,
    /// Epoch length in MTU transmission times at the host rate (8.5: 10.2 µs at 10 Gbps; a
    /// timeslot is epoch / epoch_slots).
    pub epoch_mtu: f64,
    /// The arbiter's order: `srpt` (default: fewest packets left to schedule) or `edf`
    /// (earliest deadline first).
    pub policy: FastpassPolicy,
    /// When a source's slots begin: `epoch` (paper preset) or `arrival` (authors' code).
    pub slot_start: FastpassSlotStart,
    /// Epochs without any slot after which a source with slots requested asks again (paper
    /// preset 16: dcsim's recovery from a lost schedule; 0 = never, as the authors' code).
    pub watchdog_epochs: u32,
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
    let preset = fp.choice("preset", FastpassPreset::Paper)?;
    let code = preset == FastpassPreset::AuthorsCode;
    let spec = FastpassSpec {
        preset,
        epoch_slots: fp.u32_in("epoch_slots", 8, 1, 1024)?,
        epoch_mtu: fp.f64_in(
            "epoch_mtu",
            8.5,
            0.01,
            1e6,
            "must be a positive number of MTU times",
        )?,
        policy: fp.choice("policy", FastpassPolicy::Srpt)?,
        slot_start: fp.choice(
            "slot_start",
            if code { FastpassSlotStart::Arrival } else { FastpassSlotStart::Epoch },
        )?,
        watchdog_epochs: fp.u32_in("watchdog_epochs", if code { 0 } else { 16 }, 0, 1_000_000)?,
    };
    if protocol == Protocol::Fastpass && topology.kind == TopologyKind::Pair {
        return Err(SpecError::new(
            "transport.protocol",
            "\"fastpass\" needs a switch to attach its arbiter to; topology.kind = \"pair\" has none",
        ));
    }
    Ok(spec)
}
