//! The ideal flow completion time: the FCT a flow would have alone in an idle network, with
//! its sender transmitting every packet back to back and the receiver acknowledging the last
//! one (the pHost authors' simulator's "oracle FCT", the normalization of pHost §4).
//!
//! The model is exactly the simulator's own: a packet of `b` bytes occupies hop `i` for
//! `b / rate_i`, and reaches the next node after the *lead* time (its whole serialization
//! under store-and-forward, only its 40-byte header under cut-through towards a switch) plus
//! the propagation delay. With the first packet leaving at time 0, the start time of packet
//! `p` at hop `i` obeys the max-plus recursion
//!
//! ```text
//! S(p, i) = max( S(p, i-1) + lead(p, i-1),  S(p-1, i) + ser(p-1, i) )
//! ```
//!
//! For `m` identical full packets the latest path through that recursion takes all its
//! "next packet" steps at the slowest hop, so `S(m, i) = Σ_{j<i} lead_j + (m-1)·max_{k≤i} ser_k`;
//! the (possibly shorter) last packet is then one more row. The ACK (40 bytes) returns over the
//! reverse path. Under cut-through on the leaf-spine this equals the YAPS `get_oracle_fct`
//! formula term for term (tested below); under store-and-forward it is the exact pipelined
//! transfer time. Because the model is the simulator's, no simulated flow can finish faster:
//! that is checked on every run.

use crate::units::{BitRate, CONTROL_BYTES, HEADER_BYTES, MSS_BYTES, MTU_BYTES};
use dcsim_engine::SimTime;

/// One hop of a path.
#[derive(Copy, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hop {
    /// Link rate.
    pub rate: BitRate,
    /// Propagation delay.
    pub delay: SimTime,
    /// True when only the header must arrive before the next node forwards (cut-through
    /// towards a switch).
    pub header_lead: bool,
    /// Equal-cost links a flow's packets are spread over at this hop (1 unless sprayed).
    pub parallel: u32,
}

impl Hop {
    #[inline]
    fn ser(&self, bytes: u64) -> u64 {
        self.rate.tx_time(bytes).as_ps()
    }
    #[inline]
    fn lead(&self, bytes: u64) -> u64 {
        let lead = if self.header_lead { self.ser(HEADER_BYTES as u64) } else { self.ser(bytes) };
        lead + self.delay.as_ps()
    }
}

/// The hops of the path from host `a` to host `b` in `net`, with each hop's parallel links
/// when packets are `sprayed` (else one link per hop).
pub fn path_hops(net: &crate::topology::Network, a: u32, b: u32, sprayed: bool) -> Vec<Hop> {
    let parallel = if sprayed { net.parallel_links(a, b) } else { Vec::new() };
    net.path(a, b)
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let pt = &net.ports[p as usize];
            Hop {
                rate: pt.rate,
                delay: pt.delay,
                header_lead: pt.cut_through,
                parallel: parallel.get(i).copied().unwrap_or(1),
            }
        })
        .collect()
}

/// The ideal FCT of a `size_bytes` flow over `path` (data direction) with ACKs returning over
/// `reverse`.
///
/// A hop whose packets are sprayed over `parallel` > 1 links serializes them in parallel: the
/// flow's `m` full packets need at least ⌈m / parallel⌉ − 1 serializations back to back on one
/// of them (pigeonhole), and the short last packet need not wait behind the full ones there.
/// That bound holds for any spraying and is exact for round robin in an idle fabric; with one
/// link per hop it is the exact recursion above.
pub fn ideal_fct(size_bytes: u64, path: &[Hop], reverse: &[Hop]) -> SimTime {
    let n = crate::units::Bytes(size_bytes).packets() as u64;
    let full = MTU_BYTES as u64;
    let last = size_bytes - (n - 1) * MSS_BYTES as u64 + HEADER_BYTES as u64;
    // S(last packet, i) for each hop i.
    let mut s_last: u64 = 0;
    let mut arrive_full = 0u64; // the latest full packet's arrival (a bound, with spraying)
    if n == 1 {
        for i in 1..path.len() {
            s_last += path[i - 1].lead(last);
        }
    } else {
        let m = n - 1; // identical full packets before the last
        let mut lead_sum = 0u64; // Σ_{j<i} lead_j(full)
        let mut max_spacing = 0u64; // the latest full packet's start after the first's
        for (i, hop) in path.iter().enumerate() {
            let p = u64::from(hop.parallel.max(1));
            max_spacing = max_spacing.max((m.div_ceil(p) - 1) * hop.ser(full));
            let s_m = lead_sum + max_spacing; // S(m, i)
            let from_prev_hop = if i == 0 { 0 } else { s_last + path[i - 1].lead(last) };
            s_last = if p == 1 { from_prev_hop.max(s_m + hop.ser(full)) } else { from_prev_hop };
            lead_sum += hop.lead(full);
        }
        arrive_full = lead_sum + max_spacing;
    }
    let arrive = (s_last + path.last().map_or(0, |h| h.lead(last))).max(arrive_full);
    let ack: u64 = reverse.iter().map(|h| h.lead(CONTROL_BYTES as u64)).sum();
    SimTime(arrive + ack)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(gbps: f64, header_lead: bool) -> Hop {
        Hop {
            parallel: 1,
            rate: BitRate::from_gbps(gbps),
            delay: SimTime::from_ns(200),
            header_lead,
        }
    }

    #[test]
    fn cut_through_matches_the_yaps_oracle() {
        // YAPS get_oracle_fct (cut-through, 4 hops): 2·h·d + (n·1500 + 40 + 2·40)/C + 2·(2·40)/(4C).
        let path = [hop(10.0, true), hop(40.0, true), hop(40.0, true), hop(10.0, false)];
        for n in [1u64, 2, 3, 12, 1000] {
            let size = n * 1460;
            let yaps_ps = 2 * 4 * 200_000 + (n * 1500 + 40 + 80) * 800 + 2 * 80 * 200;
            assert_eq!(ideal_fct(size, &path, &path).as_ps(), yaps_ps, "n = {n}");
        }
    }

    #[test]
    fn store_and_forward_single_link_and_four_hops() {
        // One link: n packets back to back, then the ACK.
        let one = [hop(10.0, false)];
        let f = ideal_fct(3 * 1460, &one, &one);
        assert_eq!(f, SimTime::from_ns(3 * 1200 + 200 + 32 + 200));
        // A short last packet: 1460 + 100 B = packets of 1500 and 140 bytes.
        let f = ideal_fct(1560, &one, &one);
        assert_eq!(f, SimTime::from_ns(1200 + 112 + 200 + 32 + 200));
        // Four hops, all 10 G: the first packet pays 4 serializations, each later one 1.
        let four = [hop(10.0, false); 4];
        let n = 5u64;
        let data = 4 * 1200 + (n - 1) * 1200 + 4 * 200;
        let ack = 4 * (32 + 200);
        assert_eq!(ideal_fct(n * 1460, &four, &four), SimTime::from_ns(data + ack));
        // 10/40/40/10: the slow edge hops dominate.
        let ls = [hop(10.0, false), hop(40.0, false), hop(40.0, false), hop(10.0, false)];
        let data = (1200 + 300 + 300 + 1200) + (n - 1) * 1200 + 4 * 200;
        let ack = 2 * 32 + 2 * 8 + 4 * 200;
        assert_eq!(ideal_fct(n * 1460, &ls, &ls), SimTime::from_ns(data + ack));
    }
}
