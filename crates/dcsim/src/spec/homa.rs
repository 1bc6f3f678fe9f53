//! `[homa]`: Homa's RTTbytes, priority levels, overcommitment, unscheduled cutoffs and resend
//! timeout (Homa SIGCOMM'18 §3; defaults from the authors' simulator configuration,
//! PlatformLab/HomaSimulation `src/dcntopo/homaTransportConfig.ini`).

use super::reader::Section;
use super::workload::{FlowSizes, WorkloadSpec};
use crate::cdf::Cdf;
use crate::error::SpecError;
use crate::units::{CONTROL_BYTES, HEADER_BYTES, MAX_FLOW_BYTES, MSS_BYTES};
use serde::Serialize;
use std::collections::BTreeMap;

crate::choice! {
    /// How Homa's unscheduled priority cutoffs are chosen when `homa.unscheduled_cutoffs` is not
    /// given.
    pub enum HomaCutoffMethod {
        /// Equal shares of the workload's unscheduled bytes per unscheduled level (the authors'
        /// simulator's `STATIC_CBF_GRADUATED` default).
        CbfGraduated = "cbf-graduated",
        /// The cutoffs must be given in `homa.unscheduled_cutoffs`.
        Explicit = "explicit",
    }
}

crate::choice! {
    /// What sets the level of a message's packets that go at an unscheduled level.
    pub enum HomaPriorityRule {
        /// Every unscheduled packet at the level of the message's size; scheduled packets at
        /// their grant's level (the rule as Homa §3 states it: unscheduled priority from the message size).
        MessageSize = "message-size",
        /// The authors' simulator (`STATIC_CBF_GRADUATED` with `boostTailBytesPrio` =
        /// RTTbytes): each unscheduled packet, and each scheduled packet of the message's last
        /// RTTbytes on the wire, at the unscheduled level of the message bytes left from that
        /// packet on; cutoffs from the shares of those packets' bytes.
        BytesLeft = "bytes-left",
    }
}

/// `[homa]` (Homa SIGCOMM'18 §3).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct HomaSpec {
    /// Bytes a message sends before its first grant, and the bytes a receiver keeps granted
    /// beyond what it has received for each message it grants (10,000 B: one round trip at
    /// 10 Gbps in the authors' simulator). Rounded up to whole 1460-byte packets.
    pub rtt_bytes: u64,
    /// Priority levels of every port's strict-priority queues, 2-8 (8).
    pub priority_levels: u32,
    /// How many of the lowest levels carry scheduled (granted) data, 1 to
    /// `priority_levels − 1` (7: the authors' W4 and W5 runs; they use 1, 3 and 4 for W1, W2
    /// and W3). The others carry unscheduled data.
    pub scheduled_levels: u32,
    /// Messages a receiver grants at once (the degree of overcommitment), at least 1
    /// (default: `scheduled_levels`, as in every configuration of the authors').
    pub overcommit: u32,
    /// `cbf-graduated` (default: equal shares of unscheduled bytes per unscheduled level, from
    /// the workload's size CDF) or `explicit` (`unscheduled_cutoffs` must be given).
    pub cutoff_method: HomaCutoffMethod,
    /// `message-size` (default) or `bytes-left` (the authors' simulator): what sets the level
    /// of the packets that go at an unscheduled level ([`HomaPriorityRule`]).
    pub priority_rule: HomaPriorityRule,
    /// Increasing message sizes, bytes (the first may be 0: a level no data packet uses, as
    /// `bytes-left` gives when the grants' share fills the top level): a message of at most
    /// `unscheduled_cutoffs[k]` bytes
    /// sends its unscheduled packets at level k (0 highest), a larger one at the next level.
    /// At most `priority_levels − scheduled_levels − 1` of them; resolved from
    /// `cutoff_method` when not given (a level that gets no share of bytes gets no cutoff);
    /// empty with one unscheduled level, where given cutoffs have no effect.
    pub unscheduled_cutoffs: Vec<u64>,
    /// A receiver asks for the missing packets of a message it has heard nothing of for this
    /// long (RESEND); a sender whose message has nothing to send and has had no word from
    /// the receiver for this long sends its first packet again, µs (1000).
    pub resend_timeout_us: f64,
}

impl HomaSpec {
    /// Levels for unscheduled data: the highest `priority_levels − scheduled_levels`.
    pub fn unscheduled_levels(&self) -> u32 {
        self.priority_levels - self.scheduled_levels
    }
}

/// Resolves `[homa]`; the cutoffs are derived from the workload only for Homa runs (`used`),
/// so other protocols' specs need no CDF for them.
pub fn resolve(h: &Section<'_>, w: &WorkloadSpec, used: bool) -> Result<HomaSpec, SpecError> {
    let rtt_bytes = h.bytes_in("rtt_bytes", 10_000, 1, MAX_FLOW_BYTES)?;
    let priority_levels = h.u32_in("priority_levels", 8, 2, 8)?;
    let scheduled_levels = h.u32_in("scheduled_levels", 7.min(priority_levels - 1), 1, 7)?;
    if scheduled_levels >= priority_levels {
        return Err(SpecError::new(
            h.field("scheduled_levels"),
            format!(
                "{scheduled_levels} scheduled levels leave none of the {priority_levels} priority levels for unscheduled data: allowed 1 to {}",
                priority_levels - 1
            ),
        ));
    }
    let overcommit = h.u32_in("overcommit", scheduled_levels, 1, 1_000_000)?;
    let cutoff_method = h.choice("cutoff_method", HomaCutoffMethod::CbfGraduated)?;
    let priority_rule = h.choice("priority_rule", HomaPriorityRule::MessageSize)?;
    // 0 is a cutoff "bytes-left" can resolve to (the grants' share fills the top level, which
    // then carries no data), so a resolved spec must accept it back.
    let given = h.byte_list_from("unscheduled_cutoffs", 0)?.filter(|v| !v.is_empty());
    let resend_timeout_us = h.f64_in(
        "resend_timeout_us",
        1000.0,
        0.001,
        1e9,
        "must be a positive number of microseconds",
    )?;
    let mut spec = HomaSpec {
        rtt_bytes,
        priority_levels,
        scheduled_levels,
        overcommit,
        cutoff_method,
        priority_rule,
        unscheduled_cutoffs: Vec::new(),
        resend_timeout_us,
    };
    let field = h.field("unscheduled_cutoffs");
    let most = spec.unscheduled_levels() as usize - 1;
    if let Some(given) = given.filter(|_| most > 0) {
        // (With one unscheduled level there is nothing to cut: given cutoffs have no effect,
        // and the unused-field report says so.)
        if given.len() > most {
            return Err(SpecError::new(
                &field,
                format!(
                    "{} cutoffs for {} unscheduled levels (priority_levels {priority_levels} − scheduled_levels {scheduled_levels}): give at most {most}",
                    given.len(),
                    most + 1
                ),
            ));
        }
        if !given.windows(2).all(|p| p[0] < p[1]) {
            return Err(SpecError::new(&field, format!("{given:?} must increase")));
        }
        spec.unscheduled_cutoffs = given;
    } else if used && most > 0 {
        if cutoff_method == HomaCutoffMethod::Explicit {
            return Err(SpecError::new(
                &field,
                format!(
                    "`homa.cutoff_method` = \"explicit\" needs the cutoffs: give up to {most} increasing byte counts"
                ),
            ));
        }
        let cdf = match (&w.flow_sizes, w.tenants.is_empty()) {
            (sizes @ (FlowSizes::Named(_) | FlowSizes::File(_)), true) => sizes
                .cdf()
                .expect("a CDF")
                .map_err(|e| SpecError::new("workload.flow_sizes", e))?,
            _ => {
                return Err(SpecError::new(
                    &field,
                    format!(
                        "\"cbf-graduated\" cutoffs for {} unscheduled levels need the workload's size CDF (`workload.flow_sizes` = a CDF, without tenants): give `{field}` instead",
                        most + 1
                    ),
                ))
            }
        };
        let levels = spec.unscheduled_levels();
        spec.unscheduled_cutoffs = match priority_rule {
            HomaPriorityRule::MessageSize => cbf_graduated_cutoffs(&cdf, rtt_bytes, levels),
            HomaPriorityRule::BytesLeft => bytes_left_cutoffs(&cdf, rtt_bytes, levels),
        };
    }
    Ok(spec)
}

/// The rows of a step CDF (the authors' sampler draws rows, never sizes between them): each
/// row's size in bytes and its own probability.
fn steps(cdf: &Cdf) -> impl Iterator<Item = (u64, f64)> + '_ {
    let unit = cdf.unit.bytes() as f64;
    let mut prev_p = 0.0;
    cdf.points.iter().map(move |&(size, p)| {
        let q = (p - prev_p).max(0.0);
        prev_p = p;
        ((size * unit).ceil() as u64, q)
    })
}

/// The "CBF graduated" cutoffs (Homa §3; the authors' `PriorityResolver`): the unscheduled
/// bytes of a message of `s` bytes are `min(s, rtt_bytes)`; with each CDF row a step (the
/// authors' sampler draws rows, never sizes between them), the cumulative share of unscheduled
/// bytes up to size `x` is `CBF(x) = Σ_{s_i ≤ x} q_i · min(s_i, rtt_bytes) / Σ_i q_i ·
/// min(s_i, rtt_bytes)`, with `q_i` row i's probability. Cutoff k (k = 1 … `levels` − 1) is the
/// smallest row size with `CBF ≥ k / levels`; a size already taken is skipped, so a level that
/// would hold no bytes of its own gets no cutoff. Sizes in bytes.
pub fn cbf_graduated_cutoffs(cdf: &Cdf, rtt_bytes: u64, levels: u32) -> Vec<u64> {
    let rows: Vec<(u64, f64)> =
        steps(cdf).map(|(bytes, q)| (bytes, q * bytes.min(rtt_bytes) as f64)).collect();
    let total: f64 = rows.iter().map(|r| r.1).sum();
    let mut cutoffs: Vec<u64> = Vec::new();
    let mut cumulative = 0.0;
    let mut k = 1;
    for &(bytes, weight) in &rows {
        cumulative += weight;
        // Every level whose share this row completes ends here (once).
        while k < levels && cumulative >= total * k as f64 / levels as f64 * (1.0 - 1e-12) {
            if cutoffs.last() != Some(&bytes) {
                cutoffs.push(bytes);
            }
            k += 1;
        }
    }
    cutoffs
}

/// The cutoffs of the `bytes-left` rule, as the authors' simulator computes them
/// (`WorkloadEstimator::getRemainSizeCdfCbf` and `PriorityResolver::setPrioCutOffs`, with
/// `accountForGrantTraffic` on), in dcsim's packets (1460 payload bytes, 40 header bytes).
/// Each CDF row's message (a step: the rows are the sizes drawn) is cut into packets; a
/// packet that goes at an unscheduled level (one of the first ⌈`rtt_bytes` / 1460⌉, or one
/// whose bytes on the wire from it to the message's end are fewer than `rtt_bytes`) adds its
/// wire bytes, weighted by the row's probability, to the share of the message bytes left from
/// it on; grants (40 B per scheduled packet) are a share at 0 bytes. Cutoff k (k = 1 … `levels`
/// − 1) is the first bytes-left value whose cumulative share reaches k / `levels`, the search
/// for each next cutoff going on from the previous one's value without taking it again (so,
/// unlike [`cbf_graduated_cutoffs`], a level whose share ends on a taken value gets the next
/// one). Bytes.
pub fn bytes_left_cutoffs(cdf: &Cdf, rtt_bytes: u64, levels: u32) -> Vec<u64> {
    let (mss, header) = (MSS_BYTES as u64, HEADER_BYTES as u64);
    let rtt_pkts = rtt_bytes.div_ceil(mss);
    let mut shares: BTreeMap<u64, f64> = BTreeMap::new();
    let mut grants = 0.0;
    for (bytes, q) in steps(cdf).filter(|&(_, q)| q > 0.0) {
        let bytes = bytes.max(1);
        let n = bytes.div_ceil(mss);
        grants += q * (n.saturating_sub(rtt_pkts) * CONTROL_BYTES as u64) as f64;
        for seq in 0..n {
            let left = bytes - seq * mss;
            let wire_left = left + header * (n - seq);
            if seq < rtt_pkts || wire_left < rtt_bytes {
                let wire = left.min(mss) + header;
                *shares.entry(left).or_insert(0.0) += q * wire as f64;
            }
        }
    }
    let total = grants + shares.values().sum::<f64>();
    // The cumulative shares, the grants' first at 0 bytes.
    let mut cumulative = grants;
    let mut cbf = vec![(0u64, grants / total)];
    cbf.extend(shares.iter().map(|(&left, &w)| {
        cumulative += w;
        (left, cumulative / total)
    }));
    let mut cutoffs: Vec<u64> = Vec::new();
    let mut i = 0;
    for k in 1..levels {
        let share = f64::from(k) / f64::from(levels) * (1.0 - 1e-12);
        while i < cbf.len() {
            let (left, c) = cbf[i];
            if cutoffs.last() == Some(&left) {
                i += 1;
                continue;
            }
            if c >= share {
                cutoffs.push(left);
                break;
            }
            i += 1;
        }
    }
    cutoffs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdf::CdfUnit;

    /// Issue 18, item 2 (unscheduled priority from cutoffs): a hand-built CDF gives exact
    /// cutoffs. Rows (bytes, cumulative probability): 200 (0.84), 2000 (0.94), 5000 (0.98),
    /// 50,000 (1.0); RTTbytes 10,000. Unscheduled bytes per message: 200, 2000, 5000 and
    /// 10,000 (capped), weighted by 0.84, 0.10, 0.04, 0.02: 168, 200, 200, 200 (total 768).
    /// CBF: 168/768 = 0.219, 368/768 = 0.479, 568/768 = 0.740, 1. Four levels: shares 1/4,
    /// 1/2, 3/4 end at 2000, 5000 and 50,000 bytes.
    #[test]
    fn cbf_graduated_cutoffs_of_a_hand_built_cdf() {
        let text = "# unit: bytes\n200 0.84\n2000 0.94\n5000 0.98\n50000 1.0\n";
        let cdf = Cdf::parse(text, "t", None).unwrap();
        assert_eq!(cbf_graduated_cutoffs(&cdf, 10_000, 4), vec![2000, 5000, 50_000]);
        // Without the cap (RTTbytes above every size) the 50 KB messages hold 1000 of 1568
        // bytes: CBF 0.107, 0.235, 0.362, 1, so the first share ends at 5000 and the other
        // two at 50,000 (taken once).
        assert_eq!(cbf_graduated_cutoffs(&cdf, 1_000_000, 4), vec![5000, 50_000]);
        // Two levels: half the bytes end at 5000 (0.740 ≥ 1/2 > 0.479).
        assert_eq!(cbf_graduated_cutoffs(&cdf, 10_000, 2), vec![5000]);
        // One level: no cutoff.
        assert!(cbf_graduated_cutoffs(&cdf, 10_000, 1).is_empty());
        // A CDF in packets of 1460 B: sizes scale, shares do not (RTT capped at 10 packets).
        let pkts = Cdf { points: vec![(1.0, 0.5), (10.0, 1.0)], unit: CdfUnit::Packets };
        // Weights 0.5·1460 and 0.5·14,600: CBF 1/11, 1 → both shares end at 14,600.
        assert_eq!(cbf_graduated_cutoffs(&pkts, 14_600, 3), vec![14_600]);
    }

    /// The `bytes-left` cutoffs by hand. RTTbytes 10,000 (7 packets unscheduled).
    /// * Rows 1000 B (0.5) and 3000 B (1.0): the 1000 B message is one packet (1040 B on the
    ///   wire) at 1000 bytes left; the 3000 B one three, at 3000, 1540 and 80 bytes left (1500,
    ///   1500 and 120 B on the wire); no grants. Shares ×0.5: 520 at 1000, 750 at 1540, 750 at
    ///   3000, 60 at 80 (total 2080): cumulative 0.029 (80), 0.279 (1000), 0.639 (1540), 1.
    ///   Two levels: 1540. Four: 1000, 1540, 3000. Eight: the eighth share ends at 1000; the
    ///   next three searches go on past each value taken (1540, then 3000), and the rest find
    ///   none.
    /// * Rows 1000 B (0.5) and 20,000 B (1.0): 14 packets (the last of 1020 B). Packets 0-6
    ///   are unscheduled (bytes left 20,000 down to 11,240 in steps of 1460); from packet 8 the
    ///   bytes on the wire left are below 10,000 (8320 + 6 × 40 = 8560; packet 7: 9780 + 280 =
    ///   10,060), so packets 8-13 count too (8320 down to 1020 left; the last 1060 B on the
    ///   wire); 7 grants of 40 B. Weights ×0.5: grants 140 at 0, 520 at 1000, 530 at 1020, 750
    ///   at each other value (total 10,190); cumulative at 3940: 2690 (0.264), 11,240: 5690
    ///   (0.558), 14,160: 7190 (0.706), 15,620: 7940 (0.779).
    #[test]
    fn bytes_left_cutoffs_of_hand_built_cdfs() {
        let small = Cdf::parse("# unit: bytes\n1000 0.5\n3000 1.0\n", "t", None).unwrap();
        assert_eq!(bytes_left_cutoffs(&small, 10_000, 2), vec![1540]);
        assert_eq!(bytes_left_cutoffs(&small, 10_000, 4), vec![1000, 1540, 3000]);
        assert_eq!(bytes_left_cutoffs(&small, 10_000, 8), vec![1000, 1540, 3000]);
        assert!(bytes_left_cutoffs(&small, 10_000, 1).is_empty());
        let long = Cdf::parse("# unit: bytes\n1000 0.5\n20000 1.0\n", "t", None).unwrap();
        assert_eq!(bytes_left_cutoffs(&long, 10_000, 2), vec![11_240]);
        assert_eq!(bytes_left_cutoffs(&long, 10_000, 4), vec![3940, 11_240, 15_620]);
    }

    /// Found by the fuzz harness: with seven unscheduled levels on the default web-search
    /// workload, the grants' share of "bytes-left" fills the top level, so the first cutoff is
    /// 0 (a level no data packet uses); the resolved spec must resolve back to itself.
    #[test]
    fn bytes_left_cutoffs_starting_at_zero_resolve_back() {
        let toml = "[transport]\nprotocol = \"homa\"\n[homa]\npriority_rule = \"bytes-left\"\nscheduled_levels = 1\n";
        let s = resolve_toml(toml).unwrap();
        assert_eq!(
            s.homa.unscheduled_cutoffs.first(),
            Some(&0),
            "{:?}",
            s.homa.unscheduled_cutoffs
        );
        let json = super::super::Spec::from_json_str(&s.to_json_string()).unwrap();
        assert_eq!(json, s);
        assert_eq!(resolve_toml(&s.to_toml_string()).unwrap(), s);
        // Written by hand, 0 is accepted as a first cutoff and a negative number is not.
        let given = format!("{toml}unscheduled_cutoffs = [0, 1000]\n");
        assert_eq!(resolve_toml(&given).unwrap().homa.unscheduled_cutoffs, vec![0, 1000]);
        let e = resolve_toml(&format!("{toml}unscheduled_cutoffs = [-1, 1000]\n")).unwrap_err();
        assert_eq!(e.path, "homa.unscheduled_cutoffs");
    }

    fn resolve_toml(toml: &str) -> Result<super::super::Spec, SpecError> {
        super::super::Spec::from_toml_str(toml)
    }

    #[test]
    fn homa_settings_resolve_or_are_rejected_with_field_value_and_range() {
        let homa = "[transport]\nprotocol = \"homa\"\n";
        let s = resolve_toml(homa).unwrap();
        assert_eq!(
            (s.homa.rtt_bytes, s.homa.priority_levels, s.homa.scheduled_levels, s.homa.overcommit),
            (10_000, 8, 7, 7)
        );
        assert!(s.homa.unscheduled_cutoffs.is_empty(), "one unscheduled level: no cutoff");
        let s = resolve_toml(&format!("{homa}[homa]\nscheduled_levels = 4\n")).unwrap();
        assert_eq!(s.homa.overcommit, 4);
        assert_eq!(s.homa.unscheduled_cutoffs.len(), 3, "{:?}", s.homa.unscheduled_cutoffs);
        for (toml, path, needle) in [
            ("[homa]\npriority_levels = 9", "homa.priority_levels", "between 2 and 8"),
            (
                "[homa]\npriority_levels = 4\nscheduled_levels = 4",
                "homa.scheduled_levels",
                "allowed 1 to 3",
            ),
            (
                "[homa]\nscheduled_levels = 5\nunscheduled_cutoffs = [100, 200, 300]",
                "homa.unscheduled_cutoffs",
                "give at most 2",
            ),
            (
                "[homa]\nscheduled_levels = 5\nunscheduled_cutoffs = [300, 200]",
                "homa.unscheduled_cutoffs",
                "must increase",
            ),
            ("[homa]\novercommit = 0", "homa.overcommit", "between 1 and"),
            ("[homa]\nresend_timeout_us = 0", "homa.resend_timeout_us", "positive number"),
            (
                "[homa]\ncutoff_method = \"cdf\"",
                "homa.cutoff_method",
                "is not one of \"cbf-graduated\", \"explicit\"",
            ),
            (
                "[homa]\npriority_rule = \"remaining\"",
                "homa.priority_rule",
                "is not one of \"message-size\", \"bytes-left\"",
            ),
            (
                "[homa]\nscheduled_levels = 4\ncutoff_method = \"explicit\"",
                "homa.unscheduled_cutoffs",
                "needs the cutoffs",
            ),
            (
                "[homa]\nscheduled_levels = 4\n[workload]\nflow_sizes = 5000",
                "homa.unscheduled_cutoffs",
                "need the workload's size CDF",
            ),
        ] {
            let e = resolve_toml(&format!("{homa}{toml}")).unwrap_err();
            assert_eq!(e.path, path, "{toml}");
            assert!(e.message.contains(needle), "{toml}: {e}");
        }
        // One unscheduled level: given cutoffs have no effect (the unused-field report says so).
        let s = resolve_toml(&format!("{homa}[homa]\nunscheduled_cutoffs = [100, 200]\n")).unwrap();
        assert!(s.homa.unscheduled_cutoffs.is_empty());
        // Other protocols' specs need no CDF for the cutoffs.
        let s =
            resolve_toml("[homa]\nscheduled_levels = 4\n[workload]\nflow_sizes = 5000").unwrap();
        assert!(s.homa.unscheduled_cutoffs.is_empty());
        // A resolved spec resolves to itself.
        let s = resolve_toml(&format!("{homa}[homa]\nscheduled_levels = 3\n")).unwrap();
        assert_eq!(resolve_toml(&s.to_toml_string()).unwrap(), s);
    }
}
