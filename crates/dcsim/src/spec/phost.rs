//! `[phost]`: pHost's parameters (pHost CoNEXT'15 §3-4.1) and the authors'-code preset.

use super::reader::Section;
use crate::error::SpecError;
use serde::Serialize;

crate::choice! {
    /// Which reading of pHost's parameters.
    pub enum PhostPreset {
        /// The paper's §4.1: 8 free tokens per flow, expiry 1.5, downgrade 8, re-issue 24 MTU
        /// times, short/long data priorities.
        Paper = "paper",
        /// The authors' public code (NetSys/simulator): free tokens only for flows of ≤ 8
        /// packets, downgrade 25 and re-issue 9 MTU times, all data at one priority.
        AuthorsCode = "authors-code",
    }
}

/// `[phost]` (pHost CoNEXT'15 §3-4.1). Times are in MTU transmission times at the host
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
    /// Source-side recovery of a lost RTS or ACK, which neither the paper nor the authors'
    /// code has: a source that has neither sent a packet nor received a token for this many
    /// MTU times, and has had no token yet or has sent every packet, sends its RTS again, and
    /// a destination that has every packet of the flow answers it with the ACK again. 0
    /// (default): off, as published; then a flow whose RTS and free-token packets are all
    /// dropped, or whose ACK is dropped, never finishes.
    pub source_timeout_mtu: f64,
    /// `srpt` (default: fewest remaining packets first), `edf` (earliest deadline first) or
    /// `tenant-fair` (the tenant with fewer bytes scheduled first, SRPT within; turns data
    /// priorities and free tokens off unless they are set), at both ends (§3.3, §4.4).
    pub policy: PhostPolicy,
}

crate::choice! {
    /// pHost's scheduling policy.
    pub enum PhostPolicy {
        /// Shortest remaining processing time.
        Srpt = "srpt",
        /// Earliest deadline first.
        Edf = "edf",
        /// Fair between tenants (the tenant with fewer bytes scheduled first), SRPT within one.
        TenantFair = "tenant-fair",
    }
}

/// Resolves `[phost]`: the preset sets the other fields' defaults.
pub fn resolve(ph: &Section<'_>) -> Result<PhostSpec, SpecError> {
    let preset = ph.choice("preset", PhostPreset::Paper)?;
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
        source_timeout_mtu: ph.f64_in(
            "source_timeout_mtu",
            0.0,
            0.0,
            1e9,
            "must be >= 0 MTU times (0: off)",
        )?,
        policy: PhostPolicy::Srpt, // set below: it changes other fields' defaults
    };
    let timeout = phost.source_timeout_mtu;
    if timeout > 0.0 && timeout < 1.0 {
        // Shorter than one packet's time, the timer would fire between any two packets.
        return Err(SpecError::new(
            "phost.source_timeout_mtu",
            format!("{timeout} must be 0 (off) or at least 1 MTU time"),
        ));
    }
    let mut phost = phost;
    phost.policy = ph.choice("policy", PhostPolicy::Srpt)?;
    if phost.policy == PhostPolicy::TenantFair {
        // §4.4: "we turn off data packet priorities ... and remove free token" (unless set).
        if ph.raw("data_priorities").is_none() {
            phost.data_priorities = false;
        }
        if ph.raw("free_tokens").is_none() {
            phost.free_tokens = 0;
        }
    }
    Ok(phost)
}
