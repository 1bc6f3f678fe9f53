//! `[dcpim]`: dcPIM's matching and token parameters (Cai et al., SIGCOMM'22); the defaults are
//! the authors' artifact's (Terabit-Ethernet/dcPIM `simulator/`, the Figure 6 run settings).

use super::reader::Section;
use crate::error::SpecError;
use serde::Serialize;

/// `[dcpim]`. Lengths in BDPs are multiples of the fabric's bandwidth-delay product in packets
/// (`bdp_packets`, derived from the fabric unless given).
#[derive(Debug, Clone, Serialize, PartialEq, serde::Deserialize)]
pub struct DcpimSpec {
    /// Matching rounds per epoch, r (4).
    pub rounds: u32,
    /// Channels per host, k: a host matches at most k channels as a sender and k as a receiver
    /// per epoch, each worth 1/k of its link (4).
    pub channels: u32,
    /// Round length in control-packet round trips, β (1.3).
    pub beta: f64,
    /// Data phase length in matching phases, α (1): an epoch's matched channels carry data for
    /// α·r rounds, and a new matching starts every α·r rounds.
    pub alpha: f64,
    /// The bandwidth-delay product in packets; 0 (default) derives it from the fabric: the
    /// round trip of an MTU packet store-and-forward over the longest path from host 0, times
    /// the host rate, rounded up (49 at 100/400 Gbps and 0.65 µs links).
    pub bdp_packets: u32,
    /// The control-packet round trip in µs that sets the round length; 0 (default) derives it
    /// from the fabric: a 40-byte packet store-and-forward there and back over the longest path
    /// from host 0 (5.216 µs at 100/400 Gbps and 0.65 µs links).
    pub control_rtt_us: f64,
    /// Flows of at most this many BDPs are sent at once, unscheduled (1).
    pub unscheduled_bdp: f64,
    /// Tokens a receiver keeps outstanding per flow on a k-channel match, in BDPs (1); a match
    /// of c channels keeps c/k of it.
    pub token_window_bdp: f64,
    /// A flow whose token window is full gets tokens again after this long without one, in
    /// BDP transmission times (1.1).
    pub token_window_timeout_bdp: f64,
    /// After every missing packet of a flow has had a token, wait this long before issuing
    /// tokens again for the ones still missing (loss recovery), in BDP transmission times (1).
    pub resend_timeout_bdp: f64,
    /// The first this many rounds of an epoch grant and accept shortest-first; later rounds at
    /// random (1).
    pub shortest_first_rounds: u32,
    /// Leave as many token slots unused after an unscheduled flow's announcement as it has
    /// packets, so its packets find the downlink free (true, the artifact's `TOKEN_HOLD`).
    pub hold: bool,
    /// Source-side recovery of a lost RTS or ACK, which the artifact does not have, in BDP
    /// transmission times: a sender that has neither sent a packet nor received a token for
    /// this long, and has had no token yet or has sent every packet, sends its RTS again, and a
    /// receiver that has every packet answers with the ACK again. 0 (default): off, as the
    /// artifact; then a scheduled flow whose RTS is dropped, or a flow whose ACK is dropped,
    /// never finishes.
    pub source_timeout_bdp: f64,
}

/// Resolves `[dcpim]`.
pub fn resolve(d: &Section<'_>) -> Result<DcpimSpec, SpecError> {
    let bdps = "must be a positive number of BDPs";
    let spec = DcpimSpec {
        rounds: d.u32_in("rounds", 4, 1, 64)?,
        channels: d.u32_in("channels", 4, 1, 64)?,
        beta: d.f64_in("beta", 1.3, 0.1, 100.0, "must be a positive number of round trips")?,
        alpha: d.f64_in(
            "alpha",
            1.0,
            1.0,
            100.0,
            "must be at least 1: dcsim runs one matching at a time per host",
        )?,
        bdp_packets: d.u32_in("bdp_packets", 0, 0, 1_000_000)?,
        control_rtt_us: d.f64_in(
            "control_rtt_us",
            0.0,
            0.0,
            1e6,
            "must be >= 0 µs (0 derives it from the fabric)",
        )?,
        unscheduled_bdp: d.f64_in("unscheduled_bdp", 1.0, 0.0, 1e6, "must be >= 0 BDPs")?,
        token_window_bdp: d.f64_in("token_window_bdp", 1.0, 0.01, 1e6, bdps)?,
        token_window_timeout_bdp: d.f64_in("token_window_timeout_bdp", 1.1, 0.01, 1e6, bdps)?,
        resend_timeout_bdp: d.f64_in("resend_timeout_bdp", 1.0, 0.01, 1e6, bdps)?,
        shortest_first_rounds: d.u32_in("shortest_first_rounds", 1, 0, 64)?,
        hold: d.bool("hold", true)?,
        source_timeout_bdp: d.f64_in(
            "source_timeout_bdp",
            0.0,
            0.0,
            1e6,
            "must be >= 0 BDPs (0: off)",
        )?,
    };
    let timeout = spec.source_timeout_bdp;
    if timeout > 0.0 && timeout < 1.0 {
        // Shorter than a round trip's worth of packets, the timer would fire while the first
        // token is on its way.
        return Err(SpecError::new(
            "dcpim.source_timeout_bdp",
            format!("{timeout} must be 0 (off) or at least 1 BDP"),
        ));
    }
    Ok(spec)
}
