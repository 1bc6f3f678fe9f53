//! `[l2dct]`: L2DCT's own settings (its DCTCP settings are `[dctcp]`'s).

use super::reader::Section;
use crate::error::SpecError;
use serde::Serialize;

/// `[l2dct]` (L2DCT, Munir et al., INFOCOM'13; as the PIAS authors run it, docs/model.md).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct L2dctSpec {
    /// The window increase in congestion avoidance. Default `weighted`.
    pub increase: L2dctIncrease,
}

crate::choice! {
    /// L2DCT's additive increase (`l2dct.increase`).
    pub enum L2dctIncrease {
        /// w / 2.5 packets per round trip (w the flow's weight, 0.125-2.5): the rule the PIAS
        /// authors' ns-2 agent is written to apply.
        Weighted = "weighted",
        /// Two packets per round trip whatever the weight: what that agent does with
        /// `windowOption_ 0`, whose L2DCT test and standard test each advance the window
        /// counter on every ACK (HKUST-SING/PIAS-NS2, `tcp/tcp.cc`, `TcpAgent::opencwnd`).
        AuthorsCode = "authors-code",
    }
}

/// Resolves `[l2dct]`.
pub fn resolve(l: &Section<'_>) -> Result<L2dctSpec, SpecError> {
    Ok(L2dctSpec { increase: l.choice("increase", L2dctIncrease::Weighted)? })
}
